"""framework/nodecache.py keeps NodeResourcesFit's mask and the LeastAllocated and
BalancedAllocation scores over all nodes and refreshes only the nodes ClusterState's change feed
names. Over random sequences of every kind of change (single adds and removes, checkpoints and
rollbacks, bulk removals with and without the rebuild path and their rollback, a new resource
column) the cached values must equal a full recomputation after every step."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_wap.framework import filtering, scoring
from kubectl_wap.framework.state import ClusterState
from test_properties import GI, _pod, cluster_strategy

_SHAPES = [(500, GI), (1500, 2 * GI), (0, GI // 2), (3000, 0), (0, 0)]


def _fresh(state: ClusterState, pod) -> tuple[list, list, list]:
    every = np.arange(len(state.nodes), dtype=np.intp)
    cols, amts = state.request_vector(pod)
    pos = amts > 0
    return (
        filtering._fit_rows(state, cols[pos], amts[pos], every).tolist(),
        scoring._least(state, pod.nonzero_requests, every).tolist(),
        _balanced_fresh(state, pod, every),
    )


def _balanced_fresh(state: ClusterState, pod, every: np.ndarray) -> list:
    cpu, mem = pod.requests.get("cpu", 0), pod.requests.get("memory", 0)
    if not cpu and not mem:
        return [0] * len(every)
    return scoring._balanced(state, {"cpu": cpu, "memory": mem}, every).tolist()


def _cached(state: ClusterState, pod) -> tuple[list, list, list]:
    every = np.arange(len(state.nodes), dtype=np.intp)
    return (
        filtering.resource_fit_mask(state, pod).tolist(),
        scoring.least_allocated(state, pod, every).tolist(),
        scoring.balanced_allocation(state, pod, every).tolist(),
    )


_OPS = st.lists(st.sampled_from(["add", "remove", "checkpoint", "rollback", "bulk", "bulk-keep", "resource", "query"]),
                min_size=5, max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_strategy(cross=True), _OPS, st.data())
def test_cached_node_values_equal_a_full_recomputation(snap, ops, data):
    state = ClusterState(snap.nodes, snap.pods)
    probes = [_pod("p", f"probe-{i}", c, m) for i, (c, m) in enumerate(_SHAPES)]
    spare = [p for p in snap.pods if not p.node_name] + [_pod("x", f"extra-{i}", 200 * i, GI // 4) for i in range(6)]
    checkpoints: list[int] = []
    for k, op in enumerate(ops):
        placed = [p for _, p in state.all_pods()]
        off = [p for p in spare if not state.has(p)]
        if op == "add" and off:
            state.add_pod(data.draw(st.sampled_from(off)), data.draw(st.integers(0, len(state.nodes) - 1)))
        elif op == "remove" and placed:
            state.remove_pod(data.draw(st.sampled_from(placed)))
        elif op == "checkpoint":
            checkpoints.append(state.checkpoint())
        elif op == "rollback" and checkpoints:
            state.rollback(checkpoints.pop())
        elif op in ("bulk", "bulk-keep") and placed:
            gone = data.draw(st.lists(st.sampled_from(placed), unique_by=lambda p: p.uid, min_size=1))
            keep = [p for p in placed if p not in gone] if op == "bulk-keep" else None
            checkpoints.append(state.checkpoint())
            state.remove_pods(gone, keep)
        elif op == "resource":
            # A pod asking for a resource no node or pod had yet: a new column in every array.
            extra = replace(_pod("x", f"r-{k}", 100, GI // 8), requests={"cpu": 100, f"example.com/r{k}": 1})
            state.add_pod(extra, data.draw(st.integers(0, len(state.nodes) - 1)))
        for probe in probes:
            assert _cached(state, probe) == _fresh(state, probe), (k, op, probe.requests)


def test_a_gang_placed_pod_by_pod_only_refreshes_the_changed_nodes():
    """The point of the cache: between two pods of one shape only the node assumed in between is
    recomputed (and the answer still equals a full recomputation)."""
    from kubectl_wap.framework import nodecache
    from kubectl_wap.model import Node

    nodes = [Node(name=f"n{i}", allocatable={"cpu": 8000, "memory": 32 * GI, "pods": 110}) for i in range(50)]
    state = ClusterState(nodes, [])
    probe = _pod("p", "probe", 1000, GI)
    calls: list[tuple[str, int]] = []
    every = np.arange(len(nodes), dtype=np.intp)
    nz = probe.nonzero_requests
    rows = lambda idx: (calls.append(("rows", len(idx))), scoring._least(state, nz, idx))[1]  # noqa: E731
    one = lambda i: (calls.append(("one", i)), scoring._least_one(state, nz, i))[1]  # noqa: E731
    nodecache.over_all_nodes(state, "test-least", nz, rows, one)
    for i in range(5):
        state.add_pod(_pod("g", f"m{i}", 1000, GI), 7)
        got = nodecache.over_all_nodes(state, "test-least", nz, rows, one)
        assert got.tolist() == scoring._least(state, nz, every).tolist()
    assert calls == [("rows", 50)] + [("one", 7)] * 5


def test_the_feed_starting_over_forces_a_full_recomputation(monkeypatch):
    """A long simulation empties the change feed (bounded memory) and moves the epoch: cached
    values must not be read against the shorter feed."""
    from kubectl_wap.framework import nodecache, state as state_mod
    from kubectl_wap.model import Node

    monkeypatch.setattr(state_mod, "_MAX_TOUCHED", 3)
    nodes = [Node(name=f"n{i}", allocatable={"cpu": 8000, "memory": 32 * GI, "pods": 110}) for i in range(6)]
    state = ClusterState(nodes, [])
    probe = _pod("p", "probe", 1000, GI)
    every = np.arange(len(nodes), dtype=np.intp)
    for i in range(12):
        state.add_pod(_pod("g", f"m{i}", 700, GI), i % 6)
        got = nodecache.over_all_nodes(state, "test-feed", probe.nonzero_requests,
                                       lambda idx: scoring._least(state, probe.nonzero_requests, idx),
                                       lambda i: scoring._least_one(state, probe.nonzero_requests, i))
        assert got.tolist() == scoring._least(state, probe.nonzero_requests, every).tolist()
    assert len(state.touched) <= 3


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_strategy(cross=True), st.integers(0, 3 * GI), st.integers(0, 4000))
def test_one_node_at_a_time_equals_the_vectorized_rows(snap, mem, cpu):
    """The plain-Python refresh of one node (`one`) gives exactly the numpy rows, on every node,
    including nodes without cpu or memory and requests above capacity."""
    _one_equals_rows(ClusterState(snap.nodes, snap.pods), cpu, mem)


def _one_equals_rows(state: ClusterState, cpu: int, mem: int) -> None:
    pod = _pod("p", "probe", cpu, mem)
    every = np.arange(len(state.nodes), dtype=np.intp)
    cols, amts = state.request_vector(pod)
    pos = amts > 0
    shape = (tuple(cols[pos].tolist()), tuple(amts[pos].tolist()))
    assert [filtering._fit_one(state, shape, i) for i in every] == filtering._fit_rows(state, cols[pos], amts[pos], every).tolist()
    assert [scoring._least_one(state, pod.nonzero_requests, i) for i in every] == scoring._least(state, pod.nonzero_requests, every).tolist()
    assert [scoring._balanced_one(state, cpu, mem, i) for i in every] == scoring._balanced(state, {"cpu": cpu, "memory": mem}, every).tolist()


def test_one_node_at_a_time_on_nodes_without_cpu_or_memory():
    from kubectl_wap.model import Node

    allocs = [{"cpu": 0, "memory": GI, "pods": 1}, {"cpu": 1000, "pods": 110}, {"memory": GI, "pods": 110}, {"pods": 0},
              {"cpu": 7, "memory": 3, "pods": 110}, {"cpu": 10**6, "memory": 2**50, "pods": 110}]
    nodes = [Node(name=f"n{i}", allocatable=a) for i, a in enumerate(allocs)]
    running = [_pod("r", f"r{i}", 5 * i, 1000 * i, node=f"n{i}") for i in range(len(nodes))]
    state = ClusterState(nodes, running)
    for cpu, mem in [(0, 0), (1, 1), (3, 2), (500, GI), (10**6, 2**50), (2 * 10**6, 0)]:
        _one_equals_rows(state, cpu, mem)
