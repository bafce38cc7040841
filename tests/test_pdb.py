"""preemption/pdb.py against v1.37.2 preemption/util.go `FilterVictimsWithPDBViolation`
(`podIsViolating`), rule by rule. More PDB rules (selector versions, first violation stops) are in
tests/test_upstream_updates.py; the scenarios cover them through the CLI."""

from __future__ import annotations

from kubectl_wap.model import LabelSelector, Pod, PodDisruptionBudget
from kubectl_wap.preemption.pdb import classify
from kubectl_wap.preemption.units import VictimUnit
from kubectl_wap.profiles import V1_37, V1_38

APP_X = LabelSelector(match_labels=(("app", "x"),))


def _unit(pod: Pod) -> VictimUnit:
    return VictimUnit("Pod", pod.namespace, pod.name, [pod], 0, 1, "")


def test_disrupted_pod_of_one_pdb_still_consumes_its_other_pdbs() -> None:
    # podIsViolating: `if _, exist := pdb.Status.DisruptedPods[pod.Name]; exist { continue }` -
    # only that PDB is skipped; the loop goes on to the pod's other PDBs.
    p1 = Pod("a", "p1", uid="1", labels={"app": "x"})
    counted = PodDisruptionBudget("a", "counted", APP_X, disruptions_allowed=0, disrupted_pods=frozenset({"p1"}))
    other = PodDisruptionBudget("a", "other", APP_X, disruptions_allowed=0)
    violating, non_violating, which = classify([_unit(p1)], [counted, other], V1_37)
    assert [u.name for u in violating] == ["p1"] and non_violating == []
    assert which["Pod/a/p1"] == ["a/other"]
    # The disrupted PDB alone consumes nothing: no violation.
    violating, non_violating, _ = classify([_unit(p1)], [counted], V1_37)
    assert violating == [] and [u.name for u in non_violating] == ["p1"]


def test_pdb_whose_selector_does_not_parse_matches_no_pod() -> None:
    # podIsViolating: `selector, err := metav1.LabelSelectorAsSelector(...); if err != nil {
    # continue }` ("This object has an invalid selector, it does not match the pod"). The parsed
    # part of the selector (matchLabels app=x here) does not count either.
    p1 = Pod("a", "p1", uid="1", labels={"app": "x"})
    bad = PodDisruptionBudget("a", "bad", LabelSelector(match_labels=(("app", "x"),), invalid=True), disruptions_allowed=0)
    for profile in (V1_37, V1_38):
        violating, non_violating, _ = classify([_unit(p1)], [bad], profile)
        assert violating == [] and [u.name for u in non_violating] == ["p1"], profile
