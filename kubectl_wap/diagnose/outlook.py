"""The preemption outlook of a whole cluster (issue 36, `kubectl wap metrics`): every pending pod or
group with its triage (diagnose/pending.py: would preemption help, with which victims), and every
running preemption unit with its risk: its place in the order workload-aware preemption gives
units up to a preemptor of the highest pending priority (preemption/ranking.py, the reprieve order
of PrepareDomainVictims read backwards), and which pending objects' analyses take a pod of it.
Pure: records over the model; report/metrics.py words them as Prometheus metrics."""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Snapshot
from ..preemption.gates import Gates
from ..preemption.ranking import rank_units
from .pending import HELPS, PendingRow, ScaleUp, triage


@dataclass(frozen=True, slots=True)
class UnitRisk:
    kind: str  # Pod | PodGroup | CompositePodGroup (the unit's key type)
    namespace: str
    name: str
    priority: int  # effective priority
    pods: int
    risk_rank: int | None  # 1 = given up first to a preemptor of the outlook's priority; None: not a potential victim
    violates_pdb: bool  # among the PDB-violating units for that preemptor (reprieved first, so preempted last)
    taken_by: tuple[tuple[str, str, str], ...]  # (kind, namespace, name) of pending objects whose analysis preempts it


@dataclass(slots=True)
class Outlook:
    pending: list[PendingRow]
    preemptor_priority: int  # the highest pending priority, or above every unit when nothing is pending
    units: list[UnitRisk]  # most at risk first; units that no pending priority reaches last
    warnings: list[str]
    now: float  # the time ages are measured at (a snapshot's capture time; live: now)


def outlook(snap: Snapshot, gates: Gates, now: float | None = None, scale_up: ScaleUp | None = None,
            claims: dict[tuple[str, str], list[str]] | None = None) -> Outlook:
    t = triage(snap, gates, None, None, now, scale_up, claims)
    highest = max((r.priority for r in t.rows), default=None)
    above_all, everyone = rank_units(snap, None, gates)  # every unit (a preemptor above them all)
    # A pending priority above every unit sees the same potential victims, so the same order (the
    # usual case: one ranking, not two).
    priority, ranked = (above_all, everyone) if highest is None or highest >= above_all else rank_units(snap, highest, gates)
    # rank_units lists the potential victims most protected first: the risk order is its reverse
    # (as `rank --order risk`). Upstream (v1.37.2 podgrouppreemption.go selectVictimsOnDomain)
    # takes the units of priority < the preemptor's (isPreemptionAllowed), sorts them with
    # MoreImportantVictim, splits them with FilterVictimsWithPDBViolation and reprieves the
    # violating ones first, so the last reprieved go first.
    # UPSTREAM-DIFF: upstream ranks the victims of one domain at a time; this ranks the whole
    # cluster. Two units keep their relative order in any domain holding both (MoreImportantVictim
    # is a total order), but the PDB split consumes budgets over the units it is given, so a unit
    # classified as violating here may not be within a smaller domain (and so move in the order).
    risk = {r.unit.key: (i, r.violating) for i, r in enumerate(reversed(ranked), 1)}
    takers: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for row in t.rows:
        if row.preemption == HELPS:
            for v in row.victims:
                ns, _, name = v.partition("/")
                takers.setdefault((ns, name), []).append((row.kind, row.namespace, row.name))
    units = []
    for r in everyone:
        u = r.unit
        rank, violating = risk.get(u.key, (None, False))
        by = sorted({k for p in u.pods for k in takers.get((p.namespace, p.name), ())})
        units.append(UnitRisk(u.kind, u.namespace, u.name, u.priority, len(u.pods), rank, violating, tuple(by)))
    units.sort(key=lambda x: (x.risk_rank is None, x.risk_rank or 0, x.namespace, x.name))
    return Outlook(t.rows, priority, units, list(t.warnings), t.now)
