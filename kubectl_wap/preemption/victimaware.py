"""Victim-aware node choice inside the workload-aware preemption simulation (the 1.38 profile's
`victim_aware_placement`; upstream-changes.md section 1.3).

UPSTREAM-DIFF: upstream's integration tests (TestPodGroupPreemption @00a3e521: the two
"Victim-aware scoring" cases and "Partial Preemption with basic policy") assert this behaviour,
but the implementing code was not found. This is the smallest rule reproducing every assertion:
while the group is scheduled on the cluster with every potential victim removed, each preemptor
pod's feasible nodes are first narrowed to those whose *new* victims are cheapest, then the
profile's Score plugins choose among them as usual.

The new victims of node N (`needed`): the potential victim units with a pod on N that no earlier
preemptor pod of this run already needs ("committed"), found as SelectVictimsOnNode does
(default_preemption.go): put each one back on N in reprieve order (PDB-violating first, each most
important first) and keep it when the pod still passes Filter there. A committed unit stays out
everywhere, so a `disruptionMode: all` unit needed on one node frees its other nodes for later
pods ("reuse capacity freed across nodes"). Cost, compared lexicographically, as
pickOneNodeForPreemption's criteria: any new victim at all, PDB violations, highest victim
priority, sum of victim priorities, victim pods.

UPSTREAM-DIFF: only the unit's pods on N are put back (a unit's pods elsewhere matter only to
cross-node plugins, which we do not re-evaluate here).

`needed` is asked for every feasible node of every preemptor pod (at M, gang-256: ~38k times, each
putting units back and running Filter), and between two pods of one gang almost every node is
unchanged. So its answer is remembered when it can depend only on the node (see `_answer`):
the pod's node-local spec, the units of N not yet committed, and N's current pods and sums.
"""

from __future__ import annotations

import numpy as np

from ..framework.filtering import CycleData
from ..framework.schedule_one import Scheduler
from ..model import Pod
from .units import VictimUnit

_NONE: frozenset[int] = frozenset()
_OFFSET = 2**31  # pickOneNodeForPreemption adds MaxInt32+1 per victim so that negative priorities sum sensibly


class VictimAwareChoice:
    """framework.schedule_one.NodePreference for one WAP scheduling run."""

    def __init__(self, sched: Scheduler, order: list[VictimUnit], node_of: dict[str, int]):
        self.sched = sched
        self.node_of = node_of
        # Units by node, in reprieve order.
        self.by_node: dict[int, list[tuple[int, VictimUnit]]] = {}
        for i, u in enumerate(order):
            for n in sorted({node_of[p.uid] for p in u.pods if p.uid in node_of}):
                self.by_node.setdefault(n, []).append((i, u))
        self.index_of = {id(u): i for i, u in enumerate(order)}  # `order` holds the units: ids stay unique
        # Preemptor pod uid -> (the pod, unit indexes it needed). Only pods still placed in the
        # state count, so the rollbacks of the group algorithm (a failed gang, TAS placements
        # tried one after another) undo their commitments too.
        self.commits: dict[str, tuple[Pod, frozenset[int]]] = {}
        self._units_on = {n: frozenset(i for i, _ in here) for n, here in self.by_node.items()}  # unit indexes per node
        # (spec id, node) -> (pods on the node, its committed units, needed units, their cost): the
        # latest answer for that pod shape on that node (see _answer)
        self._memo: dict[tuple[int, int], tuple[tuple, frozenset[int], list[VictimUnit], tuple]] = {}
        self._spec: dict[str, int] = {}  # preemptor pod uid -> _spec_id's answer
        self._spec_ids: dict[tuple, int] = {}

    def _spec_id(self, pod: Pod, cycle: CycleData) -> int | None:
        """A small id for what of the pod a node-local Filter reads (pods with equal ones share
        answers), or None when needed() must not be memoized: a cross-node plugin with work to do
        in the cycle (its data depends on pods on other nodes; an inert cycle, e.g.
        InterPodAffinity skipped at PreFilter but kept for Score, is fine), a pod that is itself
        nominated (it never counts against itself: the answer would depend on the pod, not its
        shape), volumes or resource claims (their plugins keep cluster-wide counts and
        allocations). The priority is part of the shape: nominated pods count against pods of
        lower or equal priority only."""
        if (cycle.plugins and not cycle.inert) or not cycle.prefilter_status.ok:
            return None
        if pod.volumes or pod.uses_pvcs or pod.resource_claims or self.sched.noms.node_of(pod.uid) is not None:
            return None
        sid = self._spec.get(pod.uid)
        if sid is None:
            key = (pod.namespace, pod.priority or 0, tuple(sorted(pod.requests.items())), pod.host_ports,
                   tuple(sorted(pod.node_selector.items())), pod.affinity, pod.tolerations)
            sid = self._spec[pod.uid] = self._spec_ids.setdefault(key, len(self._spec_ids))
        return sid

    def _answer(self, pod: Pod, cycle: CycleData, node: int, committed: set[int], sid: int | None) -> tuple[list[VictimUnit], tuple]:
        """(needed units, their cost); remembered per (spec id, node) with what else they depend
        on: which of the node's units are already committed (the rest are candidates), the pods
        on the node (which fix its requested sums, pod count and host ports; a uid names one pod
        object for the whole run; the node object itself never changes) and the pods nominated to
        it that are not placed yet (filter_with_nominated adds them). The pods, not
        ClusterState.version: the rollback at the end of needed() is itself a change of version."""
        if sid is None:
            units = self._needed(pod, cycle, node, committed)
            return units, self._cost(units)
        st, noms = self.sched.state, self.sched.nominated
        here = tuple(st.node_pods[node])
        if node in noms:  # the pods nominated here that count: those not placed anywhere yet
            here = (here, tuple(p.uid for p in noms[node] if not st.has(p)))
        mine = self._units_on.get(node)
        done = (mine & committed) if mine and committed else _NONE
        hit = self._memo.get((sid, node))
        if hit is not None and hit[0] == here and hit[1] == done:
            return hit[2], hit[3]
        units = self._needed(pod, cycle, node, committed)
        cost = self._cost(units)
        self._memo[(sid, node)] = (here, done, units, cost)
        return units, cost

    def _committed(self) -> set[int]:
        has = self.sched.state.has
        out: set[int] = set()
        for pod, units in self.commits.values():
            if units and has(pod):  # most pods commit nothing: skip the lookup
                out |= units
        return out

    def needed(self, pod: Pod, cycle: CycleData, node: int, committed: set[int]) -> list[VictimUnit]:
        return self._answer(pod, cycle, node, committed, self._spec_id(pod, cycle))[0]

    def _needed(self, pod: Pod, cycle: CycleData, node: int, committed: set[int]) -> list[VictimUnit]:
        state, sched = self.sched.state, self.sched
        out: list[VictimUnit] = []
        cp = state.checkpoint()
        c2 = cycle.clone() if cycle.plugins else cycle
        try:
            for i, u in self.by_node.get(node, ()):
                if i in committed:
                    continue
                back = [p for p in u.pods if self.node_of.get(p.uid) == node]
                for p in back:
                    state.add_pod(p, node)
                    if cycle.plugins:
                        c2.add_pod(state, pod, p, node)
                if sched.filter_with_nominated(pod, c2, node).ok:
                    continue  # reprieved on this node
                for p in back:
                    state.remove_pod(p)
                    if cycle.plugins:
                        c2.remove_pod(state, pod, p, node)
                out.append(u)
        finally:
            state.rollback(cp)
        return out

    def _cost(self, units: list[VictimUnit]) -> tuple[int, int, int, int, int]:
        if not units:
            return (0, 0, 0, 0, 0)
        return (
            1,
            sum(u.violate_count for u in units),
            max(u.priority for u in units),
            sum((u.priority + _OFFSET) * len(u.pods) for u in units),
            sum(len(u.pods) for u in units),
        )

    def narrow(self, pod: Pod, cycle: CycleData, feasible: np.ndarray) -> np.ndarray:
        """The feasible nodes whose new victims cost least (all of them on a tie)."""
        if len(feasible) <= 1:
            return feasible
        committed = self._committed()
        sid = self._spec_id(pod, cycle)
        answer = self._answer
        costs = [answer(pod, cycle, n, committed, sid)[1] for n in feasible.tolist()]
        best = min(costs)
        return feasible[np.array([c == best for c in costs])]

    def chose(self, pod: Pod, cycle: CycleData, node: int) -> None:
        """Record the units the pod's node needs (called before the pod is assumed there)."""
        committed = self._committed()
        units = self.needed(pod, cycle, node, committed)
        self.commits[pod.uid] = (pod, frozenset(self.index_of[id(u)] for u in units))
