"""Victim importance: util.go `MoreImportantVictim` (semantics doc 2.9).

More important = kept in preference. In order: higher effective priority; higher rank
(CompositePodGroup 3 > PodGroup 2 > Pod 1); more pods; earlier start (a missing start time counts
as newest); smaller UID of the first pod (PR #140999's deterministic tie-break)."""

from __future__ import annotations

from operator import attrgetter

from ..framework import ties
from .units import VictimUnit


def importance_key(u: VictimUnit) -> tuple:
    """Sort key: ascending order of this key is descending importance (build_units caches it)."""
    k = u.importance
    if k is None:
        k = (-u.priority, -u.rank, -len(u.pods), u.earliest_start, u.first_uid)
    return k


def by_importance(units: list[VictimUnit]) -> list[VictimUnit]:
    """Most important first."""
    if all(u.importance is not None for u in units):
        out = sorted(units, key=attrgetter("importance"))  # keys cached by build_units
    else:
        out = sorted(units, key=importance_key)
    if ties.observed():
        # v1.37's MoreImportantVictim stops at the start time: units equal up to there keep the
        # input order upstream (UPSTREAM-DIFF: our last key is the first pod's UID).
        for a, b in zip(out, out[1:]):
            if importance_key(a)[:4] == importance_key(b)[:4]:
                ties.tie("victim-order", f"{a.kind} {a.namespace}/{a.name} and {b.kind} {b.namespace}/{b.name}")
    return out
