"""kube-scheduler's scheduling queue, as far as the order of cycles needs it.

activeQ is a heap sorted by the QueueSort plugin, PrioritySort.Less (queuesort/priority_sort.go):
higher priority first, then the earlier queue timestamp. A PodGroup or CompositePodGroup tree is
one entry (QueuedPodGroupInfo) with its root's priority (`GetPriority`) and the timestamp of the
member pod that created the entry (`newQueuedPodGroupInfoFromRootLookup`). A pod's timestamp is
when it was added; after a failed attempt it is refreshed to now (`AddUnschedulablePodIfNotPresent`,
`AddAttemptedPodGroupIfNeeded`), except for a pod group whose cycle succeeded with pods left
over: it keeps its timestamp and goes straight back to activeQ, "to trigger preemption
immediately after the current cycle" (backend/queue/scheduling_queue.go).

Failed entries wait in unschedulableEntities until a cluster event may help them. Upstream asks
each plugin's queueing hint; we move an entry back when a pod was deleted after its attempt (what
NodeResourcesFit, the PostFilter's victims and most plugins wait for), or, for entries with pod
(anti-)affinity or topology spread terms, when a pod was bound after it.
UPSTREAM-DIFF: hints are per plugin and per event upstream; ours over-approximate (an entry may
be retried when upstream would not; a retry on an unchanged cluster fails the same way, so only
the cycle count differs). Backoff is not modelled: cycles take no simulated time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .records import ObjectRef

ACTIVE, UNSCHEDULABLE, STOPPED = "active", "unschedulable", "stopped"


@dataclass(slots=True)
class Entry:
    obj: ObjectRef
    priority: int
    timestamp: float
    seq: int  # order of arrival: the tie-break for equal (priority, timestamp)
    uid: str = ""  # a pod entry's pod uid
    where: str = ACTIVE
    deletions_seen: int = 0  # the cluster's deletion count at the last attempt
    binds_seen: int = 0
    wakes_on_bind: bool = False  # pod affinity or topology spread: a bind may help
    last_message: str = ""
    last_action: str = ""
    attempts: int = 0

    def sort_key(self) -> tuple[int, float, int]:
        # PrioritySort.Less. UPSTREAM-DIFF: equal priority and timestamp are ordered by arrival
        # (snapshot order: creation time, then kind/namespace/name) where the heap's order is
        # unspecified.
        return (-self.priority, self.timestamp, self.seq)


@dataclass(slots=True)
class Queue:
    entries: dict[tuple[str, str, str], Entry] = field(default_factory=dict)
    _seq: int = 0

    def key(self, obj: ObjectRef, uid: str = "") -> tuple[str, str, str]:
        return (obj.kind, obj.namespace, uid or obj.name)

    def get(self, obj: ObjectRef, uid: str = "") -> Entry | None:
        return self.entries.get(self.key(obj, uid))

    def add(self, obj: ObjectRef, priority: int, timestamp: float, uid: str = "", wakes_on_bind: bool = False) -> Entry:
        self._seq += 1
        e = Entry(obj, priority, timestamp, self._seq, uid, wakes_on_bind=wakes_on_bind)
        self.entries[self.key(obj, uid)] = e
        return e

    def pop(self) -> Entry | None:
        """The head of activeQ (None when it is empty)."""
        best = None
        for e in self.entries.values():
            if e.where == ACTIVE and (best is None or e.sort_key() < best.sort_key()):
                best = e
        return best

    def requeue(self, e: Entry, now: float, keep_timestamp: bool, active: bool, deletions: int, binds: int) -> None:
        """Back into the queue after an attempt: straight to activeQ (a pod group whose cycle
        succeeded with pods left), or to the unschedulable entries until a cluster event."""
        self._seq += 1
        e.seq = self._seq
        if not keep_timestamp:
            e.timestamp = now
        e.where = ACTIVE if active else UNSCHEDULABLE
        e.deletions_seen, e.binds_seen = deletions, binds

    def wake(self, deletions: int, binds: int) -> int:
        """movePodsToActiveOrBackoffQueue for the events since each entry's attempt."""
        n = 0
        for e in self.entries.values():
            if e.where == UNSCHEDULABLE and (deletions > e.deletions_seen or (e.wakes_on_bind and binds > e.binds_seen)):
                e.where = ACTIVE
                n += 1
        return n

    def activate(self, e: Entry) -> None:
        if e.where == UNSCHEDULABLE:
            e.where = ACTIVE

    def finish(self, e: Entry) -> None:
        """Every pod of the entry is placed: it leaves the queue (a later member makes a new one)."""
        self.entries.pop(self.key(e.obj, e.uid), None)

    def stop(self, e: Entry, why: str) -> None:
        """Never scheduled again (invalid, or cut off in a storm); still pending at the end."""
        e.where, e.last_message = STOPPED, why

    def left(self) -> list[Entry]:
        return sorted(self.entries.values(), key=Entry.sort_key)
