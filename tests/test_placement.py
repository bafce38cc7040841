"""Topology-aware workload scheduling (TAS): kubectl_wap/framework/placement.py.

Expectations follow upstream's podGroupSchedulingPlacementAlgorithm (schedule_one_podgroup.go),
TopologyPlacementGenerator (plugins/topologyaware), PodGroupPodsCount (plugins/podgrouppodscount:
raw = pods of the group in the snapshot + proposed assignments, normalized raw*100//max) and
PlacementBinPacking (MostAllocated): among feasible placements the one placing the most pods wins,
then the most allocated one; equal totals go to the smallest domain name (our deterministic
stand-in for upstream's random tie-break).
"""

from __future__ import annotations

import numpy as np

from kubectl_wap.framework.buildstate import build_state
from kubectl_wap.framework.groups import GroupIndex
from kubectl_wap.framework.placement import generate_placements, nominated_placement
from kubectl_wap.framework.podgroup import PodGroupScheduler
from kubectl_wap.framework.schedule_one import Scheduler
from kubectl_wap.model import CompositePodGroup, Node, Pod, PodGroup, Snapshot
from kubectl_wap.preemption.analyze import analyze
from kubectl_wap.preemption.gates import Gates, parse_gates

ZONE = "topology.kubernetes.io/zone"
NS = "default"
GI = 1024**3


def node(name: str, zone: str | None, cpu: int = 2000) -> Node:
    labels = {"kubernetes.io/hostname": name}
    if zone is not None:
        labels[ZONE] = zone
    return Node(name=name, uid=name, labels=labels, allocatable={"cpu": cpu, "memory": 8 * GI, "pods": 110})


def pod(name: str, cpu: int = 1000, on: str = "", prio: int = 0, pg: str | None = None, nnn: str = "", t: float = 0.0) -> Pod:
    return Pod(
        namespace=NS, name=name, uid=name, node_name=on, priority=prio, requests={"cpu": cpu},
        nonzero_requests=(cpu, 200 * 1024 * 1024), pod_group_name=pg,
        phase="Running" if on else "Pending", start_time=t if on else None, creation_timestamp=t,
        nominated_node_name=nnn,
    )


def gang(name: str, min_count: int, prio: int = 100, key: str | None = ZONE, parent: str | None = None) -> PodGroup:
    return PodGroup(namespace=NS, name=name, uid=name, policy="gang", min_count=min_count, priority=prio,
                    topology_keys=(key,) if key else (), parent=parent)


def members(pg: str, n: int, cpu: int = 1000, prio: int = 100, **kw) -> list[Pod]:
    return [pod(f"{pg}-{i}", cpu, prio=prio, pg=pg, t=float(i), **kw) for i in range(n)]


def zone_of(snap: Snapshot, node_name: str) -> str:
    return next(n for n in snap.nodes if n.name == node_name).labels.get(ZONE, "")


def placed_zones(res, snap) -> set[str]:
    return {zone_of(snap, n) for _, n in res.placements}


def run_root(snap: Snapshot, root_name: str, tas: bool = True):
    state = build_state(snap)
    sched = Scheduler(state, [p for p in snap.pods if p.nominated_node_name and not p.scheduled])
    index = GroupIndex.build(snap)
    root = index.pgs.get((NS, root_name)) or index.cpgs[(NS, root_name)]
    return PodGroupScheduler(sched, index, tas).run_root(root), state


# --- gate ---------------------------------------------------------------------------------------


def test_gate_default_on_and_spelled():
    assert Gates().topology_aware_workload_scheduling is True
    assert parse_gates(None).topology_aware_workload_scheduling is True
    assert parse_gates("TopologyAwareWorkloadScheduling=false").topology_aware_workload_scheduling is False
    assert "TopologyAwareWorkloadScheduling=true" in Gates().spelled()


# --- placement generation -----------------------------------------------------------------------


def test_placements_one_per_domain_sorted_unlabeled_nodes_excluded():
    snap = Snapshot(nodes=[node("b1", "b"), node("a1", "a"), node("a2", "a"), node("x", None)],
                    pods=members("g", 1), pod_groups=[gang("g", 1)])
    state = build_state(snap)
    pgs = PodGroupScheduler(Scheduler(state), GroupIndex.build(snap))
    pls, st = generate_placements(pgs, snap.pod_groups[0])
    assert st is None
    assert [p.name for p in pls] == ["a", "b"]
    names = lambda pl: sorted(state.nodes[i].name for i in np.flatnonzero(pl.nodes))  # noqa: E731
    assert names(pls[0]) == ["a1", "a2"] and names(pls[1]) == ["b1"]


def test_running_members_fix_the_domain():
    # One member already runs in zone b: the generator offers only zone b even though zone a is emptier.
    snap = Snapshot(
        nodes=[node("a1", "a", 4000), node("a2", "a", 4000), node("b1", "b"), node("b2", "b")],
        pods=[pod("g-run", on="b1", prio=100, pg="g")] + members("g", 2),
        pod_groups=[gang("g", 3)],
    )
    res = analyze(snap, "podgroup", NS, "g")
    assert res.outcome == "NoPreemptionNeeded"
    assert placed_zones(res, snap) == {"b"}


def test_running_members_in_two_domains_is_an_error():
    snap = Snapshot(
        nodes=[node("a1", "a"), node("b1", "b")],
        pods=[pod("g-r1", on="a1", prio=100, pg="g"), pod("g-r2", on="b1", prio=100, pg="g")] + members("g", 1),
        pod_groups=[gang("g", 3)],
    )
    res, _ = run_root(snap, "g")
    assert res.status.code_name == "Error"
    assert "more than 1 domain found for pod group: a, b" in res.status.message


# --- the placement algorithm --------------------------------------------------------------------


def test_gang_fits_only_in_one_zone():
    # Zone a has 4 free cpus; zone b only 2 (b2 is full with a higher-priority pod).
    snap = Snapshot(
        nodes=[node("a1", "a"), node("a2", "a"), node("b1", "b"), node("b2", "b")],
        pods=[pod("busy", 2000, on="b2", prio=1000)] + members("g", 4),
        pod_groups=[gang("g", 4)],
    )
    res = analyze(snap, "podgroup", NS, "g")
    assert res.outcome == "NoPreemptionNeeded"
    assert len(res.placements) == 4 and placed_zones(res, snap) == {"a"}
    assert any("topology domain 'a'" in s for s in res.steps)
    # Gate off: the same gang is spread over both zones (plain default algorithm), with a warning.
    off = analyze(snap, "podgroup", NS, "g", gates=Gates(topology_aware_workload_scheduling=False))
    assert off.outcome == "NoPreemptionNeeded" and placed_zones(off, snap) == {"a", "b"}
    assert any("TopologyAwareWorkloadScheduling is off" in w for w in off.warnings)
    assert not any("topology" in w for w in res.warnings)


def test_score_prefers_the_zone_placing_more_pods():
    # minCount 2 of 4: zone a (sorted first) fits 2 pods, zone b fits all 4. Both placements succeed;
    # PodGroupPodsCount scores a = 2*100//4 = 50, b = 100, so b wins.
    snap = Snapshot(
        nodes=[node("a1", "a", 1000), node("a2", "a", 1000), node("b1", "b"), node("b2", "b")],
        pods=members("g", 4),
        pod_groups=[gang("g", 2)],
    )
    res = analyze(snap, "podgroup", NS, "g")
    assert res.outcome == "NoPreemptionNeeded"
    assert len(res.placements) == 4 and placed_zones(res, snap) == {"b"}


def test_equal_scores_go_to_the_smallest_domain_name():
    # Identical zones: same pod count, same allocation -> the tie goes to zone "a" (upstream: random).
    snap = Snapshot(
        nodes=[node("b1", "b"), node("b2", "b"), node("a1", "a"), node("a2", "a")],
        pods=members("g", 4),
        pod_groups=[gang("g", 4)],
    )
    res = analyze(snap, "podgroup", NS, "g")
    assert placed_zones(res, snap) == {"a"}


def test_pod_count_tie_goes_to_the_most_allocated_placement():
    # Transcribed from test/integration/scheduler/podgroup/topology_aware_scheduling/tas_test.go
    # TestTopologyAwareSchedulingWithGangPolicy: 'gang schedules on a single rack, choosing placement
    # with highest allocation percentage (default placement scoring algorithm) with pre-existing pods
    # in cluster'. Racks 1-3 all fit the 3 pods; cpu allocation rack1 3/4, rack2 5/6, rack3 4/6 ->
    # rack-2 wins although rack-1 sorts first.
    racks = {"node1": "rack-1", "node2": "rack-1", "node3": "rack-2", "node4": "rack-2", "node5": "rack-2",
             "node6": "rack-3", "node7": "rack-3", "node8": "rack-3", "node9": "rack-4"}
    nodes = [Node(name=n, uid=n, labels={"rack": r}, allocatable={"cpu": 2000, "memory": 8 * GI, "pods": 110})
             for n, r in racks.items()]
    snap = Snapshot(
        nodes=nodes,
        pods=[pod("existing1", 2000, on="node3", prio=100), pod("existing2", 1000, on="node8", prio=100)]
        + members("pg1", 3),
        pod_groups=[gang("pg1", 3, key="rack")],
    )
    res = analyze(snap, "podgroup", NS, "pg1")
    assert res.outcome == "NoPreemptionNeeded"
    assert {n for _, n in res.placements} == {"node4", "node5"}


def test_nominated_placement_is_tried_first():
    # Same tie as above, but the pods carry nominatedNodeName in zone b (a previous preemption cycle):
    # the nominated placement is evaluated first and taken.
    snap = Snapshot(
        nodes=[node("a1", "a"), node("a2", "a"), node("b1", "b"), node("b2", "b")],
        pods=members("g", 2, nnn="b1") + [pod("g-2", prio=100, pg="g", nnn="b2", t=2.0), pod("g-3", prio=100, pg="g", t=3.0)],
        pod_groups=[gang("g", 4)],
    )
    res = analyze(snap, "podgroup", NS, "g")
    assert placed_zones(res, snap) == {"b"}


def test_nominated_placement_counts_pods_not_nodes():
    # Transcribed from schedule_one_podgroup_test.go TestNominatedPlacement: 'placement honoring the
    # most pods wins over one holding more nominated nodes'.
    snap = Snapshot(nodes=[node("node-1", "r1"), node("node-2", "r23"), node("node-3", "r23")])
    state = build_state(snap)
    pgs = PodGroupScheduler(Scheduler(state), GroupIndex.build(snap))
    pls, _ = generate_placements(pgs, gang("g", 1))
    pods = [pod(f"p{i}", nnn=n) for i, n in enumerate(["node-1", "node-1", "node-1", "node-2", "node-3"])]
    assert nominated_placement(pls, pods, state.node_index).name == "r1"
    assert nominated_placement(pls, [pod("q", nnn="node-9")], state.node_index) is None


def test_no_zone_fits_is_unschedulable_with_upstream_message():
    # Each zone has 3 cpus free; the gang needs 4 in one zone.
    snap = Snapshot(
        nodes=[node("a1", "a"), node("a2", "a", 1000), node("b1", "b"), node("b2", "b", 1000)],
        pods=members("g", 4),
        pod_groups=[gang("g", 4)],
    )
    res, state = run_root(snap, "g")
    assert res.status.code_name == "Unschedulable"
    assert res.status.message == (
        "0/2 placements are available, reported placement status: "
        "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"
    )
    assert res.assignments == [] and not res.any_scheduled
    assert state.checkpoint() == 0  # everything reverted
    # Without TAS the gang fits across the zones.
    ok, _ = run_root(snap, "g", tas=False)
    assert ok.status.ok and len(ok.assignments) == 4
    # Through analyze: WAP runs (Unschedulable) and finds no lower-priority victim.
    out = analyze(snap, "podgroup", NS, "g")
    assert out.outcome == "Unschedulable"
    assert any("0/2 placements are available, reported placement status" in s for s in out.steps)


def test_pod_outside_the_placement_gets_no_status():
    # Inside zone b (one node) the FitError counts only that node: "0/1 nodes are available".
    snap = Snapshot(nodes=[node("a1", "a"), node("b1", "b", 500)], pods=[pod("p", 1000)])
    state = build_state(snap)
    mask = np.array([n.name == "b1" for n in state.nodes])
    r = Scheduler(state).schedule(snap.pods[0], mask)
    assert r.node is None and r.num_nodes == 1 and set(r.statuses) == {state.node_index["b1"]}
    assert r.message().startswith("0/1 nodes are available: 1 Insufficient cpu")
    assert Scheduler(state).schedule(snap.pods[0]).node == state.node_index["a1"]


def test_composite_pod_group_with_topology_keeps_children_in_one_zone():
    # CPG (zone constraint) with two child gangs of 2 pods each; zone a fits 3 pods, zone b 4.
    cpg = CompositePodGroup(namespace=NS, name="job", uid="job", policy="gang", min_group_count=2, priority=100,
                            topology_keys=(ZONE,))
    snap = Snapshot(
        nodes=[node("a1", "a"), node("a2", "a", 1000), node("b1", "b"), node("b2", "b")],
        pods=members("w1", 2) + members("w2", 2),
        pod_groups=[gang("w1", 2, key=None, parent="job"), gang("w2", 2, key=None, parent="job")],
        composite_pod_groups=[cpg],
    )
    res = analyze(snap, "compositepodgroup", NS, "job")
    assert res.outcome == "NoPreemptionNeeded"
    assert len(res.placements) == 4 and placed_zones(res, snap) == {"b"}
    # Shrink zone b too: no zone fits; the CPG path reports "first placement status".
    snap.nodes[3] = node("b2", "b", 1000)
    r, _ = run_root(snap, "job")
    assert r.status.code_name == "Unschedulable"
    assert r.status.message.startswith("0/2 placements are available, first placement status: ")


# --- workload-aware preemption with TAS ---------------------------------------------------------


def test_wap_victims_only_inside_the_chosen_domain():
    # Zone a: a1 (2 cpu) + a2 (1 cpu) = 3 slots even when emptied; zone b: 4 slots, 3 taken by
    # low-priority pods. After removing every potential victim, only zone b fits the 4-pod gang, so the
    # scheduling function returns zone b and reprieval (assignments fixed) spares every zone-a pod.
    victims_a = [pod("va1", on="a1", t=1.0), pod("va2", on="a1", t=2.0), pod("va3", on="a2", t=3.0)]
    victims_b = [pod("vb1", on="b1", t=4.0), pod("vb2", on="b1", t=5.0), pod("vb3", on="b2", t=6.0)]
    snap = Snapshot(
        nodes=[node("a1", "a"), node("a2", "a", 1000), node("b1", "b"), node("b2", "b")],
        pods=victims_a + victims_b + members("g", 4),
        pod_groups=[gang("g", 4)],
    )
    res = analyze(snap, "podgroup", NS, "g")
    assert res.outcome == "Preempt", res.message
    assert sorted(p.name for p in res.victim_pods) == ["vb1", "vb2", "vb3"]
    assert placed_zones(res, snap) == {"b"}
    assert {v.unit.name for v in res.reprieved} == {"va1", "va2", "va3"}
