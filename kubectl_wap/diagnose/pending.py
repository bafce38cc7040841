"""`pending`: one triage row per pending pod, PodGroup tree root or standalone pod.

Each row says what keeps the work pending: a blocker that is not kube-scheduler's (scheduling
gates, a queue manager's hold, another scheduler, pods not created yet, a nomination waiting for
victims to terminate), or the scheduler's own verdict, taken from the real analysis
(preemption/workload.py or default.py) run on one ClusterState shared by every row: each analysis
checkpoints and rolls the state back, so rows do not see each other.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from . import gc_paused
from ..framework.buildstate import build_state
from ..framework.groups import Group, GroupIndex, group_priority
from ..framework.nominated import nominator_pods
from ..framework.podgroup import PodGroupScheduler, quorum_wait
from ..framework.schedule_one import Scheduler, fit_error_message
from ..framework.state import ClusterState
from ..framework.status import SUCCESS
from ..model import NEVER, CompositePodGroup, Pod, PodGroup, Snapshot
from ..preemption.default import preempt_for_pod
from ..preemption.gates import Gates
from ..preemption.result import INVALID, NO_PREEMPTION_NEEDED, NOT_ELIGIBLE, PREEMPT, Result
from ..preemption.workload import preempt_for_group
from ..quantity import format_amount
from .holds import holds_of

if TYPE_CHECKING:
    from ..queueing.kueue.objects import KueueObjects

# Outcome words for the PREEMPTION column.
HELPS, NO_HELP, NOT_NEEDED, NOT_ALLOWED, NOT_ASKED = "yes", "no", "not needed", "not allowed", "-"


@dataclass(slots=True, frozen=True)
class PendingRow:
    kind: str  # Pod | PodGroup | CompositePodGroup
    namespace: str
    name: str
    priority: int
    pending_pods: int
    created: float | None  # earliest creation time of the object and its pending pods
    reason: str  # plain words
    upstream: str  # upstream's status string ('' when the scheduler is not the blocker)
    blockers: tuple[str, ...] = ()  # not the scheduler's: gates, holds, missing pods, waiting for victims
    preemption: str = NOT_ASKED  # yes | no | not needed | not allowed | -
    preemption_why: str = ""  # why not allowed / why it does not help
    victim_pods: int = 0
    victim_units: int = 0
    outcome: str = ""  # the analysis outcome when one ran
    scale_up: str = ""  # template name(s) one added node of which would make it schedulable, "no", or ""
    notes: tuple[str, ...] = ()
    victims: tuple[str, ...] = ()  # the victim pods (namespace/name, sorted) when preemption helps
    # Which stage holds it: "kueue" (a Workload Kueue has not admitted: its job is suspended, no
    # pod exists; or pods behind Kueue's gate), "kube-scheduler", or "other" (another queue
    # manager or scheduler, scheduling gates). `queueing`: Kueue's record for
    # a Workload row (queueing/kueue/answer.py KueueStage), worded by report/.
    stage: str = "kube-scheduler"
    queueing: Any = None


@dataclass(slots=True)
class Triage:
    rows: list[PendingRow] = field(default_factory=list)
    now: float = 0.0
    templates: list[str] = field(default_factory=list)  # node templates tried for scale-up
    warnings: list[str] = field(default_factory=list)


def _earliest_creation(pods: list[Pod]) -> float | None:
    ts = [p.creation_timestamp for p in pods if p.creation_timestamp is not None]
    return min(ts) if ts else None


def _matches(pods: list[Pod], selector: dict[str, str] | None) -> bool:
    if not selector:
        return True
    return any(all(p.labels.get(k) == v for k, v in selector.items()) for p in pods)


def _pending(p: Pod) -> bool:
    return not p.node_name and not p.terminal and p.deletion_timestamp is None


def collect(snap: Snapshot, index: GroupIndex, namespace: str | None, selector: dict[str, str] | None) -> list[tuple[Group | None, list[Pod]]]:
    """(root group or None, pending pods) per row. Pods of a group go to their tree's root;
    pods naming a PodGroup that does not exist get a row each (with the group set to None)."""
    by_root: dict[tuple[str, str, str], tuple[Group, list[Pod]]] = {}
    rows: list[tuple[Group | None, list[Pod]]] = []
    for p in snap.pods:
        if not _pending(p) or (namespace and p.namespace != namespace):
            continue
        leaf = index.leaf_of(p) if p.pod_group_name else None
        if leaf is None:
            rows.append((None, [p]))
            continue
        root = index.root_of(leaf)
        k = (root.kind, root.namespace, root.name)
        if k not in by_root:
            by_root[k] = (root, [])
        by_root[k][1].append(p)
    rows.extend(by_root.values())
    return [(g, pods) for g, pods in rows if _matches(pods, selector)]


def _plain_fit(state: ClusterState, sched: Scheduler, pod: Pod, statuses: dict) -> str:
    """The dominant Filter reason in plain words, among the nodes the pod may use at all
    (those passing the static filters: cordon, taints, node affinity)."""
    static = sched.static.get(pod)
    usable = np.flatnonzero(static.codes == SUCCESS)
    if len(usable) == 0:
        hist = Counter(r for st in statuses.values() for r in st.reasons)
        top = sorted(hist.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if hist else "no nodes"
        return f"no node it may run on: {top} ({len(state.nodes)} node(s))"
    hist = Counter(r for i in usable if (st := statuses.get(int(i))) is not None for r in st.reasons)
    if not hist:
        return "fits a node on its own"
    top = max(hist.items(), key=lambda kv: (kv[1], _shortage(state, pod, usable, kv[0]), _neg(kv[0])))[0]
    if top.startswith("Insufficient "):
        r = top[len("Insufficient "):]
        col = state.res_index.get(r)
        need = pod.requests.get(r, 0)
        if col is not None:
            free = int((state.alloc[usable, col] - state.requested[usable, col]).max())
            alloc = int(state.alloc[usable, col].max())
            if need > alloc:
                return (f"needs {format_amount(r, need)} {r} on one node; no node it may use has that much "
                        f"(largest allocatable {format_amount(r, alloc)})")
            return (f"needs {format_amount(r, need)} {r} on one node; largest free is {format_amount(r, max(free, 0))} "
                    f"({len(usable)} node(s) it may use)")
    if top == "Too many pods":
        return f"every node it may use is at its pod limit ({len(usable)} node(s))"
    return f"{top} ({hist[top]} of the {len(usable)} node(s) it may use)"


def _neg(s: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in s)  # ties between equally common reasons: the smallest name


def _shortage(state: ClusterState, pod: Pod, usable: np.ndarray, reason: str) -> float:
    """How far the pod is from fitting on the best usable node for an `Insufficient R` reason
    (need / largest allocatable): among reasons that fail on as many nodes, the resource that
    can never fit is the one to name (a 16-GPU pod on 8-GPU nodes is short of GPUs, not cpu)."""
    if not reason.startswith("Insufficient "):
        return 0.0
    r = reason[len("Insufficient "):]
    col = state.res_index.get(r)
    alloc = int(state.alloc[usable, col].max()) if col is not None else 0
    return pod.requests.get(r, 0) / alloc if alloc > 0 else float("inf")


def _waiting_for_victims(state: ClusterState, pods: list[Pod]) -> str | None:
    """Nominated, and the nominated node still holds pods terminating by preemption: the
    scheduler waits for them (upstream's isOngoingPreemption / PodEligibleToPreemptOthers)."""
    for p in pods:
        if not p.nominated_node_name:
            continue
        idx = state.node_index.get(p.nominated_node_name)
        if idx is None:
            continue
        term = [q for q in state.pods_on(idx) if q.terminating_by_preemption]
        if term:
            return (f"nominated to {p.nominated_node_name}; waiting for {len(term)} victim(s) to terminate "
                    f"({', '.join(q.key for q in term[:3])}{' ...' if len(term) > 3 else ''})")
    return None


def _missing_pods(index: GroupIndex, root: Group) -> str | None:
    """A gang whose pods do not exist yet: no scheduling can help until the controller creates them.
    Only when the tree has not met its quorum (framework/podgroup.py quorum_wait, GangScheduling
    PreEnqueue): a child short of pods under a root whose other children suffice is queued anyway."""
    if quorum_wait(index, root) is None:
        return None
    out = []
    for leaf in index.leaves_under(root):
        if leaf.policy != "gang":
            continue
        have = sum(1 for p in index.pods(leaf) if not p.terminal and p.deletion_timestamp is None)
        if have < leaf.min_count:
            out.append(f"PodGroup {leaf.key} has {have} pod(s), minCount {leaf.min_count}: {leaf.min_count - have} not created yet")
    if isinstance(root, CompositePodGroup) and root.policy == "gang":
        n = len(index.children(root))
        if n < root.min_group_count:
            out.append(f"CompositePodGroup {root.key} has {n} child group(s), minGroupCount {root.min_group_count}")
    return "; ".join(out) or None


def _first_failure(pgs: PodGroupScheduler, sched: Scheduler, root: Group | None, pods: list[Pod]) -> tuple[str, str]:
    """(plain, upstream) for the cluster as it stands: the first pod that fails alone, else the
    gang's own status (every pod fits alone, not all at once)."""
    state = sched.state
    pod = sorted(pods, key=lambda p: (-(p.priority or 0), p.creation_timestamp or 0.0, p.name))[0]
    r = sched.schedule(pod)
    if not r.ok:
        _, statuses = sched.feasible_nodes(pod, r.cycle, True)
        return _plain_fit(state, sched, pod, statuses), fit_error_message(len(state.nodes), statuses)
    if root is None:
        return "fits a node now", ""
    first = pgs.run_root(root)
    if first.status.code == SUCCESS:
        return "fits now", ""
    msg = first.status.message
    m = _SCHEDULED.search(msg)
    short = sorted({r for f in first.failures.values() for st in f.statuses.values() for r in st.reasons if r.startswith("Insufficient ")})
    fit = f"only {m.group(1)} pod(s) fit at once" if m else "not all fit at once"
    why = f" ({', '.join(short)})" if short else ""
    return f"{_gang_need(root)}: {fit}{why}", msg


_SCHEDULED = re.compile(r"(\d+) scheduled")


def _gang_need(root: Group) -> str:
    if isinstance(root, PodGroup):
        return f"gang needs {root.min_count} pod(s) at once (minCount)" if root.policy == "gang" else "group"
    return f"gang needs {root.min_group_count} child group(s) at once (minGroupCount)"


def _preemption(res: Result) -> tuple[str, int, int]:
    if res.outcome == PREEMPT:
        return HELPS, len(res.victim_pods), len(res.victims)
    if res.outcome == NO_PREEMPTION_NEEDED:
        return NOT_NEEDED, 0, 0
    if res.outcome == NOT_ELIGIBLE:
        return NOT_ALLOWED, 0, 0
    if res.outcome == INVALID:
        return NOT_ASKED, 0, 0
    return NO_HELP, 0, 0


@gc_paused
def triage(
    snap: Snapshot,
    gates: Gates | None = None,
    namespace: str | None = None,
    selector: dict[str, str] | None = None,
    now: float | None = None,
    scale_up: "ScaleUp | None" = None,
    claims: dict[tuple[str, str], list[str]] | None = None,
    progress: Callable[[str, int, int | None], None] | None = None,
    kueue: "KueueObjects | None" = None,
) -> Triage:
    """Every pending row's diagnosis. `progress` hears the state's build (framework/buildstate.py),
    then ("rows", rows done, rows) before each row. `kueue`: the cluster's Kueue objects, when it
    has some: each Workload not admitted (its job suspended, so no pod and no other row) gets a row
    saying why Kueue holds it."""
    gates = gates or Gates()
    index = GroupIndex.build(snap, composite_enabled=gates.composite_pod_group)
    state = build_state(snap, progress=progress)
    nominated = nominator_pods(snap.pods)
    sched = Scheduler(state, nominated)
    pgs = PodGroupScheduler(sched, index, gates.topology_aware_workload_scheduling, gates.profile.no_pods_schedulable_message)
    out = Triage(now=now if now is not None else time.time())
    rows = collect(snap, index, namespace, selector)
    for n, (root, pods) in enumerate(rows):
        if progress is not None:
            progress("rows", n, len(rows))
        out.rows.append(_row(snap, gates, index, sched, pgs, root, pods, scale_up, claims))
    if kueue is not None and not selector:  # -l selects pods by label; a suspended job has none
        out.rows.extend(_kueue_rows(kueue, namespace, out.now))
    out.rows.sort(key=lambda r: (-r.priority, r.created if r.created is not None else float("inf"), r.namespace, r.name))
    if scale_up is not None:
        out.templates = scale_up.names()
    return out


def _kueue_rows(objs: "KueueObjects", namespace: str | None, now: float) -> list[PendingRow]:
    """One row per Workload Kueue has not admitted (answer.pending_stages: its next cycle), in
    `namespace` (None: all). Its pods do not exist yet: pendingPods counts those its podsets ask."""
    from ..queueing.kueue.answer import pending_stages

    rows = []
    for st in pending_stages(objs, now):
        wl = st.workload
        if wl is None or (namespace and wl.namespace != namespace):
            continue
        rows.append(PendingRow(kind="Workload", namespace=wl.namespace, name=wl.name, priority=wl.priority,
                               pending_pods=sum(ps.count for ps in wl.pod_sets), created=wl.created or None,
                               reason="held by Kueue", upstream="", stage="kueue", queueing=st,
                               notes=("its job is suspended until Kueue admits it: no pod exists yet",)))
    return rows


def _row(snap: Snapshot, gates: Gates, index: GroupIndex, sched: Scheduler, pgs: PodGroupScheduler,
         root: Group | None, pods: list[Pod], scale_up: "ScaleUp | None",
         claims: dict[tuple[str, str], list[str]] | None = None) -> PendingRow:
    state = sched.state
    if root is None:
        p = pods[0]
        kind, ns, name, prio = "Pod", p.namespace, p.name, p.priority or 0
        created = p.creation_timestamp
    else:
        kind, ns, name, prio = root.kind, root.namespace, root.name, group_priority(root)
        created = min([t for t in (root.creation_timestamp, _earliest_creation(pods)) if t is not None], default=None)
    blockers: list[str] = []
    notes: list[str] = []
    gated = [p for p in pods if p.scheduling_gates]
    for hold in holds_of(pods):
        blockers.append(hold)
    if gated and not any(b.startswith("held by") and "gate" in b for b in blockers):
        gates_seen = sorted({g for p in gated for g in p.scheduling_gates})
        blockers.append(f"{len(gated)} pod(s) have schedulingGates: {', '.join(gates_seen)}")
    foreign = sorted({p.scheduler_name for p in pods if p.scheduler_name != "default-scheduler"})
    if foreign and not any(b.startswith("held by") for b in blockers):
        blockers.append(f"schedulerName {', '.join(foreign)}: not scheduled by kube-scheduler")
    if root is None and pods[0].pod_group_name and gates.generic_workload:
        blockers.append(f"PodGroup {ns}/{pods[0].pod_group_name} does not exist: the pod waits for it")
    if root is not None and (missing := _missing_pods(index, root)):
        blockers.append(missing)
    if waiting := _waiting_for_victims(state, pods):
        blockers.append(waiting)
    unbound = [(p, claims[(p.namespace, p.name)]) for p in pods if claims and (p.namespace, p.name) in claims]
    if unbound:
        p, why = unbound[0]
        more = f" (and {len(unbound) - 1} more pod(s))" if len(unbound) > 1 else ""
        blockers.append(("" if root is None else f"{p.name}: ") + "; ".join(why) + more)
    elif any(p.uses_pvcs for p in pods) and claims is None:
        notes.append("uses PersistentVolumeClaims: their binding is not in the snapshot and not checked")
    common = dict(kind=kind, namespace=ns, name=name, priority=prio, pending_pods=len(pods), created=created, notes=tuple(notes))
    if blockers:
        first = blockers[0]
        stage = ("kueue" if first.startswith("held by Kueue") else "other"
                 if first.startswith(("held by", "schedulerName")) or "schedulingGates" in first else "kube-scheduler")
        return PendingRow(reason=blockers[0], upstream="", blockers=tuple(blockers), stage=stage, **common)

    res = preempt_for_pod(snap, sched, index, pods[0], gates.generic_workload, gates.profile) if root is None else preempt_for_group(
        snap, sched, index, root, gates.pod_group_preemption_policy, gates.generic_workload, True,
        tas=gates.topology_aware_workload_scheduling, profile=gates.profile,
    )
    help_, vp, vu = _preemption(res)
    if res.outcome == NO_PREEMPTION_NEEDED:
        return PendingRow(reason="fits now: kube-scheduler should bind it in its next cycle", upstream="",
                          preemption=help_, outcome=res.outcome, **common)
    if res.outcome == INVALID:
        return PendingRow(reason=f"rejected by kube-scheduler: {res.message}", upstream=res.message,
                          preemption=help_, outcome=res.outcome, **common)
    plain, upstream = _first_failure(pgs, sched, root, pods)
    why = res.message
    if res.outcome == NOT_ELIGIBLE and res.preemptor.preemption_policy == NEVER:
        why = f"preemptionPolicy Never ({res.preemptor.policy_source}): it waits for free capacity"
    elif res.outcome == NOT_ELIGIBLE and res.nominated_node:
        why = f"nominated to {res.nominated_node}; waiting for victims to terminate"
    elif res.outcome == PREEMPT:
        why = ""
    su = scale_up.one_node(snap, root, pods[0], gates) if scale_up is not None else ""
    return PendingRow(reason=plain, upstream=upstream, preemption=help_, preemption_why=why, victim_pods=vp,
                      victim_units=vu, outcome=res.outcome, scale_up=su, victims=tuple(sorted(p.key for p in res.victim_pods)),
                      **common)


class ScaleUp:
    """Would one more node of a template make the row schedulable without preemption? Per
    template, the snapshot plus one node of it is built once (a ClusterState shared by every row,
    like the main one); per row, the pod-group cycle (or the pod's scheduling cycle) runs on it,
    the same first step the analysis runs. Templates whose shape does not fit the row's first pod
    at all (autoscale.overschedule.template_fit) are not tried."""

    def __init__(self, templates: list):
        self.templates = templates
        self._built: dict[str, tuple[Scheduler, PodGroupScheduler, GroupIndex]] = {}

    def names(self) -> list[str]:
        return [t.name for t in self.templates]

    def _with(self, snap: Snapshot, t, gates: Gates) -> tuple[Scheduler, PodGroupScheduler, GroupIndex]:
        got = self._built.get(t.name)
        if got is None:
            from ..autoscale.scaleup import with_nodes

            grown = with_nodes(snap, {t.name: t}, {t.name: 1})
            index = GroupIndex.build(grown, composite_enabled=gates.composite_pod_group)
            sched = Scheduler(build_state(grown), nominator_pods(grown.pods))
            got = self._built[t.name] = (sched, PodGroupScheduler(sched, index, gates.topology_aware_workload_scheduling, gates.profile.no_pods_schedulable_message), index)
        return got

    def one_node(self, snap: Snapshot, root: Group | None, pod: Pod, gates: Gates) -> str:
        from ..autoscale.overschedule import template_fit

        helps = []
        for t in self.templates:
            if template_fit(pod, t) is not None:
                continue
            sched, pgs, _ = self._with(snap, t, gates)
            ok = sched.schedule(pod).ok if root is None else pgs.run_root(root).status.code == SUCCESS
            if ok:
                helps.append(t.name)
        return ", ".join(f"+1 {n}" for n in helps) if helps else "no"
