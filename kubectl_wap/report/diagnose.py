"""Documents and tables for the diagnosis commands: `pending`, `why-preempted`, `whatif --optimal`.

Documents are plain data (the JSON/YAML contract, kind PendingReport / PreemptionForensics);
the renderers only print them."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from rich.console import Console

from .document import API_VERSION
from .tables import _print_table


def _iso(t: float | None) -> str | None:
    if t is None:
        return None
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def age(seconds: float | None) -> str:
    """kubectl's short age: 45s, 12m, 5h, 3d."""
    if seconds is None:
        return "-"
    s = max(int(seconds), 0)
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= n:
            return f"{s // n}{unit}"
    return f"{s}s"


def pending_document(t: Any, source: str = "") -> dict[str, Any]:
    rows = []
    for r in t.rows:
        rows.append({
            "kind": r.kind, "namespace": r.namespace, "name": r.name, "priority": r.priority,
            "pendingPods": r.pending_pods, "created": _iso(r.created),
            "ageSeconds": None if r.created is None else max(int(t.now - r.created), 0),
            "reason": r.reason, "upstreamReason": r.upstream or None, "blockers": list(r.blockers),
            "preemption": {"helps": r.preemption, "victimPods": r.victim_pods, "victimUnits": r.victim_units,
                           "outcome": r.outcome or None, "why": r.preemption_why or None},
            "scaleUp": r.scale_up or None, "notes": list(r.notes),
        })
    return {"apiVersion": API_VERSION, "kind": "PendingReport", "source": source, "now": _iso(t.now),
            "nodeTemplates": t.templates, "items": rows, "warnings": list(t.warnings)}


def _preempt_cell(p: dict) -> str:
    if p["helps"] == "yes":
        return f"yes: {p['victimPods']} pod(s) in {p['victimUnits']} unit(s)"
    if p["helps"] == "not allowed" and p.get("why"):
        return f"not allowed: {p['why'].split(' (')[0]}"
    return p["helps"]


def render_pending(doc: dict, console: Console, wide: bool = False, no_headers: bool = False, err: Console | None = None) -> None:
    headers = ["KIND", "NAMESPACE", "NAME", "PRIORITY", "PODS", "AGE", "REASON", "PREEMPTION", "ADD-NODE"]
    if wide:
        headers += ["UPSTREAM", "BLOCKERS", "NOTES"]
    rows = []
    for r in doc["items"]:
        row = [r["kind"], r["namespace"], r["name"], r["priority"], r["pendingPods"], age(r["ageSeconds"]),
               r["reason"], _preempt_cell(r["preemption"]), r["scaleUp"] or "-"]
        if wide:
            row += [r["upstreamReason"] or "-", "; ".join(r["blockers"][1:]) or "-", "; ".join(r["notes"]) or "-"]
        rows.append(row)
    if not rows:
        (err or console).print("No pending pods or pod groups.", highlight=False)
        return
    _print_table(console, None, headers, rows, no_headers)
    if not wide and not no_headers:
        ups = [(f"{r['namespace']}/{r['name']}", r["upstreamReason"]) for r in doc["items"] if r["upstreamReason"]]
        if ups:
            console.print("\nUpstream reasons (kube-scheduler's own words):", highlight=False)
            for k, u in ups:
                console.print(f"  {k}: {u}", highlight=False)
    for w in doc.get("warnings") or []:
        (err or console).print(f"[yellow]Warning:[/] {w}", highlight=False)
