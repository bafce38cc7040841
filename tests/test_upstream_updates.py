"""Behaviours that follow upstream code newer than our reference doc (each cites its source)."""

from __future__ import annotations

import numpy as np

from kubectl_wap.framework.scoring import balanced_allocation
from kubectl_wap.framework.state import ClusterState
from kubectl_wap.model import LabelSelector, Node, Pod, PodDisruptionBudget
from kubectl_wap.preemption.pdb import classify
from kubectl_wap.preemption.units import VictimUnit


def _unit(pod: Pod) -> VictimUnit:
    return VictimUnit("Pod", pod.namespace, pod.name, [pod], 0, 1, "")


def test_empty_pdb_selector_matches_every_pod_of_its_namespace() -> None:
    # kubernetes/kubernetes PR #141785: policy/v1 `selector: {}` is labels.Everything(), and
    # unlabeled pods are no longer skipped. A nil selector still matches nothing.
    unlabeled = Pod("a", "p1", uid="1")
    labeled = Pod("a", "p2", uid="2", labels={"app": "x"})
    other_ns = Pod("b", "p3", uid="3")
    pdbs = [PodDisruptionBudget("a", "all", LabelSelector(), disruptions_allowed=1)]
    violating, non_violating, which = classify([_unit(labeled), _unit(unlabeled), _unit(other_ns)], pdbs)
    # budget 1: the first (more important) pod consumes it, the second violates
    assert [u.name for u in violating] == ["p1"]
    assert [u.name for u in non_violating] == ["p2", "p3"]
    assert which["Pod/a/p1"] == ["a/all"]


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
    assert scores[0] < scores[1]
