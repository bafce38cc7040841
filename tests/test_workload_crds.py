"""`whatif -f` with the workload CRDs ML platforms submit (issue 30 item 3): each read as its
controller creates pods (kubectl_wap/snapshot/decode/workloads.py cites the upstream source of every
name, default and count); the PodGroups in the file define the gang (workload_groups.py)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from builders import make_cpg, make_pod, make_podgroup
from kubectl_wap.cli import app
from kubectl_wap.errors import UserError
from kubectl_wap.snapshot.decode.hypothetical import from_manifest

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"
GPU = {"nvidia.com/gpu": "1"}


def _tmpl(group: str | None = "g", **limits: str) -> dict[str, Any]:
    """A PodTemplateSpec (metadata + spec) from the pod builder."""
    b = make_pod("x", "ml").limits_only(**(limits or {"cpu": "1"}))
    if group:
        b = b.group(group)
    return {"metadata": {"labels": {"app": "t"}}, "spec": b.obj()["spec"]}


def _pg(name: str = "g", parent: str | None = None) -> dict[str, Any]:
    return make_podgroup(name, "ml").gang(1).parent(parent).obj()


def _obj(api: str, kind: str, spec: dict[str, Any], name: str = "w") -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "ml"}, "spec": spec}


def _jobset(*rjs: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return _obj("jobset.x-k8s.io/v1alpha2", "JobSet", {"replicatedJobs": list(rjs), **spec}, "js")


def _rj(name: str, replicas: int | None = None, group: str | None = "g", **job: Any) -> dict[str, Any]:
    rj: dict[str, Any] = {"name": name, "template": {"spec": {**job, "template": _tmpl(group)}}}
    if replicas is not None:
        rj["replicas"] = replicas
    return rj


def _lws(replicas: int | None = None, size: int | None = None, leader: bool = True, **spec: Any) -> dict[str, Any]:
    lwt: dict[str, Any] = {"workerTemplate": _tmpl()}
    if size is not None:
        lwt["size"] = size
    if leader:
        lwt["leaderTemplate"] = _tmpl(cpu="2")
    s: dict[str, Any] = {"leaderWorkerTemplate": lwt, **spec}
    if replicas is not None:
        s["replicas"] = replicas
    return _obj("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", s, "lws")


def _kubeflow(kind: str, **types: int | None) -> dict[str, Any]:
    key = {"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs", "MPIJob": "mpiReplicaSpecs"}[kind]
    api = "kubeflow.org/v2beta1" if kind == "MPIJob" else "kubeflow.org/v1"
    specs = {t: ({"template": _tmpl()} if n is None else {"replicas": n, "template": _tmpl()}) for t, n in types.items()}
    return _obj(api, kind, {key: specs}, "job")


def _group(name: str, **g: Any) -> dict[str, Any]:
    return {"groupName": name, "template": _tmpl(**GPU), **g}


def _ray(*groups: dict[str, Any], kind: str = "RayCluster", **spec: Any) -> dict[str, Any]:
    cluster = {"headGroupSpec": {"template": _tmpl(cpu="4")}, "workerGroupSpecs": list(groups), **spec}
    return _obj("ray.io/v1", kind, cluster if kind == "RayCluster" else {"rayClusterSpec": cluster}, "ray")


def _pods(items: list[dict[str, Any]], replicas: int | None = None, notes: list[str] | None = None) -> list[dict[str, Any]]:
    objs, *_ = from_manifest(items, replicas, None, notes)
    return [o for o in objs if o["kind"] == "Pod"]


def _names(items: list[dict[str, Any]], replicas: int | None = None) -> list[str]:
    return [p["metadata"]["name"] for p in _pods(items, replicas)]


# ---- counts, names, defaults ----------------------------------------------------------------------

def test_jobset_jobs_times_pods_named_by_job_and_index() -> None:
    js = _jobset(_rj("driver"), _rj("workers", replicas=2, parallelism=3, completions=2))
    assert _names([_pg(), js]) == ["js-driver-0-0", "js-workers-0-0", "js-workers-0-1", "js-workers-1-0", "js-workers-1-1"]


def test_jobset_in_order_and_depends_on_create_only_the_first_now() -> None:
    notes: list[str] = []
    pods = _pods([_pg(), _jobset(_rj("a"), _rj("b"), startupPolicy={"startupPolicyOrder": "InOrder"})], notes=notes)
    assert [p["metadata"]["name"] for p in pods] == ["js-a-0-0"]
    assert "replicatedJob b: none now (startupPolicy InOrder: created once replicatedJob a's pods are ready)" in notes[0]
    dep = _rj("b")
    dep["dependsOn"] = [{"name": "a", "status": "Complete"}]
    assert _names([_pg(), _jobset(_rj("a"), dep)]) == ["js-a-0-0"]


def test_lws_leaders_and_workers_statefulset_names() -> None:
    pods = _pods([_pg(), _lws(replicas=2, size=3)])
    assert [p["metadata"]["name"] for p in pods] == ["lws-0", "lws-1", "lws-0-1", "lws-0-2", "lws-1-1", "lws-1-2"]
    # leaders from leaderTemplate (cpu 2), workers from workerTemplate (cpu 1)
    assert [p["spec"]["containers"][0]["resources"]["limits"]["cpu"] for p in pods] == ["2", "2", "1", "1", "1", "1"]


def test_lws_defaults_one_group_of_one_and_leader_from_the_worker_template() -> None:
    pods = _pods([_pg(), _lws(leader=False)])
    assert [p["metadata"]["name"] for p in pods] == ["lws-0"]
    assert pods[0]["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "1"


def test_lws_leader_ready_holds_the_workers() -> None:
    assert _names([_pg(), _lws(replicas=2, size=4, startupPolicy="LeaderReady")]) == ["lws-0", "lws-1"]


@pytest.mark.parametrize("kind,types,want", [
    ("PyTorchJob", {"Master": None, "worker": 2}, ["job-master-0", "job-worker-0", "job-worker-1"]),
    ("TFJob", {"Worker": 2, "PS": 1, "Chief": None}, ["job-chief-0", "job-ps-0", "job-worker-0", "job-worker-1"]),
    ("MPIJob", {"Launcher": None, "Worker": 3}, ["job-launcher-0", "job-worker-0", "job-worker-1", "job-worker-2"]),
    ("MPIJob", {"Launcher": None, "Worker": None}, ["job-launcher-0"]),  # mpi-operator: Worker replicas default 0
])
def test_kubeflow_replica_types(kind: str, types: dict, want: list[str]) -> None:
    assert _names([_pg(), _kubeflow(kind, **types)]) == want


def test_mpijob_wait_for_workers_ready_holds_the_launcher() -> None:
    job = _kubeflow("MPIJob", Launcher=1, Worker=2)
    job["spec"]["launcherCreationPolicy"] = "WaitForWorkersReady"
    assert _names([_pg(), job]) == ["job-worker-0", "job-worker-1"]


@pytest.mark.parametrize("group,want", [
    ({"replicas": 3}, 3),
    ({}, 0),  # CRD default replicas 0
    ({"replicas": 6, "maxReplicas": 4}, 4),
    ({"replicas": 1, "minReplicas": 2}, 2),
    ({"minReplicas": 2}, 2),
    ({"replicas": 3, "minReplicas": 5, "maxReplicas": 4}, 4),  # min > max: max
    ({"replicas": 2, "numOfHosts": 2}, 4),
    ({"replicas": 2, "suspend": True}, 0),
])
def test_raycluster_worker_replicas_clamped_times_hosts(group: dict, want: int) -> None:
    names = _names([_pg(), _ray(_group("GPU", **group))])
    assert names == ["ray-head-0"] + [f"ray-gpu-worker-{i}" for i in range(want)]


def test_raycluster_autoscaler_joins_the_head_pod() -> None:
    pods = _pods([_pg(), _ray(enableInTreeAutoscaling=True)])
    assert [c["name"] for c in pods[0]["spec"]["containers"]][-1] == "autoscaler"
    assert pods[0]["spec"]["containers"][-1]["resources"]["requests"] == {"cpu": "500m", "memory": "512Mi"}


def test_rayjob_is_its_cluster_and_says_the_submitter_comes_later() -> None:
    notes: list[str] = []
    pods = _pods([_pg(), _ray(_group("gpu", replicas=2), kind="RayJob")], notes=notes)
    assert [p["metadata"]["name"] for p in pods] == ["ray-head-0", "ray-gpu-worker-0", "ray-gpu-worker-1"]
    assert "submitter Job is created once the cluster is ready and is not part of this question" in notes[0]


def test_pods_are_pending_unbound_with_the_template_labels_and_group() -> None:
    pods = _pods([_pg(), _kubeflow("PyTorchJob", Worker=2)])
    assert all(p["status"] == {"phase": "Pending"} and p["metadata"]["labels"] == {"app": "t"}
               and p["spec"]["schedulingGroup"] == {"podGroupName": "g"} and p["metadata"]["namespace"] == "ml" for p in pods)
    assert pods[0]["metadata"]["uid"] == "hypothetical-ml-job-worker-0"


def test_suspended_workload_is_read_as_resumed_and_says_so() -> None:
    notes: list[str] = []
    _pods([_pg(), _jobset(_rj("a"), suspend=True)], notes=notes)
    assert "spec.suspend is true: its pods are created once it is resumed" in notes[0]


def test_replicas_overrides_a_single_template() -> None:
    assert _names([_pg(), _kubeflow("PyTorchJob", Worker=2)], replicas=3) == ["job-worker-0", "job-worker-1", "job-worker-2"]
    assert _names([_pg(), _jobset(_rj("w", parallelism=4))], replicas=2) == ["js-w-0-0", "js-w-0-1"]
    assert _names([_pg(), _lws(replicas=1, size=1)], replicas=2) == ["lws-0", "lws-1"]


def test_a_multi_template_workload_spans_a_composite_tree() -> None:
    ray = _ray(_group("gpu", replicas=2))
    ray["spec"]["headGroupSpec"]["template"]["spec"]["schedulingGroup"] = {"podGroupName": "head"}
    ray["spec"]["workerGroupSpecs"][0]["template"]["spec"]["schedulingGroup"] = {"podGroupName": "workers"}
    root = make_cpg("root", "ml").gang(2).obj()
    objs, kind, ns, name = from_manifest([root, _pg("head", "root"), _pg("workers", "root"), ray], None, None)
    assert (kind, ns, name) == ("compositepodgroup", "ml", "root")
    assert {p["metadata"]["name"]: p["spec"]["schedulingGroup"]["podGroupName"] for p in objs if p["kind"] == "Pod"} == {
        "ray-head-0": "head", "ray-gpu-worker-0": "workers", "ray-gpu-worker-1": "workers"}


# ---- refusals -------------------------------------------------------------------------------------

def _no_group(o: dict[str, Any], *path: Any) -> dict[str, Any]:
    o = copy.deepcopy(o)
    t = o
    for k in path:
        t = t[k]
    del t["spec"]["schedulingGroup"]
    return o


def _mpi_waiting() -> dict[str, Any]:
    job = _kubeflow("MPIJob", Launcher=1, Worker=1)
    job["spec"]["launcherCreationPolicy"] = "WaitForWorkersReady"
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["schedulingGroup"] = {"podGroupName": "later"}
    return job


def _affinity_on_controller_label() -> dict[str, Any]:
    ray = _ray(_group("gpu", replicas=1))
    ray["spec"]["workerGroupSpecs"][0]["template"]["spec"]["affinity"] = {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"ray.io/node-type": "worker"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    return ray


@pytest.mark.parametrize("items,replicas,message", [
    ([_pg(), _kubeflow("PyTorchJob", Master=1, Worker=2)], 4,
     "--replicas: PyTorchJob job has 2 pod templates (Master, Worker): which count would it change?"),
    ([_pg(), _jobset(_rj("w", replicas=2))], 4, "--replicas: JobSet js's replicatedJob w count is replicas 2 x"),
    ([_pg(), _lws(size=2)], 2, "--replicas: LeaderWorkerSet lws has 2 pod templates"),
    ([_pg(), _ray()], 2, "--replicas: RayCluster ray's head count is one head pod"),
    # the PodGroup in the file is not the one a template names (which template names which)
    ([_pg("other"), _kubeflow("PyTorchJob", Master=1, Worker=1)], None,
     "the -f file holds PodGroup(s) other, but in PyTorchJob job Master names PodGroup g"),
    ([_pg(), _no_group(_ray(_group("gpu", replicas=1)), "spec", "headGroupSpec", "template")], None,
     "head names no PodGroup (spec.headGroupSpec.template.spec.schedulingGroup.podGroupName)"),
    # a PodGroup of the file no pod names
    ([make_cpg("root", "ml").gang(2).obj(), _pg("g", "root"), _pg("idle", "root"), _kubeflow("TFJob", Worker=2)], None,
     "PodGroup idle in the -f file has no pods: Worker names PodGroup g in TFJob job"),
    ([_pg("g"), _pg("later"), _mpi_waiting()], None, "Launcher names it but its pods come later"),
    # pods naming a PodGroup that is not in the file
    ([_kubeflow("PyTorchJob", Master=1, Worker=1)], None, "name PodGroup g: put that PodGroup in the -f file"),
    # several pods with no PodGroup
    ([_no_group(_no_group(_kubeflow("PyTorchJob", Master=1, Worker=1), "spec", "pytorchReplicaSpecs", "Master", "template"),
                "spec", "pytorchReplicaSpecs", "Worker", "template")], None,
     "PyTorchJob job creates 2 pods from 2 pod templates with no PodGroup"),
    # recognised by API group (+ version for MPIJob) and kind
    ([_pg(), {**_kubeflow("PyTorchJob", Worker=1), "apiVersion": "example.com/v1"}], None,
     "PyTorchJob job is example.com/v1; -f reads PyTorchJob as kubeflow.org/v1 (all it reads: Job (batch/v1)"),
    ([_pg(), {**_kubeflow("MPIJob", Launcher=1), "apiVersion": "kubeflow.org/v1"}], None,
     "kubeflow.org/v1 MPIJob is not read"),
    ([{"apiVersion": "kubeflow.org/v1", "kind": "XGBoostJob", "metadata": {"name": "x"}}], None,
     "the workloads that create pods (Job (batch/v1), Deployment (apps/v1), ReplicaSet (apps/v1), StatefulSet (apps/v1), "
     "JobSet (jobset.x-k8s.io/v1alpha2), LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), PyTorchJob (kubeflow.org/v1), "
     "TFJob (kubeflow.org/v1), MPIJob (kubeflow.org/v2beta1), RayCluster (ray.io/v1), RayJob (ray.io/v1)), and the RuntimeClasses "
     "and LimitRanges their pods are admitted with, found 'XGBoostJob'"),
    # what the controllers do that -f does not model, refused rather than answered wrongly
    ([_pg(), _jobset(_rj("a"), scheduling={"policy": {"gang": {}}})], None, "spec.scheduling makes the JobSet controller"),
    ([_pg(), _lws(scheduling={})], None, "spec.scheduling makes the LWS controller"),
    ([_pg(), {**_lws(), "metadata": {"name": "lws", "namespace": "ml",
                                      "annotations": {"leaderworkerset.sigs.k8s.io/exclusive-topology": "rack"}}}], None,
     "exclusive placement (leaderworkerset.sigs.k8s.io/exclusive-topology)"),
    ([_pg(), {**_ray(kind="RayJob"), "spec": {"clusterSelector": {"ray.io/cluster": "c"}}}], None, "spec.clusterSelector"),
    ([_pg(), {**_ray(kind="RayJob"), "spec": {**_ray(kind="RayJob")["spec"], "submissionMode": "SidecarMode"}}], None,
     "submissionMode SidecarMode"),
    ([_pg(), _kubeflow("PyTorchJob", Chief=1)], None, "spec.pytorchReplicaSpecs.Chief is not a replica type its operator knows"),
    ([_pg(), _kubeflow("MPIJob", Launcher=2)], None, "Launcher.replicas must be 1"),
    ([_pg(), _lws(size=0)], None, "spec.leaderWorkerTemplate.size must be at least 1"),
    ([_pg(), _jobset()], None, "spec.replicatedJobs must be a list (of at least one entry)"),
    ([_pg(), _ray({"template": _tmpl()})], None, r"spec.workerGroupSpecs\[0\].groupName is required"),
    ([_pg(), _ray(_group("gpu", replicas=-1))], None, r"spec.workerGroupSpecs\[0\].replicas must be a non-negative integer"),
    ([_pg(), _ray(_group("gpu"), suspend=True)], None, None),  # suspended: still read (as resumed)
    ([_pg(), _affinity_on_controller_label()], None, "selects on label ray.io/node-type"),
    ([_pg(), _kubeflow("PyTorchJob", Worker=0)], None, "PyTorchJob job creates no pods now (Worker: replicas is 0): pass --replicas N"),
])
def test_refusals_are_one_clear_line(items: list, replicas: int | None, message: str | None) -> None:
    if message is None:
        from_manifest(copy.deepcopy(items), replicas, None)
        return
    with pytest.raises(UserError, match=re.escape(message) if "\\" not in message else message):
        from_manifest(copy.deepcopy(items), replicas, None)


# ---- the examples on the demo cluster -------------------------------------------------------------

# manifest -> (outcome, pods of the preemptor). Each is a real question on the demo: the gang does
# not fit in the free capacity, and lower-priority work must go.
EXAMPLE_OUTCOMES = {
    "jobset-gang.yaml": ("Preempt", 9), "lws-gang.yaml": ("Preempt", 8), "pytorchjob-gang.yaml": ("Preempt", 4),
    "tfjob-gang.yaml": ("Preempt", 7), "mpijob-gang.yaml": ("Preempt", 5), "raycluster-gang.yaml": ("Preempt", 5),
    "rayjob-gang.yaml": ("Preempt", 4), "deployment-gang.yaml": ("Preempt", 4), "statefulset-gang.yaml": ("Preempt", 2),
    "job-gang.yaml": ("Preempt", 16), "sandboxed-gang.yaml": ("Preempt", 8),
}


def test_every_workload_example_has_an_expected_outcome() -> None:
    from tests.oracle.manifest import example_manifests

    assert sorted(p.name for p in example_manifests()) == sorted(EXAMPLE_OUTCOMES)


@pytest.mark.parametrize("name", sorted(EXAMPLE_OUTCOMES))
def test_example_on_the_demo(name: str) -> None:
    r = CliRunner().invoke(app, ["whatif", "-f", str(EXAMPLES / name), "--demo", "-o", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert (doc["outcome"], doc["preemptor"]["pods"]) == EXAMPLE_OUTCOMES[name]
    kind = next(d["kind"] for d in yaml.safe_load_all((EXAMPLES / name).read_text())
                if d and "PodGroup" not in d["kind"] and d["kind"] not in ("RuntimeClass", "LimitRange"))
    assert any(w.startswith("-f: ") and f"{kind} ml/" in w for w in doc["warnings"]), doc["warnings"]
