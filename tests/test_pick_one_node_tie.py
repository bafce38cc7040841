"""Default preemption's last tie-break (preemption.go pickOneNodeForPreemption: "the first Node in
the list", i.e. Go map order, random). UPSTREAM-DIFF, documented in preemption/default.py and the
README: we take the smallest node name, whatever order the snapshot lists the nodes in."""

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
