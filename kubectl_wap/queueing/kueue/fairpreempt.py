"""Kueue's preemption when fair sharing is on: whom Kueue evicts so a Workload fits, choosing
ClusterQueues by dominant resource share rather than by the classical reclaim rules. Mirrors
sigs.k8s.io/kueue v0.17.0 pkg/scheduler/preemption/preemption.go (fairPreemptions,
runFirstFsStrategy, runSecondFsStrategy, findCandidates, cqIsBorrowing,
workloadFitsForFairSharing, queueWithinNominalInResourcesNeedingPreemption) and
pkg/scheduler/preemption/fairsharing/ (ordering.go TargetClusterQueueOrdering, target.go,
least_common_ancestor.go, strategy.go), with the default feature gates
(FairSharingPreemptWithinNominal on).

The strategies (Configuration fairSharing.preemptionStrategies; KEP-1714 rules S2-a, S2-b):
- LessThanOrEqualToFinalShare: evict a Workload only if the preemptor's share with the new
  Workload is at most the target's share without the evicted one;
- LessThanInitialShare: only if the preemptor's share with the new Workload is below the
  target's share now.
Shares are those of the two "almost least common ancestors": the children of the lowest cohort the
preemptor's and the target's ClusterQueues share.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_wap.errors import UserError
from kubectl_wap.queueing.kueue.fairshare import DRS, compare_drs, dominant_resource_share, negative_drs
from kubectl_wap.queueing.kueue.objects import (
    DEFAULT_FAIR_STRATEGIES,
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
    NEVER,
    FlavorResource,
    Workload,
)
from kubectl_wap.queueing.kueue.preemption import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAMATION,
    Target,
    _Candidate,
    _Ctx,
    _fill_back,
    _order,
    _uses,
    satisfies_policy,
)
from kubectl_wap.queueing.kueue.quota import Node, Snapshot, add_usage, remove_usage

IN_COHORT_FAIR_SHARING = "InCohortFairSharing"


class KueuePanics(UserError):
    """Kueue v0.17.0's scheduler itself crashes on this input: said in one line instead of an
    answer (kueue-manager restarts and meets the same cycle again)."""


@dataclass(frozen=True, slots=True)
class FairTarget(Target):
    """A Target evicted under a fair sharing strategy, with the shares that allowed it (a record
    for the report: the preemptor's share with its Workload, the target's before the eviction)."""

    preemptor_share: float = 0.0
    target_share: float = 0.0
    preemptor_node: str = ""
    target_node: str = ""


def allowed(strategy: str, preemptor_new: DRS, target_old: DRS, target_new: DRS) -> bool:
    """fairsharing/strategy.go LessThanOrEqualToFinalShare / LessThanInitialShare."""
    if strategy == LESS_THAN_OR_EQUAL_TO_FINAL_SHARE:
        return compare_drs(preemptor_new, target_new) <= 0
    return compare_drs(preemptor_new, target_old) < 0


def _add(node: Node, usage: dict[FlavorResource, int]) -> None:
    for fr, q in usage.items():
        add_usage(node, fr, q)


def _remove(node: Node, usage: dict[FlavorResource, int]) -> None:
    for fr, q in usage.items():
        remove_usage(node, fr, q)


class _Ordering:
    """fairsharing/ordering.go TargetClusterQueueOrdering: from the root, the child with the
    highest DRS that still has candidates, down to a ClusterQueue; nodes that stop borrowing (or
    run out of candidates) are pruned; the iteration ends when the root is pruned."""

    def __init__(self, snap: Snapshot, preemptor_cq: Node, candidates: list[_Candidate], key: object) -> None:
        self.snap, self.cq, self.key = snap, preemptor_cq, key
        self.ancestors = {id(n) for n in preemptor_cq.path_parent_to_root()}
        self.queues: dict[str, list[_Candidate]] = {}
        for c in candidates:
            self.queues.setdefault(c.cq, []).append(c)
        self.pruned_cqs: set[str] = set()
        self.pruned_cohorts: set[int] = set()

    def has(self, cq: Node) -> bool:
        return bool(self.queues.get(cq.name))

    def pop(self, cq: Node) -> _Candidate:
        return self.queues[cq.name].pop(0)

    def drop(self, cq: Node) -> None:
        self.pruned_cqs.add(cq.name)

    def next_cq(self) -> Node | None:
        """Iter(): the next target ClusterQueue; None when the iteration is over."""
        if self.cq.parent is None:
            # A ClusterQueue without a cohort: its own candidates only. Once they are used up
            # without making room, upstream goes on to the root of the preemptor's cohort, which
            # is nil: a nil pointer dereference in Iter() that crashes the scheduler.
            if self.has(self.cq):
                return self.cq
            raise KueuePanics(
                f"Kueue v0.17.0's scheduler panics on this cycle: ClusterQueue {self.cq.name} has no cohort and its own "
                "Workloads cannot make room for fair sharing preemption (nil cohort in "
                "fairsharing.TargetClusterQueueOrdering.Iter); kueue-manager restarts and meets it again")
        root = self.cq.root()
        while id(root) not in self.pruned_cohorts:
            t = self._next(root)
            if t is not None:
                return t
        return None

    def _next(self, cohort: Node) -> Node | None:
        """nextTarget."""
        best_cq: Node | None = None
        best_cq_drs = negative_drs()
        for cq in cohort.child_cqs:
            if cq.name in self.pruned_cqs:
                continue
            drs = dominant_resource_share(cq)
            if (not drs.borrowing and cq is not self.cq) or not self.has(cq):
                self.pruned_cqs.add(cq.name)
                continue
            c = compare_drs(drs, best_cq_drs)
            if c == 0 and best_cq is not None:
                # equal shares: the ClusterQueue whose first candidate goes first (CandidatesOrdering)
                if self.key(self.queues[cq.name][0]) < self.key(self.queues[best_cq.name][0]):  # type: ignore[operator]
                    best_cq = cq
            elif c == 1:
                best_cq, best_cq_drs = cq, drs
        best_cohort: Node | None = None
        best_cohort_drs = negative_drs()
        for child in cohort.child_cohorts:
            if id(child) in self.pruned_cohorts:
                continue
            drs = dominant_resource_share(child)
            if not drs.borrowing and id(child) not in self.ancestors:
                self.pruned_cohorts.add(id(child))
            elif compare_drs(drs, best_cohort_drs) >= 0:
                # UPSTREAM-DIFF: equal shares go to the last child in upstream's set order (Go's
                # unsorted set); ours is the order the cohorts were read in.
                best_cohort, best_cohort_drs = child, drs
        if best_cohort is None and best_cq is None:
            self.pruned_cohorts.add(id(cohort))
            return None
        if best_cohort is not None and compare_drs(best_cohort_drs, best_cq_drs) >= 0:
            return self._next(best_cohort)
        return best_cq

    def almost_lcas(self, target: Node) -> tuple[Node, Node]:
        """least_common_ancestor.go getAlmostLCAs: the children of the lowest shared cohort on the
        preemptor's path and on the target's."""
        lca = next(a for a in target.path_parent_to_root() if id(a) in self.ancestors)
        return _below(self.cq, lca), _below(target, lca)


def _below(cq: Node, lca: Node) -> Node:
    """getAlmostLCA."""
    node = cq
    for a in cq.path_parent_to_root():
        if a is lca:
            return node
        node = a
    raise AssertionError("no least common ancestor")


def find_candidates(ctx: _Ctx) -> list[_Candidate]:
    """preemption.go findCandidates: the preemptor's own Workloads its withinClusterQueue policy
    allows, and those of every other ClusterQueue of the tree that borrows on a flavor/resource
    needing preemption, that reclaimWithinCohort allows; all using such a flavor/resource."""
    out: list[_Candidate] = []
    policy = ctx.policy
    if policy.within_cluster_queue != NEVER:
        out += [_Candidate(w, ctx.cq.name, None, 0) for w in ctx.cq.workloads.values()
                if satisfies_policy(ctx.preemptor, w, policy.within_cluster_queue) and _uses(w, ctx.frs)]
    if ctx.cq.parent is not None and policy.reclaim_within_cohort != NEVER:
        for other in ctx.cq.root().subtree_cluster_queues():
            if other is ctx.cq or not any(other.borrowing(fr) for fr in ctx.frs):  # cqIsBorrowing
                continue
            out += [_Candidate(w, other.name, None, 0) for w in other.workloads.values()
                    if satisfies_policy(ctx.preemptor, w, policy.reclaim_within_cohort) and _uses(w, ctx.frs)]
    return out


def _within_nominal(ctx: _Ctx) -> bool:
    """queueWithinNominalInResourcesNeedingPreemption, under the FairSharingPreemptWithinNominal
    gate (beta, on in v0.17.0): a preemptor within its nominal quota with the new Workload takes
    back what it is owed from borrowers regardless of shares."""
    return not any(ctx.cq.borrowing(fr) for fr in ctx.frs)


def _fits_for_fair_sharing(ctx: _Ctx) -> bool:
    """workloadFitsForFairSharing: fits, with the preemptor's own simulated usage taken out."""
    _remove(ctx.cq, ctx.requests)
    try:
        return ctx.fits(True)
    finally:
        _add(ctx.cq, ctx.requests)


def _target(ctx: _Ctx, order: _Ordering, c: _Candidate, reason: str, pre: DRS | None = None,
             old: DRS | None = None) -> Target:
    ctx.snap.remove_workload(c.wl)
    if pre is None or old is None:
        return Target(c.wl, c.cq, reason)
    pn, tn = order.almost_lcas(ctx.snap.cluster_queues[c.cq])
    return FairTarget(c.wl, c.cq, reason, pre.share(), old.share(), pn.name, tn.name)


def _first_strategy(ctx: _Ctx, candidates: list[_Candidate], strategy: str, key: object
                    ) -> tuple[bool, list[Target], list[_Candidate]]:
    """runFirstFsStrategy."""
    order = _Ordering(ctx.snap, ctx.cq, candidates, key)
    targets: list[Target] = []
    retry: list[_Candidate] = []
    within_nominal = _within_nominal(ctx)
    while (cq := order.next_cq()) is not None:
        if cq is ctx.cq:
            targets.append(_target(ctx, order, order.pop(cq), IN_CLUSTER_QUEUE))
            if _fits_for_fair_sharing(ctx):
                return True, targets, []
            continue
        if within_nominal:
            targets.append(_target(ctx, order, order.pop(cq), IN_COHORT_RECLAMATION))
            if _fits_for_fair_sharing(ctx):
                return True, targets, []
            continue
        pn, tn = order.almost_lcas(cq)
        pre, old = dominant_resource_share(pn), dominant_resource_share(tn)
        while order.has(cq):
            c = order.pop(cq)
            # ComputeTargetShareAfterRemoval
            usage = c.wl.usage()
            _remove(cq, usage)
            new = dominant_resource_share(order.almost_lcas(cq)[1])
            _add(cq, usage)
            if allowed(strategy, pre, old, new):
                targets.append(_target(ctx, order, c, IN_COHORT_FAIR_SHARING, pre, old))
                if _fits_for_fair_sharing(ctx):
                    return True, targets, []
                break  # the shares changed: the next ClusterQueue may be another one
            retry.append(c)
    return False, targets, retry


def _second_strategy(ctx: _Ctx, retry: list[_Candidate], targets: list[Target], key: object
                     ) -> tuple[bool, list[Target]]:
    """runSecondFsStrategy (rule S2-b, LessThanInitialShare): at most one eviction per
    ClusterQueue among those the first strategy passed over."""
    order = _Ordering(ctx.snap, ctx.cq, retry, key)
    while (cq := order.next_cq()) is not None:
        pn, tn = order.almost_lcas(cq)
        pre, old = dominant_resource_share(pn), dominant_resource_share(tn)
        if allowed(LESS_THAN_INITIAL_SHARE, pre, old, old):
            targets.append(_target(ctx, order, order.pop(cq), IN_COHORT_FAIR_SHARING, pre, old))
            if _fits_for_fair_sharing(ctx):
                return True, targets
        order.drop(cq)
    return False, targets


def fair_targets(snap: Snapshot, preemptor: Workload, cq: Node, frs: set[FlavorResource],
                 requests: dict[FlavorResource, int], now: float, strategies: tuple[str, ...] = DEFAULT_FAIR_STRATEGIES
                 ) -> list[Target]:
    """Preemptor.fairPreemptions. The snapshot is left as it was found."""
    ctx = _Ctx(snap, preemptor, cq, frs, requests)
    candidates = find_candidates(ctx)
    if not candidates:
        return []
    key = _order(cq.name, now)
    candidates.sort(key=key)  # type: ignore[arg-type]
    # DRS values include the incoming Workload.
    _add(cq, requests)
    fits, targets, retry = _first_strategy(ctx, candidates, strategies[0], key)
    if not fits and len(strategies) > 1:
        fits, targets = _second_strategy(ctx, retry, targets, key)
    _remove(cq, requests)
    if not fits:
        for t in targets:
            snap.add_workload(t.workload)
        return []
    by_key = {t.workload.key: t for t in targets}
    kept = _fill_back(ctx, [_Candidate(t.workload, t.cluster_queue, None, 0) for t in targets], True)
    for c in kept:
        snap.add_workload(c.wl)
    return [by_key[c.wl.key] for c in kept]
