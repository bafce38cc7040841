"""The simulated cluster across cycles: one ClusterState, GroupIndex and Scheduler built once from
the snapshot and changed in place (bind, nominate, evict, recreate), never reloaded.

Pods are frozen model objects: a change of state (bound, nominated, terminating) replaces the
pod by a copy everywhere the engine looks it up: the cluster state, the group index, the
nominator and `pods` (uid -> current object)."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import replace
from typing import Callable, Iterable, Mapping

from ..framework.buildstate import build_state
from ..framework.groups import GroupIndex
from ..framework.nominated import nominator_pods
from ..framework.schedule_one import Scheduler
from ..model import Pod, PodDisruptionBudget, Snapshot
from ..preemption.gates import Gates
from ..preemption.pdb import pdb_matches
from ..snapshot.decode.owners import PodExtras

DEFAULT_SCHEDULER = "default-scheduler"
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the apiserver's generateName alphabet


def gpus_of(pod: Pod) -> dict[str, int]:
    return {r: v for r, v in pod.requests.items() if "gpu" in r.lower() and v}


class World:
    def __init__(self, snap: Snapshot, gates: Gates, extras: Mapping[tuple[str, str], PodExtras], now: float,
                 progress: Callable[[str, int, int | None], None] | None = None):
        # A working copy: the lists that change are our own; the objects are shared until replaced.
        self.snap = replace(snap, pods=list(snap.pods), pdbs=list(snap.pdbs), warnings=list(snap.warnings))
        self.gates = gates
        self.now = now
        self.index = GroupIndex.build(self.snap, composite_enabled=gates.composite_pod_group)
        self.state = build_state(self.snap, progress=progress)
        self.sched = Scheduler(self.state, nominator_pods(snap.pods))
        self._other: Scheduler | None = None
        self._nominated_at = {p.uid: i for i, lst in self.sched.nominated.items() for p in lst}
        self.pods: dict[str, Pod] = {p.uid: p for p in snap.pods}
        self.extras: dict[str, PodExtras] = {}
        for p in snap.pods:
            ex = extras.get((p.namespace, p.name))
            if ex is not None:
                self.extras[p.uid] = ex
        self.origin: dict[str, str] = {}  # uid -> ns/name of the first pod of its lineage
        self.cause: dict[str, int] = {}  # uid of a recreated pod -> the cycle that evicted its predecessor
        self.deletions = 0  # pods removed from the cluster so far (queueing-hint events)
        self.binds = 0
        self.names = {(p.namespace, p.name) for p in snap.pods}
        self._pdb_base = list(snap.pdbs)
        self._pdb_missing = [0] * len(snap.pdbs)
        self._pdbs_in: dict[str, list[int]] = {}  # namespace -> indices of its PDBs
        for i, pdb in enumerate(snap.pdbs):
            self._pdbs_in.setdefault(pdb.namespace, []).append(i)
        self.job_failures: Counter[tuple[str, str]] = Counter()

    # ---- lookups ----------------------------------------------------------------------------
    def origin_of(self, pod: Pod) -> str:
        return self.origin.get(pod.uid, pod.key)

    def other_scheduler(self) -> Scheduler:
        """A second scheduler for pods of another schedulerName: it keeps its own queue and so
        does not know our nominations (kubernetes issue #130429)."""
        if self._other is None:
            self._other = Scheduler(self.state, [])
        return self._other

    # ---- replacing pod objects ----------------------------------------------------------------
    def _swap(self, changes: Mapping[str, Pod | None]) -> None:
        """Replace (or drop, for None) pods by uid in `pods` and in the group index."""
        groups: set[tuple[str, str]] = set()
        for uid, new in changes.items():
            old = self.pods.get(uid)
            if new is None:
                self.pods.pop(uid, None)
            else:
                self.pods[uid] = new
            p = new or old
            if p is not None and p.pod_group_name:
                groups.add((p.namespace, p.pod_group_name))
        for g in groups:
            lst = self.index.pods_of.get(g)
            if lst is not None:
                lst[:] = [q for q in (changes.get(x.uid, x) if x.uid in changes else x for x in lst) if q is not None]

    def _nominate_in_scheduler(self, pod: Pod, node: str) -> None:
        """The nominator's entry for the pod: moved to `node` ("" removes it)."""
        self.sched.noms.changed()
        old = self._nominated_at.pop(pod.uid, None)
        if old is not None:
            lst = self.sched.nominated[old]
            for i, q in enumerate(lst):
                if q.uid == pod.uid:
                    del lst[i]
                    break
            if not lst:
                del self.sched.nominated[old]
        idx = self.state.node_index.get(node) if node else None
        if idx is not None:
            self.sched.nominated.setdefault(idx, []).append(pod)
            self._nominated_at[pod.uid] = idx

    # ---- changes ----------------------------------------------------------------------------
    def bind(self, placements: Iterable[tuple[Pod, str]]) -> list[Pod]:
        """The pods bind to their nodes (and start running now)."""
        changes: dict[str, Pod | None] = {}
        out = []
        for pod, node in placements:
            new = replace(pod, node_name=node, phase="Running", start_time=self.now, nominated_node_name="")
            self.state.add_pod(new, self.state.node_index[node])
            if pod.nominated_node_name:
                self._nominate_in_scheduler(pod, "")
            changes[pod.uid] = new
            self._pdb_change(new, -1)
            out.append(new)
        self._swap(changes)
        self.binds += len(out)
        return out

    def nominate(self, pods: Iterable[tuple[Pod, str]]) -> None:
        """status.nominatedNodeName (ModeOverride): "" clears it."""
        changes: dict[str, Pod | None] = {}
        for pod, node in pods:
            cur = self.pods.get(pod.uid, pod)
            new = replace(cur, nominated_node_name=node)
            self._nominate_in_scheduler(new, node)
            changes[pod.uid] = new
        self._swap(changes)

    def nominated_on(self, node: str) -> list[Pod]:
        idx = self.state.node_index.get(node)
        return list(self.sched.nominated.get(idx, ())) if idx is not None else []

    def terminate(self, pods: list[Pod]) -> None:
        """Victims start terminating (deletionTimestamp and the DisruptionTarget condition set);
        they keep their resources until deleted."""
        changes: dict[str, Pod | None] = {}
        for p in pods:
            idx = self.state.remove_pod(p)
            new = replace(p, deletion_timestamp=self.now, disruption_target=True)
            self.state.add_pod(new, idx)
            changes[p.uid] = new
            self._pdb_change(p, +1)
        self._swap(changes)

    def delete(self, pods: list[Pod], counted: bool = False) -> None:
        """The pods are gone from the cluster (a deletion event for the queue). `counted`: their
        PDB disruption was already counted when they started terminating."""
        changes: dict[str, Pod | None] = {}
        for p in pods:
            if self.state.has(p):
                self.state.remove_pod(p)
            changes[p.uid] = None
            if not counted:
                self._pdb_change(p, +1)
        self._swap(changes)
        self.deletions += len(pods)

    def recreate(self, victim: Pod, cycle: int, backoff_limit: int) -> tuple[Pod | None, str]:
        """The victim's controller creates its replacement: (new pending pod, "") or (None, why
        not). Same spec; StatefulSets keep the name, other controllers generate one; a Job counts
        the preempted pod as a failure against its backoffLimit."""
        ex = self.extras.get(victim.uid)
        if ex is None or not ex.owner_kind or ex.owner_kind == "Node":
            return None, "no controller"
        # UPSTREAM-DIFF: the Job itself is not in the snapshot: its backoffLimit is the option's
        # (default 6, the API default) and a podFailurePolicy that ignores DisruptionTarget is
        # not seen, so every preempted pod counts as a failure.
        if ex.owner_kind == "Job":
            k = (victim.namespace, ex.owner_name)
            self.job_failures[k] += 1
            if self.job_failures[k] > backoff_limit:
                return None, f"Job {ex.owner_name} failed: backoffLimit {backoff_limit} exceeded"
        n = 0
        while True:
            n += 1
            h = hashlib.sha256(f"{victim.uid}/{n}".encode()).digest()
            if ex.owner_kind == "StatefulSet":
                name = victim.name
            else:
                name = f"{ex.owner_name}-" + "".join(_ALPHABET[b % len(_ALPHABET)] for b in h[:5])
            uid = "sim-" + h[:8].hex()
            if uid not in self.pods and ((victim.namespace, name) not in self.names or name == victim.name):
                break
        new = replace(victim, uid=uid, name=name, node_name="", phase="Pending", start_time=None, creation_timestamp=self.now,
                      deletion_timestamp=None, disruption_target=False, nominated_node_name="")
        self.names.add((victim.namespace, name))
        self.origin[uid] = self.origin_of(victim)
        self.cause[uid] = cycle
        self.extras[uid] = ex
        self.pods[uid] = new
        if new.pod_group_name:
            self.index.pods_of.setdefault((new.namespace, new.pod_group_name), []).append(new)
        return new, ""

    # ---- PodDisruptionBudgets ---------------------------------------------------------------
    def _pdb_change(self, pod: Pod, missing: int) -> None:
        """The disruption controller's view: a budget allows max(0, allowed at capture - matching
        pods gone since) disruptions; a matching pod bound again gives one back.
        UPSTREAM-DIFF: the controller recomputes from healthy pods and desiredHealthy, which the
        snapshot does not hold; this counts the change since the capture."""
        for i in self._pdbs_in.get(pod.namespace, ()):
            pdb = self._pdb_base[i]
            if not pdb_matches(pdb, pod, self.gates.profile):
                continue
            m = max(0, self._pdb_missing[i] + missing)
            if m != self._pdb_missing[i]:
                self._pdb_missing[i] = m
                self.snap.pdbs[i] = self._budget(pdb, m)

    @staticmethod
    def _budget(pdb: PodDisruptionBudget, missing: int) -> PodDisruptionBudget:
        return replace(pdb, disruptions_allowed=max(0, pdb.disruptions_allowed - missing))
