"""A small integer linear model and a lexicographic minimizer over two solver backends.

HiGHS (`highspy`, MIT) is the default: a 7.8 MB wheel with numpy as its only dependency, against
OR-Tools' ~84 MB (plus protobuf, absl, pandas); on our victim-selection models both solve the demo
in milliseconds (measured numbers in the commit message and benchmarks/README.md). CP-SAT is kept
as an alternative backend (`backend="cpsat"`) when `ortools` happens to be installed.

Objectives are minimized one after another; each optimum found is then fixed as a constraint
(`obj <= value`) for the next stage. A stage stopped by the time limit keeps its incumbent and
reports the solver's bound, and the later stages are skipped.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
import math
from dataclasses import dataclass, field
from typing import Iterator

from ..errors import UserError


@dataclass(slots=True)
class LinearModel:
    ub: list[int] = field(default_factory=list)  # integer variables in [0, ub]
    names: list[str] = field(default_factory=list)
    rows: list[tuple[list[int], list[int], int | None, int | None]] = field(default_factory=list)  # idx, coef, lo, hi

    def var(self, ub: int, name: str = "") -> int:
        self.ub.append(ub)
        self.names.append(name)
        return len(self.ub) - 1

    def row(self, idx: list[int], coef: list[int], lo: int | None = None, hi: int | None = None) -> None:
        """lo <= sum(coef * x[idx]) <= hi over integer x. The row is divided by the gcd of its
        coefficients (hi rounded down, lo up: the same integer points), so memory rows, which
        carry bytes (multiples of 2**20 and more), reach the floating-point solver as small numbers."""
        g = math.gcd(*coef) if coef else 0
        if g > 1:
            coef = [c // g for c in coef]
            lo = None if lo is None else -((-lo) // g)
            hi = None if hi is None else hi // g
        self.rows.append((idx, coef, lo, hi))


@dataclass(slots=True)
class Stage:
    name: str
    value: int | None  # the incumbent's objective value (None: no solution)
    bound: float | None  # best proven lower bound
    optimal: bool
    seconds: float

    @property
    def gap(self) -> float | None:
        if self.value is None or self.bound is None or self.optimal:
            return 0.0 if self.optimal else None
        return (self.value - self.bound) / max(abs(self.value), 1)


@dataclass(slots=True)
class Solution:
    values: list[int] | None
    stages: list[Stage]
    backend: str

    @property
    def optimal(self) -> bool:
        return self.values is not None and all(s.optimal for s in self.stages)

    @property
    def infeasible(self) -> bool:
        return self.values is None and bool(self.stages) and self.stages[0].optimal


@contextmanager
def _quiet_stdout() -> Iterator[None]:
    """HiGHS prints its banner from C++ when an instance is made, before any option can be set:
    keep it off our stdout (the report may be JSON)."""
    try:
        fd = os.dup(1)
    except OSError:  # no stdout to protect
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            try:
                yield
            finally:
                os.dup2(fd, 1)
    finally:
        os.close(fd)


def solve_lexicographic(m: LinearModel, objectives: list[tuple[str, list[int], list[int]]], time_limit: float,
                        backend: str = "highs") -> Solution:
    if backend == "cpsat":
        return _cpsat(m, objectives, time_limit)
    return _highs(m, objectives, time_limit)


def _highs(m: LinearModel, objectives, time_limit: float) -> Solution:
    import numpy as np

    try:
        import highspy
    except ImportError:  # a dependency, but an install may lack the wheel for its platform
        raise UserError("--optimal needs the highspy package (HiGHS): pip install highspy") from None

    with _quiet_stdout():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    n = len(m.ub)
    inf = highspy.kHighsInf
    h.addCols(n, np.zeros(n), np.zeros(n), np.array(m.ub, dtype=float), 0, np.array([], dtype=np.int32),
              np.array([], dtype=np.int32), np.array([], dtype=float))
    h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.array([highspy.HighsVarType.kInteger] * n))
    for idx, coef, lo, hi in m.rows:
        h.addRow(-inf if lo is None else lo, inf if hi is None else hi, len(idx), np.array(idx, dtype=np.int32), np.array(coef, dtype=float))
    stages: list[Stage] = []
    values: list[int] | None = None
    deadline = time.monotonic() + time_limit
    for name, idx, coef in objectives:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        cost = np.zeros(n)
        cost[np.array(idx, dtype=np.int64)] = coef
        h.changeColsCost(n, np.arange(n, dtype=np.int32), cost)
        h.setOptionValue("time_limit", left)
        t0 = time.monotonic()
        h.run()
        st = h.getModelStatus()
        if values is not None and st in (highspy.HighsModelStatus.kInfeasible, highspy.HighsModelStatus.kUnboundedOrInfeasible,
                                         highspy.HighsModelStatus.kSolveError):
            # Impossible: the previous stage's solution meets every row, the new one included.
            # HiGHS has answered so (kSolveError with presolve, after addRow; found by
            # tests/test_diagnose_optimal.py's property, highspy 1.x): solve this stage again
            # without presolve, from that solution.
            h.setOptionValue("presolve", "off")
            h.setSolution(_start(h, values))
            h.run()
            h.setOptionValue("presolve", "choose")
            st = h.getModelStatus()
        info = h.getInfo()
        dt = time.monotonic() - t0
        has = info.primal_solution_status == 2  # kSolutionStatusFeasible
        if not has:
            # A first stage without a solution: proven infeasible or not. A later one keeps the
            # previous stage's solution (feasible, not proven lexicographically optimal).
            stages.append(Stage(name, None, None, values is None and st == highspy.HighsModelStatus.kInfeasible, dt))
            return Solution(values, stages, "highs")
        x = [int(round(v)) for v in h.getSolution().col_value]
        val = int(round(sum(c * x[i] for i, c in zip(idx, coef))))
        optimal = st == highspy.HighsModelStatus.kOptimal
        stages.append(Stage(name, val, info.mip_dual_bound, optimal, dt))
        values = x
        if not optimal:
            break
        h.addRow(-inf, val, len(idx), np.array(idx, dtype=np.int32), np.array(coef, dtype=float))
    return Solution(values, stages, "highs")


def _start(h, values: list[int]):
    """A HighsSolution holding `values` as the column values (a MIP start)."""
    import highspy

    sol = highspy.HighsSolution()
    sol.col_value = [float(v) for v in values]
    sol.value_valid = True
    return sol


def _cpsat(m: LinearModel, objectives, time_limit: float) -> Solution:
    try:
        from ortools.sat.python import cp_model
    except ImportError:
        raise UserError("the cpsat backend needs the ortools package: pip install ortools") from None

    model = cp_model.CpModel()
    xs = [model.NewIntVar(0, ub, m.names[i] or f"x{i}") for i, ub in enumerate(m.ub)]
    for idx, coef, lo, hi in m.rows:
        e = sum(c * xs[i] for i, c in zip(idx, coef))
        if lo is not None:
            model.Add(e >= lo)
        if hi is not None:
            model.Add(e <= hi)
    stages: list[Stage] = []
    values: list[int] | None = None
    deadline = time.monotonic() + time_limit
    for name, idx, coef in objectives:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        e = sum(c * xs[i] for i, c in zip(idx, coef))
        model.Minimize(e)
        if values is not None:
            model.ClearHints()
            for v, x in zip(xs, values):
                model.AddHint(v, x)
        s = cp_model.CpSolver()
        s.parameters.max_time_in_seconds = left
        s.parameters.num_workers = 1  # the machine is shared; deterministic too
        t0 = time.monotonic()
        st = s.Solve(model)
        dt = time.monotonic() - t0
        if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            stages.append(Stage(name, None, None, st == cp_model.INFEASIBLE, dt))
            return Solution(None, stages, "cpsat")
        values = [s.Value(x) for x in xs]
        val = int(s.ObjectiveValue())
        stages.append(Stage(name, val, s.BestObjectiveBound(), st == cp_model.OPTIMAL, dt))
        if st != cp_model.OPTIMAL:
            break
        model.Add(e <= val)
    return Solution(values, stages, "cpsat")
