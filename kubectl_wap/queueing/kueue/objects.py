"""Kueue's objects (kueue.x-k8s.io/v1beta2, the storage version of sigs.k8s.io/kueue v0.17.0) as
frozen records, read from their JSON form.

Absent fields get the CRD defaults the API server applies (apis/kueue/v1beta2
clusterqueue_types.go `+kubebuilder:default` markers), so an object read from a cluster and one
written by hand mean the same. Inputs that need what we do not model are refused with one line
(KueueNotModelled), never answered wrongly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from fractions import Fraction
from typing import Any

from kubectl_wap.errors import UserError
from kubectl_wap.model import Taint, Toleration
from kubectl_wap.quantity import QuantityError, parse_quantity, resource_amount, scheduler_amount

FlavorResource = tuple[str, str]  # (flavor, resource): upstream's resources.FlavorResource

# Preemption policies (v1beta2 PreemptionPolicy, BorrowWithinCohortPolicy) and fungibility.
NEVER = "Never"
LOWER_PRIORITY = "LowerPriority"
LOWER_OR_NEWER_EQUAL_PRIORITY = "LowerOrNewerEqualPriority"
ANY = "Any"
TRY_NEXT_FLAVOR = "TryNextFlavor"
MAY_STOP_SEARCH = "MayStopSearch"
BORROWING_OVER_PREEMPTION = "BorrowingOverPreemption"
PREEMPTION_OVER_BORROWING = "PreemptionOverBorrowing"
DEFAULT_PRIORITY = 0  # pkg/constants DefaultPriority: a Workload without spec.priority
# Fair sharing preemption strategies (config v1beta2 PreemptionStrategy): KEP-1714 rules S2-a, S2-b.
LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"
# preemption.go parseStrategies: the strategies when the Configuration names none.
DEFAULT_FAIR_STRATEGIES = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)


class KueueInputError(UserError):
    """A kueue.x-k8s.io object we cannot read."""


class KueueNotModelled(UserError):
    """The input needs a Kueue feature we do not model yet: refused rather than answered wrongly."""


@dataclass(frozen=True, slots=True)
class ResourceQuota:
    nominal: int
    borrowing_limit: int | None
    lending_limit: int | None


@dataclass(frozen=True, slots=True)
class ResourceGroup:
    covered: tuple[str, ...]
    flavors: tuple[str, ...]  # in the order flavor assignment tries them


@dataclass(frozen=True, slots=True)
class ResourceFlavor:
    name: str
    node_labels: tuple[tuple[str, str], ...]
    node_taints: tuple[Taint, ...]
    tolerations: tuple[Toleration, ...]


@dataclass(frozen=True, slots=True)
class Preemption:
    within_cluster_queue: str = NEVER
    reclaim_within_cohort: str = NEVER
    borrow_within_cohort: str = NEVER
    max_priority_threshold: int | None = None


@dataclass(frozen=True, slots=True)
class FlavorFungibility:
    when_can_borrow: str = MAY_STOP_SEARCH
    when_can_preempt: str = TRY_NEXT_FLAVOR
    preference: str | None = None


@dataclass(frozen=True, slots=True)
class LabelSelector:
    match_labels: tuple[tuple[str, str], ...]
    match_expressions: tuple[tuple[str, str, tuple[str, ...]], ...]  # (key, operator, values)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """metav1.LabelSelectorAsSelector(...).Matches."""
        if any(labels.get(k) != v for k, v in self.match_labels):
            return False
        for key, op, values in self.match_expressions:
            has = key in labels
            if op == "In" and not (has and labels[key] in values):
                return False
            if op == "NotIn" and has and labels[key] in values:
                return False
            if op == "Exists" and not has:
                return False
            if op == "DoesNotExist" and has:
                return False
        return True


@dataclass(frozen=True, slots=True)
class ClusterQueue:
    name: str
    cohort: str | None
    resource_groups: tuple[ResourceGroup, ...]
    quotas: tuple[tuple[FlavorResource, ResourceQuota], ...]
    preemption: Preemption
    fungibility: FlavorFungibility
    queueing_strategy: str
    # spec.admissionChecksStrategy.admissionChecks, each with the AdmissionCheck it names once
    # read_objects has resolved it (admissionchecks.py decides what they do).
    admission_checks: tuple[CheckRule, ...]
    # None: upstream's nil selector, which matches no namespace (LabelSelectorAsSelector(nil)).
    namespace_selector: LabelSelector | None
    stopped: bool
    fair_weight: float = 1.0  # spec.fairSharing.weight (default 1): only read with fair sharing on


@dataclass(frozen=True, slots=True)
class Cohort:
    name: str
    parent: str | None
    quotas: tuple[tuple[FlavorResource, ResourceQuota], ...]
    fair_weight: float = 1.0  # spec.fairSharing.weight (default 1)


@dataclass(frozen=True, slots=True)
class LocalQueue:
    namespace: str
    name: str
    cluster_queue: str
    stopped: bool


@dataclass(frozen=True, slots=True)
class PodSet:
    name: str
    count: int
    requests: tuple[tuple[str, int], ...]  # per pod, in Kueue's units (cpu milli, else Value())
    node_selector: tuple[tuple[str, str], ...]
    tolerations: tuple[Toleration, ...]

    def total(self, count: int | None = None) -> dict[str, int]:
        n = self.count if count is None else count
        return {r: q * n for r, q in self.requests}


@dataclass(frozen=True, slots=True)
class PodSetAdmission:
    name: str
    flavors: tuple[tuple[str, str], ...]  # (resource, flavor)
    usage: tuple[tuple[str, int], ...]  # the podset's total, status.admission resourceUsage
    count: int


@dataclass(frozen=True, slots=True)
class Admission:
    cluster_queue: str
    pod_sets: tuple[PodSetAdmission, ...]


@dataclass(frozen=True, slots=True)
class Workload:
    namespace: str
    name: str
    uid: str
    queue_name: str
    priority: int
    created: float  # creationTimestamp, seconds since the epoch (queue order, preemption policy)
    pod_sets: tuple[PodSet, ...]
    active: bool
    admission: Admission | None  # set with QuotaReserved=True
    quota_reserved_at: float | None  # the QuotaReserved condition's lastTransitionTime
    evicted: bool
    finished: bool
    owner: tuple[str, str] | None = None  # (kind, name) of its controller (ownerReferences): the job
    # status.admissionChecks: (check name, state: Pending, Ready, Retry, Rejected)
    check_states: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def usage(self) -> dict[FlavorResource, int]:
        """The quota an admitted Workload holds: its admission's resourceUsage per flavor
        (workload.totalRequestsFromAdmission, then Info.Usage)."""
        out: dict[FlavorResource, int] = {}
        if self.admission is None:
            return out
        flavors_of = {ps.name: dict(ps.flavors) for ps in self.admission.pod_sets}
        for ps in self.admission.pod_sets:
            for res, q in ps.usage:
                flavor = flavors_of[ps.name].get(res)
                if flavor is not None:
                    out[(flavor, res)] = out.get((flavor, res), 0) + q
        return out


@dataclass(frozen=True, slots=True)
class KueueObjects:
    flavors: Mapping[str, ResourceFlavor]
    cluster_queues: Mapping[str, ClusterQueue]
    cohorts: Mapping[str, Cohort]
    local_queues: Mapping[str, LocalQueue]  # by namespace/name
    workloads: tuple[Workload, ...]
    namespaces: Mapping[str, Mapping[str, str]]  # name -> labels, of the Namespaces in the input
    fair_sharing: bool = False
    fair_strategies: tuple[str, ...] = DEFAULT_FAIR_STRATEGIES


# ---- reading the JSON form ----------------------------------------------------------------------


def _where(kind: str, obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{kind} {ns + '/' if ns else ''}{meta.get('name', '?')}"


def _amount(resource: str, text: object, where: str) -> int:
    try:
        return resource_amount(resource, text)
    except QuantityError as e:
        raise KueueInputError(f"{where}: {resource}: {e}") from None


def _time(text: object, where: str) -> float:
    if not text:
        return 0.0
    try:
        return datetime.fromisoformat(str(text)).timestamp()
    except ValueError:
        raise KueueInputError(f"{where}: bad timestamp {text!r}") from None


def _quotas(groups: Sequence[Mapping[str, Any]], where: str) -> tuple[tuple[ResourceGroup, ...], tuple[tuple[FlavorResource, ResourceQuota], ...]]:
    rgs: list[ResourceGroup] = []
    quotas: list[tuple[FlavorResource, ResourceQuota]] = []
    for g in groups or ():
        flavors = []
        for fq in g.get("flavors") or ():
            flavors.append(str(fq["name"]))
            for rq in fq.get("resources") or ():
                res = str(rq["name"])
                bl, ll = rq.get("borrowingLimit"), rq.get("lendingLimit")
                quotas.append(((str(fq["name"]), res), ResourceQuota(
                    _amount(res, rq.get("nominalQuota", 0), where),
                    None if bl is None else _amount(res, bl, where),
                    None if ll is None else _amount(res, ll, where))))
        rgs.append(ResourceGroup(tuple(str(r) for r in g.get("coveredResources") or ()), tuple(flavors)))
    return tuple(rgs), tuple(quotas)


def _tolerations(items: Sequence[Mapping[str, Any]] | None) -> tuple[Toleration, ...]:
    return tuple(Toleration(str(t.get("key", "")), str(t.get("operator", "Equal")), str(t.get("value", "")),
                            str(t.get("effect", ""))) for t in items or ())


def _selector(sel: Mapping[str, Any] | None) -> LabelSelector | None:
    if sel is None:
        return None
    return LabelSelector(
        tuple(sorted((str(k), str(v)) for k, v in (sel.get("matchLabels") or {}).items())),
        tuple((str(e["key"]), str(e["operator"]), tuple(str(v) for v in e.get("values") or ()))
              for e in sel.get("matchExpressions") or ()))


def read_flavor(obj: Mapping[str, Any]) -> ResourceFlavor:
    spec = obj.get("spec") or {}
    where = _where("ResourceFlavor", obj)
    if spec.get("topologyName"):
        raise KueueNotModelled(f"{where}: topology-aware scheduling (spec.topologyName) is not modelled yet")
    return ResourceFlavor(
        str(obj["metadata"]["name"]),
        tuple(sorted((str(k), str(v)) for k, v in (spec.get("nodeLabels") or {}).items())),
        tuple(Taint(str(t["key"]), str(t.get("value", "")), str(t["effect"])) for t in spec.get("nodeTaints") or ()),
        _tolerations(spec.get("tolerations")))


def read_cluster_queue(obj: Mapping[str, Any]) -> ClusterQueue:
    spec = obj.get("spec") or {}
    where = _where("ClusterQueue", obj)
    if spec.get("admissionChecks"):
        # v1beta1's field; v1beta2 (what Kueue v0.17.0 stores and serves) converts it to
        # admissionChecksStrategy (apis/kueue/v1beta1 clusterqueue_conversion.go).
        raise KueueInputError(f"{where}: spec.admissionChecks is v1beta1's field; v1beta2 names the checks under "
                              "spec.admissionChecksStrategy.admissionChecks[].name")
    if (spec.get("admissionScope") or {}).get("admissionMode") == "UsageBasedAdmissionFairSharing":
        raise KueueNotModelled(f"{where}: admission fair sharing is not modelled yet")
    rgs, quotas = _quotas(spec.get("resourceGroups") or (), where)
    p = spec.get("preemption") or {}
    bwc = p.get("borrowWithinCohort") or {}
    ff = spec.get("flavorFungibility") or {}
    return ClusterQueue(
        name=str(obj["metadata"]["name"]),
        cohort=str(spec["cohortName"]) if spec.get("cohortName") else None,
        resource_groups=rgs,
        quotas=quotas,
        preemption=Preemption(str(p.get("withinClusterQueue") or NEVER), str(p.get("reclaimWithinCohort") or NEVER),
                              str(bwc.get("policy") or NEVER),
                              None if bwc.get("maxPriorityThreshold") is None else int(bwc["maxPriorityThreshold"])),
        fungibility=FlavorFungibility(str(ff.get("whenCanBorrow") or MAY_STOP_SEARCH),
                                      str(ff.get("whenCanPreempt") or TRY_NEXT_FLAVOR),
                                      str(ff["preference"]) if ff.get("preference") else None),
        queueing_strategy=str(spec.get("queueingStrategy") or "BestEffortFIFO"),
        admission_checks=_check_rules(spec, rgs),
        namespace_selector=_selector(spec.get("namespaceSelector")),
        stopped=str(spec.get("stopPolicy") or "None") != "None",
        fair_weight=_fair_weight(spec, where),
    )


def read_cohort(obj: Mapping[str, Any]) -> Cohort:
    spec = obj.get("spec") or {}
    where = _where("Cohort", obj)
    _, quotas = _quotas(spec.get("resourceGroups") or (), where)
    return Cohort(str(obj["metadata"]["name"]), str(spec["parentName"]) if spec.get("parentName") else None, quotas,
                  _fair_weight(spec, where))


def _fair_weight(spec: Mapping[str, Any], where: str) -> float:
    """fair_sharing.go parseFairWeight: spec.fairSharing.weight, a Quantity (AsFloat64Slow), 1 when
    absent. Read whatever the configuration says: it only matters with fair sharing on."""
    weight = (spec.get("fairSharing") or {}).get("weight")
    if weight is None:
        return 1.0
    try:
        value = parse_quantity(weight)
    except QuantityError as e:
        raise KueueInputError(f"{where}: spec.fairSharing.weight: {e}") from None
    if value < 0:
        raise KueueInputError(f"{where}: spec.fairSharing.weight must not be negative (the CRD refuses {weight})")
    return float(value)


def read_local_queue(obj: Mapping[str, Any]) -> LocalQueue:
    spec = obj.get("spec") or {}
    meta = obj["metadata"]
    return LocalQueue(str(meta.get("namespace", "default")), str(meta["name"]), str(spec.get("clusterQueue", "")),
                      str(spec.get("stopPolicy") or "None") != "None")


def pod_requests(spec: Mapping[str, Any], where: str) -> tuple[tuple[str, int], ...]:
    """k8s.io/component-helpers resource.PodRequests (as workload.totalRequestsFromPodSets calls
    it), after Kueue's limits-as-missing-requests: the containers' sum, at least each init container's need (restartable init containers,
    sidecars, run beside what starts after them), plus the pod overhead."""

    def reqs(c: Mapping[str, Any]) -> dict[str, Fraction]:
        # workload.UseLimitsAsMissingRequestsInPod (AdjustResources, before the queue manager
        # reads a Workload): a resource with a limit and no request is requested at its limit.
        res = c.get("resources") or {}
        r = {**(res.get("limits") or {}), **(res.get("requests") or {})}
        try:
            return {str(k): parse_quantity(v) for k, v in r.items()}
        except QuantityError as e:
            raise KueueInputError(f"{where}: {e}") from None

    total: dict[str, Fraction] = {}
    for c in spec.get("containers") or ():
        for k, v in reqs(c).items():
            total[k] = total.get(k, Fraction(0)) + v
    init_max: dict[str, Fraction] = {}
    sidecars: dict[str, Fraction] = {}
    for c in spec.get("initContainers") or ():
        r = reqs(c)
        if c.get("restartPolicy") == "Always":
            for k, v in r.items():
                sidecars[k] = sidecars.get(k, Fraction(0)) + v
                total[k] = total.get(k, Fraction(0)) + v
            need = dict(sidecars)
        else:
            need = {k: v + sidecars.get(k, Fraction(0)) for k, v in r.items()}
        for k, v in need.items():
            init_max[k] = max(init_max.get(k, Fraction(0)), v)
    for k, v in init_max.items():
        total[k] = max(total.get(k, Fraction(0)), v)
    for k, v in (spec.get("overhead") or {}).items():
        total[str(k)] = total.get(str(k), Fraction(0)) + parse_quantity(v)
    return tuple(sorted((k, scheduler_amount(k, v)) for k, v in total.items()))


def _conditions(status: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(c.get("type")): c for c in status.get("conditions") or ()}


def read_workload(obj: Mapping[str, Any]) -> Workload:
    meta = obj["metadata"]
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    where = _where("Workload", obj)
    pod_sets = []
    for ps in spec.get("podSets") or ():
        pspec = (ps.get("template") or {}).get("spec") or {}
        # workload.IsExplicitlyRequestingTAS: a Job's Workload always carries a topologyRequest with
        # its podIndexLabel (jobframework podSetTopologyRequestBuilder.Build), inert without TAS.
        tr = ps.get("topologyRequest") or {}
        if any(tr.get(k) is not None for k in ("required", "preferred", "unconstrained", "podSetSliceRequiredTopology",
                                                "podSetSliceSize", "podSetGroupName")) or tr.get("podsetSliceRequiredTopologyConstraints"):
            raise KueueNotModelled(f"{where}: topology-aware scheduling (podSets[].topologyRequest) is not modelled yet")
        if ps.get("minCount") is not None:
            raise KueueNotModelled(f"{where}: partial admission (podSets[].minCount) is not modelled yet")
        if ((pspec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"):
            raise KueueNotModelled(f"{where}: required node affinity in flavor assignment is not modelled yet (nodeSelector is)")
        if pspec.get("resourceClaims"):
            raise KueueNotModelled(f"{where}: DRA resource claims in Kueue quota are not modelled yet")
        pod_sets.append(PodSet(str(ps.get("name", "main")), int(ps.get("count", 1)), pod_requests(pspec, where),
                               tuple(sorted((str(k), str(v)) for k, v in (pspec.get("nodeSelector") or {}).items())),
                               _tolerations(pspec.get("tolerations"))))
    conds = _conditions(status)

    def true(t: str) -> bool:
        return str((conds.get(t) or {}).get("status")) == "True"

    admission = None
    reserved_at = None
    if true("QuotaReserved"):
        adm = status.get("admission")
        if not adm:
            raise KueueInputError(f"{where}: QuotaReserved is True but status.admission is missing")
        counts = {p.name: p.count for p in pod_sets}
        psas = []
        for psa in adm.get("podSetAssignments") or ():
            name = str(psa["name"])
            usage = tuple(sorted((str(r), _amount(str(r), q, where)) for r, q in (psa.get("resourceUsage") or {}).items()))
            psas.append(PodSetAdmission(name, tuple(sorted((str(r), str(f)) for r, f in (psa.get("flavors") or {}).items())),
                                        usage, int(psa.get("count", counts.get(name, 1)))))
        admission = Admission(str(adm["clusterQueue"]), tuple(psas))
        reserved_at = _time(conds["QuotaReserved"].get("lastTransitionTime"), where)
    if (meta.get("annotations") or {}).get("kueue.x-k8s.io/priority-boost"):
        raise KueueNotModelled(f"{where}: the priority-boost annotation is not modelled yet")
    return Workload(
        namespace=str(meta.get("namespace", "default")),
        name=str(meta["name"]),
        uid=str(meta.get("uid", "")),
        queue_name=str(spec.get("queueName", "")),
        priority=int(spec["priority"]) if spec.get("priority") is not None else DEFAULT_PRIORITY,
        created=_time(meta.get("creationTimestamp"), where),
        pod_sets=tuple(pod_sets),
        active=spec.get("active", True) is not False,
        admission=admission,
        quota_reserved_at=reserved_at,
        evicted=true("Evicted"),
        finished=true("Finished"),
        owner=_controller(meta),
        check_states=tuple((str(c.get("name", "")), str(c.get("state") or "Pending")) for c in status.get("admissionChecks") or ()),
    )


def _controller(meta: Mapping[str, Any]) -> tuple[str, str] | None:
    refs = [r for r in meta.get("ownerReferences") or () if isinstance(r, Mapping)]
    ref = next((r for r in refs if r.get("controller") is True), refs[0] if refs else None)
    return (str(ref.get("kind")), str(ref.get("name"))) if ref else None


def read_objects(case: Mapping[str, Any]) -> KueueObjects:
    """The objects of one case or snapshot section: lists under resourceFlavors, clusterQueues,
    cohorts, localQueues, workloads, namespaces; fairSharing (bool) says whether Kueue's
    configuration enables fair sharing, fairSharingStrategies (optional) its preemptionStrategies."""
    fair = bool(case.get("fairSharing"))
    strategies = tuple(str(s) for s in case.get("fairSharingStrategies") or ()) or DEFAULT_FAIR_STRATEGIES
    flavors = {f.name: f for f in _each(case, "resourceFlavors", "ResourceFlavor", read_flavor)}
    cqs = {c.name: c for c in _each(case, "clusterQueues", "ClusterQueue", read_cluster_queue)}
    cohorts = {c.name: c for c in _each(case, "cohorts", "Cohort", read_cohort)}
    lqs = {f"{q.namespace}/{q.name}": q for q in _each(case, "localQueues", "LocalQueue", read_local_queue)}
    checks = {c.name: c for c in _each(case, "admissionChecks", "AdmissionCheck", read_admission_check)}
    cqs = {n: replace(c, admission_checks=tuple(replace(r, check=checks.get(r.name)) for r in c.admission_checks))
           for n, c in cqs.items()}
    namespaces = {n[0]: n[1] for n in _each(case, "namespaces", "Namespace",
                                             lambda o: (str(o["metadata"]["name"]), dict(o["metadata"].get("labels") or {})))}
    return KueueObjects(flavors, cqs, cohorts, lqs, tuple(_each(case, "workloads", "Workload", read_workload)), namespaces, fair,
                        strategies)


def _each(case: Mapping[str, Any], key: str, kind: str, read: Any) -> list[Any]:
    """read() of every object under `key`; a malformed one (a missing name, a string where a map
    belongs, ...) is one line naming the object, not a traceback."""
    out = []
    for o in case.get(key) or ():
        try:
            out.append(read(o))
        except (KueueInputError, KueueNotModelled):
            raise
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
            raise KueueInputError(f"{_where(kind, o) if isinstance(o, Mapping) else kind}: malformed ({what})") from None
    return out


KUEUE_GROUP = "kueue.x-k8s.io"
_KIND_KEYS = {"ResourceFlavor": "resourceFlavors", "ClusterQueue": "clusterQueues", "Cohort": "cohorts",
              "LocalQueue": "localQueues", "Workload": "workloads", "WorkloadPriorityClass": "workloadPriorityClasses",
              "AdmissionCheck": "admissionChecks"}


def objects_from_items(items: Sequence[Any], fair_sharing: bool = False,
                       fair_strategies: Sequence[str] = ()) -> KueueObjects | None:
    """The Kueue objects among a dump's items (kueue.x-k8s.io/v1beta2, the storage version), with
    the Namespaces' labels; None when there is none (not a Kueue cluster). Topologies are read
    only through what refers to them (a flavor's topologyName), which is refused."""
    case: dict[str, Any] = {key: [] for key in _KIND_KEYS.values()}
    case["namespaces"] = []
    case["fairSharing"] = fair_sharing
    case["fairSharingStrategies"] = list(fair_strategies)
    found = False
    for o in items:
        if not isinstance(o, Mapping):
            continue
        api, kind = str(o.get("apiVersion") or ""), o.get("kind")
        if kind == "Namespace" and api == "v1":
            case["namespaces"].append(o)
        if not api.startswith(KUEUE_GROUP + "/"):
            continue
        found = True
        where = _where(str(kind), o)
        if api != f"{KUEUE_GROUP}/v1beta2":
            raise KueueInputError(f"{where}: {api} is not read; Kueue v0.17.0 stores and serves {KUEUE_GROUP}/v1beta2 "
                                  "(kubectl get ... -o yaml returns it)")
        if isinstance(kind, str) and kind in _KIND_KEYS:  # a list kind (malformed) is the loader's to report
            case[_KIND_KEYS[kind]].append(o)
    return read_objects(case) if found else None


def workload_priority_classes(items: Sequence[Any]) -> dict[str, int]:
    """WorkloadPriorityClass name -> value."""
    return {str(o["metadata"]["name"]): int(o.get("value", 0)) for o in items
            if isinstance(o, Mapping) and o.get("kind") == "WorkloadPriorityClass"
            and str(o.get("apiVersion", "")).startswith(KUEUE_GROUP + "/")}


# ---- admission checks (admissionchecks.py decides what they do) ---------------------------------

PROVISIONING_REQUEST_CONTROLLER = "kueue.x-k8s.io/provisioning-request"  # v1beta2 ProvisioningRequestControllerName
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"  # v1beta2 MultiKueueControllerName


@dataclass(frozen=True, slots=True)
class AdmissionCheck:
    """What Kueue's cache keeps of an AdmissionCheck (pkg/cache/scheduler
    Cache.AddOrUpdateAdmissionCheck): its controller and whether its Active condition is True."""

    name: str
    controller: str
    active: bool


@dataclass(frozen=True, slots=True)
class CheckRule:
    """One entry of a ClusterQueue's spec.admissionChecksStrategy.admissionChecks."""

    name: str
    # onFlavors, or every flavor of the ClusterQueue's resource groups when empty
    # (pkg/util/admissioncheck NewAdmissionChecks)
    flavors: frozenset[str]
    check: AdmissionCheck | None = None  # None: no AdmissionCheck of that name (or not resolved yet)


def _check_rules(spec: Mapping[str, Any], rgs: Sequence[ResourceGroup]) -> tuple[CheckRule, ...]:
    every = frozenset(f for g in rgs for f in g.flavors)
    rules = {}
    for r in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or ():
        on = frozenset(str(f) for f in r.get("onFlavors") or ())
        rules[str(r["name"])] = CheckRule(str(r["name"]), on or every)  # a map in Go: the last one of a name wins
    return tuple(rules.values())


def read_admission_check(obj: Mapping[str, Any]) -> AdmissionCheck:
    conds = _conditions(obj.get("status") or {})
    return AdmissionCheck(str(obj["metadata"]["name"]), str((obj.get("spec") or {}).get("controllerName") or ""),
                          str((conds.get("Active") or {}).get("status")) == "True")
