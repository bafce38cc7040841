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

A leaf kind says how the loader reads the value, so that redaction hands the loader what it would
have read (issue 31: redaction never changes the analysis): "id" (a name read with as_str), "name"
(read only when a string), "lkey"/"lval" (labels, with their validity kept), "pc", "scheduler",
"resname" (resource names), "qname" (DRA attribute names), "domain"/"attr" (the domain rule),
"version", "cel", "qty" (parse_quantity), "int" (fields.whole_number), "rawint" and "bool" (read
as they are), "truthy" (read with bool()), "intstr", "time" (fields.parse_time), "ip". A value the
loader refuses stays one it refuses (_refused).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .leaves import DROP


@dataclass(frozen=True, slots=True)
class L:
    item: Any


@dataclass(frozen=True, slots=True)
class M:
    key: str
    value: Any


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
              "tolerationSeconds": "rawint"}
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
META = {"name": "name", "namespace": "id", "uid": "id", "labels": LABELS, "creationTimestamp": "time",
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
        "schedulingGroup": {"podGroupName": "name"}, "schedulingGates": L({"name": "id"}), "hostNetwork": "bool",
        "containers": L(CONTAINER), "initContainers": L(CONTAINER), "terminationGracePeriodSeconds": "rawint",
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
    "spec": {"taints": L(TAINT), "unschedulable": "truthy"},
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
PRIORITY_CLASS = {**HEAD, "metadata": dict(META, name="pc"), "value": "int", "globalDefault": "truthy",
                  "preemptionPolicy": PREEMPTION_POLICY}
NAMESPACE = {**HEAD, "metadata": META, "status": {"phase": frozenset({"Active", "Terminating"})}}
OTHER = {**HEAD, "metadata": META}

# DRA (resource.k8s.io/v1, issue 15). Driver names and the domains of attribute and capacity names
# go through the domain rule (kept when well-known, else hashed: _domain), the names after the slash
# are kept (selectors spell them as CEL identifiers: .model); pools (usually node names), devices,
# classes and claims are hashed through the one mapping, so allocation results still name the
# devices of the slices. String attribute values and the string literals of CEL expressions go
# through the domain rule too, so `==`, `!=` and `in` still match (_cel); version attributes keep
# the major.minor.patch a semver() comparison reads (_version).
_NODE_SELECTOR = {"nodeSelectorTerms": L(NODE_TERM)}
_CEL = L({"cel": {"expression": "cel"}})
_COUNTERS = M("resname", {"value": "qty"})
_DRA_RES = M("qname", "qty")  # capacity names of devices, in claims as in slices
DEVICE_CLASS = {**HEAD, "metadata": META, "spec": {"selectors": _CEL, "extendedResourceName": "resname"}}
_DEVICE = {
    "name": "id", "nodeName": "id", "allNodes": "truthy", "nodeSelector": _NODE_SELECTOR,
    "attributes": M("qname", {"int": "rawint", "bool": "bool", "string": "attr", "version": "version"}),
    "capacity": M("qname", {"value": "qty"}), "allowMultipleAllocations": "truthy",
    "consumesCounters": L({"counterSet": "id", "counters": _COUNTERS}),
}
RESOURCE_SLICE = {**HEAD, "metadata": META, "spec": {
    "driver": "domain", "pool": {"name": "id", "generation": "int", "resourceSliceCount": "int"}, "nodeName": "id",
    "allNodes": "truthy", "nodeSelector": _NODE_SELECTOR, "devices": L(_DEVICE),
    "sharedCounters": L({"name": "id", "counters": _COUNTERS}),
}}
_EXACTLY = {"deviceClassName": "id", "selectors": _CEL, "allocationMode": frozenset({"ExactCount", "All"}), "count": "rawint",
            "adminAccess": "truthy", "capacity": {"requests": _DRA_RES}, "tolerations": L(TOLERATION)}
CLAIM_SPEC = {"devices": {
    "requests": L({"name": "id", "exactly": _EXACTLY, "firstAvailable": L(dict(_EXACTLY, name="id"))}),
    "constraints": L({"requests": L("id"), "matchAttribute": "qname"}),
}}
RESOURCE_CLAIM = {**HEAD, "metadata": META, "spec": CLAIM_SPEC, "status": {
    "allocation": {"devices": {"results": L({"request": "id", "driver": "domain", "pool": "id", "device": "id",
                                             "consumedCapacity": _DRA_RES, "shareID": "id"})},
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

# Kueue (kueue.x-k8s.io/v1beta2, issue 35): what queueing/kueue/objects.py reads for admission, and
# what it refuses on (a flavor's topologyName, a podset's topologyRequest or minCount, the
# priority-boost annotation), so a stripped or redacted capture
# gives the same answer or the same refusal. ClusterQueue, Cohort, flavor, LocalQueue, queue and
# WorkloadPriorityClass names are identifiers (hashed alike, so every reference still matches);
# flavors' node labels and taints are labels and taints, like the nodes'.
KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_API_VERSIONS = frozenset({f"{KUEUE_GROUP}/v1beta2"})
KUEUE_KINDS = frozenset({"ResourceFlavor", "ClusterQueue", "Cohort", "LocalQueue", "Workload", "WorkloadPriorityClass",
                         "Topology", "AdmissionCheck"})
_KHEAD = {"apiVersion": KUEUE_API_VERSIONS, "kind": KUEUE_KINDS}
_KPOLICY = frozenset({"Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any"})
_KQUOTAS = L({"coveredResources": L("resname"), "flavors": L({"name": "id", "resources": L({
    "name": "resname", "nominalQuota": "qty", "borrowingLimit": "qty", "lendingLimit": "qty"})})})
_KFAIR = {"weight": "qty"}
_KSTATUS = frozenset({"True", "False", "Unknown"})
# A Workload's podset template: what Kueue's quota and flavor assignment read (pod_requests, node
# selector, tolerations, the refused required node affinity and resource claims). Limits are kept:
# Kueue takes them as missing requests (workload.UseLimitsAsMissingRequestsInPod).
_KCONTAINER = dict(CONTAINER, resources={"requests": RES, "limits": RES, "claims": CLAIMS})
_KPOD_SPEC = {
    "containers": L(_KCONTAINER), "initContainers": L(_KCONTAINER), "overhead": RES, "nodeSelector": LABELS,
    "tolerations": L(TOLERATION), "affinity": AFFINITY, "priorityClassName": "pc", "priority": "int",
    "resourceClaims": POD["spec"]["resourceClaims"],
}
# Workloads are owned by their job (Kueue's integrations); apply_evictions reads a Job owner.
_KOWNER_KINDS = OWNER_KINDS | {"Pod", "JobSet", "RayJob", "RayCluster", "MPIJob", "PyTorchJob", "TFJob", "TrainJob",
                               "LeaderWorkerSet", "AppWrapper", "Deployment"}
RESOURCE_FLAVOR = {**_KHEAD, "metadata": META, "spec": {
    "nodeLabels": LABELS, "nodeTaints": L(TAINT), "tolerations": L(TOLERATION), "topologyName": "id"}}
CLUSTER_QUEUE = {**_KHEAD, "metadata": META, "spec": {
    "cohortName": "id", "namespaceSelector": SELECTOR, "queueingStrategy": frozenset({"BestEffortFIFO", "StrictFIFO"}),
    "stopPolicy": frozenset({"None", "Hold", "HoldAndDrain"}), "resourceGroups": _KQUOTAS,
    "preemption": {"withinClusterQueue": _KPOLICY, "reclaimWithinCohort": _KPOLICY,
                   "borrowWithinCohort": {"policy": _KPOLICY, "maxPriorityThreshold": "int"}},
    "flavorFungibility": {"whenCanBorrow": frozenset({"MayStopSearch", "TryNextFlavor", "Borrow"}),
                          "whenCanPreempt": frozenset({"MayStopSearch", "TryNextFlavor", "Preempt"}),
                          "preference": frozenset({"BorrowingOverPreemption", "PreemptionOverBorrowing"})},
    "admissionChecks": L("id"),
    "admissionChecksStrategy": {"admissionChecks": L({"name": "id", "onFlavors": L("id")})},
    "admissionScope": {"admissionMode": frozenset({"UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing"})},
    "fairSharing": _KFAIR}}
COHORT = {**_KHEAD, "metadata": META, "spec": {"parentName": "id", "resourceGroups": _KQUOTAS, "fairSharing": _KFAIR}}
LOCAL_QUEUE = {**_KHEAD, "metadata": META, "spec": {"clusterQueue": "id",
                                                    "stopPolicy": frozenset({"None", "Hold", "HoldAndDrain"})}}
WORKLOAD_PRIORITY_CLASS = {**_KHEAD, "metadata": META, "value": "int"}
WORKLOAD = {
    **_KHEAD,
    "metadata": dict(META, ownerReferences=L({"kind": _KOWNER_KINDS, "name": "id", "controller": "bool"}),
                     annotations={"kueue.x-k8s.io/priority-boost": "lval"}),
    "spec": {
        "queueName": "id", "priority": "int", "active": "bool",
        "priorityClassRef": {"group": "domain", "kind": frozenset({"WorkloadPriorityClass", "PriorityClass"}), "name": "pc"},
        "podSets": L({"name": "id", "count": "int", "minCount": "int", "template": {"spec": _KPOD_SPEC},
                      "topologyRequest": {"required": "lkey", "preferred": "lkey", "unconstrained": "bool",
                                          "podIndexLabel": "lkey", "subGroupIndexLabel": "lkey", "subGroupCount": "int",
                                          "podSetGroupName": "id", "podSetSliceRequiredTopology": "lkey",
                                          "podSetSliceSize": "int"}}),
    },
    "status": {
        "admission": {"clusterQueue": "id", "podSetAssignments": L({
            "name": "id", "count": "int", "flavors": M("resname", "id"), "resourceUsage": RES})},
        "conditions": L({"type": frozenset({"QuotaReserved", "Admitted", "Evicted", "Finished", "PodsReady", "Preempted",
                                            "Requeued", "DeactivationTarget"}),
                         "status": _KSTATUS, "lastTransitionTime": "time"}),
        "admissionChecks": L({"name": "id", "state": frozenset({"Pending", "Ready", "Retry", "Rejected"})}),
    },
}
TOPOLOGY = {**_KHEAD, "metadata": META, "spec": {"levels": L({"nodeLabel": "lkey"})}}
# What Kueue's cache keeps of an AdmissionCheck (admissionchecks.py): its Active condition and its
# controller, Kueue's own two by name (ProvisioningRequest, MultiKueue: the model treats them
# apart), any other hashed. Its parameters are not read.
_KCHECK_CONTROLLERS = frozenset({"kueue.x-k8s.io/provisioning-request", "kueue.x-k8s.io/multikueue"})
ADMISSION_CHECK = {**_KHEAD, "metadata": META, "spec": {"controllerName": _KCHECK_CONTROLLERS},
                   "status": {"conditions": L({"type": frozenset({"Active"}), "status": _KSTATUS})}}
KUEUE_SCHEMAS: dict[str, dict] = {
    "ResourceFlavor": RESOURCE_FLAVOR, "ClusterQueue": CLUSTER_QUEUE, "Cohort": COHORT, "LocalQueue": LOCAL_QUEUE,
    "Workload": WORKLOAD, "WorkloadPriorityClass": WORKLOAD_PRIORITY_CLASS, "Topology": TOPOLOGY,
    "AdmissionCheck": ADMISSION_CHECK,
}

SCHEMAS: dict[str, dict] = {
    "Pod": POD, "Node": NODE, "PodGroup": POD_GROUP, "CompositePodGroup": COMPOSITE_POD_GROUP,
    "PodDisruptionBudget": PDB, "PriorityClass": PRIORITY_CLASS, "Namespace": NAMESPACE,
    "DeviceClass": DEVICE_CLASS, "ResourceSlice": RESOURCE_SLICE, "ResourceClaim": RESOURCE_CLAIM,
    "ResourceClaimTemplate": RESOURCE_CLAIM_TEMPLATE,
    "PersistentVolumeClaim": PVC, "PersistentVolume": PV, "StorageClass": STORAGE_CLASS, "CSINode": CSI_NODE,
    "RuntimeClass": RUNTIME_CLASS, "LimitRange": LIMIT_RANGE,
}


def is_kueue(obj: Any) -> bool:
    """A kueue.x-k8s.io object: its kinds are read by group (Kueue's Workload is not scheduling.k8s.io's)."""
    api = obj.get("apiVersion") if isinstance(obj, dict) else None
    return isinstance(api, str) and api.startswith(KUEUE_GROUP + "/")


def schema_for(kind: Any, api_version: Any = None) -> dict:
    if isinstance(api_version, str) and api_version.startswith(KUEUE_GROUP + "/"):
        return KUEUE_SCHEMAS.get(kind, OTHER) if isinstance(kind, str) else OTHER
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
    # A null inside a list or map is kept: the loader reads it (a request of null is refused, a
    # label of null reads as "", a null toleration as an empty one), so dropping it would change
    # what the loader sees.
    if isinstance(schema, L):
        if not isinstance(v, list):
            return DROP
        return [r for r in (None if x is None else project(schema.item, x, leaf, memo) for x in v) if r is not DROP]
    if isinstance(schema, M):
        if not isinstance(v, dict):
            return DROP
        out = {}
        for k, x in v.items():
            kk = leaf(schema.key, k)
            r = None if x is None else project(schema.value, x, leaf, memo)
            if kk is not DROP and r is not DROP:
                out[kk] = r
        return out
    return leaf(schema, v)


def value_key(v: Any) -> bytes | None:
    """A cache key for a JSON-shaped value: its compact JSON bytes (exact types: 1, 1.0 and true
    differ), or None (do not cache) for anything JSON cannot say. Not repr(): the key must cost what
    the value's text costs, and YAML aliases, the one way to make a value larger than its text,
    are budgeted when the file is read (safeyaml.YAML_ALIAS_BUDGET). orjson: ~10x faster than repr."""
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
