"""1.38 rules read in the v1.38.0-beta.0 source that the scenario fixtures do not pin down alone:
the removed PodGroupPreemptionPolicy gate (refused, its behaviour kept), where the WAP preemptor's
policy comes from (manager.go getPreemptionPolicy), the warning for groups a 1.38 API server
refuses to create, and the oracle generator's 1.38 mode."""

from __future__ import annotations

import copy

import pytest

from kubectl_wap.errors import UserError
from kubectl_wap.model import NEVER, PREEMPT_LOWER, Pod, PodGroup, Snapshot
from kubectl_wap.preemption.analyze import analyze
from kubectl_wap.preemption.gates import parse_gates
from kubectl_wap.preemption.validation import preemptor_policy
from kubectl_wap.profiles import V1_37, V1_38
from kubectl_wap.snapshot.decode.convert import build_snapshot
from kubectl_wap.model import SnapshotHeader
from tests.oracle.generate import generate, refused_by_1_38


def test_removed_gate_is_refused_under_1_38_with_the_reason() -> None:
    with pytest.raises(UserError) as e:
        parse_gates("PodGroupPreemptionPolicy=true", V1_38)
    assert "does not exist in Kubernetes 1.38" in str(e.value) and "always honoured" in str(e.value)
    assert parse_gates("PodGroupPreemptionPolicy=true", V1_37).pod_group_preemption_policy


def _pg(policy: str | None) -> PodGroup:
    return PodGroup("ns", "job", policy="gang", min_count=2, priority=100, preemption_policy=policy)


def _pod(name: str, policy: str | None) -> Pod:
    return Pod(namespace="ns", name=name, uid=name, priority=100, preemption_policy=policy, pod_group_name="job")


@pytest.mark.parametrize("group,pods,want", [
    # the root's spec.preemptionPolicy when set, whatever the pods say
    (PREEMPT_LOWER, [NEVER, NEVER], PREEMPT_LOWER),
    (NEVER, [None, None], NEVER),
    # unset: Never when any unscheduled member pod says Never
    (None, [None, NEVER], NEVER),
    (None, [None, None], PREEMPT_LOWER),
])
def test_1_38_preemptor_policy_is_the_groups_else_the_pods(group: str | None, pods: list[str | None], want: str) -> None:
    got, _ = preemptor_policy(_pg(group), [_pod(f"p{i}", p) for i, p in enumerate(pods)], policy_gate=False,
                              gated=V1_38.preemption_policy_gated)
    assert got == want


def test_1_37_gate_off_ignores_the_groups_policy() -> None:
    # the contrast: v1.37.2 with PodGroupPreemptionPolicy off reads only the pods
    got, _ = preemptor_policy(_pg(NEVER), [_pod("p0", None)], policy_gate=False, gated=V1_37.preemption_policy_gated)
    assert got == PREEMPT_LOWER


def _cluster(mode: str, policy: dict) -> list[dict]:
    return [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}},
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"namespace": "ns", "name": "victims"},
         "spec": {"schedulingPolicy": policy, "priority": 0, "disruptionMode": {mode: {}}}},
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"namespace": "ns", "name": "job"},
         "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}, "priority": 100}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "ns", "name": "job-0"},
         "spec": {"priority": 100, "schedulingGroup": {"podGroupName": "job"},
                  "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
    ]


@pytest.mark.parametrize("mode,policy,warned", [
    ("all", {"basic": {}}, True),
    ("all", {"gang": {"minCount": 1}}, False),
    ("single", {"basic": {}}, False),
])
def test_1_38_warns_about_groups_its_api_server_would_not_create(mode: str, policy: dict, warned: bool) -> None:
    snap = build_snapshot(_cluster(mode, policy), SnapshotHeader(source="test"))
    warn = [w for w in analyze(snap, "podgroup", "ns", "job", parse_gates("", V1_38)).warnings if "refuses to create" in w]
    assert bool(warn) == warned, warn
    if warned:
        assert "PodGroup ns/victims" in warn[0]
    # 1.37's API server stores such a group: no warning there
    assert not [w for w in analyze(snap, "podgroup", "ns", "job", parse_gates("", V1_37)).warnings if "refuses to create" in w]


def test_generator_1_38_mode_changes_only_the_refused_groups() -> None:
    changed = 0
    for i in range(60):
        old, new = generate(5, i), generate(5, i, "1.38")
        assert not [o for o in new.items if refused_by_1_38(o)]
        assert len(old.items) == len(new.items)
        for a, b in zip(old.items, new.items):
            if refused_by_1_38(a):
                changed += 1
                want = copy.deepcopy(a)
                want["spec"]["disruptionMode"] = {"single": {}}
                assert b == want
            else:
                assert a == b
    assert changed, "the sample should contain groups a 1.38 API server refuses"
