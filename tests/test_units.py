"""preemption/units.py, rule by rule: which pods are preempted together and at which priority and
rank (v1.37.2 preemption/types.go `getHighestAllAncestor`, `NewPodVictim`, `getCrossNodesVictims`;
util.go `GetPodPriority`; podgrouppreemption.go `isPreemptionAllowed`), on cases transcribed from
their unit tests (types_test.go, util_test.go). The snapshots are built with tests/builders.py and
the converter, as a real cluster's would be."""

from __future__ import annotations

import pytest
from builders import make_cpg, make_node, make_pdb, make_pod, make_podgroup

from kubectl_wap.framework.groups import GroupIndex
from kubectl_wap.framework.buildstate import build_state
from kubectl_wap.model import SnapshotHeader
from kubectl_wap.preemption import candidates
from kubectl_wap.preemption.units import collect, effective_priority, highest_all_ancestor
from kubectl_wap.snapshot.decode.convert import build_snapshot

T = 1_795_000_000


def _snap(items: list[dict], composite: bool = True):
    snap = build_snapshot([dict(o) for o in items], SnapshotHeader(source="test"))
    return snap, GroupIndex.build(snap, composite_enabled=composite)


def _pod(snap, name: str):
    (p,) = [p for p in snap.pods if p.name == name]
    return p


# ---- getHighestAllAncestor (types_test.go TestGetHighestAllAncestor): the highest group of the
# pod's chain whose disruptionMode is All is the unit; none when no group of the chain is All.
_P1 = make_pod("p1").priority(0).group("pg1").obj()
_ANCESTORS = [
    ("pod without group", [], make_pod("p1").obj(), None),
    ("pod group missing from the lister", [], _P1, None),
    ("pod group disruption mode single", [make_podgroup("pg1").mode("single").obj()], _P1, None),
    ("pod group disruption mode All", [make_podgroup("pg1").mode("all").obj()], _P1, "PodGroup default/pg1"),
    ("parent CPG disruption mode All, child PG disruption mode single",
     [make_podgroup("pg1").mode("single").parent("cpg1").obj(), make_cpg("cpg1").mode("all").obj()], _P1,
     "CompositePodGroup default/cpg1"),
    ("grandparent CPG disruption mode All, parent CPG disruption mode single, child PG disruption mode single",
     [make_podgroup("pg1").mode("single").parent("cpg1").obj(), make_cpg("cpg1").mode("single").parent("cpg2").obj(),
      make_cpg("cpg2").mode("all").obj()], _P1, "CompositePodGroup default/cpg2"),
    ("highest All parent wins (both have disruption mode All)",
     [make_podgroup("pg1").mode("all").parent("cpg1").obj(), make_cpg("cpg1").mode("all").obj()], _P1,
     "CompositePodGroup default/cpg1"),
    ("parent CPG missing from cache lister, child PG All returned", [make_podgroup("pg1").mode("all").parent("cpg1").obj()], _P1,
     "PodGroup default/pg1"),
]


@pytest.mark.parametrize("groups, pod, want", [pytest.param(g, p, w, id=name) for name, g, p, w in _ANCESTORS])
def test_get_highest_all_ancestor(groups, pod, want):
    snap, index = _snap([*groups, pod])
    leaf = index.leaf_of(_pod(snap, "p1"))
    anc = highest_all_ancestor(leaf, index) if leaf is not None else None
    got = f"{anc.kind} {anc.namespace}/{anc.name}" if anc is not None else None
    assert got == want, f"got {got}, want {want} (getHighestAllAncestor)"


# ---- GetPodPriority (util_test.go TestGetPodPriority): a group pod takes the priority of the last
# group its upward walk reaches (TraverseHierarchyUp stops at a missing parent); a pod whose
# PodGroup is missing, or with GenericWorkload off (nil PodGroupLister), keeps its own.
_PRIORITIES = [
    ("pod without PodGroup returns pod priority", [], make_pod("p").priority(10).obj(), True, True, 10),
    ("pod with PodGroup returns PodGroup priority instead of pod priority", [make_podgroup("pg1").priority(50).obj()],
     make_pod("p").priority(10).group("pg1").obj(), True, True, 50),
    ("pod with PodGroup but nil PodGroupLister falls back to pod priority", [make_podgroup("pg1").priority(50).obj()],
     make_pod("p").priority(20).group("pg1").obj(), False, True, 20),
    ("pod with PodGroup but PodGroup not found in lister falls back to pod priority", [],
     make_pod("p").priority(30).group("missing-pg").obj(), True, True, 30),
    ("pod with nil priority and without PodGroup returns zero priority", [], make_pod("p").obj(), True, True, 0),
    ("pod with PodGroup and parent CPG, returns CPG priority",
     [make_podgroup("pg1").parent("cpg1").obj(), make_cpg("cpg1").priority(150).obj()],
     make_pod("p").priority(10).group("pg1").obj(), True, True, 150),
    ("pod with PodGroup and grandparent CPG, returns grandparent CPG priority",
     [make_podgroup("pg1").parent("cpg1").obj(), make_cpg("cpg1").parent("cpg2").obj(), make_cpg("cpg2").priority(250).obj()],
     make_pod("p").priority(10).group("pg1").obj(), True, True, 250),
    ("pod with PodGroup and parent CPG, but nil compositePodGroupLister, falls back to PodGroup priority",
     [make_podgroup("pg1").priority(50).parent("cpg1").obj(), make_cpg("cpg1").priority(150).obj()],
     make_pod("p").priority(10).group("pg1").obj(), True, False, 50),
    ("pod with PodGroup and parent CPG, but parent CPG not found in lister, falls back to PodGroup priority",
     [make_podgroup("pg1").priority(50).parent("cpg1").obj()], make_pod("p").priority(10).group("pg1").obj(), True, True, 50),
    ("pod with PodGroup, parent CPG and grandparent CPG, but grandparent CPG not found in lister, falls back to parent CPG priority",
     [make_podgroup("pg1").priority(50).parent("cpg1").obj(), make_cpg("cpg1").priority(150).parent("missing-cpg2").obj()],
     make_pod("p").priority(10).group("pg1").obj(), True, True, 150),
]


@pytest.mark.parametrize("groups, pod, generic_workload, composite, want",
                         [pytest.param(*case[1:], id=case[0]) for case in _PRIORITIES])
def test_get_pod_priority(groups, pod, generic_workload, composite, want):
    snap, index = _snap([*groups, pod], composite)
    got, _ = effective_priority(_pod(snap, "p"), index, generic_workload)
    assert got == want, f"got {got}, want {want} (GetPodPriority)"


def _running(name: str, prio: int, group: str | None = None, labels: dict | None = None) -> dict:
    b = make_pod(name).priority(prio).req(cpu="100m", memory="64Mi").on("n1", start=T)
    if group:
        b.group(group)
    if labels:
        b.label(**labels)
    return b.obj()


def _collect(items: list[dict], **kw):
    snap, index = _snap([make_node("n1").obj(), *items])
    return snap, collect(build_state(snap), index, True, **kw)


# ---- NewPodVictim: a pod with no All ancestor is a victim of its own. v1.37.2 (types.go) gives it
# GetPodPriority and, when it has a schedulingGroup, the PodGroup key type (rank 2, "TODO" upstream);
# v1.38.0-beta.0 (types.go) gives it its own spec.priority and the Pod key type (rank 1).
@pytest.mark.parametrize("own_priority, want, why", [
    pytest.param(False, ("Pod", 2, 50), "v1.37.2 NewPodVictim: keyType PodGroupKeyType, GetPodPriority (the group's 50)",
                 id="in 1.37 a pod of a Single-mode group ranks as a PodGroup at its group's priority"),
    pytest.param(True, ("Pod", 1, 10), "v1.38.0-beta.0 NewPodVictim: PodKeyType, the pod's own priority 10",
                 id="in 1.38 a pod of a Single-mode group ranks as a Pod at its own priority"),
])
def test_new_pod_victim_of_a_group_member(own_priority, want, why):
    _, c = _collect([make_podgroup("pg1").priority(50).mode("single").obj(), _running("m", 10, group="pg1")],
                    own_priority=own_priority)
    (u,) = c.units()
    got = (u.kind, u.rank, u.priority)
    assert got == want, f"got (kind, rank, priority) {got}, want {want} ({why})"


def test_a_pod_without_group_ranks_as_a_pod():
    _, c = _collect([_running("solo", 10)])
    (u,) = c.units()
    assert (u.kind, u.rank) == ("Pod", 1), f"got {(u.kind, u.rank)}, want ('Pod', 1) (NewPodVictim: no schedulingGroup, PodKeyType)"


def test_only_strictly_lower_priority_units_are_potential_victims():
    # isPreemptionAllowed: `victim.Priority() < preemptor.priority`. Pods of priority 9, 10 and 11
    # and a PodGroup of priority 10 for a preemptor of 10: only the priority-9 pod is a candidate.
    _, c = _collect([_running("low", 9), _running("equal", 10), _running("high", 11),
                     make_podgroup("pg").priority(10).obj(), _running("g-0", 0, group="pg")], below=10)
    got = sorted(u.name for u in c.units())
    assert got == ["low"], f"got {got}, want ['low'] (only strictly lower priority is preemptible)"


def test_a_unit_built_after_the_pdb_classification_keeps_its_violating_pods():
    # FilterVictimsWithPDBViolation reports each violating victim with its ViolateCount; on the fast
    # path the units are classified as columns and built afterwards (Candidates.unit), and a unit
    # built then must carry the count (pickOneNodeForPreemption and the report read it).
    snap, c = _collect([_running("guarded", 0, labels={"app": "web"}), _running("free", 0, labels={"app": "batch"}),
                        make_pdb("web").match_labels(app="web").allowed(0, matched=1).obj()])
    order = candidates.importance_order(c)
    candidates.reprieve_order(c, order, snap.pdbs)
    got = {c.unit(k).name: c.unit(k).violate_count for k in order}
    want = {"guarded": 1, "free": 0}
    assert got == want, f"got violate counts {got}, want {want} (the PDB allows no disruption of app=web)"
