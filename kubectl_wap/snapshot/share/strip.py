"""Reduce raw Kubernetes objects to what a scheduler simulation reads and what is safe to share.

An allow-list, never a deny-list: a field a future Kubernetes adds (which might hold a secret) is
dropped until someone decides the simulation needs it. Environment values, commands, probes, mounts,
security contexts and all annotations (which often carry last-applied configs with inline secrets)
never leave this module. The result is a fresh dict and the input is not modified, but kept nested
values (affinity, tolerations, PodGroup specs, ...) are shared with the input rather than deep-copied:
copying 150k pods twice costs seconds for nothing. Treat both as read-only.
"""

from __future__ import annotations

from sys import intern
from typing import Any, Callable

from .allowlist import DROP, POD, is_kueue, keep, project, value_key
from ..decode.defaulting import defaulted_spec
from ..decode.fields import ObjectError, short_repr
from ..decode.spectemplates import SpecTemplate, TemplatedSpec, templated

Obj = dict[str, Any]

# Kinds we must never store, even if someone hands them to us.
_REFUSED_KINDS = frozenset({"Secret", "ConfigMap", "ServiceAccount", "TokenReview"})

# Not kept, though harmless: resourceVersion, and of ownerReferences all but a pod's controller
# (kind and name: controller_ref); their random ids are a large share of a compressed snapshot.
_META_KEYS = ("name", "namespace", "uid", "labels", "creationTimestamp", "deletionTimestamp")

# Container fields the scheduler reads: resources for fit, ports for NodePorts, image for
# ImageLocality; restartPolicy marks native sidecars among initContainers.
_CONTAINER_KEYS = ("name", "image", "resources", "ports", "restartPolicy")
# Requests only: limits take no part in scheduling once missing requests are defaulted from them
# (the API server did so on every object we capture; _pod_spec does it for the others: defaulting.py).
_RESOURCE_KEYS = ("requests", "claims")
# NodePorts reads host ports only; a port without one is no constraint.
_PORT_KEYS = ("containerPort", "hostPort", "hostIP", "protocol")

_POD_SPEC_KEYS = (
    "overhead",
    "resources",
    "nodeName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "topologySpreadConstraints",
    "priority",
    "priorityClassName",
    "preemptionPolicy",
    "schedulerName",
    "schedulingGroup",
    "schedulingGates",
    "hostNetwork",
    # not read by the scheduler: how long `simulate --grace` keeps a victim terminating (owners.py)
    "terminationGracePeriodSeconds",
)
_POD_STATUS_KEYS = ("phase", "startTime", "nominatedNodeName", "resourceClaimStatuses")
# lastTransitionTime: when the pod was preempted (why-preempted, issue 17). The message is kept only
# for kube-scheduler's own reason, whose text is fixed ("<scheduler>: preempting to accommodate a
# higher priority <pod|podgroup|compositepodgroup>", executor.go PreemptPod).
_CONDITION_KEYS = ("type", "status", "reason", "lastTransitionTime")
# In-place resize: the scheduler charges max(spec, allocated) while a resize is in flight.
_CONTAINER_STATUS_KEYS = ("name", "allocatedResources", "resources")


def _pick(src: Any, keys: tuple[str, ...]) -> Obj:
    if not isinstance(src, dict):
        return {}
    return {k: src[k] for k in keys if k in src and src[k] is not None}


def _as_list(v: Any) -> list:
    return v if isinstance(v, list) else []


def _as_dict(v: Any) -> Obj:
    # A mistyped stanza keeps nothing here; the loader reads it as unset too, or names the field.
    return v if isinstance(v, dict) else {}


def _labels(labels: Any) -> Any:
    # Interned: 150k pods repeat the same few hundred label keys/values; one copy each saves memory
    # and makes the loader's label comparisons identity-fast.
    if not isinstance(labels, dict):
        return labels
    return {intern(k): intern(v) if isinstance(v, str) else v for k, v in labels.items()}


def _metadata(obj: Obj) -> Obj:
    src = obj.get("metadata")
    meta = _pick(src, _META_KEYS)
    if isinstance(meta.get("namespace"), str):
        meta["namespace"] = intern(meta["namespace"])
    if "labels" in meta:
        meta["labels"] = _labels(meta["labels"])
    return meta


def _base(obj: Obj) -> Obj:
    out: Obj = {}
    if "apiVersion" in obj:
        out["apiVersion"] = obj["apiVersion"]
    if "kind" in obj:
        out["kind"] = obj["kind"]
    out["metadata"] = _metadata(obj)
    return out


def _has_host_port(p: Any) -> bool:
    # Anything but absent or 0 is kept, so a malformed hostPort still fails the load as before.
    if not isinstance(p, dict):
        return False
    hp = p.get("hostPort")
    return hp is not None and not (type(hp) is int and hp == 0)


def _container(c: Any) -> Obj:
    out = _pick(c, _CONTAINER_KEYS)
    if "resources" in out:
        res = _pick(out["resources"], _RESOURCE_KEYS)
        if "claims" in res:
            res["claims"] = [_pick(x, ("name", "request")) for x in _as_list(res["claims"]) if isinstance(x, dict)]
        out["resources"] = res
    if "ports" in out:
        ports = out.pop("ports")
        kept = [_pick(p, _PORT_KEYS) for p in ports if _has_host_port(p)] if isinstance(ports, list) else []
        if kept:
            out["ports"] = kept
    return out


def _volume(v: Any) -> Obj | None:
    if not isinstance(v, dict):
        return None
    pvc = v.get("persistentVolumeClaim")
    if isinstance(pvc, dict):
        return {"name": v.get("name", ""), "persistentVolumeClaim": {"claimName": pvc.get("claimName", "")}}
    if "ephemeral" in v:
        # Only the fact that a generic ephemeral volume (a PVC the pod owns) exists matters.
        return {"name": v.get("name", ""), "ephemeral": {}}
    return None


# Nested stanzas the pod spec keeps, reduced to allowlist.py's schema (unknown nested keys go):
_NESTED = ("affinity", "tolerations", "topologySpreadConstraints", "schedulingGroup", "resources", "overhead")
_NESTED_CACHE: dict[tuple[str, bytes], Any] = {}
_POD_SPEC = POD["spec"]


def _nested(field: str, v: Any) -> Any:
    """`v` (the pod spec's `field`) projected onto its schema; replicas share their stanzas, so
    each distinct one (keyed by its JSON) is projected once and the result shared (read-only)."""
    key = value_key(v)
    hit = _NESTED_CACHE.get((field, key)) if key is not None else None
    if hit is None:
        hit = project(_POD_SPEC[field], v, keep)
        if key is not None:
            if len(_NESTED_CACHE) > 100_000:
                _NESTED_CACHE.clear()
            _NESTED_CACHE[(field, key)] = hit
    return None if hit is DROP else hit


def for_sharing(obj: Any) -> Any:
    """A stripped object as a snapshot file holds it: a pod's nested stanzas (affinity,
    tolerations, ...) reduced to the allow-list too. Separate from strip_object because the live
    read path (150k pods) would pay ~8 us a pod for it, and in memory unknown nested keys are
    harmless; every file write_snapshot produces goes through here."""
    if type(obj) is not dict or obj.get("kind") != "Pod" or not isinstance(obj.get("spec"), dict):
        return obj
    spec = obj["spec"]
    t = spec.template if type(spec) is TemplatedSpec else None
    if t is not None:
        return dict(obj, spec=_per_template(spec, t, "shared", _shared_spec))
    s = _shared_spec(spec)
    return obj if s is spec else dict(obj, spec=s)


def _shared_spec(spec: dict) -> dict:
    """for_sharing's spec: `spec` itself when it has no nested stanza, else a projected copy."""
    if not any(f in spec for f in _NESTED):
        return spec
    s = dict(spec)
    for field in _NESTED:
        if field in s:
            v = _nested(field, s[field])
            if v is None:
                del s[field]
            else:
                s[field] = v
    return s


_NODE = "\x00node"  # stands for a pod's nodeName while a template's derived form is computed


def _per_template(spec: TemplatedSpec, t: SpecTemplate, what: str, derive: Callable[[Any], Obj]) -> Obj:
    """`derive(spec)` for a pod whose spec is template `t` plus its own nodeName, computed once per
    template and place of nodeName: derive() sees the pod's spec with a stand-in nodeName in the
    pod's place, and every pod then gets the derived template with its own nodeName where derive()
    put the stand-in. Pods of one template differ only in nodeName (a TemplatedSpec that was
    edited has no template), and neither step reads nodeName's value beyond keeping it."""
    keys = list(spec)
    where = keys.index("nodeName") if "nodeName" in spec else -1
    d = t.derived.get((what, where))
    if d is None:
        probe = dict(spec)
        if where >= 0:
            probe["nodeName"] = _NODE  # same place, stand-in value
        out = dict(derive(probe))
        okeys = list(out)
        pos = okeys.index("nodeName") if "nodeName" in out else len(okeys)
        if where >= 0 and out.get("nodeName") != _NODE:
            return derive(spec)  # not a plain keep of nodeName: per pod (never, for our steps)
        out.pop("nodeName", None)
        d = t.derived[(what, where)] = (SpecTemplate(out), pos)
    node = spec.get("nodeName") if where >= 0 else None
    return templated(d[0], intern(node) if type(node) is str else node, d[1])


_OWNER_CACHE: dict[tuple[str, str], list] = {}


def controller_ref(refs: Any) -> list | None:
    """A pod's ownerReferences reduced to its controller's kind and name (no uid, apiVersion or
    blockOwnerDeletion), or None without one: what `simulate` needs to recreate a victim as its
    controller would (owners.py). The first reference with `controller: true`, as
    metav1.GetControllerOf (apimachinery meta/v1/controller_ref.go) picks it. Replicas share the
    list (read-only), as they share their nested spec stanzas."""
    if type(refs) is not list:
        return None
    for ref in refs:
        if type(ref) is dict and ref.get("controller") is True:
            kind, name = ref.get("kind"), ref.get("name")
            if type(kind) is not str or type(name) is not str:
                return None
            hit = _OWNER_CACHE.get((kind, name))
            if hit is None:
                if len(_OWNER_CACHE) > 100_000:
                    _OWNER_CACHE.clear()
                hit = _OWNER_CACHE[(kind, name)] = [{"kind": intern(kind), "name": name, "controller": True}]
            return hit
    return None


def _pod(obj: Obj) -> Obj:
    out = _base(obj)
    md = obj.get("metadata")
    owner = controller_ref(md.get("ownerReferences")) if type(md) is dict else None
    if owner is not None:
        out["metadata"]["ownerReferences"] = owner
    spec = obj.get("spec") or {}
    t = spec.template if type(spec) is TemplatedSpec else None
    # Replicas share a spec template (decoded Lists, live pages, snapshot files): stripped once.
    out["spec"] = _pod_spec(spec) if t is None else _per_template(spec, t, "stripped", _pod_spec)
    _pod_status(obj, out)
    return out


def _pod_spec(spec: Any) -> Obj:
    if not isinstance(spec, dict):
        return {}  # an int or a string: nothing to keep (the loader reports it at build)
    spec = defaulted_spec(spec)  # requests from limits before limits are dropped (defaulting.py)
    s = _pick(spec, _POD_SPEC_KEYS)
    if isinstance(s.get("nodeName"), str):
        s["nodeName"] = intern(s["nodeName"])
    for key in ("containers", "initContainers"):
        if isinstance(spec.get(key), list):
            s[key] = [_container(c) for c in spec[key]]
    vols = [v for v in (_volume(v) for v in _as_list(spec.get("volumes"))) if v is not None]
    if vols:
        s["volumes"] = vols
    claims = spec.get("resourceClaims")
    if isinstance(claims, list) and claims:
        s["resourceClaims"] = [
            _pick(c, ("name", "resourceClaimName", "resourceClaimTemplateName")) for c in claims
        ]
    return s


def _pod_status(obj: Obj, out: Obj) -> None:
    status = obj.get("status")
    if not isinstance(status, dict):
        return  # a string or a list: nothing the scheduler reads (the loader reports it at build)
    st = _pick(status, _POD_STATUS_KEYS)
    if "resourceClaimStatuses" in st:  # the generated claim of each template claim (DRA)
        st["resourceClaimStatuses"] = [_pick(c, ("name", "resourceClaimName")) for c in _as_list(st["resourceClaimStatuses"])]
    if isinstance(status.get("conditions"), list):
        # Only DisruptionTarget matters (a pod being preempted); Ready & co. are per-pod noise.
        kept = [_pick(c, _CONDITION_KEYS + (("message",) if c.get("reason") == "PreemptionByScheduler" else ()))
                for c in status["conditions"] if isinstance(c, dict) and c.get("type") == "DisruptionTarget"]
        if kept:
            st["conditions"] = kept
    for key in ("containerStatuses", "initContainerStatuses"):
        cs = status.get(key)
        if isinstance(cs, list):
            kept = [_pick(c, _CONTAINER_STATUS_KEYS) for c in cs]
            if any(len(c) > 1 for c in kept):  # only worth keeping when resources are reported
                st[key] = kept
    if st:
        out["status"] = st


def _node(obj: Obj) -> Obj:
    out = _base(obj)
    spec = _pick(obj.get("spec"), ("taints", "unschedulable"))
    if spec:
        out["spec"] = spec
    src = _as_dict(obj.get("status"))
    st = _pick(src, ("allocatable", "capacity"))
    if isinstance(src.get("images"), list):
        st["images"] = [_pick(i, ("names", "sizeBytes")) for i in src["images"]]
    kubelet = _as_dict(src.get("nodeInfo")).get("kubeletVersion")
    if kubelet:
        st["nodeInfo"] = {"kubeletVersion": kubelet}
    if st:
        out["status"] = st
    return out


def _by_schema(obj: Obj) -> Obj:
    """PodGroups, CompositePodGroups and PDBs: the allow-list of allowlist.py, values unchanged
    (these were copied whole before: unknown future fields and condition messages went along)."""
    from .allowlist import schema_for

    out = project(schema_for(obj.get("kind")), obj, keep)
    out["metadata"] = _metadata(obj)
    return out


def _priority_class(obj: Obj) -> Obj:
    out = _base(obj)
    out.update(_pick(obj, ("value", "globalDefault", "preemptionPolicy")))
    return out


def _namespace(obj: Obj) -> Obj:
    out = _base(obj)
    phase = _as_dict(obj.get("status")).get("phase")
    if phase:
        out["status"] = {"phase": phase}
    return out


def _event(obj: Obj) -> Obj:
    """Only preemption events are captured (`snapshot --events`): who was preempted, when, and the
    preemptor reference upstream puts in `related` and in the message (executor.go PreemptPod)."""
    out = _base(obj)
    for k in ("reason", "message", "note", "type", "lastTimestamp", "firstTimestamp", "eventTime", "count"):
        if k in obj:
            out[k] = obj[k]
    for k in ("involvedObject", "regarding", "related"):
        if isinstance(obj.get(k), dict):
            out[k] = _pick(obj[k], ("kind", "namespace", "name", "uid"))
    return out


def wanted_events(items: list[Any], events: bool) -> list[Any]:
    """`items` with Events kept only as `snapshot --events` promises: none without it, and with it
    only reason Preempted (what why-preempted reads). A dump (`kubectl get -A -o json`) holds every
    event with its full message; live reads already list only these (live.py load_live)."""
    return [o for o in items if not (isinstance(o, dict) and o.get("kind") == "Event")
            or (events and o.get("reason") == "Preempted")]


def _storage(obj: Obj) -> Obj:
    """PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes: the allow-list of
    allowlist.py (what the volume filters read), values unchanged; a PVC keeps only the
    annotations the volume binder reads."""
    from .allowlist import schema_for

    out = project(schema_for(obj.get("kind")), obj, keep)
    meta = _metadata(obj)
    ann = out.get("metadata", {}).get("annotations")
    if ann:
        meta["annotations"] = ann
    out["metadata"] = meta
    return out


_BY_KIND: dict[str, Callable[[Obj], Obj]] = {
    "Event": _event,
    "PersistentVolumeClaim": _storage,
    "PersistentVolume": _storage,
    "StorageClass": _storage,
    "CSINode": _storage,
    "Pod": _pod,
    "Node": _node,
    "PodGroup": _by_schema,
    "CompositePodGroup": _by_schema,
    "PriorityClass": _priority_class,
    "PodDisruptionBudget": _by_schema,
    "Namespace": _namespace,
    # DRA (issue 15): reduced to allowlist.py's schema like PodGroups
    "DeviceClass": _by_schema,
    "ResourceSlice": _by_schema,
    "ResourceClaim": _by_schema,
    "ResourceClaimTemplate": _by_schema,
    # create-time admission of hypothetical pods (podadmission.py)
    "RuntimeClass": _by_schema,
    "LimitRange": _by_schema,
}


def _kueue(obj: Obj) -> Obj:
    """kueue.x-k8s.io objects (issue 35): the allow-list of allowlist.py (what Kueue's admission
    reads, queueing/kueue/objects.py), values unchanged; a Workload keeps its controller (the job
    whose pods Kueue's evictions remove) and the one annotation the model refuses on."""
    from .allowlist import KUEUE_SCHEMAS, OTHER

    out = project(KUEUE_SCHEMAS.get(obj.get("kind"), OTHER), obj, keep)
    if out is DROP:
        return _base(obj)
    meta = _metadata(obj)
    kept = out.get("metadata") or {}
    for k in ("ownerReferences", "annotations"):
        if kept.get(k):
            meta[k] = kept[k]
    out["metadata"] = meta
    return out


def strip_object(obj: dict) -> dict:
    """Return a reduced copy of one Kubernetes object (see module docstring).

    Unknown kinds keep only identifying metadata. Secrets and similar kinds raise ValueError: they
    must never be captured, and failing loudly beats silently writing them to a shareable file.
    """
    kind = obj.get("kind", "")
    if not isinstance(kind, str):
        raise ObjectError(f"kind: expected a string, got {short_repr(kind)}")
    if kind in _REFUSED_KINDS:
        raise ValueError(f"refusing to keep a {kind} in a snapshot")
    if is_kueue(obj):
        return _kueue(obj)
    fn = _BY_KIND.get(kind, _base)
    return fn(obj)
