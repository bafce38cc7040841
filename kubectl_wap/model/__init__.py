"""Lean, immutable cluster model: exactly the fields kube-scheduler reads.

Built once by the loaders in :mod:`kubectl_wap.snapshot` from raw Kubernetes JSON; everything
downstream (framework, preemption, report) reads only these objects. Resources are integers keyed by
resource name: ``cpu`` in milli-cores, ``memory``/``ephemeral-storage``/hugepages in bytes,
everything else (``nvidia.com/gpu``, ``pods``) as counts. Timestamps are POSIX seconds (float) or
``None``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable, Mapping

from .terms import NodeSelectorTerm, Requirement
from .storage import CSINode, PersistentVolume, PersistentVolumeClaim, PodVolume, StorageClass

# Label maps are plain dicts (never mutated after load); frozen dataclasses keep the attribute
# bindings immutable.
Labels = Mapping[str, str]

PREEMPT_LOWER = "PreemptLowerPriority"
NEVER = "Never"

SINGLE = "single"
ALL = "all"

# API constants (scheduling/v1beta1 types.go)
WORKLOAD_MAX_TREE_DEPTH = 4
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}
HIGHEST_USER_DEFINABLE_PRIORITY = 1000000000


@dataclass(slots=True, frozen=True)
class Taint:
    """A node taint (core/v1 Taint): what TaintToleration filters and scores on."""

    key: str
    value: str
    effect: str  # NoSchedule | PreferNoSchedule | NoExecute


@dataclass(slots=True, frozen=True)
class Toleration:
    """A pod toleration (core/v1 Toleration), matched as v1helper.TolerationsTolerateTaint does."""

    key: str = ""
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # empty matches every effect

    def tolerates(self, taint: Taint) -> bool:
        """k8s.io/api core/v1 Toleration.ToleratesTaint, the one rule for kube-scheduler's
        TaintToleration (framework/plugins/selectors.py) and Kueue's flavor taints
        (queueing/kueue/flavors.py: corev1helpers.TolerationsTolerateTaint in
        flavorassigner.checkFlavorForPodSets): an empty effect matches every effect, an empty key
        every key (with Exists), Exists ignores the value, Equal (or empty) compares it.
        UPSTREAM-DIFF: the alpha Gt/Lt toleration operators (TaintTolerationComparisonOperators,
        off by default) are not supported; such tolerations tolerate nothing, as with the gate off."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        op = self.operator
        if op == "" or op == "Equal":
            return self.value == taint.value
        return op == "Exists"


@dataclass(slots=True, frozen=True)
class LabelSelector:
    """A metav1.LabelSelector: matchLabels and matchExpressions, ANDed."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()
    # A selector that failed to parse (unknown operator, ...); upstream skips such PDBs/terms.
    invalid: bool = False

    @property
    def empty(self) -> bool:
        return not self.match_labels and not self.match_expressions


@dataclass(slots=True, frozen=True)
class PreferredNodeTerm:
    """One preferredDuringSchedulingIgnoredDuringExecution node affinity term and its weight."""

    weight: int
    preference: NodeSelectorTerm


@dataclass(slots=True, frozen=True)
class PodAffinityTerm:
    """A pod (anti-)affinity term (core/v1 PodAffinityTerm) as InterPodAffinity reads it."""

    label_selector: LabelSelector | None
    topology_key: str
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class WeightedPodAffinityTerm:
    """A preferred pod (anti-)affinity term and its weight (core/v1 WeightedPodAffinityTerm)."""

    weight: int
    term: PodAffinityTerm


@dataclass(slots=True, frozen=True)
class Affinity:
    """pod.spec.affinity: node affinity, pod affinity and pod anti-affinity, required and preferred."""

    # requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms (None = not set)
    node_required: tuple[NodeSelectorTerm, ...] | None = None
    node_preferred: tuple[PreferredNodeTerm, ...] = ()
    pod_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    pod_anti_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_anti_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(slots=True, frozen=True)
class TopologySpreadConstraint:
    """One pod.spec.topologySpreadConstraints[] entry as PodTopologySpread reads it."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule | ScheduleAnyway
    label_selector: LabelSelector | None
    min_domains: int | None = None
    node_affinity_policy: str = "Honor"  # Honor | Ignore
    node_taints_policy: str = "Ignore"  # Honor | Ignore
    match_label_keys: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class HostPort:
    """A container port with a hostPort: what NodePorts checks for conflicts on a node."""

    host_ip: str
    protocol: str
    port: int


@dataclass(slots=True, frozen=True)
class Node:
    """A node as the scheduler's NodeInfo sees it: labels, allocatable, taints, schedulability."""

    name: str
    uid: str = ""
    labels: Labels = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: Mapping[str, int] = field(default_factory=dict)
    images: Mapping[str, int] = field(default_factory=dict)  # image name -> size bytes
    creation_timestamp: float | None = None


# The one kube-scheduler profile we model (KubeSchedulerConfiguration's default schedulerName).
DEFAULT_SCHEDULER = "default-scheduler"

@dataclass(slots=True, frozen=True)
class Pod:
    """A pod as kube-scheduler and the preemption code read it (see the module docstring for units)."""

    namespace: str
    name: str
    uid: str = ""
    labels: Labels = field(default_factory=dict)
    node_name: str = ""  # spec.nodeName: bound (scheduled) when non-empty
    scheduler_name: str = "default-scheduler"
    priority: int | None = None  # spec.priority (after admission)
    priority_class_name: str = ""
    preemption_policy: str | None = None  # None means PreemptLowerPriority
    requests: Mapping[str, int] = field(default_factory=dict)  # effective pod requests
    # (cpu milli, memory bytes) with upstream's non-zero defaults (100m / 200Mi per container that
    # sets none): what NodeResourcesFit/BalancedAllocation scoring reads (GetNonzeroRequests).
    nonzero_requests: tuple[int, int] = (0, 0)
    host_ports: tuple[HostPort, ...] = ()
    node_selector: Labels = field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread: tuple[TopologySpreadConstraint, ...] = ()
    pod_group_name: str | None = None  # spec.schedulingGroup.podGroupName
    phase: str = "Pending"
    start_time: float | None = None
    creation_timestamp: float | None = None
    deletion_timestamp: float | None = None
    disruption_target: bool = False  # DisruptionTarget=True, reason PreemptionByScheduler
    nominated_node_name: str = ""
    images: tuple[str, ...] = ()
    uses_pvcs: bool = False
    volumes: tuple[PodVolume, ...] = ()  # PVC and generic ephemeral volumes (storage.PodVolume)
    # spec.resourceClaims as dra.PodClaimRef (issue 15), shared by pods of one spec template
    resource_claims: tuple = ()
    scheduling_gates: tuple[str, ...] = ()
    # status.resourceClaimStatuses: (pod claim name, generated ResourceClaim name) per pod
    claim_statuses: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def uses_resource_claims(self) -> bool:
        return bool(self.resource_claims)

    @property
    def scheduled(self) -> bool:
        """Bound to a node and still holding resources (upstream's NodeInfo holds these)."""
        return bool(self.node_name) and not self.terminal

    @property
    def terminating_by_preemption(self) -> bool:
        # util.PodTerminatingByPreemption
        return self.deletion_timestamp is not None and self.disruption_target


def positional_constructor(cls: type, runs: tuple[tuple[str, str], ...] = ()) -> Callable[..., Any]:
    """A constructor for a frozen slotted dataclass taking every field positionally, in field
    order, that fills the slots directly through their descriptors. The generated frozen
    __init__ goes through object.__setattr__ per field; for Pod's 27 fields that is 2.6 us a pod
    against 1.4 us here (measured; a loop over the descriptors instead of straight-line code
    takes 1.7 us), which matters when loading 150k pods. Each (first, last) field range in `runs`
    is passed as one tuple in its place (unpacked inside: cheaper than star-arguments at the
    call, 1.33 vs 1.55 us). The object is the same: same class, fields, equality and
    immutability; no defaults are applied (pass every field)."""
    names = [f.name for f in fields(cls)]
    if {"o", "_run0", "_run1", "_run2"} & set(names):
        raise ValueError(f"{cls.__name__}: a field name clashes with the generated code")
    params, unpack = list(names), []
    for r, (first, last) in enumerate(runs):
        i, j = params.index(first), params.index(last) + 1
        unpack.append(f"    {', '.join(params[i:j])}, = _run{r}\n")
        params[i:j] = [f"_run{r}"]
    env: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    body = []
    for i, n in enumerate(names):
        env[f"_set{i}"] = getattr(cls, n).__set__  # the slot's member descriptor
        body.append(f"    _set{i}(o, {n})\n")
    src = f"def new_{cls.__name__}({', '.join(params)}):\n{''.join(unpack)}    o = _new(_cls)\n{''.join(body)}    return o\n"
    exec(src, env)  # straight-line code, as dataclasses itself generates __init__
    return env[f"new_{cls.__name__}"]


# Pod(...) for the loader's hot path, every field positional (see positional_constructor).
new_pod: Callable[..., Pod] = positional_constructor(Pod)
# The same with the two runs of spec-derived fields (what a pod shares with its spec template)
# passed as two tuples: (scheduler_name .. pod_group_name) and (images .. scheduling_gates).
new_pod_from_runs: Callable[..., Pod] = positional_constructor(
    Pod, (("scheduler_name", "pod_group_name"), ("images", "scheduling_gates"))
)


@dataclass(slots=True, frozen=True)
class PodGroup:
    """A scheduling/v1beta1 PodGroup: a gang or basic group and its disruption and preemption settings."""

    namespace: str
    name: str
    uid: str = ""
    policy: str = "basic"  # basic | gang
    min_count: int = 1  # gang.minCount; 1 for basic (GangScheduling getMinCount)
    disruption_mode: str = SINGLE
    parent: str | None = None  # spec.parentCompositePodGroupName
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    topology_keys: tuple[str, ...] = ()  # spec.schedulingConstraints.topology[].key
    creation_timestamp: float | None = None
    # spec.workloadRef.workloadName ("" when absent); 1.38's hierarchy validation compares it.
    workload_name: str = ""
    # spec.disruptionMode was given (an unset mode is neither Single nor All to 1.38's hierarchy
    # validation, GenericPodGroup.HasDisruptionModeSingle; the engine reads unset as Single). The
    # converter always sets it: the API server defaults an unset mode to single (convert._group_fields).
    disruption_mode_set: bool = False
    uses_resource_claims: bool = False
    priority_admitted: bool = False  # spec.priority was absent and resolved by priority admission

    kind = "PodGroup"

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True, frozen=True)
class CompositePodGroup:
    """A scheduling CompositePodGroup: a tree of PodGroups scheduled and preempted from its root."""

    namespace: str
    name: str
    uid: str = ""
    policy: str = "basic"  # basic | gang
    min_group_count: int = 1
    disruption_mode: str = SINGLE
    parent: str | None = None
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    topology_keys: tuple[str, ...] = ()
    creation_timestamp: float | None = None
    # spec.workloadRef.workloadName ("" when absent); 1.38's hierarchy validation compares it.
    workload_name: str = ""
    # spec.disruptionMode was given (an unset mode is neither Single nor All to 1.38's hierarchy
    # validation, GenericPodGroup.HasDisruptionModeSingle; the engine reads unset as Single).
    disruption_mode_set: bool = False
    priority_admitted: bool = False  # spec.priority was absent and resolved by priority admission

    kind = "CompositePodGroup"

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True, frozen=True)
class PriorityClass:
    """A scheduling/v1 PriorityClass: the value and preemption policy a pod's class gives it."""

    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = PREEMPT_LOWER


@dataclass(slots=True, frozen=True)
class PodDisruptionBudget:
    """A policy/v1 PodDisruptionBudget: its selector and how many disruptions it allows now."""

    namespace: str
    name: str
    selector: LabelSelector | None
    disruptions_allowed: int
    disrupted_pods: frozenset[str] = frozenset()


@dataclass(slots=True, frozen=True)
class Namespace:
    """A namespace's labels (namespaceSelector terms read them)."""

    name: str
    labels: Labels = field(default_factory=dict)


@dataclass(slots=True)
class SnapshotHeader:
    """Where the objects came from: the snapshot's format, capture time, server and what was listed."""

    format_version: int = 1
    captured_at: str = ""
    server_url: str = ""
    server_version: str = ""
    listed: list[str] = field(default_factory=list)
    not_served: list[str] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)
    resource_versions: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    source: str = ""
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Snapshot:
    """Everything one analysis reads. Lists keep input order; lookups are built by `index()`."""

    header: SnapshotHeader = field(default_factory=SnapshotHeader)
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    pod_groups: list[PodGroup] = field(default_factory=list)
    composite_pod_groups: list[CompositePodGroup] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)
    # Storage objects the volume plugins read (storage.py); empty when not captured.
    pvcs: list[PersistentVolumeClaim] = field(default_factory=list)
    pvs: list[PersistentVolume] = field(default_factory=list)
    storage_classes: list[StorageClass] = field(default_factory=list)
    csi_nodes: list[CSINode] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Objects priority admission would reject ("no PriorityClass with name X was found"), keyed
    # by (kind, namespace, name). They are kept (priority 0) so the rest of the cluster loads, and
    # an analysis whose preemptor is one of them reports Invalid.
    admission_errors: dict[tuple[str, str, str], str] = field(default_factory=dict)
    # Pods (namespace, name) whose missing requests were defaulted from their limits on reading, as
    # the API server does on create (snapshot/decode/defaulting.py): the resource names.
    defaulted: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    # Hypothetical pods (namespace, name) that create-time admission changed (snapshot/decode/podadmission.py:
    # LimitRange defaults, RuntimeClass overhead and scheduling): what it changed, in plain phrases.
    admitted: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    # (kind, namespace, name) of objects defined more than once (the last definition is kept).
    duplicates: set[tuple[str, str, str]] = field(default_factory=set)
    # DeviceClasses, ResourceSlices, ResourceClaims(Templates) (dra.DraObjects); None when
    # the input has none of them (DRA is then reported as not modelled).
    dra: Any = None

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        for pg in self.pod_groups:
            if pg.namespace == namespace and pg.name == name:
                return pg
        return None

    def composite_pod_group(self, namespace: str, name: str) -> CompositePodGroup | None:
        for cpg in self.composite_pod_groups:
            if cpg.namespace == namespace and cpg.name == name:
                return cpg
        return None
