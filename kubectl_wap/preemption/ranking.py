"""`rank`: every unit a preemptor of priority P could take, in workload-aware preemption's
reprieve order (PrepareDomainVictims: PDB-violating units first, then the rest, each most
important first). The first rows are the last to be preempted."""

from __future__ import annotations

from dataclasses import dataclass

from ..framework.buildstate import build_state
from ..framework.groups import GroupIndex
from ..model import Snapshot
from .gates import Gates
from .importance import by_importance
from .pdb import classify
from .units import VictimUnit, build_units


@dataclass(slots=True)
class RankedUnit:
    unit: VictimUnit
    nodes: list[str]
    violating: bool
    pdbs: list[str]


def rank_units(snap: Snapshot, priority: int | None, gates: Gates) -> tuple[int, list[RankedUnit]]:
    index = GroupIndex.build(snap, composite_enabled=gates.composite_pod_group)
    state = build_state(snap)
    units = build_units(state, index, gates.generic_workload, own_priority=gates.profile.victims_keep_pod_priority)
    if priority is None:
        priority = max((u.priority for u in units), default=0) + 1
    potential = by_importance([u for u in units if u.priority < priority])
    violating, non_violating, which = classify(potential, snap.pdbs, gates.profile)
    names = [n.name for n in state.nodes]
    out = [RankedUnit(u, sorted({names[i] for i in u.nodes}), True, which.get(u.key, [])) for u in violating]
    out += [RankedUnit(u, sorted({names[i] for i in u.nodes}), False, []) for u in non_violating]
    return priority, out
