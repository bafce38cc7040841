"""Kueue's quota tree: ClusterQueues under Cohorts, nominal quota, borrowing and lending limits,
usage per (flavor, resource). Mirrors sigs.k8s.io/kueue v0.17.0 pkg/cache/scheduler
(resource_node.go, clusterqueue_snapshot.go, cohort_snapshot.go, snapshot.go).

The Snapshot is the working copy one scheduling cycle mutates (upstream's schdcache.Snapshot: it
adds the usage of what the cycle admits and simulates the removal of preemption targets); it is
built afresh from the frozen objects for every answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from kubectl_wap.queueing.kueue.admissionchecks import active_cluster_queues
from kubectl_wap.queueing.kueue.objects import (
    ClusterQueue,
    FlavorResource,
    KueueInputError,
    KueueObjects,
    ResourceQuota,
    Workload,
)


@dataclass(eq=False, slots=True)
class Node:
    """A ClusterQueue or a Cohort in the tree (upstream's resourceNode plus its hierarchy links)."""

    name: str
    is_cq: bool
    quotas: dict[FlavorResource, ResourceQuota]
    parent: Node | None = None
    child_cqs: list[Node] = field(default_factory=list)
    child_cohorts: list[Node] = field(default_factory=list)
    subtree_quota: dict[FlavorResource, int] = field(default_factory=dict)
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    weight: float = 1.0  # spec.fairSharing.weight (fair_sharing.go fairWeight)
    # ClusterQueues only:
    spec: ClusterQueue | None = None
    workloads: dict[str, Workload] = field(default_factory=dict)

    def local_quota(self, fr: FlavorResource) -> int:
        """resourceNode.localQuota: what a lending limit keeps out of the parent's pool (all of the
        quota goes to the parent without one)."""
        q = self.quotas.get(fr)
        if q is not None and q.lending_limit is not None:
            return max(0, self.subtree_quota.get(fr, 0) - q.lending_limit)
        return 0

    def local_available(self, fr: FlavorResource) -> int:
        """resource_node.go LocalAvailable."""
        return max(0, self.local_quota(fr) - self.usage.get(fr, 0))

    def nominal(self, fr: FlavorResource) -> int:
        q = self.quotas.get(fr)
        return q.nominal if q else 0

    def path_parent_to_root(self) -> Iterator[Node]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def root(self) -> Node:
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def subtree_cluster_queues(self) -> Iterator[Node]:
        yield from self.child_cqs
        for c in self.child_cohorts:
            yield from c.subtree_cluster_queues()

    def borrowing_with(self, fr: FlavorResource, val: int) -> bool:
        """ClusterQueueSnapshot.BorrowingWith / CohortSnapshot.BorrowingWith: usage+val over the
        node's subtree quota (for a ClusterQueue: its nominal quota)."""
        return self.usage.get(fr, 0) + val > (self.nominal(fr) if self.is_cq else self.subtree_quota.get(fr, 0))

    def borrowing(self, fr: FlavorResource) -> bool:
        return self.borrowing_with(fr, 0)

    def within_nominal(self, frs: Iterable[FlavorResource]) -> bool:
        """resource_node.go IsWithinNominalInResources."""
        return all(self.usage.get(fr, 0) <= self.subtree_quota.get(fr, 0) for fr in frs)


def available(node: Node, fr: FlavorResource) -> int:
    """resource_node.go available: local capacity plus what the parent can give, capped by the
    borrowing limit. Can be negative (a node in debt); ClusterQueueSnapshot.Available clamps."""
    if node.parent is None:
        return node.subtree_quota.get(fr, 0) - node.usage.get(fr, 0)
    parent_available = available(node.parent, fr)
    q = node.quotas.get(fr)
    if q is not None and q.borrowing_limit is not None:
        stored_in_parent = node.subtree_quota.get(fr, 0) - node.local_quota(fr)
        used_in_parent = max(0, node.usage.get(fr, 0) - node.local_quota(fr))
        parent_available = min(stored_in_parent - used_in_parent + q.borrowing_limit, parent_available)
    return node.local_available(fr) + parent_available


def cq_available(cq: Node, fr: FlavorResource) -> int:
    """ClusterQueueSnapshot.Available."""
    return max(0, available(cq, fr))


def potential_available(node: Node, fr: FlavorResource) -> int:
    """resource_node.go potentialAvailable: the most this node could ever use of fr."""
    if node.parent is None:
        return node.subtree_quota.get(fr, 0)
    avail = node.local_quota(fr) + potential_available(node.parent, fr)
    q = node.quotas.get(fr)
    if q is not None and q.borrowing_limit is not None:
        avail = min(node.subtree_quota.get(fr, 0) + q.borrowing_limit, avail)
    return avail


def add_usage(node: Node, fr: FlavorResource, val: int) -> None:
    """resource_node.go addUsage: what the local quota cannot hold goes up to the parent."""
    local = node.local_available(fr)
    node.usage[fr] = node.usage.get(fr, 0) + val
    if node.parent is not None and val > local:
        add_usage(node.parent, fr, val - local)


def remove_usage(node: Node, fr: FlavorResource, val: int) -> None:
    """resource_node.go removeUsage."""
    stored_in_parent = node.usage.get(fr, 0) - node.local_quota(fr)
    node.usage[fr] = node.usage.get(fr, 0) - val
    if stored_in_parent <= 0 or node.parent is None:
        return
    remove_usage(node.parent, fr, min(val, stored_in_parent))


def quantities_fit_in_quota(node: Node, requests: dict[FlavorResource, int]) -> tuple[bool, dict[FlavorResource, int]]:
    """resource_node.go QuantitiesFitInQuota."""
    fits = True
    remaining = {}
    for fr, v in requests.items():
        if node.usage.get(fr, 0) + v > node.subtree_quota.get(fr, 0):
            fits = False
        remaining[fr] = max(0, v - node.local_available(fr))
    return fits, remaining


def node_height(node: Node) -> int:
    """hierarchical_preemption.go getNodeHeight: distance to the furthest leaf."""
    h = min(len(node.child_cqs) + len(node.child_cohorts), 1)
    for c in node.child_cohorts:
        h = max(h, node_height(c) + 1)
    return h


def lowest_subtree_that_fits(cq: Node, fr: FlavorResource, val: int) -> tuple[int, bool]:
    """classical.FindHeightOfLowestSubtreeThatFits: the height of the lowest subtree whose quota
    holds val more of fr (0: the ClusterQueue's own), and whether it is smaller than the tree."""
    if not cq.borrowing_with(fr, val) or cq.parent is None:
        return 0, cq.parent is not None
    remaining = val - cq.local_available(fr)
    for node in cq.path_parent_to_root():
        if not node.borrowing_with(fr, remaining):
            return node_height(node), node.parent is not None
        remaining -= node.local_available(fr)
    return node_height(cq.root()), False


class Snapshot:
    """One cycle's view of the quota tree (schdcache.Snapshot)."""

    def __init__(self, objs: KueueObjects) -> None:
        self.objects = objs
        self.cluster_queues: dict[str, Node] = {}
        self.cohorts: dict[str, Node] = {}
        for c in objs.cohorts.values():
            self.cohorts[c.name] = Node(c.name, False, dict(c.quotas), weight=c.fair_weight)
        for c in objs.cohorts.values():
            if c.parent:
                parent = self._cohort(c.parent)
                node = self.cohorts[c.name]
                node.parent = parent
                parent.child_cohorts.append(node)
        for cq in objs.cluster_queues.values():
            node = Node(cq.name, True, dict(cq.quotas), spec=cq, weight=cq.fair_weight)
            self.cluster_queues[cq.name] = node
            if cq.cohort:
                parent = self._cohort(cq.cohort)
                node.parent = parent
                parent.child_cqs.append(node)
        for c in self.cohorts.values():
            seen = set()
            n: Node | None = c
            while n is not None:
                if n.name in seen:
                    raise KueueInputError(f"Cohort {c.name}: its parents form a cycle")
                seen.add(n.name)
                n = n.parent
        for root in {id(n.root()): n.root() for n in [*self.cohorts.values(), *self.cluster_queues.values()]}.values():
            _update_subtree_quota(root)
        for wl in objs.workloads:
            if wl.admission is not None and wl.active and not wl.finished:
                cq = self.cluster_queues.get(wl.admission.cluster_queue)
                if cq is not None:
                    self.add_workload(wl)
        # Cache.Snapshot leaves inactive ClusterQueues out (a stopped one, one with a missing
        # flavor or a missing or inactive admission check): their Workloads are nobody's
        # preemption candidates. Their quota and usage stay in the Cohorts' totals, which the
        # snapshot clones from the cache.
        active = active_cluster_queues(objs)
        for node in self.cluster_queues.values():
            if node.name not in active and node.parent is not None:
                node.parent.child_cqs.remove(node)

    def _cohort(self, name: str) -> Node:
        if name not in self.cohorts:  # a cohort named by a ClusterQueue alone: no quota of its own
            self.cohorts[name] = Node(name, False, {})
        return self.cohorts[name]

    def add_workload(self, wl: Workload) -> None:
        assert wl.admission is not None
        cq = self.cluster_queues[wl.admission.cluster_queue]
        cq.workloads[wl.key] = wl
        for fr, v in wl.usage().items():
            add_usage(cq, fr, v)

    def remove_workload(self, wl: Workload) -> None:
        assert wl.admission is not None
        cq = self.cluster_queues[wl.admission.cluster_queue]
        del cq.workloads[wl.key]
        for fr, v in wl.usage().items():
            remove_usage(cq, fr, v)

    def simulate_removal(self, wls: Iterable[Workload]) -> Callable[[], None]:
        """Snapshot.SimulateWorkloadRemoval: remove now, the returned function adds them back."""
        removed = [w for w in wls]
        for w in removed:
            self.remove_workload(w)

        def revert() -> None:
            for w in removed:
                self.add_workload(w)

        return revert


def _update_subtree_quota(node: Node) -> None:
    """resource_node.go updateCohortResourceNode / updateClusterQueueResourceNode: a ClusterQueue's
    subtree quota is its nominal quota; a Cohort's is its own plus what each child lends it."""
    node.subtree_quota = {fr: q.nominal for fr, q in node.quotas.items()}
    for child in [*node.child_cohorts, *node.child_cqs]:
        _update_subtree_quota(child)
        for fr, q in child.subtree_quota.items():
            node.subtree_quota[fr] = node.subtree_quota.get(fr, 0) + q - child.local_quota(fr)
