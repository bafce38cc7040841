"""Victim importance: util.go `MoreImportantVictim` (semantics doc 2.9).

More important = kept in preference. In order: higher effective priority; higher rank
(CompositePodGroup 3 > PodGroup 2 > Pod 1); more pods; earlier start (a missing start time counts
as newest); smaller UID of the first pod (PR #140999's deterministic tie-break).

`importance_key` is the only encoding of that order: build_units stores it on every unit."""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING

from ..framework import ties

if TYPE_CHECKING:
    from .units import VictimUnit


def importance_key(priority: int, rank: int, size: int, earliest_start: float, first_uid: str) -> tuple:
    """Sort key: ascending order of this key is descending importance.
    UPSTREAM-DIFF: v1.37.2's MoreImportantVictim ends at the start time and sorts with sort.Slice
    (unstable), so exact ties come out in no fixed order; the first-pod UID makes ours deterministic."""
    return (-priority, -rank, -size, earliest_start, first_uid)


def by_importance(units: list[VictimUnit]) -> list[VictimUnit]:
    """Most important first (build_units filled every unit's `importance`)."""
    out = sorted(units, key=attrgetter("importance"))
    if ties.observed():
        # v1.37's MoreImportantVictim stops at the start time: units equal up to there keep the
        # input order upstream (UPSTREAM-DIFF: our last key is the first pod's UID).
        for a, b in zip(out, out[1:]):
            if a.importance[:4] == b.importance[:4]:
                ties.tie("victim-order", f"{a.kind} {a.namespace}/{a.name} and {b.kind} {b.namespace}/{b.name}")
    return out
