"""Preemption evidence in raw objects, for `why-preempted`: the victims' DisruptionTarget
conditions and the "Preempted" events. The model keeps only what kube-scheduler reads; these
are read from the raw items (a live read, or a snapshot that kept them)."""

from __future__ import annotations

import datetime as dt
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
            rel = as_dict(o.get("related"))
            t = parse_time(o.get("lastTimestamp")) or parse_time(o.get("eventTime")) or parse_time(o.get("firstTimestamp"))
            events.append(PreemptedEvent(
                as_str(inv.get("namespace")) or as_str(md.get("namespace")) or "default", as_str(inv.get("name")), t,
                as_str(o.get("message")) or as_str(o.get("note")), as_str(rel.get("kind")), as_str(rel.get("namespace")),
                as_str(rel.get("name")), as_str(rel.get("uid"))))
    return conds, events


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
