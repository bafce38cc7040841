"""The Score phase over feasible nodes, with the default profile's weights (default_plugins.go):
NodeResourcesFit (LeastAllocated) 1, NodeResourcesBalancedAllocation 1, TaintToleration 3,
NodeAffinity 2, PodTopologySpread 2, InterPodAffinity 2.

UPSTREAM-DIFF: ImageLocality (weight 1) is not scored: image sizes per node are rarely in a
snapshot and its score is small; a tie it would break falls to our node-name rule instead.
"""

from __future__ import annotations

import numpy as np

from . import ties
from ..model import Pod
from .filtering import CycleData
from .nodecache import over_all_nodes
from .plugins.selectors import match_node_selector_term, tolerates_taint
from .registry import cross_node_plugins
from .state import CPU, MEMORY, ClusterState

MAX_NODE_SCORE = 100


def least_allocated(state: ClusterState, pod: Pod, nodes: np.ndarray) -> np.ndarray:
    """NodeResourcesFit LeastAllocated over cpu and memory (weight 1 each), on non-zero requests
    (leastResourceScorer / leastRequestedScore; integer arithmetic as upstream). Node-local: kept
    over all nodes per shape (framework/nodecache.py)."""
    nz = pod.nonzero_requests
    return over_all_nodes(state, "LeastAllocated", nz, lambda idx: _least(state, nz, idx), lambda i: _least_one(state, nz, i))[nodes]


def _least(state: ClusterState, nz: tuple[int, int], nodes: np.ndarray) -> np.ndarray:
    total = np.zeros(len(nodes), dtype=np.int64)
    wsum = np.zeros(len(nodes), dtype=np.int64)
    for k, r in enumerate((CPU, MEMORY)):
        cap = state.alloc[nodes, state.res_index[r]]
        req = state.nonzero[nodes, k] + nz[k]
        has = cap > 0
        safe = np.where(has, cap, 1)
        s = np.where(req > cap, 0, ((cap - req) * MAX_NODE_SCORE) // safe)
        total += np.where(has, s, 0)
        wsum += has
    return np.where(wsum > 0, total // np.maximum(wsum, 1), 0)


def _least_one(state: ClusterState, nz: tuple[int, int], i: int) -> int:
    """_least for node i alone, in Python integers (the same floor divisions)."""
    total = wsum = 0
    for k, r in enumerate((CPU, MEMORY)):
        cap = int(state.alloc[i, state.res_index[r]])
        req = int(state.nonzero[i, k]) + nz[k]
        if cap > 0:
            total += 0 if req > cap else ((cap - req) * MAX_NODE_SCORE) // cap
            wsum += 1
    return total // wsum if wsum > 0 else 0


def _balance(state: ClusterState, nodes: np.ndarray, extra: dict[str, int]) -> np.ndarray:
    """balancedResourceScore: 100 * (1 - std of the cpu/memory request fractions, each capped at
    1), truncated; with two resources std = |f1 - f2| / 2, with one it is 0."""
    fracs = []
    for r in (CPU, MEMORY):
        c = state.res_index[r]
        cap = state.alloc[nodes, c].astype(np.float64)
        req = (state.requested[nodes, c] + extra.get(r, 0)).astype(np.float64)
        f = np.where(cap > 0, np.minimum(req / np.where(cap > 0, cap, 1.0), 1.0), np.nan)
        fracs.append(f)
    a, b = fracs
    both = ~np.isnan(a) & ~np.isnan(b)
    std = np.where(both, np.abs(a - b) / 2.0, 0.0)
    return ((1.0 - std) * MAX_NODE_SCORE).astype(np.int64)


def balanced_allocation(state: ClusterState, pod: Pod, nodes: np.ndarray) -> np.ndarray:
    """NodeResourcesBalancedAllocation on actual requests, v1.37.2 `balancedResourceScorer`: the
    node's balance *change*, 50 + (50 + with_pod - without_pod) / 2, where each term is
    balancedResourceScore (both in [50, 100], so the result is too; Go's integer division, the
    operand is never negative). Checked against the real scheduler's per-plugin scores (oracle
    case gen-2-71: 69/63/67 on three nodes where the older "score with the pod" formula gives
    60/63/75). A pod that requests neither cpu nor memory (best effort) is not scored
    (isBestEffortPod). Node-local: kept over all nodes per shape (framework/nodecache.py)."""
    cpu, mem = pod.requests.get(CPU, 0), pod.requests.get(MEMORY, 0)
    if not cpu and not mem:
        return np.zeros(len(nodes), dtype=np.int64)
    extra = {CPU: cpu, MEMORY: mem}  # _balance reads only these two
    return over_all_nodes(state, "BalancedAllocation", (cpu, mem), lambda idx: _balanced(state, extra, idx),
                          lambda i: _balanced_one(state, cpu, mem, i))[nodes]


def _balanced(state: ClusterState, extra: dict[str, int], nodes: np.ndarray) -> np.ndarray:
    with_pod = _balance(state, nodes, extra)
    without = _balance(state, nodes, {})
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without) // 2


def _balance_one(state: ClusterState, i: int, cpu: int, mem: int) -> int:
    """_balance for node i alone, in Python floats (IEEE doubles, as numpy's float64)."""
    fracs: list[float | None] = []
    for r, e in ((CPU, cpu), (MEMORY, mem)):
        c = state.res_index[r]
        cap = float(state.alloc[i, c])
        req = float(int(state.requested[i, c]) + e)
        fracs.append(min(req / cap, 1.0) if cap > 0 else None)
    a, b = fracs
    std = abs(a - b) / 2.0 if a is not None and b is not None else 0.0
    return int((1.0 - std) * MAX_NODE_SCORE)


def _balanced_one(state: ClusterState, cpu: int, mem: int, i: int) -> int:
    with_pod = _balance_one(state, i, cpu, mem)
    without = _balance_one(state, i, 0, 0)
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without) // 2


def default_normalize(scores: np.ndarray, reverse: bool) -> np.ndarray:
    """helper.DefaultNormalizeScore."""
    mx = int(scores.max()) if len(scores) else 0
    if mx == 0:
        return np.full_like(scores, MAX_NODE_SCORE) if reverse else scores
    out = MAX_NODE_SCORE * scores // mx
    return MAX_NODE_SCORE - out if reverse else out


# Raw per-node scores that depend only on the pod's shape and the (never changing) node list,
# computed once per shape for all nodes: (state token, plugin, shape) -> array over all nodes.
_RAW: dict[tuple, np.ndarray] = {}


def _raw(state: ClusterState, plugin: str, shape: tuple, compute) -> np.ndarray:
    key = (state.token, plugin, shape)
    arr = _RAW.get(key)
    if arr is None:
        if len(_RAW) > 4096:
            _RAW.clear()
        arr = _RAW[key] = compute()
    return arr


def taint_toleration(state: ClusterState, pod: Pod, nodes: np.ndarray) -> np.ndarray:
    """TaintToleration score: count of intolerable PreferNoSchedule taints, reversed."""
    tols = tuple(t for t in pod.tolerations if t.effect in ("", "PreferNoSchedule"))

    def compute() -> np.ndarray:
        counts = np.zeros(len(state.nodes), dtype=np.int64)
        for i, node in enumerate(state.nodes):
            for taint in node.taints:
                if taint.effect == "PreferNoSchedule" and not tolerates_taint(tols, taint):
                    counts[i] += 1
        return counts

    return default_normalize(_raw(state, "TaintToleration", tols, compute)[nodes], reverse=True)


def node_affinity(state: ClusterState, pod: Pod, nodes: np.ndarray) -> np.ndarray:
    """NodeAffinity score: sum of weights of matching preferred terms, normalized."""
    terms = pod.affinity.node_preferred if pod.affinity is not None else ()
    if not terms:
        return np.zeros(len(nodes), dtype=np.int64)

    def compute() -> np.ndarray:
        scores = np.zeros(len(state.nodes), dtype=np.int64)
        for i, node in enumerate(state.nodes):
            for t in terms:
                if t.weight and match_node_selector_term(t.preference, node):
                    scores[i] += t.weight
        return scores

    return default_normalize(_raw(state, "NodeAffinity", terms, compute)[nodes], reverse=False)


def total_scores(state: ClusterState, pod: Pod, cycle: CycleData, nodes: np.ndarray) -> np.ndarray:
    total = least_allocated(state, pod, nodes) * 1
    total += balanced_allocation(state, pod, nodes) * 1
    total += taint_toleration(state, pod, nodes) * 3
    total += node_affinity(state, pod, nodes) * 2
    if cycle.plugins or pod.affinity is not None or pod.topology_spread:
        feasible = nodes.tolist()  # plain ints for the per-node plugins
        for plugin in cross_node_plugins():
            if plugin.relevant(state, pod):
                total += np.asarray(plugin.score(state, pod, feasible), dtype=np.int64) * plugin.score_weight
    return total


def select_host(state: ClusterState, pod: Pod, cycle: CycleData, feasible: np.ndarray) -> int:
    """selectHost: highest total score.
    UPSTREAM-DIFF: v1.37 pops the best of a score heap (prioritizeNodes, NewSortedScoredNodes;
    its Randomizer is set only with extenders), so equal top scores go to whichever the heap yields
    from the feasible-node list, whose order follows the node tree (zones interleaved) and the
    timing of parallel filtering: not reproducible from a snapshot. We take the smallest node name
    (nodes are indexed in name order), so every run gives the same answer; the differential tests
    pin the real scheduler to the same rule (tests/oracle/tiebreak_test.go)."""
    if len(feasible) == 1:
        # schedulePod returns the only feasible node without scoring.
        return int(feasible[0])
    scores = total_scores(state, pod, cycle, feasible)
    best = int(np.argmax(scores))
    if ties.observed() and int((scores == scores[best]).sum()) > 1:
        at = np.flatnonzero(scores == scores[best])
        tied = [state.nodes[int(feasible[i])].name for i in at]
        ties.tie("select-host", f"pod {pod.key}: equal top score {int(scores[best])} on {', '.join(tied)}")
        best = int(at[ties.pick(len(at))])  # at[0] (the smallest name) unless ties.explore() is on
    return int(feasible[best])
