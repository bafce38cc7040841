"""Index of the group hierarchy: PodGroups, CompositePodGroups, their pods and parents."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import WORKLOAD_MAX_TREE_DEPTH, CompositePodGroup, Pod, PodGroup, Snapshot

Group = PodGroup | CompositePodGroup


def _order_key(t: float | None) -> float:
    return t if t is not None else float("inf")


@dataclass(slots=True)
class GroupIndex:
    pgs: dict[tuple[str, str], PodGroup] = field(default_factory=dict)
    cpgs: dict[tuple[str, str], CompositePodGroup] = field(default_factory=dict)
    pods_of: dict[tuple[str, str], list[Pod]] = field(default_factory=dict)  # leaf PG -> pods
    children_of: dict[tuple[str, str], list[Group]] = field(default_factory=dict)  # CPG -> children
    composite_enabled: bool = True
    # Pods bound in an earlier cycle of this analysis (pod uid -> node index): no longer pending,
    # counted as scheduled members (the multi-cycle pod-group loop of preemption/workload.py).
    bound: dict[str, int] = field(default_factory=dict)
    # Values derived from the groups alone (pgs, cpgs, children_of, composite_enabled, none of
    # which changes after build), kept for the life of the index: preemption/units.py keeps each
    # PodGroup's effective priority and All ancestor here across simulate's cycles.
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(cls, snap: Snapshot, composite_enabled: bool = True) -> "GroupIndex":
        gi = cls(composite_enabled=composite_enabled)
        for g in snap.pod_groups:
            gi.pgs[(g.namespace, g.name)] = g
        for c in snap.composite_pod_groups:
            gi.cpgs[(c.namespace, c.name)] = c
        for p in snap.pods:
            if p.pod_group_name:
                gi.pods_of.setdefault((p.namespace, p.pod_group_name), []).append(p)
        for g in list(snap.pod_groups) + list(snap.composite_pod_groups):
            if g.parent:
                gi.children_of.setdefault((g.namespace, g.parent), []).append(g)
        # Child order: creation time, then name (the alpha queue sorts children by creation).
        # UPSTREAM-DIFF: equal creation times fall back to the name here, map order upstream.
        for k, lst in gi.children_of.items():
            lst.sort(key=lambda g: (_order_key(g.creation_timestamp), g.name, g.kind))
        return gi

    def leaf_of(self, pod: Pod) -> PodGroup | None:
        if not pod.pod_group_name:
            return None
        return self.pgs.get((pod.namespace, pod.pod_group_name))

    def parent_of(self, g: Group) -> CompositePodGroup | None:
        if not g.parent or not self.composite_enabled:
            return None
        return self.cpgs.get((g.namespace, g.parent))

    def chain(self, g: Group) -> list[Group]:
        """g and its ancestors up to the root: at most WorkloadMaxTreeDepth parent steps,
        stopping at a missing parent or a cycle (preemption util.go traverseHierarchyUp)."""
        out: list[Group] = [g]
        seen = {(g.kind, g.namespace, g.name)}
        cur: Group = g
        for _ in range(WORKLOAD_MAX_TREE_DEPTH):
            p = self.parent_of(cur)
            if p is None:
                break
            k = (p.kind, p.namespace, p.name)
            if k in seen:
                break
            seen.add(k)
            out.append(p)
            cur = p
        return out

    def root_of(self, g: Group) -> Group:
        return self.chain(g)[-1]

    def children(self, c: CompositePodGroup) -> list[Group]:
        return self.children_of.get((c.namespace, c.name), [])

    def leaves_under(self, g: Group, _depth: int = 0, _seen: set | None = None) -> list[PodGroup]:
        if isinstance(g, PodGroup):
            return [g]
        seen = _seen if _seen is not None else set()
        k = (g.namespace, g.name)
        if k in seen or _depth > WORKLOAD_MAX_TREE_DEPTH + 1:
            return []
        seen.add(k)
        out: list[PodGroup] = []
        for ch in self.children(g):
            out.extend(self.leaves_under(ch, _depth + 1, seen))
        return out

    def pods(self, pg: PodGroup) -> list[Pod]:
        return self.pods_of.get((pg.namespace, pg.name), [])


def group_priority(g: Group | None) -> int:
    """util.PodGroupPriority / CompositePodGroupPriority: nil is 0."""
    if g is None or g.priority is None:
        return 0
    return g.priority
