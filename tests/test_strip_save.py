"""strip_object keeps what the simulation reads and nothing sensitive; write_snapshot round-trips."""

from __future__ import annotations

import copy
import gzip
import json
import os
import stat
from pathlib import Path
from typing import Iterator

import pytest

from kubectl_wap.snapshot.io.files import load_items
from kubectl_wap.snapshot.io.save import API_VERSION, write_snapshot
from kubectl_wap.snapshot.share.strip import strip_object

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-0", "namespace": "shop", "uid": "u1", "labels": {"app": "web"},
        "creationTimestamp": "2026-01-01T00:00:00Z", "deletionTimestamp": "2026-01-02T00:00:00Z",
        "annotations": {LAST_APPLIED: '{"env":"SECRET"}', "team": "a"},
        "managedFields": [{"manager": "kubectl", "fieldsV1": {}}],
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "s1",
                             "controller": True, "blockOwnerDeletion": True}],
        "finalizers": ["x"], "resourceVersion": "4711",
    },
    "spec": {
        "containers": [{
            "name": "app", "image": "web:1",
            "env": [{"name": "DB_PASSWORD", "value": "hunter2"}],
            "envFrom": [{"secretRef": {"name": "db"}}],
            "command": ["/bin/sh", "-c", "echo $TOKEN"], "args": ["--token=abc"],
            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
            "ports": [{"name": "http", "containerPort": 80, "hostPort": 8080, "protocol": "TCP"},
                      {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}, {"containerPort": 9091, "hostPort": 0}],
            "livenessProbe": {"httpGet": {"path": "/"}}, "readinessProbe": {}, "startupProbe": {},
            "volumeMounts": [{"name": "data", "mountPath": "/d"}],
            "securityContext": {"privileged": True}, "lifecycle": {"preStop": {}},
        }],
        "initContainers": [
            {"name": "sidecar", "image": "proxy:1", "restartPolicy": "Always", "env": [{"name": "K", "value": "v"}],
             "resources": {"requests": {"cpu": "100m"}}},
        ],
        "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0", "readOnly": True}},
            {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"storageClassName": "fast"}}}},
            {"name": "creds", "secret": {"secretName": "db"}},
            {"name": "cfg", "configMap": {"name": "c"}},
        ],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-tmpl"}],
        "overhead": {"cpu": "10m"}, "resources": {"requests": {"cpu": "1"}},
        "nodeName": "n1", "nodeSelector": {"zone": "a"},
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}},
        "tolerations": [{"key": "gpu", "operator": "Exists"}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
        "priority": 100, "priorityClassName": "high", "preemptionPolicy": "Never", "schedulerName": "default-scheduler",
        "schedulingGroup": {"podGroupName": "pg-1"}, "schedulingGates": [{"name": "wait"}],
        "serviceAccountName": "web", "imagePullSecrets": [{"name": "regcred"}], "hostname": "web-0",
    },
    "status": {
        "phase": "Running", "startTime": "2026-01-01T00:00:05Z", "nominatedNodeName": "n2", "podIP": "10.0.0.1",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                       {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                        "message": "preempted by x", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
        "containerStatuses": [{"name": "app", "ready": True, "restartCount": 3, "imageID": "sha",
                               "allocatedResources": {"cpu": "500m"}}],
    },
}

NODE = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "n1", "uid": "nu", "labels": {"zone": "a"}, "annotations": {"x": "y"}, "managedFields": [{}]},
    "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}], "unschedulable": True,
             "podCIDR": "10.0.0.0/24", "providerID": "aws:///i-123"},
    "status": {
        "allocatable": {"cpu": "8", "memory": "32Gi"}, "capacity": {"cpu": "8", "memory": "32Gi"},
        "images": [{"names": ["web:1", "web@sha256:abc"], "sizeBytes": 1000}],
        "nodeInfo": {"kubeletVersion": "v1.37.1", "machineID": "m", "bootID": "b"},
        "addresses": [{"type": "InternalIP", "address": "10.1.1.1"}],
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}


def test_pod_keeps_only_scheduling_fields() -> None:
    original = copy.deepcopy(POD)
    out = strip_object(POD)
    assert POD == original  # input untouched
    meta = out["metadata"]
    assert "managedFields" not in meta and "annotations" not in meta and "finalizers" not in meta
    assert "resourceVersion" not in meta  # nothing reads it
    # simulate recreates a victim as its controller would: the controller's kind and name, no uid (test_owners.py)
    assert meta["ownerReferences"] == [{"kind": "StatefulSet", "name": "web", "controller": True}]
    assert meta["deletionTimestamp"] == "2026-01-02T00:00:00Z" and meta["labels"] == {"app": "web"}
    spec = out["spec"]
    assert spec["containers"] == [{
        "name": "app", "image": "web:1",
        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},  # limits take no part in scheduling
        "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],  # NodePorts reads host ports only
    }]
    assert spec["initContainers"] == [{"name": "sidecar", "image": "proxy:1", "restartPolicy": "Always",
                                       "resources": {"requests": {"cpu": "100m"}}}]
    assert spec["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
        {"name": "scratch", "ephemeral": {}},
    ]
    assert spec["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "gpu-tmpl"}]
    for key in ("overhead", "resources", "nodeName", "nodeSelector", "affinity", "tolerations",
                "topologySpreadConstraints", "priority", "priorityClassName", "preemptionPolicy", "schedulerName",
                "schedulingGroup", "schedulingGates"):
        assert spec[key] == POD["spec"][key], key
    for key in ("serviceAccountName", "imagePullSecrets", "hostname"):
        assert key not in spec
    assert out["status"] == {
        "phase": "Running", "startTime": "2026-01-01T00:00:05Z", "nominatedNodeName": "n2",
        # time and message kept for why-preempted (issue 17); the message only for the scheduler's own reason
        "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                        "lastTransitionTime": "2026-01-01T00:00:00Z", "message": "preempted by x"}],
        "containerStatuses": [{"name": "app", "allocatedResources": {"cpu": "500m"}}],
    }
    text = json.dumps(out)
    for secret in ("hunter2", "SECRET", "--token", "TOKEN", "regcred", "secretRef", "privileged", "mountPath"):
        assert secret not in text, secret


def test_pod_without_host_ports_or_disruption_target_drops_both() -> None:
    pod = copy.deepcopy(POD)
    pod["spec"]["containers"][0]["ports"] = [{"name": "http", "containerPort": 80, "protocol": "TCP"}]
    pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]
    out = strip_object(pod)
    assert "ports" not in out["spec"]["containers"][0]
    assert "conditions" not in out["status"]
    bad = copy.deepcopy(POD)
    bad["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": ""}]  # malformed: kept, so the load still refuses it
    assert strip_object(bad)["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "hostPort": ""}]


def test_node_keeps_capacity_taints_images() -> None:
    out = strip_object(NODE)
    assert out == {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "n1", "uid": "nu", "labels": {"zone": "a"}},
        "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}], "unschedulable": True},
        "status": {
            "allocatable": {"cpu": "8", "memory": "32Gi"}, "capacity": {"cpu": "8", "memory": "32Gi"},
            "images": [{"names": ["web:1", "web@sha256:abc"], "sizeBytes": 1000}],
            "nodeInfo": {"kubeletVersion": "v1.37.1"},
        },
    }


def test_other_kinds() -> None:
    pc = strip_object({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                       "metadata": {"name": "high", "annotations": {LAST_APPLIED: "{}"}},
                       "value": 1000, "globalDefault": False, "preemptionPolicy": "Never", "description": "d"})
    assert pc == {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                  "value": 1000, "globalDefault": False, "preemptionPolicy": "Never"}
    pdb = strip_object({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                        "metadata": {"name": "p", "namespace": "a", "managedFields": [{}]},
                        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}},
                        "status": {"disruptionsAllowed": 0, "disruptedPods": {"x-1": "2026-01-01T00:00:00Z"},
                                   "currentHealthy": 2, "conditions": [{}]}})
    assert pdb["status"] == {"disruptionsAllowed": 0, "disruptedPods": {"x-1": "2026-01-01T00:00:00Z"}}
    assert pdb["spec"]["selector"] == {"matchLabels": {"app": "x"}} and "managedFields" not in pdb["metadata"]
    pg = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
          "metadata": {"name": "g", "namespace": "a", "annotations": {"a": "b"}},
          "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}, "priorityClassName": "high"},
          "status": {"conditions": [{"type": "PodGroupScheduled", "status": "True"}]}}
    out = strip_object(pg)
    # the allow-list (issue 19): the spec fields the scheduler reads; no status (nothing reads it)
    assert out["spec"] == pg["spec"] and "status" not in out and "annotations" not in out["metadata"]
    out = strip_object(dict(pg, spec=dict(pg["spec"], futureField="x", schedulingPolicy={"gang": {"minCount": 4, "new": "y"}})))
    assert out["spec"] == pg["spec"]
    cspec = dict(pg["spec"], schedulingPolicy={"gang": {"minGroupCount": 2}})
    cpg = strip_object({**pg, "kind": "CompositePodGroup", "apiVersion": "scheduling.k8s.io/v1alpha3", "spec": cspec})
    assert cpg["spec"] == cspec
    ns = strip_object({"apiVersion": "v1", "kind": "Namespace",
                       "metadata": {"name": "a", "labels": {"t": "1"}, "annotations": {"x": "y"}},
                       "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
    assert ns == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a", "labels": {"t": "1"}},
                  "status": {"phase": "Active"}}


def test_unknown_kind_keeps_metadata_only_and_secrets_are_refused() -> None:
    out = strip_object({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"x": 1}})
    assert out == {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}
    with pytest.raises(ValueError, match="Secret"):
        strip_object({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "djE="}})


# -- save -----------------------------------------------------------------------------------------

HEADER = {
    "formatVersion": 1, "capturedAt": "2026-01-01T00:00:00Z",
    "server": {"url": "https://k8s:6443", "version": "v1.37.1"},
    "listed": ["nodes", "pods"], "notServed": [], "forbidden": [], "resourceVersions": {"pods": "12"},
    "counts": {"nodes": 1, "pods": 1}, "warnings": ["w ü"],
}
ITEMS = [strip_object(NODE), strip_object(POD)]


def _read(path: Path) -> dict:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


@pytest.mark.parametrize("name", ["snap.json", "snap.json.gz"])
def test_round_trip(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    write_snapshot(str(path), HEADER, iter(ITEMS))  # a generator: items are streamed
    assert (path.read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")
    doc = _read(path)
    assert doc["apiVersion"] == API_VERSION and doc["kind"] == "Snapshot"
    assert doc["header"] == {**HEADER, "formatVersion": 3}
    # formatVersion 2 on disk: the pod's spec lives in a PodSpecTemplate, the pod keeps nodeName
    node, template, pod = doc["items"]
    assert node == ITEMS[0]
    assert template["kind"] == "PodSpecTemplate" and template["id"] == 0
    assert template["spec"] == {k: v for k, v in ITEMS[1]["spec"].items() if k != "nodeName"}
    assert pod["spec"] == {"nodeName": "n1"} and pod["specTemplate"] == 0
    # ... and the reader gives back exactly the items that were written
    assert load_items(path)[1] == ITEMS
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no temp file left behind


def test_compact_and_one_item_per_line(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    write_snapshot(str(path), HEADER, ITEMS)
    text = path.read_text(encoding="utf-8")
    assert ", " not in text.split('"items":[')[0].replace("w ü", "")  # compact separators
    assert text.count("\n") == len(ITEMS) + 1  # + the pod's PodSpecTemplate
    assert "w ü" in text


def test_empty_items(tmp_path: Path) -> None:
    path = tmp_path / "e.json.gz"
    write_snapshot(str(path), HEADER, [])
    assert _read(path)["items"] == []


def test_stdout(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write_snapshot("-", HEADER, ITEMS)
    path = tmp_path / "out.json"
    path.write_text(capsys.readouterr().out)
    assert load_items(path)[1] == ITEMS


def test_failed_write_keeps_previous_file(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    write_snapshot(str(path), HEADER, ITEMS)
    before = path.read_bytes()

    def broken() -> Iterator[dict]:
        yield ITEMS[0]
        raise RuntimeError("cluster went away")

    with pytest.raises(RuntimeError):
        write_snapshot(str(path), HEADER, broken())
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["snap.json"]


def test_new_file_is_private_whatever_the_umask(tmp_path: Path) -> None:
    # A snapshot holds cluster data: created 0600 (docs/security.md), not 0644 by umask.
    old = os.umask(0o022)
    try:
        path = tmp_path / "m.json"
        write_snapshot(str(path), HEADER, ITEMS)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_missing_directory_is_a_one_line_user_error(tmp_path: Path) -> None:
    from kubectl_wap.errors import UserError

    with pytest.raises(UserError, match=r"s.json: cannot write: directory .*/no does not exist"):
        write_snapshot(str(tmp_path / "no" / "s.json"), HEADER, ITEMS)
