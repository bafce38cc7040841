"""`whatif -f` with a workload manifest (issue 30 item 3, in part): a batch/v1 Job, Deployment,
ReplicaSet or StatefulSet stands for the pods its controller would create now (Job:
min(parallelism, completions); the others: replicas), from its pod template."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.errors import UserError
from kubectl_wap.snapshot.decode.hypothetical import from_manifest

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "job-gang.yaml"


def _docs() -> list[dict]:
    return [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d]


def test_the_example_job_is_a_16_pod_gang() -> None:
    notes: list[str] = []
    objs, kind, ns, name = from_manifest(copy.deepcopy(_docs()), None, None, notes)
    pods = [o for o in objs if o["kind"] == "Pod"]
    assert (kind, ns, name) == ("podgroup", "ml", "train-llm") and len(pods) == 16
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {"train-llm"}
    assert pods[0]["metadata"]["labels"] == {"app": "train-llm"} and pods[0]["status"] == {"phase": "Pending"}
    assert "16 pod(s) from its pod template (min(parallelism, completions))" in notes[0]


def test_the_example_on_the_demo_preempts_and_says_how_the_pods_were_read() -> None:
    r = CliRunner().invoke(app, ["whatif", "-f", str(EXAMPLE), "--demo", "-o", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["preemptor"]["pods"] == 16 and doc["outcome"] == "Preempt"
    # limits only in the template: the requests come from them (SetDefaults_Pod), so GPUs are asked for
    assert any(w.startswith("-f: Job ml/train-llm: 16 pod(s)") for w in doc["warnings"])


@pytest.mark.parametrize("spec,want", [
    ({"parallelism": 4, "completions": 2}, 2),
    ({"parallelism": 3}, 3),
    ({}, 1),
])
def test_job_counts(spec: dict, want: int) -> None:
    pg, job = _docs()
    job["spec"] = {**{k: v for k, v in job["spec"].items() if k not in ("parallelism", "completions")}, **spec}
    pg["spec"]["schedulingPolicy"] = {"basic": {}}
    objs, *_ = from_manifest([pg, job], None, None)
    assert len([o for o in objs if o["kind"] == "Pod"]) == want


def test_statefulset_replicas_and_replicas_flag() -> None:
    pg, job = _docs()
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "ml"},
           "spec": {"replicas": 3, "template": job["spec"]["template"]}}
    sts["spec"]["template"]["spec"]["schedulingGroup"] = {"podGroupName": "train-llm"}
    objs, *_ = from_manifest([pg, sts], None, None)
    assert [o["metadata"]["name"] for o in objs if o["kind"] == "Pod"] == ["db-0", "db-1", "db-2"]
    objs, *_ = from_manifest([copy.deepcopy(pg), copy.deepcopy(sts)], 5, None)
    assert len([o for o in objs if o["kind"] == "Pod"]) == 5


def test_a_single_pod_job_without_a_group_is_that_pod() -> None:
    _, job = _docs()
    job["spec"]["parallelism"] = 1
    del job["spec"]["template"]["spec"]["schedulingGroup"]
    objs, kind, ns, name = from_manifest([job], None, None)
    assert (kind, ns, name) == ("pod", "ml", "train-llm-0")


@pytest.mark.parametrize("edit,message", [
    (lambda pg, job: [job], "name PodGroup train-llm: put that PodGroup in the -f file"),
    (lambda pg, job: [pg, _no_group(job)], "pod template does not name it"),
    (lambda pg, job: [_no_group(job)], "creates 16 pods with no PodGroup"),
    (lambda pg, job: [pg, job, copy.deepcopy(job)], "holds 2 workloads"),
    (lambda pg, job: [pg, {**job, "spec": {"parallelism": 2}}], "spec.template.spec (the pod template) is required"),
    (lambda pg, job: [pg, {**job, "spec": {**job["spec"], "parallelism": -1}}], "spec.parallelism must be a non-negative integer"),
])
def test_workload_mistakes_are_one_clear_error(edit, message: str) -> None:
    pg, job = _docs()
    with pytest.raises(UserError, match=re.escape(message)):
        from_manifest(edit(pg, job), None, None)


def _no_group(job: dict) -> dict:
    job = copy.deepcopy(job)
    del job["spec"]["template"]["spec"]["schedulingGroup"]
    return job
