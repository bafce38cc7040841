"""One paragraph per report (issue 36): what an assistant reads first from an MCP tool's answer,
beside the report itself. Pure functions over the documents the commands print with -o json; no
number here that the document does not hold."""

from __future__ import annotations

from collections import Counter

from .headline import headline


def _obj(d: dict) -> str:
    return f"{d.get('kind', '?')} {d.get('namespace', '?')}/{d.get('name', '?')}"


def _warned(doc: dict, text: str) -> str:
    n = len(doc.get("warnings") or [])
    return text + (f" {n} warning(s) in the report's warnings." if n else "")


def whatif_summary(doc: dict) -> str:
    pre = doc.get("preemptor") or {}
    parts = [f"{doc['outcome']} for {_obj(pre)}: {doc.get('message') or ''}".rstrip(": ").rstrip()]
    if not parts[0].endswith("."):
        parts[0] += "."
    for label, text in headline(doc):
        parts.append(f"{label}: {text}.")
    s = doc.get("summary") or {}
    if s:
        parts.append(f"{s.get('placedPods', 0)} preemptor pod(s) placed, {s.get('reprievedUnits', 0)} candidate unit(s) spared.")
    return _warned(doc, " ".join(parts))


def explain_summary(doc: dict) -> str:
    steps = doc.get("explanation") or []
    return whatif_summary(doc) + f" The explanation has {len(steps)} step(s)" + (f"; the last: {steps[-1]}" if steps else ".")


def pending_summary(doc: dict) -> str:
    items = doc.get("items") or []
    where = f"namespace {doc['namespace']}" if doc.get("namespace") else "all namespaces"
    if not items:
        return _warned(doc, f"Nothing is pending in {where}.")
    helps = Counter((i.get("preemption") or {}).get("helps", "-") for i in items)
    blocked = sum(1 for i in items if i.get("blockers"))
    scale = sum(1 for i in items if i.get("scaleUp") not in (None, "", "no", "-"))
    first = items[0]
    text = (f"{len(items)} pending object(s) in {where}. Preemption: "
            + ", ".join(f"{k} {n}" for k, n in sorted(helps.items(), key=lambda kv: (-kv[1], kv[0])))
            + f". {blocked} blocked by something other than the scheduler; {scale} would fit with one added node. "
            f"First: {_obj(first)}: {first.get('reason', '')}.")
    return _warned(doc, text)


def versions_summary(doc: dict) -> str:
    changes = doc.get("changes") or []
    return _warned(doc, f"{len(changes)} pending object(s) get a different answer between the two versions compared.")


def forensics_summary(doc: dict) -> str:
    v = doc.get("victim") or {}
    if not doc.get("preempted"):
        why = (doc.get("uncertainty") or ["no sign of preemption by kube-scheduler"])[0]
        return f"{_obj(v)} shows no preemption by kube-scheduler: {why}"
    suspects = doc.get("suspects") or []
    if not suspects:
        return f"{_obj(v)} was preempted; no preemptor could be identified from the evidence."
    s = suspects[0]
    return f"{_obj(v)} was preempted; the most likely preemptor is {_obj(s) if 'kind' in s else s}."


def simulation_summary(doc: dict) -> str:
    s = doc.get("summary") or {}
    t = doc.get("totals") or {}
    by_ns = t.get("evictionsByNamespace") or {}
    text = (f"{s.get('cycles', 0)} scheduling cycle(s) until {doc.get('stopReason', 'the end')}: {s.get('boundPods', 0)} pod(s) bound, "
            f"{s.get('preemptions', 0)} preemption(s) evicting {s.get('evictedPods', 0)} pod(s)"
            + (f" ({', '.join(f'{k} {n}' for k, n in by_ns.items())})" if by_ns else "")
            + f", {s.get('recreatedPods', 0)} recreated; {s.get('pendingObjects', 0)} object(s) still pending; "
            f"{len(doc.get('storms') or [])} preemption storm(s).")
    return _warned(doc, text)


def rank_summary(doc: dict) -> str:
    units = doc.get("units") or []
    order = "most at risk first" if doc.get("order") == "risk" else "most protected first"
    text = f"{doc.get('totalUnits', len(units))} unit(s) a preemptor of priority {doc.get('preemptorPriority')} could take ({order})"
    if units:
        u = units[0]
        text += f"; first: {_obj(u)} at priority {u.get('priority')} on {', '.join(u.get('nodes') or []) or 'no node'}"
    return _warned(doc, text + ".")


def diff_summary(doc: dict) -> str:
    a, b = doc.get("a") or {}, doc.get("b") or {}
    if not doc.get("changed"):
        return _warned(doc, f"The scenarios agree: {a.get('outcome')} with {a.get('victimPods', 0)} victim pod(s).")
    return _warned(doc, f"The scenarios differ: A {a.get('outcome')} with {a.get('victimPods', 0)} victim pod(s), "
                        f"B {b.get('outcome')} with {b.get('victimPods', 0)}; {len(doc.get('victimsAdded') or [])} victim(s) added, "
                        f"{len(doc.get('victimsRemoved') or [])} removed, {len(doc.get('placementChanges') or [])} placement change(s).")
