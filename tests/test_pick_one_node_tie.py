"""Default preemption's last tie-break (preemption.go pickOneNodeForPreemption: "the first Node in
the list", i.e. Go map order, random). UPSTREAM-DIFF, documented in preemption/default.py and the
docs/fidelity.md: we take the smallest node name, whatever order the snapshot lists the nodes in."""

from __future__ import annotations

import pytest

from kubectl_wap.model import Node, Pod, Snapshot
from kubectl_wap.preemption.analyze import analyze

GI = 1024**3


def _cluster(order: list[str]) -> Snapshot:
    nodes = [Node(n, uid=n, labels={"kubernetes.io/hostname": n}, allocatable={"cpu": 1000, "memory": 4 * GI, "pods": 10})
             for n in order]
    pods = [Pod("default", f"v-{n}", uid=f"v-{n}", node_name=n, phase="Running", priority=0, requests={"cpu": 1000},
                nonzero_requests=(1000, 200 * 1024**2), start_time=1.0) for n in order]
    pods.append(Pod("default", "p", uid="p", priority=100, requests={"cpu": 1000}, nonzero_requests=(1000, 200 * 1024**2)))
    return Snapshot(nodes=nodes, pods=pods)


@pytest.mark.parametrize("order", [["node-b", "node-a", "node-c"], ["node-c", "node-b", "node-a"]])
def test_full_tie_goes_to_the_smallest_node_name(order):
    res = analyze(_cluster(order), "pod", "default", "p")
    assert res.outcome == "Preempt"
    assert res.nominated_node == "node-a"
    assert [p.name for v in res.victims for p in v.unit.pods] == ["v-node-a"]
    assert any("tie after all criteria: smallest node name node-a" in s for s in res.steps)


def _two_nodes(victims: dict[str, list[tuple[int, float | None]]]) -> Snapshot:
    """node-a and node-b of 1000m, each full of victims (priority, start time) of 1000m in all;
    the preemptor (priority 100) needs the whole node, so every victim on the chosen node goes."""
    nodes = [Node(n, uid=n, labels={"kubernetes.io/hostname": n}, allocatable={"cpu": 1000, "memory": 4 * GI, "pods": 10})
             for n in victims]
    pods = []
    for n, vs in victims.items():
        for k, (prio, start) in enumerate(vs):
            cpu = 1000 // len(vs)
            pods.append(Pod("default", f"v-{n}-{k}", uid=f"v-{n}-{k}", node_name=n, phase="Running", priority=prio,
                            requests={"cpu": cpu}, nonzero_requests=(cpu, 200 * 1024**2), start_time=start))
    pods.append(Pod("default", "p", uid="p", priority=100, requests={"cpu": 1000}, nonzero_requests=(1000, 200 * 1024**2)))
    return Snapshot(nodes=nodes, pods=pods)


def test_victim_without_start_time_counts_as_started_now():
    # pickOneNodeForPreemption's 5th criterion keeps the node whose highest-priority victims have
    # the latest earliest start (GetEarliestPodStartTime); GetPodStartTime gives a pod without
    # status.startTime time.Now(), later than any recorded start: node-b wins, though node-a
    # sorts first by name.
    res = analyze(_two_nodes({"node-a": [(0, 1.0)], "node-b": [(0, None)]}), "pod", "default", "p")
    assert res.outcome == "Preempt" and res.nominated_node == "node-b"
    assert any("latest start time of the highest-priority victims: kept node-b." in s for s in res.steps)


def test_start_times_of_the_highest_priority_victims_only():
    # GetEarliestPodStartTime takes the earliest start among the victims of the HIGHEST priority
    # (maxPriority): node-a's priority-10 victim started at 5, node-b's at 50, so node-b wins;
    # the priority-0 victims (node-a's at 100, node-b's at 1) are not looked at. Criteria 1-4
    # tie: no PDBs, highest victim priority 10 on both, equal sums, two victims each.
    res = analyze(_two_nodes({"node-a": [(10, 5.0), (0, 100.0)], "node-b": [(10, 50.0), (0, 1.0)]}), "pod", "default", "p")
    assert res.outcome == "Preempt" and res.nominated_node == "node-b"
    assert sorted(p.name for v in res.victims for p in v.unit.pods) == ["v-node-b-0", "v-node-b-1"]
