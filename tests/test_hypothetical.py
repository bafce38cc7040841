"""Hypothetical work for `whatif --add` / `whatif -f` (snapshot/decode/hypothetical.py): flag parsing, the
objects built from flags, manifest files, and what the hypothetical work replaces in the cluster."""

from __future__ import annotations

import pytest

from kubectl_wap.errors import UserError
from kubectl_wap.snapshot.decode.hypothetical import (
    CREATED,
    GroupSpec,
    Replacement,
    from_manifest,
    group_from_flags,
    parse_requests,
    parse_selector,
    parse_toleration,
)


def test_parse_requests():
    assert parse_requests("cpu=8, memory=64Gi,,nvidia.com/gpu=1") == {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"}
    assert parse_requests("") == {}


@pytest.mark.parametrize("text, msg", [
    ("cpu", "want NAME=QUANTITY"),
    ("cpu=-1", "must not be negative"),
    ("memory=lots", "invalid --requests memory=lots"),
])
def test_parse_requests_errors(text, msg):
    with pytest.raises(UserError, match=msg):
        parse_requests(text)


def test_parse_selector():
    assert parse_selector(["disk=ssd, zone = a", "tier=gold"]) == {"disk": "ssd", "zone": "a", "tier": "gold"}
    with pytest.raises(UserError, match="want key=value"):
        parse_selector(["disk"])


@pytest.mark.parametrize("text, want", [
    ("gpu=true:NoSchedule", {"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}),
    ("gpu:NoExecute", {"key": "gpu", "operator": "Exists", "effect": "NoExecute"}),
    ("gpu=true", {"key": "gpu", "operator": "Equal", "value": "true"}),
    ("gpu", {"key": "gpu", "operator": "Exists"}),
    ("gpu:", {"key": "gpu", "operator": "Exists"}),
])
def test_parse_toleration(text, want):
    assert parse_toleration(text) == want


def test_parse_toleration_bad_effect():
    with pytest.raises(UserError, match="effect must be"):
        parse_toleration("gpu=true:Sometimes")


def test_group_from_flags_builds_a_gang_and_its_pods():
    spec = GroupSpec("train", "ml", 2, {"cpu": "4"}, priority_class="high", min_count=2, disruption_mode="all",
                     node_selector={"disk": "ssd"}, tolerations=[{"key": "gpu", "operator": "Exists"}],
                     preemption_policy="Never")
    pg, p0, p1 = group_from_flags(spec)
    assert pg["kind"] == "PodGroup" and pg["metadata"]["name"] == "train" and pg["metadata"]["creationTimestamp"] == CREATED
    assert pg["spec"] == {"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"all": {}},
                          "priorityClassName": "high", "preemptionPolicy": "Never"}
    assert [p["metadata"]["name"] for p in (p0, p1)] == ["train-0", "train-1"]
    assert len({p["metadata"]["uid"] for p in (p0, p1)}) == 2
    for p in (p0, p1):
        s = p["spec"]
        assert s["schedulingGroup"] == {"podGroupName": "train"} and s["priorityClassName"] == "high"
        assert s["preemptionPolicy"] == "Never" and s["nodeSelector"] == {"disk": "ssd"}
        assert s["tolerations"] == [{"key": "gpu", "operator": "Exists"}]
        assert s["containers"][0]["resources"]["requests"] == {"cpu": "4"}
        assert p["status"] == {"phase": "Pending"}


def test_group_from_flags_basic_by_default():
    pg, pod = group_from_flags(GroupSpec("one", "ml", 1))
    assert pg["spec"] == {"schedulingPolicy": {"basic": {}}, "disruptionMode": {"single": {}}}
    assert "priorityClassName" not in pod["spec"] and "nodeSelector" not in pod["spec"]


@pytest.mark.parametrize("spec, msg", [
    (GroupSpec("g", "ml", 0), "--replicas must be at least 1"),
    (GroupSpec("g", "ml", 1, disruption_mode="some"), "--disruption-mode must be single or all"),
    (GroupSpec("g", "ml", 1, min_count=0), "--min-count must be at least 1"),
])
def test_group_from_flags_errors(spec, msg):
    with pytest.raises(UserError, match=msg):
        group_from_flags(spec)


def _pod(name, ns=None, group=None, node=None):
    md = {"name": name}
    if ns:
        md["namespace"] = ns
    spec = {"containers": [{"name": "c"}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": {"phase": "Running"}}


def test_manifest_single_pod_gets_namespace_uid_and_is_unbound():
    objs, kind, ns, name = from_manifest([_pod("p", node="n1")], None, "team")
    assert (kind, ns, name) == ("pod", "team", "p")
    [p] = objs
    assert p["metadata"]["uid"] == "hypothetical-team-p" and p["metadata"]["creationTimestamp"] == CREATED
    assert "nodeName" not in p["spec"]


def test_manifest_podgroup_with_replicated_template():
    pg = {"kind": "PodGroup", "metadata": {"name": "g", "namespace": "ml"}, "spec": {}}
    objs, kind, ns, name = from_manifest([pg, _pod("w", ns="ml", node="n1")], 3, None)
    assert (kind, ns, name) == ("podgroup", "ml", "g")
    pods = [o for o in objs if o["kind"] == "Pod"]
    assert [p["metadata"]["name"] for p in pods] == ["w-0", "w-1", "w-2"]
    assert all(p["spec"]["schedulingGroup"] == {"podGroupName": "g"} and "nodeName" not in p["spec"]
               and p["status"]["phase"] == "Pending" for p in pods)


def test_manifest_composite_tree_root():
    root = {"kind": "CompositePodGroup", "metadata": {"name": "root", "namespace": "ml"}, "spec": {}}
    child = {"kind": "CompositePodGroup", "metadata": {"name": "mid", "namespace": "ml"}, "spec": {"parentCompositePodGroupName": "root"}}
    leaf = {"kind": "PodGroup", "metadata": {"name": "leaf", "namespace": "ml"}, "spec": {"parentCompositePodGroupName": "mid"}}
    objs, kind, ns, name = from_manifest([leaf, child, root, _pod("p", "ml", "leaf")], None, None)
    assert (kind, ns, name) == ("compositepodgroup", "ml", "root") and len(objs) == 4


@pytest.mark.parametrize("items, replicas, msg", [
    ([], None, "holds no Kubernetes objects"),
    (["junk"], None, "holds no Kubernetes objects"),
    ([{"kind": "Service", "metadata": {"name": "d"}}], None, "found 'Service'"),
    # a workload is read through its pod template (tests/test_workload_manifests.py)
    ([{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}], None, r"Deployment d: spec\.template\.spec \(the pod template\) is required"),
    # recognised by API group and kind: a workload kind without its group is not guessed
    ([{"kind": "Deployment", "metadata": {"name": "d"}}], None, r"Deployment d has no apiVersion \(-f reads Deployment as apps/v1\)"),
    ([{"kind": 7}], None, r"found a kind that is not a string \(int\)"),
    ([{"metadata": {"name": "x"}}], None, "found an object without kind"),  # was "found None"
    ([{"kind": "Pod", "metadata": "x"}], None, "metadata must be a map"),
    ([{"kind": "Pod", "metadata": {}}], None, "a Pod without metadata.name"),
    ([{"kind": "Pod", "metadata": {"name": "p", "namespace": 3}}], None, "metadata.namespace must be a string"),
    ([{"kind": "Pod", "metadata": {"name": "p"}, "spec": []}], None, "spec must be a map"),
    ([_pod("a"), _pod("b")], 2, "--replicas needs exactly one Pod template"),
    ([_pod("a"), _pod("b")], None, "exactly one Pod"),
    ([{"kind": "PodGroup", "metadata": {"name": "a"}}, {"kind": "PodGroup", "metadata": {"name": "b"}}], None,
     "exactly one PodGroup"),
    ([{"kind": "CompositePodGroup", "metadata": {"name": "a"}}, {"kind": "CompositePodGroup", "metadata": {"name": "b"}}], None,
     "exactly one root CompositePodGroup"),
])
def test_manifest_errors(items, replicas, msg):
    with pytest.raises(UserError, match=msg):
        from_manifest(items, replicas, None)


def test_replacement_drops_what_the_hypothetical_work_names():
    extra = [{"kind": "PodGroup", "metadata": {"name": "g", "namespace": "ml"}},
             {"kind": "Pod", "metadata": {"name": "solo"}}]
    r = Replacement(extra)
    cluster = [
        {"kind": "PodGroup", "metadata": {"name": "g", "namespace": "ml"}},  # replaced
        {"kind": "PodGroup", "metadata": {"name": "other", "namespace": "ml"}},  # kept
        _pod("g-0", "ml", "g"),  # pending member of the replaced group: replaced
        _pod("g-1", "ml", "g", node="n1"),  # running member: kept
        _pod("solo"),  # same name (default namespace): replaced
        _pod("solo", "ml"),  # other namespace: kept
        {"kind": "Node", "metadata": {"name": "n1"}},
        "not-an-object",
        {"kind": "Pod", "metadata": None, "spec": None},
    ]
    kept = [o for o in cluster if r.keep(o)]
    assert [(o["kind"], o["metadata"]["name"]) for o in kept if isinstance(o, dict) and o["metadata"]] == [
        ("PodGroup", "other"), ("Pod", "g-1"), ("Pod", "solo"), ("Node", "n1")]
    assert sorted(r.warnings()) == [
        "the hypothetical work replaces 2 pending pod(s) of the cluster state",
        "the hypothetical work replaces PodGroup ml/g of the cluster state",
    ]
