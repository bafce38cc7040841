"""Priority admission (plugin/pkg/admission/priority, extended to PodGroup/CPG; semantics doc 5.1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubectl_wap.model import SYSTEM_PRIORITY_CLASSES
from kubectl_wap.snapshot.decode.admission import default_class, no_class_message, resolve
from kubectl_wap.snapshot.decode.convert import build_snapshot


def pc(name: str, value: int, default: bool = False, policy: str | None = None) -> dict[str, Any]:
    o: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                         "value": value}
    if default:
        o["globalDefault"] = True
    if policy:
        o["preemptionPolicy"] = policy
    return o


def pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "ns"}, "spec": {"containers": [{"name": "c"}], **spec}}


def pg(name: str = "g", kind: str = "PodGroup", **spec: Any) -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": name, "namespace": "ns"}, "spec": {"schedulingPolicy": {"basic": {}}, **spec}}


def test_spec_priority_is_kept() -> None:
    snap = build_snapshot([pc("high", 1000), pod(priority=7, priorityClassName="high"), pg(priority=9, priorityClassName="high")])
    assert snap.pods[0].priority == 7
    assert snap.pod_groups[0].priority == 9
    assert snap.admission_errors == {}


def test_spec_priority_kept_even_when_class_unknown() -> None:
    # A live cluster's objects were admitted long ago; their class may be gone since.
    snap = build_snapshot([pod(priority=5, priorityClassName="deleted")])
    assert snap.pods[0].priority == 5
    assert snap.admission_errors == {}


def test_class_name_resolved() -> None:
    snap = build_snapshot([pc("high", 1000), pod(priorityClassName="high"), pg(priorityClassName="high"),
                           pg("c", kind="CompositePodGroup", priorityClassName="high")])
    assert snap.pods[0].priority == 1000
    assert snap.pod_groups[0].priority == 1000
    assert snap.composite_pod_groups[0].priority == 1000


def test_global_default_applies_to_objects_without_class() -> None:
    snap = build_snapshot([pc("low", 10), pc("dflt", 50, default=True), pod(), pg(),
                           pg("c", kind="CompositePodGroup")])
    assert snap.pods[0].priority == 50
    assert snap.pod_groups[0].priority == 50
    assert snap.composite_pod_groups[0].priority == 50


def test_lowest_global_default_wins() -> None:
    items = [pc("d-high", 500, default=True), pc("d-low", 20, default=True), pc("d-mid", 100, default=True), pod()]
    snap = build_snapshot(items)
    assert snap.pods[0].priority == 20
    assert default_class(snap).name == "d-low"
    # order of the input does not matter
    snap2 = build_snapshot(list(reversed(items[:3])) + [pod()])
    assert snap2.pods[0].priority == 20


def test_zero_without_class_or_default() -> None:
    snap = build_snapshot([pc("high", 1000), pod(), pg()])
    assert snap.pods[0].priority == 0
    assert snap.pod_groups[0].priority == 0
    assert snap.pods[0].preemption_policy is None  # nothing to copy
    assert resolve(snap, "") == (0, None, None)


@pytest.mark.parametrize("name, value", sorted(SYSTEM_PRIORITY_CLASSES.items()))
def test_system_classes_exist_without_objects(name: str, value: int) -> None:
    snap = build_snapshot([pod(priorityClassName=name), pg(priorityClassName=name)])
    assert snap.pods[0].priority == value
    assert snap.pod_groups[0].priority == value
    assert snap.admission_errors == {}


def test_system_class_values() -> None:
    assert SYSTEM_PRIORITY_CLASSES == {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}


def test_unknown_class_is_an_admission_error() -> None:
    snap = build_snapshot([pod(priorityClassName="nope"), pg(priorityClassName="nope"),
                           pg("c", kind="CompositePodGroup", priorityClassName="nope")])
    msg = "no PriorityClass with name nope was found"
    assert no_class_message("nope") == msg
    assert snap.admission_errors == {
        ("Pod", "ns", "p"): msg,
        ("PodGroup", "ns", "g"): msg,
        ("CompositePodGroup", "ns", "c"): msg,
    }
    # kept, at priority 0, so the rest of the cluster still loads
    assert snap.pods[0].priority == 0 and snap.pod_groups[0].priority == 0
    assert sum(msg in w for w in snap.warnings) == 3


def test_unknown_class_does_not_fall_back_to_global_default() -> None:
    snap = build_snapshot([pc("dflt", 50, default=True), pod(priorityClassName="nope")])
    assert snap.pods[0].priority == 0
    assert ("Pod", "ns", "p") in snap.admission_errors


@pytest.mark.parametrize(
    "cls_policy, pod_policy, want",
    [
        ("Never", None, "Never"),
        ("PreemptLowerPriority", None, "PreemptLowerPriority"),
        (None, None, "PreemptLowerPriority"),  # the class's own default
        ("Never", "PreemptLowerPriority", "PreemptLowerPriority"),  # the pod's own value stays
        ("PreemptLowerPriority", "Never", "Never"),
    ],
)
def test_pod_preemption_policy_copied_from_class_when_unset(cls_policy, pod_policy, want) -> None:
    spec: dict[str, Any] = {"priorityClassName": "c1"}
    if pod_policy:
        spec["preemptionPolicy"] = pod_policy
    snap = build_snapshot([pc("c1", 100, policy=cls_policy), pod(**spec)])
    assert snap.pods[0].preemption_policy == want


def test_pod_preemption_policy_copied_from_global_default() -> None:
    snap = build_snapshot([pc("dflt", 5, default=True, policy="Never"), pod()])
    assert snap.pods[0].priority == 5
    assert snap.pods[0].preemption_policy == "Never"


def test_podgroup_preemption_policy_not_copied() -> None:
    # UPSTREAM-DIFF documented in admission.py: only with PodGroupPreemptionPolicy on.
    snap = build_snapshot([pc("c1", 100, policy="Never"), pg(priorityClassName="c1")])
    assert snap.pod_groups[0].preemption_policy is None


def test_policy_not_copied_when_priority_already_set() -> None:
    snap = build_snapshot([pc("c1", 100, policy="Never"), pod(priority=100, priorityClassName="c1")])
    assert snap.pods[0].preemption_policy is None


@pytest.mark.parametrize("value", ["abc", 1e300, "1e300", [1], {"a": 1}, True])
def test_bad_priority_values_are_user_errors(value: Any) -> None:
    from kubectl_wap.errors import UserError

    with pytest.raises(UserError) as ei:
        build_snapshot([pod(priority=value)])
    assert "spec.priority" in str(ei.value) and "\n" not in str(ei.value)
    with pytest.raises(UserError):
        build_snapshot([{"kind": "PriorityClass", "metadata": {"name": "x"}, "value": value}])


def test_priority_class_without_value_is_user_error() -> None:
    from kubectl_wap.errors import UserError

    with pytest.raises(UserError, match="value is required"):
        build_snapshot([{"kind": "PriorityClass", "metadata": {"name": "x"}}])


# ---- through the real CLI ---------------------------------------------------------------------

def _cli() -> str:
    exe = Path(sys.executable).with_name("kubectl-wap")
    assert exe.exists(), exe
    return str(exe)


def test_cli_hypothetical_unknown_class_is_invalid() -> None:
    """A class a manifest names but the cluster lacks is what priority admission rejects: Invalid.
    (The same typo in --priority-class is an input error with a suggestion: issue 16.)"""
    manifest = Path(__file__).parent / "fixtures" / "unknown-class-podgroup.yaml"
    r = subprocess.run(
        [_cli(), "whatif", "-f", str(manifest), "-n", "ml", "--demo", "-o", "json"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "NO_COLOR": "1"},
    )
    assert "Traceback" not in r.stderr
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["outcome"] == "Invalid"
    assert "no PriorityClass with name nope was found" in doc["message"]
    flag = subprocess.run(
        [_cli(), "whatif", "podgroup", "new", "--replicas", "2", "--requests", "cpu=1", "--priority-class", "high-prio",
         "--demo", "-n", "ml", "-o", "json"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "NO_COLOR": "1"},
    )
    assert flag.returncode == 2 and flag.stdout == ""
    assert "did you mean 'high-priority'?" in flag.stderr


def test_cli_hypothetical_unknown_class_exit_code() -> None:
    r = subprocess.run(
        [_cli(), "whatif", "-f", str(Path(__file__).parent / "fixtures" / "unknown-class-podgroup.yaml"), "-n", "ml",
         "--demo", "-o", "json", "--exit-code"],
        capture_output=True, text=True, timeout=60,
    )
    assert r.returncode == 13, r.stderr
