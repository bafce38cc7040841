"""The nominated pods a pod is filtered with: upstream's `addGENominatedPods` inside
`RunFilterPluginsWithNominatedPods` (pkg/scheduler/framework/runtime/framework.go), kept as sums.

For a pod of priority P on node N, the nominated pods that count are those nominated to N with
priority >= P, not the pod itself, and not already placed in this simulation. Filter then runs
with their requests, pod count and host ports added to the node (and, for cross-node plugins,
AddPod on a copy of the cycle state).

The simulator and the preemption dry runs filter thousands of pods against the same nominations
(a gang of 1,024 pods nominated over hundreds of nodes), so per priority this module keeps, for
every node holding nominations, the nominated pods that count and their summed requests, and
checks the resources of all those nodes at once (`resource_failures`). The sums depend only on
the nominations, the resource columns and which nominated pods are placed: pods placed or removed
elsewhere do not invalidate them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..model import DEFAULT_SCHEDULER, Pod
from .state import ClusterState


def nominator_pods(pods: Iterable[Pod]) -> list[Pod]:
    """The nominations kube-scheduler's queue holds (its nominator): every pending pod with a
    nominatedNodeName that is kube-scheduler's to schedule, gated ones included (the queue records
    a gated pod's nomination too: backend/queue/scheduling_queue.go, "addNominatedPod is called here
    unconditionally ... even if gated"). Another scheduler's pod never reaches this queue
    (eventhandlers.go: pending pods are taken only when responsibleForPod), so its nomination
    reserves nothing, as the real v1.37.2 shows (tests/oracle/cases/gen2-1-126.json)."""
    return [p for p in pods if p.nominated_node_name and not p.scheduled and p.scheduler_name == DEFAULT_SCHEDULER]


@dataclass(slots=True, frozen=True)
class NominatedSum:
    """The nominated pods one node adds for a priority, and what they add up to."""

    pods: list[Pod]
    uids: frozenset[str]
    extra: np.ndarray  # summed requests over the cluster's resource columns
    ports: list


@dataclass(slots=True, frozen=True)
class _Batch:
    key: tuple  # (nominations version, resource columns)
    placed: frozenset[str]  # the nominated pods that were placed in the state
    nodes: np.ndarray  # node indexes with at least one nominated pod that counts
    sums: dict[int, NominatedSum]
    extra: np.ndarray  # [len(nodes), columns]: the same sums as rows
    counts: np.ndarray  # [len(nodes)]: how many pods each adds


class NominatedIndex:
    """The per-priority sums over `nominated` (node index -> pods nominated there). Whoever edits
    `nominated` calls `changed()`."""

    def __init__(self, state: ClusterState, nominated: dict[int, list[Pod]]):
        self.state = state
        self.nominated = nominated
        self._version = 0
        self._batches: dict[int, _Batch] = {}
        self._where: dict[str, int] = {}  # nominated pod uid -> its node (rebuilt on change)
        self._where_version = -1
        self._placed_at: tuple[int, frozenset[str]] = (-1, frozenset())  # (state.version, placed nominated uids)

    def changed(self) -> None:
        self._version += 1

    def _nominated_where(self) -> dict[str, int]:
        """Nominated pod uid -> its node, rebuilt after each change."""
        if self._where_version != self._version:
            self._where = {p.uid: idx for idx, lst in self.nominated.items() for p in lst}
            self._where_version = self._version
        return self._where

    def node_of(self, uid: str) -> int | None:
        """The node the pod is nominated to, if any."""
        return self._nominated_where().get(uid)

    def _placed(self) -> frozenset[str]:
        """The nominated pods already placed in the state (uids), recomputed per state version."""
        v = self.state.version
        if self._placed_at[0] != v:
            where = self.state.where
            self._placed_at = (v, frozenset(u for u in self._nominated_where() if u in where))
        return self._placed_at[1]

    def batch(self, prio: int) -> _Batch:
        placed = self._placed()
        key = (self._version, len(self.state.resources))
        b = self._batches.get(prio)
        if b is not None and b.key == key and b.placed == placed:
            return b
        if b is not None and b.key == key:
            # Only the nodes of nominated pods placed or unplaced since are recomputed (a gang
            # placing its own nominated pods one by one).
            sums = dict(b.sums)
            todo = {self._where[u] for u in b.placed ^ placed}
        else:
            sums = {}
            todo = set(self.nominated)
        has = self.state.has
        for idx in todo:
            noms = [p for p in self.nominated.get(idx, ()) if (p.priority or 0) >= prio and not has(p)]
            if noms:
                sums[idx] = self.sum(noms)
            else:
                sums.pop(idx, None)
        cols = len(self.state.resources)  # after sum(), which may add columns
        if any(len(x.extra) != cols for x in sums.values()):
            # A resource column appeared: every kept sum is one column short. Start over.
            self._batches.pop(prio, None)
            self._version += 1
            return self.batch(prio)
        nodes = np.fromiter(sums, dtype=np.intp, count=len(sums))
        extra = np.stack([x.extra for x in sums.values()]) if sums else np.zeros((0, cols), dtype=np.int64)
        counts = np.fromiter((len(x.pods) for x in sums.values()), dtype=np.int64, count=len(sums))
        b = self._batches[prio] = _Batch((self._version, cols), placed, nodes, sums, extra, counts)
        return b

    def on_node(self, pod: Pod, idx: int) -> NominatedSum | None:
        """The nominated pods `pod` is filtered with on node idx; None when there are none."""
        if idx not in self.nominated:
            return None
        s = self.batch(pod.priority or 0).sums.get(idx)
        if s is not None and pod.uid in s.uids:  # a pod never counts against itself
            s = self.sum([p for p in s.pods if p.uid != pod.uid])
        return s if s is not None and s.pods else None

    def sum(self, noms: list[Pod]) -> NominatedSum:
        # Sum the requests per template (pods of one template share their requests mapping):
        # a gang nominated to a node is one vector times its count.
        per: dict[int, list] = {}
        ports: list = []
        for p in noms:
            e = per.get(id(p.requests))
            if e is None:
                per[id(p.requests)] = [p, 1]
            else:
                e[1] += 1
            if p.host_ports:
                ports.extend(p.host_ports)
        vectors = [(self.state.request_vector(p), k) for p, k in per.values()]  # may add resource columns
        extra = np.zeros(len(self.state.resources), dtype=np.int64)
        for (cols, amts), k in vectors:
            extra[cols] += amts * k  # a pod names each resource once: no repeated index
        return NominatedSum(noms, frozenset(p.uid for p in noms), extra, ports)

    def resource_failures(self, pod: Pod, mask: np.ndarray) -> np.ndarray:
        """Of the nodes still feasible in `mask` that hold nominated pods counting for `pod`, those
        where NodeResourcesFit fails once the nominated pods are added (pod count and every
        requested resource: `resource_fit_node` with extras, all nodes at once). The node the
        pod itself is nominated to is left to the caller (its own nomination must not count)."""
        st = self.state
        cols, amts = st.request_vector(pod)  # first: it may add a resource column
        b = self.batch(pod.priority or 0)
        if not len(b.nodes):
            return b.nodes
        sel = mask[b.nodes]
        own = self.node_of(pod.uid)
        if own is not None:
            sel &= b.nodes != own
        nodes = b.nodes[sel]
        if not len(nodes):
            return nodes
        ok = st.pod_count[nodes] + b.counts[sel] + 1 <= st.alloc_pods[nodes]
        if len(cols):
            pos = amts > 0
            if pos.any():
                c, a = cols[pos], amts[pos]
                free = st.alloc[np.ix_(nodes, c)] - st.requested[np.ix_(nodes, c)] - b.extra[sel][:, c]
                ok &= (free >= a).all(axis=1)
        return nodes[~ok]
