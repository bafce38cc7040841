"""framework/podgroup.py's pod-group cycle (PodGroupScheduler.run_root), rule by rule: how many
members a PodGroup needs and how many children a CompositePodGroup needs before the cycle
succeeds (v1.37.2 gangscheduling.go `PlacementFeasible` with `getMinCount`: minCount of a gang
PodGroup, minGroupCount of a gang CompositePodGroup, 1 for a basic one of either). Each cluster
leaves room for fewer members or children than a gang asks for. The PreEnqueue quorum and the
nominator are in tests/test_podgroup_quorum.py."""

from __future__ import annotations

import pytest
from builders import make_cpg, make_node, make_pod, make_podgroup

from kubectl_wap.framework.groups import GroupIndex
from kubectl_wap.framework.podgroup import PodGroupScheduler, placement_feasible
from kubectl_wap.framework.schedule_one import Scheduler
from kubectl_wap.framework.buildstate import build_state
from kubectl_wap.framework.status import SUCCESS, UNSCHEDULABLE, WAIT
from kubectl_wap.model import SnapshotHeader
from kubectl_wap.snapshot.decode.convert import build_snapshot

CODE = {SUCCESS: "Success", UNSCHEDULABLE: "Unschedulable", WAIT: "Wait"}


def _member(name: str, group: str) -> dict:
    return make_pod(name).priority(100).req(cpu="1", memory="64Mi").group(group).created(1_795_000_000).obj()


def _run(items: list[dict], kind: str, name: str):
    """run_root on a cluster of one node with room for two members (2 cpus, 1 cpu each)."""
    snap = build_snapshot([make_node("n1").alloc(cpu="2", memory="8Gi").obj(), *items], SnapshotHeader(source="test"))
    index = GroupIndex.build(snap, composite_enabled=True)
    root = (index.pgs if kind == "PodGroup" else index.cpgs)[("default", name)]
    res = PodGroupScheduler(Scheduler(build_state(snap)), index).run_root(root)
    return CODE[res.status.code], sorted(a.pod.name for a in res.assignments), res.status.message


@pytest.mark.parametrize("min_count, scheduled, remaining, want", [
    pytest.param(3, 1, 1, "Unschedulable", id="minCount cannot be reached with the pods remaining"),
    pytest.param(3, 1, 2, "Wait", id="minCount may still be reached"),
    pytest.param(3, 3, 0, "Success", id="minCount reached"),
])
def test_placement_feasible(min_count, scheduled, remaining, want):
    # PlacementFeasible: remaining+scheduled < minCount is Unschedulable; scheduled < minCount Wait.
    got = CODE[placement_feasible(min_count, scheduled, remaining).code]
    assert got == want, f"got {got}, want {want} (minCount {min_count}, {scheduled} scheduled, {remaining} remaining)"


@pytest.mark.parametrize("group, want, why", [
    pytest.param(make_podgroup("job").gang(3).obj(), ("Unschedulable", []),
                 "a gang PodGroup needs minCount 3 pods and only 2 fit: the cycle fails and places nothing",
                 id="a gang PodGroup with room for fewer than minCount pods fails"),
    pytest.param(make_podgroup("job").gang(2).obj(), ("Success", ["job-0", "job-1"]),
                 "minCount 2 and 2 fit: the third pod fails on its own",
                 id="a gang PodGroup succeeds once minCount pods fit"),
    pytest.param(make_podgroup("job").basic().obj(), ("Success", ["job-0", "job-1"]),
                 "getMinCount is 1 for a basic PodGroup: the two pods that fit are placed",
                 id="a basic PodGroup succeeds with the pods that fit"),
])
def test_pod_group_needs_its_min_count(group, want, why):
    code, placed, msg = _run([group, *(_member(f"job-{i}", "job") for i in range(3))], "PodGroup", "job")
    assert (code, placed) == want, f"got {(code, placed)} ({msg}), want {want} ({why})"


@pytest.mark.parametrize("tree, want, why", [
    pytest.param(make_cpg("tree").gang(2).obj(), ("Unschedulable", []),
                 "a gang CompositePodGroup needs minGroupCount 2 children and only one child gang fits",
                 id="a gang CompositePodGroup with room for fewer than minGroupCount children fails"),
    pytest.param(make_cpg("tree").basic().obj(), ("Success", ["c0-0", "c0-1"]),
                 "getMinCount is 1 for a basic CompositePodGroup: the child that fits is enough",
                 id="a basic CompositePodGroup succeeds with one child"),
])
def test_composite_pod_group_needs_its_min_group_count(tree, want, why):
    # Two child gangs of two pods each (minCount 2) under the tree; the node holds one of them.
    children = [make_podgroup(c).gang(2).parent("tree").obj() for c in ("c0", "c1")]
    pods = [_member(f"{c}-{i}", c) for c in ("c0", "c1") for i in range(2)]
    code, placed, msg = _run([tree, *children, *pods], "CompositePodGroup", "tree")
    assert (code, placed) == want, f"got {(code, placed)} ({msg}), want {want} ({why})"
