"""The type-confusion sweep (issue 31 item 5), shared by tests/test_type_confusion.py and the
fuzz test: a small cluster whose every field, in turn, is set to a value of each JSON type, and
each command run on it in-process.

Every run must end in exit 0 (a mistyped field the loaders read as unset, as the API server's
defaulting would leave it) or exit 2 with one line that names the file and, where the input was
at fault, the object and the field. Never exit 1 (a Python error) or a traceback."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

T = "2026-01-01T00:00:00Z"

# One value of each JSON type: what a hand-edited file or a broken producer puts where another belongs.
VALUES: dict[str, Any] = {"str": "x", "int": 7, "list": ["x"], "dict": {"x": 1}, "null": None, "bool": True}

# (argv, what the command reads beyond the model). Every command that reads a snapshot file;
# `snapshot` and `snapshot --redact` strip (and hash) the raw items before anything is built,
# `pending` reads PVCs and conditions, `why-preempted` events and conditions.
COMMANDS: list[list[str]] = [
    ["whatif", "podgroup", "job", "-n", "ml"],
    ["explain", "pod", "solo", "-n", "team"],
    ["rank"],
    ["diff", "podgroup", "job", "-n", "ml", "--to", "--scheduler-version 1.38"],
    ["snapshot", "-o", "json"],
    ["snapshot", "--redact", "-o", "json", "--events"],
    ["pending", "-A"],
    ["why-preempted", "pod", "gone", "-n", "team"],
    ["simulate"],
]


def _node(name: str, zone: str) -> dict:
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": {"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": name}},
        "spec": {"taints": [{"key": "dedicated", "value": "ml", "effect": "PreferNoSchedule"}], "unschedulable": False},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/gpu": "2"},
                   "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                   "images": [{"names": ["registry.example/app:1"], "sizeBytes": 1000}],
                   "nodeInfo": {"kubeletVersion": "v1.37.1"},
                   "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _pod(name: str, ns: str, prio: int, node: str | None = None, pc: str = "low", labels: dict | None = None) -> dict:
    p: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "labels": labels or {"app": name},
                     "creationTimestamp": T,
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": f"j-{name}", "uid": f"o-{name}", "controller": True}]},
        "spec": {"priority": prio, "priorityClassName": pc, "schedulerName": "default-scheduler",
                 "containers": [{"name": "c", "image": "registry.example/app:1",
                                 "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}}],
                 "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]},
        "status": {"phase": "Running" if node else "Pending"},
    }
    if node:
        p["spec"]["nodeName"] = node
        p["status"].update(startTime=T, conditions=[{"type": "Ready", "status": "True"}],
                           containerStatuses=[{"name": "c", "allocatedResources": {"cpu": "1"}}])
    else:
        p["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                      "message": "0/2 nodes are available"}]
    return p


def _claiming(p: dict) -> dict:
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "v2-gpu"}]
    p["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "v2-gpu"}]
    return p


def cluster() -> list[dict]:
    """Two nodes, running victims (one under a PDB, one with every scheduling stanza, one holding
    a DRA device), a pending gang (PodGroup), a pending single pod with a PVC, a preempted pod with
    its event, two PriorityClasses, a Namespace, and one object of each other kind read (_more)."""
    rich = _pod("v1", "team", 10, node="n1")
    rich["spec"].update(
        nodeSelector={"kubernetes.io/hostname": "n1"},
        affinity={"nodeAffinity": {
                      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                          {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a", "b"]}]}]},
                      "preferredDuringSchedulingIgnoredDuringExecution": [
                          {"weight": 5, "preference": {"matchExpressions": [{"key": "x", "operator": "Exists"}]}}]},
                  "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                      {"labelSelector": {"matchLabels": {"app": "other"}}, "topologyKey": "kubernetes.io/hostname"}]}},
        topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
                                    "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["v1"]}]}}],
        initContainers=[{"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}}],
        overhead={"cpu": "10m"},
        resources={"limits": {"cpu": "3", "memory": "3Gi"}},
        terminationGracePeriodSeconds=30,
        preemptionPolicy="PreemptLowerPriority",
    )
    rich["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]
    solo = _pod("solo", "team", 500, pc="high")
    solo["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}, {"name": "tmp", "ephemeral": {}}]
    solo["status"]["nominatedNodeName"] = "n2"
    gone = _pod("gone", "team", 10)
    gone["status"] = {"phase": "Failed", "conditions": [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
         "message": "default-scheduler: preempting to accommodate a higher priority pod", "lastTransitionTime": T}]}
    gang = [_pod(f"w{i}", "ml", 1000, pc="high") for i in range(2)]
    for p in gang:
        p["spec"]["schedulingGroup"] = {"podGroupName": "job"}
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3"  # room only by preemption
    return [
        _node("n1", "a"), _node("n2", "b"),
        rich, _claiming(_pod("v2", "team", 10, node="n2", labels={"app": "web"})), _pod("v3", "team", 10, node="n1", labels={"app": "web"}),
        solo, gone, *gang,
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
         "metadata": {"name": "job", "namespace": "ml", "uid": "pg-job", "creationTimestamp": T},
         "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "priorityClassName": "high", "disruptionMode": {"all": {}}}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "team"},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"},
                                                  "matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}},
         "status": {"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000,
         "preemptionPolicy": "PreemptLowerPriority", "globalDefault": False},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {"env": "prod"}}, "status": {"phase": "Active"}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "team"},
         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "std", "resources": {"requests": {"storage": "1Gi"}}},
         "status": {"phase": "Pending"}},
        {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "gone.1", "namespace": "team"}, "reason": "Preempted",
         "message": "Preempted by pod uid-solo on node n1", "type": "Normal", "lastTimestamp": T,
         "involvedObject": {"kind": "Pod", "namespace": "team", "name": "gone", "uid": "uid-gone"}},
        *_more(),
    ]


def _more() -> list[dict]:
    """The other kinds the loaders read: a CompositePodGroup over a PodGroup, DRA objects (a
    device claimed by a running pod), storage and admission objects."""
    return [
        {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup", "metadata": {"name": "top", "namespace": "ml"},
         "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 1}}, "priorityClassName": "high"}},
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "child", "namespace": "ml"},
         "spec": {"schedulingPolicy": {"basic": {}}, "parentCompositePodGroupName": "top", "disruptionMode": {"single": {}},
                  "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n2-gpu"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n2", "pool": {"name": "n2", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "d0", "attributes": {"model": {"string": "a100"}, "driverVersion": {"version": "1.2.3"}},
                               "capacity": {"memory": {"value": "40Gi"}}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "v2-gpu", "namespace": "team", "uid": "rc-v2"},
         "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu", "count": 1}}]}},
         "status": {"allocation": {"devices": {"results": [{"request": "g", "driver": "gpu.example.com", "pool": "n2", "device": "d0"}]},
                                   "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                       {"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}},
                    "reservedFor": [{"resource": "pods", "name": "v2", "uid": "uid-v2"}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "gpu-t", "namespace": "team"},
         "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}}}},
        {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "team"},
         "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "100m"}, "default": {"cpu": "1"}}]}},
        {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"}, "handler": "kata",
         "overhead": {"podFixed": {"cpu": "250m"}}, "scheduling": {"nodeSelector": {"x": "y"}, "tolerations": [{"key": "k", "operator": "Exists"}]}},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
         "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "std",
                  "csi": {"driver": "csi.example.com", "volumeHandle": "h1"},
                  "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                      {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]}}},
         "status": {"phase": "Available"}},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "std"}, "provisioner": "csi.example.com",
         "volumeBindingMode": "WaitForFirstConsumer"},
        {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
         "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1", "allocatable": {"count": 8}}]}},
    ]


Path_ = tuple[Any, ...]


def paths(obj: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every place in `obj` (map values and list elements), outermost first."""
    out: list[Path_] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append(prefix + (k,))
            out += paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.append(prefix + (i,))
            out += paths(v, prefix + (i,))
    return out


def plant(obj: Any, path: Path_, value: Any) -> Any:
    obj = copy.deepcopy(obj)
    cur = obj
    for step in path[:-1]:
        cur = cur[step]
    cur[path[-1]] = copy.deepcopy(value)
    return obj


@dataclass(frozen=True, slots=True)
class Mutation:
    item: int  # index in cluster()
    path: Path_
    type: str  # a key of VALUES

    @property
    def field(self) -> str:
        """The field as a message should name it: its last map key (`requests`, not `0`)."""
        return next((str(s) for s in reversed(self.path) if isinstance(s, str)), "")

    def items(self, base: list[dict]) -> list[dict]:
        out = list(base)
        out[self.item] = plant(base[self.item], self.path, VALUES[self.type])
        return out

    def object_names(self, base: list[dict] | None) -> list[str]:
        """How a message may name the object: by its place in the file, or by its name (when the
        mutation left the name alone)."""
        names = [f"item {self.item}"]
        md = (base or cluster())[self.item].get("metadata") or {}
        if self.path[:2] != ("metadata", "name") and self.path != ("metadata",):
            names.append(f"{md.get('name')}")
        return names

    def __str__(self) -> str:
        return f"item {self.item} {'.'.join(map(str, self.path))}={self.type}"


def mutations(base: list[dict]) -> Iterator[Mutation]:
    for i, obj in enumerate(base):
        for p in paths(obj):
            for t in VALUES:
                yield Mutation(i, p, t)


# A renamed or moved object is then simply not there: "not found" is the right answer, and it
# names what was asked for rather than the field that was changed.
_NOT_FOUND = re.compile(r'not found|no Preempted event names it|holds no (Pods|PodGroups)')


def check(m: Mutation, argv: list[str], file: Path, code: int, stderr: str) -> str | None:
    """None when the run ended as it must; else what was wrong."""
    if code == 0:
        return None
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("Warning:")]
    if code != 2:
        return f"exit {code}: {lines[-1] if lines else stderr[-200:]!r}"
    if len(lines) != 1 or not lines[0].startswith("error: ") or "Traceback" in stderr:
        return f"not one error line: {stderr[-400:]!r}"
    msg = lines[0]
    if _NOT_FOUND.search(msg):
        return None
    if file.name not in msg:
        return f"the message does not name the file: {msg!r}"
    if m.field and m.field not in msg:
        return f"the message does not name the field {m.field!r}: {msg!r}"
    if not any(w in msg for w in m.object_names(base=None)):
        return f"the message does not name the object: {msg!r}"
    return None


def write_list(path: Path, items: list[dict]) -> None:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
