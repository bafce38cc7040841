"""The preemption cost of a set of victims: v1.38.0-beta.0
pkg/scheduler/framework/preemption/util.go `CompareVictimSets`.

Used by the 1.38 profile's victim-aware node choice (preemption/victimaware.py, mirroring
DefaultPreemption.RankNodes): each set holds the surviving potential victims on one node, most
important first (`MoreImportantVictim`, preemption/importance.py). In order:

1. an empty set is cheapest (then the shorter of two sets: `len(set1) == 0 || len(set2) == 0`);
2. fewer PDB violations (the sum of each unit's violating pods, counted once over all potential
   victims: upstream's TODO #142718 says the count is static);
3. walking both sets from the most important unit, priority by priority: the lower priority is
   cheaper, then at the same priority the fewer pods; the walk ends when either set runs out;
4. fewer pods in total;
5. unit by unit: lower rank (Pod < PodGroup < CompositePodGroup), then fewer pods;
6. fewer units.
"""

from __future__ import annotations

from typing import Sequence

from .units import VictimUnit


def _cmp(a: int, b: int) -> int:
    return (a > b) - (a < b)


def compare_victim_sets(set1: Sequence[VictimUnit], set2: Sequence[VictimUnit]) -> int:
    """< 0 when set1 is cheaper to preempt, > 0 when set2 is, 0 when equal. Both sets most
    important first."""
    if not set1 or not set2:
        return _cmp(len(set1), len(set2))
    c = _cmp(sum(u.violate_count for u in set1), sum(u.violate_count for u in set2))
    if c:
        return c
    i1 = i2 = 0
    n1, n2 = len(set1), len(set2)
    while i1 < n1 and i2 < n2:
        p1, p2 = set1[i1].priority, set2[i2].priority
        c = _cmp(p1, p2)
        if c:
            return c
        k1 = 0
        while i1 < n1 and set1[i1].priority == p1:
            k1 += len(set1[i1].pods)
            i1 += 1
        k2 = 0
        while i2 < n2 and set2[i2].priority == p2:
            k2 += len(set2[i2].pods)
            i2 += 1
        c = _cmp(k1, k2)
        if c:
            return c
    c = _cmp(sum(len(u.pods) for u in set1), sum(len(u.pods) for u in set2))
    if c:
        return c
    for u1, u2 in zip(set1, set2):
        c = _cmp(u1.rank, u2.rank) or _cmp(len(u1.pods), len(u2.pods))
        if c:
            return c
    return _cmp(n1, n2)
