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

from tests.kueue_builders import CQ, WL, case, cohort, flavor, res

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


# ---- scheduler_test.go TestSchedule: whole cycles ------------------------------------------------

SCHEDULE_SOURCE = "sigs.k8s.io/kueue v0.17.0 pkg/scheduler/scheduler_test.go TestSchedule"


def schedule_cluster_queues() -> list[dict[str, Any]]:
    """TestSchedule's clusterQueues (MakeClusterQueue: namespaceSelector {}, BestEffortFIFO,
    MayStopSearch/TryNextFlavor, preemption Never unless set)."""
    return [
        CQ("sales").selector_in("dep", "sales").strict_fifo().group(("default", [res("cpu", "50", "0")])).build(),
        CQ("eng-alpha").cohort("eng").selector_in("dep", "eng").strict_fifo()
        .group(("on-demand", [res("cpu", "50", "50")]), ("spot", [res("cpu", "100", "0")])).build(),
        CQ("eng-beta").cohort("eng").selector_in("dep", "eng").strict_fifo().preemption(within=LP, reclaim=ANY)
        .group(("on-demand", [res("cpu", "50", "10")]), ("spot", [res("cpu", "0", "100")]))
        .group(("model-a", [res("example.com/gpu", "20", "0")])).build(),
        CQ("flavor-nonexistent-cq").strict_fifo().group(("nonexistent-flavor", [res("cpu", "50")])).build(),
        CQ("lend-a").cohort("lend").selector_in("dep", "lend").group(("default", [res("cpu", "3", None, "2")])).build(),
        CQ("lend-b").cohort("lend").selector_in("dep", "lend").group(("default", [res("cpu", "2", None, "2")])).build(),
    ]


_SCHEDULE_QUEUES = [("main", "sales", "sales"), ("blocked", "sales", "eng-alpha"), ("main", "eng-alpha", "eng-alpha"),
                    ("main", "eng-beta", "eng-beta"), ("flavor-nonexistent-queue", "sales", "flavor-nonexistent-cq"),
                    ("cq-nonexistent-queue", "sales", "nonexistent-cq"), ("lend-a-queue", "lend", "lend-a"),
                    ("lend-b-queue", "lend", "lend-b")]
_NAMESPACES = {"default": {}, "eng-alpha": {"dep": "eng"}, "eng-beta": {"dep": "eng"}, "eng-gamma": {"dep": "eng"},
               "sales": {"dep": "sales"}, "lend": {"dep": "lend"}}


def _schedule_case(workloads: list[WL], extra_cqs: list[CQ] = (), extra_lqs: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
                   cohorts: list[dict[str, Any]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    from tests.kueue_builders import local_queue

    c = case([flavor("default"), flavor("on-demand"), flavor("spot"), flavor("model-a")],
             schedule_cluster_queues() + [q.build() for q in extra_cqs], [w.build() for w in workloads])
    c["namespaces"] = [{"metadata": {"name": n, "labels": labels}} for n, labels in _NAMESPACES.items()]
    c["localQueues"] = [local_queue(name, cq, ns) for name, ns, cq in [*_SCHEDULE_QUEUES, *extra_lqs]]
    if cohorts:
        c["cohorts"] = list(cohorts)
    return c


def _sw(name: str, ns: str, queue: str | None = None) -> WL:
    w = WL(name, ns)
    return w.queue(queue) if queue else w


def _fungibility_case(p: str, preference: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """The two preference cases: on-demand (5, own) needs preempting low-<p>, spot (0 own, 5 lent
    by <p>-lender) needs borrowing; the preference decides."""
    c = _schedule_case([
        _sw(f"low-{p}", "default", f"{p}-queue").priority(-1).request(cpu="5").admitted(f"{p}-cq", {"cpu": "on-demand"}),
        _sw(f"high-{p}", "default", f"{p}-queue").request(cpu="5"),
    ], extra_cqs=[
        CQ(f"{p}-cq").cohort(f"{p}-cohort").preemption(within=LP).fungibility("TryNextFlavor", "TryNextFlavor", preference)
        .group(("on-demand", [res("cpu", "5", "0")]), ("spot", [res("cpu", "0", "5")])),
        CQ(f"{p}-lender").cohort(f"{p}-cohort").group(("on-demand", [res("cpu", "0")]), ("spot", [res("cpu", "5")])),
    ], extra_lqs=[(f"{p}-queue", "default", f"{p}-cq")])
    if preference == "PreemptionOverBorrowing":
        return c, {}, {f"default/low-{p}": "InClusterQueue"}
    return c, {f"default/high-{p}": (f"{p}-cq", {"main": {"cpu": "spot"}})}, {}


# name -> (case, {newly admitted: (ClusterQueue, {podset: {resource: flavor}})}, {preempted: reason})
SCHEDULE_CASES: dict[str, tuple[dict[str, Any], dict[str, tuple[str, dict[str, dict[str, str]]]], dict[str, str]]] = {
    "cannot borrow if cohort was assigned and would result in overadmission": (_schedule_case([
        _sw("new", "eng-alpha", "main").podset("one", 45, cpu="1"),
        _sw("new", "eng-beta", "main").podset("one", 56, cpu="1"),
    ]), {"eng-alpha/new": ("eng-alpha", {"one": {"cpu": "on-demand"}})}, {}),
    "can borrow if cohort was assigned and will not result in overadmission": (_schedule_case([
        _sw("new", "eng-alpha", "main").podset("one", 45, cpu="1"),
        _sw("new", "eng-beta", "main").podset("one", 55, cpu="1"),
    ]), {"eng-alpha/new": ("eng-alpha", {"one": {"cpu": "on-demand"}}),
         "eng-beta/new": ("eng-beta", {"one": {"cpu": "on-demand"}})}, {}),
    "workload exceeds lending limit when borrow in cohort": (_schedule_case([
        _sw("a", "lend").request(cpu="2").admitted("lend-b", {"cpu": "default"}),
        _sw("b", "lend", "lend-b-queue").request(cpu="3"),
    ]), {}, {}),
    "preempt workloads in ClusterQueue and cohort": (_schedule_case([
        _sw("preemptor", "eng-beta", "main").request(cpu="20"),
        _sw("use-all-spot", "eng-alpha").request(cpu="100").admitted("eng-alpha", {"cpu": "spot"}),
        _sw("low-1", "eng-beta").priority(-1).request(cpu="30").admitted("eng-beta", {"cpu": "on-demand"}),
        _sw("low-2", "eng-beta").priority(-2).request(cpu="10").admitted("eng-beta", {"cpu": "on-demand"}),
        _sw("borrower", "eng-alpha").request(cpu="60").admitted("eng-alpha", {"cpu": "on-demand"}),
    ]), {}, {"eng-alpha/borrower": "InCohortReclamation", "eng-beta/low-2": "InClusterQueue"}),
    "multiple CQs need preemption": (_schedule_case([
        _sw("preemptor", "eng-beta", "other").priority(-1).request(cpu="1"),
        _sw("pending", "eng-alpha", "other").priority(1).request(cpu="1"),
        _sw("use-all", "eng-alpha").request(cpu="100").admitted("other-alpha", {"cpu": "on-demand"}),
    ], extra_cqs=[
        CQ("other-alpha").cohort("other").group(("on-demand", [res("cpu", "50", "50")])),
        CQ("other-beta").cohort("other").preemption(within=LP, reclaim=ANY).group(("on-demand", [res("cpu", "50", "10")])),
    ], extra_lqs=[("other", "eng-alpha", "other-alpha"), ("other", "eng-beta", "other-beta")]),
        {}, {"eng-alpha/use-all": "InCohortReclamation"}),
    "hierarchical cohort respects lending limit when borrowing": (_schedule_case([
        _sw("wl-existing", "eng-alpha").podset("main", 1, cpu="5").admitted("cq-borrower", {"cpu": "on-demand"}),
        _sw("wl-pending", "eng-alpha", "lq-borrower").podset("main", 1, cpu="4"),
    ], extra_cqs=[
        CQ("cq-lender").cohort("child").selector_in("dep", "eng").group(("on-demand", [res("cpu", "10", None, "3")])),
        CQ("cq-borrower").cohort("child").selector_in("dep", "eng").group(("on-demand", [res("cpu", "5", "10")])),
    ], extra_lqs=[("lq-lender", "eng-alpha", "cq-lender"), ("lq-borrower", "eng-alpha", "cq-borrower")],
        cohorts=[cohort("root"), cohort("child", "root")]), {}, {}),
    "capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=LowerPriority)": (_schedule_case([
        _sw("a1-admitted", "eng-alpha", "lq").request(gpu="1").admitted("ClusterQueueA", {"gpu": "on-demand"}),
        _sw("a2-pending", "eng-alpha", "lq").request(gpu="2"),
        _sw("b1-pending", "eng-beta", "lq").created(60).request(gpu="1"),
    ], extra_cqs=[
        CQ("ClusterQueueA").cohort("root").group(("on-demand", [res("gpu", "2")])).preemption(reclaim=LP),
        CQ("ClusterQueueB").cohort("root").group(("on-demand", [res("gpu", "0")])),
    ], extra_lqs=[("lq", "eng-alpha", "ClusterQueueA"), ("lq", "eng-beta", "ClusterQueueB")]), {}, {}),
    "PreemptionOverBorrowing preference: preempt in first flavor instead of borrowing in second": _fungibility_case(
        "pob", "PreemptionOverBorrowing"),
    "BorrowingOverPreemption preference: borrow in second flavor instead of preempting in first": _fungibility_case(
        "bop", "BorrowingOverPreemption"),
}
