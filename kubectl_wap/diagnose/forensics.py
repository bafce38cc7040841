"""`why-preempted`: who most likely preempted a pod (or a PodGroup's pods), from what the cluster
still holds, and whether our analysis, replayed for that preemptor, picks the same victim.

Evidence, strongest first (upstream's executor.go PreemptPod writes all of it):
- a "Preempted" event on the victim: `related` is the preemptor, and the message says
  "Preempted by <pod|podgroup|compositepodgroup> <UID> on node <node>";
- the victim's DisruptionTarget condition (reason PreemptionByScheduler): its time, and its
  message "<scheduler>: preempting to accommodate a higher priority <type>";
- pods of higher priority that are nominated (waiting for victims to go) or that started on the
  victim's node after the preemption.
A preemptor is named only from this evidence; with none, the answer says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from . import gc_paused
from ..errors import UserError
from ..framework.groups import GroupIndex
from ..model import Pod, Snapshot
from ..model.lookup import available, check_object, did_you_mean
from ..preemption.analyze import analyze
from ..preemption.gates import Gates
from ..preemption.result import PREEMPT
from ..preemption.units import effective_priority
from ..queueing.kueue.evicted import matched_kind, owned_pods
from ..snapshot.decode.evidence import PREEMPTION_BY_SCHEDULER, Condition, KueuePreemption, PreemptedEvent

NAMED, LIKELY, POSSIBLE = "named by the Preempted event", "likely", "possible"
_EVENT = re.compile(r"Preempted by (pod|podgroup|compositepodgroup) (\S+) on node (\S+)")
_COND = re.compile(r"higher priority (pod|podgroup|compositepodgroup)\b")
KIND_OF = {"pod": "Pod", "podgroup": "PodGroup", "compositepodgroup": "CompositePodGroup"}
WINDOW = 600.0  # seconds after the preemption in which a start on the victim's node counts


@dataclass(slots=True)
class Suspect:
    kind: str
    namespace: str
    name: str
    priority: int
    confidence: str
    evidence: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Forensics:
    kind: str
    namespace: str
    name: str
    preempted: bool
    time: float | None = None
    node: str = ""
    priority: int | None = None
    evidence: list[str] = field(default_factory=list)
    suspects: list[Suspect] = field(default_factory=list)
    replay: str = ""
    uncertainty: list[str] = field(default_factory=list)
    # Workloads of the victim's namespace that Kueue preempted: Kueue's own preemption stops a
    # Workload's job, which removes its pods without kube-scheduler's evidence (reported beside it).
    kueue: list[KueuePreemption] = field(default_factory=list)
    kueue_owner: str = ""  # the one of them that is the victim's own Workload (its job is the victim's controller)


@gc_paused
def why_preempted(snap: Snapshot, conds: dict[tuple[str, str], Condition], events: list[PreemptedEvent], kind: str,
                  namespace: str, name: str, gates: Gates | None = None, window: float = WINDOW,
                  now: float | None = None, kueue: list[KueuePreemption] | None = None,
                  controllers: dict[tuple[str, str], str] | None = None,
                  workloads: set[tuple[str, str]] | None = None) -> Forensics:
    """`now`: when the state was captured (None: unknown); a replay long after the preemption
    runs on a cluster that may have changed since, and the answer says so. `kueue`: the Workloads
    Kueue preempted (evidence.kueue_preemptions); those of the victim's namespace are reported, and
    the victim's own is the one that belongs to the victim pods' controller (`controllers`,
    evidence.pod_controllers) or to the pod itself (Kueue's plain-pod integration). A Kueue
    Workload (`workload NAME`, `workloads`: evidence.kueue_workloads) is answered from Kueue's
    evidence alone."""
    if kind.lower() in WORKLOAD_WORDS:
        return _workload_forensics(namespace, name, kueue or [], workloads or set())
    gates = gates or Gates()
    index = GroupIndex.build(snap, composite_enabled=gates.composite_pod_group)
    k = kind.lower()
    if k in ("pod", "po", "pods"):
        pods = [p for p in snap.pods if p.namespace == namespace and p.name == name]
        names = {name}
        fk = "Pod"
    elif k in ("podgroup", "pg", "podgroups"):
        pg = index.pgs.get((namespace, name))
        if pg is None:
            check_object(snap, "PodGroup", namespace, name)  # the closest names, or where the name is (use -n)
        pods = list(index.pods(pg))
        names = {p.name for p in pods}
        fk = "PodGroup"
    else:
        raise UserError(f"unknown kind {kind!r}: want pod, podgroup or workload (Kueue's)")
    evs = [e for e in events if e.namespace == namespace and e.name in names]
    kueued = [k for k in kueue or () if k.namespace == namespace]
    cs = [c for (ns, n), c in conds.items() if ns == namespace and n in names]
    if not pods and not evs:
        # A deleted victim is named only by its events; without them, the not-found error names
        # the closest pods or the namespace that has this one, as whatif's does (model/lookup.py).
        try:
            check_object(snap, fk, namespace, name)
        except UserError as e:
            raise UserError(f"{e}; and no Preempted event names it"
                            " (read events with --events, or from a snapshot taken with --events)"
                            + _kueue_hint(kueued)) from None
    out = Forensics(fk, namespace, name, False, kueue=kueued)
    if kueued:
        out.kueue_owner = next((k.workload for k in kueued if _owns(k, snap, namespace, names, controllers or {})), "")
        out.kueue.sort(key=lambda k: k.workload != out.kueue_owner)  # the victim's own first
    if pods:
        out.priority = max(effective_priority(p, index, gates.generic_workload)[0] for p in pods)
        out.node = ", ".join(sorted({p.node_name for p in pods if p.node_name}))
    types: set[str] = set()
    for c in cs:
        if c.reason == PREEMPTION_BY_SCHEDULER:
            out.preempted = True
            out.evidence.append(f"DisruptionTarget condition on {c.name}: reason {c.reason}"
                                + (f", at {_iso(c.time)}" if c.time else "") + (f": \"{c.message}\"" if c.message else ""))
            if m := _COND.search(c.message):
                types.add(m.group(1))
            out.time = min(t for t in (out.time, c.time) if t is not None) if c.time else out.time
    named: list[tuple[str, str, PreemptedEvent]] = []
    for e in evs:
        out.preempted = True
        out.evidence.append(f"event Preempted on {e.name}" + (f" at {_iso(e.time)}" if e.time else "") + f": \"{e.message}\"")
        if m := _EVENT.search(e.message):
            types.add(m.group(1))
            named.append((m.group(1), m.group(2), e))
            if not out.node:  # the victim is gone: the event still says where the preemptor was nominated
                out.node = m.group(3)
        elif e.related_name:
            named.append((e.related_kind.lower(), e.related_uid, e))
        if out.time is None:
            out.time = e.time
    for p in pods:
        if p.disruption_target and not any(c.name == p.name for c in cs):
            out.preempted = True
            out.evidence.append(f"{p.name} has a DisruptionTarget condition (no time kept in this snapshot)")
        if p.deletion_timestamp is not None:
            out.evidence.append(f"{p.name} is terminating since {_iso(p.deletion_timestamp)}")
            if out.time is None and p.disruption_target:
                out.time = p.deletion_timestamp
    if not out.preempted and out.kueue_owner:
        out.uncertainty.append("no sign of preemption by kube-scheduler: Kueue preempted the victim's Workload (below), "
                               "which stops its job and so removes its pods")
        return out
    if not out.preempted:
        out.uncertainty.append("no sign of preemption by kube-scheduler: no DisruptionTarget condition with reason "
                               "PreemptionByScheduler and no Preempted event; it may have been evicted or deleted another way, "
                               "or the evidence is gone (events expire after an hour by default)")
        return out
    if not pods:
        out.uncertainty.append("the victim is no longer in the cluster state: its priority is unknown, so pods of any priority are considered")
    if types:
        out.evidence.append(f"the preemptor was a {', '.join(sorted(types))} (from the condition/event message)")
    out.suspects = _suspects(snap, index, gates, out, named, types, window)
    if not out.suspects:
        out.uncertainty.append("no pending, nominated or recently started pod of higher priority is left in this state: "
                               "the preemptor is not named (it may have finished or been deleted)")
    elif out.suspects[0].confidence != NAMED:
        out.uncertainty.append("no event names the preemptor (upstream's victim events give only its UID, and events expire): "
                               "the suspects are inferred from priorities, nominations and start times")
    if out.suspects:
        out.replay = _replay(snap, index, conds, gates, out, out.suspects[0], pods)
        if now is not None and out.time is not None and now - out.time > window:
            out.uncertainty.append(f"this state was captured {int((now - out.time) // 60)} minute(s) after the preemption: "
                                   "the cluster may have changed since, so the replay is less reliable")
    return out


WORKLOAD_WORDS = ("workload", "workloads", "wl", "workload.kueue.x-k8s.io", "workloads.kueue.x-k8s.io")


def _workload_forensics(namespace: str, name: str, kueue: list[KueuePreemption], workloads: set[tuple[str, str]]) -> Forensics:
    """A Kueue Workload: preempted by Kueue when its Preempted condition is True or Kueue's
    Preempted event names it (evidence.kueue_preemptions); kube-scheduler does not preempt
    Workloads, so `preempted` (kube-scheduler's) stays False and no replay is run."""
    mine = next((k for k in kueue if k.namespace == namespace and k.workload == name), None)
    if mine is None and (namespace, name) not in workloads:
        msg = f'workload "{name}" not found in namespace "{namespace}"'
        known = workloads | {(k.namespace, k.workload) for k in kueue}
        elsewhere = sorted(f"{ns}/{n}" for ns, n in known if n == name)
        if elsewhere:
            raise UserError(f"{msg} (found as {', '.join(elsewhere[:3])}: use -n)")
        if not known:
            raise UserError(f"{msg}: the cluster state holds no Kueue Workloads (workloads.kueue.x-k8s.io)")
        same_ns = sorted(n for ns, n in known if ns == namespace)
        raise UserError(f"{msg}{did_you_mean(name, same_ns)}; workloads in {namespace}: {available(same_ns)}")
    out = Forensics("Workload", namespace, name, False, kueue=[mine] if mine else [], kueue_owner=name if mine else "")
    if mine is None:
        out.uncertainty.append("no sign of preemption by Kueue: its Preempted condition is not True and no Preempted "
                               "event of Kueue's names it")
    elif not mine.preemptor_uid:
        out.uncertainty.append("the preemptor is named in the Preempted condition's message, which snapshots do not keep, "
                               "and in Kueue's Preempted event on the Workload: read it live, or from a snapshot taken "
                               "with `kubectl wap snapshot --events` (events expire after an hour by default)")
    return out


def _owns(k: KueuePreemption, snap: Snapshot, namespace: str, names: set[str],
          controllers: dict[tuple[str, str], str]) -> bool:
    """Whether the Workload is the victim pods': a victim pod's controller is the Workload's owner
    (Kueue's jobframework makes the job the Workload's controller; a single plain pod is its own), or
    the owner's pods, found as Kueue's integration for that kind finds them, include a victim pod
    (queueing/kueue/evicted.py: the PodLabelSelector per kind, so a JobSet's pods under their child
    Jobs count too, and a plain-pod group's members)."""
    own = {controllers.get((namespace, n), "") for n in names} | {f"Pod/{n}" for n in names}
    for ref in k.owners:
        if ref in own:
            return True
        kind, _, owner = ref.partition("/")
        if matched_kind(kind) and any(p.name in names for p in owned_pods(snap.pods, namespace, kind, owner)):
            return True
    return False


def _kueue_hint(kueued: list[KueuePreemption]) -> str:
    """The not-found error's pointer to Kueue's preemptions in the namespace (the pods of a Workload
    Kueue preempts are removed when its job is stopped, so they are often gone)."""
    if not kueued:
        return ""
    names = ", ".join(k.workload for k in kueued[:5]) + (f" and {len(kueued) - 5} more" if len(kueued) > 5 else "")
    return (f"; Kueue preempted Workload(s) {names} in this namespace: Kueue's preemption stops a Workload's job, "
            "which removes its pods (ask: why-preempted workload NAME)")


def _iso(t: float | None) -> str:
    import datetime as dt

    return "-" if t is None else dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _owner(index: GroupIndex, p: Pod) -> tuple[str, str, str]:
    leaf = index.leaf_of(p)
    if leaf is None:
        return ("Pod", p.namespace, p.name)
    root = index.root_of(leaf)
    return (root.kind, root.namespace, root.name)


def _suspects(snap: Snapshot, index: GroupIndex, gates: Gates, f: Forensics, named: list, types: set[str],
              window: float) -> list[Suspect]:
    by_uid: dict[str, tuple[str, str, str]] = {}
    for p in snap.pods:
        by_uid[p.uid] = ("Pod", p.namespace, p.name)
    for g in list(snap.pod_groups) + list(snap.composite_pod_groups):
        by_uid[g.uid] = (g.kind, g.namespace, g.name)
    found: dict[tuple[str, str, str], Suspect] = {}
    for typ, uid, e in named:
        key = by_uid.get(uid) or ((KIND_OF.get(typ, typ), e.related_namespace, e.related_name) if e.related_name else None)
        if key is None:
            continue
        s = found.setdefault(key, Suspect(*key, priority=0, confidence=NAMED))
        s.evidence.append(f"the Preempted event names it ({typ} {uid})")
    victim_nodes = set(f.node.split(", ")) if f.node else set()
    prio = f.priority if f.priority is not None else -(2**63)
    # Per suspect: (pod, node, on the victim's node) for nominated pods and for pods started after the preemption.
    nominated: dict[tuple[str, str, str], list[tuple[str, str, bool]]] = {}
    started: dict[tuple[str, str, str], list[tuple[str, str, bool]]] = {}
    prios: dict[tuple[str, str, str], int] = {}
    kinds = {KIND_OF[t] for t in types}
    named_ns = {k[1] for k in found}
    for p in snap.pods:
        if p.terminal:
            continue
        if p.namespace in named_ns and (key := _owner(index, p)) in found:
            found[key].priority = max(found[key].priority, p.priority or 0)
        nominated_here = bool(p.nominated_node_name) and not p.node_name
        started_here = (bool(p.node_name) and f.time is not None and p.start_time is not None
                        and f.time <= p.start_time <= f.time + window)
        if (p.priority or 0) <= prio or not (nominated_here or started_here):
            continue
        key = _owner(index, p)  # only for the few pods that can be suspects: a tree walk per pod
        if kinds and key[0] not in kinds:
            continue
        if nominated_here:
            nominated.setdefault(key, []).append((p.name, p.nominated_node_name, p.nominated_node_name in victim_nodes))
        else:
            started.setdefault(key, []).append((p.name, p.node_name, p.node_name in victim_nodes))
        prios[key] = max(prios.get(key, 0), p.priority or 0)
    for key in list(nominated) + [k for k in started if k not in nominated]:
        s = found.get(key)
        if s is None:
            s = found[key] = Suspect(*key, priority=prios[key], confidence=POSSIBLE)
        for what, rows in (("nominated", nominated.get(key, [])), ("started after the preemption", started.get(key, []))):
            if not rows:
                continue
            here = [n for n, _, on in rows if on]
            nodes = sorted({node for _, node, _ in rows})
            line = f"{len(rows)} pod(s) {what} on {len(nodes)} node(s) ({', '.join(nodes[:4])}{' ...' if len(nodes) > 4 else ''})"
            if here:
                line += f"; {', '.join(here[:3])}{' ...' if len(here) > 3 else ''} on the victim's node"
            s.evidence.append(line)
            # Workload-aware preemption takes victims anywhere in the cluster: a nominated group is likely.
            if s.confidence != NAMED and (here or key[0] != "Pod"):
                s.confidence = LIKELY
    rank = {NAMED: 0, LIKELY: 1, POSSIBLE: 2}
    return sorted(found.values(), key=lambda s: (rank[s.confidence], -s.priority, s.namespace, s.name))


def _replay(snap: Snapshot, index: GroupIndex, conds: dict, gates: Gates, f: Forensics, s: Suspect, victims: list[Pod]) -> str:
    """Undo the preemption visible in the state (victims terminating by preemption, the suspect's
    nominations), run our analysis for the suspect, and compare its victims with this one."""
    if s.kind == "Pod":
        theirs = [p for p in snap.pods if p.namespace == s.namespace and p.name == s.name]
    else:
        root = index.pgs.get((s.namespace, s.name)) if s.kind == "PodGroup" else index.cpgs.get((s.namespace, s.name))
        theirs = [p for leaf in (index.leaves_under(root) if root else []) for p in index.pods(leaf)]
    if not theirs or all(p.node_name for p in theirs):
        return "not replayed: the preemptor is already bound (or gone), so this state is after the preemption completed"
    mine = {p.uid for p in theirs}
    t = f.time

    def undo(p: Pod) -> Pod:
        if p.uid in mine and p.nominated_node_name:
            return replace(p, nominated_node_name="")
        c = conds.get((p.namespace, p.name))
        same_time = t is None or c is None or c.time is None or abs(c.time - t) <= 60
        if p.terminating_by_preemption and same_time:
            return replace(p, deletion_timestamp=None, disruption_target=False)
        return p

    before = replace(snap, pods=[undo(p) for p in snap.pods])
    res = analyze(before, s.kind.lower(), s.namespace, s.name, gates)
    if res.outcome != PREEMPT:
        return f"not consistent: the replay for {s.kind} {s.namespace}/{s.name} answers {res.outcome} ({res.message})"
    picked = {p.key for p in res.victim_pods}
    me = {p.key for p in victims}
    if me & picked:
        return (f"consistent: replaying our analysis for {s.kind} {s.namespace}/{s.name} on the state before the preemption "
                f"picks this victim ({len(picked)} victim pod(s) in {len(res.victims)} unit(s))")
    return (f"not consistent: the replay for {s.kind} {s.namespace}/{s.name} picks "
            + ", ".join(sorted(picked)[:5]) + (" ..." if len(picked) > 5 else "") + " instead")
