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
