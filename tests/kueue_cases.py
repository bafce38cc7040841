"""Kueue's own test cases, transcribed as whole-cycle cases for our model and the Kueue oracle.

Source: sigs.k8s.io/kueue v0.17.0 pkg/scheduler/preemption/preemption_test.go, TestPreemption
(its defaultClusterQueues and the named cases). Upstream calls Preemptor.GetTargets with a given
flavor assignment; here the incoming Workload is the only pending one, in its target
ClusterQueue, and one scheduling cycle finds that same assignment (one flavor per resource
group) and the same targets. Expected: the upstream case's wantWorkloads with a Preempted
condition (name -> reason); none when it wants no preemption.
"""

from __future__ import annotations

from typing import Any

from tests.kueue_builders import CQ, WL, case, flavor, res

LP, ANY, NEVER, LONEP = "LowerPriority", "Any", "Never", "LowerOrNewerEqualPriority"


def default_cluster_queues() -> list[dict[str, Any]]:
    """TestPreemption's defaultClusterQueues (Resource(name, nominal, borrowingLimit, lendingLimit))."""
    return [
        CQ("standalone").group(("default", [res("cpu", "6")])).group(
            ("alpha", [res("memory", "3Gi")]), ("beta", [res("memory", "3Gi")])).preemption(within=LP).build(),
        CQ("c1").cohort("cohort").group(("default", [res("cpu", "6", "6"), res("memory", "3Gi", "3Gi")]))
        .preemption(within=LP, reclaim=LP).build(),
        CQ("c2").cohort("cohort").group(("default", [res("cpu", "6", "6"), res("memory", "3Gi", "3Gi")]))
        .preemption(within=NEVER, reclaim=ANY).build(),
        CQ("d1").cohort("cohort-no-limits").group(("default", [res("cpu", "6"), res("memory", "3Gi")]))
        .preemption(within=LP, reclaim=LP).build(),
        CQ("d2").cohort("cohort-no-limits").group(("default", [res("cpu", "6"), res("memory", "3Gi")]))
        .preemption(within=NEVER, reclaim=ANY).build(),
        CQ("l1").cohort("legion").group(("default", [res("cpu", "6", "12"), res("memory", "3Gi", "6Gi")]))
        .preemption(within=LP, reclaim=LP).build(),
        CQ("preventStarvation").group(("default", [res("cpu", "6")])).preemption(within=LONEP).build(),
        CQ("a_standard").cohort("with_shared_cq").group(("default", [res("cpu", "1", "12")]))
        .preemption(within=NEVER, reclaim=LP, borrow=LP, threshold=0).build(),
        CQ("b_standard").cohort("with_shared_cq").group(("default", [res("cpu", "1", "12")]))
        .preemption(within=LP, reclaim=ANY, borrow=LP, threshold=0).build(),
        CQ("a_best_effort").cohort("with_shared_cq").group(("default", [res("cpu", "1", "12")]))
        .preemption(within=NEVER, reclaim=LP, borrow=LP, threshold=0).build(),
        CQ("b_best_effort").cohort("with_shared_cq").group(("default", [res("cpu", "0", "13")]))
        .preemption(within=NEVER, reclaim=LP, borrow=LP, threshold=0).build(),
        CQ("shared").cohort("with_shared_cq").group(("default", [res("cpu", "10")])).build(),
        CQ("lend1").cohort("cohort-lend").group(("default", [res("cpu", "6", None, "4")]))
        .preemption(within=LP, reclaim=LP).build(),
        CQ("lend2").cohort("cohort-lend").group(("default", [res("cpu", "6", None, "2")]))
        .preemption(within=LP, reclaim=LP).build(),
    ]


def _case(admitted: list[WL], incoming: WL, target: str) -> dict[str, Any]:
    flavors = [flavor("default"), flavor("alpha"), flavor("beta")]
    wls = [w.build() for w in admitted] + [incoming.queue(f"lq-{target}").build()]
    return case(flavors, default_cluster_queues(), wls)


def _adm(name: str, cq: str, cpu: str, priority: int = 0, at: float = 0) -> WL:
    return WL(name).priority(priority).request(cpu=cpu).admitted(cq, {"cpu": "default"}, at)


# name -> (case, {preempted workload: reason})
CASES: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
    "preempt lowest priority": (_case(
        [_adm("low", "standalone", "2", -1), _adm("mid", "standalone", "2"), _adm("high", "standalone", "2", 1)],
        WL("in").priority(1).request(cpu="2"), "standalone"), {"default/low": "InClusterQueue"}),
    "preempt multiple": (_case(
        [_adm("low", "standalone", "2", -1), _adm("mid", "standalone", "2"), _adm("high", "standalone", "2", 1)],
        WL("in").priority(1).request(cpu="3"), "standalone"),
        {"default/low": "InClusterQueue", "default/mid": "InClusterQueue"}),
    "reclaim quota from borrower": (_case(
        [_adm("c1-low", "c1", "3", -1), _adm("c2-mid", "c2", "3"), _adm("c2-high", "c2", "6", 1)],
        WL("in").priority(1).request(cpu="3"), "c1"), {"default/c2-mid": "InCohortReclamation"}),
    "can't preempt workloads in ClusterQueue for withinClusterQueue=Never": (_case(
        [_adm("c2-low", "c2", "3", -1)], WL("in").priority(1).request(cpu="4"), "c2"), {}),
    "preempt newer workloads with the same priority": (_case(
        [_adm("wl1", "preventStarvation", "2", 2), _adm("wl2", "preventStarvation", "2", 1, at=1),
         _adm("wl3", "preventStarvation", "2", 1)],
        WL("in").priority(1).created(-15).podset("launcher", 1, cpu="2"), "preventStarvation"),
        {"default/wl2": "InClusterQueue"}),
    "use BorrowWithinCohort; allow preempting a lower-priority workload from another ClusterQueue while borrowing": (_case(
        [_adm("a_best_effort_low", "a_best_effort", "10", -1), _adm("b_best_effort_low", "b_best_effort", "1", -1)],
        WL("in").request(cpu="10"), "a_standard"), {"default/a_best_effort_low": "InCohortReclaimWhileBorrowing"}),
    "use BorrowWithinCohort; don't allow preempting a lower-priority workload with priority above MaxPriorityThreshold, "
    "if borrowing is required even after the preemption": (_case(
        [_adm("b_standard", "b_standard", "10", 1)], WL("in").priority(2).request(cpu="10"), "a_standard"), {}),
    "reclaim quota from lender": (_case(
        [_adm("lend1-low", "lend1", "3", -1), _adm("lend2-mid", "lend2", "3"), _adm("lend2-high", "lend2", "4", 1)],
        WL("in").priority(1).request(cpu="3"), "lend1"), {"default/lend2-mid": "InCohortReclamation"}),
}
