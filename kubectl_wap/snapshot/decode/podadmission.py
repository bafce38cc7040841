"""The API server's create-time admission of a new pod, for the hypothetical pods (`whatif -f`,
the flags) that have not been through one. Three default-on plugins change what kube-scheduler
then reads (k8s.io/kubernetes v1.37.2 and v1.38.0-beta.0, pkg/kubeapiserver/options/plugins.go
`AllOrderedPlugins` gives their order; the decoder's `SetDefaults_Pod` runs before any of them):

- **LimitRanger** (plugin/pkg/admission/limitranger/admission.go): every LimitRange of the pod's
  namespace fills the requests and limits a container or init container does not set
  (`PodMutateLimitFunc` / `mergeContainerResources`), from its `Container` items, themselves
  defaulted by `SetDefaults_LimitRangeItem` (default <- max, defaultRequest <- default <- min);
  then `PodValidateLimitFunc` rejects a pod outside a Container or Pod item's min / max /
  maxLimitRequestRatio.
- **DefaultTolerationSeconds** (plugin/pkg/admission/defaulttolerationseconds): tolerations of
  the not-ready and unreachable NoExecute taints (300 s) unless the pod has one.
- **RuntimeClass** (plugin/pkg/admission/runtimeclass/admission.go): the class of
  `runtimeClassName` must exist (`prepareObjects`); its `overhead.podFixed` becomes
  `spec.overhead` (`setOverhead`, which the scheduler adds to the pod's requests) and its
  `scheduling` is merged into the pod's nodeSelector and tolerations (`setScheduling`,
  `tolerations.MergeTolerations`); `validateOverhead` rejects an overhead the class does not set.

Pods read from a cluster (or a dump of one) were admitted when they were created, against the
LimitRanges and RuntimeClasses of that day: they are never re-admitted here. The cluster's
RuntimeClasses and LimitRanges are known only when the input lists them (a capture that read
`runtimeclasses.node.k8s.io` / `limitranges`, or a file holding such objects); otherwise the
plugin that needs them is skipped and the record says so, never guessed.

Everything is data: `admit_pod` returns the admitted pod and an `Admission` record (what changed,
what is unknown, the rejection); snapshot.source words them into warnings and admission errors.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable

from ...quantity import QuantityError, parse_quantity
from .defaulting import defaulted_spec

RUNTIME_CLASSES = "runtimeclasses.node.k8s.io"  # the capture's names (live.py RESOURCES)
LIMIT_RANGES = "limitranges"
NOT_READY, UNREACHABLE = "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"
_MAX_MILLI = 2**63 // 1000  # resource.MaxMilliValue: past it upstream compares Value()s


@dataclass(frozen=True, slots=True)
class ClusterPolicy:
    """What the plugins read from the cluster: RuntimeClasses by name and LimitRanges by
    namespace (sorted by name), each None when the input does not say (not captured)."""

    runtime_classes: dict[str, dict] | None
    limit_ranges: dict[str, tuple[dict, ...]] | None


@dataclass(frozen=True, slots=True)
class Admission:
    """One pod's admission: what each plugin changed (plain phrases), what could not be checked,
    and the API server's refusal (its message, "" when admitted)."""

    changes: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    error: str = ""


def policy_from(objects: Iterable[Any], listed: Iterable[str]) -> ClusterPolicy:
    """The ClusterPolicy of raw RuntimeClass / LimitRange objects; a kind is known when listed by
    the capture or present in the input."""
    listed = set(listed)
    rcs: dict[str, dict] = {}
    by_key: dict[tuple[str, str], dict] = {}
    for o in objects:  # a later object of the same name replaces an earlier one (the file's over the cluster's)
        md = o.get("metadata") if isinstance(o.get("metadata"), dict) else {}
        if o.get("kind") == "RuntimeClass" and isinstance(md.get("name"), str):
            rcs[md["name"]] = o
        elif o.get("kind") == "LimitRange":
            by_key[(md.get("namespace") or "default", str(md.get("name")))] = o
    lrs: dict[str, list[dict]] = {}
    for (ns, _), o in by_key.items():
        lrs.setdefault(ns, []).append(o)
    # UPSTREAM-DIFF: the LimitRanger lists a namespace's LimitRanges from its informer's index,
    # in no set order; where two fill the same default the first one wins. We take them by name.
    ordered = {ns: tuple(sorted(v, key=lambda o: str((o.get("metadata") or {}).get("name")))) for ns, v in lrs.items()}
    return ClusterPolicy(rcs if rcs or RUNTIME_CLASSES in listed else None,
                         ordered if ordered or LIMIT_RANGES in listed else None)


def _d(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _items(lr: dict) -> list[dict]:
    return [i for i in _d(lr.get("spec")).get("limits") or [] if isinstance(i, dict)]


def _defaulted_item(item: dict) -> dict:
    """SetDefaults_LimitRangeItem (pkg/apis/core/v1/defaults.go): for a Container item, a missing
    default limit is the max, a missing default request the default limit, else the min."""
    if item.get("type") != "Container":
        return item
    default = dict(_d(item.get("default")))
    request = dict(_d(item.get("defaultRequest")))
    for k, v in _d(item.get("max")).items():
        default.setdefault(k, v)
    for k, v in default.items():
        request.setdefault(k, v)
    for k, v in _d(item.get("min")).items():
        request.setdefault(k, v)
    return {**item, "default": default, "defaultRequest": request}


def _container_defaults(lr: dict) -> tuple[dict, dict]:
    """defaultContainerResourceRequirements: (requests, limits) of the Container items, a later
    item's value replacing an earlier one's."""
    requests: dict = {}
    limits: dict = {}
    for item in map(_defaulted_item, _items(lr)):
        if item.get("type") == "Container":
            requests.update(item["defaultRequest"])
            limits.update(item["default"])
    return requests, limits


def _merge_container(c: Any, requests: dict, limits: dict) -> tuple[Any, list[str]]:
    """mergeContainerResources: what the container does not set, from the defaults."""
    if not isinstance(c, dict) or not (requests or limits):
        return c, []
    res = _d(c.get("resources"))
    have_r, have_l = _d(res.get("requests")), _d(res.get("limits"))
    # A limit without its request already has it: SetDefaults_Pod copied the limit at decode,
    # before admission (convert.py applies defaulted_spec to what we return, and reports it).
    add_r = {k: v for k, v in requests.items() if k not in have_r and k not in have_l}
    add_l = {k: v for k, v in limits.items() if k not in have_l}
    if not add_r and not add_l:
        return c, []
    name = c.get("name", "?")
    said = ([f"{', '.join(sorted(add_r))} request for container {name}"] if add_r else []) + \
           ([f"{', '.join(sorted(add_l))} limit for container {name}"] if add_l else [])
    return {**c, "resources": {**res, "requests": {**have_r, **add_r}, "limits": {**have_l, **add_l}}}, said


def _parsed(v: Any) -> Fraction:
    return v if isinstance(v, Fraction) else parse_quantity(v)


def _show(v: Any) -> str:
    """A quantity as upstream's Quantity.String() shows a computed total (strings as written)."""
    if not isinstance(v, Fraction):
        return str(v)
    if v.denominator == 1:
        return str(v.numerator)
    milli = v * 1000
    return f"{-((-milli.numerator) // milli.denominator)}m"


def _amounts(a: Any, b: Any, enforced: Any) -> tuple[int, int, int]:
    """requestLimitEnforcedValues: milli-units unless one is past MaxMilliValue, then units."""
    qs = [_parsed(x) if x is not None else Fraction(0) for x in (a, b, enforced)]
    units = [_ceil(q) for q in qs]  # Quantity.Value() rounds up, MilliValue() too
    if all(u <= _MAX_MILLI for u in units):
        return _ceil(qs[0] * 1000), _ceil(qs[1] * 1000), _ceil(qs[2] * 1000)
    return units[0], units[1], units[2]


def _ceil(f: Fraction) -> int:
    return -((-f.numerator) // f.denominator)


def _check(kind: str, item: dict, requests: dict, limits: dict) -> list[str]:
    """minConstraint / maxConstraint / limitRequestRatioConstraint, upstream's messages."""
    errs: list[str] = []
    for k, enforced in _d(item.get("min")).items():
        req, lim, want = _amounts(requests.get(k), limits.get(k), enforced)
        if k not in requests:
            errs.append(f"minimum {k} usage per {kind} is {enforced}.  No request is specified")
        elif req < want:
            errs.append(f"minimum {k} usage per {kind} is {enforced}, but request is {_show(requests[k])}")
        elif k in limits and lim < want:
            errs.append(f"minimum {k} usage per {kind} is {enforced}, but limit is {_show(limits[k])}")
    for k, enforced in _d(item.get("max")).items():
        req, lim, want = _amounts(requests.get(k), limits.get(k), enforced)
        if k not in limits:
            errs.append(f"maximum {k} usage per {kind} is {enforced}.  No limit is specified")
        elif lim > want:
            errs.append(f"maximum {k} usage per {kind} is {enforced}, but limit is {_show(limits[k])}")
        elif k in requests and req > want:
            errs.append(f"maximum {k} usage per {kind} is {enforced}, but request is {_show(requests[k])}")
    for k, enforced in _d(item.get("maxLimitRequestRatio")).items():
        req, lim, _ = _amounts(requests.get(k), limits.get(k), enforced)
        if k not in requests or req == 0:
            errs.append(f"{k} max limit to request ratio per {kind} is {enforced}, but no request is specified or request is 0")
        elif k not in limits or lim == 0:
            errs.append(f"{k} max limit to request ratio per {kind} is {enforced}, but no limit is specified or limit is 0")
        elif Fraction(lim, req) > _parsed(enforced):
            errs.append(f"{k} max limit to request ratio per {kind} is {enforced}, but provided ratio is {lim / req:f}")
    return errs


def _pod_totals(spec: dict, field: str) -> dict[str, Fraction]:
    """podRequests / podLimits of the LimitRanger (spec only, no overhead): containers summed,
    sidecars added, the max with each init container, pod-level resources overriding."""
    def res(c: Any) -> dict[str, Fraction]:
        return {k: parse_quantity(v) for k, v in _d(_d(_d(c).get("resources")).get(field)).items()}

    total: dict[str, Fraction] = {}
    for c in spec.get("containers") or []:
        for k, v in res(c).items():
            total[k] = total.get(k, Fraction(0)) + v
    sidecars: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for c in spec.get("initContainers") or []:
        r = res(c)
        if _d(c).get("restartPolicy") == "Always":
            for k, v in r.items():
                total[k] = total.get(k, Fraction(0)) + v
                sidecars[k] = sidecars.get(k, Fraction(0)) + v
            eff = dict(sidecars)
        else:
            eff = {k: r.get(k, Fraction(0)) + sidecars.get(k, Fraction(0)) for k in set(r) | set(sidecars)}
        for k, v in eff.items():
            init_max[k] = max(init_max.get(k, v), v)
    for k, v in init_max.items():
        total[k] = max(total.get(k, v), v)
    for k, v in _d(_d(spec.get("resources")).get(field)).items():
        if k in ("cpu", "memory") or k.startswith("hugepages-"):  # isSupportedPodLevelResource
            total[k] = parse_quantity(v)
    return total


def _limit_ranger(spec: dict, lrs: tuple[dict, ...]) -> tuple[dict, list[str]]:
    """(spec, changes) of LimitRanger.Admit: every LimitRange of the namespace in turn."""
    changes: list[str] = []
    for lr in lrs:
        requests, limits = _container_defaults(lr)
        lr_name = _d(lr.get("metadata")).get("name")
        for key, what in (("containers", "container"), ("initContainers", "init container")):
            cs = spec.get(key)
            if not isinstance(cs, list):
                continue
            new = []
            for c in cs:
                merged, said = _merge_container(c, requests, limits)
                new.append(merged)
                changes.extend(f"{s.replace('container', what, 1)} (LimitRange {lr_name})" for s in said)
            spec = {**spec, key: new}
    return spec, changes


def _limit_ranger_errors(spec: dict, lrs: tuple[dict, ...]) -> list[str]:
    """LimitRanger.Validate: the aggregated errors of the first LimitRange the pod violates
    (runLimitFunc returns on the first), [] when none does."""
    for lr in lrs:
        errors: list[str] = []
        for item in map(_defaulted_item, _items(lr)):
            if item.get("type") == "Container":
                for key in ("containers", "initContainers"):
                    for c in spec.get(key) or []:
                        r = _d(_d(c).get("resources"))
                        errors.extend(_check("Container", item, _d(r.get("requests")), _d(r.get("limits"))))
            elif item.get("type") == "Pod":
                errors.extend(_check("Pod", item, _pod_totals(spec, "requests"), _pod_totals(spec, "limits")))
        if errors:
            return errors
    return []


def _toleration_seconds(spec: dict) -> dict:
    """DefaultTolerationSeconds Admit: any toleration with the taint's key (or no key) and
    NoExecute (or no effect) counts, whatever its operator. Not reported: TaintToleration reads
    NoExecute taints, but a not-ready or unreachable node also has the NoSchedule taint no
    default toleration covers."""
    tols = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    added = [{"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
             for key in (NOT_READY, UNREACHABLE)
             if not any(t.get("key", "") in (key, "") and t.get("effect", "") in ("NoExecute", "") for t in tols)]
    return {**spec, "tolerations": list(spec.get("tolerations") or []) + added} if added else spec


def _superset(ss: dict, t: dict) -> bool:
    """tolerations.isSuperset (pkg/util/tolerations): ss tolerates everything t does."""
    if ss == t:
        return True
    if t.get("key", "") != ss.get("key", "") and (ss.get("key", "") != "" or ss.get("operator") != "Exists"):
        return False
    if t.get("effect", "") != ss.get("effect", "") and ss.get("effect", "") != "":
        return False
    if ss.get("effect") == "NoExecute" and ss.get("tolerationSeconds") is not None:
        if t.get("tolerationSeconds") is None or t["tolerationSeconds"] > ss["tolerationSeconds"]:
            return False
    op = ss.get("operator") or "Equal"
    if op == "Equal":
        return (t.get("operator") or "Equal") == "Equal" and t.get("value", "") == ss.get("value", "")
    return op == "Exists"


def merge_tolerations(first: list[dict], second: list[dict]) -> list[dict]:
    """tolerations.MergeTolerations: both lists, dropping one another tolerates a superset of."""
    every = list(first) + list(second)
    merged: list[dict] = []
    for i, t in enumerate(every):
        if any(_superset(m, t) for m in merged):
            continue
        if any(t != t2 and _superset(t2, t) for t2 in every[i + 1:]):
            continue
        merged.append(t)
    return merged


def _same_resources(a: dict, b: dict) -> bool:
    """apiequality.Semantic.DeepEqual of two ResourceLists: equal quantities, not strings."""
    try:
        return set(a) == set(b) and all(parse_quantity(a[k]) == parse_quantity(b[k]) for k in a)
    except QuantityError:
        return a == b


def _runtime_class(spec: dict, rc: dict | None) -> tuple[dict, list[str], str]:
    """(spec, changes, error) of setOverhead and setScheduling (RuntimeClass.Admit)."""
    changes: list[str] = []
    name = spec.get("runtimeClassName")
    fixed = _d(_d(rc.get("overhead")).get("podFixed")) if rc and isinstance(_d(rc.get("overhead")).get("podFixed"), dict) else None
    overhead = spec.get("overhead")
    if fixed is not None:
        if isinstance(overhead, dict) and overhead and not _same_resources(fixed, overhead):
            return spec, changes, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
        if not _same_resources(fixed, _d(overhead)):
            changes.append(f"spec.overhead {', '.join(f'{k}={v}' for k, v in sorted(fixed.items()))} (RuntimeClass {name})")
        spec = {**spec, "overhead": dict(fixed)}
    sched = _d(rc.get("scheduling")) if rc else {}
    selector = _d(sched.get("nodeSelector"))
    if selector:
        mine = _d(spec.get("nodeSelector"))
        for k, v in selector.items():
            if k in mine and mine[k] != v:
                return spec, changes, (f"conflict: runtimeClass.scheduling.nodeSelector[{k}] = {v}; "
                                       f"pod.spec.nodeSelector[{k}] = {mine[k]}")
        added = {k: v for k, v in selector.items() if k not in mine}
        if added:
            changes.append(f"nodeSelector {', '.join(f'{k}={v}' for k, v in sorted(added.items()))} (RuntimeClass {name})")
        spec = {**spec, "nodeSelector": {**mine, **selector}}
    extra = [t for t in sched.get("tolerations") or [] if isinstance(t, dict)]
    if extra:
        mine_t = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
        merged = merge_tolerations(mine_t, extra)
        if merged != mine_t:
            changes.append(f"{len([t for t in merged if t not in mine_t])} toleration(s) (RuntimeClass {name})")
        spec = {**spec, "tolerations": merged}
    return spec, changes, ""


def _lacks_cpu_or_memory(spec: dict) -> bool:
    stored = defaulted_spec(spec)
    return any(k not in _d(_d(_d(c).get("resources")).get("requests"))
               for key in ("containers", "initContainers") for c in stored.get(key) or [] for k in ("cpu", "memory"))


def admit_pod(pod: dict, policy: ClusterPolicy) -> tuple[dict, Admission]:
    """The pod as the API server would store it on create (a copy; `pod` is not changed), and the
    record. The plugins run in AllOrderedPlugins order: LimitRanger, DefaultTolerationSeconds,
    RuntimeClass (mutating), then the validating halves of LimitRanger and RuntimeClass."""
    spec = _d(pod.get("spec"))
    ns = _d(pod.get("metadata")).get("namespace") or "default"
    name = _d(pod.get("metadata")).get("name")
    changes: list[str] = []
    unknown: list[str] = []
    lrs: tuple[dict, ...] = ()
    if policy.limit_ranges is None:
        if _lacks_cpu_or_memory(spec):  # what a LimitRange's defaults usually fill: only then can it matter here
            unknown.append("LimitRanges (not in the input): a namespace default request for cpu or memory is not applied")
    else:
        lrs = policy.limit_ranges.get(ns, ())
    error = ""
    try:
        spec, said = _limit_ranger(spec, lrs)
        changes.extend(said)
        spec = _toleration_seconds(spec)
        rc_name = spec.get("runtimeClassName")
        rc: dict | None = None
        if isinstance(rc_name, str) and rc_name:
            if policy.runtime_classes is None:
                unknown.append(f"RuntimeClass {rc_name} (RuntimeClasses are not in the input): its overhead and "
                               "scheduling constraints are not applied")
            elif rc_name not in policy.runtime_classes:
                error = f'pod rejected: RuntimeClass "{rc_name}" not found'  # prepareObjects
            else:
                rc = policy.runtime_classes[rc_name]
                spec, said, error = _runtime_class(spec, rc)
                changes.extend(said)
        if not error:  # the validating phase runs only after every mutating plugin admitted the pod
            errors = _limit_ranger_errors(defaulted_spec(spec), lrs)  # as stored: SetDefaults_Pod's requests too
            # utilerrors.NewAggregate: one error bare, several as [a, b]
            error = (errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]") if errors else ""
        fixed = _d(rc.get("overhead")).get("podFixed") if rc else None
        if not error and fixed is None and spec.get("overhead") is not None and policy.runtime_classes is not None:
            error = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"  # validateOverhead
    except (QuantityError, TypeError) as e:
        error = f"a LimitRange or RuntimeClass of the input cannot be read: {e}"
    if error:
        error = f'pods "{name}" is forbidden: {error}'  # admission.NewForbidden
    out = copy.copy(pod)
    out["spec"] = spec
    return out, Admission(tuple(changes), tuple(unknown), error)
