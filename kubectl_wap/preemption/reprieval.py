"""The reprieval loop of workload-aware preemption: podgrouppreemption.go `selectVictimsOnDomain`
(in-place Filter reprieval, PR #139980; semantics doc 3.4).

All potential victims have been removed and the preemptor's placement is fixed. Each unit, in
reprieve order, is put back; the placement is replayed (Filter with nominated pods, then assume,
for every placed preemptor pod in scheduling order, each with the cycle state it was placed with);
if every pod still fits the unit stays (spared), otherwise it is taken out again (a victim).

Two implementations, proven equal by tests/test_reprieval_equivalence.py:
- `literal`: replays every assignment for every unit, as upstream does.
- `fast`: with only node-local plugins in play, a unit can change verdicts only on the nodes its
  pods occupy, so only the assignments on those nodes are replayed (the idea of upstream's open
  two-phase reprieval PR #142152). When a cross-node plugin (inter-pod affinity, topology spread)
  is in play for any assignment or the unit carries anti-affinity, it falls back to the literal
  replay.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..framework.podgroup import Assignment
from ..framework.schedule_one import Scheduler
from ..framework.status import Status
from ..model import Pod
from .units import VictimUnit


@dataclass(slots=True)
class ReprieveOutcome:
    fits: bool
    failed: Assignment | None = None
    status: Status | None = None


def _add_back(sched: Scheduler, unit: VictimUnit, valid: list[Assignment], node_of: dict[str, int]) -> None:
    st = sched.state
    for p in unit.pods:
        idx = node_of[p.uid]
        st.add_pod(p, idx)
        for a in valid:
            if a.cycle.plugins:
                a.cycle.add_pod(st, a.pod, p, idx)  # RunPreFilterExtensionAddPod


def _take_out(sched: Scheduler, unit: VictimUnit, valid: list[Assignment]) -> None:
    st = sched.state
    for p in unit.pods:
        idx = st.remove_pod(p)
        for a in valid:
            if a.cycle.plugins:
                a.cycle.remove_pod(st, a.pod, p, idx)  # RunPreFilterExtensionRemovePod


def _replay(sched: Scheduler, assignments: list[Assignment]) -> ReprieveOutcome:
    """Filter + Reserve (assume) each assignment in order; always undone afterwards."""
    st = sched.state
    cp = st.checkpoint()
    try:
        for a in assignments:
            status = sched.filter_with_nominated(a.pod, a.cycle, a.node)
            if not status.ok:
                return ReprieveOutcome(False, a, status)
            st.add_pod(a.pod, a.node)
        return ReprieveOutcome(True)
    finally:
        st.rollback(cp)


def _needs_literal(unit: VictimUnit, valid: list[Assignment]) -> bool:
    if any(a.cycle.plugins for a in valid):
        return True
    return any(p.affinity is not None and p.affinity.pod_anti_affinity_required for p in unit.pods)


def reprieve(
    sched: Scheduler,
    unit: VictimUnit,
    valid: list[Assignment],
    node_of: dict[str, int],
    fast: bool = True,
    by_node: dict[int, list[tuple[int, Assignment]]] | None = None,
) -> ReprieveOutcome:
    """Try to put `unit` back. On success it stays in the cluster state permanently."""
    _add_back(sched, unit, valid, node_of)
    if fast and not _needs_literal(unit, valid):
        touched = {node_of[p.uid] for p in unit.pods}
        if by_node is None:
            subset = [a for a in valid if a.node in touched]
        else:
            # by_node holds (scheduling order, assignment) per node: merge to keep global order.
            subset = [a for _, a in sorted(x for n in touched for x in by_node.get(n, ()))]
        out = _replay(sched, subset)
    else:
        out = _replay(sched, valid)
    if not out.fits:
        _take_out(sched, unit, valid)
    return out


def index_by_node(valid: list[Assignment]) -> dict[int, list[tuple[int, Assignment]]]:
    out: dict[int, list[tuple[int, Assignment]]] = {}
    for i, a in enumerate(valid):
        out.setdefault(a.node, []).append((i, a))
    return out


def node_of_pods(units: list[VictimUnit], state_where: dict[str, int]) -> dict[str, int]:
    return {p.uid: state_where[p.uid] for u in units for p in u.pods}


def pods_of(units: list[VictimUnit]) -> list[Pod]:
    return [p for u in units for p in u.pods]
