"""The CI gate (issue 36): `whatif --fail-if EXPR`. The predicate language over a WhatIfReport
(report/gate.py), table-tested on small documents, and the command's contract on the demo: exit 20
with the firing reason on stderr, 0 (or the --exit-code verdict) when it does not fire, and a
malformed predicate refused in one line (exit 2) before the cluster is read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_wap.errors import UserError
from kubectl_wap.report.gate import FIELDS, fields_doc, gate_reason, parse_predicate

BIN = Path(sys.executable).parent
WAP = str(BIN / "kubectl-wap") if (BIN / "kubectl-wap").exists() else shutil.which("kubectl-wap")
JOB1 = ["whatif", "podgroup", "job-1", "-n", "ml", "--demo"]


def victim(ns: str, name: str, *, pdb: bool = False, gpus: int = 0, prio: int = 100, cls: str = "low", node: str = "n1") -> dict:
    return {"namespace": ns, "name": name, "node": node, "priority": prio, "priorityClassName": cls, "violatesPDB": pdb,
            "extendedResources": {"nvidia.com/gpu": gpus} if gpus else {}}


def report(*victims: dict, outcome: str = "Preempt", units: int | None = None) -> dict:
    return {"outcome": outcome, "victims": list(victims), "victimUnits": [{}] * (len(victims) if units is None else units),
            "placements": [{}], "unplaced": []}


NONE = report(outcome="NoPreemptionNeeded")
TWO_ML = report(victim("ml", "a", gpus=1), victim("ml", "b", gpus=2, prio=500, cls="batch"))
PROD_PDB = report(victim("prod", "web-0", pdb=True), victim("ml", "c"))


@pytest.mark.parametrize("expr,doc,want", [
    ("victims > 0", NONE, False),
    ("victims > 0", TWO_ML, True),
    ("victims >= 2", TWO_ML, True),
    ("victims == 3", TWO_ML, False),
    ("pdbViolated", TWO_ML, False),
    ("pdbViolated", PROD_PDB, True),
    ("pdbViolated == false", PROD_PDB, False),
    ("not pdbViolated", TWO_ML, True),
    ("pdbViolations >= 1", PROD_PDB, True),
    ("namespace in (prod)", TWO_ML, False),
    ("namespace in (prod)", PROD_PDB, True),
    ("namespace in (prod, payments)", PROD_PDB, True),
    ("namespace not in (ml)", PROD_PDB, False),  # a victim is in ml
    ("namespace not in (prod)", TWO_ML, True),
    ("namespace == ml", PROD_PDB, True),  # any victim
    ("gpuPods > 1", TWO_ML, True),
    ("gpuPods > 2", TWO_ML, False),
    ("gpuPods > 0", PROD_PDB, False),
    ("maxVictimPriority >= 500", TWO_ML, True),
    ("maxVictimPriority >= 0", NONE, False),  # no victim: no highest priority, nothing compares true
    ("priorityClass in (batch)", TWO_ML, True),
    ("outcome == Preempt", TWO_ML, True),
    ("outcome != Preempt", NONE, True),
    ("outcome in (Unschedulable, NotEligible)", NONE, False),
    ("victims > 0 and pdbViolated", TWO_ML, False),
    ("victims > 0 or pdbViolated", TWO_ML, True),
    ("gpuPods > 4 or (namespace in (prod) and pdbViolated)", PROD_PDB, True),
    ("not (victims > 0)", NONE, True),
    ("victims > 0 and not namespace in (prod)", TWO_ML, True),
    ("victims > 0 and not namespace in (ml)", PROD_PDB, False),  # a victim is in ml
    ("victimUnits > 1", report(victim("ml", "a"), victim("ml", "b"), units=1), False),  # one unit of two pods
])
def test_predicate(expr: str, doc: dict, want: bool):
    got = parse_predicate(expr).holds(doc)
    assert got is want, f"{expr!r}: got {got}, want {want}"


def test_and_binds_tighter_than_or():
    # a or (b and c): true through a alone
    assert parse_predicate("victims > 0 or pdbViolated and gpuPods > 9").holds(TWO_ML)
    assert not parse_predicate("(victims > 0 or pdbViolated) and gpuPods > 9").holds(TWO_ML)


@pytest.mark.parametrize("expr,says", [
    ("victms > 0", "unknown field 'victms'"),
    ("victims >", "ends too early"),
    ("victims > many", "victims is a number, not 'many'"),
    ("victims", "victims is a number: compare it"),
    ("namespace > 3", "compare it with ==, != or in"),
    ("namespace", "write namespace in (a, b)"),
    ("pdbViolated > 1", "pdbViolated is true or false"),
    ("victims in (1)", "'in' applies to text fields"),
    ("namespace in prod", "takes a list in parentheses"),
    ("namespace in (prod", "not closed"),
    ("(victims > 0", "not closed"),
    ("victims > 0 pdbViolated", "unexpected 'pdbViolated'"),
    ("victims > 0 && pdbViolated", "unexpected '&'"),
    ("", "it is empty"),
    ("namespace in ()", "a value is missing"),
    ("victims > )", "a value is missing"),
])
def test_malformed_predicates_are_refused_naming_the_fields(expr: str, says: str):
    with pytest.raises(UserError) as e:
        parse_predicate(expr)
    msg = str(e.value)
    assert says in msg, msg
    assert "\n" not in msg
    assert all(name in msg for name in FIELDS), msg


def test_the_closest_field_is_named_first():
    with pytest.raises(UserError) as e:
        parse_predicate("gpuPod > 1")
    assert str(e.value).split("fields: ")[1].startswith("gpuPods"), str(e.value)


def test_reason_names_what_fired_and_the_facts_read():
    e = parse_predicate("namespace in (prod) or gpuPods > 4")
    assert gate_reason(e, TWO_ML) is None
    assert gate_reason(e, PROD_PDB) == "namespace in (prod) (namespace=ml,prod; gpuPods=0)"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([WAP, *args], capture_output=True, text=True, timeout=120, env=dict(os.environ, NO_COLOR="1"))


def test_the_gate_fires_on_the_demo_with_exit_20_and_the_reason_on_stderr():
    r = run(*JOB1, "-o", "json", "--fail-if", "victims > 0 and gpuPods > 4")
    assert r.returncode == 20, r.stderr
    doc = json.loads(r.stdout)  # the report is still printed, as without the gate
    assert len(doc["victims"]) == 10
    assert r.stderr.strip() == "fail-if: victims > 0 and gpuPods > 4 (victims=10; gpuPods=10)"


def test_the_gate_holds_its_fire_and_the_verdict_code_still_applies():
    r = run(*JOB1, "-o", "name", "--fail-if", "namespace in (prod) or pdbViolated")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    r = run(*JOB1, "-o", "name", "--fail-if", "pdbViolated", "--exit-code")
    assert r.returncode == 10, r.stderr  # Preempt


def test_the_gate_reads_the_whole_analysis_not_the_filtered_view():
    # -l / --victim-namespace filter what is shown; a gate on "victims in ml" must still see them
    r = run(*JOB1, "-o", "json", "--victim-namespace", "research", "--fail-if", "namespace in (ml)")
    assert r.returncode == 20, r.stderr


def test_a_malformed_gate_is_one_line_exit_2_before_reading_anything():
    r = run("whatif", "podgroup", "job-1", "-n", "ml", "--snapshot", "/nonexistent.json", "--fail-if", "victims >> 0")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: invalid --fail-if"), r.stderr
    assert "nonexistent" not in r.stderr  # refused before the snapshot is opened


def test_the_docs_document_every_field():
    section = (Path(__file__).resolve().parent.parent / "docs" / "ci-gate.md").read_text()
    for name, typ, meaning in fields_doc():
        assert f"| `{name}` | {typ} | {meaning} |" in section, name


def test_a_misspelt_namespace_or_class_in_the_gate_is_warned_with_the_closest():
    """`namespace in (reseach)` never fires: a CI gate with a typo passed silently (exit 0, nothing
    said). A warning names the closest namespace or PriorityClass, with -o name too (the formats
    other than table, json and yaml dropped every warning); a name with no near miss (prod, a
    namespace still to come) is not warned about."""
    r = subprocess.run([WAP, *JOB1, "-o", "name", "--fail-if", "namespace in (reseach, prod) or priorityClass == low-priorty"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("pod/"), r.stderr
    assert r.stderr.splitlines() == [
        "Warning: --fail-if: no object of the cluster is in namespace \"reseach\" (did you mean 'research'?)",
        "Warning: --fail-if: no PriorityClass \"low-priorty\" in the cluster (did you mean 'low-priority' or 'high-priority'?)"]
    clean = subprocess.run([WAP, *JOB1, "-o", "name", "--fail-if", "namespace in (research, prod)"], capture_output=True, text=True, timeout=120)
    assert clean.returncode == 20 and clean.stderr.startswith("fail-if: namespace in ("), clean.stderr
    assert "Warning" not in clean.stderr
