"""Issue 15, Dynamic Resource Allocation: the CEL subset, the DynamicResources filter (allocation
state, pinning, templates, gang allocation), warnings for what is not modelled, and capture
(strip / redact keep the relations the filter reads)."""

from __future__ import annotations

import copy
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from kubectl_wap.framework.plugins.dracel import CelRuntimeError, CelUnsupported, DeviceEnv, compile_expr, matches
from kubectl_wap.preemption.analyze import analyze
from kubectl_wap.preemption.gates import parse_gates
from kubectl_wap.snapshot.decode.convert import build_snapshot
from kubectl_wap.snapshot.share.redact import redact_items
from kubectl_wap.snapshot.share.strip import strip_object

SCENARIOS = Path(__file__).parent / "scenarios"
DRV = "gpu.example.com"

ENV = DeviceEnv(
    DRV, False,
    {DRV: {"model": "a100", "memGi": 80, "mig": True, "driverVersion": ("version", "1.2.3")}},
    {DRV: {"memory": Fraction(80 * 2**30)}},
)


@pytest.mark.parametrize("expr,want", [
    ('device.driver == "gpu.example.com"', True),
    ('device.driver != "gpu.example.com"', False),
    (f'device.attributes["{DRV}"].model == "a100"', True),
    (f"device.attributes['{DRV}'].model == 'h100'", False),
    (f'device.attributes["{DRV}"].memGi > 40 && device.attributes["{DRV}"].memGi <= 80', True),
    (f'device.attributes["{DRV}"].memGi < 40 || device.attributes["{DRV}"].mig', True),
    (f'!device.attributes["{DRV}"].mig', False),
    (f'device.attributes["{DRV}"].model in ["a100", "h100"]', True),
    (f'"{DRV}" in device.attributes', True),
    ('"other.example.com" in device.attributes', False),
    # an unknown domain is an empty map (mapper.Find), so a guard on it is false, not an error
    ('"x" in device.attributes["other.example.com"]', False),
    (f'device.capacity["{DRV}"].memory.compareTo(quantity("40Gi")) >= 0', True),
    (f'device.capacity["{DRV}"].memory.isGreaterThan(quantity("80Gi"))', False),
    (f'device.capacity["{DRV}"].memory.isLessThan(quantity("81Gi"))', True),
    (f'device.attributes["{DRV}"].driverVersion.isGreaterThan(semver("1.2.0"))', True),
    (f'has(device.attributes["{DRV}"].model)', True),
    (f'has(device.attributes["{DRV}"].nothere)', False),
    # cel-go's commutative logic: a decisive side wins over the other side's error
    (f'device.attributes["{DRV}"].nothere == 1 || true', True),
    (f'false && device.attributes["{DRV}"].nothere == 1', False),
    (f'device.attributes["{DRV}"].memGi == "80"', False),  # heterogeneous equality is false
])
def test_cel_subset(expr: str, want: bool) -> None:
    assert matches(expr, ENV) is want


@pytest.mark.parametrize("expr", [
    'device.attributes["x"].all(a, true)',  # macros
    'device.attributes["gpu.example.com"].memGi + 1 > 2',  # arithmetic
    'device.driver.startsWith("gpu")',  # not a modelled method: fails at run time below
    'size(device.attributes) > 0',
    'true ? true : false',
    'device.attributes[?"x"]',
    'a == 1',
])
def test_cel_outside_the_subset(expr: str) -> None:
    with pytest.raises((CelUnsupported, CelRuntimeError)):
        matches(expr, ENV)


def test_cel_runtime_errors() -> None:
    with pytest.raises(CelRuntimeError, match="no such key: nothere"):
        matches(f'device.attributes["{DRV}"].nothere == 1', ENV)
    with pytest.raises(CelRuntimeError):
        matches(f'device.attributes["{DRV}"].memGi < "a"', ENV)
    with pytest.raises(CelRuntimeError):
        matches(f'device.attributes["{DRV}"].memGi', ENV)  # not a bool
    assert compile_expr("device.driver == 'x'") == compile_expr("device.driver == 'x'")


# ---- clusters -------------------------------------------------------------------------------

def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def _slice(node: str, devices: list[dict]) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": DRV, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}


CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRV}"'}}]}}


def _template(name: str, count: int = 1, selector: str | None = None) -> dict:
    ex: dict = {"deviceClassName": "gpu", "count": count}
    if selector:
        ex["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"namespace": "ml", "name": name},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": ex}]}}}}


def _pod(name: str, template: str | None = None, claim: str | None = None, node: str | None = None, prio: int = 0,
         group: str | None = None) -> dict:
    ref = {"name": "gpus", "resourceClaimTemplateName": template} if template else {"name": "gpus", "resourceClaimName": claim}
    spec: dict = {"priority": prio, "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}],
                  "resourceClaims": [ref]}
    if node:
        spec["nodeName"] = node
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "ml", "name": name, "uid": name}, "spec": spec,
            "status": {"phase": "Running" if node else "Pending"}}


def _devices(n: int, **attrs: object) -> list[dict]:
    return [{"name": f"gpu-{i}", "attributes": {k: ({"string": v} if isinstance(v, str) else {"int": v}) for k, v in attrs.items()}}
            for i in range(n)]


def _claim(name: str, allocated_on: str | None = None, device: str = "gpu-0", reserved: str | None = None) -> dict:
    c = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"namespace": "ml", "name": name, "uid": name},
         "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu"}}]}}}
    if allocated_on:
        c["status"] = {"allocation": {
            "devices": {"results": [{"request": "gpus", "driver": DRV, "pool": allocated_on, "device": device}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [allocated_on]}]}]}},
            "reservedFor": [{"resource": "pods", "name": reserved, "uid": reserved}] if reserved else []}
    return c


def _gates(text: str):
    """DRAPreemption is the 1.38 profile's opt-in (off by default: v1.38.0-beta.0 has no such gate;
    the 1.37 profile refuses it)."""
    from kubectl_wap.profiles import PROFILES

    return parse_gates(text, PROFILES["1.38"]) if text == "DRAPreemption=true" else parse_gates(text)


def _run(items: list[dict], kind: str, name: str, gates: str = ""):
    return analyze(build_snapshot(copy.deepcopy(items)), kind, "ml", name, _gates(gates))


def test_allocated_claim_pins_the_pod_to_its_node() -> None:
    items = [_node("a"), _node("b"), CLASS, _slice("a", _devices(1)), _slice("b", _devices(1)),
             _claim("shared", allocated_on="b", reserved="holder"), _pod("holder", claim="shared", node="b"),
             _pod("p", claim="shared")]
    res = _run(items, "pod", "p")
    assert res.outcome == "NoPreemptionNeeded" and res.placements[0][1] == "b"
    # the allocation's node selector names a node without room: "resourceclaim not available on the node"
    items[-1]["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "a"}
    res = _run(items, "pod", "p")
    assert res.outcome == "Unschedulable"


def test_devices_taken_by_allocated_claims_are_not_free() -> None:
    items = [_node("a"), _node("b"), CLASS, _slice("a", _devices(2)), _slice("b", _devices(1)),
             _claim("held", allocated_on="a", device="gpu-1", reserved="holder"), _pod("holder", claim="held", node="a"),
             _template("two", count=2), _pod("p", template="two")]
    res = _run(items, "pod", "p")
    assert res.outcome == "Unschedulable" and "cannot allocate all claims" in res.message
    items[5]["status"]["allocation"]["devices"]["results"][0]["pool"] = "elsewhere"  # another pool's device
    assert _run(items, "pod", "p").placements[0][1] == "a"


def test_class_and_request_selectors_filter_devices() -> None:
    items = [_node("a"), _node("b"), CLASS, _slice("a", _devices(4, model="t4")), _slice("b", _devices(1, model="a100")),
             _template("a100", selector=f'device.attributes["{DRV}"].model == "a100"'), _pod("p", template="a100")]
    res = _run(items, "pod", "p")
    assert res.placements[0][1] == "b"


def test_gang_members_get_distinct_devices() -> None:
    """The claims the simulation allocates for placed pods take their devices: three pods of a
    gang needing one GPU each fit on two nodes of 2 GPUs only as 2 + 1, and four need all."""
    group = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"namespace": "ml", "name": "g", "uid": "g"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": 5}}}}
    items = [_node("a"), _node("b"), CLASS, _slice("a", _devices(2)), _slice("b", _devices(2)), _template("one"), group]
    items += [_pod(f"w{i}", template="one", group="g") for i in range(5)]
    res = _run(items, "podgroup", "g")
    assert res.outcome == "Unschedulable"  # five GPUs wanted, four exist
    items[6]["spec"]["schedulingPolicy"]["gang"]["minCount"] = 4
    del items[-1]
    res = _run(items, "podgroup", "g")
    assert res.outcome == "NoPreemptionNeeded"
    assert sorted(n for _, n in res.placements) == ["a", "a", "b", "b"]


def test_gang_preempts_pods_holding_devices_with_the_gate_only() -> None:
    group = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"namespace": "ml", "name": "g", "uid": "g"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "priority": 1000}}
    items = [_node("a"), CLASS, _slice("a", _devices(2)), _template("one"), group,
             _claim("c0", allocated_on="a", device="gpu-0", reserved="low0"), _pod("low0", claim="c0", node="a"),
             _claim("c1", allocated_on="a", device="gpu-1", reserved="low1"), _pod("low1", claim="c1", node="a")]
    items += [_pod(f"w{i}", template="one", group="g", prio=1000) for i in range(2)]
    assert _run(items, "podgroup", "g").outcome == "Unschedulable"
    res = _run(items, "podgroup", "g", "DRAPreemption=true")
    assert res.outcome == "Preempt"
    assert sorted(p.name for p in res.victim_pods) == ["low0", "low1"]


def test_unsupported_selector_is_a_warning_naming_the_claim_never_a_pass() -> None:
    items = [_node("a"), CLASS, _slice("a", _devices(2, model="a100")),
             _template("weird", selector=f'device.attributes["{DRV}"].model.startsWith("a") || size("x") > 0'),
             _pod("p", template="weird")]
    res = _run(items, "pod", "p")
    assert res.outcome == "Unschedulable"
    assert any("claim gpus of pod ml/p" in w and "outside the CEL subset" in w for w in res.warnings), res.warnings


def test_cel_runtime_error_fails_the_node_with_the_upstream_wording() -> None:
    items = [_node("a"), CLASS, _slice("a", _devices(1, model="a100")),
             _template("bad", selector=f'device.attributes["{DRV}"].missing == "x"'), _pod("p", template="bad")]
    res = _run(items, "pod", "p")
    assert res.outcome == "Unschedulable"
    assert "selector #0 on device gpu.example.com/a/gpu-0: CEL runtime error: no such key: missing" in res.message


def test_no_dra_objects_keeps_the_not_modelled_warning() -> None:
    items = [_node("a"), _pod("p", template="one")]
    res = _run(items, "pod", "p")
    assert res.outcome == "NoPreemptionNeeded"
    assert any("dynamic resource allocation is not modeled" in w for w in res.warnings)


def test_missing_class_and_template() -> None:
    items = [_node("a"), _slice("a", _devices(1)), _template("one"), _pod("p", template="one")]
    res = _run(items, "pod", "p")
    assert res.outcome == "Unschedulable" and "device class gpu does not exist" in res.message
    items = [_node("a"), CLASS, _pod("p", template="nope")]
    assert 'resourceclaimtemplate.resource.k8s.io "nope" not found' in _run(items, "pod", "p").message


def test_redacted_snapshot_gives_the_same_answer() -> None:
    """Pools, devices, claims and classes are hashed through one mapping, CEL string literals and
    string attributes too: the filter reads the same relations after --redact."""
    doc = yaml.safe_load((SCENARIOS / "dra-priority-aware-preemption.yaml").read_text())
    raw = [strip_object(o) for o in doc["cluster"]]
    red = redact_items(copy.deepcopy(raw), key=b"k" * 32)
    text = str(red)
    assert "device-1" not in text and "claim-a" not in text  # names and attribute values are hashed
    gates = _gates("DRAPreemption=true")
    plain = analyze(build_snapshot(raw), "pod", "default", "preemptor", gates)
    pod = next(o for o in red if o["kind"] == "Pod" and "nodeName" not in o["spec"])
    hashed = analyze(build_snapshot(red), "pod", pod["metadata"]["namespace"], pod["metadata"]["name"], gates)
    assert plain.outcome == hashed.outcome == "Preempt"
    assert len(hashed.victim_pods) == 1 and hashed.victim_pods[0].priority == 10


def test_strip_keeps_claim_statuses_and_drops_the_rest() -> None:
    pod = _pod("p", template="one")
    pod["status"]["resourceClaimStatuses"] = [{"name": "gpus", "resourceClaimName": "p-gpus-x", "extra": "secret"}]
    pod["metadata"]["annotations"] = {"a": "secret"}
    out = strip_object(pod)
    assert out["status"]["resourceClaimStatuses"] == [{"name": "gpus", "resourceClaimName": "p-gpus-x"}]
    assert "secret" not in str(out)
    snap = build_snapshot([out])
    assert snap.pods[0].claim_statuses == (("gpus", "p-gpus-x"),)


def test_bound_pod_without_its_generated_claim_is_warned_about() -> None:
    items = [_node("a"), CLASS, _slice("a", _devices(1)), _template("one"), _pod("holder", template="one", node="a"),
             _pod("p", template="one")]
    res = _run(items, "pod", "p")
    assert res.outcome == "NoPreemptionNeeded"  # the holder's device looks free: said in a warning
    assert any("pod ml/holder runs but the input has no ResourceClaim generated for its claim gpus" in w for w in res.warnings), res.warnings


def test_dra_preemption_gate_is_spelled_in_the_report_only_when_on() -> None:
    assert "DRAPreemption" not in parse_gates("").spelled()
    assert _gates("DRAPreemption=true").spelled().endswith(",DRAPreemption=true")


def test_gang_reprieval_with_a_device_reachable_from_every_node() -> None:
    """A network-attached device (slice allNodes) held by a victim on node b serves a preemptor
    placed on node a: reprieval must not spare the victim because its node holds no preemptor pod."""
    group = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"namespace": "ml", "name": "g", "uid": "g"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}, "priority": 1000}}
    net = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "fabric"},
           "spec": {"driver": DRV, "allNodes": True, "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": "gpu-0"}]}}
    held = _claim("held", allocated_on="fabric", device="gpu-0", reserved="low")
    del held["status"]["allocation"]["nodeSelector"]  # an allNodes device: no node selector
    items = [_node("a"), _node("b"), CLASS, net, _template("one"), group, held, _pod("low", claim="held", node="b"),
             _pod("w0", template="one", group="g", prio=1000)]
    res = _run(items, "podgroup", "g", "DRAPreemption=true")
    assert res.outcome == "Preempt" and [p.name for p in res.victim_pods] == ["low"]


def test_redaction_keeps_quantity_and_version_literals() -> None:
    from kubectl_wap.snapshot.share.leaves import typed

    def red(kind: str, v: str) -> str:
        return typed(kind, v, lambda x: "H" + x, None, None, None)

    expr = f'device.capacity["{DRV}"].memory.compareTo(quantity("80Gi")) >= 0 && x.isGreaterThan(semver("1.2.3")) && y == "secret"'
    out = red("cel", expr)
    # quantity() and semver() arguments kept; the driver's domain (not a well-known one) hashed as
    # the driver itself is, like any other string literal
    assert 'quantity("80Gi")' in out and 'semver("1.2.3")' in out and '"Hsecret"' in out and f'["H{DRV}"]' in out
    assert red("domain", DRV) == f"H{DRV}" and red("domain", "gpu.nvidia.com") == "gpu.nvidia.com"
    # a string attribute shaped like a version, an IP or a serial is the cluster's: hashed (issue 31)
    assert red("attr", "580.95.5") == "H580.95.5" and red("attr", "team-a") == "Hteam-a"
    assert red("version", "580.95.5") == "580.95.5"  # a version attribute: semver() compares it


def test_a_device_two_claims_hold_stays_taken_until_both_release(tmp_path: Path) -> None:
    """An exclusive device (allowMultipleAllocations unset) that two victims' claims both hold (a
    cluster in an inconsistent state) is free only once both are gone: GatherAllocatedState rebuilds
    the allocated set from every remaining claim. Our incremental base state kept it as a set, so
    releasing one claim freed the device and the answer (1 or 2 victims) depended on the order of
    the steps, i.e. on PYTHONHASHSEED. Both victims, under every seed."""
    import json
    import os
    import subprocess
    import sys

    doc = yaml.safe_load((Path(__file__).parent / "scenarios" / "dra-consumable-capacity-preemption.yaml").read_text())
    for o in doc["cluster"]:
        if o["kind"] == "ResourceSlice":
            o["spec"]["devices"][0]["allowMultipleAllocations"] = None
    f = tmp_path / "cluster.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": doc["cluster"]}))
    wap = str(Path(sys.executable).parent / "kubectl-wap")
    answers = set()
    for seed in ("1", "2", "3", "4"):
        r = subprocess.run([wap, "whatif", "pod", "preemptor", "-n", "default", "--snapshot", str(f), "--scheduler-version",
                            "1.38", "--feature-gates", "DRAPreemption=true", "-o", "jsonpath={.victims[*].name}"],
                           capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONHASHSEED": seed})
        assert r.returncode == 0, r.stderr
        answers.add(r.stdout.strip())
    assert answers == {"victim-a victim-b"}
