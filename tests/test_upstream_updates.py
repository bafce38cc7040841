"""Behaviours that follow upstream code newer than our reference doc (each cites its source)."""

from __future__ import annotations

import numpy as np

from kubectl_wap.framework.scoring import balanced_allocation
from kubectl_wap.framework.state import ClusterState
from kubectl_wap.model import LabelSelector, Node, Pod, PodDisruptionBudget
from kubectl_wap.preemption.pdb import classify
from kubectl_wap.preemption.units import VictimUnit
from kubectl_wap.profiles import V1_37, V1_38


def _unit(pod: Pod) -> VictimUnit:
    return VictimUnit("Pod", pod.namespace, pod.name, [pod], 0, 1, "")


def test_empty_pdb_selector_matches_every_pod_of_its_namespace_in_1_38() -> None:
    # kubernetes/kubernetes PR #141785 (development branch, after v1.37): policy/v1 `selector: {}`
    # is labels.Everything(), and unlabeled pods are no longer skipped. A nil selector still
    # matches nothing.
    unlabeled = Pod("a", "p1", uid="1")
    labeled = Pod("a", "p2", uid="2", labels={"app": "x"})
    other_ns = Pod("b", "p3", uid="3")
    pdbs = [PodDisruptionBudget("a", "all", LabelSelector(), disruptions_allowed=1)]
    violating, non_violating, which = classify([_unit(labeled), _unit(unlabeled), _unit(other_ns)], pdbs, V1_38)
    # budget 1: the first (more important) pod consumes it, the second violates
    assert [u.name for u in violating] == ["p1"]
    assert [u.name for u in non_violating] == ["p2", "p3"]
    assert which["Pod/a/p1"] == ["a/all"]


def test_empty_pdb_selector_and_unlabeled_pods_match_nothing_in_1_37() -> None:
    # v1.37.2 preemption/util.go FilterVictimsWithPDBViolation: `if len(pod.Labels) == 0 { return
    # false }` and `if selector.Empty() || ...` skips the PDB ("A PDB with a nil or empty selector
    # matches nothing"). The real scheduler v1.37.2 agrees (tests/oracle differential, case
    # gen-1-6: it reprieved a priority-100 pod that the 1.38 rule would have made a victim).
    unlabeled = Pod("a", "p1", uid="1")
    labeled = Pod("a", "p2", uid="2", labels={"app": "x"})
    budget0 = [PodDisruptionBudget("a", "all", LabelSelector(), disruptions_allowed=0)]
    violating, non_violating, _ = classify([_unit(labeled), _unit(unlabeled)], budget0, V1_37)
    assert violating == [] and [u.name for u in non_violating] == ["p2", "p1"]
    # an unlabeled pod never violates, even a budget whose expression selector matches it
    from kubectl_wap.model import Requirement

    expr = LabelSelector(match_expressions=(Requirement("app", "DoesNotExist", ()),))
    violating, _, _ = classify([_unit(unlabeled)], [PodDisruptionBudget("a", "no-app", expr, disruptions_allowed=0)], V1_37)
    assert violating == []
    violating, _, _ = classify([_unit(unlabeled)], [PodDisruptionBudget("a", "no-app", expr, disruptions_allowed=0)], V1_38)
    assert [u.name for u in violating] == ["p1"]


def test_pod_stops_consuming_budgets_at_its_first_violation() -> None:
    # v1.37.2 podIsViolating: `pdbsAllowed[i]--; if pdbsAllowed[i] < 0 { return true }` - the PDBs
    # after the first violated one are not decremented for that pod.
    a = Pod("a", "p1", uid="1", labels={"app": "x"})
    b = Pod("a", "p2", uid="2", labels={"app": "x"})
    first = PodDisruptionBudget("a", "first", LabelSelector(match_labels=(("app", "x"),)), disruptions_allowed=0)
    second = PodDisruptionBudget("a", "second", LabelSelector(match_labels=(("app", "x"),)), disruptions_allowed=1)
    violating, non_violating, which = classify([_unit(a), _unit(b)], [first, second], V1_37)
    # p1 violates "first" and stops: "second" keeps its budget of 1 ...
    # ... so p2 violates "first" too, but would not have violated "second" either way.
    assert [u.name for u in violating] == ["p1", "p2"] and which["Pod/a/p1"] == ["a/first"]
    third = PodDisruptionBudget("a", "third", LabelSelector(match_labels=(("app", "x"),)), disruptions_allowed=1)
    # order [second, third, first]: p1 decrements second (1 -> 0), third (1 -> 0), first (0 -> -1:
    # violation). p2 then violates second at once (0 -> -1) and stops there.
    violating, _, which = classify([_unit(a), _unit(b)], [second, third, first], V1_37)
    assert which["Pod/a/p1"] == ["a/first"] and which["Pod/a/p2"] == ["a/second"]


def test_nil_pdb_selector_matches_nothing() -> None:
    pods = [Pod("a", f"p{i}", uid=str(i)) for i in range(3)]
    violating, _, _ = classify([_unit(p) for p in pods], [PodDisruptionBudget("a", "nil", None, 0)])
    assert violating == []


def test_balanced_allocation_skips_best_effort_pods() -> None:
    # noderesources resourceAllocationScorer.isBestEffortPod: no cpu and no memory request -> score 0.
    nodes = [Node("n1", allocatable={"cpu": 4000, "memory": 4 << 30, "pods": 110}),
             Node("n2", allocatable={"cpu": 4000, "memory": 4 << 30, "pods": 110})]
    busy = Pod("x", "busy", uid="b", node_name="n1", phase="Running", requests={"cpu": 3000})
    st = ClusterState(nodes, [busy])
    best_effort = Pod("x", "be", uid="be")
    assert balanced_allocation(st, best_effort, np.array([0, 1])).tolist() == [0, 0]
    burstable = Pod("x", "bu", uid="bu", requests={"cpu": 100})
    scores = balanced_allocation(st, burstable, np.array([0, 1])).tolist()
    # v1.37 scores the balance change: n1 61 with vs 62 without, n2 98 vs 100 -> 74 and 74
    assert scores == [74, 74]


def test_balanced_allocation_scores_the_balance_change_as_v1_37_does() -> None:
    # v1.37.2 balancedResourceScorer: 50 + (50 + score_with_pod - score_without_pod) / 2. The
    # numbers are the real scheduler's own (oracle, case gen-2-71 at log level 10: plugin
    # NodeResourcesBalancedAllocation scored node4 69, node5 63, node2 67 for a 1-cpu/64Mi pod).
    mi = 1 << 20
    nodes = [Node("node2", allocatable={"cpu": 3000, "memory": 16 << 30, "pods": 110}),
             Node("node4", allocatable={"cpu": 4000, "memory": 16 << 30, "pods": 110}),
             Node("node5", allocatable={"cpu": 2000, "memory": 16 << 30, "pods": 110})]
    running = [("node2", 500), ("node4", 1000), ("node4", 250), ("node4", 1000), ("node5", 250), ("node5", 250)]
    pods = [Pod("x", f"r{i}", uid=f"r{i}", node_name=n, phase="Running", requests={"cpu": c, "memory": 64 * mi})
            for i, (n, c) in enumerate(running)]
    st = ClusterState(nodes, pods)
    pod = Pod("x", "p", uid="p", requests={"cpu": 1000, "memory": 64 * mi})
    assert balanced_allocation(st, pod, np.array([0, 1, 2])).tolist() == [67, 69, 63]
