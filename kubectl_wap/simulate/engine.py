"""The cycle simulator: kube-scheduler's loop played forward over every pending object.

One step is one scheduling cycle for the entry at the head of activeQ (queue.py): a pod-group
cycle for a PodGroup/CompositePodGroup root (schedule_one_podgroup.go `podGroupCycle`, through
preemption/workload.py with one cycle) or a pod cycle for a standalone pod (schedule_one.go
`schedulingCycle`, through preemption/default.py). What fits binds; when the cycle fails the
PostFilter's decision is applied as upstream's preemption executor does it
(`prepareCandidate` / `ActuatePodGroupPreemption`): the preemptor's pods are nominated, the
victims are deleted (at once by default; with `grace`, they terminate for their grace period),
and a pod preemption clears the nominations of lower-priority pods on its node
(`getLowerPriorityNominatedPods`). The preemptor goes back to the queue and is retried after the
deletions, honouring nominated pods like every other pod (`RunFilterPluginsWithNominatedPods`).

Controllers bring victims back (`recreate_victims`): a victim with a controller owner reference
returns as a new pending pod with the same spec and is scheduled like any other pending pod, so a
preemption can cascade. A victim of another scheduler is placed by that scheduler at once,
without our nominations: the preemption loop of kubernetes issue #130429. A preemption that takes
the same lineage of victims again for the same preemptor is a storm: reported from its second
time and cut off (the preemptor is no longer scheduled) at `storm_limit`.

Everything is deterministic: the queue's ties go by arrival, recreated pods get names and uids
hashed from their predecessor's, and the engine breaks its own ties as whatif does."""

from __future__ import annotations

import gc
import heapq
import time as wall
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from typing import Callable, Mapping

from ..framework.groups import Group, group_priority
from ..model import Pod, Snapshot
from ..preemption.default import preempt_for_pod
from ..preemption.gates import Gates
from ..preemption.result import INVALID as OUT_INVALID
from ..preemption.result import NO_PREEMPTION_NEEDED, NOT_ELIGIBLE, PREEMPT, Result
from ..preemption.result import UNSCHEDULABLE as OUT_UNSCHEDULABLE
from ..preemption.workload import preempt_for_group
from ..snapshot.decode.owners import PodExtras
from . import records as R
from .queue import ACTIVE, Entry, Queue
from .world import DEFAULT_SCHEDULER, World, gpus_of

DEFAULT_GRACE_SECONDS = 30  # terminationGracePeriodSeconds' API default


@dataclass(slots=True, frozen=True)
class Options:
    gates: Gates = Gates()
    max_cycles: int = 10_000
    time_limit: float = 300.0  # wall-clock seconds
    recreate_victims: bool = True
    grace: bool = False  # victims keep their resources until their grace period ends
    grace_seconds: int = DEFAULT_GRACE_SECONDS  # for pods whose grace period is not known
    job_backoff_limit: int = 6  # Job spec.backoffLimit's default (Jobs are not in the snapshot)
    storm_limit: int = 3  # preemptions of one lineage by one preemptor before it is cut off


def _pending(p: Pod) -> bool:
    return not p.node_name and not p.terminal and p.deletion_timestamp is None


def _wakes_on_bind(p: Pod) -> bool:
    a = p.affinity
    return bool(p.topology_spread) or (a is not None and bool(a.pod_affinity_required or a.pod_anti_affinity_required))


class Simulator:
    def __init__(self, snap: Snapshot, opts: Options, extras: Mapping[tuple[str, str], PodExtras], start: float,
                 submitted: AbstractSet[tuple[str, str]] = frozenset(),
                 progress: Callable[[str, int, int | None], None] | None = None):
        self.opts = opts
        self.submitted = submitted
        self.progress = progress
        self.w = World(snap, opts.gates, extras, start, progress)
        self.q = Queue()
        self.sim = R.Simulation(start=start)
        self.expiries: list[tuple[float, int, str]] = []  # (time, seq, uid) of terminating pods
        self._seq = 0
        self.depth: dict[int, int] = {}  # preemption cycle -> cascade depth
        self.storms: dict[tuple[str, str], R.Storm] = {}
        self.evicted: dict[str, int] = {}  # lineage origin -> evictions
        self.orphans: list[Pod] = []  # group pods whose PodGroup does not exist
        self.held: list[tuple[Pod, str]] = []  # pods we do not schedule, and why
        self.other_pending: list[Pod] = []  # recreated pods of another scheduler, not yet placed
        # What the load said (defaulting, the -f note, the version profile): a whatif of the same input
        # says it too; each cycle's analysis repeats it, so it is said once, first.
        self.sim.warnings.extend(dict.fromkeys(snap.warnings))
        self._warned: set[str] = set(snap.warnings)
        self._victim_cycle: dict[str, int] = {}  # victim uid -> the cycle that preempted it

    # ---- queue ------------------------------------------------------------------------------
    def enqueue(self, pod: Pod) -> None:
        w = self.w
        if pod.scheduling_gates:
            self.held.append((pod, "schedulingGates: " + ", ".join(pod.scheduling_gates)))
            return
        if pod.scheduler_name != DEFAULT_SCHEDULER:
            self.held.append((pod, f"schedulerName {pod.scheduler_name}: not scheduled by kube-scheduler's default profile"))
            return
        # UPSTREAM-DIFF: a pod's queue timestamp is when the scheduler added it (or last retried
        # it); a snapshot shows neither, so work already pending is ordered by creation time.
        ts = pod.creation_timestamp if pod.creation_timestamp is not None else w.now
        if self.opts.gates.generic_workload and pod.pod_group_name:
            leaf = w.index.leaf_of(pod)
            if leaf is None:
                self.orphans.append(pod)
                return
            root = w.index.root_of(leaf)
            obj = R.ObjectRef(root.kind, root.namespace, root.name)
            e = self.q.get(obj)
            if e is None:
                e = self.q.add(obj, group_priority(root), ts)
            e.wakes_on_bind = e.wakes_on_bind or _wakes_on_bind(pod)
            return
        self.q.add(R.ObjectRef("Pod", pod.namespace, pod.name), pod.priority or 0, ts, uid=pod.uid, wakes_on_bind=_wakes_on_bind(pod))

    def _root(self, e: Entry) -> Group | None:
        k = (e.obj.namespace, e.obj.name)
        return self.w.index.pgs.get(k) if e.obj.kind == "PodGroup" else self.w.index.cpgs.get(k)

    def _pending_pods(self, e: Entry) -> list[Pod]:
        if e.obj.kind == "Pod":
            p = self.w.pods.get(e.uid)
            return [p] if p is not None and _pending(p) else []
        root = self._root(e)
        if root is None:
            return []
        return [p for leaf in self.w.index.leaves_under(root) for p in self.w.index.pods(leaf) if _pending(p) and not p.scheduling_gates]

    # ---- the loop ---------------------------------------------------------------------------
    def run(self) -> R.Simulation:
        t0 = wall.monotonic()
        sim, w = self.sim, self.w
        if self.submitted:
            # Hypothetical work is submitted when the simulation starts.
            w._swap({p.uid: replace(p, creation_timestamp=w.now) for p in w.pods.values() if (p.namespace, p.name) in self.submitted and _pending(p)})
        for p in sorted((p for p in w.pods.values() if _pending(p)), key=lambda p: (p.creation_timestamp if p.creation_timestamp is not None else w.now, p.namespace, p.name)):
            self.enqueue(p)
        for p in w.snap.pods:  # pods already terminating when the snapshot was taken
            if p.scheduled and p.deletion_timestamp is not None:
                self._expire_at(p, p.deletion_timestamp)
        n = 0
        while True:
            e = self.q.pop()
            if e is None:
                if not self._advance_time():
                    sim.stop_reason = R.DONE if not self.q.entries else R.NO_PROGRESS
                    break
                continue
            if n >= self.opts.max_cycles:
                sim.stop_reason = R.MAX_CYCLES
                break
            if wall.monotonic() - t0 > self.opts.time_limit:
                sim.stop_reason = R.TIME_LIMIT
                break
            n += 1
            if self.progress is not None and n % 8 == 1:
                self.progress("cycle", n, None)  # no total: recreated victims join the queue as it runs
            self._cycle(n, e)
            self.q.wake(w.deletions, w.binds)
        sim.end = w.now
        sim.pending = self._final_pending()
        sim.storms = list(self.storms.values())
        sim.storms = [s for s in sim.storms if len(s.cycles) > 1]
        sim.wall_seconds = wall.monotonic() - t0
        return sim

    def _advance_time(self) -> bool:
        """Nothing is active: let simulated time run to the next end of a grace period. False
        when nothing is terminating (no event can come).
        UPSTREAM-DIFF: cycles take no simulated time and there is no backoff; time moves only here."""
        w = self.w
        if not self.expiries:
            return False
        w.now = max(w.now, self.expiries[0][0])
        gone: list[Pod] = []
        while self.expiries and self.expiries[0][0] <= w.now:
            _, _, uid = heapq.heappop(self.expiries)
            p = w.pods.get(uid)
            if p is not None and p.node_name:
                gone.append(p)
        w.delete(gone, counted=True)
        for p in gone:
            self.sim.events.append(R.Event(w.now, R.TERMINATED, p.key, p.node_name, self._victim_cycle.get(p.uid, 0)))
            ex = w.extras.get(p.uid)
            if ex is not None and ex.owner_kind == "StatefulSet" and self.opts.recreate_victims and p.uid in self._victim_cycle:
                self._recreate(p, self._victim_cycle[p.uid])
        self._place_other_pending()
        self.q.wake(w.deletions, w.binds)
        return True

    def _expire_at(self, p: Pod, t: float) -> None:
        ex = self.w.extras.get(p.uid)
        grace = ex.grace_seconds if ex is not None and ex.grace_seconds is not None else self.opts.grace_seconds
        self._seq += 1
        heapq.heappush(self.expiries, (t + grace, self._seq, p.uid))

    def _cycle(self, n: int, e: Entry) -> None:
        w = self.w
        e.attempts += 1
        pending = self._pending_pods(e)
        if not pending:
            self.q.finish(e)
            return
        caused = tuple(sorted({w.cause[p.uid] for p in pending if p.uid in w.cause}))
        deletions, binds = w.deletions, w.binds  # the cluster as the cycle saw it
        res = self._schedule(e, pending)
        for msg in res.warnings:
            if msg not in self._warned:
                self._warned.add(msg)
                self.sim.warnings.append(msg)
        rec = dict(n=n, time=w.now, obj=e.obj, priority=e.priority, outcome=res.outcome, message=res.message, caused_by=caused)
        if res.outcome == NO_PREEMPTION_NEEDED and res.placements:
            bound = w.bind(res.placements)
            self.sim.bound += len(bound)
            left = len(self._pending_pods(e))
            self.sim.cycles.append(R.CycleRecord(action=R.BIND, placed=tuple((p.key, p.node_name) for p in bound), pending_left=left, **rec))
            if left:
                # AddAttemptedPodGroupIfNeeded after a successful cycle with pods left: straight
                # back to activeQ with its timestamp kept (preemption in the next cycle).
                self.q.requeue(e, w.now, keep_timestamp=e.obj.kind != "Pod", active=True, deletions=deletions, binds=binds)
                e.last_message, e.last_action = res.message, R.BIND
            else:
                self.q.finish(e)
            self._place_other_pending()
            return
        if res.outcome == PREEMPT:
            self._preempt(n, e, res, rec, deletions, binds)
            return
        if res.outcome == OUT_INVALID:
            self.sim.cycles.append(R.CycleRecord(action=R.INVALID, pending_left=len(pending), **rec))
            self.q.stop(e, f"invalid: {res.message}")
            return
        if e.obj.kind == "Pod" and res.outcome == OUT_UNSCHEDULABLE and pending[0].nominated_node_name:
            # PostFilter found no candidate: NewPostFilterResultWithNominatedNode("") clears the
            # pod's nomination (an ineligible pod keeps it: its PostFilter result is nil).
            w.nominate([(pending[0], "")])
        waiting = res.outcome == NOT_ELIGIBLE and "terminating pod on the nominated node" in res.message
        action = R.WAITING if waiting else R.UNSCHEDULABLE
        self.sim.cycles.append(R.CycleRecord(action=action, pending_left=len(pending), **rec))
        self.q.requeue(e, w.now, keep_timestamp=False, active=False, deletions=deletions, binds=binds)
        e.last_message, e.last_action = res.message, action

    def _schedule(self, e: Entry, pending: list[Pod]) -> Result:
        w, g = self.w, self.opts.gates
        if e.obj.kind == "Pod":
            return preempt_for_pod(w.snap, w.sched, w.index, pending[0], g.generic_workload, g.profile)
        root = self._root(e)
        assert root is not None  # _pending_pods found its pods
        return preempt_for_group(w.snap, w.sched, w.index, root, g.pod_group_preemption_policy, g.generic_workload, True,
                                 tas=g.topology_aware_workload_scheduling, max_cycles=1, profile=g.profile)

    # ---- preemption -------------------------------------------------------------------------
    def _preempt(self, n: int, e: Entry, res: Result, rec: dict, deletions: int, binds: int) -> None:
        w = self.w
        victims: list[R.Victim] = []
        pods: list[Pod] = []
        for v in res.victims:
            unit = R.ObjectRef(v.unit.kind, v.unit.namespace, v.unit.name)
            for p in v.unit.pods:
                origin = w.origin_of(p)
                self.evicted[origin] = self.evicted.get(origin, 0) + 1
                ex = w.extras.get(p.uid)
                victims.append(R.Victim(p.namespace, p.name, p.node_name, p.priority or 0, unit,
                                        f"{ex.owner_kind}/{ex.owner_name}" if ex is not None and ex.owner_kind else "",
                                        origin, self.evicted[origin], v.violates_pdb, p.start_time, gpus_of(p)))
                pods.append(p)
        if e.obj.kind == "Pod":
            nominated = [(res.preemptor.pods[0], res.nominated_node)] if res.nominated_node else []
        else:
            nominated = list(res.placements)
        caused = rec["caused_by"]
        depth = 1 + max((self.depth.get(c, 0) for c in caused), default=0)
        self.depth[n] = depth
        self.sim.cycles.append(R.CycleRecord(action=R.PREEMPT, placed=tuple((p.key, node) for p, node in nominated), victims=tuple(victims),
                                             pending_left=len(res.preemptor.pods), depth=depth,
                                             pdb_violations=res.num_pdb_violations, **rec))
        # Back to the queue as unschedulable (timestamp now), before the victims' deletions:
        # the deletion events move it back to activeQ.
        self.q.requeue(e, w.now, keep_timestamp=False, active=False, deletions=deletions, binds=binds)
        e.last_message, e.last_action = res.message, R.PREEMPT
        w.nominate(nominated)
        if e.obj.kind == "Pod" and res.nominated_node:
            # prepareCandidate: lower-priority pods nominated to the node lose their nomination
            # and are moved to activeQ. (For a pod group the candidate is "cluster", which no
            # pod is nominated to.)
            prio = e.priority
            lower = [p for p in w.nominated_on(res.nominated_node) if (p.priority or 0) < prio and p.uid != e.uid]
            w.nominate((p, "") for p in lower)
            for p in lower:
                le = self.q.get(R.ObjectRef("Pod", p.namespace, p.name), p.uid)
                if le is not None:
                    self.q.activate(le)
        # A victim already terminating is counted but not deleted again (upstream sends no API
        # call for it): it ends at its own grace period and its controller has already acted.
        pods = [p for p in pods if p.deletion_timestamp is None]
        for p in pods:
            self._victim_cycle[p.uid] = n
        if self.opts.grace:
            w.terminate(pods)
            for p in pods:
                self._expire_at(p, w.now)
        else:
            w.delete(pods)
        if self.opts.recreate_victims:
            for p in pods:
                ex = w.extras.get(p.uid)
                if self.opts.grace and ex is not None and ex.owner_kind == "StatefulSet":
                    continue  # the StatefulSet controller waits for the old pod to be gone
                self._recreate(p, n)
        self._place_other_pending()
        self._storm_check(n, e, res, victims)

    def _recreate(self, p: Pod, n: int) -> None:
        new, why = self.w.recreate(p, n, self.opts.job_backoff_limit)
        if new is None:
            self.sim.events.append(R.Event(self.w.now, R.JOB_FAILED if why.startswith("Job ") else R.NOT_RECREATED, p.key, why, n))
            return
        self.sim.events.append(R.Event(self.w.now, R.RECREATED, p.key, new.key, n))
        if new.scheduler_name != DEFAULT_SCHEDULER:
            self.other_pending.append(new)
        else:
            self.enqueue(new)

    def _place_other_pending(self) -> None:
        """Recreated pods of another scheduler: placed by it as soon as they fit.
        UPSTREAM-DIFF: that scheduler is modelled as the default profile (our Filter and Score
        plugins) with an empty nominator: it never sees our nominations (issue #130429)."""
        if not self.other_pending:
            return
        w = self.w
        other = w.other_scheduler()
        left = []
        for p in self.other_pending:
            cur = w.pods.get(p.uid)
            if cur is None or not _pending(cur):
                continue
            r = other.schedule(cur)
            if r.ok:
                node = w.state.nodes[r.node].name
                w.bind([(cur, node)])
                self.sim.events.append(R.Event(w.now, R.OTHER_SCHEDULER, cur.key, node, w.cause.get(cur.uid, 0)))
            else:
                left.append(cur)
        self.other_pending = left

    def _storm_check(self, n: int, e: Entry, res: Result, victims: list[R.Victim]) -> None:
        """The same preemptor taking the same lineage of victims again is a preemption storm."""
        w = self.w
        who = w.origin.get(e.uid, e.obj.key) if e.obj.kind == "Pod" else e.obj.key
        cut = False
        for v in victims:
            k = (f"{e.obj.kind}/{who}", v.origin)
            s = self.storms.get(k)
            if s is None:
                s = self.storms[k] = R.Storm(R.ObjectRef(e.obj.kind, e.obj.namespace, who.split("/", 1)[1]), v.origin)
            if n not in s.cycles:
                s.cycles.append(n)
            if len(s.cycles) >= self.opts.storm_limit:
                s.cut_off = cut = True
        if cut:
            self.q.stop(e, f"cut off: preemption storm (it preempted the same victims {self.opts.storm_limit} times)")

    # ---- the end ----------------------------------------------------------------------------
    def _final_pending(self) -> list[R.Pending]:
        out = []
        for e in self.q.left():
            pods = self._pending_pods(e)
            if not pods:
                continue
            why = e.last_message or "not attempted"
            if e.where == ACTIVE:
                why = f"not attempted before the simulation stopped; last: {why}" if e.attempts else "not attempted before the simulation stopped"
            out.append(R.Pending(e.obj, e.priority, len(pods), why))
        for p in self.orphans:
            out.append(R.Pending(R.ObjectRef("Pod", p.namespace, p.name), p.priority or 0, 1,
                                 f"waits for its PodGroup {p.namespace}/{p.pod_group_name}, which is not in the cluster state"))
        for p, why in self.held:
            out.append(R.Pending(R.ObjectRef("Pod", p.namespace, p.name), p.priority or 0, 1, why))
        for p in self.other_pending:
            out.append(R.Pending(R.ObjectRef("Pod", p.namespace, p.name), p.priority or 0, 1,
                                 f"recreated pod of schedulerName {p.scheduler_name}: its scheduler finds no node"))
        return out


def simulate(snap: Snapshot, opts: Options | None = None, extras: Mapping[tuple[str, str], PodExtras] | None = None,
             start: float | None = None, submitted: AbstractSet[tuple[str, str]] = frozenset(),
             progress: Callable[[str, int, int | None], None] | None = None) -> R.Simulation:
    """Play every pending object of `snap` through kube-scheduler's cycles until the queue is
    empty or nothing can change (bounded by opts.max_cycles and opts.time_limit). `start`: the
    simulated time of the first cycle (default: the latest timestamp in the snapshot);
    `submitted`: (namespace, name) of pending pods created at `start` (hypothetical work).
    `progress` hears the state's build (framework/buildstate.py), then ("cycle", cycles so far,
    None) every 8 cycles."""
    opts = opts or Options()
    if start is None:
        stamps = [t for p in snap.pods if (p.namespace, p.name) not in submitted for t in (p.creation_timestamp, p.start_time) if t is not None]
        start = max(stamps) if stamps else 0.0
    enabled = gc.isenabled()
    gc.disable()
    try:
        return Simulator(snap, opts, extras or {}, start, submitted, progress).run()
    finally:
        if enabled:
            gc.enable()
