"""Raw resource.k8s.io/v1 objects -> model/dra.py (issue 15): DeviceClasses, ResourceSlices,
ResourceClaims, ResourceClaimTemplates, and a pod's spec.resourceClaims / status.resourceClaimStatuses.

Only what the DynamicResources plugin and the structured allocator read is kept
(k8s.io/dynamic-resource-allocation/structured, allocator.go). Fields we do not model are not
dropped silently: a claim that uses one lists it in ``ClaimSpec.unsupported`` and the analysis
names the claim in a warning.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ...model.dra import (
    AllocatedDevice,
    ClaimSpec,
    ConsumerRef,
    CounterConsumption,
    Device,
    DeviceClass,
    DeviceRequest,
    DraObjects,
    PodClaimRef,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from ...quantity import QuantityError, parse_quantity
from .fields import ObjectError, as_dict, as_list, as_str, meta, node_term, short_repr

API_GROUP = "resource.k8s.io"


def _qty(v: Any, what: str) -> Fraction:
    try:
        return parse_quantity(v)
    except QuantityError as e:
        raise ObjectError(f"{what}: {e}") from None


def _selectors(raw: Any) -> tuple[str, ...]:
    """selectors[].cel.expression; a selector of another kind (none exist in v1) is kept as an
    expression that our CEL subset refuses, so it is warned about rather than ignored."""
    out = []
    for s in as_list(raw):
        expr = as_dict(as_dict(s).get("cel")).get("expression")
        out.append(expr if isinstance(expr, str) else "<non-CEL selector>")
    return tuple(out)


def device_class_from(obj: dict) -> DeviceClass:
    _, name, _ = meta(obj, "DeviceClass", False)
    spec = as_dict(obj.get("spec"))
    return DeviceClass(name, _selectors(spec.get("selectors")), as_str(spec.get("extendedResourceName")))


def _qualified(name: str, driver: str) -> str:
    # A bare attribute/capacity name belongs to the driver's domain (QualifiedName, types.go).
    return name if "/" in name else f"{driver}/{name}"


def _attr_value(v: Any) -> Any:
    d = as_dict(v)
    for key in ("int", "bool", "string"):
        if key in d:
            return d[key]
    if "version" in d:
        return ("version", as_str(d["version"]))
    return None


def resource_slice_from(obj: dict) -> ResourceSlice:
    _, name, _ = meta(obj, "ResourceSlice", False)
    spec = as_dict(obj.get("spec"))
    driver = as_str(spec.get("driver"))
    pool = as_str(as_dict(spec.get("pool")).get("name"))
    what = f"resourceslice {name}"
    node_selector = None
    if isinstance(spec.get("nodeSelector"), dict):
        node_selector = tuple(node_term(t) for t in as_list(as_dict(spec["nodeSelector"]).get("nodeSelectorTerms")))
    node_name, all_nodes = as_str(spec.get("nodeName")), bool(spec.get("allNodes"))
    devices = []
    for i, d in enumerate(as_list(spec.get("devices"))):
        d = as_dict(d)
        at = f"{what}: spec.devices[{i}]"  # errors name the field, as the API server's validation would
        attrs = {_qualified(k, driver): _attr_value(v) for k, v in as_dict(d.get("attributes")).items()}
        cap = {_qualified(k, driver): _qty(as_dict(v).get("value"), f"{at}.capacity.{k}.value") for k, v in as_dict(d.get("capacity")).items()}
        consumes = tuple(
            CounterConsumption(as_str(as_dict(c).get("counterSet")),
                               {k: _qty(as_dict(v).get("value"), f"{at}.consumesCounters[{j}].counters.{k}.value")
                                for k, v in as_dict(as_dict(c).get("counters")).items()})
            for j, c in enumerate(as_list(d.get("consumesCounters")))
        )
        devices.append(Device(
            driver, pool, as_str(d.get("name")),
            # Per-device node fields (partitionable devices) override the slice's.
            node_name=as_str(d.get("nodeName")) or node_name,
            all_nodes=bool(d.get("allNodes")) or all_nodes,
            node_selector=(tuple(node_term(t) for t in as_list(as_dict(d["nodeSelector"]).get("nodeSelectorTerms")))
                           if isinstance(d.get("nodeSelector"), dict) else node_selector),
            attributes={k: v for k, v in attrs.items() if v is not None},
            capacity=cap,
            allow_multiple_allocations=bool(d.get("allowMultipleAllocations")),
            consumes_counters=consumes,
        ))
    counters = {
        as_str(as_dict(cs).get("name")): {k: _qty(as_dict(v).get("value"), f"{what}: spec.sharedCounters[{j}].counters.{k}.value")
                                          for k, v in as_dict(as_dict(cs).get("counters")).items()}
        for j, cs in enumerate(as_list(spec.get("sharedCounters")))
    }
    return ResourceSlice(name, driver, pool, tuple(devices), counters)


def claim_spec(spec: Any, what: str, spec_path: str = "spec") -> ClaimSpec:
    """ResourceClaimSpec -> ClaimSpec (what the allocator reads of it); `spec_path` is where the
    object holds it, for error messages."""
    devices = as_dict(as_dict(spec).get("devices"))
    requests, unsupported = [], []
    for i, r in enumerate(as_list(devices.get("requests"))):
        r = as_dict(r)
        rname = as_str(r.get("name"))
        at = f"{what}: {spec_path}.devices.requests[{i}]"
        ex = r.get("exactly")
        if not isinstance(ex, dict):
            unsupported.append(f"request {rname}: firstAvailable (prioritized list)" if r.get("firstAvailable") else f"request {rname}: no 'exactly'")
            continue
        mode = as_str(ex.get("allocationMode")) or "ExactCount"
        count = ex.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ObjectError(f"{at}.exactly.count: must be a positive integer, got {short_repr(count)}")
        if mode not in ("ExactCount", "All"):
            unsupported.append(f"request {rname}: allocationMode {mode}")
        if ex.get("tolerations"):
            unsupported.append(f"request {rname}: device tolerations")
        cap = {k: _qty(v, f"{at}.exactly.capacity.requests.{k}") for k, v in as_dict(as_dict(ex.get("capacity")).get("requests")).items()}
        requests.append(DeviceRequest(
            rname, as_str(ex.get("deviceClassName")), count, mode == "All", _selectors(ex.get("selectors")), cap,
            bool(ex.get("adminAccess")),
        ))
    if devices.get("constraints"):
        unsupported.append("constraints (matchAttribute)")
    return ClaimSpec(tuple(requests), tuple(unsupported))


def resource_claim_from(obj: dict) -> ResourceClaim:
    ns, name, uid = meta(obj, "ResourceClaim", True)
    what = f"resourceclaim {ns}/{name}"
    status = as_dict(obj.get("status"))
    alloc = status.get("allocation")
    allocated = node_selector = None
    if isinstance(alloc, dict):
        allocated = tuple(
            AllocatedDevice(as_str(as_dict(x).get("request")), as_str(as_dict(x).get("driver")), as_str(as_dict(x).get("pool")), as_str(as_dict(x).get("device")),
                            {k: _qty(v, f"{what}: consumedCapacity {k}") for k, v in as_dict(as_dict(x).get("consumedCapacity")).items()})
            for x in as_list(as_dict(alloc.get("devices")).get("results"))
        )
        if isinstance(alloc.get("nodeSelector"), dict):
            node_selector = tuple(node_term(t) for t in as_list(alloc["nodeSelector"].get("nodeSelectorTerms")))
    reserved = tuple(
        ConsumerRef(as_str(as_dict(c).get("resource")), as_str(as_dict(c).get("name")), as_str(as_dict(c).get("uid")), as_str(as_dict(c).get("apiGroup")))
        for c in as_list(status.get("reservedFor"))
    )
    return ResourceClaim(ns, name, uid or f"{ns}/{name}", claim_spec(obj.get("spec"), what), allocated, node_selector, reserved)


def resource_claim_template_from(obj: dict) -> ResourceClaimTemplate:
    ns, name, _ = meta(obj, "ResourceClaimTemplate", True)
    return ResourceClaimTemplate(ns, name, claim_spec(as_dict(as_dict(obj.get("spec")).get("spec")), f"resourceclaimtemplate {ns}/{name}", "spec.spec"))


def pod_claim_refs(raw: Any, what: str) -> tuple[PodClaimRef, ...]:
    out = []
    for c in as_list(raw):
        c = as_dict(c)
        out.append(PodClaimRef(as_str(c.get("name")), as_str(c.get("resourceClaimName")), as_str(c.get("resourceClaimTemplateName"))))
    return tuple(out)


def pod_claim_statuses(raw: Any) -> tuple[tuple[str, str], ...]:
    return tuple((as_str(as_dict(c).get("name")), as_str(as_dict(c).get("resourceClaimName"))) for c in as_list(raw) if as_dict(c).get("resourceClaimName"))


# kind -> (DraObjects list attribute, converter)
CONVERTERS = {
    "DeviceClass": ("device_classes", device_class_from),
    "ResourceSlice": ("slices", resource_slice_from),
    "ResourceClaim": ("claims", resource_claim_from),
    "ResourceClaimTemplate": ("templates", resource_claim_template_from),
}
# Header names (live.py RESOURCES) whose presence in "listed" means the snapshot captured DRA.
LISTED = ("deviceclasses.resource.k8s.io", "resourceslices.resource.k8s.io", "resourceclaims.resource.k8s.io",
          "resourceclaimtemplates.resource.k8s.io")


def dra_objects(snap: Any) -> DraObjects:
    if snap.dra is None:
        snap.dra = DraObjects()
    return snap.dra
