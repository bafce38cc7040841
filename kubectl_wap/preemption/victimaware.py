"""Victim-aware node choice inside the workload-aware preemption simulation (the 1.38 profile's
`victim_aware_placement`), as v1.38.0-beta.0 has it:
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go `RankNodes`, `Reserve`,
`Unreserve`, `computeDeltaVictimsOnNode`; framework/preemption/podgrouppreemption_state.go
`NewPodGroupPreemptionState`, `SurvivingVictimsOnNode`; algorithm.go / schedule_one.go (only the
feasible nodes of the lowest rank reach Score).

While the group is scheduled on the cluster with every potential victim removed, a node's cost
for a preemptor pod is every potential victim unit with a pod on that node that no earlier
preemptor pod of this run has condemned ("surviving"), most important first; nodes are compared
with `CompareVictimSets` (preemption/victimsets.py) and the feasible nodes of the cheapest cost go
on to the Score plugins. The node chosen condemns all of its surviving units (Reserve); a pod's
condemnations end when it is no longer placed (Unreserve: a failed gang, TAS placements tried one
after another), because only pods still in the state count.

Upstream does not check which of the node's units the pod actually needs (its TODO #142718 in
computeDeltaVictimsOnNode); the reprieval after the run keeps the units that are not needed.
"""

from __future__ import annotations

from functools import cmp_to_key

import numpy as np

from ..framework.filtering import CycleData
from ..framework.schedule_one import Scheduler
from ..model import Pod
from .units import VictimUnit
from .victimsets import compare_victim_sets

_KEY = cmp_to_key(compare_victim_sets)


class VictimAwareChoice:
    """framework.schedule_one.NodePreference for one WAP scheduling run. `order` holds the
    potential victim units; each node's list is kept most important first (importance key)."""

    def __init__(self, sched: Scheduler, order: list[VictimUnit], node_of: dict[str, int]):
        self.sched = sched
        self.by_node: dict[int, list[tuple[int, VictimUnit]]] = {}
        ranked = sorted(enumerate(order), key=lambda iu: iu[1].importance)
        for i, u in ranked:
            for n in sorted({node_of[p.uid] for p in u.pods if p.uid in node_of}):
                self.by_node.setdefault(n, []).append((i, u))
        # Preemptor pod uid -> (the pod, unit indexes it condemned).
        self.commits: dict[str, tuple[Pod, frozenset[int]]] = {}

    def _condemned(self) -> set[int]:
        has = self.sched.state.has
        out: set[int] = set()
        for pod, units in self.commits.values():
            if units and has(pod):
                out |= units
        return out

    def surviving(self, node: int, condemned: set[int]) -> list[VictimUnit]:
        """SurvivingVictimsOnNode: the node's potential victims not condemned, most important first."""
        here = self.by_node.get(node)
        if not here:
            return []
        return [u for i, u in here if i not in condemned]

    def narrow(self, pod: Pod, cycle: CycleData, feasible: np.ndarray) -> np.ndarray:
        """The feasible nodes of the lowest rank (all of them on a tie)."""
        if len(feasible) <= 1:
            return feasible
        condemned = self._condemned()
        sets = [self.surviving(n, condemned) for n in feasible.tolist()]
        if not any(sets):
            return feasible
        best = min(sets, key=_KEY)
        return feasible[np.array([compare_victim_sets(s, best) == 0 for s in sets])]

    def chose(self, pod: Pod, cycle: CycleData, node: int) -> None:
        """Reserve: the node's surviving units are condemned by this pod."""
        here = self.by_node.get(node)
        if not here:
            self.commits.pop(pod.uid, None)
            return
        condemned = self._condemned()
        self.commits[pod.uid] = (pod, frozenset(i for i, _ in here if i not in condemned))
