"""The columnar importance order (preemption/importance.py `importance_order`, used by
`by_importance` from 2,048 units on) against the reference: a stable sort by the key tuples."""

from __future__ import annotations

import math
import random

from hypothesis import given, settings, strategies as st

from kubectl_wap.preemption import importance
from kubectl_wap.preemption.importance import by_importance, by_importance_literal, importance_key, importance_order
from kubectl_wap.preemption.units import VictimUnit

_UIDS = ["", "a", "b", "b0", "uid-2", "uid-10"]
# Few distinct values per key, so that most units tie on the numeric keys and the UID decides
# (and equal UIDs: the tuple sort then keeps the input order).
_key = st.builds(
    importance_key,
    st.sampled_from([-(2**31), -5, 0, 7, 1000, 2**31 - 1]),
    st.integers(1, 3),
    st.integers(1, 4),
    st.sampled_from([0.0, 1.5, 1.7e9, 1.7e9 + 0.25, math.inf]),
    st.sampled_from(_UIDS),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_key, max_size=60))
def test_importance_order_is_the_stable_tuple_sort(keys: list[tuple]) -> None:
    assert importance_order(keys) == sorted(range(len(keys)), key=keys.__getitem__)


def _unit(i: int, key: tuple) -> VictimUnit:
    u = VictimUnit("Pod", "ns", f"p{i}", [], -key[0], -key[1], "")
    u.importance = key
    return u


@settings(max_examples=10, deadline=None)
@given(st.lists(_key, min_size=1, max_size=40), st.integers(0, 2**32))
def test_by_importance_takes_the_columns_and_equals_the_literal(few: list[tuple], seed: int) -> None:
    rnd = random.Random(seed)
    # Enough units for the columnar path, drawn from a few keys: many exact duplicates.
    # The UID drawn apart from the numeric keys: runs of numeric ties with different UIDs.
    keys = [(*rnd.choice(few)[:4], rnd.choice(_UIDS)) for _ in range(importance._COLUMNS_FROM + 10)]
    units = [_unit(i, k) for i, k in enumerate(keys)]
    rnd.shuffle(units)
    fast = by_importance(units)
    assert [id(u) for u in fast] == [id(u) for u in by_importance_literal(units)]


def test_no_ties_and_all_ties() -> None:
    distinct = [importance_key(i % 7, 1, 1, float(i), f"u{i}") for i in range(50)]
    assert importance_order(distinct) == sorted(range(50), key=distinct.__getitem__)
    same = [importance_key(1, 1, 1, 0.0, "x")] * 5
    assert importance_order(same) == [0, 1, 2, 3, 4]
    assert importance_order([]) == []


def test_a_pod_without_start_time_is_the_newest_on_both_paths() -> None:
    # util.go GetPodStartTime: a pod without status.startTime "started" now, so among pods of equal
    # priority it is the newest, the least important (MoreImportantPod / MoreImportantVictim:
    # the earlier start is more important); it is reprieved last. Units built by collect (the
    # object path) and the columnar order of the fast path must both say so.
    from kubectl_wap.framework.groups import GroupIndex
    from kubectl_wap.framework.buildstate import build_state
    from kubectl_wap.model import Node, Pod, Snapshot
    from kubectl_wap.preemption import candidates
    from kubectl_wap.preemption.units import collect

    node = Node("n1", uid="n1", labels={"kubernetes.io/hostname": "n1"}, allocatable={"cpu": 4000, "pods": 10})
    started = {"p-none": None, "p-new": 2.0e9, "p-old": 1.0e9}  # listed newest first on purpose
    pods = [Pod("default", name, uid=name, node_name="n1", phase="Running", priority=5, requests={"cpu": 100},
                nonzero_requests=(100, 200 * 1024**2), start_time=t) for name, t in started.items()]
    snap = Snapshot(nodes=[node], pods=pods)
    state, index = build_state(snap), GroupIndex.build(snap, composite_enabled=True)
    want = ["p-old", "p-new", "p-none"]
    assert [u.name for u in by_importance(collect(state, index, True).units())] == want
    c = collect(state, index, True)
    assert [c.unit(k).name for k in candidates.importance_order(c)] == want
