"""preemption/victimsets.py `compare_victim_sets` against upstream's own table: v1.38.0-beta.0
pkg/scheduler/framework/preemption/util_test.go `TestCompareVictimSets` (every case, both
directions, as upstream checks them), plus antisymmetry over generated sets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_wap.preemption.importance import importance_key
from kubectl_wap.preemption.units import POD_RANK, PODGROUP_RANK, VictimUnit
from kubectl_wap.preemption.victimsets import compare_victim_sets
from kubectl_wap.model import Pod


def _victim(name: str, priority: int, rank: int, pods: int, start: float, pdb: int) -> VictimUnit:
    members = [Pod(name=f"{name}-{i}", namespace="ns", uid=f"{name}-{i}", priority=priority) for i in range(pods)]
    u = VictimUnit("Pod" if rank == POD_RANK else "PodGroup", "ns", name, members, priority, rank, "", violate_count=pdb)
    u.importance = importance_key(priority, rank, pods, start, members[0].uid)
    return u


# makeVictim(name, priority, keyType, podCount, startOffset, pdbViolations); start offsets in minutes
very_low_pod = _victim("very-low-pod", 1, POD_RANK, 1, -10, 0)
very_low_pg3 = _victim("very-low-pg-3", 1, PODGROUP_RANK, 3, -10, 0)
low_pod = _victim("low-pod", 10, POD_RANK, 1, -10, 0)
low_pdb_pod = _victim("low-pod-pdb", 10, POD_RANK, 1, -10, 1)
mid_low_pod = _victim("mid-low-pod", 9, POD_RANK, 1, -10, 0)
mid_high_pod = _victim("mid-high-pod", 19, POD_RANK, 1, -10, 0)
high_pod = _victim("high-pod", 20, POD_RANK, 1, -10, 0)
high_pg2 = _victim("high-pg-2", 20, PODGROUP_RANK, 2, -10, 0)
pg1 = _victim("pg-1", 10, PODGROUP_RANK, 1, -10, 0)
pg2 = _victim("pg-2", 10, PODGROUP_RANK, 2, -10, 0)
pg3 = _victim("pg-3", 10, PODGROUP_RANK, 3, -10, 0)
pg4 = _victim("pg-4", 10, PODGROUP_RANK, 4, -10, 0)
young_low_pod = _victim("young-low-pod", 10, POD_RANK, 1, -1, 0)

TABLE = [
    ("empty set strictly preferred over non-empty set", [], [low_pod], -1),
    ("fewer PDB violations strictly preferred", [high_pod], [low_pdb_pod], -1),
    ("lower priority victim preferred over higher priority victim", [low_pod], [high_pod], -1),
    ("priorities across the set compared before total pod count", [high_pod, very_low_pg3], [high_pod, mid_high_pod], -1),
    ("fewer evicted pods at highest priority preferred even with higher secondary priority",
     [low_pod, mid_low_pod], [pg3, very_low_pod], -1),
    ("fewer evicted pods at highest priority preferred over multi-pod group at same priority",
     [high_pod, mid_high_pod], [high_pg2, very_low_pod], -1),
    ("fewer total evicted pods preferred when priorities match", [pg2], [low_pod, low_pod, low_pod], -1),
    ("one 4-pod PodGroup preferred over three 3-pod PodGroups of same priority", [pg4], [pg3, pg3, pg3], -1),
    ("standalone pod preferred over PodGroup of same priority and total pod count", [low_pod], [pg1], -1),
    ("smaller PodGroup preferred over larger PodGroup of same priority", [pg2], [pg4], -1),
    ("fewer victim units preferred when structural importance ties", [low_pod], [low_pod, young_low_pod], -1),
    ("equal cost when structural importance and counts tie", [young_low_pod], [low_pod], 0),
]


@pytest.mark.parametrize("name,set1,set2,want", TABLE, ids=[t[0] for t in TABLE])
def test_upstream_table(name, set1, set2, want):
    assert compare_victim_sets(set1, set2) == want
    assert compare_victim_sets(set2, set1) == -want


_units = st.builds(_victim, st.sampled_from("abcdef"), st.integers(0, 3), st.sampled_from([POD_RANK, PODGROUP_RANK]),
                   st.integers(1, 3), st.integers(-5, 0), st.integers(0, 1))
_sets = st.lists(_units, max_size=5).map(lambda us: sorted(us, key=lambda u: u.importance))


@settings(max_examples=300, deadline=None, database=None)
@given(_sets, _sets)
def test_antisymmetric(a, b):
    assert compare_victim_sets(a, b) == -compare_victim_sets(b, a)
    assert compare_victim_sets(a, a) == 0
