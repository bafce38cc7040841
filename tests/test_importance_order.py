"""Victim importance (preemption/importance.py): the order itself, v1.37.2 util.go
`MoreImportantVictim` case by case (its unit test's table, on both sorts); then the columnar
importance order (`importance_order`, used by `by_importance` from 2,048 units on) against the
reference: a stable sort by the key tuples."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kubectl_wap.preemption import importance
from kubectl_wap.preemption.importance import (by_importance, by_importance_literal, importance_key, importance_order,
                                               importance_order_columns)
from kubectl_wap.preemption.units import VictimUnit

NOW, BEFORE = 1000.0, 500.0  # TestMoreImportantVictim's time.Unix(1000, 0) and time.Unix(500, 0)
NONE = math.inf  # no earliestStartTime: GetPodStartTime's "now", the newest
POD, PG, CPG = 1, 2, 3  # victimRank: CompositePodGroupKeyType 3, PodGroupKeyType 2, else 1


# util_test.go TestMoreImportantVictim (v1.37.2), case by case: (priority, rank, pods, earliest
# start) of vi1 and vi2, and MoreImportantVictim(vi1, vi2). MoreImportantVictim (util.go) compares
# priority, then victimRank, then the number of pods, then the earlier start.
_MORE_IMPORTANT = [
    ("vi1 has higher priority", (20, POD, 1, NONE), (10, POD, 1, NONE), True),
    ("vi2 has higher priority", (10, POD, 1, NONE), (20, POD, 1, NONE), False),
    ("vi1 is PG, vi2 is Pod, same priority", (10, PG, 1, NONE), (10, POD, 1, NONE), True),
    ("vi1 is Pod, vi2 is PG, same priority", (10, POD, 1, NONE), (10, PG, 1, NONE), False),
    ("both Pods, vi1 older", (10, POD, 1, BEFORE), (10, POD, 1, NOW), True),
    ("both Pods, vi2 older", (10, POD, 1, NOW), (10, POD, 1, BEFORE), False),
    ("both PGs, vi1 larger", (10, PG, 2, NONE), (10, PG, 1, NONE), True),
    ("both PGs, vi2 larger", (10, PG, 1, NONE), (10, PG, 2, NONE), False),
    ("both PGs, same size, vi1 older", (10, PG, 2, BEFORE), (10, PG, 2, NOW), True),
    ("both PGs, same size, vi2 older", (10, PG, 2, NOW), (10, PG, 2, BEFORE), False),
    ("CPG vs Pod, same priority (CPG wins)", (10, CPG, 1, NONE), (10, POD, 1, NONE), True),
    ("Pod vs CPG, same priority (CPG wins)", (10, POD, 1, NONE), (10, CPG, 1, NONE), False),
    ("CPG vs PG, same priority (CPG wins)", (10, CPG, 1, NONE), (10, PG, 1, NONE), True),
    ("PG vs CPG, same priority (CPG wins)", (10, PG, 1, NONE), (10, CPG, 1, NONE), False),
    ("CPG vs PG, PG higher priority (higher priority wins)", (10, CPG, 1, NONE), (20, PG, 1, NONE), False),
    ("PG vs CPG, PG higher priority (higher priority wins)", (20, PG, 1, NONE), (10, CPG, 1, NONE), True),
    ("CPG vs PG, CPG smaller size, same priority (CPG rank wins over size)", (10, CPG, 1, NONE), (10, PG, 2, NONE), True),
    ("CPG vs PG, CPG newer start time, same priority (CPG rank wins over start time)", (10, CPG, 1, NOW), (10, PG, 1, BEFORE), True),
    ("both CPGs, vi1 larger (larger size wins)", (10, CPG, 2, NONE), (10, CPG, 1, NONE), True),
    ("both CPGs, vi2 larger (larger size wins)", (10, CPG, 1, NONE), (10, CPG, 2, NONE), False),
    ("both CPGs, same size, vi1 older (earlier start time wins)", (10, CPG, 1, BEFORE), (10, CPG, 1, NOW), True),
    ("both CPGs, same size, vi2 older (earlier start time wins)", (10, CPG, 1, NOW), (10, CPG, 1, BEFORE), False),
]


@pytest.mark.parametrize("vi1, vi2, want", [pytest.param(a, b, w, id=name) for name, a, b, w in _MORE_IMPORTANT])
def test_more_important_victim(vi1, vi2, want):
    """Both sorts (by_importance on units, importance_order_columns on columns) put the more
    important victim first. The UIDs go against the expectation (the more important one gets the
    larger UID), so a key that misses the deciding field falls to the UID and fails; and the less
    important victim comes first in the input, so a sort that keeps the input order fails too."""
    more, less = (vi1, vi2) if want else (vi2, vi1)
    units = []
    for name, (prio, rank, size, start) in (("less", less), ("more", more)):
        u = VictimUnit("Pod", "ns", name, [], prio, rank, "")
        u.importance = importance_key(prio, rank, size, start, "uid-b" if name == "more" else "uid-a")
        units.append(u)
    got = [u.name for u in by_importance(units)]
    assert got == ["more", "less"], f"by_importance: got {got}, want ['more', 'less'] (MoreImportantVictim(vi1, vi2) = {want})"
    cols = [np.array([x[j] for x in (less, more)], dtype=np.float64 if j == 3 else np.int64) for j in range(4)]
    got = [["less", "more"][i] for i in importance_order_columns(*cols, ["uid-a", "uid-b"])]
    assert got == ["more", "less"], f"importance_order_columns: got {got}, want ['more', 'less'] (MoreImportantVictim(vi1, vi2) = {want})"


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
    walked = collect(state, index, True)  # the first call on a state walks: no start column (c.start None)
    assert walked.start is None
    assert [u.name for u in by_importance(walked.units())] == want
    assert [walked.unit(k).name for k in candidates.importance_order(walked)] == want
    c = collect(state, index, True)  # later calls read the per-node columns, start times among them
    assert c.start is not None
    assert [c.unit(k).name for k in candidates.importance_order(c)] == want
