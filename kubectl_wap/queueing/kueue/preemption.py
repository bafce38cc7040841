"""Kueue's classical preemption: whom Kueue evicts so a Workload fits, within its ClusterQueue by
priority (withinClusterQueue) and reclaiming quota lent in the cohort (reclaimWithinCohort,
borrowWithinCohort). Mirrors sigs.k8s.io/kueue v0.17.0 pkg/scheduler/preemption/preemption.go
(Preemptor.classicalPreemptions, fillBackWorkloads, workloadFits), classical/candidate_generator.go
(NewCandidateIterator, candidateIsValid), classical/hierarchical_preemption.go
(classifyPreemptionVariant, collectCandidatesForHierarchicalReclaim), common/ordering.go
(CandidatesOrdering), common/preemption_policy.go (SatisfiesPreemptionPolicy) and
preemption_oracle.go (SimulatePreemption). Fair-sharing preemption is fairpreempt.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cmp_to_key

from kubectl_wap.queueing.kueue.flavors import Possibility
from kubectl_wap.queueing.kueue.objects import (
    ANY,
    LOWER_OR_NEWER_EQUAL_PRIORITY,
    LOWER_PRIORITY,
    NEVER,
    FlavorResource,
    Workload,
)
from kubectl_wap.queueing.kueue.quota import (
    Node,
    Snapshot,
    cq_available,
    lowest_subtree_that_fits,
    quantities_fit_in_quota,
)

IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"

# hierarchical_preemption.go preemptionVariant
_NEVER, _WITHIN_CQ, _HIERARCHICAL_RECLAIM, _RECLAIM_WITHOUT_BORROWING, _RECLAIM_WHILE_BORROWING = range(5)
_REASON = {_WITHIN_CQ: IN_CLUSTER_QUEUE, _HIERARCHICAL_RECLAIM: IN_COHORT_RECLAMATION,
           _RECLAIM_WITHOUT_BORROWING: IN_COHORT_RECLAMATION,
           _RECLAIM_WHILE_BORROWING: IN_COHORT_RECLAIM_WHILE_BORROWING}


@dataclass(frozen=True, slots=True)
class Target:
    """A Workload Kueue would evict, and why (the Preempted condition's reason)."""

    workload: Workload
    cluster_queue: str
    reason: str


@dataclass(slots=True)
class _Candidate:
    wl: Workload
    cq: str
    lca: Node | None  # the lowest common cohort of its ClusterQueue and the preemptor's
    variant: int


def satisfies_policy(preemptor: Workload, candidate: Workload, policy: str) -> bool:
    """common/preemption_policy.go SatisfiesPreemptionPolicy (SchedulerTimestampPreemptionBuffer
    off, its default)."""
    lower = preemptor.priority > candidate.priority
    if policy == LOWER_PRIORITY:
        return lower
    if policy == LOWER_OR_NEWER_EQUAL_PRIORITY:
        return lower or (preemptor.priority == candidate.priority and preemptor.created < candidate.created)
    return policy == ANY


def _uses(wl: Workload, frs: set[FlavorResource]) -> bool:
    """classical.WorkloadUsesResources."""
    return any(fr in frs for fr in wl.usage())


def _order(preemptor_cq: str, now: float) -> object:
    """common/ordering.go CandidatesOrdering: evicted first, other ClusterQueues before the
    preemptor's own, lower priority first, most recently reserved first, then UID."""

    def cmp(a: _Candidate, b: _Candidate) -> int:
        if a.wl.evicted != b.wl.evicted:
            return -1 if a.wl.evicted else 1
        a_own, b_own = a.cq == preemptor_cq, b.cq == preemptor_cq
        if a_own != b_own:
            return 1 if a_own else -1
        if a.wl.priority != b.wl.priority:
            return -1 if a.wl.priority < b.wl.priority else 1
        ta = a.wl.quota_reserved_at if a.wl.quota_reserved_at is not None else now
        tb = b.wl.quota_reserved_at if b.wl.quota_reserved_at is not None else now
        if ta != tb:
            return -1 if tb < ta else 1
        return (a.wl.uid > b.wl.uid) - (a.wl.uid < b.wl.uid)

    return cmp_to_key(cmp)


class _Ctx:
    def __init__(self, snap: Snapshot, preemptor: Workload, cq: Node, frs: set[FlavorResource],
                 requests: dict[FlavorResource, int]) -> None:
        self.snap, self.preemptor, self.cq, self.frs, self.requests = snap, preemptor, cq, frs, requests
        spec = cq.spec
        assert spec is not None
        self.policy = spec.preemption

    def borrow_forbidden(self) -> tuple[bool, int | None]:
        """classical.IsBorrowingWithinCohortForbidden."""
        if self.policy.borrow_within_cohort == NEVER:
            return True, None
        return False, self.policy.max_priority_threshold

    def classify(self, wl: Workload, cq_name: str, hierarchical_advantage: bool) -> int:
        """hierarchical_preemption.go classifyPreemptionVariant."""
        if not _uses(wl, self.frs):
            return _NEVER
        own = cq_name == self.cq.name
        policy = self.policy.within_cluster_queue if own else self.policy.reclaim_within_cohort
        if not satisfies_policy(self.preemptor, wl, policy):
            return _NEVER
        if own:
            return _WITHIN_CQ
        if hierarchical_advantage:
            return _HIERARCHICAL_RECLAIM
        forbidden, threshold = self.borrow_forbidden()
        if forbidden:
            return _RECLAIM_WITHOUT_BORROWING
        # isAboveBorrowingThreshold
        if wl.priority >= self.preemptor.priority or (threshold is not None and wl.priority > threshold):
            return _RECLAIM_WITHOUT_BORROWING
        return _RECLAIM_WHILE_BORROWING

    def from_cq(self, node: Node, lca: Node | None, advantage: bool) -> list[_Candidate]:
        """getCandidatesFromCQ."""
        out = []
        for wl in node.workloads.values():
            v = self.classify(wl, node.name, advantage)
            if v != _NEVER:
                out.append(_Candidate(wl, node.name, lca, v))
        return out

    def in_subtree(self, current: Node, subtree_root: Node, skip: Node | None, advantage: bool,
                   result: list[_Candidate]) -> None:
        """collectCandidatesInSubtree."""
        for child in current.child_cohorts:
            if child is skip or child.within_nominal(self.frs):
                continue
            self.in_subtree(child, subtree_root, skip, advantage, result)
        for child_cq in current.child_cqs:
            if child_cq is self.cq:
                continue
            if not child_cq.within_nominal(self.frs):
                result.extend(self.from_cq(child_cq, subtree_root, advantage))

    def hierarchical(self) -> tuple[list[_Candidate], list[_Candidate]]:
        """collectCandidatesForHierarchicalReclaim: (hierarchy candidates, priority candidates)."""
        hierarchy: list[_Candidate] = []
        priority: list[_Candidate] = []
        if self.cq.parent is None or self.policy.reclaim_within_cohort == NEVER:
            return hierarchy, priority
        advantage, remaining = quantities_fit_in_quota(self.cq, self.requests)
        previous: Node | None = None
        for root in self.cq.path_parent_to_root():
            self.in_subtree(root, root, previous, advantage, hierarchy if advantage else priority)
            fits, remaining = quantities_fit_in_quota(root, remaining)
            advantage = advantage or fits
            previous = root
        return hierarchy, priority

    def valid(self, c: _Candidate, borrow: bool) -> bool:
        """candidateIterator.candidateIsValid."""
        if c.cq == self.cq.name:
            return True
        if borrow and c.variant == _RECLAIM_WITHOUT_BORROWING:
            return False
        node = self.snap.cluster_queues[c.cq]
        if node.within_nominal(self.frs):
            return False
        for n in node.path_parent_to_root():
            if n is c.lca:
                break
            if n.within_nominal(self.frs):
                return False
        return True

    def fits(self, allow_borrowing: bool) -> bool:
        """preemption.go workloadFits."""
        for fr, v in self.requests.items():
            if not allow_borrowing and self.cq.borrowing_with(fr, v):
                return False
            if v > cq_available(self.cq, fr):
                return False
        return True

    def under_nominal(self) -> bool:
        """queueUnderNominalInResourcesNeedingPreemption."""
        return all(self.cq.usage.get(fr, 0) < self.cq.nominal(fr) for fr in self.frs)


def get_targets(snap: Snapshot, preemptor: Workload, cq: Node, frs: set[FlavorResource],
                requests: dict[FlavorResource, int], now: float) -> list[Target]:
    """Preemptor.classicalPreemptions: remove candidates in order until the Workload fits, then
    add back (in reverse) those it still fits without. The snapshot is left as it was found."""
    ctx = _Ctx(snap, preemptor, cq, frs, requests)
    key = _order(cq.name, now)
    same = ctx.from_cq(cq, None, False) if ctx.policy.within_cluster_queue != NEVER else []
    hierarchy, priority = ctx.hierarchical()
    same.sort(key=key)
    priority.sort(key=key)
    hierarchy.sort(key=key)
    ordered = ([c for c in hierarchy if c.wl.evicted] + [c for c in priority if c.wl.evicted]
               + [c for c in same if c.wl.evicted] + [c for c in hierarchy if not c.wl.evicted]
               + [c for c in priority if not c.wl.evicted] + [c for c in same if not c.wl.evicted])
    forbidden, _ = ctx.borrow_forbidden()
    if (not hierarchy and not priority) or (forbidden and not ctx.under_nominal()):
        attempts = [True]
    elif forbidden and not hierarchy:
        attempts = [False, True]
    else:
        attempts = [True, False]
    for allow_borrowing in attempts:
        targets: list[_Candidate] = []
        for c in ordered:
            if not ctx.valid(c, allow_borrowing):
                continue
            snap.remove_workload(c.wl)
            targets.append(c)
            if ctx.fits(allow_borrowing):
                targets = _fill_back(ctx, targets, allow_borrowing)
                for t in targets:
                    snap.add_workload(t.wl)
                return [Target(t.wl, t.cq, _REASON[t.variant]) for t in targets]
        for t in targets:
            snap.add_workload(t.wl)
    return []


def _fill_back(ctx: _Ctx, targets: list[_Candidate], allow_borrowing: bool) -> list[_Candidate]:
    """preemption.go fillBackWorkloads, with its swap-with-last removal (the order of the result
    is upstream's)."""
    targets = list(targets)
    for i in range(len(targets) - 2, -1, -1):
        ctx.snap.add_workload(targets[i].wl)
        if ctx.fits(allow_borrowing):
            targets[i] = targets[-1]
            targets.pop()
        else:
            ctx.snap.remove_workload(targets[i].wl)
    return targets


TargetFinder = Callable[[Snapshot, Workload, Node, set[FlavorResource], dict[FlavorResource, int], float], list[Target]]


def simulate_preemption(snap: Snapshot, preemptor: Workload, cq: Node, fr: FlavorResource,
                        quantity: int, now: float, find: TargetFinder | None = None) -> tuple[Possibility, int]:
    """preemption_oracle.go PreemptionOracle.SimulatePreemption: can preemption make room for
    `quantity` of fr, and by whom (own ClusterQueue: Preempt; only others: Reclaim). `find` is
    Preemptor.getTargets' choice: classical (get_targets) or fair sharing's."""
    targets = (find or get_targets)(snap, preemptor, cq, {fr}, {fr: quantity}, now)
    if not targets:
        borrow, _ = lowest_subtree_that_fits(cq, fr, quantity)
        return Possibility.NO_CANDIDATES, borrow
    revert = snap.simulate_removal(t.workload for t in targets)
    borrow, _ = lowest_subtree_that_fits(cq, fr, quantity)
    revert()
    if any(t.cluster_queue == cq.name for t in targets):
        return Possibility.PREEMPT, borrow
    return Possibility.RECLAIM, borrow


def workloads_of(targets: Iterable[Target]) -> list[Workload]:
    return [t.workload for t in targets]
