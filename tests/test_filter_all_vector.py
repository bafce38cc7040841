"""filter_all's vectorized InterPodAffinity path must agree with the per-node Filter on every node."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_wap.framework.filtering import StaticCache, filter_all, filter_node, pre_filter
from kubectl_wap.framework.state import ClusterState
from kubectl_wap.model import Affinity, LabelSelector, Node, Pod, PodAffinityTerm

ZONES = ["a", "b", "c"]
APPS = ["x", "y"]


@st.composite
def clusters(draw):
    n = draw(st.integers(2, 6))
    nodes = [
        Node(f"n{i}", labels={"zone": draw(st.sampled_from(ZONES)), "kubernetes.io/hostname": f"n{i}"},
             allocatable={"cpu": 4000, "memory": 8 << 30, "pods": 20})
        for i in range(n)
    ]
    pods = []
    for j in range(draw(st.integers(0, 10))):
        anti = None
        if draw(st.booleans()):
            key = draw(st.sampled_from(["zone", "kubernetes.io/hostname"]))
            sel = LabelSelector(match_labels=(("app", draw(st.sampled_from(APPS))),))
            anti = Affinity(pod_anti_affinity_required=(PodAffinityTerm(sel, key),))
        pods.append(Pod("d", f"p{j}", uid=f"p{j}", node_name=f"n{draw(st.integers(0, n - 1))}", phase="Running",
                        labels={"app": draw(st.sampled_from(APPS))}, requests={"cpu": 100}, affinity=anti))
    incoming_anti = None
    if draw(st.booleans()):
        incoming_anti = Affinity(pod_anti_affinity_required=(
            PodAffinityTerm(LabelSelector(match_labels=(("app", draw(st.sampled_from(APPS))),)), "zone"),))
    incoming = Pod("d", "new", uid="new", labels={"app": draw(st.sampled_from(APPS))}, requests={"cpu": 100},
                   affinity=incoming_anti)
    return nodes, pods, incoming


@settings(max_examples=150, deadline=None)
@given(clusters())
def test_vectorized_filter_matches_per_node(c) -> None:
    nodes, pods, incoming = c
    state = ClusterState(nodes, pods)
    static = StaticCache(state)
    cycle = pre_filter(state, incoming)
    mask, statuses = filter_all(state, static, incoming, cycle)
    for i in range(len(state.nodes)):
        st_ = filter_node(state, static, incoming, cycle, i)
        assert bool(mask[i]) == st_.ok
        if not st_.ok:
            assert statuses[i] == st_
