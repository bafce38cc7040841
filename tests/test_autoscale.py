"""--autoscale: node templates, the overscheduling check and the scale-up simulation."""

from __future__ import annotations

import math

import pytest

from kubectl_wap.autoscale import autoscale_section, infer_templates, load_templates
from kubectl_wap.errors import UserError
from kubectl_wap.snapshot.decode.convert import build_snapshot
from kubectl_wap.snapshot.io.files import load_demo

GI = 2**30


# ---- tiny cluster builders -------------------------------------------------------------------
def node(name, cpu="4", memory="8Gi", labels=None, taints=None, extra=None):
    alloc = {"cpu": cpu, "memory": memory, "pods": "110", **(extra or {})}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints or []},
        "status": {"allocatable": alloc},
    }


def pod(name, cpu="1", memory="1Gi", node_name=None, priority=0, group=None, ns="default", nominated=None):
    spec = {"priority": priority, "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if node_name:
        spec["nodeName"] = node_name
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    status = {"phase": "Running" if node_name else "Pending"}
    if nominated:
        status["nominatedNodeName"] = nominated
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": ns, "name": name, "uid": f"{ns}-{name}"}, "spec": spec, "status": status}


def gang(name, min_count, priority=1000, ns="default"):
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
        "metadata": {"namespace": ns, "name": name},
        "spec": {"priority": priority, "schedulingPolicy": {"gang": {"minCount": min_count}}},
    }


def small_cluster(pod_cpu="6", n=2, priority=1000):
    """One 4-cpu node that is full of low-priority pods; a gang of `n` pods of `pod_cpu` each."""
    items = [
        node("n1", cpu="4", labels={"node.kubernetes.io/instance-type": "small"}),
        pod("filler", cpu="3", node_name="n1", priority=0),
        gang("job", n, priority=priority),
    ]
    items += [pod(f"job-{i}", cpu=pod_cpu, group="job", priority=priority) for i in range(n)]
    return build_snapshot(items)


def write_templates(tmp_path, text):
    p = tmp_path / "templates.yaml"
    p.write_text(text)
    return str(p)


TWO_SIZES = """
templates:
- name: small
  allocatable: {cpu: "4", memory: 8Gi, pods: 110}
  maxNodes: 10
  costPerHour: 0.2
- name: large
  allocatable: {cpu: "8", memory: 32Gi, pods: 110}
  labels: {tier: large}
  maxNodes: %d
  costPerHour: 0.5
"""


# ---- demo ------------------------------------------------------------------------------------
def test_demo_job1_both_options_and_hand_count():
    snap = load_demo()
    sec = autoscale_section(snap, "podgroup", "ml", "job-1", None, None, None)
    # By hand: job-1 = 16 pods x 1 GPU (8 cpu, 64Gi each). The GPU nodes (p3dn.24xlarge: 8 GPUs,
    # 96 cpu, 768Gi) have 4 GPUs free, so 12 more are needed: ceil(12 / 8) = 2 new nodes
    # (8 pods per node: 64 cpu <= 96, 512Gi <= 768Gi).
    hand = math.ceil((16 - 4) / 8)
    assert hand == 2
    assert sec["addNodes"]["nodes"] == [{"template": "p3dn.24xlarge", "count": hand}]
    assert sec["addNodes"]["totalNodes"] == hand
    assert sec["addNodes"]["costPerHour"] is None  # inferred templates carry no cost
    # the preemption option is shown too
    assert sec["preempt"]["victimPods"] > 0 and sec["preempt"]["victimUnits"] > 0
    assert sec["preempt"]["priorityClasses"]
    # mixed: 1 node of the template (hand - 1), preemption still needed
    assert [m["added"] for m in sec["mixed"]] == [[{"template": "p3dn.24xlarge", "count": 1}]]
    assert sec["mixed"][0]["victimPods"] > 0
    assert sec["noScaleUpHelps"] is False
    assert sec["overschedule"] is None
    assert sec["inferredFrom"] == ["node.kubernetes.io/instance-type"]
    names = {t["name"] for t in sec["templates"]}
    assert "p3dn.24xlarge" in names and all(t["source"] == "inferred" for t in sec["templates"])


def test_demo_job1_overschedule_multiplier_boundary():
    snap = load_demo()
    # job-1 asks 16 GPUs in total; the largest shape has 8: admitted from multiplier 2 on.
    under = autoscale_section(snap, "podgroup", "ml", "job-1", None, None, 1.99)["overschedule"]
    at = autoscale_section(snap, "podgroup", "ml", "job-1", None, None, 2)["overschedule"]
    assert under["admitted"] is False and at["admitted"] is True
    assert at["jobResources"]["nvidia.com/gpu"] == 16
    assert at["largestShapes"] == [{"cpu": 96000, "memory": 768 * GI, "nvidia.com/gpu": 8}]


def test_demo_giant_bigger_than_every_template():
    snap = load_demo()
    sec = autoscale_section(snap, "podgroup", "research", "giant", None, None, 10)
    assert sec["noScaleUpHelps"] is True
    assert sec["addNodes"] is None
    assert any("no scale-up helps" in w and "nvidia.com/gpu" in w for w in sec["warnings"])


def test_demo_already_schedulable():
    sec = autoscale_section(load_demo(), "podgroup", "ml", "small-eval", None, None, None)
    assert sec["addNodes"]["totalNodes"] == 0 and sec["mixed"] == []


# ---- templates file ----------------------------------------------------------------------------
def test_fits_only_larger_template(tmp_path):
    snap = small_cluster(pod_cpu="6", n=2)
    path = write_templates(tmp_path, TWO_SIZES % 10)
    sec = autoscale_section(snap, "podgroup", "default", "job", None, path, None)
    assert sec["noScaleUpHelps"] is False
    # 6-cpu pods fit only the 8-cpu template, one per node: 2 nodes.
    assert sec["addNodes"]["nodes"] == [{"template": "large", "count": 2}]
    assert sec["addNodes"]["costPerHour"] == pytest.approx(1.0)
    assert [t["source"] for t in sec["templates"]] == ["file", "file"]
    assert sec["inferredFrom"] == []
    assert len(sec["mixed"]) == 1 and sec["mixed"][0]["added"] == [{"template": "large", "count": 1}]


def test_bigger_than_every_template(tmp_path):
    snap = small_cluster(pod_cpu="12", n=1)
    sec = autoscale_section(snap, "podgroup", "default", "job", None, write_templates(tmp_path, TWO_SIZES % 10), 1.0)
    assert sec["noScaleUpHelps"] is True
    assert sec["addNodes"] is None
    assert sec["overschedule"]["admitted"] is False


def test_max_nodes_limits(tmp_path):
    snap = small_cluster(pod_cpu="6", n=2)
    sec = autoscale_section(snap, "podgroup", "default", "job", None, write_templates(tmp_path, TWO_SIZES % 1), None)
    # Only one large node may be added and the gang needs two: no scale-up helps within maxNodes.
    assert sec["addNodes"] is None
    assert sec["noScaleUpHelps"] is True
    assert any("maxNodes" in w for w in sec["warnings"])
    sec0 = autoscale_section(snap, "podgroup", "default", "job", None, write_templates(tmp_path, TWO_SIZES % 0), None)
    assert sec0["noScaleUpHelps"] is True and sec0["addNodes"] is None


def test_small_pods_pick_fewest_nodes(tmp_path):
    # 3 pods x 3 cpu: small (4 cpu) needs 3 nodes, large (8 cpu) needs 2: fewest nodes wins.
    snap = small_cluster(pod_cpu="3", n=3)
    sec = autoscale_section(snap, "podgroup", "default", "job", None, write_templates(tmp_path, TWO_SIZES % 10), None)
    assert sec["addNodes"]["nodes"] == [{"template": "large", "count": 2}]
    assert sec["addNodes"]["totalNodes"] == 2


def test_greedy_mix_when_no_template_alone_works(tmp_path):
    snap = small_cluster(pod_cpu="3", n=3)
    text = """
templates:
- {name: a, allocatable: {cpu: "4", memory: 8Gi}, maxNodes: 1}
- {name: b, allocatable: {cpu: "4", memory: 8Gi}, maxNodes: 1}
"""
    sec = autoscale_section(snap, "podgroup", "default", "job", None, write_templates(tmp_path, text), None)
    # n1 has 1 cpu free: the 3 pods need 3 new 4-cpu nodes, but only 2 may be added in all.
    assert sec["addNodes"] is None
    text2 = text.replace("maxNodes: 1}\n- {name: b", "maxNodes: 2}\n- {name: b")
    sec2 = autoscale_section(snap, "podgroup", "default", "job", None, write_templates(tmp_path, text2), None)
    assert sec2["addNodes"]["totalNodes"] == 3
    assert sorted((n["template"], n["count"]) for n in sec2["addNodes"]["nodes"]) == [("a", 2), ("b", 1)]


def test_taints_and_selectors_respected(tmp_path):
    snap = small_cluster(pod_cpu="6", n=1)
    text = """
templates:
- name: tainted
  allocatable: {cpu: "16", memory: 64Gi}
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
"""
    sec = autoscale_section(snap, "podgroup", "default", "job", None, write_templates(tmp_path, text), None)
    assert sec["noScaleUpHelps"] is True
    assert any("untolerated taint dedicated=gpu" in w for w in sec["warnings"])


# ---- overscheduling ----------------------------------------------------------------------------
def test_multiplier_boundary_just_under_and_over(tmp_path):
    # job: 2 pods x 6 cpu = 12 cpu; the largest shape has 8 cpu: 12 <= 8 * 1.5 exactly.
    snap = small_cluster(pod_cpu="6", n=2)
    path = write_templates(tmp_path, TWO_SIZES % 10)
    at = autoscale_section(snap, "podgroup", "default", "job", None, path, 1.5)["overschedule"]
    under = autoscale_section(snap, "podgroup", "default", "job", None, path, 1.49)["overschedule"]
    over = autoscale_section(snap, "podgroup", "default", "job", None, path, 1.51)["overschedule"]
    assert at["admitted"] is True and over["admitted"] is True and under["admitted"] is False
    assert at["jobResources"]["cpu"] == 12000
    assert at["multiplier"] == 1.5
    # 'small' (4 cpu / 8Gi) is dominated by 'large' (8 cpu / 32Gi)
    assert at["largestShapes"] == [{"cpu": 8000, "memory": 32 * GI}]


def test_largest_shapes_are_per_dimension(tmp_path):
    # Shapes 1cpu/2Gi and 2cpu/1Gi are both maximal; a 2cpu/2Gi job is covered by neither at M=1.
    snap = build_snapshot([
        node("n1", cpu="1", memory="1Gi", labels={"node.kubernetes.io/instance-type": "tiny"}),
        gang("job", 1), pod("job-0", cpu="2", memory="2Gi", group="job", priority=1000),
    ])
    text = """
templates:
- {name: wide, allocatable: {cpu: "1", memory: 2Gi}}
- {name: tall, allocatable: {cpu: "2", memory: 1Gi}}
"""
    path = write_templates(tmp_path, text)
    one = autoscale_section(snap, "podgroup", "default", "job", None, path, 1)
    two = autoscale_section(snap, "podgroup", "default", "job", None, path, 2)
    assert len(one["overschedule"]["largestShapes"]) == 2
    assert one["overschedule"]["admitted"] is False
    assert two["overschedule"]["admitted"] is True
    assert one["noScaleUpHelps"] is True  # the pod fits no single template node


def test_bad_multiplier():
    with pytest.raises(UserError):
        autoscale_section(load_demo(), "podgroup", "ml", "job-1", None, None, 0)


# ---- inferred templates ------------------------------------------------------------------------
def test_inferred_templates_group_by_pool_and_shape():
    items = [
        node("a1", cpu="4", labels={"cloud.google.com/gke-nodepool": "pool-a", "topology.kubernetes.io/zone": "z1"}),
        node("a2", cpu="4", labels={"cloud.google.com/gke-nodepool": "pool-a", "topology.kubernetes.io/zone": "z2"}),
        node("b1", cpu="16", labels={"cloud.google.com/gke-nodepool": "pool-b"},
             taints=[{"key": "dedicated", "value": "big", "effect": "NoSchedule"}]),
        node("x", cpu="2"),  # no pool label: not a template
    ]
    snap = build_snapshot(items)
    templates, used = infer_templates(snap)
    assert used == ["cloud.google.com/gke-nodepool"]
    by = {t.name: t for t in templates}
    assert set(by) == {"pool-a", "pool-b"}
    assert by["pool-a"].allocatable["cpu"] == 4000 and by["pool-a"].nodes == ("a1", "a2")
    # labels common to the pool only (zone and hostname dropped)
    assert by["pool-a"].labels == {"cloud.google.com/gke-nodepool": "pool-a"}
    assert by["pool-b"].taints[0].key == "dedicated"
    assert all(t.max_nodes == 10 and t.source == "inferred" for t in templates)


def test_inferred_demo_splits_same_instance_type_by_taints():
    templates, used = infer_templates(load_demo())
    names = sorted(t.name for t in templates)
    assert names == ["m6i.8xlarge-batch", "m6i.8xlarge-general", "p3dn.24xlarge"]
    assert used == ["node.kubernetes.io/instance-type"]


# ---- file errors and warnings -------------------------------------------------------------------
@pytest.mark.parametrize("text,needle", [
    ("templates: [{name: a, allocatable: {cpu: lots}}]", "invalid quantity for cpu"),
    ("templates: [{allocatable: {cpu: '1'}}]", "name is required"),
    ("templates: [{name: a}]", "allocatable is required"),
    ("templates: [{name: a, allocatable: {cpu: '1'}, maxNodes: -1}]", "maxNodes"),
    ("templates: [{name: a, allocatable: {cpu: '1'}, taints: [{key: k, effect: Bogus}]}]", "effect"),
    ("nodes: []", "templates"),
    ("templates: [: bad", "invalid YAML"),
])
def test_invalid_templates_file(tmp_path, text, needle):
    path = write_templates(tmp_path, text)
    with pytest.raises(UserError) as e:
        load_templates(path)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_missing_templates_file():
    with pytest.raises(UserError, match="cannot read node templates"):
        load_templates("/nonexistent/templates.yaml")


def test_cluster_autoscaler_warnings(tmp_path):
    items = [
        node("n1", cpu="4", labels={"node.kubernetes.io/instance-type": "small"}),
        pod("filler", cpu="3", node_name="n1", priority=-100),
        pod("low", cpu="2", priority=-20),
    ]
    snap = build_snapshot(items)
    sec = autoscale_section(snap, "pod", "default", "low", None, None, None)
    assert any("not as configured" in w and "expendable" in w for w in sec["warnings"])
    assert sec["addNodes"]["nodes"] == [{"template": "small", "count": 1}]

    items[2] = pod("low", cpu="2", priority=5, nominated="n1")
    sec2 = autoscale_section(build_snapshot(items), "pod", "default", "low", None, None, None)
    assert any("not as configured" in w and "nominated" in w for w in sec2["warnings"])
