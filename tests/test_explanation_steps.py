"""The reprieve steps of the explanation: long runs of spared units are one step, everything else
one step per unit, numbered by reprieve order."""

from __future__ import annotations

from kubectl_wap.preemption.result import UnitVerdict
from kubectl_wap.preemption.units import VictimUnit
from kubectl_wap.preemption.workload import _PDB_RUN, _RUN, _reprieve_steps


def _v(i: int, spared: bool, pdb: bool = False) -> UnitVerdict:
    u = VictimUnit("Pod", "ns", f"p{i}", [], 0, 1, "")
    return UnitVerdict(u, i, spared, pdb, ["ns/budget"] if pdb else [])


def test_runs_of_spared_units_are_one_step():
    vs = [_v(0, False)] + [_v(i, True) for i in range(1, 1 + _RUN)] + [_v(1 + _RUN, False)]
    steps = _reprieve_steps(vs)
    assert len(steps) == 3
    assert steps[0].startswith("Reprieve 1: Pod ns/p0 -> needed")
    assert steps[1].startswith(f"Reprieve 2-{1 + _RUN}: {_RUN} units, Pod ns/p1 ... Pod ns/p{_RUN} -> spared")
    assert steps[2].startswith(f"Reprieve {2 + _RUN}: ")


def test_short_runs_and_pdb_protected_units_are_listed():
    short = [_v(i, True) for i in range(_RUN - 1)]
    assert [s.split(":")[0] for s in _reprieve_steps(short)] == [f"Reprieve {i + 1}" for i in range(_RUN - 1)]
    pdb = [_v(i, True, pdb=True) for i in range(_PDB_RUN - 1)] + [_v(_PDB_RUN, True)]
    steps = _reprieve_steps(pdb)
    assert len(steps) == _PDB_RUN  # each protected unit names its PDB; the lone unprotected one too
    assert "violates PDB ns/budget" in steps[0]


def test_long_pdb_runs_are_summarized():
    vs = [_v(i, True, pdb=True) for i in range(_PDB_RUN)] + [_v(i, True) for i in range(_PDB_RUN, _PDB_RUN + _RUN)]
    steps = _reprieve_steps(vs)
    assert len(steps) == 2
    assert "each would violate a PodDisruptionBudget if preempted" in steps[0]
    assert steps[1].startswith(f"Reprieve {_PDB_RUN + 1}-{_PDB_RUN + _RUN}: ")
