"""Raw Kubernetes JSON objects -> lean model objects, parsed once.

Only this module and the converters it registers (convert_storage.py, dra.py; the field readers
they share are fields.py) know the API's JSON shapes. Every loader (files, our snapshot format,
live cluster) ends here, so a live read and a saved snapshot give the same model.
"""

# Long module: the core kinds' converters (a pod from its object and from a formatVersion 2 row,
# nodes, PodGroups and CompositePodGroups, PriorityClasses, PDBs, Namespaces) share the per-template
# caches (_shared, _requests_key, _pod_labels) and the resource arithmetic of the pod path, the
# loader's hot loop at 150k pods; the storage and DRA kinds already have modules of their own.

from __future__ import annotations

import dataclasses
import sys
from fractions import Fraction
from typing import Any, Iterable, Iterator

from ...model import (
    ALL,
    SINGLE,
    Affinity,
    CompositePodGroup,
    HostPort,
    LabelSelector,
    Namespace,
    Node,
    Pod,
    PodAffinityTerm,
    PodDisruptionBudget,
    PodGroup,
    PreferredNodeTerm,
    PriorityClass,
    Snapshot,
    SnapshotHeader,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
    new_pod_from_runs,
    positional_constructor,
)
from ...quantity import QuantityError, parse_quantity, scheduler_amount
from .admission import admit
from .convert_storage import STORAGE_CONVERTERS, pod_volumes as _pod_volumes
from .defaulting import defaulted_resources, defaulted_spec
from .dra import CONVERTERS as DRA_CONVERTERS, LISTED as DRA_LISTED, dra_objects, pod_claim_refs, pod_claim_statuses
from .fields import (
    INT32,
    checked_name,
    checked_namespace,
    Nameless,
    ObjectError,
    as_dict,
    as_int,
    as_list,
    as_str,
    label_map,
    meta,
    node_term,
    parse_time,
    requirement,
    short_repr,
)
from ..share.allowlist import value_key as _value_key
from .podrows import LabelSet
from .spectemplates import SpecTemplate, TemplatedSpec

_intern = sys.intern

# schedutil.DefaultMilliCPURequest / DefaultMemoryRequest (pkg/scheduler/util/pod_resources.go)
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


# Replicas share their label set: 150k pods carry ~25k distinct sets (measured on the generated
# L cluster), so each distinct set is converted once and the resulting dict shared (label maps
# are never mutated after load). Only all-string sets are cached: keys are compared as tuples,
# where 1 == 1.0 == True would let differently typed junk values share an entry.
_LABELS_CACHE: dict[tuple, dict[str, str]] = {}


def _pod_labels(v: Any) -> dict[str, str]:
    if type(v) is not dict or not v:
        return label_map(v)
    key = tuple(v.items())
    try:
        hit = _LABELS_CACHE.get(key)
    except TypeError:  # an unhashable (junk) value
        return label_map(v)
    if hit is None:
        hit = label_map(v)
        if all(type(k) is str and type(x) is str for k, x in key):
            if len(_LABELS_CACHE) > 200_000:
                _LABELS_CACHE.clear()
            _LABELS_CACHE[key] = hit
    return hit


_LABEL_OPS = {"In", "NotIn", "Exists", "DoesNotExist"}


def label_selector(v: Any) -> LabelSelector | None:
    if v is None or not isinstance(v, dict):
        return None
    exprs = tuple(requirement(x) for x in as_list(v.get("matchExpressions")))
    invalid = any(e.operator not in _LABEL_OPS for e in exprs) or any(
        (e.operator in ("In", "NotIn") and not e.values) or (e.operator in ("Exists", "DoesNotExist") and e.values)
        for e in exprs
    )
    return LabelSelector(
        match_labels=tuple(sorted((_intern(str(k)), _intern(as_str(x))) for k, x in as_dict(v.get("matchLabels")).items())),
        match_expressions=exprs,
        invalid=invalid,
    )


def _pod_term(v: Any) -> PodAffinityTerm:
    d = as_dict(v)
    return PodAffinityTerm(
        label_selector=label_selector(d.get("labelSelector")),
        topology_key=_intern(as_str(d.get("topologyKey"))),
        namespaces=tuple(as_str(x) for x in as_list(d.get("namespaces"))),
        namespace_selector=label_selector(d.get("namespaceSelector")),
        match_label_keys=tuple(as_str(x) for x in as_list(d.get("matchLabelKeys"))),
        mismatch_label_keys=tuple(as_str(x) for x in as_list(d.get("mismatchLabelKeys"))),
    )


def _weighted(v: Any, what: str = "") -> WeightedPodAffinityTerm:
    d = as_dict(v)
    return WeightedPodAffinityTerm(weight=as_int(d.get("weight"), f"{what}weight", 0, INT32) or 0, term=_pod_term(d.get("podAffinityTerm")))


def _affinity(v: Any, what: str = "") -> Affinity | None:
    if not isinstance(v, dict) or not v:
        return None
    na, pa, paa = as_dict(v.get("nodeAffinity")), as_dict(v.get("podAffinity")), as_dict(v.get("podAntiAffinity"))
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    node_required = None
    if isinstance(req, dict):
        node_required = tuple(node_term(t) for t in as_list(req.get("nodeSelectorTerms")))
    return Affinity(
        node_required=node_required,
        node_preferred=tuple(
            PreferredNodeTerm(weight=as_int(as_dict(t).get("weight"), f"{what}weight", 0, INT32) or 0, preference=node_term(as_dict(t).get("preference")))
            for t in as_list(na.get("preferredDuringSchedulingIgnoredDuringExecution"))
        ),
        pod_affinity_required=tuple(_pod_term(t) for t in as_list(pa.get("requiredDuringSchedulingIgnoredDuringExecution"))),
        pod_affinity_preferred=tuple(_weighted(t, what) for t in as_list(pa.get("preferredDuringSchedulingIgnoredDuringExecution"))),
        pod_anti_affinity_required=tuple(_pod_term(t) for t in as_list(paa.get("requiredDuringSchedulingIgnoredDuringExecution"))),
        pod_anti_affinity_preferred=tuple(_weighted(t, what) for t in as_list(paa.get("preferredDuringSchedulingIgnoredDuringExecution"))),
    )


def _resource_list(v: Any, what: str) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for k, q in as_dict(v).items():
        try:
            amount = parse_quantity(q)
        except QuantityError as e:
            raise ObjectError(f"{what}.{k}: {e}") from None
        if amount < 0:
            raise ObjectError(f"{what}.{k}: must be greater than or equal to 0, got {q!r}")
        out[_intern(str(k))] = amount
    return out


def _add(acc: dict[str, Fraction], other: dict[str, Fraction]) -> None:
    for k, q in other.items():
        acc[k] = acc[k] + q if k in acc else q


def _max(acc: dict[str, Fraction], other: dict[str, Fraction]) -> None:
    for k, q in other.items():
        if q > acc.get(k, Fraction(-1)):
            acc[k] = q


def _aggregate(spec: dict, what: str, nonzero: bool) -> dict[str, Fraction]:
    """Mirrors component-helpers resource.PodRequests: sum of containers, restartable (sidecar)
    init containers added to it and to every later init container, max with each init container,
    pod-level spec.resources (PodLevelResources) for cpu/memory, plus overhead. With `nonzero`,
    containers that set no cpu/memory request count upstream's defaults (GetNonzeroRequests)."""

    def creq(c: Any, i: int, kind: str) -> dict[str, Fraction]:
        r = _resource_list(as_dict(as_dict(as_dict(c).get("resources")).get("requests")), f"{what}: spec.{kind}[{i}].resources.requests")
        if nonzero:
            if "cpu" not in r:
                r["cpu"] = Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000)
            if "memory" not in r:
                r["memory"] = Fraction(DEFAULT_MEMORY_REQUEST)
        return r

    reqs: dict[str, Fraction] = {}
    for i, c in enumerate(as_list(spec.get("containers"))):
        _add(reqs, creq(c, i, "containers"))
    sidecars: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for i, c in enumerate(as_list(spec.get("initContainers"))):
        r = creq(c, i, "initContainers")
        if as_dict(c).get("restartPolicy") == "Always":
            _add(reqs, r)
            _add(sidecars, r)
            eff = dict(sidecars)
        else:
            eff = dict(r)
            _add(eff, sidecars)
        _max(init_max, eff)
    _max(reqs, init_max)
    pod_level = _resource_list(as_dict(as_dict(spec.get("resources")).get("requests")), f"{what}: spec.resources.requests")
    for k in ("cpu", "memory"):
        if k in pod_level:
            reqs[k] = pod_level[k]
    _add(reqs, _resource_list(spec.get("overhead"), f"{what}: spec.overhead"))
    return reqs


INT64_MAX = 2**63 - 1


def _sched_int(k: str, q: Fraction, what: str) -> int:
    """The integer the scheduler keeps (cpu: MilliValue, else Value; both round up). Upstream holds
    these in int64; a larger amount (`cpu: 1e999`) would overflow there and in our int64 matrices."""
    v = scheduler_amount(k, q)
    if v > INT64_MAX:
        raise ObjectError(f"{what}.{k}: value out of range (the scheduler's int64 {'milli-units' if k == 'cpu' else 'units'} overflow)")
    return v


def _to_ints(reqs: dict[str, Fraction], what: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for k, q in reqs.items():
        v = _sched_int(k, q, what)
        if v:
            out[k] = v
    return out


def _conditions_disruption_target(status: dict) -> bool:
    for c in as_list(status.get("conditions")):
        c = as_dict(c)
        if c.get("type") == "DisruptionTarget" and c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler":
            return True
    return False


# Pods of one template share their resource stanzas: cache the effective requests by the JSON of
# exactly the fields PodRequests reads, so a 150k-pod snapshot does the exact (Fraction)
# arithmetic once per distinct template instead of once per pod.
_REQUESTS_CACHE: dict[bytes, tuple[dict[str, int], dict[str, int]]] = {}


def _requests_key(spec: dict) -> bytes | None:
    return _value_key(
        (
            [as_dict(as_dict(c).get("resources")).get("requests") for c in as_list(spec.get("containers"))],
            [(as_dict(as_dict(c).get("resources")).get("requests"), as_dict(c).get("restartPolicy")) for c in as_list(spec.get("initContainers"))],
            spec.get("overhead"),
            as_dict(spec.get("resources")).get("requests"),
        )
    )


def _pod_requests(spec: dict, what: str) -> tuple[dict[str, int], dict[str, int]]:
    key = _requests_key(spec)
    hit = _REQUESTS_CACHE.get(key) if key is not None else None
    if hit is None:
        reqs = _to_ints(_aggregate(spec, what, nonzero=False), f"{what}: effective requests")
        # GetNonzeroRequests differs from the plain sum only where a container leaves cpu or
        # memory unset; without init containers and with both set everywhere it is the same map.
        same = not spec.get("initContainers") and all(
            "cpu" in r and "memory" in r
            for r in (as_dict(as_dict(as_dict(c).get("resources")).get("requests")) for c in as_list(spec.get("containers")))
        )
        nzi = reqs if same else _to_ints(_aggregate(spec, what, nonzero=True), f"{what}: effective requests")
        hit = (reqs, nzi)
        if key is not None:
            if len(_REQUESTS_CACHE) > 200_000:
                _REQUESTS_CACHE.clear()
            _REQUESTS_CACHE[key] = hit
    return hit[0], hit[1]  # shared between pods of one template: never mutated


# Pods of one template carry identical tolerations, affinity and spread constraints: parse each
# distinct stanza once and share the (immutable) result, keyed by its JSON.
_SHARED: dict[tuple[str, bytes], Any] = {}


def _shared(kind: str, raw: Any, build: Any, what: str) -> Any:
    if not raw:
        return build(raw, what)
    vkey = _value_key(raw)
    if vkey is None:
        return build(raw, what)
    key = (kind, vkey)
    hit = _SHARED.get(key)
    if hit is None:
        if len(_SHARED) > 100_000:
            _SHARED.clear()
        hit = _SHARED[key] = build(raw, what)
    return hit


def _affinity_shared(v: Any, what: str) -> Affinity | None:
    return _affinity(v, f"{what}: spec.affinity: ")


def _tolerations(raw: Any, what: str) -> tuple[Toleration, ...]:
    return tuple(
        Toleration(
            key=_intern(as_str(as_dict(t).get("key"))),
            operator=as_str(as_dict(t).get("operator")) or "Equal",
            value=as_str(as_dict(t).get("value")),
            effect=as_str(as_dict(t).get("effect")),
        )
        for t in as_list(raw)
    )


def _spread(raw: Any, what: str) -> tuple[TopologySpreadConstraint, ...]:
    return tuple(
        TopologySpreadConstraint(
            # ValidateTopologySpreadConstraints: maxSkew > 0, minDomains > 0 when set (int32).
            max_skew=as_int(as_dict(t).get("maxSkew"), f"{what}: maxSkew", 1, (1, INT32[1])) or 1,
            topology_key=_intern(as_str(as_dict(t).get("topologyKey"))),
            when_unsatisfiable=as_str(as_dict(t).get("whenUnsatisfiable")) or "DoNotSchedule",
            label_selector=label_selector(as_dict(t).get("labelSelector")),
            min_domains=as_int(as_dict(t).get("minDomains"), f"{what}: minDomains", None, (1, INT32[1])),
            node_affinity_policy=as_str(as_dict(t).get("nodeAffinityPolicy")) or "Honor",
            node_taints_policy=as_str(as_dict(t).get("nodeTaintsPolicy")) or "Ignore",
            match_label_keys=tuple(as_str(x) for x in as_list(as_dict(t).get("matchLabelKeys"))),
        )
        for t in as_list(raw)
    )


def _spec_fields(spec: dict, what: str) -> tuple[tuple, tuple]:
    """The Pod fields that come from the spec apart from nodeName, as the two runs of Pod's field
    order they fill: (scheduler_name .. pod_group_name) and (images .. scheduling_gates). A
    snapshot's PodSpecTemplate is converted through here once for all its pods."""
    spec = defaulted_spec(spec)  # requests from limits, as the API server would (defaulting.py)
    requests, nzi = _pod_requests(spec, what)
    host_ports = []
    for c in as_list(spec.get("containers")):
        for p in as_list(as_dict(c).get("ports")):
            p = as_dict(p)
            # validatePorts: a port number is 1..65535; 0 (or absent) means no host port.
            hp = as_int(p.get("hostPort"), f"{what}: hostPort", 0, (0, 65535)) or 0
            if hp > 0:
                host_ports.append(HostPort(as_str(p.get("hostIP")) or "0.0.0.0", as_str(p.get("protocol")) or "TCP", hp))
    # An absent (or empty/falsy) stanza converts to () / None: skip the helpers for it.
    tols = _shared("tolerations", spec.get("tolerations"), _tolerations, what) if spec.get("tolerations") else ()
    tscs = _shared("topologySpreadConstraints", spec.get("topologySpreadConstraints"), _spread, what) if spec.get("topologySpreadConstraints") else ()
    pgn = as_dict(spec.get("schedulingGroup")).get("podGroupName")
    volumes = as_list(spec.get("volumes"))
    first = (
        as_str(spec.get("schedulerName")) or "default-scheduler",
        as_int(spec.get("priority"), f"{what}: spec.priority", None, INT32),
        as_str(spec.get("priorityClassName")),
        as_str(spec.get("preemptionPolicy")) or None,
        requests,
        (nzi.get("cpu", 0), nzi.get("memory", 0)),
        tuple(host_ports),
        label_map(spec.get("nodeSelector")),
        _shared("affinity", spec.get("affinity"), _affinity_shared, what) if spec.get("affinity") else None,
        tols,
        tscs,
        _intern(pgn) if isinstance(pgn, str) and pgn else None,
    )
    gates = as_list(spec.get("schedulingGates"))
    last = (
        tuple([as_str(as_dict(c).get("image")) for c in as_list(spec.get("containers"))]),
        bool(volumes) and any(isinstance(as_dict(v).get("persistentVolumeClaim"), dict) or isinstance(as_dict(v).get("ephemeral"), dict) for v in volumes),
        _pod_volumes(volumes) if volumes else (),
        pod_claim_refs(spec.get("resourceClaims"), what) if spec.get("resourceClaims") else (),
        tuple([as_str(as_dict(g).get("name")) for g in gates]) if gates else (),
    )
    return first, last


def pod_from(obj: dict) -> Pod:
    # The hot path of every load (150k calls at L): the common shapes are tested inline and the
    # general helpers (fields.meta, fields.as_str, parse_time, ...) only run for what deviates from them.
    md = obj.get("metadata")
    if type(md) is dict and type(md.get("name")) is str and type(md.get("namespace")) is str and type(md.get("uid")) is str:
        name, ns, uid = md["name"], md["namespace"], md["uid"]
        if not name or not ns:
            ns, name, uid = meta(obj, "Pod", True)
        else:
            ns = _intern(checked_namespace(ns, "Pod", checked_name(name, "Pod")))  # as meta() checks (fields.py);
            # ns is repeated 150k times; pod names are unique, interning them buys nothing
    else:
        ns, name, uid = meta(obj, "Pod", True)
        md = obj["metadata"]  # meta checked that it is a map with a name
    spec = obj.get("spec")
    template = spec.template if type(spec) is TemplatedSpec else None
    if template is not None:
        f = template.fields
        if f is None:
            f = template.fields = _spec_fields(template.spec, f"pod {ns}/{name}")
    else:
        spec = as_dict(spec)
        f = _spec_fields(spec, f"pod {ns}/{name}")
    node = spec.get("nodeName")
    node = _intern(node) if type(node) is str else _intern(as_str(node))
    labels = md.get("labels")
    if type(labels) is dict:
        try:
            hit = _LABELS_CACHE.get(tuple(labels.items()))
        except TypeError:
            hit = None
        labels = hit if hit is not None else _pod_labels(labels)
    else:
        labels = label_map(labels)
    status = obj.get("status")
    if type(status) is dict:
        phase = status.get("phase")
        phase = (phase if type(phase) is str else as_str(phase)) or "Pending"
        started = parse_time(status.get("startTime"))
        disruption = _conditions_disruption_target(status) if "conditions" in status else False
        nominated = status.get("nominatedNodeName")
        nominated = _intern(as_str(nominated)) if nominated else ""
        claim_statuses = pod_claim_statuses(status["resourceClaimStatuses"]) if "resourceClaimStatuses" in status else ()
    else:
        phase, started, disruption, nominated, claim_statuses = "Pending", None, False, "", ()
    deleted = md.get("deletionTimestamp")
    # Positional, in Pod's field order (new_pod_from_runs skips the frozen __init__'s per-field setattr).
    return new_pod_from_runs(
        ns,
        name,
        uid or f"{ns}/{name}",
        labels,
        node,
        f[0],
        phase,
        started,
        parse_time(md.get("creationTimestamp")),
        parse_time(deleted) if deleted else None,
        disruption,
        nominated,
        f[1],
        claim_statuses,
    )


# Nodes of one pool report the same allocatable map: convert each distinct (all-string) map once.
_ALLOC_CACHE: dict[tuple, dict[str, int]] = {}


def _node_allocatable(raw: Any, name: str) -> dict[str, int]:
    key = tuple(raw.items()) if type(raw) is dict and all(type(k) is str and type(v) is str for k, v in raw.items()) else None
    hit = _ALLOC_CACHE.get(key) if key is not None else None
    if hit is None:
        hit = {}
        for k, q in _resource_list(raw, f"node {name}: status.allocatable").items():
            hit[k] = _sched_int(k, q, f"node {name}: status.allocatable")
        if key is not None:
            if len(_ALLOC_CACHE) > 10_000:
                _ALLOC_CACHE.clear()
            _ALLOC_CACHE[key] = hit
    return dict(hit)  # a node's own copy: what-if code may build nodes from it


# POSIX seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: what an RFC 3339 time can say
# (and what the report can format back).
_TIME_MIN, _TIME_MAX = -62135596800, 253402300799


def pod_from_row(row: list, template: SpecTemplate, labels: Any) -> Pod | None:
    """The Pod for a formatVersion 2 or 3 pod row (podrows.py) without building its dicts: what
    pod_from gives for the row's expanded item. `labels` is the row's map, None, or its resolved
    LabelSet; a version 3 row's owners (its last field) are not the model's (owners.py reads them).
    None when a value is not of the plain kind (a hand-edited file): the caller then expands the
    row and uses pod_from."""
    ns, name, uid, created, node, phase, started = row[1], row[2], row[3], row[5], row[6], row[7], row[8]
    if type(ns) is not str or not ns or type(name) is not str or not name or type(uid) is not str:
        return None
    checked_namespace(ns, "Pod", checked_name(name, "Pod"))  # as meta() checks an object's (fields.py)
    if (node is not None and type(node) is not str) or (phase is not None and type(phase) is not str):
        return None
    # API timestamps arrive as integer seconds: parse_time of their string is exactly that float.
    # The two fields are dispatched inline, not through a helper: this runs for every pod.
    if type(created) is int:
        if not _TIME_MIN <= created <= _TIME_MAX:
            raise ObjectError(f"pod {ns}/{name}: creationTimestamp: {created} is outside years 1..9999")
        created = float(created)
    elif created is None or type(created) is str:
        created = parse_time(created)
    else:
        return None
    if type(started) is int:
        if not _TIME_MIN <= started <= _TIME_MAX:
            raise ObjectError(f"pod {ns}/{name}: status.startTime: {started} is outside years 1..9999")
        started = float(started)
    elif started is None or type(started) is str:
        started = parse_time(started)
    else:
        return None
    if type(labels) is LabelSet:
        if labels.converted is None:
            labels.converted = _pod_labels(labels.labels)
        labels = labels.converted
    elif labels is None:
        labels = {}
    elif type(labels) is dict:
        try:
            hit = _LABELS_CACHE.get(tuple(labels.items()))
        except TypeError:
            hit = None
        labels = hit if hit is not None else _pod_labels(labels)
    else:
        return None
    ns = _intern(ns)
    f = template.fields
    if f is None:
        f = template.fields = _spec_fields(template.spec, f"pod {ns}/{name}")
    return new_pod_from_runs(
        ns,
        name,
        uid or f"{ns}/{name}",
        labels,
        _intern(node) if node else "",
        f[0],
        phase or "Pending",
        started,
        created,
        None,
        False,
        "",
        f[1],
        (),
    )


def node_from(obj: dict) -> Node:
    _, name, uid = meta(obj, "Node", False)
    md, spec, status = as_dict(obj.get("metadata")), as_dict(obj.get("spec")), as_dict(obj.get("status"))
    alloc_raw = status.get("allocatable")
    if alloc_raw is None:
        alloc_raw = status.get("capacity")
    alloc = _node_allocatable(alloc_raw, name)
    images = {}
    for im in as_list(status.get("images")):
        im = as_dict(im)
        size = as_int(im.get("sizeBytes"), f"node {name}: image size", 0) or 0
        for n in as_list(im.get("names")):
            images[as_str(n)] = size
    return Node(
        name=name,
        uid=uid,
        labels=label_map(md.get("labels")),
        taints=tuple(
            Taint(_intern(as_str(as_dict(t).get("key"))), as_str(as_dict(t).get("value")), as_str(as_dict(t).get("effect")))
            for t in as_list(spec.get("taints"))
        ),
        unschedulable=bool(spec.get("unschedulable")),
        allocatable=alloc,
        images=images,
        creation_timestamp=parse_time(md.get("creationTimestamp")),
    )


def _disruption_mode(spec: dict) -> str:
    dm = spec.get("disruptionMode")
    if isinstance(dm, dict) and "all" in dm:
        return ALL
    if isinstance(dm, str) and dm.lower() == "all":
        return ALL
    return SINGLE


def _topology_keys(spec: dict) -> tuple[str, ...]:
    return tuple(as_str(as_dict(t).get("key")) for t in as_list(as_dict(spec.get("schedulingConstraints")).get("topology")))


def _group_fields(obj: dict, kind: str, count_field: str) -> tuple:
    """The fields PodGroup and CompositePodGroup share, in _GROUP_FIELDS order; `count_field` is
    gang.minCount or gang.minGroupCount."""
    ns, name, uid = meta(obj, kind, True)
    what = f"{kind.lower()} {ns}/{name}"
    md, spec = as_dict(obj.get("metadata")), as_dict(obj.get("spec"))
    sp = as_dict(spec.get("schedulingPolicy"))
    if "gang" in sp:
        policy = "gang"
        count = as_int(as_dict(sp.get("gang")).get(count_field), f"{what}: spec.schedulingPolicy.gang.{count_field}", 1, INT32)
        if count is None or count < 1:
            raise ObjectError(f"{what}: spec.schedulingPolicy.gang.{count_field}: must be greater than or equal to 1")
    else:
        policy, count = "basic", 1
    return (  # the order of _GROUP_FIELDS
        ns,
        name,
        uid or f"{ns}/{name}",
        policy,
        count,
        _disruption_mode(spec),
        as_str(spec.get("parentCompositePodGroupName")) or None,
        as_int(spec.get("priority"), f"{what}: spec.priority", None, INT32),
        as_str(spec.get("priorityClassName")),
        as_str(spec.get("preemptionPolicy")) or None,
        _topology_keys(spec),
        parse_time(md.get("creationTimestamp")),
        as_str(as_dict(spec.get("workloadRef")).get("workloadName")),
        # Always set: the API server stores an unset disruptionMode as single (SetObjectDefaults_PodGroup
        # / _CompositePodGroup, v1beta1 and v1alpha3, v1.37.2 and v1.38.0-beta.0), so a file read here is
        # what the scheduler would see. Only model objects built directly (upstream's unit-test table,
        # tests/test_validation_138.py) have an unset mode. Found by gen2-1000-86 under 1.38: an All
        # parent with an unset child is refused there ("cannot have child ... with Single").
        True,
    )


def pod_group_from(obj: dict) -> PodGroup:
    # positional, in field order (10k PodGroups at L; see model.positional_constructor)
    f = _group_fields(obj, "PodGroup", "minCount")
    return _new_pod_group(*f, bool(as_list(as_dict(obj.get("spec")).get("resourceClaims"))), False)


def composite_pod_group_from(obj: dict) -> CompositePodGroup:
    return _new_composite_pod_group(*_group_fields(obj, "CompositePodGroup", "minGroupCount"), False)


_new_pod_group = positional_constructor(PodGroup)
_new_composite_pod_group = positional_constructor(CompositePodGroup)
# What _group_fields returns, in order: the leading fields of both classes ("count" is
# min_count / min_group_count). Checked at import so a model change cannot shift them silently.
_GROUP_FIELDS = ("namespace", "name", "uid", "policy", "count", "disruption_mode", "parent", "priority",
                 "priority_class_name", "preemption_policy", "topology_keys", "creation_timestamp", "workload_name",
                 "disruption_mode_set")
for _cls, _count, _tail in ((PodGroup, "min_count", ("uses_resource_claims", "priority_admitted")),
                            (CompositePodGroup, "min_group_count", ("priority_admitted",))):
    if tuple(f.name for f in dataclasses.fields(_cls)) != tuple(_count if k == "count" else k for k in _GROUP_FIELDS) + _tail:
        raise RuntimeError(f"convert: {_cls.__name__} fields changed; update _group_fields")


def priority_class_from(obj: dict) -> PriorityClass:
    _, name, _ = meta(obj, "PriorityClass", False)
    v = as_int(obj.get("value"), f"priorityclass {name}: value", None, INT32)
    if v is None:
        raise ObjectError(f"priorityclass {name}: value is required")
    return PriorityClass(
        name=name,
        value=v,
        global_default=bool(obj.get("globalDefault")),
        preemption_policy=as_str(obj.get("preemptionPolicy")) or "PreemptLowerPriority",
    )


def pdb_from(obj: dict) -> PodDisruptionBudget:
    ns, name, _ = meta(obj, "PodDisruptionBudget", True)
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    return PodDisruptionBudget(
        namespace=ns,
        name=name,
        selector=label_selector(spec.get("selector")),
        disruptions_allowed=as_int(status.get("disruptionsAllowed"), f"pdb {ns}/{name}: status.disruptionsAllowed", 0) or 0,
        disrupted_pods=frozenset(as_dict(status.get("disruptedPods")).keys()),
    )


def namespace_from(obj: dict) -> Namespace:
    _, name, _ = meta(obj, "Namespace", False)
    return Namespace(name=name, labels=label_map(as_dict(obj.get("metadata")).get("labels")))


_CONVERTERS = {
    "Pod": ("pods", pod_from),
    "Node": ("nodes", node_from),
    "PodGroup": ("pod_groups", pod_group_from),
    "CompositePodGroup": ("composite_pod_groups", composite_pod_group_from),
    "PriorityClass": ("priority_classes", priority_class_from),
    "PodDisruptionBudget": ("pdbs", pdb_from),
    "Namespace": ("namespaces", namespace_from),
}
# Kinds a `kubectl get ... -o yaml` dump may carry that the scheduler does not read.
IGNORED_KINDS = {"Workload", "Service", "Deployment", "ReplicaSet", "StatefulSet", "Job", "DaemonSet", "ConfigMap", "Event",
                 "VolumeAttachment", "CSIDriver",
                 "RuntimeClass", "LimitRange",  # Event: read by `why-preempted` from the raw items; RuntimeClass,
                 # LimitRange: by create-time admission of hypothetical pods (podadmission.py, via source.build);
                 # Kueue's kinds: by its admission stage (cli/kueuestage.py) and pending (issue 35)
                 "ResourceFlavor", "ClusterQueue", "Cohort", "LocalQueue", "WorkloadPriorityClass", "Topology",
                 "AdmissionCheck"}


# The storage kinds (PVC, PV, StorageClass, CSINode) live in their own module.
_CONVERTERS.update(STORAGE_CONVERTERS)


def _check_unique_uids(snap: Snapshot, source: str) -> None:
    """The engine keys pods by UID (as the scheduler's cache does); two pods sharing one would
    silently merge. A real cluster never has them, so a file that does is an error."""
    pods = snap.pods
    if len({p.uid for p in pods}) == len(pods):
        return
    first: dict[str, Pod] = {}
    for p in pods:
        other = first.setdefault(p.uid, p)
        if other is not p:
            raise ObjectError(
                f"{source}pods {other.namespace}/{other.name} and {p.namespace}/{p.name} have the same metadata.uid {short_repr(p.uid)}"
            )


def _target(snap: Snapshot, kind: str, attr: str) -> list:
    return getattr(dra_objects(snap), attr) if kind in DRA_CONVERTERS else getattr(snap, attr)


def _located(items: Iterable[Any], source: str) -> Iterator[Any]:
    """`items`, with an error the reader raises while decoding one (lean.py: not UTF-8, a number
    beyond Python's limits) naming the file and the item's place."""
    it = iter(items)
    idx = 0
    while True:
        try:
            obj = next(it)
        except StopIteration:
            return
        except ObjectError as e:
            raise ObjectError(f"{source}item {idx}: {e}") from None
        yield obj
        idx += 1


def build_snapshot(items: Iterable[Any], header: SnapshotHeader | None = None, source: str = "") -> Snapshot:
    """Convert raw objects to a Snapshot, then apply priority admission and reference checks."""
    snap = Snapshot(header=header or SnapshotHeader())
    if not source and header is not None and header.source:
        source = f"{header.source}: "  # every error names the file (or cluster) it comes from
    seen: dict[tuple[str, str, str], int] = {}
    ignored: dict[str, int] = {}
    dup_warnings: list[str] = []
    pods = snap.pods
    for idx, obj in enumerate(_located(items, source)):
        if type(obj) is Pod:  # already converted (a formatVersion 2 pod row, files.SnapshotItems.models)
            kind, attr, m = "Pod", "pods", obj
            key = ("Pod", m.namespace, m.name)
            if key not in seen:  # the common case, 150k times at L: no lookups by attribute name
                seen[key] = len(pods)
                pods.append(m)
                continue
        elif not isinstance(obj, dict):
            raise ObjectError(f"{source}item {idx}: expected an object, got {type(obj).__name__}")
        elif isinstance(obj.get("kind"), str) and (obj["kind"] in _CONVERTERS or obj["kind"] in DRA_CONVERTERS):
            kind = obj["kind"]
            attr, conv = _CONVERTERS[kind] if kind in _CONVERTERS else DRA_CONVERTERS[kind]
            try:
                m = conv(obj)
            except Nameless as e:
                raise ObjectError(f"{source}item {idx}: {e}") from None
            except ObjectError as e:
                raise ObjectError(f"{source}{e}") from None
            key = (kind, getattr(m, "namespace", ""), m.name)
            if kind == "Pod" and isinstance(obj.get("spec"), dict):
                names = defaulted_resources(obj["spec"])
                if names:
                    snap.defaulted[(m.namespace, m.name)] = names
        else:
            kind = obj.get("kind")
            if isinstance(kind, str) and kind:
                ignored[kind] = ignored.get(kind, 0) + 1
                continue
            raise ObjectError(f"{source}item {idx}: missing 'kind'")
        if key in seen:
            # Last one wins, as a re-applied manifest would; say so.
            lst = _target(snap, kind, attr)
            lst[seen[key]] = m
            snap.duplicates.add(key)
            dup_warnings.append(f"duplicate {kind} {'/'.join(k for k in key[1:] if k)}: the last definition is used")
            continue
        lst = _target(snap, kind, attr)
        seen[key] = len(lst)
        lst.append(m)
    # A dump concatenated twice would print one line per object: a few examples carry the point.
    if len(dup_warnings) > 5:
        dup_warnings[3:] = [f"... and {len(dup_warnings) - 3} more duplicate objects"]
    snap.warnings.extend(dup_warnings)
    if snap.defaulted:
        eg = ", ".join(f"{ns}/{n} ({', '.join(r)})" for (ns, n), r in list(snap.defaulted.items())[:3])
        more = f" and {len(snap.defaulted) - 3} more" if len(snap.defaulted) > 3 else ""
        snap.warnings.append(f"requests defaulted from limits for {len(snap.defaulted)} pod(s) that set limits only, as the API "
                             f"server does on create (SetDefaults_Pod): {eg}{more}")
    unknown = sorted(k for k in ignored if k not in IGNORED_KINDS)
    if unknown:
        snap.warnings.append(f"ignored objects of kinds the scheduler does not read: {', '.join(unknown)}")
    if snap.dra is None and any(r in snap.header.listed for r in DRA_LISTED):
        dra_objects(snap)  # captured, and there were none: DRA is modelled (nothing allocatable)
    _check_unique_uids(snap, source)
    admit(snap)
    from .references import check_references

    check_references(snap)
    return snap

