"""Victim importance: util.go `MoreImportantVictim` (semantics doc 2.9).

More important = kept in preference. In order: higher effective priority; higher rank
(CompositePodGroup 3 > PodGroup 2 > Pod 1); more pods; earlier start (a missing start time counts
as newest); smaller UID of the first pod (PR #140999's deterministic tie-break).

`importance_key` is the only encoding of that order: build_units stores it on every unit."""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .units import VictimUnit


def importance_key(priority: int, rank: int, size: int, earliest_start: float, first_uid: str) -> tuple:
    """Sort key: ascending order of this key is descending importance.
    UPSTREAM-DIFF: v1.37.2's MoreImportantVictim ends at the start time and sorts with sort.Slice
    (unstable), so exact ties come out in no fixed order; the first-pod UID makes ours deterministic."""
    return (-priority, -rank, -size, earliest_start, first_uid)


def by_importance(units: list[VictimUnit]) -> list[VictimUnit]:
    """Most important first (build_units filled every unit's `importance`)."""
    return sorted(units, key=attrgetter("importance"))
