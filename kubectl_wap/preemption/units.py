"""Victim units: the pods that are preempted together, with their effective priority.

Mirrors preemption/types.go `getCrossNodesVictims`, `getHighestAllAncestor`, `NewPodVictim`,
`NewVictim` and util.go `getPodPriority` / `traverseHierarchyUp` (semantics doc 2.7, 3.3, 3.7).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import partial
from itertools import chain, compress

import numpy as np

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
            return _leaf_priority(leaf, index)
    return pod.priority or 0, f"Pod {pod.key}"


def _leaf_priority(leaf: PodGroup, index: GroupIndex) -> tuple[int, str]:
    root = index.chain(leaf)[-1]
    return group_priority(root), f"{root.kind} {root.key}"


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

    __slots__ = ("pods", "node", "prio", "rank", "meta", "metas", "objs", "groups", "victim_pods", "violate", "start", "labelset", "label_sets")

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
        self.start: np.ndarray | None = None  # the first pod's start time per unit (+inf: none), when known
        self.labelset: np.ndarray | None = None  # a single-pod unit's label set number (label_sets), -1 a group's
        self.label_sets: LabelSets | None = None  # what the numbers in labelset stand for

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


def _by_name(p: Pod) -> str:
    return p.name


def _group_unit(state: ClusterState, index: GroupIndex, anc: PodGroup | CompositePodGroup, prio: int, source: str) -> VictimUnit | None:
    """The unit of an All ancestor: every pod of its leaves that is in the state (None when none
    is: the pod met falls back to a single-pod unit)."""
    pods: list[Pod] = []
    leaves = index.memo.get(("units.leaves", anc.kind, anc.namespace, anc.name))
    if leaves is None:
        leaves = index.memo[("units.leaves", anc.kind, anc.namespace, anc.name)] = index.leaves_under(anc)
    where = state.where
    for lg in leaves:
        # ScheduledPods() of each leaf: pods bound in the cluster (in state).
        # UPSTREAM-DIFF: upstream lists them in PodGroupState (map) order; we sort by name,
        # so the first pod (whose UID is the last importance tie-break) is deterministic.
        pods.extend(sorted([p for p in index.pods(lg) if p.uid in where], key=_by_name))
    if not pods:
        return None
    rank = _RANK[anc.kind]
    earliest = min([_INF if p.start_time is None else p.start_time for p in pods])  # as VictimUnit.earliest_start
    return VictimUnit(anc.kind, anc.namespace, anc.name, pods, prio, rank, ALL, None, source, 0, {where[p.uid] for p in pods},
                      any(p.affinity is not None and _anti(p) for p in pods),
                      importance_key(prio, rank, len(pods), earliest, pods[0].uid))


def collect(
    state: ClusterState, index: GroupIndex, generic_workload: bool = True, below: int | None = None,
    keep: list[Pod] | None = None, own_priority: bool = False,
) -> Candidates:
    """Every preemption unit among the pods currently in `state` (collect_walk's answer), from
    columns kept per node across calls (ClusterState.per_node): simulate's cycles change a few
    hundred of 5,000 nodes between two PostFilters, and the walk over every pod was the largest
    part of each. Falls back to the walk for a pod whose PodGroup is missing (each such pod gets
    its own `metas` entry there), and on a state's first call: building every node's columns
    costs about what one walk does (a single analysis asks once). tests/test_collect_columns.py
    holds the two equal."""
    c = _collect_columns(state, index, generic_workload, below, keep, own_priority) if state.asked_before(_COLUMNS) else None
    return c if c is not None else collect_walk(state, index, generic_workload, below, keep, own_priority)


_COLUMNS = "preemption.units.collect"


def collect_walk(
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
                u = _group_unit(state, index, anc, prio, source)
                if u is not None:
                    pods = u.pods
                    done_groups.add(k)
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


# (namespace, PodGroup name) <-> a number, for the per-node columns (which must not depend on a
# GroupIndex: they are kept across calls). Only ever grows; the numbers never reach an answer.
_GROUP_IDS: dict[tuple[str, str], int] = {}
_GROUP_KEYS: list[tuple[str, str]] = []


def _group_id(pod: Pod) -> int:
    k = (pod.namespace, pod.pod_group_name)
    i = _GROUP_IDS.get(k)
    if i is None:
        i = _GROUP_IDS[k] = len(_GROUP_KEYS)
        _GROUP_KEYS.append(k)
    return i


class LabelSets:
    """(namespace, labels mapping) <-> a number, and a pod with them: the PDB classification matches
    each label set once (pdb.Budgets keys on the same pair). Pods of one template share their
    labels mapping; the pod kept holds it alive, so its id is never reused while numbered. Kept
    with the ClusterState whose per-node columns hold the numbers (ClusterState.kept), so it goes
    with the state: a process-wide table grew by every analysis' pods (metrics --serve, mcp)."""

    __slots__ = ("ids", "pods")

    def __init__(self) -> None:
        self.ids: dict[tuple[str, int], int] = {}
        self.pods: list[Pod] = []  # number -> a pod with that label set

    def number(self, pod: Pod) -> int:
        k = (pod.namespace, id(pod.labels))
        i = self.ids.get(k)
        if i is None:
            i = self.ids[k] = len(self.pods)
            self.pods.append(pod)
        return i


def _segment(sets: LabelSets, pods: list[Pod]) -> tuple[list[Pod], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What collect reads of one node's pods (ClusterState.per_node): the pods, their own
    priorities, the number of the PodGroup each names (-1: none), their start times (+inf: not
    started, as GetPodStartTime; the importance order reads them) and label set numbers."""
    n = len(pods)
    return (pods, np.fromiter([p.priority or 0 for p in pods], np.int64, n),
            np.fromiter([_group_id(p) if p.pod_group_name else -1 for p in pods], np.int64, n),
            np.fromiter([_INF if p.start_time is None else p.start_time for p in pods], np.float64, n),
            np.fromiter(map(sets.number, pods), np.int64, n))


class _GroupTable:
    """Per PodGroup number (_group_id), what collect reads of the PodGroup in one GroupIndex:
    effective priority and its source, All ancestor (index into `ancs`), `metas` entries; filled
    as numbers are met, kept in the index's memo for its life."""

    __slots__ = ("done", "missing", "prio", "anc", "ancs", "anc_ids", "sources", "metas", "metas_own")

    def __init__(self) -> None:
        self.done = np.zeros(0, bool)
        self.missing = np.zeros(0, bool)
        self.prio = np.zeros(0, np.int64)
        self.anc = np.zeros(0, np.int64)
        self.ancs: list[PodGroup | CompositePodGroup] = []
        self.anc_ids: dict[tuple[str, str, str], int] = {}
        self.sources: list[str] = []
        self.metas: list[tuple[str, str | None, str]] = []
        self.metas_own: list[tuple[str, str | None, str]] = []

    def fill(self, index: GroupIndex, ids: np.ndarray) -> bool:
        """Fill the entries of `ids`; False when one names a PodGroup the index does not have."""
        n = len(_GROUP_KEYS)
        if len(self.done) < n:
            grow = n - len(self.done)
            self.done = np.concatenate([self.done, np.zeros(grow, bool)])
            self.missing = np.concatenate([self.missing, np.zeros(grow, bool)])
            self.prio = np.concatenate([self.prio, np.zeros(grow, np.int64)])
            self.anc = np.concatenate([self.anc, np.full(grow, -1, np.int64)])
            self.sources.extend([""] * grow)
            self.metas.extend([("", None, "")] * grow)
            self.metas_own.extend([("", None, "")] * grow)
        for g in ids[~self.done[ids]].tolist():
            self.done[g] = True
            leaf = index.pgs.get(_GROUP_KEYS[g])
            if leaf is None:
                self.missing[g] = True
                continue
            p, source = _leaf_priority(leaf, index)
            anc = highest_all_ancestor(leaf, index)
            self.prio[g], self.sources[g] = p, source
            self.metas[g] = (leaf.disruption_mode, leaf.name, source)
            self.metas_own[g] = (leaf.disruption_mode, leaf.name, "")
            if anc is not None:
                self.anc[g] = a = self.anc_ids.setdefault((anc.kind, anc.namespace, anc.name), len(self.anc_ids))
                if a == len(self.ancs):
                    self.ancs.append(anc)
        return not self.missing[ids].any()


def _collect_columns(
    state: ClusterState, index: GroupIndex, generic_workload: bool, below: int | None, keep: list[Pod] | None,
    own_priority: bool,
) -> Candidates | None:
    """collect_walk's Candidates (and `keep`) from the per-node columns: every pod of the walk at
    a position, the walk's decisions as masks over the positions, Python only per PodGroup, per
    All ancestor and per unit built. None when a pod's PodGroup is missing (the caller walks)."""
    sets = state.kept(_COLUMNS, LabelSets)
    segs = state.per_node(_COLUMNS, partial(_segment, sets))
    pods_all = list(chain.from_iterable(sg[0] for sg in segs))
    n = len(pods_all)
    lens = np.fromiter((len(sg[0]) for sg in segs), np.int64, len(segs))
    node = np.repeat(np.arange(len(segs), dtype=np.int64), lens)
    prio = np.concatenate([sg[1] for sg in segs]) if n else np.zeros(0, np.int64)  # a copy: written below
    rank = np.full(n, POD_RANK, np.int64)
    meta = np.zeros(n, np.int64)
    anc_at = np.full(n, -1, np.int64)  # All ancestor (index into ancs) of the pod's PodGroup
    leaf_at = np.full(n, -1, np.int64)  # the pod's PodGroup (its number, _group_id)
    c = Candidates()
    ancs: list[PodGroup | CompositePodGroup] = []
    sources: list[str] = []
    if generic_workload:
        gcol = np.concatenate([sg[2] for sg in segs]) if n else np.zeros(0, np.int64)
        gp = np.flatnonzero(gcol >= 0)
        # Each PodGroup numbered in the order the walk meets it (its `metas` entry's order).
        uniq, first, inv = np.unique(gcol[gp], return_index=True, return_inverse=True)
        met = np.argsort(first, kind="stable")
        renumber = np.empty(len(uniq), np.intp)
        renumber[met] = np.arange(len(uniq))
        li = renumber[inv.reshape(-1)]
        met_ids = uniq[met]
        tab = index.memo.get("units.groups")
        if tab is None:
            tab = index.memo["units.groups"] = _GroupTable()
        if not tab.fill(index, met_ids):
            return None
        ancs, sources = tab.ancs, tab.sources
        c.metas.extend(map((tab.metas_own if own_priority else tab.metas).__getitem__, met_ids.tolist()))
        if len(gp):
            if not own_priority:
                prio[gp] = tab.prio[met_ids][li]
                rank[gp] = PODGROUP_RANK
            meta[gp] = li + 1
            leaf_at[gp] = gcol[gp]
            anc_at[gp] = tab.anc[met_ids][li]
    elig = prio < below if below is not None else np.ones(n, bool)
    if keep is not None and below is not None:
        keep.extend(compress(pods_all, (~elig).tolist()))
    single = elig & (anc_at < 0)
    first = np.zeros(n, bool)
    units: dict[int, VictimUnit] = {}  # position of the pod that met an All ancestor first -> its unit
    at = np.flatnonzero(elig & (anc_at >= 0))
    if len(at):
        a_ids = anc_at[at]
        _, fi = np.unique(a_ids, return_index=True)
        for pos, a in sorted(zip(at[fi].tolist(), a_ids[fi].tolist())):
            u = _group_unit(state, index, ancs[a], int(prio[pos]), "" if own_priority else sources[leaf_at[pos]])
            if u is None:
                single |= elig & (anc_at == a)  # no pod in the state: each pod a unit of its own
            else:
                units[pos] = u
                first[pos] = True
    upos = np.flatnonzero(single | first)
    pods_ = list(compress(pods_all, (single | first).tolist()))
    node_, prio_, rank_, meta_ = node[upos], prio[upos], rank[upos], meta[upos]
    objs: list[VictimUnit | None] = [None] * len(upos)
    if units:
        gk = np.searchsorted(upos, np.fromiter(units, np.int64, len(units)))
        for k, u in zip(gk.tolist(), units.values()):
            pods_[k] = u.pods[0]
            objs[k] = u
            rank_[k] = u.rank
        node_[gk] = -1
        meta_[gk] = -1
        c.groups = gk.tolist()
    c.pods, c.node, c.prio, c.rank, c.meta, c.objs = pods_, node_.tolist(), prio_.tolist(), rank_.tolist(), meta_.tolist(), objs
    # Single-pod units' start times (a group unit's is set from its pods by the importance order).
    c.start = (np.concatenate([sg[3] for sg in segs]) if n else np.zeros(0, np.float64))[upos]
    c.labelset = (np.concatenate([sg[4] for sg in segs]) if n else np.zeros(0, np.int64))[upos]
    c.label_sets = sets
    if units:
        c.labelset[gk] = -1
    victim_pods = c.victim_pods
    prev = 0
    for k in c.groups:
        victim_pods.extend(pods_[prev:k])
        victim_pods.extend(objs[k].pods)
        prev = k + 1
    victim_pods.extend(pods_[prev:])
    return c


def build_units(
    state: ClusterState, index: GroupIndex, generic_workload: bool = True, below: int | None = None,
    keep: list[Pod] | None = None, own_priority: bool = False,
) -> list[VictimUnit]:
    """Every preemption unit among the pods currently in `state` (see collect), as VictimUnits."""
    return collect(state, index, generic_workload, below, keep, own_priority).units()
