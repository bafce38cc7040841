"""Our model of Kueue's admission (kubectl_wap/queueing/kueue) against sigs.k8s.io/kueue v0.17.0:
the quota tree's rules (resource_node.go), one scheduling cycle on hand cases and on Kueue's own
preemption test cases (tests/kueue_cases.py), the refusal of what we do not model, and, when the
Kueue oracle is built (python -m tests.oracle_kueue build), a generated differential batch."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_wap.queueing.kueue.cycle import (
    ADMITTED,
    INADMISSIBLE,
    NO_CANDIDATES,
    NO_FIT_OUTCOME,
    PREEMPTING,
    schedule_cycle,
)
from kubectl_wap.queueing.kueue.objects import KueueInputError, KueueNotModelled, read_objects
from kubectl_wap.queueing.kueue.preemption import IN_COHORT_RECLAMATION
from kubectl_wap.queueing.kueue.quota import (
    Snapshot,
    add_usage,
    cq_available,
    lowest_subtree_that_fits,
    potential_available,
    remove_usage,
)
from tests.kueue_builders import CQ, WL, case, flavor, res
from tests.kueue_cases import CASES, SCHEDULE_CASES
from tests.oracle_kueue import driver
from tests.oracle_kueue.generate import generate

NOW = driver.NOW
F = ("default", "cpu")


def _cycle(c: dict):  # type: ignore[no-untyped-def]
    return schedule_cycle(read_objects(c), NOW)


# ---- the quota tree ------------------------------------------------------------------------------


def test_lending_limit_keeps_quota_local_and_borrowing_limit_caps_the_parent() -> None:
    """resource_node.go: a lending limit keeps nominal - lendingLimit out of the cohort's pool
    (localQuota); without one all of it is lent. available() is the local part plus what the
    parent has, the parent part capped by the borrowing limit; potentialAvailable likewise."""
    c = case([flavor("default")], [
        CQ("a").cohort("co").group(("default", [res("cpu", "10", None, "4")])).build(),  # keeps 6 local
        CQ("b").cohort("co").group(("default", [res("cpu", "0", "3")])).build(),  # may borrow 3
    ], [])
    snap = Snapshot(read_objects(c))
    a, b, co = snap.cluster_queues["a"], snap.cluster_queues["b"], snap.cohorts["co"]
    assert a.local_quota(F) == 6000
    assert co.subtree_quota[F] == 4000  # only what a lends
    assert cq_available(a, F) == 10000
    assert cq_available(b, F) == 3000 and potential_available(b, F) == 3000
    # b's 3 cpu come from the cohort: a's own local 6 stay, its lent part shrinks.
    snap.add_workload(read_objects(case([], [], [WL("w").request(cpu="3").admitted("b", {"cpu": "default"}).build()])).workloads[0])
    assert co.usage[F] == 3000
    assert cq_available(a, F) == 7000 and cq_available(b, F) == 0
    # FindHeightOfLowestSubtreeThatFits: within a's nominal (10) is height 0 (a has a parent);
    # b, nominal 0, borrows from the cohort: height 1 (the root, so not smaller than the tree).
    assert lowest_subtree_that_fits(a, F, 7000) == (0, True)
    assert lowest_subtree_that_fits(b, F, 1000) == (1, False)


# ---- one cycle on hand cases -----------------------------------------------------------------


def _two_cq_case(pending: list[WL], admitted: list[WL], reclaim: str = "Any") -> dict:
    cqs = [CQ(n).cohort("all").group(("default", [res("cpu", "4")])).preemption(within="LowerPriority", reclaim=reclaim).build()
           for n in ("a", "b")]
    return case([flavor("default")], cqs, [w.build() for w in admitted + pending])


def test_reclaim_from_a_borrower_then_admit_a_borrower_of_the_freed_quota() -> None:
    """b's admitted 6 cpu borrow 2 of a's; a's head (3 cpu, within a's nominal) reclaims them
    (InCohortReclamation) and holds its quota for the cycle. a's entry borrows nothing, b's head
    (1 cpu, b over its nominal) borrows, so a goes first although b's head has the higher
    priority (makeClassicalIterator); b's head still fits once the target's usage is removed
    (scheduler.go fits() with the cycle's targets removed): admitted in the same cycle. Kueue's
    oracle answers the same (its first cycle)."""
    c = _two_cq_case(
        [WL("a1").queue("lq-a").request(cpu="3").created(2), WL("b2").queue("lq-b").priority(5).request(cpu="1").created(3)],
        [WL("b1").request(cpu="6").admitted("b", {"cpu": "default"}, at=1).created(1)])
    r = _cycle(c)
    a1, b2 = r.decision_for("default/a1"), r.decision_for("default/b2")
    assert a1 is not None and a1.outcome == PREEMPTING
    assert [(t.workload.key, t.reason) for t in a1.targets] == [("default/b1", IN_COHORT_RECLAMATION)]
    assert b2 is not None and b2.outcome == ADMITTED
    assert [d.workload.key for d in r.decisions] == ["default/a1", "default/b2"]


def test_no_reclaim_policy_means_no_candidates() -> None:
    """reclaimWithinCohort Never: a's head needs preemption (3 cpu, 2 free) but may not reclaim:
    no candidates (mode Preempt, no targets) and not admitted."""
    c = _two_cq_case([WL("a1").queue("lq-a").request(cpu="3").created(2)],
                     [WL("b1").request(cpu="6").admitted("b", {"cpu": "default"}, at=1).created(1)], reclaim="Never")
    d = _cycle(c).decision_for("default/a1")
    assert d is not None and d.outcome == NO_CANDIDATES
    assert "insufficient unused quota for cpu in flavor default, 1 more needed" in d.message


def test_more_than_the_cohort_holds_is_no_fit_with_kueues_message() -> None:
    c = _two_cq_case([WL("a1").queue("lq-a").request(cpu="9")], [])
    d = _cycle(c).decision_for("default/a1")
    assert d is not None and d.outcome == NO_FIT_OUTCOME
    assert d.message == ("couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, "
                         "previously considered podsets requests (0) + current podset request (9) > maximum capacity (8)")


def test_namespace_selector_nil_admits_nothing() -> None:
    """A nil namespaceSelector matches no namespace (LabelSelectorAsSelector(nil) is Nothing)."""
    c = _two_cq_case([WL("a1").queue("lq-a").request(cpu="1")], [])
    del c["clusterQueues"][0]["spec"]["namespaceSelector"]
    d = _cycle(c).decision_for("default/a1")
    assert d is not None and d.outcome == INADMISSIBLE


def test_flavor_fungibility_try_next_flavor_on_borrow() -> None:
    """whenCanBorrow TryNextFlavor: a flavor that fits only by borrowing is passed over for a
    later one that fits in the ClusterQueue's own quota; MayStopSearch keeps the first."""
    def c(when_can_borrow: str) -> dict:
        cqs = [CQ("a").cohort("all").group(("f0", [res("cpu", "1")]), ("f1", [res("cpu", "4")]))
               .fungibility(when_can_borrow, "TryNextFlavor").build(),
               CQ("b").cohort("all").group(("f0", [res("cpu", "4")]), ("f1", [res("cpu", "0")])).build()]
        return case([flavor("f0"), flavor("f1")], cqs, [WL("w").queue("lq-a").request(cpu="2").build()])

    for policy, want in (("TryNextFlavor", "f1"), ("MayStopSearch", "f0")):
        d = _cycle(c(policy)).decision_for("default/w")
        assert d is not None and d.outcome == ADMITTED and d.assignment is not None
        assert d.assignment.pod_sets[0].flavors["cpu"].flavor == want, policy


# ---- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize("field,value,words", [
    # v1beta1's list; v1beta2 names checks under admissionChecksStrategy (test_kueue_admissionchecks.py)
    ("admissionChecks", ["prov"], "v1beta1's field"),
])
def test_unmodelled_cluster_queue_fields_are_refused(field: str, value: object, words: str) -> None:
    c = _two_cq_case([], [])
    c["clusterQueues"][0]["spec"][field] = value
    with pytest.raises((KueueNotModelled, KueueInputError), match=words):
        read_objects(c)


def test_unmodelled_workload_fields_are_refused() -> None:
    w = WL("a1").queue("lq-a").request(cpu="1").build()
    w["spec"]["podSets"][0]["minCount"] = 1
    with pytest.raises(KueueNotModelled, match="partial admission"):
        read_objects(case([flavor("default")], [], [w]))


def test_bad_quantity_is_one_line() -> None:
    c = _two_cq_case([], [])
    c["clusterQueues"][0]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "lots"
    with pytest.raises(KueueInputError, match="ClusterQueue a: cpu"):
        read_objects(c)


# ---- Kueue's own cases -------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CASES))
def test_kueue_preemption_cases(name: str) -> None:
    """preemption_test.go TestPreemption, case `name`: the same targets with the same reasons."""
    c, want = CASES[name]
    assert driver.model_answer(c)["preempted"] == want


def _want(name: str) -> dict:
    _, admitted, preempted = SCHEDULE_CASES[name]
    # no admission checks in these cases: each is Admitted with its quota reservation
    return {"admitted": {k: {"clusterQueue": cq, "podSets": ps, "checks": [], "admittedCondition": True}
                         for k, (cq, ps) in admitted.items()}, "preempted": preempted}


@pytest.mark.parametrize("name", list(SCHEDULE_CASES))
def test_kueue_schedule_cases(name: str) -> None:
    """scheduler_test.go TestSchedule, case `name`: one cycle admits (wantAssignments minus the
    Workloads admitted before it) and preempts (wantWorkloads with a Preempted condition) the same."""
    assert driver.model_answer(SCHEDULE_CASES[name][0]) == _want(name)


# ---- against the real Kueue scheduler (when its oracle is built) --------------------------------

needs_oracle = pytest.mark.skipif(not driver.BINARY.exists(), reason="Kueue oracle not built (python -m tests.oracle_kueue build)")


@needs_oracle
def test_kueue_cases_agree_with_the_oracle() -> None:
    cases = [CASES[n][0] for n in CASES]
    for name, answer in zip(CASES, driver.run(cases), strict=True):
        c, want = CASES[name]
        theirs = driver.oracle_answer(answer)
        assert theirs["preempted"] == want, name
        assert driver.model_answer(c) == theirs, name


@needs_oracle
def test_kueue_schedule_cases_agree_with_the_oracle() -> None:
    for name, answer in zip(SCHEDULE_CASES, driver.run([SCHEDULE_CASES[n][0] for n in SCHEDULE_CASES]), strict=True):
        assert driver.oracle_answer(answer) == _want(name), name


@needs_oracle
def test_generated_setups_agree_with_the_oracle() -> None:
    """60 generated setups (tests/oracle_kueue/generate.py); the full batch is
    `python -m tests.oracle_kueue diff --cases 500`."""
    cases = [generate(seed) for seed in range(1000, 1060)]
    assert driver.diff(cases) == []


# ---- invariants of the quota tree (hypothesis over generated setups) -----------------------------

@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), amount=st.integers(1, 12_000), which=st.integers(0, 3))
def test_usage_added_then_removed_leaves_the_tree_as_it_was(seed: int, amount: int, which: int) -> None:
    """resource_node.go addUsage/removeUsage are inverse on every node of the path (the scheduler
    relies on it: SimulateWorkloadRemoval, then the revert)."""
    snap = Snapshot(read_objects(generate(seed)))
    cqs = sorted(snap.cluster_queues)
    node = snap.cluster_queues[cqs[which % len(cqs)]]
    nodes = [node, *node.path_parent_to_root()]
    before = [dict(n.usage) for n in nodes]
    fr = ("f0", "cpu")
    add_usage(node, fr, amount)
    remove_usage(node, fr, amount)
    assert [{k: v for k, v in n.usage.items() if v} for n in nodes] == [{k: v for k, v in b.items() if v} for b in before]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_available_never_exceeds_potential_available(seed: int) -> None:
    """What a ClusterQueue can use now is at most what it could ever use (Available <=
    PotentialAvailable), for every flavor and resource it names."""
    snap = Snapshot(read_objects(generate(seed)))
    for node in snap.cluster_queues.values():
        for fr in node.quotas:
            assert 0 <= cq_available(node, fr) <= max(0, potential_available(node, fr)), (node.name, fr)


def test_selector_on_a_namespace_missing_from_the_input_says_so() -> None:
    c = _two_cq_case([WL("a1", "team").queue("lq-a").request(cpu="1")], [])
    c["clusterQueues"][0]["spec"]["namespaceSelector"] = {"matchLabels": {"dep": "eng"}}
    c["localQueues"].append({"metadata": {"name": "lq-a", "namespace": "team"}, "spec": {"clusterQueue": "a"}})
    d = _cycle(c).decision_for("team/a1")
    assert d is not None and d.outcome == INADMISSIBLE
    assert d.message == ("Workload namespace doesn't match ClusterQueue selector (Namespace team is not in the input: "
                         "its labels are unknown)")
    c["namespaces"].append({"metadata": {"name": "team", "labels": {"dep": "eng"}}})
    d = _cycle(c).decision_for("team/a1")
    assert d is not None and d.outcome == ADMITTED


# ---- one toleration rule for both stages ----------------------------------------------------------

_TOL_KEYS = st.sampled_from(["", "k", "x"])
_TOL_VALUES = st.sampled_from(["", "v", "w"])


@settings(max_examples=300, deadline=None)
@given(key=_TOL_KEYS, op=st.sampled_from(["", "Equal", "Exists", "Gt"]), value=_TOL_VALUES,
       effect=st.sampled_from(["", "NoSchedule", "NoExecute", "PreferNoSchedule"]),
       taint_key=st.sampled_from(["k", "x"]), taint_value=_TOL_VALUES,
       taint_effect=st.sampled_from(["NoSchedule", "NoExecute"]))
def test_kueue_flavor_taints_and_kube_scheduler_share_the_toleration_rule(
        key: str, op: str, value: str, effect: str, taint_key: str, taint_value: str, taint_effect: str) -> None:
    """A flavor's NoSchedule/NoExecute taint is tolerated by a podset exactly when kube-scheduler's
    TaintToleration would tolerate it on a node (corev1 Toleration.ToleratesTaint, the one rule in
    model.Toleration.tolerates), so the two stages never disagree about the same toleration."""
    from kubectl_wap.framework.plugins.selectors import tolerates_taint
    from kubectl_wap.model import Taint, Toleration
    from kubectl_wap.queueing.kueue.flavors import _check_flavor
    from kubectl_wap.queueing.kueue.objects import PodSet, ResourceFlavor

    taint = Taint(taint_key, taint_value, taint_effect)
    tol = Toleration(key, op, value, effect)
    fl = ResourceFlavor("f", (), (taint,), ())
    ps = PodSet("main", 1, (("cpu", 1000),), (), (tol,))
    kueue_ok = _check_flavor(fl, "f", ps, frozenset()) is None
    assert kueue_ok == tolerates_taint([tol], taint)
    # the upstream truth table, spelled out for the common shapes
    if op == "Exists" and not key and not effect:
        assert kueue_ok
    if op == "Gt":
        assert not kueue_ok  # UPSTREAM-DIFF in model.Toleration.tolerates: alpha operators tolerate nothing
