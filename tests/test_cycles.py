"""Pod-group cycles played forward (issue 13/14): pods that fit bind first, preemption runs in the
cycle that fails; `--cycles 1` is the first cycle only. Cluster: upstream's integration test
"Binding first before preemption for basic policy" (podgrouppreemption_test.go, TestPodGroupPreemption),
whose asserted event order is Bind:high-1, PodGroupPostFilter:pg1, Bind:high-2 and victim low-1."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kubectl_wap.cli import app


def _pod(name: str, prio: int, node: str | None = None, group: str | None = None) -> dict:
    spec: dict = {"priority": prio, "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1"}}}]}
    if node:
        spec["nodeName"] = node
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default", "name": name, "uid": name},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


def _cluster(tmp_path) -> str:
    items = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node1"},
         "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "32"}}},
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"namespace": "default", "name": "pg1"},
         "spec": {"schedulingPolicy": {"basic": {}}, "priority": 100}},
        _pod("pg-pod-1", 100, "node1", "pg1"), _pod("pg-pod-2", 100, "node1", "pg1"), _pod("low-1", 10, "node1"),
        _pod("high-1", 100, group="pg1"), _pod("high-2", 100, group="pg1"),
    ]
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(p)


def _run(*args: str) -> dict:
    r = CliRunner().invoke(app, list(args))
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_binding_first_then_preemption(tmp_path):
    doc = _run("whatif", "podgroup", "pg1", "--snapshot", _cluster(tmp_path), "-o", "json")
    assert doc["outcome"] == "Preempt"
    assert [v["name"] for v in doc["victims"]] == ["low-1"]
    assert [(c["n"], c["action"]) for c in doc["cycles"]] == [(1, "bind"), (2, "post-filter")]
    assert [p["pod"]["name"] for p in doc["cycles"][0]["placed"]] == ["high-1"]
    assert [p["pod"]["name"] for p in doc["cycles"][1]["nominated"]] == ["high-2"]
    assert "bind without preemption" in doc["message"]


def test_cycles_1_is_the_first_cycle_only(tmp_path):
    doc = _run("whatif", "podgroup", "pg1", "--snapshot", _cluster(tmp_path), "-o", "json", "--cycles", "1")
    assert doc["outcome"] == "NoPreemptionNeeded" and doc["victims"] == []
    assert [p["pod"]["name"] for p in doc["placements"]] == ["high-1"]
    assert [u["pod"]["name"] for u in doc["unplaced"]] == ["high-2"]


def test_cycles_must_be_positive(tmp_path):
    r = CliRunner().invoke(app, ["whatif", "podgroup", "pg1", "--snapshot", _cluster(tmp_path), "--cycles", "0"])
    assert r.exit_code == 2 and "--cycles must be at least 1" in r.output
