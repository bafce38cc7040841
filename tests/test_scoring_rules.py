"""framework/scoring.py, rule by rule: the node-local Score plugins on cases transcribed from their
v1.37.2 unit tests (k8s.io/kubernetes@v1.37.2/pkg/scheduler/framework/plugins/...), and the
default profile's weights in the total (pkg/scheduler/apis/config/v1/default_plugins.go:
TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1, NodeResourcesBalancedAllocation 1).
tests/test_vectorized_reference.py holds the vectorized totals equal to a per-node reference; here
each number is the upstream rule's."""

from __future__ import annotations

import numpy as np
import pytest
from builders import make_node, make_pod

from kubectl_wap.framework.filtering import pre_filter
from kubectl_wap.framework.scoring import (balanced_allocation, least_allocated, node_affinity, select_host, taint_toleration,
                                           total_scores)
from kubectl_wap.framework.buildstate import build_state
from kubectl_wap.model import SnapshotHeader
from kubectl_wap.snapshot.decode.convert import build_snapshot


def _cluster(nodes: list[dict], incoming: dict):
    snap = build_snapshot([*nodes, incoming], SnapshotHeader(source="test"))
    state = build_state(snap)
    (pod,) = [p for p in snap.pods if p.name == incoming["metadata"]["name"]]
    return state, pod, np.arange(len(state.nodes))


def _names(state) -> list[str]:
    return [n.name for n in state.nodes]


# ---- NodeResourcesFit LeastAllocated (least_allocated_test.go TestLeastAllocatedScoringStrategy):
# per resource (allocatable - requested) * 100 / allocatable, averaged over cpu and memory.
@pytest.mark.parametrize("pod, want, why", [
    pytest.param(make_pod("p").priority(0).req(cpu="1", memory="2000").req(cpu="2", memory="3000").obj(), [37, 50],
                 "node1: cpu (4000-3000)*100/4000 = 25, memory 50, (25+50)/2 = 37; node2: cpu 50, memory 50",
                 id="nothing scheduled, resources requested, differently sized nodes"),
])
def test_least_allocated(pod, want, why):
    nodes = [make_node("node1").alloc(cpu="4", memory="10000").obj(), make_node("node2").alloc(cpu="6", memory="10000").obj()]
    state, p, idx = _cluster(nodes, pod)
    got = least_allocated(state, p, idx).tolist()
    assert got == want, f"got {got}, want {want} ({why})"


# ---- TaintToleration Score (taint_toleration_test.go TestTaintTolerationScore): the count of
# intolerable PreferNoSchedule taints, normalized and reversed (DefaultNormalizeScore(reverse)).
def test_node_with_tolerated_taints_scores_higher_than_one_with_intolerable_taints():
    nodes = [make_node("nodeA").taint("foo", "bar", "PreferNoSchedule").obj(),
             make_node("nodeB").taint("foo", "blah", "PreferNoSchedule").obj()]
    pod = make_pod("p").priority(0).req(cpu="100m").toleration("foo", "Equal", "bar", "PreferNoSchedule").obj()
    state, p, idx = _cluster(nodes, pod)
    got = dict(zip(_names(state), taint_toleration(state, p, idx).tolist()))
    want = {"nodeA": 100, "nodeB": 0}
    assert got == want, f"got {got}, want {want} (nodeA's taint is tolerated, nodeB's is not)"


# ---- NodeAffinity Score (node_affinity_test.go TestNodeAffinityPriority): the weights of the
# matching preferred terms, normalized to 100.
def test_only_node1_matches_the_preferred_scheduling_requirements_of_pod():
    nodes = [make_node("node1").label(foo="bar").obj(), make_node("node2").label(key="value").obj(),
             make_node("node3").label(az="az1").obj()]
    pod = make_pod("p").priority(0).req(cpu="100m").node_affinity_in("foo", ["bar"], required=False, weight=2).obj()
    state, p, idx = _cluster(nodes, pod)
    got = dict(zip(_names(state), node_affinity(state, p, idx).tolist()))
    want = {"node1": 100, "node2": 0, "node3": 0}
    assert got == want, f"got {got}, want {want} (only node1 has foo=bar)"


# ---- The weights in the total: two nodes alike but for one plugin's input, whose score is 100 on
# one and 0 on the other, differ in total by exactly 100 times that plugin's weight.
@pytest.mark.parametrize("nodes, pod, weight, why", [
    pytest.param([make_node("n1").label(tier="a").obj(), make_node("n2").label(tier="b").obj()],
                 make_pod("p").priority(0).req(cpu="100m", memory="64Mi").node_affinity_in("tier", ["a"], required=False, weight=10).obj(),
                 2, "NodeAffinity has weight 2: its 100 on n1 and 0 on n2 add 200 and 0",
                 id="NodeAffinity counts twice in the total"),
    pytest.param([make_node("n1").obj(), make_node("n2").taint("spot", "true", "PreferNoSchedule").obj()],
                 make_pod("p").priority(0).req(cpu="100m", memory="64Mi").obj(),
                 3, "TaintToleration has weight 3: its 100 on n1 and 0 on n2 add 300 and 0",
                 id="TaintToleration counts three times in the total"),
])
def test_default_profile_weights(nodes, pod, weight, why):
    state, p, idx = _cluster(nodes, pod)
    total = total_scores(state, p, pre_filter(state, p), idx).tolist()
    got = total[0] - total[1]
    assert got == 100 * weight, f"got a difference of {got} between n1 ({total[0]}) and n2 ({total[1]}), want {100 * weight} ({why})"


def test_least_allocated_adds_to_the_total_so_the_emptier_node_wins():
    """LeastAllocated has weight 1 and a higher score for more room: on the upstream case above
    (37 on node1, 50 on node2) its share of the total is +37 and +50, and with BalancedAllocation
    also preferring node2 (its request fractions are equal there) selectHost picks node2."""
    nodes = [make_node("node1").alloc(cpu="4", memory="10000").obj(), make_node("node2").alloc(cpu="6", memory="10000").obj()]
    pod = make_pod("p").priority(0).req(cpu="1", memory="2000").req(cpu="2", memory="3000").obj()
    state, p, idx = _cluster(nodes, pod)
    cycle = pre_filter(state, p)
    total = total_scores(state, p, cycle, idx)
    rest = balanced_allocation(state, p, idx) + 3 * taint_toleration(state, p, idx) + 2 * node_affinity(state, p, idx)
    got = (total - rest).tolist()
    assert got == [37, 50], f"got a LeastAllocated share of {got}, want [37, 50] (weight 1, more room scores higher)"
    chosen = state.nodes[select_host(state, p, cycle, idx)].name
    assert chosen == "node2", f"got {chosen}, want node2 (the emptier node scores higher on both resource plugins)"
