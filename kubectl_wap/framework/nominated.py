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
Which nominated pods are placed is followed through the state's undo log, and a batch recomputes
only the rows of the nodes whose nominated pods were placed or unplaced since it was built: a gang
of 1,024 pods placing its own nominated pods one by one used to rescan every nomination and
restack every row for each pod (0.7 s of `simulate` at L; tests/test_nominated_index.py holds the
incremental batches equal to fresh ones).
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
    seen: int  # how much of NominatedIndex._journal (placed / unplaced nominated pods) it reflects
    sums: dict[int, NominatedSum]
    # One row per node that held counting nominated pods at some point since the last full
    # build; `active` says which still do (the others are left in place, not compacted, so that
    # a gang placing its nominated pods one by one changes one row per pod, not the whole array).
    rows: dict[int, int]  # node index -> row
    nodes: np.ndarray  # [rows]: node index of each row
    extra: np.ndarray  # [rows, columns]: the summed requests
    counts: np.ndarray  # [rows]: how many pods each adds
    active: np.ndarray  # [rows]: the node still has nominated pods that count (it is in `sums`)


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
        # The nominated pods placed in the state, followed through the state's undo log: the
        # uid of every nominated pod placed or unplaced since, in order (`_journal`), and where
        # the log, version and epoch were when last read (`_seen`: state version, log length,
        # epoch, nominations version). A gang places its own nominated pods one by one: this
        # keeps each step O(pods changed), not O(nominated pods).
        self._placed: set[str] = set()
        self._journal: list[str] = []
        self._seen: tuple[int, int, int, int] = (-1, -1, -1, -1)

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

    def placed(self) -> frozenset[str]:
        """The nominated pods already placed in the state (uids)."""
        self._sync_placed()
        return frozenset(self._placed)

    def _sync_placed(self) -> None:
        """Bring `_placed` up to date, journaling every uid whose membership flips. When the only
        changes since the last look are single-pod additions and removals appended to the undo
        log (no rollback: every version step is one new log record; no bulk change: the epoch
        did not move), those records are the changes; otherwise recompute from every nomination."""
        st = self.state
        log = st._log
        v, n, ep = st.version, len(log), st.epoch
        sv, sn, sep, snom = self._seen
        if v == sv and snom == self._version:
            return
        where = self._nominated_where()
        placed, journal = self._placed, self._journal
        if snom == self._version and ep == sep and 0 <= n - sn == v - sv:
            for added, pod, _ in log[sn:]:
                uid = pod.uid
                if uid in where:
                    if added:
                        placed.add(uid)
                    else:
                        placed.discard(uid)
                    journal.append(uid)
        else:
            on = st.where
            now = {u for u in where if u in on}
            journal.extend(now ^ placed)
            self._placed = now
        self._seen = (v, n, ep, self._version)

    def batch(self, prio: int) -> _Batch:
        self._sync_placed()
        key = (self._version, len(self.state.resources))
        b = self._batches.get(prio)
        seen = len(self._journal)
        if b is not None and b.key == key and b.seen == seen:
            return b
        if b is not None and b.key == key:
            # Only the nodes of nominated pods placed or unplaced since are recomputed.
            return self._update(prio, b, {self._where[u] for u in self._journal[b.seen:]}, seen)
        sums: dict[int, NominatedSum] = {}
        for idx in set(self.nominated):
            noms = self._counting(idx, prio)
            if noms:
                sums[idx] = self.sum(noms)
        cols = len(self.state.resources)  # after sum(), which may add columns
        if any(len(x.extra) != cols for x in sums.values()):
            # A resource column appeared: every kept sum is one column short. Start over.
            self._batches.pop(prio, None)
            self._version += 1
            return self.batch(prio)
        nodes = np.fromiter(sums, dtype=np.intp, count=len(sums))
        extra = np.stack([x.extra for x in sums.values()]) if sums else np.zeros((0, cols), dtype=np.int64)
        counts = np.fromiter((len(x.pods) for x in sums.values()), dtype=np.int64, count=len(sums))
        rows = {idx: r for r, idx in enumerate(sums)}
        b = self._batches[prio] = _Batch((self._version, cols), seen, sums, rows, nodes, extra, counts, np.ones(len(sums), dtype=bool))
        return b

    def _counting(self, idx: int, prio: int) -> list[Pod]:
        """The pods nominated to node idx that count for a pod of priority `prio`: at least that
        priority, and not placed in the state."""
        has = self.state.has
        return [p for p in self.nominated.get(idx, ()) if (p.priority or 0) >= prio and not has(p)]

    def _update(self, prio: int, b: _Batch, todo: set[int], seen: int) -> _Batch:
        """`b` with the sums of the nodes in `todo` recomputed (copies: `b` stays as it was)."""
        sums = dict(b.sums)
        rows, nodes, extra, counts, active = b.rows, b.nodes, b.extra.copy(), b.counts.copy(), b.active.copy()
        cols = b.key[1]
        added: list[int] = []
        for idx in todo:
            noms = self._counting(idx, prio)
            if not noms:
                sums.pop(idx, None)
                r = rows.get(idx)
                if r is not None:
                    active[r] = False
                continue
            s = sums[idx] = self.sum(noms)
            if len(s.extra) != cols:
                # A resource column appeared (sum() added it): rebuild the batch from scratch.
                self._batches.pop(prio, None)
                self._version += 1
                return self.batch(prio)
            r = rows.get(idx)
            if r is None:
                added.append(idx)
            else:
                extra[r], counts[r], active[r] = s.extra, len(s.pods), True
        if added:
            rows = dict(rows)
            for idx in added:
                rows[idx] = len(rows)
            nodes = np.concatenate([nodes, np.array(added, dtype=np.intp)])
            extra = np.vstack([extra, np.stack([sums[i].extra for i in added])])
            counts = np.concatenate([counts, np.array([len(sums[i].pods) for i in added], dtype=np.int64)])
            active = np.concatenate([active, np.ones(len(added), dtype=bool)])
        out = self._batches[prio] = _Batch(b.key, seen, sums, rows, nodes, extra, counts, active)
        return out

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
        sel = mask[b.nodes] & b.active
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
