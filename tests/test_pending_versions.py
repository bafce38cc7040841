"""`kubectl wap pending --compare-versions 1.37,1.38` (issue 29 item 6), and `pending` under the
1.38 rules (it used to analyze with the 1.37 rules whatever --scheduler-version said)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubectl_wap.cli import app

SCEN = Path(__file__).parent / "scenarios"
REPORT = Path(__file__).resolve().parent.parent / "kubectl_wap" / "report"


def _snapshot(tmp_path: Path, fixture: str) -> str:
    doc = yaml.safe_load((SCEN / f"{fixture}.yaml").read_text())
    p = tmp_path / f"{fixture}.json"
    p.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": doc["cluster"]}))
    return str(p)


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize("version,victims", [
    # the fixture's own per-version answers (tests/scenarios/wap-victim-aware-leftover-capacity.yaml, both measured by the oracles)
    ("1.37", ["default/v-large", "default/v-pg1-1", "default/v-pg1-2"]),
    ("1.38", ["default/v-large"]),
])
def test_pending_follows_the_version_s_rules(tmp_path: Path, version: str, victims: list[str]) -> None:
    snap = _snapshot(tmp_path, "wap-victim-aware-leftover-capacity")
    r = _run("pending", "-A", "--snapshot", snap, "--scheduler-version", version, "--no-scale-up", "-o", "json")
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.stdout)["items"]
    assert row["preemption"]["victims"] == victims
    w = json.loads(_run("whatif", "podgroup", "pg-preemptor", "-n", "default", "--snapshot", snap, "--scheduler-version", version,
                        "-o", "json").stdout)
    assert sorted(f"{v['namespace']}/{v['name']}" for v in w["victims"]) == victims


def test_compare_versions_lists_what_changes(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    snap = _snapshot(tmp_path, "wap-victim-aware-leftover-capacity")
    r = _run("pending", "-A", "--snapshot", snap, "--compare-versions", "1.37,1.38", "-o", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, json.loads((REPORT / "pending-versions-schema.json").read_text()))
    assert [v["schedulerVersionBuild"] for v in doc["versions"]] == ["v1.37.2", "v1.38.0-beta.0"]
    assert doc["compared"] == doc["changed"] == 1
    (item,) = doc["items"]
    assert item["name"] == "pg-preemptor" and item["changed"] == ["victims"]
    assert item["victimsRemoved"] == ["default/v-pg1-1", "default/v-pg1-2"] and item["victimsAdded"] == []
    table = _run("pending", "-A", "--snapshot", snap, "--compare-versions", "1.37,1.38")
    # the cell holds counts, the names follow the table (a gang's victims in a cell were unreadable at 80 columns)
    row = next(ln for ln in table.stdout.splitlines() if "pg-preemptor" in ln and "preempts" in ln)
    assert row.rstrip().endswith("-2 spared") and "v-pg1-1" not in row
    assert "  default/pg-preemptor: spared: default/v-pg1-1, default/v-pg1-2" in table.stdout.splitlines()
    assert "1 of 1 pending object(s) get another answer under Kubernetes 1.38 rules" in table.stdout
    # the other way round: the same change seen from 1.38
    back = json.loads(_run("pending", "-A", "--snapshot", snap, "--compare-versions", "1.38,1.37", "-o", "json").stdout)
    assert back["items"][0]["victimsAdded"] == ["default/v-pg1-1", "default/v-pg1-2"]


def test_compare_versions_with_nothing_changing_says_so(tmp_path: Path) -> None:
    # one plain pod preempting one pod: the same under both versions' rules
    snap = _snapshot(tmp_path, "pod-basic-preemption")
    r = _run("pending", "-A", "--snapshot", snap, "--compare-versions", "1.37,1.38", "--feature-gates", "GenericWorkload=false")
    assert r.exit_code == 0, r.output
    assert "No pending object's answer changes between Kubernetes 1.37 and 1.38 rules (1 compared" in r.output


@pytest.mark.parametrize("args,message", [
    (["--compare-versions", "1.37"], "wants two versions"),
    (["--compare-versions", "1.38,v1.38"], "are the same rules"),
    (["--compare-versions", "1.37,1.40"], "unknown --compare-versions version '1.40'"),
    (["--compare-versions", "1.37,1.38", "--scheduler-version", "1.38"], "drop --scheduler-version"),
    (["--compare-versions", "1.37,1.38", "--feature-gates", "PodGroupPreemptionPolicy=true"], "does not exist in Kubernetes 1.38"),
])
def test_compare_versions_refuses_bad_input_in_one_line(args: list[str], message: str) -> None:
    r = _run("pending", "-A", "--demo", *args)
    assert r.exit_code == 2, r.output
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and message in err[0], r.stderr


@pytest.mark.parametrize("version,evicted", [("1.37", 3), ("1.38", 1)])
def test_simulate_follows_the_version_s_rules(tmp_path: Path, version: str, evicted: int) -> None:
    # simulate took --scheduler-version but played the 1.37 rules; the fixture's answers per version
    snap = _snapshot(tmp_path, "wap-victim-aware-leftover-capacity")
    r = _run("simulate", "--snapshot", snap, "--scheduler-version", version, "-o", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["schedulerVersion"] == version and doc["summary"]["evictedPods"] == evicted
