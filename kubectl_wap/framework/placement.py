"""Topology-aware workload scheduling (TAS, KEP-5732): the placement algorithm kube-scheduler runs for a
PodGroup or CompositePodGroup with `spec.schedulingConstraints.topology`.

Upstream sources read (kubernetes/kubernetes):

* pkg/scheduler/schedule_one_podgroup.go (CPG era, with `nominatedPlacement`):
  `podGroupSchedulingPlacementAlgorithm`, `evaluatePlacement`, `nominatedPlacement`,
  `compositePodGroupSchedulingPlacementAlgorithm`, `findBestPodGroupPlacement`,
  `findBestCompositePodGroupPlacement`, `findBestPlacement`, `makeProposedAssignments`,
  `assumeSubtreeWithRevert`, `successfulLeafResults`; and the later refactor
  pkg/scheduler/algorithm_podgroup.go / podgroup_types.go (`podGroupFitError`).
* pkg/scheduler/backend/cache/snapshot.go `AssumePlacement` / `ListNodesInPlacement` (a placement
  restricts the candidate nodes only; plugins still list every node).
* PlacementGenerate: pkg/scheduler/framework/plugins/topologyaware/topology_placement.go
  (`TopologyPlacementGenerator`).
* PlacementScore: pkg/scheduler/framework/plugins/podgrouppodscount/podgroup_pods_count.go
  (`PodGroupPodsCount`) and pkg/scheduler/framework/plugins/noderesources/placement_bin_packing.go
  (`PlacementBinPacking`, default strategy MostAllocated). The integration tests
  test/integration/scheduler/podgroup/topology_aware_scheduling (TestTopologyAwareSchedulingWithGangPolicy:
  "... choosing placement with highest allocation percentage ...") show both in the default profile:
  PodGroupPodsCount ties are decided by the most-allocated placement.

Algorithm, for a group G with topology key K, inside the current (parent) placement P:

1. Placements (TopologyPlacementGenerator): if pods of G (all leaves under G for a CPG) are already in
   the snapshot, they fix the domain: every such pod's node must carry K with one common value, else
   Error ("cannot determine domain for already scheduled pods: ..."). Otherwise one placement per
   value of K among the nodes of P; nodes without label K are in no placement.
2. Standalone PodGroup only: the placement holding the most pods' nominatedNodeName is evaluated
   first and taken as soon as it gives Success with at least one pod newly placed.
3. Otherwise each placement is evaluated: the default algorithm (PodGroup) or the composite default
   algorithm (CPG, which recurses into children, each running its own algorithm inside this
   placement) with the candidate nodes restricted to the placement, then reverted. Error stops.
4. No Success: Unschedulable "0/<n> placements are available, reported placement status: <s>" for a
   PodGroup, "..., first placement status: <s>" for a CPG, s being the status of the nominated
   placement if one was evaluated, else of the first placement tried.
5. One Success: taken without scoring. Several: each is scored by
   PodGroupPodsCount: raw = pods of G in the snapshot + proposed assignments, normalized
   raw * 100 // max(raw); plus PlacementBinPacking (MostAllocated over cpu and memory, weight 1 each):
   for each resource, (non-zero requests of the pods on the placement's nodes + the proposed pods)
   * 100 // (sum of the placement nodes' allocatable), averaged. The highest total wins. The winner's
   assignments are assumed again so later siblings see them.

UPSTREAM-DIFF [unverified]: the placement-score plugin weights are not in the code we read
(default_plugins.go applyFeatureGates for TAS was not found); we weight both plugins 1.

UPSTREAM-DIFF: upstream breaks equal placement scores with a random `Randomizer` and generates the
placements in map order; we order placements by domain name and the smallest domain name wins a tie
(semantics doc 6.4), so every run gives the same answer.
UPSTREAM-DIFF: the "reported placement status" part carries the inner status's reason (e.g. the
GangScheduling "minCount (3) cannot be satisfied: ..." text), as the newest podGroupFitError does; the
nominatedPlacement-era code printed the generic "pod group is unschedulable" there.
UPSTREAM-DIFF: with the gate on, upstream also runs groups *without* topology constraints through
this algorithm with a single all-node placement; that gives the same placement but wraps a failure as
"0/1 placements are available, ...". We keep those groups on the plain default algorithm (and their
plain messages); see PodGroupScheduler._run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ties
from ..model import CompositePodGroup, Pod, PodGroup
from .groups import Group
from .groupcycle import GroupCycle, GroupResult, pending_pods
from .status import ERROR, SUCCESS, UNSCHEDULABLE, Status

GENERATOR = "TopologyPlacementGenerator"
SCORER = "PodGroupPodsCount"
SCORER_WEIGHT = 1
BIN_PACKING_WEIGHT = 1
MAX_SCORE = 100


@dataclass(slots=True)
class Placement:
    name: str  # the topology domain (label value)
    nodes: np.ndarray  # bool mask over node indexes


def topology_key(g: Group) -> str | None:
    # "Right now, we only support a single topology constraint on the API level."
    return g.topology_keys[0] if g.topology_keys else None


def _group_pods(pgs: GroupCycle, g: Group) -> list[Pod]:
    if isinstance(g, PodGroup):
        return list(pgs.index.pods(g))
    out: list[Pod] = []
    for leaf in pgs.index.leaves_under(g):
        out.extend(pgs.index.pods(leaf))
    return out


def _in_snapshot(pgs: GroupCycle, g: Group) -> list[Pod]:
    """PodGroupState.ScheduledPods(): the group's pods in the snapshot (bound or assumed)."""
    return [p for p in _group_pods(pgs, g) if pgs.state.has(p)]


def generate_placements(pgs: GroupCycle, g: Group) -> tuple[list[Placement], Status | None]:
    """TopologyPlacementGenerator.GeneratePlacements over the current (parent) placement."""
    state = pgs.state
    key = topology_key(g)
    parent = pgs.placement if pgs.placement is not None else np.ones(len(state.nodes), dtype=bool)
    if key is None:
        return [Placement("", parent.copy())], None
    required: str | None = None
    for p in _in_snapshot(pgs, g):
        node = state.nodes[state.where[p.uid]]
        if key not in node.labels:
            return [], Status(ERROR, (f"cannot determine domain for already scheduled pods: no topology domain found for pod {p.key}",), GENERATOR)
        dom = node.labels[key]
        if required is not None and required != dom:
            return [], Status(ERROR, (f"cannot determine domain for already scheduled pods: more than 1 domain found for pod group: {required}, {dom}",), GENERATOR)
        required = dom
    masks: dict[str, np.ndarray] = {}
    for i, node in enumerate(state.nodes):
        if not parent[i] or key not in node.labels:
            continue
        dom = node.labels[key]
        if required is not None and dom != required:
            continue
        m = masks.get(dom)
        if m is None:
            m = masks[dom] = np.zeros(len(state.nodes), dtype=bool)
        m[i] = True
    return [Placement(d, masks[d]) for d in sorted(masks)], None


def nominated_placement(placements: list[Placement], pods: list[Pod], node_index: dict[str, int]) -> Placement | None:
    """nominatedPlacement: the placement holding the most pods' nominatedNodeName (counted per pod,
    so several pods nominated to one node weigh more); the first such placement on equal counts;
    None when no placement holds any nominated node."""
    counts: dict[int, int] = {}
    for p in pods:
        idx = node_index.get(p.nominated_node_name) if p.nominated_node_name else None
        if idx is not None:
            counts[idx] = counts.get(idx, 0) + 1
    if not counts:
        return None
    best, best_count = None, 0
    for pl in placements:
        c = sum(n for idx, n in counts.items() if pl.nodes[idx])
        if c > best_count:
            best, best_count = pl, c
    return best


def _evaluate(pgs: GroupCycle, g: Group, pl: Placement) -> GroupResult:
    """evaluatePlacement: assume the placement, run the default (or composite default) algorithm,
    revert every assume it made, restore the parent placement."""
    saved = pgs.placement
    pgs.placement = pl.nodes
    cp = pgs.state.checkpoint()
    try:
        return pgs.run_default_algorithm(g)
    finally:
        pgs.state.rollback(cp)
        pgs.placement = saved


def score_placements(pgs: GroupCycle, g: Group, results: list[tuple[Placement, GroupResult]]) -> tuple[list[int], Status | None]:
    """RunPlacementScorePlugins with PodGroupPodsCount (ScorePlacement + NormalizePlacementScore)."""
    scheduled = len(_in_snapshot(pgs, g))
    raw = [scheduled + len(r.assignments) for _, r in results]
    mx = max(raw)
    if mx == 0:
        return [], Status(ERROR, ("no pods from pod group are assigned to any of the candidate placements",), SCORER)
    counts = [SCORER_WEIGHT * (v * MAX_SCORE // mx) for v in raw]
    return [c + BIN_PACKING_WEIGHT * bin_packing_score(pgs, pl, r) for c, (pl, r) in zip(counts, results)], None


def bin_packing_score(pgs: GroupCycle, pl: Placement, res: GroupResult) -> int:
    """PlacementBinPacking.ScorePlacement with the MostAllocated strategy over cpu and memory
    (weight 1 each, non-zero requests as NodeResourcesFit scoring uses): the placement's nodes are
    summed into one bin."""
    state = pgs.state
    nodes = np.flatnonzero(pl.nodes)
    total = wsum = 0
    for k, r in enumerate(("cpu", "memory")):
        cap = int(state.alloc[nodes, state.res_index[r]].sum())
        if cap == 0:
            continue  # mostResourceScorer skips resources without allocatable
        req = int(state.nonzero[nodes, k].sum()) + sum(a.pod.nonzero_requests[k] for a in res.assignments)
        # mostRequestedScore: requests above capacity (non-zero defaults) count as full.
        total += min(req, cap) * MAX_SCORE // cap
        wsum += 1
    return total // wsum if wsum else 0


def run_placement_algorithm(pgs: GroupCycle, g: Group) -> GroupResult:
    """podGroupSchedulingPlacementAlgorithm / compositePodGroupSchedulingPlacementAlgorithm."""
    placements, st = generate_placements(pgs, g)
    if st is not None:
        res = GroupResult(st)
        res.group_statuses[g.key] = st
        return res
    if not placements:
        # UPSTREAM-DIFF: upstream has no explicit branch for an empty placement list (its
        # "reported placement" result would be nil); we report the group Unschedulable.
        st = Status(UNSCHEDULABLE, (f"0/0 placements are available: no candidate node has the topology label {topology_key(g)}",), GENERATOR)
        res = GroupResult(st)
        res.group_statuses[g.key] = st
        return res

    composite = isinstance(g, CompositePodGroup)
    any_result: GroupResult | None = None
    successful: list[tuple[Placement, GroupResult]] = []
    nominated = None
    # NNN fast path: standalone PodGroups only (kubernetes/kubernetes#140863 tracks CPGs).
    if not composite and pgs.root is g:
        nominated = nominated_placement(placements, pending_pods(pgs.index, g), pgs.state.node_index)
    if nominated is not None:
        r = _evaluate(pgs, g, nominated)
        if r.status.code == ERROR:
            return r
        any_result = r
        if r.status.code == SUCCESS and r.any_scheduled:
            successful.append((nominated, r))
    if not successful:
        for pl in placements:
            if pl is nominated:
                continue
            r = _evaluate(pgs, g, pl)
            if r.status.code == ERROR:
                return r
            if any_result is None:
                any_result = r
            if r.status.code == SUCCESS:
                successful.append((pl, r))

    if not successful:
        assert any_result is not None
        word = "first" if composite else "reported"
        st = Status(UNSCHEDULABLE, (f"0/{len(placements)} placements are available, {word} placement status: {any_result.status.message}",), any_result.status.plugin)
        any_result.status = st
        any_result.assignments = []
        any_result.any_scheduled = False
        any_result.group_statuses[g.key] = st
        return any_result

    if len(successful) == 1:
        best_pl, best = successful[0]
    else:
        scores, st = score_placements(pgs, g, successful)
        if st is not None:
            res = GroupResult(st)
            res.group_statuses[g.key] = st
            return res
        # Highest total score; ties -> smallest domain name (placements are in name order and a
        # later one replaces the best only with a strictly higher score).
        bi = 0
        for i in range(1, len(successful)):
            if scores[i] > scores[bi] or (scores[i] == scores[bi] and successful[i][0].name < successful[bi][0].name):
                bi = i
        at = sorted((i for i in range(len(successful)) if scores[i] == scores[bi]), key=lambda i: successful[i][0].name)
        if len(at) > 1:
            ties.tie("placement", f"{g.key}: equal placement score on {', '.join(successful[i][0].name for i in at)}")
            bi = at[ties.pick(len(at))]  # the smallest name unless ties.explore() is on
        best_pl, best = successful[bi]
    # assumeSubtreeWithRevert: the evaluation was reverted; assume the winner's pods again (in
    # scheduling order) so sibling groups and the caller see them. run_root reverts them at the end.
    for a in best.assignments:
        pgs.state.add_pod(a.pod, a.node)
    best.chosen_placements[g.key] = best_pl.name
    return best
