"""The 1.38 profile's victim-aware node choice remembers `needed` per node
(preemption/victimaware.py `_answer`): on contended clusters the analysis must be exactly the one
computed without the memo, and the memo must actually be used."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from test_properties_contention import NS, contended
from kubectl_wap.preemption import victimaware
from kubectl_wap.preemption.analyze import analyze
from kubectl_wap.preemption.gates import Gates
from kubectl_wap.profiles import V1_38
from kubectl_wap.report.document import to_document

HITS: list[int] = []


def _run(kind, snap, memo: bool):
    orig = victimaware.VictimAwareChoice._spec_id
    calls = [0, 0]  # answers asked for, answers computed
    asked, computed = victimaware.VictimAwareChoice._answer, victimaware.VictimAwareChoice._needed

    def count_asked(self, *a):
        calls[0] += 1
        return asked(self, *a)

    def count_computed(self, *a):
        calls[1] += 1
        return computed(self, *a)

    try:
        if not memo:
            victimaware.VictimAwareChoice._spec_id = lambda self, pod, cycle: None
        victimaware.VictimAwareChoice._answer, victimaware.VictimAwareChoice._needed = count_asked, count_computed
        res = analyze(snap, kind, NS, "pre", gates=Gates(profile=V1_38))
    finally:
        victimaware.VictimAwareChoice._spec_id = orig
        victimaware.VictimAwareChoice._answer, victimaware.VictimAwareChoice._needed = asked, computed
    return to_document(res), calls


@settings(max_examples=120, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(contended())
def test_memo_gives_the_same_analysis(case):
    kind, snap = case
    with_memo, calls = _run(kind, snap, memo=True)
    without, plain = _run(kind, snap, memo=False)
    assert plain[0] == plain[1]  # without the memo every question is computed
    assert with_memo == without
    HITS.append(calls[0] - calls[1])


def test_memo_is_used():
    if len(HITS) < 100:  # run alone (or -k): draw the examples here
        HITS.clear()
        test_memo_gives_the_same_analysis()
    assert sum(1 for h in HITS if h > 0) >= 10, f"the memo answered in only {sum(1 for h in HITS if h > 0)} of {len(HITS)} examples"


def test_a_unit_committed_elsewhere_is_not_answered_from_the_memo():
    """An all-mode unit `v` spans n0 and n1. p1 (no selector) weighs every node: n1's new victims
    are then [v], cost 2 pods, so p1 takes n2 (one pod). p2 may only run on n0, which commits v.
    For p3 (same spec as p1) n1 is unchanged, but v is committed now: n1 costs nothing, so p3 goes
    to n1 and not to n5 (one more victim). A memo keyed without the committed units would answer
    with p1's [v] and send p3 to n5."""
    from kubectl_wap.model import ALL, Node, PodGroup, Snapshot
    from test_properties_contention import _pod

    host = "kubernetes.io/hostname"
    nodes = [Node(name=n, uid=f"uid-{n}", labels={host: n}, allocatable={"cpu": 2000, "memory": 16 * 1024**3, "pods": 110})
             for n in ("n0", "n1", "n2", "n5")]
    pods = [
        _pod("batch", "v-0", 2000, node="n0", group="v", start=1.0),
        _pod("batch", "v-1", 2000, node="n1", group="v", start=1.0),
        _pod("default", "s2", 2000, node="n2", start=2.0),
        _pod("default", "s5", 2000, node="n5", start=2.0),
    ]
    for i, sel in ((1, {}), (2, {host: "n0"}), (3, {})):
        pods.append(_pod(NS, f"p{i}", 2000, prio=1000, group="pre", start=None, node_selector=sel))
    pgs = [PodGroup("batch", "v", uid="uid-v", disruption_mode=ALL, priority=0),
           PodGroup(NS, "pre", uid="uid-pre", policy="gang", min_count=3, priority=1000)]
    snap = Snapshot(nodes=nodes, pods=pods, pod_groups=pgs)
    for memo in (True, False):
        doc, _ = _run("podgroup", snap, memo)
        assert sorted((p["pod"]["name"], p["node"]) for p in doc["placements"]) == [("p1", "n2"), ("p2", "n0"), ("p3", "n1")], memo
        assert sorted(p["name"] for u in doc["victimUnits"] for p in u["pods"]) == ["s2", "v-0", "v-1"]


def test_a_nominated_pod_placed_elsewhere_stops_counting_on_its_node():
    """m2 is nominated to n0 but may only run on n2. When m1 weighs n0, m2 still counts there
    (filter_with_nominated), so u1 cannot come back next to m1: n0 needs [u1]. m1 takes n4 (the
    cheapest victim), m2 takes n2. For m3, same shape as m1 and n0 unchanged, m2 is placed now and
    no longer counts: n0 needs nothing, and wins over n4 (also free, since u4 is committed, but
    fuller). A memo that ignored the nominated pods would answer [u1] and send m3 to n4."""
    from kubectl_wap.model import Node, PodGroup, Snapshot, Taint, Toleration
    from test_properties_contention import _pod

    host = "kubernetes.io/hostname"

    def node(name, **kw):
        labels = {host: name, **kw.pop("labels", {})}
        return Node(name=name, uid=f"uid-{name}", labels=labels, allocatable={"cpu": 3000, "memory": 16 * 1024**3, "pods": 110}, **kw)

    nodes = [node("n0"), node("n1"), node("n3"), node("n4"),
             node("n2", labels={"pool": "x"}, taints=(Taint("dedicated", "m2", "NoSchedule"),))]
    pods = [
        _pod("default", "u1", 1500, node="n0", prio=100, start=1.0),
        _pod("default", "u2", 2500, node="n1", prio=100, start=1.0),
        _pod("default", "u3", 2500, node="n3", prio=0, start=1.0),
        _pod("default", "u4", 2500, node="n4", prio=-10, start=1.0),
        _pod(NS, "m1", 1000, prio=1000, group="pre"),
        _pod(NS, "m2", 1000, prio=1000, group="pre", nominated_node_name="n0", node_selector={"pool": "x"},
             tolerations=(Toleration("dedicated", "Equal", "m2", "NoSchedule"),)),
        _pod(NS, "m3", 1000, prio=1000, group="pre"),
    ]
    snap = Snapshot(nodes=nodes, pods=pods, pod_groups=[PodGroup(NS, "pre", uid="uid-pre", policy="gang", min_count=3, priority=1000)])
    for memo in (True, False):
        doc, calls = _run("podgroup", snap, memo)
        assert doc["outcome"] == "Preempt", memo
        assert sorted((p["pod"]["name"], p["node"]) for p in doc["placements"]) == [("m1", "n4"), ("m2", "n2"), ("m3", "n0")], memo
        if memo:
            assert calls[0] > calls[1]  # with a nominated pod in the cluster, m3 had answers from the memo (n1, n3)
