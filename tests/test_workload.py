"""preemption/workload.py, workload-aware preemption for a pod group (PodGroupPostFilter), on cases
transcribed from v1.37.2 podgrouppreemption_test.go `TestPodGroupEvaluator_SelectVictimsOnDomain`
(pkg/scheduler/framework/preemption). Upstream's fake Filter counts pods against a node capacity;
here the node's allocatable pod count plays that part (NodeResourcesFit's "Too many pods"). Each
case runs the object path (`fast=False`, workload.py's own reprieval) and the columnar fast path
(preemption/candidates.py), which must agree with upstream."""

from __future__ import annotations

import pytest
from builders import make_node, make_pdb, make_pod, make_podgroup

from kubectl_wap.model import SnapshotHeader
from kubectl_wap.preemption.analyze import analyze
from kubectl_wap.snapshot.decode.convert import build_snapshot

LOW, MID, HIGH = 0, 100, 1000  # podgrouppreemption_test.go lowPriority, midPriority, highPriority
T = 1_795_000_000


def _victim(name: str, prio: int, **labels: str) -> dict:
    b = make_pod(name).priority(prio).on("node1", start=T)
    if labels:
        b.label(**labels)
    return b.obj()


# SelectVictimsOnDomain: the PDB-violating units are tried for reprieve first
# (`FilterVictimsWithPDBViolation`, then reprieve violating, then non-violating), so with room for
# one victim back the PDB-protected one is kept when it fits.
_PDB_CASES = [
    ("PDB: Prefer non-violating victim", [_victim("victim-pdb", LOW, app="foo"), _victim("victim-no-pdb", LOW)],
     ["victim-no-pdb"], 0),
    ("PDB: Prefer removing non-violating victim over lower priority violating victim",
     [_victim("victim-pdb", LOW, app="foo"), _victim("victim-no-pdb", MID)], ["victim-no-pdb"], 0),
    ("PDB: Prefer lower priority pod for preemption, when preemption without pdb violation is not possible",
     [_victim("p1", LOW, app="foo"), _victim("p2", MID, app="foo")], ["p1"], 1),
]


@pytest.mark.parametrize("fast", [pytest.param(False, id="object path"), pytest.param(True, id="columnar path")])
@pytest.mark.parametrize("victims, want, want_pdb", [pytest.param(*c[1:], id=c[0]) for c in _PDB_CASES])
def test_pdb_violating_victims_are_reprieved_first(victims, want, want_pdb, fast):
    items = [make_node("node1").alloc(pods="2", cpu="4", memory="8Gi").obj(), *victims,
             make_pdb("pdb").match_labels(app="foo").allowed(0, matched=sum(1 for v in victims if v["metadata"].get("labels")))
             .obj(),
             make_podgroup("preemptor-pg").priority(HIGH).obj(), make_pod("p").priority(HIGH).group("preemptor-pg").obj()]
    snap = build_snapshot(items, SnapshotHeader(source="test"))
    res = analyze(snap, "podgroup", "default", "preemptor-pg", fast=fast)
    got = (res.outcome, sorted(p.name for p in res.victim_pods), res.num_pdb_violations)
    assert got == ("Preempt", want, want_pdb), (
        f"got (outcome, victims, PDB violations) {got}, want {('Preempt', want, want_pdb)} "
        "(node1 holds two pods: one victim must go, and the PDB-protected one is tried for reprieve first)")
