"""Kueue's JobSet integration (jobset.x-k8s.io/v1alpha2; sigs.k8s.io/kueue v0.17.0
pkg/controller/jobs/jobset/jobset_controller.go PodSets, podsCount, PodsCountPerReplica, and
jobframework.ExtractPriority): one podset per replicatedJob of replicas x min(parallelism,
completions) pods; Kueue's limits-as-missing-requests (workload.UseLimitsAsMissingRequestsInPod);
other kinds sent to a Kueue queue refused in one line rather than answered without Kueue."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.queueing.kueue.jobs import job_priority, workload_for_job
from kubectl_wap.queueing.kueue.objects import KueueNotModelled, objects_from_items
from kubectl_wap.snapshot.io.files import load_items

REPO = Path(__file__).resolve().parent.parent
CLUSTER = REPO / "tests" / "fixtures" / "kueue-demo" / "cluster.yaml"


def _rj(name: str, replicas: int | None, parallelism: int | None, completions: int | None, limits: dict,
        pc: str | None = None, annotations: dict | None = None) -> dict:
    jspec: dict = {"template": {"spec": {"restartPolicy": "Never", "schedulingGroup": {"podGroupName": "js"},
                                         "containers": [{"name": "c", "image": "x", "resources": {"limits": limits}}]}}}
    if pc:
        jspec["template"]["spec"]["priorityClassName"] = pc
    if annotations:
        jspec["template"]["metadata"] = {"annotations": annotations}
    if parallelism is not None:
        jspec["parallelism"] = parallelism
    if completions is not None:
        jspec["completions"] = completions
    rj: dict = {"name": name, "template": {"spec": jspec}}
    if replicas is not None:
        rj["replicas"] = replicas
    return rj


def _jobset(*rjs: dict, labels: dict | None = None) -> dict:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "js", "namespace": "team-a", "labels": labels if labels is not None else {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {"suspend": True, "replicatedJobs": list(rjs)}}


def _objs():  # type: ignore[no-untyped-def]
    _, items = load_items(CLUSTER, whole=True)
    return objects_from_items(items)


def test_one_podset_per_replicated_job_with_replicas_times_min_parallelism_completions() -> None:
    js = _jobset(_rj("driver", None, None, None, {"cpu": "1"}),  # replicas 1, parallelism 1, completions = parallelism
                 _rj("workers", 3, 4, 2, {"nvidia.com/gpu": "1"}),  # 3 x min(4, 2)
                 _rj("evals", 2, 2, None, {"cpu": "2"}))  # completions defaults to parallelism: 2 x 2
    wl = workload_for_job(js, _objs(), priority=0, created=1.0)
    assert wl is not None and wl.name == "jobset-js" and wl.queue_name == "lq"
    assert [(ps.name, ps.count) for ps in wl.pod_sets] == [("driver", 1), ("workers", 6), ("evals", 4)]
    # limits only: Kueue requests them (UseLimitsAsMissingRequestsInPod)
    assert dict(wl.pod_sets[1].requests) == {"nvidia.com/gpu": 1}


def test_priority_from_the_first_podset_template_naming_a_class() -> None:
    js = _jobset(_rj("driver", None, None, None, {"cpu": "1"}), _rj("workers", 1, 1, 1, {"cpu": "1"}, pc="high"))
    assert job_priority(js, {}, {"high": 500}, None) == 500
    js["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "urgent"
    assert job_priority(js, {"urgent": 1000}, {"high": 500}, None) == 1000


def test_tas_annotation_on_a_template_is_refused() -> None:
    js = _jobset(_rj("w", 1, 1, 1, {"cpu": "1"}, annotations={"kueue.x-k8s.io/podset-required-topology": "rack"}))
    with pytest.raises(KueueNotModelled, match="podset w: topology-aware scheduling"):
        workload_for_job(js, _objs(), priority=0, created=1.0)


def _file(tmp_path: Path, *docs: dict) -> Path:
    p = tmp_path / "f.yaml"
    p.write_text(yaml.safe_dump_all(list(docs)))
    return p


def _pg(n: int) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "js", "namespace": "team-a"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": n}}}}


def test_whatif_jobset_on_the_kueue_cluster(tmp_path: Path) -> None:
    """2 workers x 2 pods x 2 GPUs = 8 GPUs (limits only): team-a's whole nominal quota, 4 of it lent
    to train-7, so Kueue evicts train-7 first; then kube-scheduler places all 5 pods."""
    f = _file(tmp_path, _pg(5), _jobset(_rj("driver", None, None, None, {"cpu": "1"}),
                                        _rj("workers", 2, 2, 2, {"nvidia.com/gpu": "2", "cpu": "4"})))
    r = CliRunner().invoke(app, ["whatif", "-f", str(f), "--snapshot", str(CLUSTER), "-o", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    q = doc["queueing"]
    assert q["outcome"] == "admitted-after-evictions" and q["workload"] == "team-a/jobset-js"
    assert [(p["name"], p["count"]) for p in q["podSets"]] == [("driver", 1), ("workers", 4)]
    assert [e["workload"] for e in q["evictions"]] == ["team-b/train-7"]
    assert any("whole JobSet (5 pods: driver 1, workers 4" in n for n in q["notes"])
    assert doc["outcome"] == "NoPreemptionNeeded"


def test_a_job_with_limits_only_counts_them_against_quota(tmp_path: Path) -> None:
    job = yaml.safe_load((REPO / "tests" / "fixtures" / "kueue-demo" / "job.yaml").read_text())
    res = job["spec"]["template"]["spec"]["containers"][0]["resources"]
    res["requests"] = {"cpu": "8"}  # the 8 GPUs only as a limit
    f = _file(tmp_path, job)
    r = CliRunner().invoke(app, ["whatif", "-f", str(f), "--snapshot", str(CLUSTER), "-o", "json"])
    assert r.exit_code == 0, r.output
    q = json.loads(r.stdout)["queueing"]
    assert q["outcome"] == "admitted-after-evictions" and q["podSets"][0]["flavors"]["nvidia.com/gpu"] == "h100"


def test_another_kind_sent_to_a_kueue_queue_is_refused_in_one_line(tmp_path: Path) -> None:
    docs = list(yaml.safe_load_all((REPO / "docs" / "examples" / "deployment-gang.yaml").read_text()))
    for d in docs:
        d["metadata"]["namespace"] = "team-a"
    dep = copy.deepcopy(docs[1])
    dep["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "lq"}
    f = _file(tmp_path, docs[0], dep)
    r = CliRunner().invoke(app, ["whatif", "-f", str(f), "--snapshot", str(CLUSTER)])
    assert r.exit_code == 2, r.output
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "Deployment embed: Kueue's apps/v1 Deployment integration is not modelled yet" in err[0]
    ok = CliRunner().invoke(app, ["whatif", "-f", str(f), "--snapshot", str(CLUSTER), "--no-kueue"])
    assert ok.exit_code not in (1, 2) and "Kueue:" not in ok.stdout
