"""`pending` on a Kueue cluster (issue 35): a Workload Kueue has not admitted (its job suspended, so
no pod and, before, no row at all) gets a row saying that Kueue holds it and why, in one line
from the model's records (queueing/kueue/answer.py pending_stages, one scheduling cycle);
the pods kube-scheduler holds keep their rows, marked stage kube-scheduler."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path

import jsonschema
import yaml
from typer.testing import CliRunner

from kubectl_wap.cli import app

CLUSTER = Path(__file__).parent / "fixtures" / "kueue-demo" / "cluster.yaml"


def _workload(ns: str, name: str, gpus: int, count: int, created: str, priority: int = 0, active: bool = True) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": name, "namespace": ns, "uid": f"wl-{name}", "creationTimestamp": created,
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": f"job-{name}", "controller": True}]},
            "spec": {"queueName": "lq", "priority": priority, "active": active, "podSets": [{"name": "main", "count": count, "template": {"spec": {
                "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": str(gpus)}}}]}}}]}}


def _cluster(tmp_path: Path, extra: list[dict]) -> Path:
    doc = yaml.safe_load(CLUSTER.read_text())
    doc["items"] = copy.deepcopy(doc["items"]) + extra
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _pending(path: Path) -> dict:
    res = CliRunner().invoke(app, ["pending", "-A", "--snapshot", str(path), "-o", "json", "--no-scale-up"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    schema = json.loads(resources.files("kubectl_wap").joinpath("report/pending-schema.json").read_text())
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    assert not errors, errors[:3]
    return doc


def test_workloads_kueue_holds_get_a_row_naming_the_stage(tmp_path: Path) -> None:
    extra = [
        # team-a's 8-GPU job: Kueue admits it once it has evicted team-b's borrowing train-7
        _workload("team-a", "train", 8, 1, "2026-12-01T11:00:00Z", priority=1000),
        # team-b's 3 x 8 GPUs: more than the cohort's 16 on the one flavor
        _workload("team-b", "huge", 8, 3, "2026-12-01T11:00:00Z"),
        # behind huge in team-b-cq (one head per ClusterQueue per cycle)
        _workload("team-b", "later", 1, 1, "2026-12-01T12:00:00Z"),
        _workload("team-b", "parked", 1, 1, "2026-12-01T12:00:00Z", active=False),
    ]
    rows = {r["name"]: r for r in _pending(_cluster(tmp_path, extra))["items"]}
    assert {n: (r["kind"], r["stage"], r["pendingPods"]) for n, r in rows.items()} == {
        "train": ("Workload", "kueue", 1), "huge": ("Workload", "kueue", 3), "later": ("Workload", "kueue", 1),
        "parked": ("Workload", "kueue", 1)}
    assert rows["train"]["reason"] == ("Kueue: admitted to ClusterQueue team-a-cq on flavor h100 once it has evicted Workloads "
                                      "team-b/train-7 (priority 100, reclamation within the cohort)")
    assert rows["huge"]["reason"].startswith("Kueue: not admitted: ClusterQueue team-b-cq: couldn't assign flavors to pod set main")
    assert "insufficient quota for nvidia.com/gpu in flavor h100" in rows["huge"]["reason"]
    assert rows["later"]["reason"].startswith("Kueue: queued in ClusterQueue team-b-cq behind 1 Workload(s) (team-b/huge)")
    assert rows["parked"]["reason"] == "Kueue: not admitted: deactivated (spec.active is false): Kueue does not queue it"
    assert rows["huge"]["queueing"]["outcome"] == "not-admitted" and rows["train"]["queueing"]["evictions"][0]["workload"] == "team-b/train-7"
    # train first: priority 1000
    assert _pending(_cluster(tmp_path, extra))["items"][0]["name"] == "train"


def test_pods_rows_say_kube_scheduler_and_a_namespace_scopes_workloads(tmp_path: Path) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "namespace": "team-a", "uid": "p-big"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"nvidia.com/gpu": "16"}}}]},
           "status": {"phase": "Pending"}}
    path = _cluster(tmp_path, [pod, _workload("team-b", "huge", 8, 3, "2026-12-01T11:00:00Z")])
    rows = _pending(path)["items"]
    assert sorted((r["kind"], r["name"], r["stage"]) for r in rows) == [("Pod", "big", "kube-scheduler"), ("Workload", "huge", "kueue")]
    res = CliRunner().invoke(app, ["pending", "-n", "team-a", "--snapshot", str(path), "-o", "json", "--no-scale-up"])
    assert [r["name"] for r in json.loads(res.stdout)["items"]] == ["big"]


def test_text_table_names_kueue(tmp_path: Path) -> None:
    path = _cluster(tmp_path, [_workload("team-b", "huge", 8, 3, "2026-12-01T11:00:00Z")])
    res = CliRunner().invoke(app, ["pending", "-A", "--snapshot", str(path), "--no-scale-up"])
    assert res.exit_code == 0 and "Workload" in res.stdout and "Kueue: not admitted: ClusterQueue team-b-cq" in " ".join(res.stdout.split())
    assert "ignored objects" not in res.output  # Kueue's kinds are read now


def test_malformed_kueue_item_kind_is_not_a_python_error(tmp_path: Path) -> None:
    bad = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": ["Workload"], "metadata": {"name": "x", "namespace": "team-b"}}
    path = _cluster(tmp_path, [bad])
    res = CliRunner().invoke(app, ["pending", "-A", "--snapshot", str(path), "-o", "json", "--no-scale-up"])
    assert res.exit_code in (0, 2) and "Traceback" not in res.output and "TypeError" not in res.output, res.output
