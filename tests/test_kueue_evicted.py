"""The pods that go with a Workload Kueue evicts, found as Kueue's job integrations find them
(sigs.k8s.io/kueue v0.17.0 pkg/controller/jobs/*: PodLabelSelector per kind; the plain-pod
integration's pod group label), so kube-scheduler's part runs without them whatever the job kind."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.queueing.kueue.evicted import matched_kind, owned_pods

CLUSTER = Path(__file__).resolve().parent / "fixtures" / "kueue-demo" / "cluster.yaml"
JOB = CLUSTER.parent / "job.yaml"


@dataclass(frozen=True)
class P:
    name: str
    labels: dict = field(default_factory=dict)
    namespace: str = "ns"


def _names(pods: list) -> list[str]:
    return [p.name for p in pods]


@pytest.mark.parametrize("kind, labels", [
    ("Job", {"batch.kubernetes.io/job-name": "x"}),
    ("Job", {"job-name": "x"}),
    ("JobSet", {"jobset.sigs.k8s.io/jobset-name": "x"}),
    ("TrainJob", {"jobset.sigs.k8s.io/jobset-name": "x"}),
    ("RayCluster", {"ray.io/cluster": "x"}),
    ("SparkApplication", {"sparkoperator.k8s.io/app-name": "x"}),
    ("MPIJob", {"training.kubeflow.org/job-name": "x", "training.kubeflow.org/operator-name": "mpi-operator"}),
    ("PyTorchJob", {"training.kubeflow.org/job-name": "x", "training.kubeflow.org/operator-name": "pytorchjob-controller"}),
])
def test_each_integration_selects_its_pods_by_its_label(kind: str, labels: dict) -> None:
    pods = [P("a", labels), P("b", {k: "y" for k in labels}), P("c", labels, namespace="other"), P("d")]
    assert matched_kind(kind)
    assert _names(owned_pods(pods, "ns", kind, "x")) == ["a"]


def test_kubeflow_pods_of_another_operator_are_not_the_jobs() -> None:
    """MPIJob's selector also needs operator-name mpi-operator: a PyTorchJob of the same name is another job."""
    pods = [P("a", {"training.kubeflow.org/job-name": "x", "training.kubeflow.org/operator-name": "pytorchjob-controller"})]
    assert owned_pods(pods, "ns", "MPIJob", "x") == []


def test_a_plain_pod_takes_its_group_with_it() -> None:
    g = {"kueue.x-k8s.io/pod-group-name": "g"}
    pods = [P("p0", g), P("p1", g), P("lone"), P("q", {"kueue.x-k8s.io/pod-group-name": "h"})]
    assert _names(owned_pods(pods, "ns", "Pod", "p1")) == ["p0", "p1"]
    assert _names(owned_pods(pods, "ns", "Pod", "lone")) == ["lone"]
    assert owned_pods(pods, "ns", "Pod", "gone") == []


@pytest.mark.parametrize("kind", ["RayJob", "RayService", "Deployment"])
def test_kinds_whose_pods_the_workload_does_not_name(kind: str) -> None:
    assert not matched_kind(kind)


def test_whatif_removes_a_jobsets_pods_when_kueue_evicts_its_workload(tmp_path: Path) -> None:
    """The demo cluster with team-b/train-7 run by a JobSet (its pods labelled as the JobSet
    controller labels them): Kueue evicts it and its 3 pods leave before kube-scheduler's part, as
    they did for the Job; before, the note said they stayed (only batch/v1 Jobs were matched)."""
    dump = yaml.safe_load(CLUSTER.read_text())
    for o in dump["items"]:
        md = o["metadata"]
        if o["kind"] == "Workload" and md["name"] == "train-7":
            md["ownerReferences"][0].update(apiVersion="jobset.x-k8s.io/v1alpha2", kind="JobSet")
        if o["kind"] == "Pod" and (md.get("labels") or {}).get("job-name") == "train-7":
            md["labels"] = {"jobset.sigs.k8s.io/jobset-name": "train-7"}
            md.pop("ownerReferences", None)
    f = tmp_path / "jobset-owner.yaml"
    f.write_text(yaml.safe_dump(dump))
    r = CliRunner().invoke(app, ["whatif", "-f", str(JOB), "--snapshot", str(f), "-o", "json"])
    assert r.exit_code == 0, r.output
    notes = json.loads(r.stdout)["queueing"]["notes"]
    assert notes[0].startswith("Below, kube-scheduler's part runs with the 3 pod(s) of the evicted Workloads' jobs removed"), notes
    assert not any("are not removed" in n for n in notes), notes
    assert json.loads(r.stdout)["outcome"] == "NoPreemptionNeeded"
