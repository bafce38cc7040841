"""Preemption evidence in raw objects, for `why-preempted`: the victims' DisruptionTarget
conditions and the "Preempted" events, and the Workloads Kueue preempted. The model keeps only what
kube-scheduler reads; these are read from the raw items (a live read, or a snapshot that kept them)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any, Iterable

from .fields import as_dict, as_list, as_str

PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


@dataclass(slots=True, frozen=True)
class Condition:
    namespace: str
    name: str
    reason: str
    time: float | None
    message: str


@dataclass(slots=True, frozen=True)
class PreemptedEvent:
    namespace: str  # the victim's
    name: str
    time: float | None
    message: str  # "Preempted by <type> <uid> on node <node>" (executor.go PreemptPod)
    related_kind: str = ""  # the preemptor, when the event carries `related`
    related_namespace: str = ""
    related_name: str = ""
    related_uid: str = ""


@dataclass(slots=True, frozen=True)
class KueuePreemption:
    """A Workload that Kueue preempted. Kueue v0.17.0 (pkg/scheduler/preemption/preemption.go
    IssuePreemptions) evicts it with a Preempted condition and records a "Preempted" event on it
    whose message (preemptionMessage) names the preemptor Workload's UID and the reason; a snapshot
    keeps the condition's type and time, and the event only when taken with --events."""

    namespace: str
    workload: str
    time: float | None
    reason: str = ""  # the message's human-readable reason ("prioritization in the ClusterQueue"); "" without the event
    preemptor: str = ""  # "namespace/name" of the Workload with the message's UID, when it is in the state
    preemptor_uid: str = ""
    # "Kind/name" of what the Workload belongs to: its controller (a Job, a JobSet, ..., a single
    # plain pod: jobframework's SetControllerReference) and the pods of a plain-pod group (the pod
    # integration's SetOwnerReference, not a controller).
    owners: tuple[str, ...] = ()
    readmitted: bool = False  # admitted again since (the Preempted condition False): the job runs again
    readmitted_at: float | None = None


def controller_of(md: dict) -> str:
    """"Kind/name" of an object's controller reference (metav1.GetControllerOf: the first with
    controller true), "" without one."""
    for r in as_list(md.get("ownerReferences")):
        if isinstance(r, dict) and r.get("controller") is True:
            return f"{as_str(r.get('kind'))}/{as_str(r.get('name'))}"
    return ""


def pod_controllers(items: Iterable[Any]) -> dict[tuple[str, str], str]:
    """(namespace, pod) -> its controller "Kind/name", for the pods that have one: how a pod is
    matched to the Workload Kueue made for its job (the Workload's controller is the same job)."""
    out: dict[tuple[str, str], str] = {}
    for o in items:
        if isinstance(o, dict) and o.get("kind") == "Pod":
            md = as_dict(o.get("metadata"))
            owner = controller_of(md)
            if owner:
                out[(as_str(md.get("namespace")) or "default", as_str(md.get("name")))] = owner
    return out


# preemptionMessage: "Preempted to accommodate a workload (UID: %s, JobUID: %s) due to %s; preemptor
# path: %s; preemptee path: %s" (the event appends the priorities after another "; ").
_KUEUE_MESSAGE = re.compile(r"^Preempted to accommodate a workload \(UID: ([^,]*), JobUID: [^)]*\) due to ([^;]*)")


def _is_kueue_workload(o: dict) -> bool:
    return o.get("kind") == "Workload" and str(o.get("apiVersion", "")).startswith("kueue.x-k8s.io/")


def parse_time(t: Any) -> float | None:
    if not isinstance(t, str) or not t:
        return None
    try:
        return dt.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def collect_evidence(items: Iterable[Any]) -> tuple[dict[tuple[str, str], Condition], list[PreemptedEvent]]:
    conds: dict[tuple[str, str], Condition] = {}
    events: list[PreemptedEvent] = []
    for o in items:
        if not isinstance(o, dict):
            continue
        kind = o.get("kind")
        md = as_dict(o.get("metadata"))  # any other shape: build_snapshot reports it, one line
        if kind == "Pod":
            for c in as_list(as_dict(o.get("status")).get("conditions")):
                if isinstance(c, dict) and c.get("type") == "DisruptionTarget" and c.get("status") == "True":
                    # as_str: a mistyped field reads as unset, as everywhere in the loaders (fields.py)
                    ns, name = as_str(md.get("namespace")) or "default", as_str(md.get("name"))
                    conds[(ns, name)] = Condition(ns, name, as_str(c.get("reason")), parse_time(c.get("lastTransitionTime")),
                                                  as_str(c.get("message")))
        elif kind == "Event" and o.get("reason") == "Preempted":
            inv = as_dict(o.get("involvedObject")) or as_dict(o.get("regarding"))
            if as_str(inv.get("kind")) not in ("", "Pod"):
                continue  # kube-scheduler records its Preempted event on the victim pod (executor.go PreemptPod); Kueue's is on a Workload
            rel = as_dict(o.get("related"))
            t = parse_time(o.get("lastTimestamp")) or parse_time(o.get("eventTime")) or parse_time(o.get("firstTimestamp"))
            events.append(PreemptedEvent(
                as_str(inv.get("namespace")) or as_str(md.get("namespace")) or "default", as_str(inv.get("name")), t,
                as_str(o.get("message")) or as_str(o.get("note")), as_str(rel.get("kind")), as_str(rel.get("namespace")),
                as_str(rel.get("name")), as_str(rel.get("uid"))))
    return conds, events


# HumanReadablePreemptionReasons (preemption.go): the condition's reason in the message's words.
_KUEUE_REASONS = {"InClusterQueue": "prioritization in the ClusterQueue", "InCohortReclamation": "reclamation within the cohort",
                  "InCohortFairSharing": "Fair Sharing within the cohort",
                  "InCohortReclaimWhileBorrowing": "reclamation within the cohort while borrowing"}


def kueue_preemptions(items: Iterable[Any]) -> list[KueuePreemption]:
    """The Workloads Kueue preempted, by namespace and name. Kueue creates the Preempted condition
    only when it preempts (SetPreemptedCondition, True, its message preemptionMessage's) and turns it
    False when it admits the Workload again (SetQuotaReservation's resetActiveCondition: "Previously:
    " + the message, lastTransitionTime then the readmission's). The preemptor's UID and the reason
    come from the condition's message when the input kept it (a `kubectl get -o json` dump; our
    snapshots keep a condition's type, status and time only), else from Kueue's "Preempted" event on
    the Workload (the newest for this Workload's UID)."""
    workloads: dict[tuple[str, str], dict[str, Any]] = {}
    uids: dict[str, str] = {}
    said: dict[tuple[str, str], tuple[str, str, float | None]] = {}
    events: list[dict[str, Any]] = []
    for o in items:  # one pass: `items` may be a stream (a snapshot file's items are read once)
        if not isinstance(o, dict):
            continue
        if o.get("kind") == "Event" and o.get("reason") == "Preempted":
            events.append(o)  # read once every Workload is known: an event names one by name and UID
        elif _is_kueue_workload(o):
            md = as_dict(o.get("metadata"))
            ns, name = as_str(md.get("namespace")) or "default", as_str(md.get("name"))
            workloads[(ns, name)] = o
            if as_str(md.get("uid")):
                uids[as_str(md.get("uid"))] = f"{ns}/{name}"
    for o in events:
        md = as_dict(o.get("metadata"))
        inv = as_dict(o.get("involvedObject")) or as_dict(o.get("regarding"))
        m = _KUEUE_MESSAGE.match(as_str(o.get("message")) or as_str(o.get("note")))
        if as_str(inv.get("kind")) != "Workload" or m is None:
            continue
        key = (as_str(inv.get("namespace")) or as_str(md.get("namespace")) or "default", as_str(inv.get("name")))
        known = as_str(as_dict(workloads.get(key, {}).get("metadata")).get("uid"))
        if known and as_str(inv.get("uid")) and as_str(inv.get("uid")) != known:
            continue  # about an earlier Workload of that name (its job was re-created)
        t = parse_time(o.get("lastTimestamp")) or parse_time(o.get("eventTime")) or parse_time(o.get("firstTimestamp"))
        if key not in said or (t or 0.0) >= (said[key][2] or 0.0):
            said[key] = (m.group(1), m.group(2).strip(), t)
    out = []
    for key in sorted(set(workloads) | set(said)):
        cond = next((c for c in as_list(as_dict(workloads.get(key, {}).get("status")).get("conditions"))
                     if isinstance(c, dict) and c.get("type") == "Preempted" and c.get("status") in ("True", "False")), None)
        if cond is None and key not in said:
            continue
        uid, reason, t = said.get(key, ("", "", None))
        readmitted = cond is not None and cond.get("status") == "False"
        m = _KUEUE_MESSAGE.match(as_str(cond.get("message")).removeprefix("Previously: ")) if cond is not None else None
        if m is not None:
            uid, reason = m.group(1), m.group(2).strip()
        elif cond is not None and not readmitted and not reason:
            reason = _KUEUE_REASONS.get(as_str(cond.get("reason")), "")
        when = parse_time(cond.get("lastTransitionTime")) if cond is not None else None
        md = as_dict(workloads.get(key, {}).get("metadata"))
        refs = [r for r in as_list(md.get("ownerReferences")) if isinstance(r, dict)]
        owners = tuple(dict.fromkeys(f"{as_str(r.get('kind'))}/{as_str(r.get('name'))}" for r in refs
                                     if r.get("controller") is True or r.get("kind") == "Pod"))
        out.append(KueuePreemption(key[0], key[1], t if readmitted or when is None else when, reason, uids.get(uid, ""), uid,
                                   owners, readmitted, when if readmitted else None))
    return out


def kueue_workloads(items: Iterable[Any]) -> set[tuple[str, str]]:
    """(namespace, name) of every Kueue Workload in the raw items (why-preempted workload NAME)."""
    out: set[tuple[str, str]] = set()
    for o in items:
        if isinstance(o, dict) and _is_kueue_workload(o):
            md = as_dict(o.get("metadata"))
            out.add((as_str(md.get("namespace")) or "default", as_str(md.get("name"))))
    return out


def claim_blockers(items: Iterable[Any], listed: bool) -> dict[tuple[str, str], list[str]] | None:
    """Unscheduled pods whose PersistentVolumeClaims are not bound: (namespace, pod) -> reasons.
    `listed`: PVCs were read (live with the grant, `snapshot --pvcs`, or PVC objects in the
    files); otherwise None: nothing is known about them. A generic ephemeral volume's claim is
    `<pod>-<volume>` (created by the ephemeral volume controller)."""
    phases: dict[tuple[str, str], str] = {}
    wanting: list[tuple[str, str, list[str]]] = []
    for o in items:
        if not isinstance(o, dict):
            continue
        md = as_dict(o.get("metadata"))  # any other shape: build_snapshot reports it, one line
        ns = as_str(md.get("namespace")) or "default"  # a map or list is no key (as_str: read as unset)
        if o.get("kind") == "PersistentVolumeClaim":
            phases[(ns, as_str(md.get("name")))] = str(as_dict(o.get("status")).get("phase") or "Pending")
        elif o.get("kind") == "Pod" and not as_dict(o.get("spec")).get("nodeName"):
            claims = []
            for v in as_list(as_dict(o.get("spec")).get("volumes")):
                if not isinstance(v, dict):
                    continue
                if isinstance(v.get("persistentVolumeClaim"), dict):
                    claims.append(as_str(v["persistentVolumeClaim"].get("claimName")))
                elif isinstance(v.get("ephemeral"), dict):
                    claims.append(f"{as_str(md.get('name'))}-{as_str(v.get('name'))}")
            if claims:
                wanting.append((ns, as_str(md.get("name")), claims))
    if not listed and not phases:
        return None
    out: dict[tuple[str, str], list[str]] = {}
    for ns, pod, claims in wanting:
        why = []
        for c in claims:
            phase = phases.get((ns, c))
            if phase is None:
                why.append(f"PVC {c} does not exist")
            elif phase != "Bound":
                why.append(f"PVC {c} is {phase} (not bound)")
        if why:
            out[(ns, pod)] = why
    return out
