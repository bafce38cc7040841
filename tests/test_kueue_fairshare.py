"""Kueue's fair sharing in our model (issue 35): the dominant resource share (fairshare.py), the
tournament order of a cycle's entries, fair sharing preemption (fairpreempt.py), and the words of
the report. Kueue's own cases are transcribed from sigs.k8s.io/kueue v0.17.0
pkg/scheduler/preemption/preemption_fair_test.go (TestFairPreemptions): upstream calls
Preemptor.GetTargets with a given assignment; here the incoming Workload is the only pending one,
in its target ClusterQueue, and one scheduling cycle with fair sharing on finds the same targets
with the same reasons (each case also checked against the real scheduler when the oracle is built).
"""

from __future__ import annotations

import json
import math
from importlib import resources
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_wap.queueing.kueue.answer import kueue_stage
from kubectl_wap.queueing.kueue.cycle import ADMITTED, schedule_cycle
from kubectl_wap.queueing.kueue.fairpreempt import FairTarget, KueuePanics
from kubectl_wap.queueing.kueue.fairshare import DRS, compare_drs, dominant_resource_share, lendable
from kubectl_wap.queueing.kueue.objects import KueueInputError, read_objects, read_workload
from kubectl_wap.queueing.kueue.quota import Snapshot, add_usage
from kubectl_wap.report.kueue import kueue_json, kueue_line, kueue_steps
from tests.kueue_builders import CQ, WL, case, flavor, local_queue, res
from tests.oracle_kueue import driver

LP, ANY, NEVER = "LowerPriority", "Any", "Never"
needs_oracle = pytest.mark.skipif(not driver.BINARY.exists(), reason="Kueue oracle not built (python -m tests.oracle_kueue build)")
FS, RECLAIM, IN_CQ = "InCohortFairSharing", "InCohortReclamation", "InClusterQueue"
FINAL, INITIAL = "LessThanOrEqualToFinalShare", "LessThanInitialShare"


# ---- TestFairPreemptions, transcribed ------------------------------------------------------------


def _base_cqs() -> list[dict[str, Any]]:
    """TestFairPreemptions' baseCQs: a, b, c (3 cpu each) and preemptible (0) in cohort all."""
    return [CQ(n).cohort("all").group(("default", [res("cpu", "3")]))
            .preemption(within=LP, reclaim=ANY, borrow=LP, threshold=-3).build() for n in "abc"] + [
        CQ("preemptible").cohort("all").group(("default", [res("cpu", "0")])).build()]


def _weighted(weights: dict[str, str]) -> list[dict[str, Any]]:
    """The a, b, c of the weight cases: reclaim Any, within LowerPriority, no borrowWithinCohort."""
    out = []
    for n, w in weights.items():
        q = CQ(n).cohort("all").group(("default", [res("cpu", "3")])).preemption(within=LP, reclaim=ANY)
        out.append((q.weight(w) if w else q).build())
    return out


def _adm(name: str, cq: str, cpu: str = "1", priority: int = 0, flv: str = "default") -> WL:
    return WL(name).priority(priority).request(cpu=cpu).admitted(cq, {"cpu": flv})


def _units(prefix: str, cq: str, n: int, priority: int = 0) -> list[WL]:
    return [_adm(f"{prefix}{i}", cq, "1", priority) for i in range(1, n + 1)]


def _fair(cqs: list[dict[str, Any]], admitted: list[WL], incoming: WL, target: str,
          cohorts: list[dict[str, Any]] = (), strategies: tuple[str, ...] = (),  # type: ignore[assignment]
          flavors: tuple[str, ...] = ("default",)) -> dict[str, Any]:
    c = case([flavor(f) for f in flavors], cqs, [w.build() for w in admitted] + [incoming.queue(f"lq-{target}").build()])
    c["fairSharing"] = True
    if cohorts:
        c["cohorts"] = list(cohorts)
    if strategies:
        c["fairSharingStrategies"] = list(strategies)
    return c


def _cohort(name: str, parent: str | None = None, cpu: str | None = None, weight: str | None = None,
            flv: str = "default") -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if parent:
        spec["parentName"] = parent
    if cpu is not None:
        spec["resourceGroups"] = [{"coveredResources": ["cpu"], "flavors": [{"name": flv, "resources": [
            {"name": "cpu", "nominalQuota": cpu}]}]}]
    if weight is not None:
        spec["fairSharing"] = {"weight": weight}
    return {"metadata": {"name": name}, "spec": spec}


def _in(name: str, cpu: str = "1", priority: int = 0) -> WL:
    return WL(name).priority(priority).request(cpu=cpu)


def _hierarchical() -> dict[str, Any]:
    """"hierarchical preemption": ROOT(5) over LEFT(5, weight 2: a weight 2, b), c, RIGHT(5: d, e 0.99)."""
    cqs = [CQ("a").cohort("LEFT").weight("2").group(("default", [res("cpu", "1")])).preemption(reclaim=ANY).build(),
           CQ("b").cohort("LEFT").group(("default", [res("cpu", "1")])).build(),
           CQ("c").cohort("ROOT").group(("default", [res("cpu", "1")])).build(),
           CQ("d").cohort("RIGHT").group(("default", [res("cpu", "1")])).build(),
           CQ("e").cohort("RIGHT").weight("0.99").group(("default", [res("cpu", "1")])).build()]
    cohorts = [_cohort("ROOT", cpu="5"), _cohort("LEFT", "ROOT", "5", "2"), _cohort("RIGHT", "ROOT", "5")]
    admitted = [_adm(f"{q}{p}", q, "1", p) for q in "bcde" for p in range(1, 6)]
    return _fair(cqs, admitted, _in("unit", "5"), "a", cohorts)


def _deep() -> dict[str, Any]:
    """"deep preemption": a under AAA/AA/A (weight 1.01), b under BBB/BB/B (0.99), CCCC lends 1."""
    cqs = [CQ("a").cohort("AAA").group(("default", [res("cpu", "0")])).preemption(reclaim=ANY).build(),
           CQ("b").cohort("BBB").group(("default", [res("cpu", "0")])).build()]
    cohorts = [_cohort("ROOT"), _cohort("A", "ROOT", weight="1.01"), _cohort("AA", "A"), _cohort("AAA", "AA"),
               _cohort("B", "ROOT", weight="0.99"), _cohort("BB", "B"), _cohort("BBB", "BB"),
               _cohort("C", "ROOT"), _cohort("CC", "C"), _cohort("CCC", "CC"), _cohort("CCCC", "CCC", "1")]
    return _fair(cqs, [_adm("b1", "b")], _in("a1"), "a", cohorts)


def _nominal_first() -> dict[str, Any]:
    """"nominal first: workload fitting within nominal can preempt despite high aggregate DRS"."""
    cqs = [CQ("a").cohort("all").group(("premium", [res("cpu", "3")]), ("cheap", [res("cpu", "0")]))
           .preemption(reclaim=ANY).fungibility("MayStopSearch", "MayStopSearch").build(),
           CQ("b").cohort("all").group(("premium", [res("cpu", "0")]), ("cheap", [res("cpu", "6")])).build()]
    admitted = ([_adm(f"a_prem{i}", "a", flv="premium") for i in (1, 2)] + [_adm(f"a_cheap{i}", "a", flv="cheap") for i in range(1, 6)]
                + [_adm("b_prem1", "b", flv="premium")])
    return _fair(cqs, admitted, _in("a_incoming"), "a", flavors=("premium", "cheap"))


BASE_USAGE = _units("a", "a", 3) + _units("b", "b", 5) + _units("c", "c", 1)

# name -> (case, {preempted: reason})
FAIR_CASES: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
    "reclaim nominal from user using the most": (
        _fair(_base_cqs(), BASE_USAGE, _in("c_incoming"), "c"), {"default/b1": RECLAIM}),
    "reclaim borrowable quota from user using the most": (
        _fair(_base_cqs(), BASE_USAGE, _in("a_incoming"), "a"), {"default/b1": FS}),
    "preempt one from each CQ borrowing": (
        _fair(_base_cqs(), [_adm("a1", "a", "0.5"), _adm("a2", "a", "0.5"), _adm("a3", "a", "3"),
                            _adm("b1", "b", "0.5"), _adm("b2", "b", "0.5"), _adm("b3", "b", "3")], _in("c_incoming", "2"), "c"),
        {"default/a1": RECLAIM, "default/b1": RECLAIM}),
    "can't preempt when everyone under nominal": (
        _fair(_base_cqs(), _units("a", "a", 3) + _units("b", "b", 3) + _units("c", "c", 3), _in("c_incoming"), "c"), {}),
    "can't preempt when it would switch the imbalance": (
        _fair(_base_cqs(), _units("a", "a", 3) + _units("b", "b", 5), _in("a_incoming", "2"), "a"), {}),
    "can preempt lower priority workloads from same CQ": (
        _fair(_base_cqs(), [_adm("a1_low", "a", priority=-1), _adm("a2_low", "a", priority=-1), _adm("a3", "a"), _adm("a4", "a")]
              + _units("b", "b", 5), _in("a_incoming", "2"), "a"),
        {"default/a1_low": IN_CQ, "default/a2_low": IN_CQ}),
    "can preempt a combination of same CQ and highest user": (
        _fair(_base_cqs(), [_adm("a_low", "a", priority=-1), _adm("a2", "a"), _adm("a3", "a")] + _units("b", "b", 6),
              _in("a_incoming", "2"), "a"),
        {"default/a_low": IN_CQ, "default/b1": FS}),
    "preempt huge workload if there is no other option, as long as the target CQ gets a lower share": (
        _fair(_base_cqs(), [_adm("b1", "b", "9")], _in("a_incoming", "2"), "a"), {"default/b1": RECLAIM}),
    "can't preempt huge workload if the incoming is also huge": (
        _fair(_base_cqs(), [_adm("a1", "a", "2"), _adm("b1", "b", "7")], _in("a_incoming", "5"), "a"), {}),
    "can't preempt 2 smaller workloads if the incoming is huge": (
        _fair(_base_cqs(), [_adm("b1", "b", "2"), _adm("b2", "b", "2"), _adm("b3", "b", "3")], _in("a_incoming", "6"), "a"), {}),
    "preempt from target and others even if over nominal": (
        _fair(_base_cqs(), [_adm("a1_low", "a", "2", -1), _adm("a2_low", "a", "1", -1), _adm("b1", "b", "3"), _adm("b2", "b", "3")],
              _in("a_incoming", "4"), "a"),
        {"default/a1_low": IN_CQ, "default/b1": FS}),
    "prefer to preempt workloads that don't make the target CQ have the biggest share": (
        _fair(_base_cqs(), [_adm("b1", "b", "2"), _adm("b2", "b", "1"), _adm("b3", "b", "2"), _adm("c1", "c", "1")],
              _in("a_incoming", "3.5"), "a"),
        {"default/b2": FS}),
    "preempt from different cluster queues if the end result has a smaller max share": (
        _fair(_base_cqs(), [_adm("b1", "b", "2"), _adm("b2", "b", "2.5"), _adm("c1", "c", "2"), _adm("c2", "c", "2.5")],
              _in("a_incoming", "3.5"), "a"),
        {"default/b1": FS, "default/c1": FS}),
    "scenario above does not flap": (
        _fair(_base_cqs(), [_adm("a1", "a", "3.5"), _adm("b2", "b", "2.5"), _adm("c2", "c", "2.5")], _in("b_incoming", "2"), "b"), {}),
    "cannot preempt if it would make the candidate CQ go under nominal after preempting one element": (
        _fair(_base_cqs(), [_adm("b1", "b", "3"), _adm("b2", "b", "3"), _adm("c1", "c", "3")], _in("a_incoming", "4"), "a"), {}),
    "workloads under priority threshold not capriciously preempted": (
        _fair(_base_cqs(), _units("a", "a", 3) + _units("b", "b", 3) + _units("preemptible", "preemptible", 3, -3),
              _in("a_incoming", "2"), "a"), {}),
    "preempt lower priority first, even if big": (
        _fair(_base_cqs(), [_adm("a1", "a", "3"), _adm("b_low", "b", "5", 0), _adm("b_high", "b", "1", 1)], _in("a_incoming"), "a",
              strategies=(INITIAL,)), {"default/b_low": FS}),
    "preempt workload that doesn't transfer the imbalance, even if high priority": (
        _fair(_base_cqs(), [_adm("a1", "a", "3"), _adm("b_low", "b", "5", 0), _adm("b_high", "b", "1", 1)], _in("a_incoming"), "a",
              strategies=(FINAL,)), {"default/b_high": FS}),
    "CQ with higher weight can preempt more": (
        _fair(_weighted({"a": "2", "b": "", "c": ""}), _units("a", "a", 3) + _units("b", "b", 6), _in("a_incoming", "2"), "a"),
        {"default/b1": FS, "default/b2": FS}),
    "can preempt anything borrowing from CQ with 0 weight": (
        _fair(_weighted({"a": "", "b": "0", "c": ""}), _units("a", "a", 3) + _units("b", "b", 6), _in("a_incoming", "3"), "a"),
        {"default/b1": FS, "default/b2": FS, "default/b3": FS}),
    "can't preempt nominal from CQ with 0 weight": (
        _fair(_weighted({"a": "", "b": "0"}), _units("a", "a", 3) + _units("b", "b", 3), _in("a_incoming"), "a"), {}),
    "can't preempt nominal from Cohort with 0 weight": (
        _fair([CQ("left-cq").cohort("root").group(("default", [res("cpu", "0")])).preemption(reclaim=ANY).build(),
               CQ("right-cq").cohort("right-cohort").weight("0").group(("default", [res("cpu", "0")])).preemption(reclaim=ANY).build()],
              [_adm("right-1", "right-cq")], _in("left-1"), "left-cq", [_cohort("right-cohort", "root", "1", "0")]), {}),
    "can preempt within cluster queue when no cohort": (
        _fair([CQ("a").group(("default", [res("cpu", "1")])).preemption(within=LP).build()], [_adm("a1", "a")],
              _in("a_incoming", priority=1000), "a"), {"default/a1": IN_CQ}),
    "hierarchical preemption": (_hierarchical(), {f"default/{n}": FS for n in ("b1", "b2", "c1", "c2", "e1")}),
    "deep preemption": (_deep(), {"default/b1": FS}),
    "cq with zero weight can reclaim nominal quota": (
        _fair([CQ("a").cohort("ROOT").weight("0.0").group(("default", [res("cpu", "1")])).preemption(reclaim=ANY).build(),
               CQ("b").cohort("ROOT").weight("1.0").group(("default", [res("cpu", "0")])).build()],
              [_adm("b1", "b")], _in("a1"), "a"), {"default/b1": RECLAIM}),
    "cohort with zero weight can reclaim nominal quota": (
        _fair([CQ("a").cohort("A").weight("0.0").group(("default", [res("cpu", "0")])).preemption(reclaim=ANY).build(),
               CQ("b").cohort("ROOT").weight("1.0").group(("default", [res("cpu", "0")])).build()],
              [_adm("b1", "b")], _in("a1"), "a", [_cohort("A", "ROOT", "1", "0.0")]), {"default/b1": FS}),
    "nominal first: workload fitting within nominal can preempt despite high aggregate DRS": (
        _nominal_first(), {"default/b_prem1": RECLAIM}),
}


# ---- scheduler_test.go TestSchedule, its fair sharing cases that fit one cycle ---------------------

NS_ALPHA = "eng-alpha"


def _sched(cqs: list[dict[str, Any]], cohorts: list[dict[str, Any]], workloads: list[WL]) -> dict[str, Any]:
    """A TestSchedule case: LocalQueues lq-<cq> in namespace eng-alpha, flavor on-demand."""
    c = case([flavor("on-demand")], cqs, [w.build() for w in workloads], namespaces=(NS_ALPHA,))
    c["localQueues"] = [local_queue(f"lq-{q['metadata']['name']}", q["metadata"]["name"], NS_ALPHA) for q in cqs]
    c["cohorts"], c["fairSharing"] = cohorts, True
    return c


def _sw(name: str, cq: str, cpu: str, priority: int = 0, admitted: bool = False) -> WL:
    w = WL(name, NS_ALPHA).priority(priority).podset("one", 1, cpu=cpu).queue(f"lq-{cq}")
    return w.admitted(cq, {"cpu": "on-demand"}) if admitted else w


def _zero_cq(name: str, weight: str | None = None, reclaim: str = NEVER) -> dict[str, Any]:
    q = CQ(name).cohort("A").group(("on-demand", [res("cpu", "0")])).preemption(reclaim=reclaim)
    return (q.weight(weight) if weight else q).build()


def _two_queues(weight: str) -> dict[str, Any]:
    """b0 holds 4 of cohort A's 8; b1 (priority 9001) and c1 (0) ask 4 each: c borrows less."""
    return _sched([_zero_cq("b", weight, ANY), _zero_cq("c", weight, ANY)], [_cohort("A", cpu="8", flv="on-demand")],
                  [_sw("b0", "b", "4", admitted=True), _sw("b1", "b", "4", 9001), _sw("c1", "c", "4")])


def _admitted(*pairs: tuple[str, str]) -> dict[str, Any]:
    # no admission checks: each is Admitted with its quota reservation
    return {"admitted": {f"{NS_ALPHA}/{w}": {"clusterQueue": q, "podSets": {"one": {"cpu": "on-demand"}}, "checks": [],
                                             "admittedCondition": True} for w, q in pairs},
            "preempted": {}}


SCHEDULE_FAIR_CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "fair sharing schedule workload with lowest drf after admission": (
        _sched([_zero_cq("b"), _zero_cq("c")], [_cohort("A", cpu="100", flv="on-demand")],
               [_sw("b0", "b", "10", admitted=True), _sw("b1", "b", "50"), _sw("c1", "c", "75")]), _admitted(("b1", "b"))),
    "fair sharing two queues with weight 0 schedules workload which borrows less": (_two_queues("0"), _admitted(("c1", "c"))),
    "fair sharing two queues with high weight schedules workload which borrows less": (
        _two_queues("123456789"), _admitted(("c1", "c"))),
    "fair sharing schedule highest priority first": (
        _sched([_zero_cq("b"), _zero_cq("c")], [_cohort("A", cpu="10", flv="on-demand"), _cohort("B")],
               [_sw("b1", "b", "10", 99), _sw("c1", "c", "10", 101)]), _admitted(("c1", "c"))),
}


@pytest.mark.parametrize("name", list(SCHEDULE_FAIR_CASES))
def test_kueue_fair_schedule_cases(name: str) -> None:
    """scheduler_test.go TestSchedule, case `name` (enableFairSharing): one cycle admits the same."""
    c, want = SCHEDULE_FAIR_CASES[name]
    assert driver.model_answer(c) == want


@needs_oracle
def test_kueue_fair_schedule_cases_agree_with_the_oracle() -> None:
    for name, answer in zip(SCHEDULE_FAIR_CASES, driver.run([c for c, _ in SCHEDULE_FAIR_CASES.values()]), strict=True):
        assert driver.oracle_answer(answer) == SCHEDULE_FAIR_CASES[name][1], name


@pytest.mark.parametrize("name", list(FAIR_CASES))
def test_kueue_fair_preemption_cases(name: str) -> None:
    """preemption_fair_test.go TestFairPreemptions, case `name`: the same targets, same reasons."""
    c, want = FAIR_CASES[name]
    assert driver.model_answer(c)["preempted"] == want


def test_fair_sharing_changes_the_answer_of_some_cases() -> None:
    """The transcribed cases hold only with fair sharing on: classical preemption answers several
    of them otherwise (so they test the fair sharing path, not the classical one)."""
    changed = []
    for name, (c, want) in FAIR_CASES.items():
        off = {**c, "fairSharing": False}
        if driver.model_answer(off)["preempted"] != want:
            changed.append(name)
    assert len(changed) >= 10, changed


@needs_oracle
def test_kueue_fair_cases_agree_with_the_oracle() -> None:
    """The transcription is faithful: Kueue's real scheduler, in one cycle, preempts the same."""
    for name, answer in zip(FAIR_CASES, driver.run([FAIR_CASES[n][0] for n in FAIR_CASES]), strict=True):
        c, want = FAIR_CASES[name]
        theirs = driver.oracle_answer(answer)
        assert theirs.get("preempted") == want, (name, theirs)
        assert driver.model_answer(c) == theirs, name


# ---- the dominant resource share ----------------------------------------------------------------


def _tree(nominals: dict[str, int], usage: dict[str, int], weights: dict[str, str] | None = None) -> Snapshot:
    weights = weights or {}
    cqs = []
    for n, q in nominals.items():
        b = CQ(n).cohort("all").group(("default", [res("cpu", str(q))]))
        cqs.append((b.weight(weights[n]) if n in weights else b).build())
    snap = Snapshot(read_objects(case([flavor("default")], cqs, [])))
    for n, u in usage.items():
        add_usage(snap.cluster_queues[n], ("default", "cpu"), u * 1000)
    return snap


def test_drs_is_borrowed_per_mille_of_what_the_parent_can_lend_over_the_weight() -> None:
    # a: nominal 3, uses 5 -> borrows 2 of the cohort's 9 (potentialAvailable of the cohort)
    snap = _tree({"a": 3, "b": 3, "c": 3}, {"a": 5, "b": 1}, {"a": "2"})
    assert lendable(snap.cohorts["all"]) == {"cpu": 9000}
    d = dominant_resource_share(snap.cluster_queues["a"])
    assert d.borrowing and d.dominant == "cpu" and d.ratio == pytest.approx(2000 * 1000 / 9000)
    assert d.share() == pytest.approx(2000 * 1000 / 9000 / 2)
    # b is under its nominal quota: no share; the root cohort has none either.
    assert dominant_resource_share(snap.cluster_queues["b"]) == DRS(1.0, 0.0, "", False)
    assert dominant_resource_share(snap.cohorts["all"]).share() == 0


def test_zero_weight() -> None:
    """fair_sharing.go: weight 0 and borrowing is above every weighted share (CompareDRS), and two
    such compare by their unweighted ratio; weight 0 and not borrowing is a share of 0."""
    snap = _tree({"a": 3, "b": 3, "z": 3, "y": 3}, {"a": 8, "z": 4, "y": 5}, {"z": "0", "y": "0"})
    a, z, y = (dominant_resource_share(snap.cluster_queues[n]) for n in "azy")
    assert z.share() == math.inf and z.zero_weight_borrows()
    assert compare_drs(z, a) == 1 and compare_drs(a, z) == -1  # a borrows 5, z only 1: z still above
    assert compare_drs(y, z) == 1  # both zero-weight: y borrows more
    idle = _tree({"a": 3, "z": 3}, {"z": 2}, {"z": "0"})
    zi = dominant_resource_share(idle.cluster_queues["z"])
    assert zi.share() == 0 and not zi.zero_weight_borrows() and compare_drs(zi, DRS(1.0, 0.0, "", False)) == 0


def test_weight_is_read_as_a_quantity_and_defaults_to_one() -> None:
    cqs = [CQ("a").cohort("all").weight("500m").group(("default", [res("cpu", "1")])).build(),
           CQ("b").cohort("all").group(("default", [res("cpu", "1")])).build()]
    objs = read_objects(case([flavor("default")], cqs, []))
    assert objs.cluster_queues["a"].fair_weight == 0.5 and objs.cluster_queues["b"].fair_weight == 1.0
    cqs[0]["spec"]["fairSharing"]["weight"] = "-1"
    with pytest.raises(KueueInputError, match="must not be negative"):
        read_objects(case([flavor("default")], cqs, []))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 8), min_size=2, max_size=4), st.integers(0, 12), st.integers(0, 6),
       st.sampled_from(["0", "0.5", "1", "3"]))
def test_drs_never_falls_as_usage_grows(nominals: list[int], used: int, more: int, weight: str) -> None:
    """Adding usage to a ClusterQueue never lowers its share (the lendable amount is quota only)."""
    names = {f"q{i}": n for i, n in enumerate(nominals)}
    before = dominant_resource_share(_tree(names, {"q0": used}, {"q0": weight}).cluster_queues["q0"])
    after = dominant_resource_share(_tree(names, {"q0": used + more}, {"q0": weight}).cluster_queues["q0"])
    assert compare_drs(after, before) >= 0


@settings(max_examples=60, deadline=None)
@given(st.floats(0, 2000), st.floats(0, 2000), st.sampled_from([0.0, 0.5, 1.0, 2.0]), st.sampled_from([0.0, 1.0, 3.0]))
def test_compare_drs_is_antisymmetric(r1: float, r2: float, w1: float, w2: float) -> None:
    a, b = DRS(w1, r1, "cpu", r1 > 0), DRS(w2, r2, "cpu", r2 > 0)
    assert compare_drs(a, b) == -compare_drs(b, a)


# ---- the order of a cycle's entries -------------------------------------------------------------


def _two_heads(fair: bool) -> dict[str, Any]:
    """a and b (nominal 1 each) and c (nominal 4, idle) in a cohort of 6 cpu; a1 uses 3 in a (a
    borrows 2): 3 cpu are free. a's head (priority 10) asks 1, b's (priority 0) asks 3; both
    borrow, so the classical order (less borrowing, then priority) tries a's first; the fair
    tournament b's: b's share after admission (2 of 6 borrowed) is below a's (3 of 6)."""
    cqs = [CQ(n).cohort("all").group(("default", [res("cpu", q)])).build() for n, q in (("a", "1"), ("b", "1"), ("c", "4"))]
    wls = [_adm("a1", "a", "3").build(),
           WL("a-head").priority(10).created(5).request(cpu="1").queue("lq-a").build(),
           WL("b-head").priority(0).created(9).request(cpu="3").queue("lq-b").build()]
    c = case([flavor("default")], cqs, wls)
    c["fairSharing"] = fair
    return c


def _outcomes(c: dict[str, Any]) -> list[tuple[str, str]]:
    return [(d.workload.name, d.outcome) for d in schedule_cycle(read_objects(c), driver.NOW).decisions]


def test_the_tournament_tries_the_lower_share_first() -> None:
    """fair_sharing_iterator.go runTournament: b's entry goes first and is admitted, a's no longer
    fits; the classical iterator admits a's and skips b's."""
    assert _outcomes(_two_heads(True)) == [("b-head", ADMITTED), ("a-head", "skipped")]
    assert _outcomes(_two_heads(False)) == [("a-head", ADMITTED), ("b-head", "skipped")]
    d = schedule_cycle(read_objects(_two_heads(True)), driver.NOW).decision_for("default/b-head")
    assert d is not None and d.standing is not None
    assert d.standing.share == pytest.approx(2000 * 1000 / 6000) and d.standing.rival == "a"
    assert d.standing.rival_share == pytest.approx(3000 * 1000 / 6000)
    c = _two_heads(True)
    objs = read_objects({**c, "workloads": c["workloads"][:2]})
    steps = kueue_steps(kueue_stage(objs, read_workload(c["workloads"][2]), driver.NOW))
    assert "Fair sharing: tried in the cohort tournament (lowest share after admission first) with share 0.33; " \
           "next: ClusterQueue a at 0.50." in steps, steps


@needs_oracle
def test_the_tournament_agrees_with_the_oracle() -> None:
    cases = [_two_heads(True), _two_heads(False)]
    for c, answer in zip(cases, driver.run(cases), strict=True):
        assert driver.oracle_answer(answer) == driver.model_answer(c)
    assert list(driver.oracle_answer(driver.run([_two_heads(True)])[0])["admitted"]) == ["default/b-head"]


# ---- the report's words -------------------------------------------------------------------------


def test_a_fair_sharing_eviction_names_the_shares() -> None:
    """'reclaim borrowable quota from user using the most': b1 is evicted because b's share (2 of
    9 cpu borrowed) is above a's with the new Workload (1 of 9)."""
    c, _ = FAIR_CASES["reclaim borrowable quota from user using the most"]
    objs = read_objects({**c, "workloads": c["workloads"][:-1]})
    incoming = read_workload(c["workloads"][-1])
    stage = kueue_stage(objs, incoming, driver.NOW)
    assert stage.decision is not None
    (t,) = stage.decision.targets
    assert isinstance(t, FairTarget) and t.target_node == "b" and t.preemptor_node == "a"
    line = kueue_line(stage)
    assert "default/b1 (priority 0, fair sharing within the cohort: b's share 0.22 > a's 0.11 after admission)" in line, line
    ev = kueue_json(stage)["evictions"][0]
    assert ev["reason"] == FS and ev["fairSharing"] == {"preemptorNode": "a", "targetNode": "b",
                                                         "preemptorShare": pytest.approx(1 / 9), "targetShare": pytest.approx(2 / 9)}
    assert any("fair sharing within the cohort" in s for s in kueue_steps(stage))
    assert "Fair sharing: the only entry of its cohort tree in this cycle (its share after admission 0.11)." in kueue_steps(stage)
    schema = json.loads(resources.files("kubectl_wap").joinpath("report/schema.json").read_text())
    section = {**kueue_json(stage), "line": kueue_line(stage), "notes": []}
    errors = list(jsonschema.Draft202012Validator(schema["properties"]["queueing"]).iter_errors(section))
    assert not errors, [e.message for e in errors]


def test_a_classical_eviction_has_no_fair_sharing_record() -> None:
    c, _ = FAIR_CASES["reclaim nominal from user using the most"]
    objs = read_objects({**c, "workloads": c["workloads"][:-1]})
    stage = kueue_stage(objs, read_workload(c["workloads"][-1]), driver.NOW)
    ev = kueue_json(stage)["evictions"]
    assert [e["reason"] for e in ev] == [RECLAIM] and "fairSharing" not in ev[0]
    assert stage.outcome != ADMITTED


# ---- where Kueue v0.17.0 itself crashes ---------------------------------------------------------


def _no_cohort_short() -> dict[str, Any]:
    """a (2 cpu, no cohort, withinClusterQueue LowerPriority) holds a1 (priority 0, 1 cpu) and a2
    (priority 20, 1 cpu); a 2-cpu Workload of priority 10 may preempt a1 only, which is not enough."""
    cqs = [CQ("a").group(("default", [res("cpu", "2")])).preemption(within=LP).build()]
    return _fair(cqs, [_adm("a1", "a", "1", 0), _adm("a2", "a", "1", 20)], _in("in", "2", 10), "a")


def test_a_cluster_queue_without_cohort_that_cannot_make_room_is_kueues_panic() -> None:
    """fairsharing/ordering.go Iter: with the preemptor's own candidates used up, it takes the
    root of a nil cohort. Said in one line, not answered as if Kueue went on."""
    with pytest.raises(KueuePanics, match="ClusterQueue a has no cohort"):
        schedule_cycle(read_objects(_no_cohort_short()), driver.NOW)
    assert driver.model_answer(_no_cohort_short()) == {"error": "kueue panicked"}
    # classical preemption has no such path: nothing to preempt, nothing admitted
    assert driver.model_answer({**_no_cohort_short(), "fairSharing": False}) == {"admitted": {}, "preempted": {}}


@needs_oracle
def test_kueue_panics_there_too() -> None:
    (answer,) = driver.run([_no_cohort_short()])
    assert str(answer.get("error", "")).startswith("kueue panicked: runtime error: invalid memory address"), answer
