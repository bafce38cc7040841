"""The fields a snapshot may hold, per kind, as data: exactly what the scheduler (and convert.py)
reads, and for every string what kind of value it is.

One schema serves both uses (issue 19):

* ``--redact``: :func:`project` with the Redactor's leaves hashes every kept string unless it is a
  known enum value, a resource name, a quantity, a number or a timestamp; anything not in the
  schema (a future field, an unknown key nested anywhere) is dropped;
* plain snapshots: :func:`project` with :func:`keep` keeps the same fields unchanged. Pods and
  Nodes are reduced by strip.py's hand-written fast path (150k pods per live read); PodGroups,
  CompositePodGroups and PDBs, which were copied whole, go through the schema.

A schema is a dict (only these fields, each by its schema), ``L(s)`` (a list of s), ``M(k, s)``
(a map whose keys are leaves of kind k, values by s), a leaf-kind string, or a frozenset (an enum:
kept when the value is one of them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True, slots=True)
class L:
    item: Any


@dataclass(frozen=True, slots=True)
class M:
    key: str
    value: Any


DROP = object()
_NO_MEMO_HERE: dict = {}  # marks the call that fills a memo entry (no nested memo lookups)
Leaf = Callable[[Any, Any], Any]  # (leaf kind or enum set, value) -> kept value or DROP

PREEMPTION_POLICY = frozenset({"PreemptLowerPriority", "Never"})
LABEL_OPS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})
EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})
API_VERSIONS = frozenset({"v1", "policy/v1", "scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha3",
                          "storage.k8s.io/v1", "resource.k8s.io/v1", "node.k8s.io/v1"})
KINDS = frozenset({"Pod", "Node", "Namespace", "PriorityClass", "PodDisruptionBudget", "PodGroup", "CompositePodGroup",
                   "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode",
                   "DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate",
                   "RuntimeClass", "LimitRange"})

RES = M("resname", "qty")
LABELS = M("lkey", "lval")
REQ = {"key": "lkey", "operator": LABEL_OPS, "values": L("lval")}
SELECTOR = {"matchLabels": LABELS, "matchExpressions": L(REQ)}
NODE_TERM = {
    "matchExpressions": L(REQ),
    # matchFields: only metadata.name exists; its values are node names
    "matchFields": L({"key": frozenset({"metadata.name"}), "operator": LABEL_OPS, "values": L("id")}),
}
POD_TERM = {
    "labelSelector": SELECTOR, "namespaceSelector": SELECTOR, "namespaces": L("id"), "topologyKey": "lkey",
    "matchLabelKeys": L("lkey"), "mismatchLabelKeys": L("lkey"),
}
POD_AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": L(POD_TERM),
    "preferredDuringSchedulingIgnoredDuringExecution": L({"weight": "int", "podAffinityTerm": POD_TERM}),
}
AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": L(NODE_TERM)},
        "preferredDuringSchedulingIgnoredDuringExecution": L({"weight": "int", "preference": NODE_TERM}),
    },
    "podAffinity": POD_AFFINITY,
    "podAntiAffinity": POD_AFFINITY,
}
TOLERATION = {"key": "lkey", "operator": frozenset({"Exists", "Equal"}), "value": "lval", "effect": EFFECTS,
              "tolerationSeconds": "int"}
TAINT = {"key": "lkey", "value": "lval", "effect": EFFECTS}
SPREAD = {
    "maxSkew": "int", "topologyKey": "lkey", "whenUnsatisfiable": frozenset({"DoNotSchedule", "ScheduleAnyway"}),
    "labelSelector": SELECTOR, "minDomains": "int", "nodeAffinityPolicy": frozenset({"Honor", "Ignore"}),
    "nodeTaintsPolicy": frozenset({"Honor", "Ignore"}), "matchLabelKeys": L("lkey"),
}
CLAIMS = L({"name": "id", "request": "id"})
CONTAINER = {
    "name": "id", "image": "id", "restartPolicy": frozenset({"Always", "OnFailure", "Never"}),
    "resources": {"requests": RES, "claims": CLAIMS},
    "ports": L({"containerPort": "int", "hostPort": "int", "hostIP": "ip", "protocol": frozenset({"TCP", "UDP", "SCTP"})}),
}
CONTAINER_STATUS = {"name": "id", "allocatedResources": RES, "resources": {"requests": RES}}
META = {"name": "id", "namespace": "id", "uid": "id", "labels": LABELS, "creationTimestamp": "time",
        "deletionTimestamp": "time"}
HEAD = {"apiVersion": API_VERSIONS, "kind": KINDS}

# A pod's controller (strip.controller_ref): kinds of the built-in controllers are kept (`simulate`
# treats Job, StatefulSet and Node apart), any other (a custom resource's) is hashed like names.
OWNER_KINDS = frozenset({"ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController", "Node"})
POD = {
    **HEAD,
    "metadata": dict(META, ownerReferences=L({"kind": OWNER_KINDS, "name": "id", "controller": "bool"})),
    "spec": {
        "overhead": RES, "resources": {"requests": RES, "claims": CLAIMS}, "nodeName": "id", "nodeSelector": LABELS,
        "affinity": AFFINITY, "tolerations": L(TOLERATION), "topologySpreadConstraints": L(SPREAD), "priority": "int",
        "priorityClassName": "pc", "preemptionPolicy": PREEMPTION_POLICY, "schedulerName": "scheduler",
        "schedulingGroup": {"podGroupName": "id"}, "schedulingGates": L({"name": "id"}), "hostNetwork": "bool",
        "containers": L(CONTAINER), "initContainers": L(CONTAINER), "terminationGracePeriodSeconds": "int",
        "volumes": L({"name": "id", "persistentVolumeClaim": {"claimName": "id"}, "ephemeral": {}}),  # storage.PodVolume
        "resourceClaims": L({"name": "id", "resourceClaimName": "id", "resourceClaimTemplateName": "id"}),
    },
    "status": {
        "phase": frozenset({"Pending", "Running", "Succeeded", "Failed", "Unknown"}), "startTime": "time",
        "nominatedNodeName": "id",
        # only DisruptionTarget/PreemptionByScheduler is read (a pod being preempted)
        "conditions": L({"type": frozenset({"DisruptionTarget"}), "status": frozenset({"True", "False", "Unknown"}),
                         "reason": frozenset({"PreemptionByScheduler"})}),
        "containerStatuses": L(CONTAINER_STATUS), "initContainerStatuses": L(CONTAINER_STATUS),
        "resourceClaimStatuses": L({"name": "id", "resourceClaimName": "id"}),
    },
}
NODE = {
    **HEAD,
    "metadata": META,
    "spec": {"taints": L(TAINT), "unschedulable": "bool"},
    "status": {"allocatable": RES, "capacity": RES, "images": L({"names": L("id"), "sizeBytes": "int"})},
}
_GROUP_SPEC = {
    "parentCompositePodGroupName": "id",
    "workloadRef": {"workloadName": "id", "templateName": "id"},
    "schedulingConstraints": {"topology": L({"key": "lkey"})},
    "disruptionMode": {"single": {}, "all": {}},
    "priorityClassName": "pc", "priority": "int", "preemptionPolicy": PREEMPTION_POLICY,
}
POD_GROUP = {
    **HEAD, "metadata": META,
    "spec": {**_GROUP_SPEC, "schedulingPolicy": {"basic": {}, "gang": {"minCount": "int"}},
             "resourceClaims": L({"name": "id", "resourceClaimName": "id", "resourceClaimTemplateName": "id"})},
}
COMPOSITE_POD_GROUP = {
    **HEAD, "metadata": META,
    "spec": {**_GROUP_SPEC, "schedulingPolicy": {"basic": {}, "gang": {"minGroupCount": "int"}}},
}
PDB = {
    **HEAD, "metadata": META,
    "spec": {"minAvailable": "intstr", "maxUnavailable": "intstr", "selector": SELECTOR,
             "unhealthyPodEvictionPolicy": frozenset({"IfHealthyBudget", "AlwaysAllow"})},
    "status": {"disruptionsAllowed": "int", "disruptedPods": M("id", "time")},
}
PRIORITY_CLASS = {**HEAD, "metadata": dict(META, name="pc"), "value": "int", "globalDefault": "bool",
                  "preemptionPolicy": PREEMPTION_POLICY}
NAMESPACE = {**HEAD, "metadata": META, "status": {"phase": frozenset({"Active", "Terminating"})}}
OTHER = {**HEAD, "metadata": META}

# DRA (resource.k8s.io/v1, issue 15). Driver names, attribute and capacity names are kept like
# resource names; pools (usually node names), devices, classes and claims are hashed through the one
# mapping, so allocation results still name the devices of the slices. String attribute values and
# the string literals of CEL expressions are hashed through that mapping too, so `==`, `!=` and `in`
# still match; map keys in CEL (device.attributes["driver"]) and attribute names are kept.
_NODE_SELECTOR = {"nodeSelectorTerms": L(NODE_TERM)}
_CEL = L({"cel": {"expression": "cel"}})
_COUNTERS = M("resname", {"value": "qty"})
DEVICE_CLASS = {**HEAD, "metadata": META, "spec": {"selectors": _CEL, "extendedResourceName": "domain"}}
_DEVICE = {
    "name": "id", "nodeName": "id", "allNodes": "bool", "nodeSelector": _NODE_SELECTOR,
    "attributes": M("resname", {"int": "int", "bool": "bool", "string": "attr", "version": "qty"}),
    "capacity": M("resname", {"value": "qty"}), "allowMultipleAllocations": "bool",
    "consumesCounters": L({"counterSet": "id", "counters": _COUNTERS}),
}
RESOURCE_SLICE = {**HEAD, "metadata": META, "spec": {
    "driver": "domain", "pool": {"name": "id", "generation": "int", "resourceSliceCount": "int"}, "nodeName": "id",
    "allNodes": "bool", "nodeSelector": _NODE_SELECTOR, "devices": L(_DEVICE),
    "sharedCounters": L({"name": "id", "counters": _COUNTERS}),
}}
_EXACTLY = {"deviceClassName": "id", "selectors": _CEL, "allocationMode": frozenset({"ExactCount", "All"}), "count": "int",
            "adminAccess": "bool", "capacity": {"requests": RES}, "tolerations": L(TOLERATION)}
CLAIM_SPEC = {"devices": {
    "requests": L({"name": "id", "exactly": _EXACTLY, "firstAvailable": L(dict(_EXACTLY, name="id"))}),
    "constraints": L({"requests": L("id"), "matchAttribute": "domain"}),
}}
RESOURCE_CLAIM = {**HEAD, "metadata": META, "spec": CLAIM_SPEC, "status": {
    "allocation": {"devices": {"results": L({"request": "id", "driver": "domain", "pool": "id", "device": "id",
                                             "consumedCapacity": RES, "shareID": "id"})},
                   "nodeSelector": _NODE_SELECTOR},
    "reservedFor": L({"apiGroup": "domain", "resource": frozenset({"pods", "podgroups"}), "name": "id", "uid": "id"}),
}}
RESOURCE_CLAIM_TEMPLATE = {**HEAD, "metadata": META, "spec": {"spec": CLAIM_SPEC}}
# Storage (issue 15): what convert_storage.py reads. Claim, volume, class and driver names are
# identifiers (hashed alike everywhere, so references still match); a PV's zone labels are labels.
ACCESS_MODES = L(frozenset({"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"}))
PVC = {
    **HEAD,
    # only the annotations the volume binder reads: bind-completed (presence), selected-node, beta class
    "metadata": dict(META, annotations={"pv.kubernetes.io/bind-completed": frozenset({"true", "yes"}),
                                        "volume.kubernetes.io/selected-node": "id",
                                        "volume.beta.kubernetes.io/storage-class": "id"}),
    "spec": {"accessModes": ACCESS_MODES, "storageClassName": "id", "volumeName": "id", "resources": {"requests": RES}},
    "status": {"phase": frozenset({"Pending", "Bound", "Lost"})},
}
PV = {
    **HEAD, "metadata": META,
    "spec": {"accessModes": ACCESS_MODES, "storageClassName": "id", "capacity": RES,
             "nodeAffinity": {"required": {"nodeSelectorTerms": L(NODE_TERM)}},
             "csi": {"driver": "id", "volumeHandle": "id"}, "claimRef": {"namespace": "id", "name": "id"}},
    "status": {"phase": frozenset({"Pending", "Available", "Bound", "Released", "Failed"})},
}
STORAGE_CLASS = {**HEAD, "metadata": META, "provisioner": "id",
                 "volumeBindingMode": frozenset({"Immediate", "WaitForFirstConsumer"})}
CSI_NODE = {**HEAD, "metadata": META, "spec": {"drivers": L({"name": "id", "allocatable": {"count": "int"}})}}

# What create-time admission reads (podadmission.py): a RuntimeClass's overhead and scheduling,
# a LimitRange's items. Handler and class names are identifiers.
RUNTIME_CLASS = {**HEAD, "metadata": META, "handler": "id", "overhead": {"podFixed": RES},
                 "scheduling": {"nodeSelector": LABELS, "tolerations": L(TOLERATION)}}
LIMIT_RANGE = {**HEAD, "metadata": META, "spec": {"limits": L({
    "type": frozenset({"Container", "Pod", "PersistentVolumeClaim"}), "max": RES, "min": RES, "default": RES,
    "defaultRequest": RES, "maxLimitRequestRatio": RES})}}

SCHEMAS: dict[str, dict] = {
    "Pod": POD, "Node": NODE, "PodGroup": POD_GROUP, "CompositePodGroup": COMPOSITE_POD_GROUP,
    "PodDisruptionBudget": PDB, "PriorityClass": PRIORITY_CLASS, "Namespace": NAMESPACE,
    "DeviceClass": DEVICE_CLASS, "ResourceSlice": RESOURCE_SLICE, "ResourceClaim": RESOURCE_CLAIM,
    "ResourceClaimTemplate": RESOURCE_CLAIM_TEMPLATE,
    "PersistentVolumeClaim": PVC, "PersistentVolume": PV, "StorageClass": STORAGE_CLASS, "CSINode": CSI_NODE,
    "RuntimeClass": RUNTIME_CLASS, "LimitRange": LIMIT_RANGE,
}


def schema_for(kind: Any) -> dict:
    return SCHEMAS.get(kind, OTHER) if isinstance(kind, str) else OTHER


# Stanzas replicas share (a 150k-pod cluster has a few hundred distinct ones): with a memo,
# each distinct value is projected once per leaf function and the result shared.
_MEMO_SCHEMAS = frozenset(id(x) for x in (
    POD["spec"]["affinity"], POD["spec"]["tolerations"], POD["spec"]["topologySpreadConstraints"],
    POD["spec"]["containers"], POD["spec"]["nodeSelector"], POD["spec"]["overhead"], POD["spec"]["resources"],
    LABELS,
))


def project(schema: Any, v: Any, leaf: Leaf, memo: dict | None = None) -> Any:
    """`v` reduced to `schema`, each leaf passed through `leaf`; DROP when nothing is kept.
    `memo` (one per leaf function) shares the projection of repeated stanzas."""
    if v is None:
        return DROP
    if memo is _NO_MEMO_HERE:
        memo = None  # filling a memo entry: the stanza's insides are projected directly
    elif memo is not None and id(schema) in _MEMO_SCHEMAS:
        key = value_key(v)
        if key is not None:
            mkey = (id(schema), key)
            hit = memo.get(mkey)
            if hit is None:
                hit = memo[mkey] = project(schema, v, leaf, _NO_MEMO_HERE)
            return hit
    if isinstance(schema, dict):
        if not isinstance(v, dict):
            return DROP
        out = {}
        for k, sub in schema.items():
            if k in v:
                r = project(sub, v[k], leaf, memo)
                if r is not DROP:
                    out[k] = r
        return out
    if isinstance(schema, L):
        if not isinstance(v, list):
            return DROP
        return [r for r in (project(schema.item, x, leaf, memo) for x in v) if r is not DROP]
    if isinstance(schema, M):
        if not isinstance(v, dict):
            return DROP
        out = {}
        for k, x in v.items():
            kk = leaf(schema.key, k)
            r = project(schema.value, x, leaf, memo)
            if kk is not DROP and r is not DROP:
                out[kk] = r
        return out
    return leaf(schema, v)


def value_key(v: Any) -> bytes | None:
    """A cache key for a JSON-shaped value: its compact JSON bytes (exact types: 1, 1.0 and true
    differ), or None (do not cache) for anything JSON cannot say. Not repr(): the key must cost what
    the value's text costs, and YAML aliases, the one way to make a value larger than its text,
    are budgeted when the file is read (files.YAML_ALIAS_BUDGET). orjson: ~10x faster than repr."""
    try:
        key = _json_key(v)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return None
    # orjson writes NaN and infinities as null: such a stanza (an error to report) and one with
    # a real null must not share an entry, so anything with a null is not cached.
    return None if b"null" in key else key


try:
    from orjson import dumps as _json_key
except ImportError:  # optional at run time
    import json as _json

    def _json_key(v: Any) -> bytes:
        return _json.dumps(v, separators=(",", ":"), allow_nan=False).encode()


def keep(_kind: Any, v: Any) -> Any:
    """The plain-snapshot leaf: the value as it is."""
    return v


_QTY = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+|[kMGTPE]i?|[munk])?$")
_TIME = re.compile(r"^\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?)?$")
_INTSTR = re.compile(r"^\d{1,10}%?$")
_NUMBER = (int, float)
_DOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+(/[-A-Za-z0-9_.]+)?$")
_VERSION = re.compile(r"^v?\d+(\.\d+)*([-+][0-9A-Za-z.-]+)?$")
# A double-quoted CEL string literal (group 2), or a map subscript ["key"] (group 1, kept whole).
_CEL_STRING = re.compile(r'(\[\s*"(?:[^"\\]|\\.)*"\s*\])|"((?:[^"\\]|\\.)*)"')


def _domain_or_hash(v: str, hash_id: Callable[[str], str]) -> str:
    """Kept: DNS-domain shaped strings (driver names), quantities and versions (the arguments of
    CEL's quantity() and semver(), identifying nothing); everything else hashed."""
    return v if _DOMAIN.match(v) or _QTY.match(v) or _VERSION.match(v) else hash_id(v)


def typed(kind: Any, v: Any, hash_id: Callable[[str], str], lkey: Callable[[Any], Any], lval: Callable[[Any], Any],
          pc: Callable[[Any], Any]) -> Any:
    """The --redact leaf: strings hashed unless they are enum values, resource names, quantities,
    numbers or timestamps of the right shape; values of the wrong type are dropped."""
    if isinstance(kind, frozenset):
        if isinstance(v, str) and v in kind:  # a list or map here is no enum value (and unhashable)
            return v
        return hash_id(v) if isinstance(v, str) and v else DROP
    if kind == "id":
        return hash_id(v) if isinstance(v, str) else DROP
    if kind == "lkey":
        return lkey(v) if isinstance(v, str) else DROP
    if kind == "lval":
        return lval(v) if isinstance(v, str) else DROP
    if kind == "pc":
        return pc(v) if isinstance(v, str) else DROP
    if kind == "scheduler":
        return v if v == "default-scheduler" else hash_id(v) if isinstance(v, str) else DROP
    if kind == "ip":
        return v if v in ("", "0.0.0.0", "::") else hash_id(v) if isinstance(v, str) else DROP
    if kind == "resname":
        return v if isinstance(v, str) else DROP  # resource names (cpu, nvidia.com/gpu) are kept
    if kind == "qty":
        if isinstance(v, _NUMBER) and not isinstance(v, bool):
            return v
        return v if isinstance(v, str) and _QTY.match(v) else DROP
    if kind == "int":
        return v if isinstance(v, int) and not isinstance(v, bool) else DROP
    if kind == "intstr":
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        return v if isinstance(v, str) and _INTSTR.match(v) else DROP
    if kind == "bool":
        return v if isinstance(v, bool) else DROP
    if kind in ("domain", "attr"):
        # A DRA driver / API group / qualified name is kept when it has that shape; a device's
        # string attribute too (selectors compare it with driver names), else hashed, exactly as
        # the string literals of CEL expressions are.
        return _domain_or_hash(v, hash_id) if isinstance(v, str) else DROP
    if kind == "cel":  # a CEL expression: its string literals as "attr", map keys (["driver"]) and names kept
        return _CEL_STRING.sub(lambda m: m.group(0) if m.group(1) else f'"{_domain_or_hash(m.group(2), hash_id)}"', v) if isinstance(v, str) else DROP
    if kind == "time":
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        return v if isinstance(v, str) and _TIME.match(v) else DROP
    raise AssertionError(f"unknown leaf kind {kind!r}")
