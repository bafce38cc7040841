"""Every WhatIfReport the CLI prints validates against kubectl_wap/report/schema.json (JSON Schema
draft 2020-12): every outcome on the bundled demo, explain and yaml output, hypothetical groups,
and every upstream scenario in tests/scenarios."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from kubectl_wap.cli import app

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.yaml"))


@pytest.fixture(scope="module")
def validator():
    text = resources.files("kubectl_wap").joinpath("report/schema.json").read_text()
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _run(args: list[str]) -> dict:
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, f"{args}: exit {res.exit_code}\n{res.output}"
    if "yaml" in args:
        return yaml.safe_load(res.stdout)
    return json.loads(res.stdout)


def _validate(validator, doc: dict) -> None:
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


DEMO_CASES = [
    (["whatif", "podgroup", "job-1", "-n", "ml"], "Preempt"),
    (["whatif", "podgroup", "small-eval", "-n", "ml"], "NoPreemptionNeeded"),
    (["whatif", "podgroup", "giant", "-n", "research"], "Unschedulable"),
    (["whatif", "podgroup", "finetune-nightly", "-n", "ml"], "NotEligible"),
    (["whatif", "pod", "urgent-report", "-n", "batch"], "Preempt"),
    (["whatif", "compositepodgroup", "ray-tune", "-n", "research"], "NoPreemptionNeeded"),
    (["whatif", "podgroup", "ray-tune-head", "-n", "research"], "NoPreemptionNeeded"),
    (["whatif", "-f", str(Path(__file__).parent / "fixtures" / "unknown-class-podgroup.yaml"), "-n", "ml"], "Invalid"),
    (["whatif", "podgroup", "hypo", "-n", "ml", "--replicas", "4", "--requests", "cpu=1,memory=1Gi",
      "--priority-class", "high-priority", "--min-count", "4", "--disruption-mode", "all"], None),
    (["explain", "podgroup", "job-1", "-n", "ml"], "Preempt"),
    (["explain", "pod", "urgent-report", "-n", "batch"], "Preempt"),
]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("args,outcome", DEMO_CASES, ids=[" ".join(a[:3]) for a, _ in DEMO_CASES])
def test_demo_reports_validate(validator, args, outcome, fmt):
    doc = _run(args + ["--demo", "-o", fmt])
    _validate(validator, doc)
    if outcome:
        assert doc["outcome"] == outcome, doc["message"]


def test_every_outcome_covered():
    assert {o for _, o in DEMO_CASES if o} == {"NoPreemptionNeeded", "Preempt", "Unschedulable", "NotEligible", "Invalid"}


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario_reports_validate(validator, path, tmp_path):
    doc = yaml.safe_load(path.read_text())
    snap = tmp_path / "cluster.json"
    snap.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": doc["cluster"]}))
    w = doc["whatif"]
    args = ["whatif", w["kind"], w["name"], "-n", w["namespace"], "--snapshot", str(snap), "-o", "json"]
    if doc.get("featureGates"):
        args += ["--feature-gates", doc["featureGates"]]
    report = _run(args)
    _validate(validator, report)


def test_schema_rejects_broken_reports(validator):
    doc = _run(["whatif", "podgroup", "job-1", "-n", "ml", "--demo", "-o", "json"])
    assert doc["victims"], "the demo preempts for ml/job-1"
    for mutate in (
        lambda d: d.pop("outcome"),
        lambda d: d.__setitem__("outcome", "Maybe"),
        lambda d: d["preemptor"].pop("priority"),
        lambda d: d["victims"][0]["unit"].__setitem__("kind", "Deployment"),
        lambda d: d["victims"][0].__setitem__("violatesPDB", "no"),
        lambda d: d["placements"][0].pop("node"),
        lambda d: d.__setitem__("nominatedNode", 3),
    ):
        bad = json.loads(json.dumps(doc))
        mutate(bad)
        assert list(validator.iter_errors(bad)), "schema accepted a broken report"


def test_spared_entries_use_the_shared_unit_and_pod_shapes():
    """The spared list is built in one inlined loop for speed: same fields as unit_ref/_pod_ref."""
    from kubectl_wap.preemption.analyze import analyze
    from kubectl_wap.report import document
    from kubectl_wap.snapshot.io.files import load_demo

    res = analyze(load_demo(), "podgroup", "ml", "job-1")
    doc = document.to_document(res)
    assert res.reprieved and len(doc["reprieved"]) == len(res.reprieved)
    for v, d in zip(res.reprieved, doc["reprieved"]):
        assert d == {"unit": document.unit_ref(v.unit), "pods": [document._pod_ref(p, p.node_name) for p in v.unit.pods],
                     "violatesPDB": v.violates_pdb, "reason": v.reason}
