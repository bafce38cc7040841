"""One Kueue scheduling cycle: sigs.k8s.io/kueue v0.17.0 pkg/scheduler/scheduler.go
Scheduler.schedule, classical or with fair sharing (Configuration fairSharing).

1. The heads: each active ClusterQueue's first pending Workload (pkg/cache/queue
   cluster_queue.go baseCompareFunc: higher priority, then older creation, then UID).
2. A snapshot of the quota tree (quota.Snapshot).
3. Nomination (Scheduler.nominate, getInitialAssignments): the namespace selector, flavor
   assignment, and for an assignment that needs preemption the targets (preemption.get_targets).
4. The order (makeIterator): without fair sharing (makeClassicalIterator) entries that borrow
   less first, then higher priority, then older; with it (makeFairSharingIterator,
   fairshare.FairSharingIterator) a tournament through each cohort tree by dominant resource
   share after admission, recomputed before each entry. Fair sharing also changes whom
   preemption picks (fairpreempt.fair_targets) and lets reclaimWithinCohort preempt while
   borrowing (flavors canPreemptWhileBorrowing).
5. Admission in that order: an entry whose targets overlap an earlier entry's is skipped, one that
   no longer fits after the earlier ones is skipped; one that needs preemption issues it (and holds
   its quota in the snapshot for the rest of the cycle) and is not admitted in this cycle; one that
   fits is admitted. An entry that needs preemption but found no target reserves the quota it
   could use, unless its ClusterQueue can always reclaim (reclaimWithinCohort: Any).

UPSTREAM-DIFF: one cycle. Kueue repeats cycles; a Workload that preempts is admitted in a later
cycle, once its targets are gone. We say "admitted after evicting ..." for that, as Kueue's own
events do. Admission checks: admissionchecks.py. Not modelled: second-pass (TAS) entries,
waitForPodsReady's blockAdmission, LimitRanges, workload slices, partial admission.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from kubectl_wap.queueing.kueue.admissionchecks import FAILED_CHECKS_MESSAGE, active_cluster_queues, failed_checks
from kubectl_wap.queueing.kueue.flavors import FIT, NO_FIT, PREEMPT, Assignment, Possibility, assign_flavors
from kubectl_wap.queueing.kueue.objects import ANY, FlavorResource, KueueObjects, Workload
from kubectl_wap.queueing.kueue.fairpreempt import fair_targets
from kubectl_wap.queueing.kueue.fairshare import FairSharingIterator, Standing
from kubectl_wap.queueing.kueue.preemption import Target, TargetFinder, get_targets, simulate_preemption
from kubectl_wap.queueing.kueue.quota import Node, Snapshot, add_usage, cq_available

# Outcomes of one head in one cycle.
ADMITTED = "admitted"
PREEMPTING = "preempting"  # issued the evictions of its targets; admitted in a later cycle
NO_CANDIDATES = "no-preemption-candidates"  # needs preemption but no Workload may be preempted
NO_FIT_OUTCOME = "no-fit"
SKIPPED = "skipped"  # fitted when nominated, not after an earlier entry of the cycle
INADMISSIBLE = "inadmissible"  # refused before flavor assignment (namespace selector, ...)


@dataclass(frozen=True, slots=True)
class Decision:
    """What the cycle did with one head: a record, worded by report/."""

    workload: Workload
    cluster_queue: str
    outcome: str
    assignment: Assignment | None
    targets: tuple[Target, ...]
    message: str  # Kueue's own message (the QuotaReserved=False condition's), when not admitted
    # With fair sharing on: its ClusterQueue's share after admission when the tournament picked it
    standing: Standing | None = None


@dataclass(frozen=True, slots=True)
class CycleResult:
    decisions: tuple[Decision, ...]  # in the order the cycle processed them (nominated ones first)
    pending: tuple[Workload, ...]  # pending Workloads that were not a head this cycle

    def decision_for(self, key: str) -> Decision | None:
        return next((d for d in self.decisions if d.workload.key == key), None)


@dataclass(slots=True)
class _Entry:
    wl: Workload
    cq: str
    assignment: Assignment | None
    targets: list[Target]
    message: str


def queue_order_key(wl: Workload) -> tuple[int, float, str]:
    """cluster_queue.go baseCompareFunc (no sticky workload: the first attempt)."""
    return (-wl.priority, wl.created, wl.uid)


def queue_of(objs: KueueObjects, wl: Workload) -> str | None:
    """The ClusterQueue a pending Workload waits in: its LocalQueue's, if that queue exists."""
    lq = objs.local_queues.get(f"{wl.namespace}/{wl.queue_name}")
    if lq is None or lq.stopped:
        return None
    return lq.cluster_queue


def heads(objs: KueueObjects) -> tuple[list[tuple[Workload, str]], list[Workload]]:
    """Manager.heads: one Workload per active ClusterQueue; and the rest of the pending ones."""
    active = active_cluster_queues(objs)
    queued: dict[str, list[Workload]] = {}
    for wl in objs.workloads:
        if wl.admission is not None or not wl.active or wl.finished:
            continue
        cq = queue_of(objs, wl)
        if cq is not None and cq in objs.cluster_queues:
            queued.setdefault(cq, []).append(wl)
    out, rest = [], []
    for cq, wls in sorted(queued.items()):
        wls.sort(key=queue_order_key)
        if cq in active:
            out.append((wls[0], cq))
            rest.extend(wls[1:])
        else:
            rest.extend(wls)
    return out, rest


def _entry_key(e: _Entry) -> tuple[int, int, float]:
    """makeClassicalIterator: less borrowing first, then higher priority, then older."""
    return (e.assignment.borrowing if e.assignment else 0, -e.wl.priority, e.wl.created)


def _fits_after(snap: Snapshot, node: Node, usage: Mapping[FlavorResource, int], removed: list[Workload]) -> bool:
    """scheduler.go fits: with every target of the cycle removed, does the usage fit?"""
    revert = snap.simulate_removal(removed)
    try:
        return all(cq_available(node, fr) >= q for fr, q in usage.items())
    finally:
        revert()


def _to_reserve(a: Assignment, node: Node) -> dict[FlavorResource, int]:
    """scheduler.go quotaResourcesToReserve for an entry in Preempt mode."""
    out = {}
    for fr, usage in a.usage.items():
        q = node.quotas.get(fr)
        nominal = q.nominal if q else 0
        used = node.usage.get(fr, 0)
        if a.borrowing > 0:
            if q is None or q.borrowing_limit is None:
                out[fr] = usage
            else:
                out[fr] = min(usage, nominal + q.borrowing_limit - used)
        else:
            out[fr] = max(0, min(usage, nominal - used))
    return out


def _target_finder(objs: KueueObjects) -> TargetFinder:
    """Preemptor.getTargets: fairPreemptions with fair sharing on, classicalPreemptions otherwise."""
    if not objs.fair_sharing:
        return get_targets
    strategies = objs.fair_strategies

    def find(snap: Snapshot, wl: Workload, node: Node, frs: set[FlavorResource],
             requests: dict[FlavorResource, int], now: float) -> list[Target]:
        return fair_targets(snap, wl, node, frs, requests, now, strategies)

    return find


def _nominate(snap: Snapshot, objs: KueueObjects, wl: Workload, cq_name: str, now: float) -> _Entry:
    node = snap.cluster_queues[cq_name]
    spec = node.spec
    assert spec is not None
    if failed_checks(wl):  # Scheduler.nominate checks them before the namespace
        return _Entry(wl, cq_name, None, [], FAILED_CHECKS_MESSAGE)
    labels = objs.namespaces.get(wl.namespace, {})
    if spec.namespace_selector is None or not spec.namespace_selector.matches(labels):
        unknown = "" if wl.namespace in objs.namespaces else f" (Namespace {wl.namespace} is not in the input: its labels are unknown)"
        return _Entry(wl, cq_name, None, [], "Workload namespace doesn't match ClusterQueue selector" + unknown)

    find = _target_finder(objs)

    def oracle(fr: FlavorResource, q: int) -> tuple[Possibility, int]:
        return simulate_preemption(snap, wl, node, fr, q, now, find)

    a = assign_flavors(wl, node, objs.flavors, oracle, objs.fair_sharing)
    targets: list[Target] = []
    if a.mode == PREEMPT:
        targets = find(snap, wl, node, a.needs_preemption(), a.total_requests(), now)
    return _Entry(wl, cq_name, a, targets, a.message())


def schedule_cycle(objs: KueueObjects, now: float) -> CycleResult:
    """Scheduler.schedule, once. `now` stands for the clock where upstream reads it (the
    reservation time of a Workload whose QuotaReserved condition has none)."""
    snap = Snapshot(objs)
    head_list, rest = heads(objs)
    entries, inadmissible = [], []
    for wl, cq in head_list:
        e = _nominate(snap, objs, wl, cq, now)
        (entries if e.assignment is not None else inadmissible).append(e)
    decisions: list[Decision] = []
    preempted: dict[str, Workload] = {}
    fair: FairSharingIterator[_Entry] | None = None
    if objs.fair_sharing:
        fair = FairSharingIterator(snap.cluster_queues, {e.cq: e for e in entries}, lambda e: e.wl,
                                   lambda e: e.assignment.usage if e.assignment else {})
        ordered: Iterable[_Entry] = fair
    else:
        # makeClassicalIterator; Python's sort is stable where Go's is not: ties need equal
        # borrowing, priority and creation time, which upstream leaves to its sort's whim.
        ordered = sorted(entries, key=_entry_key)
    for e in ordered:
        a = e.assignment
        assert a is not None
        node = snap.cluster_queues[e.cq]
        spec = node.spec
        assert spec is not None
        mode = a.mode
        if mode == NO_FIT:
            decisions.append(Decision(e.wl, e.cq, NO_FIT_OUTCOME, a, (), e.message))
            continue
        if mode == PREEMPT and not e.targets:
            if spec.preemption.reclaim_within_cohort != ANY:  # preemption.CanAlwaysReclaim
                for fr, q in _to_reserve(a, node).items():
                    add_usage(node, fr, q)
            decisions.append(Decision(e.wl, e.cq, NO_CANDIDATES, a, (), e.message))
            continue
        if any(t.workload.key in preempted for t in e.targets):
            decisions.append(Decision(e.wl, e.cq, SKIPPED, a, tuple(e.targets),
                                      "Workload has overlapping preemption targets with another workload"))
            continue
        if not _fits_after(snap, node, a.usage, [*preempted.values(), *(t.workload for t in e.targets)]):
            decisions.append(Decision(e.wl, e.cq, SKIPPED, a, tuple(e.targets),
                                      "Workload no longer fits after processing another workload"))
            continue
        for t in e.targets:
            preempted[t.workload.key] = t.workload
        for fr, q in a.usage.items():
            add_usage(node, fr, q)
        if mode == PREEMPT:
            decisions.append(Decision(e.wl, e.cq, PREEMPTING, a, tuple(e.targets), e.message))
            continue
        assert mode == FIT
        decisions.append(Decision(e.wl, e.cq, ADMITTED, a, (), ""))
    if fair is not None:
        decisions = [replace(d, standing=fair.standing.get(d.workload.key)) for d in decisions]
    for e in inadmissible:
        decisions.append(Decision(e.wl, e.cq, INADMISSIBLE, None, (), e.message))
    return CycleResult(tuple(decisions), tuple(rest))
