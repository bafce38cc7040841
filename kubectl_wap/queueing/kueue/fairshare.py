"""Kueue's fair sharing: the dominant resource share (DRS) of a ClusterQueue or Cohort, and the
order in which a cycle's entries are tried when fair sharing is on. Mirrors sigs.k8s.io/kueue
v0.17.0 pkg/cache/scheduler/fair_sharing.go (DRS, dominantResourceShare, calculateLendable,
CompareDRS) and pkg/scheduler/fair_sharing_iterator.go (fairSharingIterator, runTournament,
entryComparer) with the default feature gates (FairSharingPrioritizeNonBorrowing and
PrioritySortingWithinCohort on).

A node's DRS: for each resource it borrows (usage over its subtree quota, summed over flavors),
the amount borrowed per mille of what its parent could lend of that resource (potentialAvailable
of the parent, summed over flavors), the largest of these, divided by the node's fair sharing
weight. Weight 0 and borrowing: above every weighted share (CompareDRS puts it last). A root node,
or one that borrows nothing, has DRS 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from kubectl_wap.queueing.kueue.objects import FlavorResource, Workload
from kubectl_wap.queueing.kueue.quota import Node, add_usage, potential_available, remove_usage

DEFAULT_WEIGHT = 1.0  # fair_sharing.go defaultWeight: spec.fairSharing.weight absent


@dataclass(frozen=True, slots=True)
class DRS:
    """fair_sharing.go DRS: a node's dominant resource share."""

    weight: float
    ratio: float  # unweightedRatio: borrowed per mille of the lendable, of the dominant resource
    dominant: str  # the resource that gives the ratio ("" when none)
    borrowing: bool  # usage over quota on some flavor/resource
    borrowed: tuple[FlavorResource, ...] = ()

    def is_zero(self) -> bool:
        return self.ratio == 0

    def zero_weight_borrows(self) -> bool:
        """DRS.zeroWeightBorrows."""
        return self.weight == 0 and not self.is_zero()

    def share(self) -> float:
        """DRS.PreciseWeightedShare: the ratio over the weight; infinite at weight 0."""
        if self.is_zero():
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.ratio / self.weight

    def borrowing_on(self, requested: Mapping[FlavorResource, int]) -> bool:
        """DRS.IsBorrowingOn."""
        return any(requested.get(fr, 0) > 0 for fr in self.borrowed)


def negative_drs() -> DRS:
    """fair_sharing.go NegativeDRS: below every real share, a starting point for maxima."""
    return DRS(DEFAULT_WEIGHT, -1.0, "", False)


def compare_drs(a: DRS, b: DRS) -> int:
    """fair_sharing.go CompareDRS: -1 when a is preferred for admission (fairer to admit to),
    1 when a is preferred for preemption. Zero-weight borrowers are above everything else and
    compare among themselves by their unweighted ratio."""
    az, bz = a.zero_weight_borrows(), b.zero_weight_borrows()
    if az and bz:
        x, y = a.ratio, b.ratio
    elif az:
        return 1
    elif bz:
        return -1
    else:
        x, y = a.share(), b.share()
    return (x > y) - (x < y)


def lendable(node: Node) -> dict[str, int]:
    """fair_sharing.go calculateLendable: per resource name, what `node` could ever hand out, over
    every flavor/resource its tree knows (the root's subtree quota lists them all, zeros too)."""
    out: dict[str, int] = {}
    for fr in node.root().subtree_quota:
        out[fr[1]] = out.get(fr[1], 0) + potential_available(node, fr)
    return out


def dominant_resource_share(node: Node) -> DRS:
    """fair_sharing.go dominantResourceShare (no extra workload request: every caller in the
    scheduler adds the workload's usage to the snapshot first)."""
    if node.parent is None:
        return DRS(node.weight, 0.0, "", False)
    borrowed_by_res: dict[str, int] = {}
    borrowed: list[FlavorResource] = []
    for fr, quota in node.subtree_quota.items():
        amount = node.usage.get(fr, 0) - quota
        if amount > 0:
            borrowed_by_res[fr[1]] = borrowed_by_res.get(fr[1], 0) + amount
            borrowed.append(fr)
    if not borrowed_by_res:
        return DRS(node.weight, 0.0, "", False)
    ratio, dominant = 0.0, ""
    can_lend = lendable(node.parent)
    for res, b in borrowed_by_res.items():
        lr = can_lend.get(res, 0)
        if lr > 0:
            r = b * 1000.0 / lr
            # alphabetical among equal ratios, as upstream does for a deterministic name
            if r > ratio or (r == ratio and res < dominant):
                ratio, dominant = r, res
    return DRS(node.weight, ratio, dominant, True, tuple(sorted(borrowed)))


# ---- the order of a cycle's entries (fair_sharing_iterator.go) -----------------------------------

E = TypeVar("E")


@dataclass(frozen=True, slots=True)
class Standing:
    """Why an entry won its tournament: its ClusterQueue's share after admission, and the share of
    the best rival at the root level (None: no rival). A record for explain/report."""

    share: float
    rival: str | None = None
    rival_share: float | None = None


class FairSharingIterator(Generic[E]):
    """fairSharingIterator: pop() returns, among the ClusterQueues that still have an entry, the
    winner of a tournament through its cohort tree. The DRS values are computed at each pop from
    the snapshot as the cycle has changed it so far (what earlier entries admitted or reserved)."""

    def __init__(self, cqs: Mapping[str, Node], entries: Mapping[str, E], wl_of: Callable[[E], Workload],
                 usage_of: Callable[[E], Mapping[FlavorResource, int]]) -> None:
        self.cqs = cqs
        self.pending: dict[str, E] = dict(entries)
        self.wl_of, self.usage_of = wl_of, usage_of
        self.standing: dict[str, Standing] = {}  # by Workload key, set when the entry is popped

    def __iter__(self) -> Iterator[E]:
        while self.pending:
            yield self.pop()

    def pop(self) -> E:
        # getCq: upstream takes any ClusterQueue (map order); trees are independent, so the first
        # by name gives the same result.
        name = min(self.pending)
        cq = self.cqs[name]
        if cq.parent is None:
            e = self.pending.pop(name)
            self.standing[self.wl_of(e).key] = Standing(0.0)
            return e
        root = cq.root()
        drs = self._compute_drs(root)
        winner, rival = self._tournament(root, drs)
        assert winner is not None
        e = self.pending.pop(winner)
        key = self.wl_of(e).key
        mine = drs[(root.name, key)]
        rs = None if rival is None else drs[(root.name, self.wl_of(self.pending[rival]).key)]
        self.standing[key] = Standing(mine.share(), rival, None if rs is None else rs.share())
        return e

    def _compute_drs(self, root: Node) -> dict[tuple[str, str], DRS]:
        """entryComparer.computeDRS: for each entry of the tree, its ClusterQueue's DRS with the
        entry admitted (keyed by the parent), and each ancestor's (keyed by that one's parent)."""
        out: dict[tuple[str, str], DRS] = {}
        for cq in root.subtree_cluster_queues():
            e = self.pending.get(cq.name)
            if e is None:
                continue
            usage = self.usage_of(e)
            for fr, q in usage.items():
                add_usage(cq, fr, q)
            key = self.wl_of(e).key
            share = dominant_resource_share(cq)
            for ancestor in cq.path_parent_to_root():
                out[(ancestor.name, key)] = share
                share = dominant_resource_share(ancestor)
            for fr, q in usage.items():
                remove_usage(cq, fr, q)
        return out

    def _less(self, a: str, b: str, parent: str, drs: Mapping[tuple[str, str], DRS]) -> bool:
        """entryComparer.less: not borrowing on its requested flavors first, then lower DRS, then
        higher priority, then older."""
        ea, eb = self.pending[a], self.pending[b]
        wa, wb = self.wl_of(ea), self.wl_of(eb)
        da, db = drs[(parent, wa.key)], drs[(parent, wb.key)]
        ba, bb = da.borrowing_on(self.usage_of(ea)), db.borrowing_on(self.usage_of(eb))
        if ba != bb:
            return not ba
        c = compare_drs(da, db)
        if c != 0:
            return c == -1
        if wa.priority != wb.priority:
            return wa.priority > wb.priority
        return wa.created < wb.created

    def _tournament(self, cohort: Node, drs: Mapping[tuple[str, str], DRS]) -> tuple[str | None, str | None]:
        """runTournament: each child cohort nominates its winner, each child ClusterQueue its
        entry; the least (by _less) wins. Also returns the runner-up at this level, for the record."""
        candidates: list[str] = []
        for child in cohort.child_cohorts:
            w, _ = self._tournament(child, drs)
            if w is not None:
                candidates.append(w)
        candidates += [c.name for c in cohort.child_cqs if c.name in self.pending]
        if not candidates:
            return None, None
        best = candidates[0]
        for c in candidates[1:]:
            if self._less(c, best, cohort.name, drs):
                best = c
        rivals = [c for c in candidates if c != best]
        runner = None
        for c in rivals:
            if runner is None or self._less(c, runner, cohort.name, drs):
                runner = c
        return best, runner
