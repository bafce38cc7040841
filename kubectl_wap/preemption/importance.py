"""Victim importance: util.go `MoreImportantVictim` (semantics doc 2.9).

More important = kept in preference. In order: higher effective priority; higher rank
(CompositePodGroup 3 > PodGroup 2 > Pod 1); more pods; earlier start (a missing start time counts
as newest); smaller UID of the first pod (PR #140999's deterministic tie-break).

`importance_key` is the only encoding of that order: build_units stores it on every unit.
`by_importance` sorts large unit lists as columns (numpy's lexsort on the four numeric keys, then
the UID tie-break inside each run of equal keys); `by_importance_literal` is the plain sort by the
key tuple it must equal (tests/test_importance_order.py)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Protocol, TypeVar

import numpy as np

from ..framework import ties


class Ranked(Protocol):
    """What the victim order reads of a unit: a Protocol rather than units.VictimUnit, because
    units.py builds every unit's key with importance_key and so imports this module; naming its
    class here would make the two modules import each other."""

    @property
    def importance(self) -> tuple | None: ...

    @property
    def kind(self) -> str: ...

    @property
    def namespace(self) -> str: ...

    @property
    def name(self) -> str: ...


U = TypeVar("U", bound=Ranked)  # by_importance returns the caller's own unit type


def importance_key(priority: int, rank: int, size: int, earliest_start: float, first_uid: str) -> tuple:
    """Sort key: ascending order of this key is descending importance.
    UPSTREAM-DIFF: v1.37.2's MoreImportantVictim ends at the start time and sorts with sort.Slice
    (unstable), so exact ties come out in no fixed order; the first-pod UID makes ours deterministic."""
    return (-priority, -rank, -size, earliest_start, first_uid)


# Below this many units the tuple sort is as fast as building columns.
_COLUMNS_FROM = 2048


def by_importance_literal(units: list[U]) -> list[U]:
    """The reference: a stable sort by the key tuple."""
    return sorted(units, key=attrgetter("importance"))


def importance_order(keys: list[tuple]) -> list[int]:
    """Indices of `keys` (importance_key tuples) in ascending key order, ties by position: the
    permutation a stable sort by the tuples gives. Pulling each column out with a comprehension
    costs ~5 ms per 100k units; `zip(*keys)` would cost 0.5 s (one iterator per unit)."""
    n = len(keys)
    cols = [np.fromiter([k[j] for k in keys], np.float64 if j == 3 else np.int64, n) for j in range(4)]
    return _lexsort_then_uid(cols, [k[4] for k in keys])


def _lexsort_then_uid(cols: list[np.ndarray], uids: Sequence[str]) -> list[int]:
    """The four numeric key columns (in key order) go to np.lexsort (stable); each run of units
    equal on all four is then sorted by the UID column in Python (at L, ~6k of 113k units sit in
    such runs)."""
    order = np.lexsort(cols[::-1])  # last key is primary
    sorted_cols = [c[order] for c in cols]
    same = np.ones(len(order) - 1 if len(order) else 0, dtype=bool)
    for c in sorted_cols:
        same &= c[1:] == c[:-1]
    out: list[int] = order.tolist()
    if not same.any():
        return out
    # Runs of equal numeric keys: position j is tied with j + 1 where same[j]; a run spans
    # [start, end] over consecutive tied positions.
    tied = np.flatnonzero(same)
    breaks = np.flatnonzero(np.diff(tied) != 1)
    starts = np.concatenate(([tied[0]], tied[breaks + 1])).tolist()
    ends = (np.concatenate((tied[breaks], [tied[-1]])) + 2).tolist()
    for a, b in zip(starts, ends):
        # sorted() is stable: equal UIDs keep lexsort's (input) order, as the tuple sort would.
        out[a:b] = sorted(out[a:b], key=uids.__getitem__)
    return out


def _layout() -> list[tuple[int, int]] | None:
    """Where importance_key puts each input and with which sign, read off the key itself so that
    it stays the only encoding of the order: (input, sign) per numeric key position, inputs
    numbered priority 0, rank 1, size 2, start 3. None unless the key is four numbers then the
    UID (the form importance_order_columns sorts)."""
    probe = importance_key(2, 3, 5, 7.0, "u")
    if len(probe) != 5 or probe[4] != "u":
        return None
    out = []
    for v in probe[:4]:
        if isinstance(v, str) or abs(v) not in (2, 3, 5, 7):
            return None
        out.append(((2, 3, 5, 7).index(abs(v)), 1 if v > 0 else -1))
    return out if sorted(w for w, _ in out) == [0, 1, 2, 3] else None


def importance_order_columns(priority: np.ndarray, rank: np.ndarray, size: np.ndarray, start: np.ndarray,
                             uids: Sequence[str]) -> list[int]:
    """importance_order for units given as columns (preemption/candidates.py): the same
    permutation as sorting the units' importance_key tuples stably. `uids` is read only inside
    runs of units equal on the four numbers (any sequence: the candidates pass a lazy one)."""
    layout = _layout()
    inputs = (priority, rank, size, start)
    if layout is None:  # importance_key no longer has the columnar form: sort its tuples
        keys = [importance_key(int(a), int(b), int(c), float(d), u) for a, b, c, d, u in
                zip(priority.tolist(), rank.tolist(), size.tolist(), start.tolist(), uids)]
        return sorted(range(len(keys)), key=keys.__getitem__)
    return _lexsort_then_uid([inputs[w] * sign for w, sign in layout], uids)


def by_importance(units: list[U]) -> list[U]:
    """Most important first (build_units filled every unit's `importance`)."""
    if len(units) < _COLUMNS_FROM:
        out = by_importance_literal(units)
    else:
        keys = [u.importance for u in units]
        out = [units[i] for i in importance_order(keys)]
    if ties.observed():
        # v1.37's MoreImportantVictim stops at the start time: units equal up to there keep the
        # input order upstream (UPSTREAM-DIFF: our last key is the first pod's UID).
        # v1.38.0-beta.0's ends with the first pod's UID (util.go podIdentityLess), as ours: exact
        # on a real cluster's snapshot, but still a tie against the oracle, whose API server gives
        # every pod a new random UID. Under explore() such runs come in a random order.
        out = ties.shuffle_runs(out, lambda a, b: a.importance[:4] == b.importance[:4])
        for a, b in zip(out, out[1:]):
            if a.importance[:4] == b.importance[:4]:
                ties.tie("victim-order", f"{a.kind} {a.namespace}/{a.name} and {b.kind} {b.namespace}/{b.name}")
    return out
