"""preemption/pdb.py against v1.37.2 preemption/util.go `FilterVictimsWithPDBViolation`
(`podIsViolating`): its unit test's table, then rule by rule. More PDB rules (selector versions, first violation stops) are in
tests/test_upstream_updates.py; the scenarios cover them through the CLI."""

from __future__ import annotations

import pytest

from kubectl_wap.model import LabelSelector, Pod, PodDisruptionBudget, Requirement
from kubectl_wap.preemption.pdb import classify
from kubectl_wap.preemption.units import VictimUnit
from kubectl_wap.profiles import V1_37, V1_38

APP_X = LabelSelector(match_labels=(("app", "x"),))


def _unit(pod: Pod) -> VictimUnit:
    return VictimUnit("Pod", pod.namespace, pod.name, [pod], 0, 1, "")


# util_test.go TestFilterVictimsWithPDBViolation (v1.37.2), case by case. Victims are given by name
# (their pods below), PDBs as (selector labels or None for `{}`, disruptionsAllowed, disruptedPods);
# the want is the violating victims with their ViolateCount, then the non-violating ones.
_FOO = (("app", "foo"),)
_PODS = {
    "viNoPDBMatch": [Pod("", "p1", uid="u1", labels={"app": "foo"})],  # no namespace: not the PDB's
    "viMatchPDB": [Pod("default", "p1", uid="u1", labels={"app": "foo"})],
    "viMatchPDB2": [Pod("default", "p2", uid="u2", labels={"app": "foo"})],
    "viPodGroup": [Pod("default", "p1", uid="u1", labels={"app": "foo"}), Pod("default", "p2", uid="u2", labels={"app": "foo"})],
    "viMatchMultiplePDBs": [Pod("default", "p1", uid="u1", labels={"app": "foo", "tier": "backend"})],
}
_UPSTREAM = [
    ("no victims, no PDBs", [], [], [], []),
    ("victim with no matching PDBs", ["viNoPDBMatch"], [((("app", "bar"),), 0, ())], [], ["viNoPDBMatch"]),
    ("victim matching PDB, adequate DisruptionsAllowed", ["viMatchPDB"], [(_FOO, 1, ())], [], ["viMatchPDB"]),
    ("victim matching PDB, no DisruptionsAllowed", ["viMatchPDB"], [(_FOO, 0, ())], [("viMatchPDB", 1)], []),
    ("podgroup victim with multiple pods, all violating", ["viPodGroup"], [(_FOO, 0, ())], [("viPodGroup", 2)], []),
    ("podgroup victim with multiple pods, none violating", ["viPodGroup"], [(_FOO, 2, ())], [], ["viPodGroup"]),
    ("multiple victims matching the same PDB", ["viMatchPDB", "viMatchPDB2"], [(_FOO, 1, ())], [("viMatchPDB2", 1)], ["viMatchPDB"]),
    ("pod in DisruptedPods is ignored", ["viMatchPDB"], [(_FOO, 0, ("p1",))], [], ["viMatchPDB"]),
    ("PDB with empty selector", ["viMatchPDB"], [(None, 0, ())], [], ["viMatchPDB"]),
    ("Multiple PDBs", ["viMatchMultiplePDBs"], [(_FOO, 1, ()), ((("tier", "backend"),), 0, ())], [("viMatchMultiplePDBs", 1)], []),
]


@pytest.mark.parametrize("victims, pdbs, want_violating, want_non_violating",
                         [pytest.param(*case[1:], id=case[0]) for case in _UPSTREAM])
def test_filter_victims_with_pdb_violation(victims, pdbs, want_violating, want_non_violating):
    units = [VictimUnit("Pod", _PODS[v][0].namespace, v, list(_PODS[v]), 0, 1, "") for v in victims]
    budgets = [PodDisruptionBudget("default", f"pdb{i}", LabelSelector(match_labels=sel) if sel else LabelSelector(), allowed,
                                   frozenset(disrupted)) for i, (sel, allowed, disrupted) in enumerate(pdbs)]
    violating, non_violating, _ = classify(units, budgets, V1_37)
    got = ([(u.name, u.violate_count) for u in violating], [u.name for u in non_violating])
    want = (want_violating, want_non_violating)
    assert got == want, f"got (violating, non-violating) {got}, want {want} (FilterVictimsWithPDBViolation)"


@pytest.mark.parametrize("labels, want_violating, why", [
    pytest.param({"app": "web"}, ["p1"], "app In (web, api) selects app=web", id="a pod matching the expression consumes the budget"),
    pytest.param({"app": "batch"}, [], "app In (web, api) does not select app=batch",
                 id="a pod outside the expression consumes nothing"),
])
def test_match_expressions_are_part_of_the_selector(labels, want_violating, why):
    # podIsViolating: `selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)`, which
    # turns every matchExpressions entry into a requirement (apimachinery pkg/apis/meta/v1
    # helpers.go); a selector of matchExpressions only is not empty and matches by them.
    p1 = Pod("a", "p1", uid="1", labels=labels)
    sel = LabelSelector(match_expressions=(Requirement("app", "In", ("web", "api")),))
    pdb = PodDisruptionBudget("a", "web", sel, disruptions_allowed=0)
    violating, _, _ = classify([_unit(p1)], [pdb], V1_37)
    got = [u.name for u in violating]
    assert got == want_violating, f"got violating {got}, want {want_violating} ({why})"


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


def test_matches_carry_over_to_the_same_selectors_only() -> None:
    """pdb.Budgets keeps the label-set matches of the last PDB list for the next classification
    of a list with the same selectors in the same order (simulate's cycles change only the
    budgets); another selector, order or profile starts afresh, and an entry holds its labels
    mapping (so the id it keys on is not reused while cached)."""
    from dataclasses import replace

    from kubectl_wap.preemption.pdb import Budgets

    web = Pod("default", "w", uid="w", labels={"app": "web"})
    db = Pod("default", "d", uid="d", labels={"app": "db"})
    sel_web, sel_db = LabelSelector(match_labels=(("app", "web"),)), LabelSelector(match_labels=(("app", "db"),))
    pdbs = [PodDisruptionBudget("default", "a", sel_web, 1), PodDisruptionBudget("default", "b", sel_db, 1)]
    b1 = Budgets(pdbs)
    assert (b1.matches(web), b1.matches(db)) == ([0], [1])
    b2 = Budgets([replace(p, disruptions_allowed=0) for p in pdbs])  # budgets changed, selectors not
    assert b2.matching is b1.matching and b2.allowed == [0, 0]
    assert all(entry[0] is web.labels for key, entry in b2.matching.items() if key[1] == id(web.labels))
    b3 = Budgets(pdbs[::-1])  # the same selectors in another order: indices differ
    assert b3.matching is not b1.matching and (b3.matches(web), b3.matches(db)) == ([1], [0])
    b4 = Budgets([PodDisruptionBudget("default", "a", sel_db, 1), pdbs[1]])  # another selector
    assert (b4.matches(web), b4.matches(db)) == ([], [0, 1])
    b5 = Budgets(pdbs, V1_38)  # another profile
    assert b5.matching is not b4.matching
