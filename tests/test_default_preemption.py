"""preemption/default.py, DefaultPreemption.PostFilter for one pending pod, on cases transcribed
from v1.37.2 default_preemption_test.go (pkg/scheduler/framework/plugins/defaultpreemption):
`TestPostFilter` (which nodes findCandidates tries and the message when none helps) and
`TestSelectBestCandidate` (pickOneNodeForPreemption's criteria, on the dry run's real victims).
The last tie-break and the start-time criterion are in tests/test_pick_one_node_tie.py."""

from __future__ import annotations

import pytest
from builders import make_node, make_pdb, make_pod

from kubectl_wap.model import SnapshotHeader
from kubectl_wap.preemption.analyze import analyze
from kubectl_wap.snapshot.decode.convert import build_snapshot

# default_preemption_test.go's priorities and resources.
NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL, MEDIUM, LARGE, VERY_LARGE = ("100m", "100"), ("200m", "200"), ("300m", "300"), ("500m", "500")
T = 1_795_000_000  # epochTime; epochTimeN (N ns later upstream) is N seconds later here: only the order matters


def _analyze(items: list[dict]):
    snap = build_snapshot([dict(o) for o in items], SnapshotHeader(source="test"))
    return analyze(snap, "pod", "default", "p")


def _victim(name: str, node: str, prio: int, res: tuple[str, str], start: int = 0, **labels: str) -> dict:
    b = make_pod(name).priority(prio).req(cpu=res[0], memory=res[1]).on(node, start=T + start)
    if labels:
        b.label(**labels)
    return b.obj()


# ---- TestPostFilter: findCandidates tries only the nodes whose Filter status is Unschedulable
# (`m.NodesForStatusCode(..., fwk.Unschedulable)`); an UnschedulableAndUnresolvable node is never
# tried, and with no candidate every node untried reads "Preemption is not helpful for scheduling".
# Upstream hands the plugin a synthetic UnschedulableAndUnresolvable status; here an untolerated
# NoSchedule taint gives it (TaintToleration.Filter), on a node whose only pod the preemptor
# outranks.
@pytest.mark.parametrize("items, want, why", [
    pytest.param(
        [make_node("node1").taint("dedicated", "x").alloc(pods="1", cpu="1", memory="1Gi").obj(),
         _victim("p1", "node1", LOW, SMALL), make_pod("p").priority(HIGH).obj()],
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        "node1 failed UnschedulableAndUnresolvable: it is not tried, though p1 is a lower-priority pod on it",
        id="preemption should respect filteredNodesStatuses"),
    pytest.param(
        [make_node("node1").alloc(cpu="1", memory="1Gi").obj(),
         make_node("node2").taint("dedicated", "x").alloc(cpu="1", memory="1Gi").obj(),
         _victim("busy", "node1", HIGH, ("1", "64Mi")), _victim("p2", "node2", LOW, SMALL),
         make_pod("p").priority(HIGH).req(cpu="500m", memory="64Mi").obj()],
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling.",
        "node1 (Insufficient cpu, Unschedulable) is tried and has no lower-priority pod; node2 (tainted) is not tried",
        id="no candidate nodes found with mixed reasons, one node tried and one unresolvable"),
])
def test_post_filter_tries_only_unschedulable_nodes(items, want, why):
    res = _analyze(items)
    assert res.outcome == "Unschedulable", f"got outcome {res.outcome}, want Unschedulable ({why})"
    got = res.message[res.message.index("preemption: "):]
    assert got == want, f"got {got!r}, want {want!r} ({why})"


# ---- TestSelectBestCandidate: every node has capacity veryLargeRes (500m, 500 bytes, 32 pods) and
# the preemptor asks for all of it, so every pod on the chosen node is a victim. `expected` is the
# set of nodes upstream accepts; with more than one, ours takes the smallest name.
_BEST = [
    ("a pod that fits on both nodes when lower priority pods are preempted", ["node1", "node2"], HIGH, LARGE,
     [("p1", "node1", MID, LARGE, 0), ("p2", "node2", MID, LARGE, 0)], ["node1", "node2"]),
    ("node with min highest priority pod is picked", ["node1", "node2", "node3"], HIGH, VERY_LARGE,
     [("p1.1", "node1", MID, MEDIUM, 0), ("p1.2", "node1", MID, LARGE, 0), ("p2.1", "node2", MID, MEDIUM, 0),
      ("p2.2", "node2", LOW, MEDIUM, 0), ("p3.1", "node3", LOW, MEDIUM, 0), ("p3.2", "node3", LOW, MEDIUM, 0)], ["node3"]),
    ("when highest priorities are the same, minimum sum of priorities is picked", ["node1", "node2", "node3"], HIGH, VERY_LARGE,
     [("p1.1", "node1", MID, MEDIUM, 0), ("p1.2", "node1", MID, LARGE, 0), ("p2.1", "node2", MID, LARGE, 0),
      ("p2.2", "node2", LOW, MEDIUM, 0), ("p3.1", "node3", MID, MEDIUM, 0), ("p3.2", "node3", MID, MEDIUM, 0)], ["node2"]),
    ("when highest priority and sum are the same, minimum number of pods is picked", ["node1", "node2", "node3"], HIGH, VERY_LARGE,
     [("p1.1", "node1", MID, SMALL, 0), ("p1.2", "node1", NEG, SMALL, 0), ("p1.3", "node1", MID, SMALL, 0),
      ("p1.4", "node1", NEG, SMALL, 0), ("p2.1", "node2", MID, LARGE, 0), ("p2.2", "node2", NEG, MEDIUM, 0),
      ("p3.1", "node3", MID, MEDIUM, 0), ("p3.2", "node3", NEG, SMALL, 0), ("p3.3", "node3", LOW, SMALL, 0)], ["node2"]),
    ("sum of adjusted priorities is considered", ["node1", "node2", "node3"], HIGH, VERY_LARGE,
     [("p1.1", "node1", MID, SMALL, 0), ("p1.2", "node1", NEG, SMALL, 0), ("p1.3", "node1", NEG, SMALL, 0),
      ("p2.1", "node2", MID, LARGE, 0), ("p2.2", "node2", NEG, MEDIUM, 0), ("p3.1", "node3", MID, MEDIUM, 0),
      ("p3.2", "node3", NEG, SMALL, 0), ("p3.3", "node3", LOW, SMALL, 0)], ["node2"]),
    ("non-overlapping lowest high priority, sum priorities, and number of pods", ["node1", "node2", "node3", "node4"], VERY_HIGH,
     VERY_LARGE,
     [("p1.1", "node1", MID, SMALL, 0), ("p1.2", "node1", LOW, SMALL, 0), ("p1.3", "node1", LOW, SMALL, 0),
      ("p2.1", "node2", HIGH, LARGE, 0), ("p3.1", "node3", MID, MEDIUM, 0), ("p3.2", "node3", LOW, SMALL, 0),
      ("p3.3", "node3", LOW, SMALL, 0), ("p3.4", "node3", LOW, MEDIUM, 0), ("p4.1", "node4", MID, MEDIUM, 0),
      ("p4.2", "node4", MID, SMALL, 0), ("p4.3", "node4", MID, SMALL, 0), ("p4.4", "node4", NEG, SMALL, 0)], ["node1"]),
    ("same priority, same number of victims, different start time for each node's pod", ["node1", "node2", "node3"], HIGH, VERY_LARGE,
     [("p1.1", "node1", MID, MEDIUM, 2), ("p1.2", "node1", MID, MEDIUM, 2), ("p2.1", "node2", MID, MEDIUM, 3),
      ("p2.2", "node2", MID, MEDIUM, 3), ("p3.1", "node3", MID, MEDIUM, 1), ("p3.2", "node3", MID, MEDIUM, 1)], ["node2"]),
    ("same priority, same number of victims, different start time for all pods", ["node1", "node2", "node3"], HIGH, VERY_LARGE,
     [("p1.1", "node1", MID, MEDIUM, 4), ("p1.2", "node1", MID, MEDIUM, 2), ("p2.1", "node2", MID, MEDIUM, 5),
      ("p2.2", "node2", MID, MEDIUM, 1), ("p3.1", "node3", MID, MEDIUM, 3), ("p3.2", "node3", MID, MEDIUM, 6)], ["node3"]),
    ("different priority, same number of victims, different start time for all pods", ["node1", "node2", "node3"], HIGH, VERY_LARGE,
     [("p1.1", "node1", LOW, MEDIUM, 4), ("p1.2", "node1", MID, MEDIUM, 2), ("p2.1", "node2", MID, MEDIUM, 6),
      ("p2.2", "node2", LOW, MEDIUM, 1), ("p3.1", "node3", LOW, MEDIUM, 3), ("p3.2", "node3", MID, MEDIUM, 5)], ["node2"]),
]


@pytest.mark.parametrize("nodes, prio, req, pods, expected", [pytest.param(*c[1:], id=c[0]) for c in _BEST])
def test_select_best_candidate(nodes, prio, req, pods, expected):
    items = [make_node(n).alloc(pods="32", cpu=VERY_LARGE[0], memory=VERY_LARGE[1]).obj() for n in nodes]
    items += [_victim(name, node, p, res, start) for name, node, p, res, start in pods]
    items.append(make_pod("p").priority(prio).req(cpu=req[0], memory=req[1]).obj())
    res = _analyze(items)
    assert res.outcome == "Preempt", f"got outcome {res.outcome} ({res.message}), want Preempt"
    want = min(expected)  # any of `expected` is valid upstream; ours is the smallest name
    assert res.nominated_node == want, f"got {res.nominated_node}, want {want} (upstream accepts {expected})"
    victims = sorted(p.name for v in res.victims for p in v.unit.pods)
    want_victims = sorted(name for name, node, *_ in pods if node == want)
    assert victims == want_victims, f"got victims {victims}, want {want_victims} (every pod on the chosen node)"


def test_fewest_pdb_violations_goes_first():
    """pickOneNodeForPreemption's first criterion, minNumPDBViolatingScoreFunc: a node whose victims
    violate fewer PDBs wins before victim priorities are compared. node1's only victim has the
    lower priority but a PDB that allows no disruption; node2's violates none, so node2 is chosen
    (by priority alone node1 would be)."""
    items = [make_node(n).alloc(pods="32", cpu=VERY_LARGE[0], memory=VERY_LARGE[1]).obj() for n in ("node1", "node2")]
    items += [_victim("guarded", "node1", LOW, VERY_LARGE, app="web"), _victim("plain", "node2", MID, VERY_LARGE),
              make_pdb("web").match_labels(app="web").allowed(0, matched=1).obj(),
              make_pod("p").priority(HIGH).req(cpu=VERY_LARGE[0], memory=VERY_LARGE[1]).obj()]
    res = _analyze(items)
    got = (res.outcome, res.nominated_node, res.num_pdb_violations)
    assert got == ("Preempt", "node2", 0), f"got {got}, want ('Preempt', 'node2', 0) (fewest PDB violations is the first criterion)"


def test_fewest_victims_once_the_adjusted_sums_tie():
    """minNumPodsScoreFunc (4th criterion) decides only when criteria 1-3 tie. Each priority adds
    MaxInt32+1 to the sum, so one victim of priority 0 (sum 2^31) and two of priorities 0 and
    -2^31 (sum 2^31 + 0) tie on the sum and on the highest priority (0): node1, with one victim,
    wins. (TestSelectBestCandidate's "minimum number of pods" case is already decided by the sum.)"""
    items = [make_node(n).alloc(pods="32", cpu=VERY_LARGE[0], memory=VERY_LARGE[1]).obj() for n in ("node1", "node2")]
    items += [_victim("a", "node1", 0, VERY_LARGE), _victim("b0", "node2", 0, SMALL), _victim("b1", "node2", -(2**31), SMALL),
              make_pod("p").priority(HIGH).req(cpu=VERY_LARGE[0], memory=VERY_LARGE[1]).obj()]
    res = _analyze(items)
    got = (res.outcome, res.nominated_node)
    assert got == ("Preempt", "node1"), f"got {got}, want ('Preempt', 'node1') (equal adjusted sums: fewer victims wins)"
    assert any(s.startswith("pickOneNodeForPreemption: fewest victims: kept node1") for s in res.steps), res.steps
