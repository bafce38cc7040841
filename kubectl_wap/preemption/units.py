"""Victim units: the pods that are preempted together, with their effective priority.

Mirrors preemption/types.go `getCrossNodesVictims`, `getHighestAllAncestor`, `NewPodVictim`,
`NewVictim` and util.go `getPodPriority` / `traverseHierarchyUp` (semantics doc 2.7, 3.3, 3.7).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..framework.groups import GroupIndex, group_priority
from ..framework.state import ClusterState
from ..model import ALL, CompositePodGroup, Pod, PodGroup

POD_RANK, PODGROUP_RANK, CPG_RANK = 1, 2, 3
_RANK = {"Pod": POD_RANK, "PodGroup": PODGROUP_RANK, "CompositePodGroup": CPG_RANK}


@dataclass(slots=True)
class VictimUnit:
    kind: str  # Pod | PodGroup | CompositePodGroup (the unit's key type)
    namespace: str
    name: str
    pods: list[Pod]
    priority: int  # effective (root group) priority
    rank: int
    disruption_mode: str  # "all" for group units; the leaf group's mode (or "") for pod units
    group: str | None = None  # for a pod unit: the PodGroup the pod belongs to, if any
    source: str = ""  # which object the priority came from ("" = the pod itself)
    violate_count: int = 0  # PDB-violating pods (set by pdb classification)
    nodes: set[int] = field(default_factory=set)

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"

    @property
    def priority_source(self) -> str:
        """Which object the effective priority came from, for explanations."""
        return self.source or f"Pod {self.namespace}/{self.name}"

    @property
    def earliest_start(self) -> float:
        # GetPodStartTime: a pod that has not started counts as newest (+inf).
        return min((p.start_time if p.start_time is not None else float("inf") for p in self.pods), default=float("inf"))

    @property
    def first_uid(self) -> str:
        return self.pods[0].uid if self.pods else ""


def effective_priority(pod: Pod, index: GroupIndex, generic_workload: bool = True) -> tuple[int, str]:
    """getPodPriority: a group pod takes its root group's priority (walking leaf PodGroup ->
    parent CPGs, at most 4 steps, cycle-safe, stopping at a missing parent); a pod whose PodGroup
    is missing, or any pod with GenericWorkload off, uses its own spec.priority (nil is 0)."""
    if generic_workload and pod.pod_group_name:
        leaf = index.leaf_of(pod)
        if leaf is not None:
            root = index.chain(leaf)[-1]
            return group_priority(root), f"{root.kind} {root.key}"
    return pod.priority or 0, f"Pod {pod.key}"


def highest_all_ancestor(leaf: PodGroup, index: GroupIndex) -> PodGroup | CompositePodGroup | None:
    """getHighestAllAncestor: the highest group in the chain with disruptionMode all."""
    best = None
    for g in index.chain(leaf):
        if g.disruption_mode == ALL:
            best = g
    return best


def build_units(state: ClusterState, index: GroupIndex, generic_workload: bool = True, below: int | None = None) -> list[VictimUnit]:
    """Every preemption unit among the pods currently in `state`, cluster-wide. Nodes are walked
    in name order and pods in node order; group units are deduplicated by their All ancestor.
    With `below`, only units whose effective priority is lower are built (the potential victims
    of a preemptor of that priority; the others would be filtered out anyway)."""
    units: list[VictimUnit] = []
    done_groups: set[tuple[str, str, str]] = set()
    # Per leaf group: (priority, source, leaf, highest All ancestor); pods of a group share it.
    per_leaf: dict[tuple[str, str], tuple] = {}
    for idx, pod in list(state.all_pods()):
        if generic_workload and pod.pod_group_name:
            lk = (pod.namespace, pod.pod_group_name)
            hit = per_leaf.get(lk)
            if hit is None:
                leaf = index.leaf_of(pod)
                prio, source = effective_priority(pod, index, generic_workload)
                anc = highest_all_ancestor(leaf, index) if leaf is not None else None
                hit = per_leaf[lk] = (prio, source, leaf, anc)
                if leaf is None:
                    del per_leaf[lk]  # a missing leaf falls back to each pod's own priority
            prio, source, leaf, anc = hit
        else:
            prio, source = (pod.priority or 0), ""
            leaf, anc = None, None
        if below is not None and prio >= below:
            continue
        if anc is not None:
            k = (anc.kind, anc.namespace, anc.name)
            if k in done_groups:
                continue
            pods = []
            for lg in index.leaves_under(anc):
                # ScheduledPods() of each leaf: pods bound in the cluster (in state).
                # UPSTREAM-DIFF: upstream lists them in PodGroupState (map) order; we sort by name,
                # so the first pod (whose UID is the last importance tie-break) is deterministic.
                pods.extend(sorted((p for p in index.pods(lg) if state.has(p)), key=lambda p: p.name))
            if pods:
                done_groups.add(k)
                units.append(
                    VictimUnit(
                        kind=anc.kind,
                        namespace=anc.namespace,
                        name=anc.name,
                        pods=pods,
                        priority=prio,
                        rank=_RANK[anc.kind],
                        disruption_mode=ALL,
                        source=source,
                        nodes={state.where[p.uid] for p in pods},
                    )
                )
                continue
            # Fallback: no scheduled pods resolvable -> a single-pod victim.
        # A single pod; a member of a group gets the PodGroup rank (upstream TODO in NewPodVictim).
        rank = PODGROUP_RANK if (generic_workload and pod.pod_group_name) else POD_RANK
        units.append(
            VictimUnit(
                kind="Pod",
                namespace=pod.namespace,
                name=pod.name,
                pods=[pod],
                priority=prio,
                rank=rank,
                disruption_mode=leaf.disruption_mode if leaf is not None else "",
                group=leaf.name if leaf is not None else (pod.pod_group_name if generic_workload else None),
                source=source,
                nodes={idx},
            )
        )
    return units
