"""PodTopologySpread plugin: cases transcribed from upstream
pkg/scheduler/framework/plugins/podtopologyspread/{filtering_test.go,scoring_test.go} (case names
quoted where transcribed), plus a property test that add_pod/remove_pod keep the cycle data equal
to a fresh pre_filter."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_wap.framework.plugins import podtopologyspread as pts
from kubectl_wap.framework.state import ClusterState
from kubectl_wap.framework.status import SUCCESS, UNRESOLVABLE, UNSCHEDULABLE
from kubectl_wap.model import (
    Affinity,
    LabelSelector,
    Node,
    NodeSelectorTerm,
    Pod,
    Requirement,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)

PLUGIN = pts.PLUGIN
HOST = "kubernetes.io/hostname"
_ids = itertools.count()


def exists(key):
    return LabelSelector(match_expressions=(Requirement(key, "Exists"),))


FOO = exists("foo")
BAR = exists("bar")


def tsc(skew, key, when="DoNotSchedule", sel=FOO, **kw):
    return TopologySpreadConstraint(skew, key, when, sel, **kw)


def pod(node="", labels=("foo",), ns="default", tscs=(), name=None, **kw):
    n = name or f"p{next(_ids)}"
    lab = labels if isinstance(labels, dict) else {k: "" for k in labels}
    return Pod(ns, n, uid=f"{ns}/{n}", labels=lab, node_name=node, topology_spread=tuple(tscs), **kw)


def node(name, **labels):
    taints = labels.pop("taints", ())
    return Node(name=name, labels=labels, taints=taints)


def zone_nodes():
    return [
        node("node-a", zone="zone1", node="node-a"),
        node("node-b", zone="zone1", node="node-b"),
        node("node-x", zone="zone2", node="node-x"),
        node("node-y", zone="zone2", node="node-y"),
    ]


def spread(counts: dict[str, int], **kw):
    out = []
    for n, c in counts.items():
        out += [pod(node=n, **kw) for _ in range(c)]
    return out


def codes(nodes, pods, p):
    state = ClusterState(nodes, pods, {})
    data, status = PLUGIN.pre_filter(state, p)
    assert status.ok, status
    return {state.nodes[i].name: PLUGIN.filter(state, data, p, i).code for i in range(len(state.nodes))}


OK, UN, UR = SUCCESS, UNSCHEDULABLE, UNRESOLVABLE

# ---- TestSingleConstraint / TestMultipleConstraints (filtering_test.go) ---------------------


def test_existing_pods_in_a_different_namespace_do_not_count():
    p = pod(tscs=[tsc(1, "zone")])
    pods = [
        pod(node="node-a", ns="ns1"),
        pod(node="node-a", ns="ns2"),
        pod(node="node-x"),
        pod(node="node-y"),
    ]
    assert codes(zone_nodes(), pods, p) == {"node-a": OK, "node-b": OK, "node-x": UN, "node-y": UN}


def test_pods_spread_across_zones_as_3_3_all_nodes_fit():
    p = pod(tscs=[tsc(1, "zone")])
    pods = spread({"node-a": 2, "node-b": 1, "node-y": 3})
    assert set(codes(zone_nodes(), pods, p).values()) == {OK}


def test_pods_spread_across_nodes_as_2_1_0_3_only_node_x_fits():
    p = pod(tscs=[tsc(1, "node")])
    pods = spread({"node-a": 2, "node-b": 1, "node-y": 3})
    assert codes(zone_nodes(), pods, p) == {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": UN}


def test_pods_spread_across_nodes_as_2_1_0_3_maxskew_is_2_node_b_and_node_x_fit():
    p = pod(tscs=[tsc(2, "node")])
    pods = spread({"node-a": 2, "node-b": 1, "node-y": 3})
    assert codes(zone_nodes(), pods, p) == {"node-a": UN, "node-b": OK, "node-x": OK, "node-y": UN}


def test_incoming_pod_does_not_match_itself():
    # "pods spread across nodes as 2/1/0/3, but pod doesn't match itself": selfMatch = 0
    p = pod(labels=("bar",), tscs=[tsc(1, "node")])
    pods = spread({"node-a": 2, "node-b": 1, "node-y": 3})
    assert codes(zone_nodes(), pods, p) == {"node-a": UN, "node-b": OK, "node-x": OK, "node-y": UN}


def test_node_missing_topology_key_is_unresolvable():
    # "pods spread across zones as 1/2 due to absence of label 'zone' on node-b"
    nodes = zone_nodes()
    nodes[1] = node("node-b", zon="zone1", node="node-b")
    p = pod(tscs=[tsc(1, "zone")])
    pods = spread({"node-a": 1, "node-b": 1, "node-x": 1, "node-y": 1})
    got = codes(nodes, pods, p)
    assert got == {"node-a": OK, "node-b": UR, "node-x": UN, "node-y": UN}
    state = ClusterState(nodes, pods, {})
    data, _ = PLUGIN.pre_filter(state, p)
    assert PLUGIN.filter(state, data, p, 1).reasons == (pts.ERR_NODE_LABEL_NOT_MATCH,)
    assert PLUGIN.filter(state, data, p, 2).reasons == (pts.ERR_CONSTRAINTS_NOT_MATCH,)


def test_incoming_pod_has_node_affinity_pods_spread_as_2_1_0_3_hence_node_a_fits():
    # nodeAffinityPolicy Honor (default): only node-a and node-y form domains -> min is 2.
    req = Affinity(node_required=(NodeSelectorTerm((Requirement("node", "In", ("node-a", "node-y")),)),))
    p = pod(tscs=[tsc(1, "node")], affinity=req)
    pods = spread({"node-a": 2, "node-b": 1, "node-y": 3})
    got = codes(zone_nodes(), pods, p)
    assert got["node-a"] == OK and got["node-y"] == UN
    # nodeAffinityPolicy Ignore: every node counts, min is 0
    p = pod(tscs=[tsc(1, "node", node_affinity_policy="Ignore")], affinity=req)
    got = codes(zone_nodes(), pods, p)
    assert got["node-a"] == UN and got["node-x"] == OK


def test_node_taints_policy_honor_excludes_tainted_nodes():
    nodes = zone_nodes()
    nodes[2] = node("node-x", zone="zone2", node="node-x", taints=(Taint("k", "v", "NoSchedule"),))
    pods = spread({"node-a": 1, "node-b": 1, "node-y": 1})
    p = pod(tscs=[tsc(1, "node", node_taints_policy="Honor")])
    # node-x (0 pods) does not form a domain: min over a/b/y is 1, so a/b/y fit (1+1-1 <= 1)
    assert codes(nodes, pods, p) == {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK}
    p = pod(tscs=[tsc(1, "node")])  # Ignore (default): node-x counts, min 0
    assert codes(nodes, pods, p) == {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": UN}
    p = pod(tscs=[tsc(1, "node", node_taints_policy="Honor")], tolerations=(Toleration(key="k", operator="Exists"),))
    assert codes(nodes, pods, p)["node-a"] == UN


def test_min_domains():
    # fewer eligible domains (2) than minDomains (3): the global minimum is treated as 0
    pods = spread({"node-a": 1, "node-x": 1})
    p = pod(tscs=[tsc(1, "zone", min_domains=3)])
    assert set(codes(zone_nodes(), pods, p).values()) == {UN}
    p = pod(tscs=[tsc(1, "zone", min_domains=2)])
    assert set(codes(zone_nodes(), pods, p).values()) == {OK}


def test_match_label_keys():
    # values of matchLabelKeys from the incoming pod's labels are ANDed into the selector
    pods = spread({"node-a": 2}, labels={"foo": "", "rev": "1"}) + spread({"node-x": 1}, labels={"foo": "", "rev": "2"})
    p = pod(labels={"foo": "", "rev": "2"}, tscs=[tsc(1, "zone", match_label_keys=("rev",))])
    assert codes(zone_nodes(), pods, p) == {"node-a": OK, "node-b": OK, "node-x": UN, "node-y": UN}


def test_terminating_pods_are_not_counted():
    pods = spread({"node-a": 2}) + [pod(node="node-x", deletion_timestamp=1.0)]
    p = pod(tscs=[tsc(1, "node")])
    assert codes(zone_nodes(), pods, p) == {"node-a": UN, "node-b": OK, "node-x": OK, "node-y": OK}


def test_multiple_constraints_zone_and_node():
    # modeled on "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]": zones are balanced
    # (3/3) and the node constraint leaves only node-x.
    p = pod(tscs=[tsc(1, "zone"), tsc(1, "node")])
    pods = spread({"node-a": 2, "node-b": 1, "node-y": 3})
    assert codes(zone_nodes(), pods, p) == {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": UN}


def test_no_constraints_skip_and_schedule_anyway_not_filtered():
    state = ClusterState(zone_nodes(), [], {})
    data, status = PLUGIN.pre_filter(state, pod(tscs=[tsc(1, "zone", when="ScheduleAnyway")]))
    assert status.ok and data.skip
    assert not PLUGIN.relevant(state, pod())


# ---- TestPodTopologySpreadScore (scoring_test.go) -------------------------------------------


def host_nodes(*names):
    return [Node(name=n, labels={HOST: n}) for n in names]


def zh(name, zone):
    return Node(name=name, labels={"zone": zone, HOST: name})


SCORE_CASES = [
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        pod(tscs=[tsc(2, HOST, "ScheduleAnyway")]),
        spread({"node-a": 2, "node-b": 1, "node-d": 3}),
        host_nodes("node-a", "node-b", "node-c", "node-d"),
        [],
        [33, 66, 100, 16],
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        pod(tscs=[tsc(3, HOST, "ScheduleAnyway")]),
        spread({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}),
        host_nodes("node-a", "node-b", "node-c", "node-d"),
        [],
        [44, 66, 77, 100],
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates",
        pod(tscs=[tsc(1, HOST, "ScheduleAnyway")]),
        spread({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        host_nodes("node-a", "node-b", "node-x"),
        host_nodes("node-y"),
        [33, 83, 100],
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        pod(tscs=[tsc(1, HOST, "ScheduleAnyway")]),
        spread({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        host_nodes("node-a") + [Node(name="node-b", labels={"n": "node-b"})] + host_nodes("node-x"),
        host_nodes("node-y"),
        [16, 0, 100],
    ),
    (
        "one constraint on zone, 3 out of 4 nodes are candidates",
        pod(tscs=[tsc(1, "zone", "ScheduleAnyway")]),
        spread({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")],
        [zh("node-y", "zone2")],
        [75, 75, 100],
    ),
    (
        "two Constraints on zone and node, 2 out of 4 nodes are candidates",
        pod(tscs=[tsc(1, "zone", "ScheduleAnyway"), tsc(1, HOST, "ScheduleAnyway")]),
        spread({"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4}),
        [zh("node-a", "zone1"), zh("node-x", "zone2")],
        [zh("node-b", "zone1"), zh("node-y", "zone2")],
        [100, 63],
    ),
    (
        "two Constraints on zone and node, with different labelSelectors",
        pod(labels=("foo", "bar"), tscs=[tsc(1, "zone", "ScheduleAnyway", FOO), tsc(1, HOST, "ScheduleAnyway", BAR)]),
        [pod(node="node-a"), pod(node="node-b", labels=("foo", "bar")), pod(node="node-y"), pod(node="node-y", labels=("bar",))],
        [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), zh("node-y", "zone2")],
        [],
        [60, 20, 100, 60],
    ),
    (
        "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        pod(labels=("foo", "bar"), tscs=[tsc(1, "zone", "ScheduleAnyway", FOO), tsc(1, HOST, "ScheduleAnyway", BAR)]),
        [pod(node="node-b", labels=("bar",)), pod(node="node-x"), pod(node="node-y", labels=("foo", "bar"))],
        [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), zh("node-y", "zone2")],
        [],
        [100, 60, 40, 0],
    ),
    (
        "one constraint on node, all nodes have the same number of matching pods",
        pod(tscs=[tsc(1, HOST, "ScheduleAnyway")]),
        spread({"node-a": 1, "node-b": 1}),
        host_nodes("node-a", "node-b"),
        [],
        [100, 100],
    ),
]


@pytest.mark.parametrize("name,p,pods,feasible,failed,want", SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_pod_topology_spread_score(name, p, pods, feasible, failed, want):
    state = ClusterState(feasible + failed, pods, {})
    idx = [state.node_index[n.name] for n in feasible]
    assert PLUGIN.score(state, p, idx) == want


def test_score_without_soft_constraints_is_zero():
    state = ClusterState(host_nodes("a", "b"), spread({"a": 2}), {})
    assert PLUGIN.score(state, pod(tscs=[tsc(1, HOST)]), [0, 1]) == [0, 0]


# ---- property: add_pod/remove_pod == fresh pre_filter ----------------------------------------


@st.composite
def clusters(draw):
    n = draw(st.integers(1, 5))
    nodes = []
    for i in range(n):
        labels = {HOST: f"n{i}"}
        if draw(st.integers(0, 4)):
            labels["zone"] = draw(st.sampled_from(["z1", "z2", "z3"]))
        if draw(st.booleans()):
            labels["disk"] = "ssd"
        taints = (Taint("t", "", "NoSchedule"),) if draw(st.integers(0, 3)) == 0 else ()
        nodes.append(Node(name=f"n{i}", labels=labels, taints=taints))
    names = [x.name for x in nodes]

    def a_pod(terminating_ok):
        labels = draw(st.sampled_from([{"foo": ""}, {"bar": ""}, {"foo": "", "bar": ""}, {}, {"foo": "", "rev": "1"}]))
        return pod(
            node=draw(st.sampled_from(names)),
            labels=labels,
            ns=draw(st.sampled_from(["default", "other"])),
            deletion_timestamp=(1.0 if terminating_ok and draw(st.integers(0, 4)) == 0 else None),
        )

    existing = [a_pod(True) for _ in range(draw(st.integers(0, 10)))]
    extra = [a_pod(False) for _ in range(draw(st.integers(0, 4)))]
    cons = []
    for _ in range(draw(st.integers(1, 2))):
        cons.append(
            tsc(
                draw(st.integers(1, 2)),
                draw(st.sampled_from(["zone", HOST])),
                sel=draw(st.sampled_from([FOO, BAR, None])),
                min_domains=draw(st.sampled_from([None, 1, 3])),
                node_affinity_policy=draw(st.sampled_from(["Honor", "Ignore"])),
                node_taints_policy=draw(st.sampled_from(["Honor", "Ignore"])),
                match_label_keys=draw(st.sampled_from([(), ("rev",)])),
            )
        )
    incoming = pod(
        labels=draw(st.sampled_from([{"foo": ""}, {"foo": "", "rev": "1"}, {"bar": ""}])),
        tscs=cons,
        node_selector=draw(st.sampled_from([{}, {"disk": "ssd"}])),
        tolerations=draw(st.sampled_from([(), (Toleration(key="t", operator="Exists"),)])),
    )
    # only non-terminating pods are removed/added: upstream's updateWithPod does not skip
    # terminating pods although countPodsMatchSelector does.
    removals = [p.deletion_timestamp is None and draw(st.booleans()) for p in existing]
    return nodes, existing, extra, incoming, removals


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_add_remove_matches_fresh_prefilter(case):
    nodes, existing, extra, incoming, removals = case
    state = ClusterState(nodes, existing, {})
    data, status = PLUGIN.pre_filter(state, incoming)
    assert status.ok
    clone = PLUGIN.clone(data)
    for p, rm in zip(existing, removals):
        if rm:
            idx = state.remove_pod(p)
            PLUGIN.remove_pod(state, data, incoming, p, idx)
    for p in extra:
        idx = state.node_index[p.node_name]
        state.add_pod(p, idx)
        PLUGIN.add_pod(state, data, incoming, p, idx)
    fresh, _ = PLUGIN.pre_filter(state, incoming)
    assert data.tp_counts == fresh.tp_counts
    for i in range(len(data.constraints)):
        assert data.min_match_num(i) == fresh.min_match_num(i)
    for i in range(len(state.nodes)):
        assert PLUGIN.filter(state, data, incoming, i) == PLUGIN.filter(state, fresh, incoming, i)
    # clones are independent: undo everything on the clone's side and compare with the original
    state2 = ClusterState(nodes, existing, {})
    orig, _ = PLUGIN.pre_filter(state2, incoming)
    assert clone.tp_counts == orig.tp_counts and clone.min_match == orig.min_match
