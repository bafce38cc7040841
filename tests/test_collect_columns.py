"""units.collect (the candidate units from per-node columns kept across calls, ClusterState.per_node)
against units.collect_walk (the walk over every pod it replaces): the same Candidates, column by
column, and the same pods left in `keep`, for every `below`, with GenericWorkload on and off,
under the 1.38 own-priority rule, with PodGroups missing, and again on the same state after
random changes (single adds and removes, bulk removals, rollbacks), whose per-node columns are
then partly reused."""

from __future__ import annotations

import math
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_wap.framework.buildstate import build_state
from kubectl_wap.framework.groups import GroupIndex
from kubectl_wap.preemption.units import Candidates, collect, collect_walk
from test_properties import cluster_strategy

_SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _unit(u) -> tuple:
    return (u.kind, u.namespace, u.name, [p.uid for p in u.pods], u.priority, u.rank, u.disruption_mode, u.group, u.source,
            set(u.nodes), u.anti_affinity, u.importance)


def _columns(c: Candidates) -> tuple:
    return ([p.uid for p in c.pods], c.node, c.prio, c.rank, c.meta, c.metas, c.groups, [p.uid for p in c.victim_pods],
            [_unit(u) if u is not None else None for u in c.objs], [_unit(u) for u in c.units()])


def _same(state, index, gw: bool, own: bool) -> None:
    for below in (None, 0, 100, 500, 1000, 2001, 10**9):
        k1, k2 = [], []
        fast = collect(state, index, gw, below=below, keep=k1, own_priority=own)
        ref = collect_walk(state, index, gw, below=below, keep=k2, own_priority=own)
        assert _columns(fast) == _columns(ref), (below, gw, own)
        # The start times collect hands the importance order, for every single-pod unit (None
        # when it walked: a PodGroup is missing).
        if fast.start is None:
            continue
        assert len(fast.start) == len(fast)
        groups = set(fast.groups)
        assert [t for k, t in enumerate(fast.start.tolist()) if k not in groups] == [
            math.inf if p.start_time is None else p.start_time for k, p in enumerate(fast.pods) if k not in groups]
        assert [p.uid for p in k1] == [p.uid for p in k2]


@_SETTINGS
@given(snap=cluster_strategy(), data=st.data())
def test_columns_equal_the_walk(snap, data):
    # Some group pods at a priority of their own (the 1.38 rule reads it), and sometimes a
    # PodGroup missing from the index (its pods fall back to their own priority).
    pods = [replace(p, priority=data.draw(st.sampled_from([p.priority, 0, 100, 2000]))) if p.pod_group_name and p.node_name else p
            for p in snap.pods]
    pods = [replace(p, start_time=None) if p.node_name and data.draw(st.integers(0, 3)) == 0 else p for p in pods]  # not started
    pgs = list(snap.pod_groups)
    if pgs and data.draw(st.integers(0, 4)) == 0:
        pgs.pop(data.draw(st.integers(0, len(pgs) - 1)))
    snap = replace(snap, pods=pods, pod_groups=pgs)
    index = GroupIndex.build(snap, composite_enabled=True)
    if index.pods_of and data.draw(st.integers(0, 3)) == 0:
        # A group whose pods the index does not list: an All unit with no pod in the state, so
        # each of its pods falls back to a unit of its own.
        for key in data.draw(st.lists(st.sampled_from(sorted(index.pods_of)), min_size=1)):
            index.pods_of[key] = []
    state = build_state(snap)
    gw, own = data.draw(st.booleans()), data.draw(st.booleans())
    _same(state, index, gw, own)
    # A PostFilter's shape: every candidate removed at once, the columns read, rolled back.
    cp = state.checkpoint()
    on = [p for d in state.node_pods for p in d.values()]
    state.remove_pods(on[::2], on[1::2] if data.draw(st.booleans()) else None)
    _same(state, index, gw, own)
    state.rollback(cp)
    _same(state, index, gw, own)
    cps: list[int] = []
    for op, k in data.draw(st.lists(st.tuples(st.sampled_from(["remove", "readd", "checkpoint", "rollback", "bulk"]),
                                              st.integers(0, 50)), max_size=8)):
        on = [p for d in state.node_pods for p in d.values()]
        if op == "remove" and on:
            state.remove_pod(on[k % len(on)])
        elif op == "readd" and on:
            p = on[k % len(on)]
            i = state.remove_pod(p)
            state.add_pod(p, (i + k) % len(state.nodes))  # to the end of a node's map, maybe another node
        elif op == "checkpoint":
            cps.append(state.checkpoint())
        elif op == "rollback" and cps:
            state.rollback(cps.pop())
        elif op == "bulk":
            gone = on[: k % (len(on) + 1)]
            state.remove_pods(gone, on[len(gone):] if k % 2 else None)
        _same(state, index, gw, own)


def test_the_label_set_numbers_go_with_their_state():
    """collect's label-set numbering (a pod per distinct labels mapping) lives with the state whose
    per-node columns hold the numbers (ClusterState.kept), not in a process-wide table that held a
    pod of every analysis for ever (metrics --serve and the MCP server analyse again and again)."""
    import gc
    import sys

    from kubectl_wap.snapshot.io.files import load_demo

    snap = load_demo()
    index = GroupIndex.build(snap, composite_enabled=True)
    placed = [p for p in snap.pods if p.node_name]
    before = [sys.getrefcount(p) for p in placed]
    for _ in range(3):
        state = build_state(snap)
        collect(state, index, True)
        c = collect(state, index, True)  # the second call on a state reads the columns
        assert c.label_sets is not None and c.label_sets.pods
        del state, c
    gc.collect()
    assert [sys.getrefcount(p) for p in placed] == before
