"""The fast reprieval (replay only the assignments on the nodes a unit touches) must decide exactly
as the literal one (replay every assignment, as upstream's selectVictimsOnDomain does): same
victims in the same order, same reprieved units, same placements. Random clusters mix every unit
kind and PDBs, and some pods carry required anti-affinity or topology spread so the fast path's
fallback to the literal replay is exercised too."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_wap.preemption.analyze import analyze
from test_candidate_columns import same_verdicts
from test_properties import PRE_NAME, PRE_NS, cluster_strategy


def _summary(res):
    return (
        res.outcome,
        res.message,
        [(v.unit.key, [p.key for p in v.unit.pods]) for v in res.victims],
        [v.unit.key for v in res.reprieved],
        [(p.key, n) for p, n in res.placements],
        res.num_pdb_violations,
    )


def _check(snap):
    fast = analyze(snap, "podgroup", PRE_NS, PRE_NAME, fast=True)
    literal = analyze(snap, "podgroup", PRE_NS, PRE_NAME, fast=False)
    assert _summary(fast) == _summary(literal)
    same_verdicts(fast, literal)  # every verdict field by field (the fast path's columnar passes)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_strategy())
def test_fast_equals_literal_node_local(snap):
    _check(snap)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_strategy(cross=True))
def test_fast_equals_literal_cross_node(snap):
    _check(snap)


def test_fast_equals_literal_demo():
    from kubectl_wap.snapshot.source import build, raw_source

    header, items = raw_source(None, True, None, None, 30)
    snap = build(header, items)
    fast = analyze(snap, "podgroup", "ml", "job-1", fast=True)
    literal = analyze(snap, "podgroup", "ml", "job-1", fast=False)
    assert fast.outcome == "Preempt"
    assert _summary(fast) == _summary(literal)
    same_verdicts(fast, literal)


def test_per_pod_label_read_by_a_victims_anti_affinity():
    """Gang pods differ only in a per-pod index label (an Indexed Job's completion index). A
    victim's required anti-affinity selects idx=1: it blocks only pre-1, so the fast path may not
    treat pre-0 and pre-1 as one template when it skips no-op AddPod calls."""
    from kubectl_wap.model import Affinity, LabelSelector, Node, PodAffinityTerm, PodGroup, Snapshot
    from test_properties import GI, HOSTNAME, PRE_NAME, PRE_NS, PRE_PRIO, _pod

    nodes = [Node(name=f"n{i}", labels={HOSTNAME: f"n{i}"}, allocatable={"cpu": 3000, "memory": 8 * GI, "pods": 110})
             for i in range(2)]
    anti = Affinity(pod_anti_affinity_required=(
        PodAffinityTerm(LabelSelector(match_labels=(("idx", "1"),)), HOSTNAME, namespaces=(PRE_NS,)),))
    # The gang's own required term (matching nothing) keeps InterPodAffinity from skipping
    # PreFilter once the victims are removed: a skipped plugin sees no AddPod (upstream too).
    own = Affinity(pod_anti_affinity_required=(PodAffinityTerm(LabelSelector(match_labels=(("app", "zzz"),)), HOSTNAME),))
    pods = [
        _pod("default", "v0", 1500, 0, node="n0", prio=0, labels={"app": "a"}, start=1.0),
        _pod("default", "v1", 500, 0, node="n1", prio=0, labels={"app": "b"}, start=2.0, affinity=anti),
    ] + [_pod(PRE_NS, f"pre-{k}", 2000, 0, prio=PRE_PRIO, group=PRE_NAME, labels={"app": "pre", "idx": str(k)}, affinity=own)
         for k in range(2)]
    snap = Snapshot(nodes=nodes, pods=pods, pod_groups=[PodGroup(PRE_NS, PRE_NAME, policy="gang", min_count=2, priority=PRE_PRIO)])
    fast = analyze(snap, "podgroup", PRE_NS, PRE_NAME, fast=True)
    literal = analyze(snap, "podgroup", PRE_NS, PRE_NAME, fast=False)
    assert _summary(fast) == _summary(literal)
    assert [p.key for p in fast.victim_pods] == ["default/v0", "default/v1"]
    v1 = next(v for v in fast.victims if v.unit.name == "v1")
    assert v1.failed_pod.name == "pre-1" and v1.failed_status.plugin == "InterPodAffinity"


def _oracle_case(stem: str):
    import json
    from pathlib import Path

    from kubectl_wap.model import SnapshotHeader
    from kubectl_wap.preemption.gates import parse_gates
    from kubectl_wap.snapshot.decode.convert import build_snapshot

    doc = json.loads((Path(__file__).parent / "oracle" / "cases" / f"{stem}.json").read_text())
    snap = build_snapshot(doc["cluster"], SnapshotHeader(source="test"))
    w = doc["whatif"]
    return doc, lambda fast: analyze(snap, w["kind"], w["namespace"], w["name"], parse_gates(doc["featureGates"]), fast=fast)


def test_fast_equals_literal_with_leaked_assignments_that_overcommit():
    """A CompositePodGroup's first child gang fails after placing its first pod on node4, the only
    node its anti-affinity allows; that pod stays among the proposed assignments (leaked) while
    the sibling gang fills node4 without seeing it. The replay with every victim removed already
    fails on node4, so upstream's per-unit replay of every assignment spares no unit. The fast
    path (which replays only the unit's nodes) must notice and give the literal answer: all ten
    lower-priority pods (kube-scheduler v1.37.2, tests/oracle/cases/gen-5000-4823.json)."""
    doc, run = _oracle_case("gen-5000-4823")
    fast, literal = run(True), run(False)
    assert _summary(fast) == _summary(literal)
    assert sorted(p.name for v in fast.victims for p in v.unit.pods) == sorted(v["name"] for v in doc["kubeScheduler"]["victims"])
    assert fast.reprieved == []


@st.composite
def cpg_preemptor_strategy(draw):
    """cluster_strategy(cross=True) with the pending gang replaced by a basic CompositePodGroup
    ml/pre-tree of two gang children that ask for different amounts: a child that fails after
    placing some pods leaves leaked assignments beside its sibling's (the shape of
    tests/oracle/cases/gen-5000-4823)."""
    from dataclasses import replace

    from kubectl_wap.model import Affinity, CompositePodGroup, LabelSelector, PodAffinityTerm, PodGroup
    from test_properties import GI, HOSTNAME, PRE_PRIO, _pod

    snap = draw(cluster_strategy(cross=True))
    pods = [p for p in snap.pods if not (p.namespace == PRE_NS and p.pod_group_name == PRE_NAME)]
    pgs = [g for g in snap.pod_groups if not (g.namespace == PRE_NS and g.name == PRE_NAME)]
    cpgs = list(snap.composite_pod_groups) + [CompositePodGroup(PRE_NS, "pre-tree", uid="uid-cpg-pre", policy="basic",
                                                                priority=PRE_PRIO)]
    anti = draw(st.booleans())
    for c in range(2):
        size = draw(st.integers(1, 4))
        name = f"pre-{c}"
        pgs.append(PodGroup(PRE_NS, name, uid=f"uid-pg-{name}", policy="gang", min_count=size, parent="pre-tree",
                            priority=PRE_PRIO, creation_timestamp=float(c)))
        cpu = draw(st.sampled_from([500, 1000, 1500]))
        kw: dict = {}
        if anti:
            kw["affinity"] = Affinity(pod_anti_affinity_required=(
                PodAffinityTerm(LabelSelector(match_labels=(("app", draw(st.sampled_from(["web", "etl", "ray"]))),)), HOSTNAME),))
        for k in range(size):
            pods.append(_pod(PRE_NS, f"{name}-{k}", cpu, GI // 2, prio=PRE_PRIO, group=name, labels={"app": "new"}, **kw))
    return replace(snap, pods=pods, pod_groups=pgs, composite_pod_groups=cpgs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cpg_preemptor_strategy())
def test_fast_equals_literal_composite_preemptor(snap):
    fast = analyze(snap, "compositepodgroup", PRE_NS, "pre-tree", fast=True)
    literal = analyze(snap, "compositepodgroup", PRE_NS, "pre-tree", fast=False)
    assert _summary(fast) == _summary(literal)


def test_victim_off_the_placement_node_ends_the_preemptors_first_of_series_pass():
    """A preemptor pod with required pod affinity to its own label (zone scope) is placed on n0
    (zone a) as "the first pod in a series": with every potential victim removed no pod matches
    its term (InterPodAffinity nodeTopologyMatchesAffinity: `len(clusterWideAffinityCounts) == 0
    && satisfiesSelfAffinityCheck`). Putting back v-web (app=web, on n1 in zone b, a node with no
    preemptor pod) makes the counts non-empty, and zone a holds no match: the replay of the
    preemptor's assignment fails, so v-web is a victim too (selectVictimsOnDomain replays every
    assignment for every unit). The fast path may not spare it as a unit off the placement
    nodes."""
    from kubectl_wap.model import Affinity, LabelSelector, Node, PodAffinityTerm, PodGroup, Snapshot
    from test_properties import GI, HOSTNAME, PRE_PRIO, ZONE, _pod

    nodes = [Node(name="n0", labels={HOSTNAME: "n0", ZONE: "a"}, allocatable={"cpu": 1000, "memory": 8 * GI, "pods": 110}),
             Node(name="n1", labels={HOSTNAME: "n1", ZONE: "b"}, allocatable={"cpu": 500, "memory": 8 * GI, "pods": 110})]
    web = Affinity(pod_affinity_required=(PodAffinityTerm(LabelSelector(match_labels=(("app", "web"),)), ZONE),))
    pods = [
        _pod(PRE_NS, "v-fill", 1000, 0, node="n0", prio=0, labels={"app": "fill"}, start=1.0),
        _pod(PRE_NS, "v-web", 100, 0, node="n1", prio=0, labels={"app": "web"}, start=2.0),
        _pod(PRE_NS, "pre-0", 1000, 0, prio=PRE_PRIO, group=PRE_NAME, labels={"app": "web"}, affinity=web),
    ]
    snap = Snapshot(nodes=nodes, pods=pods, pod_groups=[PodGroup(PRE_NS, PRE_NAME, policy="gang", min_count=1, priority=PRE_PRIO)])
    fast = analyze(snap, "podgroup", PRE_NS, PRE_NAME, fast=True)
    literal = analyze(snap, "podgroup", PRE_NS, PRE_NAME, fast=False)
    assert [(p.key, n) for p, n in literal.placements] == [(f"{PRE_NS}/pre-0", "n0")]
    assert sorted(p.name for p in literal.victim_pods) == ["v-fill", "v-web"]
    assert _summary(fast) == _summary(literal)
    same_verdicts(fast, literal)
