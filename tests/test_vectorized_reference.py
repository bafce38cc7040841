"""The vectorized Filter/Score (numpy over all nodes, per-signature static caches) against a plain
per-node reference (tests/reference_filter.py) on random clusters: same feasible set, same status
code / reasons / plugin on every failing node, and Scheduler.schedule picks the same node as a
reference that scores every feasible node one by one."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import reference_filter as ref
from kubectl_wap.framework.filtering import StaticCache, filter_all, filter_node, pre_filter
from kubectl_wap.framework.schedule_one import Scheduler
from kubectl_wap.framework.scoring import total_scores
from kubectl_wap.framework.state import ClusterState
from kubectl_wap.model import (
    Affinity,
    HostPort,
    Node,
    NodeSelectorTerm,
    Pod,
    PreferredNodeTerm,
    Requirement,
    Taint,
    Toleration,
)

GI = 1024**3
GPU, EPH = "nvidia.com/gpu", "ephemeral-storage"

taints = st.builds(Taint, st.sampled_from(["a", "b", "dedicated"]), st.sampled_from(["", "x", "y"]),
                   st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"]))
tolerations = st.builds(Toleration, st.sampled_from(["", "a", "b", "dedicated", "node.kubernetes.io/unschedulable"]),
                        st.sampled_from(["Equal", "Exists"]), st.sampled_from(["", "x", "y"]),
                        st.sampled_from(["", "NoSchedule", "NoExecute", "PreferNoSchedule"]))
ports = st.builds(HostPort, st.sampled_from(["0.0.0.0", "10.0.0.1", "10.0.0.2"]), st.sampled_from(["TCP", "UDP"]),
                  st.sampled_from([80, 443]))
requirement = st.one_of(
    st.builds(Requirement, st.sampled_from(["zone", "tier"]), st.sampled_from(["In", "NotIn"]),
              st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2, unique=True).map(tuple)),
    st.builds(Requirement, st.sampled_from(["zone", "tier", "gpu"]), st.sampled_from(["Exists", "DoesNotExist"])),
    st.builds(Requirement, st.just("rank"), st.sampled_from(["Gt", "Lt"]), st.sampled_from(["1", "3"]).map(lambda v: (v,))),
)
term = st.lists(requirement, min_size=1, max_size=2).map(lambda rs: NodeSelectorTerm(tuple(rs)))


def _requests(draw, big: bool) -> dict[str, int]:
    r = {"cpu": draw(st.sampled_from([0, 250, 500, 1500] + ([5000] if big else []))),
         "memory": draw(st.sampled_from([0, GI // 2, GI] + ([16 * GI] if big else [])))}
    g = draw(st.sampled_from([None, 0, 1, 3]))
    if g is not None:
        r[GPU] = g
    if draw(st.booleans()):
        r[EPH] = draw(st.sampled_from([GI, 10 * GI]))
    return r


@st.composite
def clusters(draw):
    names = draw(st.lists(st.sampled_from(["a1", "b2", "node-c", "node-a", "z", "m-9", "m-10"]), min_size=1, max_size=6, unique=True))
    nodes = []
    for name in names:
        alloc = {"cpu": draw(st.sampled_from([0, 1000, 2000, 4000])), "memory": draw(st.sampled_from([0, GI, 4 * GI])),
                 "pods": draw(st.sampled_from([0, 1, 2, 5, 110]))}
        if draw(st.booleans()):
            alloc[GPU] = draw(st.sampled_from([1, 2, 4]))
        if draw(st.booleans()):
            alloc[EPH] = draw(st.sampled_from([5 * GI, 50 * GI]))
        labels = {"zone": draw(st.sampled_from(["a", "b", "c"])), "rank": str(draw(st.integers(0, 5)))}
        if draw(st.booleans()):
            labels["tier"] = draw(st.sampled_from(["a", "b"]))
        if GPU in alloc:
            labels["gpu"] = "true"
        nodes.append(Node(name=name, uid=f"uid-{name}", labels=labels, taints=tuple(draw(st.lists(taints, max_size=2))),
                          unschedulable=draw(st.integers(0, 5)) == 0, allocatable=alloc))
    running = []
    for i in range(draw(st.integers(0, 8))):
        req = _requests(draw, big=False)
        cpu, mem = req["cpu"], req["memory"]
        running.append(Pod("default", f"r{i}", uid=f"uid-r{i}", node_name=draw(st.sampled_from(names)), phase="Running",
                           requests=req, nonzero_requests=(cpu or 100, mem or 200 * 1024**2),
                           host_ports=tuple(draw(st.lists(ports, max_size=1)))))
    req = _requests(draw, big=True)
    affinity = None
    if draw(st.booleans()):
        affinity = Affinity(
            node_required=draw(st.one_of(st.none(), st.lists(term, min_size=1, max_size=2).map(tuple))),
            node_preferred=tuple(draw(st.lists(st.builds(PreferredNodeTerm, st.integers(1, 100), term), max_size=3))),
        )
    pod = Pod("default", "pending", uid="uid-pending", requests=req,
              nonzero_requests=(req["cpu"] or 100, req["memory"] or 200 * 1024**2),
              tolerations=tuple(draw(st.lists(tolerations, max_size=3))),
              node_selector=draw(st.sampled_from([{}, {}, {"zone": "a"}, {"tier": "b"}])),
              affinity=affinity, host_ports=tuple(draw(st.lists(ports, max_size=1))))
    return nodes, running, pod


def _tuple(s):
    return (s.code, tuple(s.reasons), s.plugin)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_filter_all_matches_reference(case):
    nodes, running, pod = case
    state = ClusterState(nodes, running)
    static = StaticCache(state)
    cycle = pre_filter(state, pod)
    mask, statuses = filter_all(state, static, pod, cycle)
    want = ref.filter_nodes(pod, nodes, running)
    got_feasible = {state.nodes[i].name for i in range(len(state.nodes)) if mask[i]}
    assert got_feasible == {n for n, v in want.items() if v[0] == ref.SUCCESS}
    for i, node in enumerate(state.nodes):
        if not mask[i]:
            assert _tuple(statuses[i]) == want[node.name], node.name
        # The scalar per-node path agrees too.
        assert _tuple(filter_node(state, static, pod, cycle, i)) == (want[node.name] if not mask[i] else (0, (), ""))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_schedule_matches_reference(case):
    nodes, running, pod = case
    state = ClusterState(nodes, running)
    r = Scheduler(state).schedule(pod)
    got = state.nodes[r.node].name if r.ok else None
    assert got == ref.select_node(pod, nodes, running)


def test_reference_examples():
    """Hand-checked anchors for the reference itself."""
    n1 = Node("n1", allocatable={"cpu": 2000, "memory": 4 * GI, "pods": 110})
    n2 = Node("n2", allocatable={"cpu": 2000, "memory": 4 * GI, "pods": 110}, taints=(Taint("k", "v", "PreferNoSchedule"),))
    pod = Pod("d", "p", uid="p", requests={"cpu": 1000, "memory": GI}, nonzero_requests=(1000, GI))
    # LeastAllocated (50 + 75) / 2 = 62; Balanced (v1.37.2, the balance change): with the pod
    # 100 - |0.5-0.25|/2*100 = 87, without it (empty node) 100 -> 50 + (50 + 87 - 100) // 2 = 68;
    # TaintToleration 100 vs 0.
    assert ref.least_allocated(pod, n1, []) == 62
    assert ref.balanced_allocation(pod, n1, []) == 68
    assert ref.select_node(pod, [n2, n1], []) == "n1"
    st_ = ref.node_status(Pod("d", "q", uid="q", requests={"cpu": 3000}), n1, [])
    assert st_ == (ref.UNRESOLVABLE, ("Insufficient cpu",), "NodeResourcesFit")


@st.composite
def scoring_clusters(draw):
    """Clusters where the pod fits on >= 2 nodes, so that Score runs (clusters() mostly fails Filter
    on every node: the issue-20 audit counted 291 of 300 examples without a feasible node)."""
    names = draw(st.lists(st.sampled_from(["a1", "b2", "node-a", "node-c", "z", "m-9", "m-10"]), min_size=2, max_size=6, unique=True))
    nodes = [Node(name=n, uid=f"uid-{n}",
                  labels={"zone": draw(st.sampled_from(["a", "b", "c"])), "rank": str(draw(st.integers(0, 5))),
                          **({"tier": draw(st.sampled_from(["a", "b"]))} if draw(st.booleans()) else {})},
                  taints=tuple(draw(st.lists(st.builds(Taint, st.sampled_from(["a", "b"]), st.sampled_from(["", "x"]),
                                                       st.sampled_from(["PreferNoSchedule", "PreferNoSchedule", "NoSchedule"])),
                                             max_size=2))),
                  allocatable={"cpu": draw(st.sampled_from([2000, 4000, 8000])), "memory": draw(st.sampled_from([4 * GI, 8 * GI])),
                               "pods": 110})
             for n in names]
    running = []
    for i in range(draw(st.integers(0, 8))):
        cpu, mem = draw(st.sampled_from([0, 250, 500, 1500])), draw(st.sampled_from([0, GI // 2, GI]))
        running.append(Pod("default", f"r{i}", uid=f"uid-r{i}", node_name=draw(st.sampled_from(names)), phase="Running",
                           requests={"cpu": cpu, "memory": mem}, nonzero_requests=(cpu or 100, mem or 200 * 1024**2)))
    cpu, mem = draw(st.sampled_from([0, 100, 500])), draw(st.sampled_from([0, GI // 4]))
    pod = Pod("default", "pending", uid="uid-pending", requests={"cpu": cpu, "memory": mem},
              nonzero_requests=(cpu or 100, mem or 200 * 1024**2),
              tolerations=tuple(draw(st.lists(tolerations, max_size=2))),
              affinity=Affinity(node_preferred=tuple(draw(st.lists(st.builds(PreferredNodeTerm, st.integers(0, 100), term),
                                                                    min_size=1, max_size=3)))) if draw(st.booleans()) else None)
    feasible = [n for n in nodes if ref.node_status(pod, n, running)[0] == ref.SUCCESS]
    assume(len(feasible) >= 2)
    return nodes, running, pod, feasible


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(scoring_clusters())
def test_total_scores_match_reference(case):
    """Every feasible node's total score (LeastAllocated, BalancedAllocation, TaintToleration x3,
    NodeAffinity x2) equals the reference's, and so does the chosen node."""
    nodes, running, pod, feasible = case
    state = ClusterState(nodes, running)
    idx = np.array(sorted(state.node_index[n.name] for n in feasible))
    got = dict(zip((state.nodes[i].name for i in idx), total_scores(state, pod, pre_filter(state, pod), idx).tolist()))
    want = ref.scores(pod, [state.nodes[i] for i in idx], running)
    event(f"feasible nodes={len(feasible)}")
    event("preferred node affinity" if pod.affinity is not None else "no node affinity")
    event("PreferNoSchedule taint on a feasible node" if any(t.effect == "PreferNoSchedule" for n in feasible for t in n.taints)
          else "no PreferNoSchedule taint")
    assert got == want
    r = Scheduler(state).schedule(pod)
    assert state.nodes[r.node].name == ref.select_node(pod, nodes, running)
