"""Workload-aware preemption's passes over the candidate units as columns (issue 18): the
importance order, the PDB classification, the reprieval loop and the verdicts, for the fast path.

A 5,000-node cluster gives a high-priority gang ~113k candidate units, almost all single pods
that no PDB selects and whose nodes receive no preemptor pod: spared without any check. Here
the units stay columns (units.Candidates) through every pass. Only the units a pass must look
at one by one become VictimUnits: those a PDB selects (classification), those reprieval must
check, the victims, and whatever the report asks for afterwards (`Verdicts` builds a spared
unit's verdict when it is read).

The object path (workload.py with units.build_units, importance.by_importance, pdb.classify and
reprieval.reprieve_in_order) stays as the reference: `analyze(..., fast=False)` runs it, and
tests/test_reprieval_equivalence.py and tests/test_candidate_columns.py hold the two equal.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Iterator, overload

import numpy as np

from ..framework import ties
from ..framework.groupcycle import Assignment
from ..framework.schedule_one import Scheduler
from ..model import PodDisruptionBudget
from ..profiles import DEFAULT, Profile
from .importance import importance_order_columns
from .pdb import Budgets
from .reprieval import FITS, ReprieveOutcome, plan_reprieval
from .result import UnitVerdict
from .units import Candidates, LabelSets, VictimUnit

_INF = float("inf")


def importance_order(c: Candidates) -> list[int]:
    """Unit indices, most important first: the order by_importance gives the same units."""
    n = len(c)
    size = np.ones(n, dtype=np.int64)
    if c.start is not None:  # from collect's per-node columns
        start = c.start.copy()
    else:
        start = np.fromiter([_INF if p.start_time is None else p.start_time for p in c.pods], np.float64, n)
    for k in c.groups:
        u = c.objs[k]
        size[k] = len(u.pods)
        start[k] = u.earliest_start
    prio = np.array(c.prio, dtype=np.int64)
    rank = np.array(c.rank, dtype=np.int64)
    out = importance_order_columns(prio, rank, size, start, _Uids(c.pods))
    if ties.observed() and n > 1:
        # As by_importance: units equal up to the start time keep the input order upstream
        # (UPSTREAM-DIFF: our last key is the first pod's UID).
        o = np.array(out, dtype=np.intp)
        same = np.ones(n - 1, dtype=bool)
        for col in (prio, rank, size, start):
            s = col[o]
            same &= s[1:] == s[:-1]
        for j in np.flatnonzero(same).tolist():
            a, b = c.unit(out[j]), c.unit(out[j + 1])
            ties.tie("victim-order", f"{a.kind} {a.namespace}/{a.name} and {b.kind} {b.namespace}/{b.name}")
    return out


class _Uids(Sequence[str]):
    """The first pod's UID of each unit, read when asked: the order reads it only for units
    tied on the four numbers (~6k of 113k at L), not worth a list of every one."""

    __slots__ = ("_pods",)

    def __init__(self, pods: list) -> None:
        self._pods = pods

    def __len__(self) -> int:
        return len(self._pods)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]  # by position only: the order never slices it
        return self._pods[i].uid


def reprieve_order(
    c: Candidates, order: list[int], pdbs: list[PodDisruptionBudget], profile: Profile = DEFAULT,
) -> tuple[list[int], int, dict[int, list[str]]]:
    """pdb.classify on the columns: (the reprieve order, PDB-violating units first and each part
    in importance order; how many units violate; unit index -> names of the PDBs it violates).
    Budgets are consumed in importance order, as classify does; a unit none of whose pods a PDB
    selects consumes nothing, so only the others are walked. Sets `c.violate`."""
    violate = [0] * len(c)
    which: dict[int, list[str]] = {}
    c.violate = violate
    if not pdbs:
        return list(order), 0, which
    budgets = Budgets(pdbs, profile)
    matches, consume = budgets.matches, budgets.consume
    objs, pods = c.objs, c.pods
    for k in order if c.labelset is None or c.label_sets is None else _selected(c.labelset, c.label_sets, order, budgets):
        u = objs[k]
        if u is None:
            # A single pod: most are selected by no PDB (one look-up per label set), and consume
            # nothing.
            pod = pods[k]
            if not matches(pod):
                continue
            count, names = consume((pod,))
        else:
            count, names = consume(u.pods)
            u.violate_count = count
        if count:
            violate[k] = count
            which[k] = names or []
    violating = [k for k in order if violate[k]]
    non_violating = [k for k in order if not violate[k]]
    return violating + non_violating, len(violating), which


def _selected(labelset: np.ndarray, sets: LabelSets, order: list[int], budgets: Budgets) -> list[int]:
    """`order` without the single-pod units that no PDB selects (they consume nothing), decided
    once per label set (collect's numbers) instead of once per unit: 30k of the 113k units at L."""
    used = np.unique(labelset[labelset >= 0])
    hit = np.zeros(int(used[-1]) + 1 if len(used) else 0, dtype=bool)
    for num in used.tolist():
        hit[num] = bool(budgets.matches(sets.pods[num]))
    o = np.array(order, dtype=np.intp)
    ls = labelset[o]
    return o[(ls < 0) | (hit[np.maximum(ls, 0)] & (ls >= 0))].tolist() if len(hit) else list(order)


def choose_victims(
    sched: Scheduler, c: Candidates, order: list[int], which: dict[int, list[str]], valid: list[Assignment],
    node_of: dict[str, int], leaked: bool = False,
) -> tuple[Verdicts, Verdicts, list[UnitVerdict]]:
    """reprieval.reprieve_in_order over `order` (unit indices) and the verdicts: (every unit in
    reprieve order, the spared ones, the victims). A unit whose nodes receive no preemptor pod
    is spared without a check when the plan allows it (no cross-node terms anywhere): that is
    decided for all single-pod units at once."""
    anti = np.array(c.anti_affinity(), dtype=bool)  # reprieval.unit_has_cross_node_terms per unit
    plan = plan_reprieval(sched, [c.unit(k) for k in np.flatnonzero(anti).tolist()], valid, True, leaked)
    if plan.trivial:
        # reprieve_in_order's test, `u.nodes.isdisjoint(touched) and not cross-node terms`.
        node = np.array(c.node, dtype=np.int64)
        trivial = (node >= 0) & ~anti
        if plan.touched:
            trivial &= ~np.isin(node, np.fromiter(plan.touched, np.int64, len(plan.touched)))
        for k in c.groups:
            trivial[k] = c.objs[k].nodes.isdisjoint(plan.touched) and not anti[k]
    else:
        trivial = np.zeros(len(c), dtype=bool)
    table = _VerdictTable(c, order, which, sched.state.nodes)
    fits = table.fits
    victims: list[UnitVerdict] = []
    for i in np.flatnonzero(~trivial[np.array(order, dtype=np.intp)]).tolist():
        u = c.unit(order[i])
        out = plan.reprieve(sched, u, valid, node_of)
        v = table.decided(i, u, out)
        if not out.fits:
            fits[i] = False
            victims.append(v)
    return Verdicts(table, None), Verdicts(table, [i for i, f in enumerate(fits) if f]), victims


def verdict(u: VictimUnit, i: int, out: ReprieveOutcome, names: list[str] | None, nodes: list) -> UnitVerdict:
    """The verdict on unit `u`, position `i` of the reprieve order, from its reprieval outcome."""
    v = UnitVerdict(u, i, out.fits, u.violate_count > 0, (names or []) if u.violate_count else [])
    if not out.fits and out.failed is not None:
        v.failed_pod = out.failed.pod
        v.failed_node = nodes[out.failed.node].name
        v.failed_status = out.status
    return v


class _VerdictTable:
    """The verdicts of one reprieve order: the checked ones as given, the others (spared without
    a check) built when read. Both views of a result (`candidates`, `reprieved`) read from one
    table, so a unit has one verdict object however it is reached."""

    __slots__ = ("c", "order", "which", "nodes", "fits", "made")

    def __init__(self, c: Candidates, order: list[int], which: dict[int, list[str]], nodes: list) -> None:
        self.c, self.order, self.which, self.nodes = c, order, which, nodes
        self.fits = [True] * len(order)
        self.made: dict[int, UnitVerdict] = {}

    def decided(self, i: int, u: VictimUnit, out: ReprieveOutcome) -> UnitVerdict:
        v = self.made[i] = verdict(u, i, out, self.which.get(self.order[i]), self.nodes)
        return v

    def get(self, i: int) -> UnitVerdict:
        v = self.made.get(i)
        if v is None:
            k = self.order[i]
            v = self.made[i] = verdict(self.c.unit(k), i, FITS, self.which.get(k), self.nodes)
        return v


class Verdicts(Sequence[UnitVerdict]):
    """A result's verdicts in reprieve order (all of them, or the positions given), built when
    read. `flags` and `on_nodes` answer the report's questions without building them all."""

    __slots__ = ("_t", "_pos")

    def __init__(self, table: _VerdictTable, positions: list[int] | None) -> None:
        self._t = table
        self._pos = positions

    def __len__(self) -> int:
        return len(self._t.order) if self._pos is None else len(self._pos)

    @overload
    def __getitem__(self, i: int) -> UnitVerdict: ...
    @overload
    def __getitem__(self, i: slice) -> list[UnitVerdict]: ...
    def __getitem__(self, i: int | slice) -> UnitVerdict | list[UnitVerdict]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = operator.index(i)
        if self._pos is None:
            if not -len(self) <= i < len(self):
                raise IndexError(i)
            return self._t.get(i % len(self))
        return self._t.get(self._pos[i])

    def __iter__(self) -> Iterator[UnitVerdict]:
        get = self._t.get
        for i in self._positions():
            yield get(i)

    def __eq__(self, other: object) -> bool:
        # Compares like the list it stands for (a list of verdicts on the object path).
        if isinstance(other, (list, Verdicts)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a list's, too

    def __add__(self, other: object) -> list[UnitVerdict]:
        if not isinstance(other, (list, Verdicts)):
            return NotImplemented
        return list(self) + list(other)

    def __radd__(self, other: object) -> list[UnitVerdict]:
        if not isinstance(other, list):
            return NotImplemented
        return other + list(self)

    def __repr__(self) -> str:
        return f"Verdicts({len(self)} unit(s))"

    def _positions(self) -> list[int] | range:
        return range(len(self._t.order)) if self._pos is None else self._pos

    def flags(self) -> tuple[list[bool], list[bool]]:
        """(spared, violates a PDB) per verdict, without building the verdicts."""
        t = self._t
        violate, order, fits = t.c.violate, t.order, t.fits
        pos = self._positions()
        return [fits[i] for i in pos], [bool(violate[order[i]]) if violate is not None else False for i in pos]

    def on_nodes(self, names: set[str]) -> list[UnitVerdict]:
        """The verdicts whose unit has a pod on one of the named nodes (by the pods' nodeName)."""
        t = self._t
        c = t.c
        on = [p.node_name in names for p in c.pods]
        for k in c.groups:
            on[k] = any(p.node_name in names for p in c.objs[k].pods)
        order = t.order
        return [t.get(i) for i in self._positions() if on[order[i]]]
