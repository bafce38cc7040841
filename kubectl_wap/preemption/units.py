"""Victim units: the pods that are preempted together, with their effective priority.

Mirrors preemption/types.go `getCrossNodesVictims`, `getHighestAllAncestor`, `NewPodVictim`,
`NewVictim` and util.go `getPodPriority` / `traverseHierarchyUp` (semantics doc 2.7, 3.3, 3.7).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from ..framework.groups import GroupIndex, group_priority
from ..framework.state import ClusterState
from ..model import ALL, CompositePodGroup, Pod, PodGroup
from .importance import importance_key

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
    nodes: AbstractSet[int] = field(default_factory=set)  # node indices of its pods (never mutated)
    # Caches filled by build_units: whether a pod carries required pod anti-affinity (a cross-node
    # term for reprieval; None: compute on use), and the importance sort key (importance_key).
    anti_affinity: bool | None = None
    importance: tuple | None = None

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


_INF = float("inf")


def _anti(pod: Pod) -> bool:
    a = pod.affinity
    return a is not None and bool(a.pod_anti_affinity_required)


# One shared, immutable node set per node for the single-pod units on it.
_NODE_SETS: list[frozenset[int]] = []


def _node_set(idx: int) -> frozenset[int]:
    while len(_NODE_SETS) <= idx:
        _NODE_SETS.append(frozenset((len(_NODE_SETS),)))
    return _NODE_SETS[idx]


def _pod_unit(pod: Pod, nodes: frozenset[int], prio: int, rank: int, mode: str, group: str | None, source: str) -> VictimUnit:
    """A single-pod unit with its caches filled (the hot path: most victims are single pods)."""
    st = pod.start_time
    return VictimUnit(
        "Pod", pod.namespace, pod.name, [pod], prio, rank, mode, group, source, 0, nodes,
        _anti(pod) if pod.affinity is not None else False,
        importance_key(prio, rank, 1, _INF if st is None else st, pod.uid),
    )


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


def victim_priority(pod: Pod, index: GroupIndex, generic_workload: bool, own_priority: bool) -> int:
    """The priority a running pod has as a victim: its own spec.priority under the 1.38 profile
    (v1.38.0-beta.0 `NewPodVictim`, `IsPodGroupWaitingForVictims`), else effective_priority's.
    collect() applies the same rule in its walk (with effective_priority cached per group)."""
    return (pod.priority or 0) if own_priority else effective_priority(pod, index, generic_workload)[0]


def highest_all_ancestor(leaf: PodGroup, index: GroupIndex) -> PodGroup | CompositePodGroup | None:
    """getHighestAllAncestor: the highest group in the chain with disruptionMode all."""
    best = None
    for g in index.chain(leaf):
        if g.disruption_mode == ALL:
            best = g
    return best


class Candidates:
    """The preemption units among the pods of a state, as build_units' walk finds them, held as
    columns: unit k's first pod (a single-pod unit's only pod), node (-1: a group unit, which may
    span nodes), effective priority and rank, and an index into `metas` for the rest of a
    single-pod unit's fields (disruption mode, group, priority source). Almost every candidate of
    a large cluster is a single-pod unit: its VictimUnit is built only when something asks for
    it (`unit(k)`), and the passes of workload-aware preemption (preemption/candidates.py) work
    on the columns. Group units are VictimUnits from the start (`objs`)."""

    __slots__ = ("pods", "node", "prio", "rank", "meta", "metas", "objs", "groups", "victim_pods", "violate")

    def __init__(self) -> None:
        self.pods: list[Pod] = []
        self.node: list[int] = []
        self.prio: list[int] = []
        self.rank: list[int] = []
        self.meta: list[int] = []  # index into metas; -1 for a group unit
        self.metas: list[tuple[str, str | None, str]] = [("", None, "")]  # (mode, group, source); 0: a plain pod
        self.objs: list[VictimUnit | None] = []  # group units, and single-pod units once built
        self.groups: list[int] = []  # indices of the group units
        self.victim_pods: list[Pod] = []  # every pod of every unit, in unit order
        self.violate: list[int] | None = None  # PDB-violating pods per unit, once classified

    def __len__(self) -> int:
        return len(self.pods)

    def unit(self, k: int) -> VictimUnit:
        u = self.objs[k]
        if u is None:
            mode, group, source = self.metas[self.meta[k]]
            u = self.objs[k] = _pod_unit(self.pods[k], _node_set(self.node[k]), self.prio[k], self.rank[k], mode, group, source)
            if self.violate is not None:
                u.violate_count = self.violate[k]
        return u

    def units(self) -> list[VictimUnit]:
        unit = self.unit
        return [unit(k) for k in range(len(self.pods))]

    def anti_affinity(self) -> list[bool]:
        """Per unit: whether a pod of it carries required pod anti-affinity (the unit's
        `anti_affinity`, without building the single-pod units)."""
        out = [p.affinity is not None and _anti(p) for p in self.pods]
        for k in self.groups:
            out[k] = bool(self.objs[k].anti_affinity)
        return out


def collect(
    state: ClusterState, index: GroupIndex, generic_workload: bool = True, below: int | None = None,
    keep: list[Pod] | None = None, own_priority: bool = False,
) -> Candidates:
    """Every preemption unit among the pods currently in `state`, cluster-wide. Nodes are walked
    in name order and pods in node order; group units are deduplicated by their All ancestor.
    With `below`, only units whose effective priority is lower are collected (the potential
    victims of a preemptor of that priority; the others would be filtered out anyway), and the
    pods left out are appended to `keep` when given (ClusterState.remove_pods can rebuild from
    them).

    `own_priority` (the 1.38 profile's `victims_keep_pod_priority`): v1.38.0-beta.0
    framework/preemption/victims.go `getCrossNodesVictims` makes a group pod with no
    disruptionMode All ancestor a `NewPodVictim` (types.go): its own spec.priority and the Pod
    kind; an All unit takes the priority of the pod the walk met first
    (`searchCrossNodesVictimPods`: `PodPriority(podInfo.GetPod())`). v1.37.2 gives both the root
    group's priority, and the single pod the PodGroup rank."""
    c = Candidates()
    pods_, node_, prio_, rank_, meta_, objs_, victim_pods = c.pods, c.node, c.prio, c.rank, c.meta, c.objs, c.victim_pods
    done_groups: set[tuple[str, str, str]] = set()
    # Per leaf group: (priority, source, leaf, highest All ancestor, meta index); pods of a group share it.
    per_leaf: dict[tuple[str, str], tuple] = {}
    limit = below
    for idx, on_node in enumerate(state.node_pods):
        for pod in on_node.values():
            pgn = pod.pod_group_name if generic_workload else None
            if not pgn:
                prio = pod.priority or 0
                if limit is not None and prio >= limit:
                    if keep is not None:
                        keep.append(pod)
                    continue
                pods_.append(pod)
                node_.append(idx)
                prio_.append(prio)
                rank_.append(POD_RANK)
                meta_.append(0)
                objs_.append(None)
                victim_pods.append(pod)
                continue
            lk = (pod.namespace, pgn)
            hit = per_leaf.get(lk)
            if hit is None:
                leaf = index.leaf_of(pod)
                prio, source = effective_priority(pod, index, generic_workload)
                anc = highest_all_ancestor(leaf, index) if leaf is not None else None
                c.metas.append((leaf.disruption_mode if leaf is not None else "", leaf.name if leaf is not None else pgn,
                                "" if own_priority else source))
                hit = (prio, source, leaf, anc, len(c.metas) - 1)
                if leaf is not None:  # a missing leaf falls back to each pod's own priority
                    per_leaf[lk] = hit
            prio, source, leaf, anc, meta = hit
            if own_priority:
                prio, source = pod.priority or 0, ""
            if limit is not None and prio >= limit:
                if keep is not None:
                    keep.append(pod)
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
                    u = VictimUnit(
                        kind=anc.kind,
                        namespace=anc.namespace,
                        name=anc.name,
                        pods=pods,
                        priority=prio,
                        rank=_RANK[anc.kind],
                        disruption_mode=ALL,
                        source=source,
                        nodes={state.where[p.uid] for p in pods},
                        anti_affinity=any(_anti(p) for p in pods),
                    )
                    u.importance = importance_key(prio, u.rank, len(pods), u.earliest_start, pods[0].uid)
                    pods_.append(pods[0])
                    node_.append(-1)
                    prio_.append(prio)
                    rank_.append(u.rank)
                    meta_.append(-1)
                    c.groups.append(len(objs_))
                    objs_.append(u)
                    victim_pods.extend(pods)
                    continue
                # Fallback: no scheduled pods resolvable -> a single-pod victim.
            # A single pod; a member of a group gets the PodGroup rank (upstream TODO in NewPodVictim).
            pods_.append(pod)
            node_.append(idx)
            prio_.append(prio)
            rank_.append(POD_RANK if own_priority else PODGROUP_RANK)
            meta_.append(meta)
            objs_.append(None)
            victim_pods.append(pod)
    return c


def build_units(
    state: ClusterState, index: GroupIndex, generic_workload: bool = True, below: int | None = None,
    keep: list[Pod] | None = None, own_priority: bool = False,
) -> list[VictimUnit]:
    """Every preemption unit among the pods currently in `state` (see collect), as VictimUnits."""
    return collect(state, index, generic_workload, below, keep, own_priority).units()
