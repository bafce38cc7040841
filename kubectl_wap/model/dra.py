"""Dynamic Resource Allocation objects (resource.k8s.io/v1), reduced to what kube-scheduler's
DynamicResources plugin and the structured allocator read (issue 15).

Built by :mod:`kubectl_wap.snapshot.decode.dra` from raw objects; read by
:mod:`kubectl_wap.framework.plugins.dynamicresources`. A device is identified, as upstream's
``structured.DeviceID``, by (driver, pool, device name). Attribute and capacity maps are keyed by
*fully qualified* name (``driver/name`` when the slice gave a bare name), as the allocator's CEL
environment sees them (``device.attributes["<domain>"].<name>``). Quantities stay exact
(:class:`fractions.Fraction`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Mapping

from .terms import NodeSelectorTerm

# An attribute value: int, bool, str, or ("version", "1.2.3") for a semantic version.
AttrValue = int | bool | str | tuple[str, str]
DeviceID = tuple[str, str, str]  # (driver, pool, device)


@dataclass(slots=True, frozen=True)
class DeviceClass:
    """A resource.k8s.io DeviceClass: the CEL selectors every request naming it adds."""

    name: str
    selectors: tuple[str, ...] = ()  # spec.selectors[].cel.expression
    extended_resource_name: str = ""  # spec.extendedResourceName (DRA extended resources)


@dataclass(slots=True, frozen=True)
class CounterConsumption:
    """The shared counters one device consumes from a counter set (partitionable devices)."""

    counter_set: str
    counters: Mapping[str, Fraction] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class Device:
    """One device a ResourceSlice publishes: its attributes, capacity and counter consumption."""

    driver: str
    pool: str
    name: str
    node_name: str = ""  # the slice's spec.nodeName ("" with all_nodes or a node selector)
    all_nodes: bool = False
    node_selector: tuple[NodeSelectorTerm, ...] | None = None  # the slice's spec.nodeSelector
    attributes: Mapping[str, AttrValue] = field(default_factory=dict)  # qualified name -> value
    capacity: Mapping[str, Fraction] = field(default_factory=dict)  # qualified name -> value
    allow_multiple_allocations: bool = False  # consumable capacity (DRAConsumableCapacity)
    consumes_counters: tuple[CounterConsumption, ...] = ()  # partitionable devices

    @property
    def id(self) -> DeviceID:
        return (self.driver, self.pool, self.name)


@dataclass(slots=True, frozen=True)
class ResourceSlice:
    """A resource.k8s.io ResourceSlice: a driver's devices in one pool (each device says where it is)."""

    name: str
    driver: str
    pool: str
    devices: tuple[Device, ...] = ()
    # spec.sharedCounters: counter set -> counter -> available amount
    shared_counters: Mapping[str, Mapping[str, Fraction]] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class DeviceRequest:
    """One request of a claim (spec.devices.requests[] with `exactly`)."""

    name: str
    device_class: str
    count: int = 1
    all_devices: bool = False  # allocationMode: All
    selectors: tuple[str, ...] = ()  # exactly.selectors[].cel.expression
    capacity: Mapping[str, Fraction] = field(default_factory=dict)  # exactly.capacity.requests
    admin_access: bool = False


@dataclass(slots=True, frozen=True)
class ClaimSpec:
    """What a ResourceClaim or its template asks for: the device requests we model, and the rest named."""

    requests: tuple[DeviceRequest, ...] = ()
    # What the claim asks for that we do not model (firstAvailable, constraints, ...): named in a
    # warning, never silently passed.
    unsupported: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class AllocatedDevice:
    """One device of a claim's status.allocation: request, driver, pool and device name."""

    request: str
    driver: str
    pool: str
    device: str
    consumed_capacity: Mapping[str, Fraction] = field(default_factory=dict)

    @property
    def id(self) -> DeviceID:
        return (self.driver, self.pool, self.device)


@dataclass(slots=True, frozen=True)
class ConsumerRef:
    """status.reservedFor[]: a pod ("" group, resource pods) or another consumer (a PodGroup)."""

    resource: str
    name: str
    uid: str
    api_group: str = ""

    @property
    def is_pod(self) -> bool:
        return self.api_group == "" and self.resource == "pods"


@dataclass(slots=True, frozen=True)
class ResourceClaim:
    """A resource.k8s.io ResourceClaim: its spec, its allocation and who it is reserved for."""

    namespace: str
    name: str
    uid: str = ""
    spec: ClaimSpec = ClaimSpec()
    allocated: tuple[AllocatedDevice, ...] | None = None  # status.allocation.devices.results (None: unallocated)
    allocation_node_selector: tuple[NodeSelectorTerm, ...] | None = None  # status.allocation.nodeSelector
    reserved_for: tuple[ConsumerRef, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True, frozen=True)
class ResourceClaimTemplate:
    """A resource.k8s.io ResourceClaimTemplate: the spec of the claim generated per pod."""

    namespace: str
    name: str
    spec: ClaimSpec = ClaimSpec()


@dataclass(slots=True, frozen=True)
class PodClaimRef:
    """pod.spec.resourceClaims[] (the generated claim of a template is in Pod.claim_statuses)."""

    name: str
    claim_name: str = ""  # resourceClaimName
    template_name: str = ""  # resourceClaimTemplateName


@dataclass(slots=True)
class DraObjects:
    """The DRA objects of a snapshot. A snapshot without them (captured before issue 15, or from
    a dump that has none) has ``Snapshot.dra`` None: DRA is then reported as not modelled."""

    device_classes: list[DeviceClass] = field(default_factory=list)
    slices: list[ResourceSlice] = field(default_factory=list)
    claims: list[ResourceClaim] = field(default_factory=list)
    templates: list[ResourceClaimTemplate] = field(default_factory=list)
