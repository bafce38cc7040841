"""`kubectl wap pending --compare-versions A,B`: the document (kind PendingVersionDiff) and its table.

Plain data from diagnose/upgrade.py's records; the renderer only prints it."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from .document import API_VERSION
from .tables import print_table, print_warnings, say
from .escape import inert


def _answer(r: Any) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"outcome": r.outcome or None, "preemption": r.preemption, "victimPods": r.victim_pods, "victimUnits": r.victim_units,
            "victims": list(r.victims), "reason": r.reason}


def version_diff_document(changes: list[Any], compared: int, versions: list[dict[str, Any]], source: str,
                          namespace: str | None, warnings: list[str]) -> dict[str, Any]:
    """`versions`: profile_fields() of each side, in order."""
    return {
        "apiVersion": API_VERSION, "kind": "PendingVersionDiff", "source": source, "namespace": namespace,
        "versions": [{"schedulerVersion": v["schedulerVersion"], "schedulerVersionBuild": v["schedulerVersionBuild"],
                      "schedulerVersionReleased": v["schedulerVersionReleased"]} for v in versions],
        "compared": compared, "changed": len(changes),
        "items": [{"kind": c.kind, "namespace": c.namespace, "name": c.name, "priority": c.priority, "changed": list(c.changed),
                   "before": _answer(c.before), "after": _answer(c.after),
                   "victimsAdded": list(c.victims_added), "victimsRemoved": list(c.victims_removed)} for c in changes],
        "warnings": warnings,
    }


def _cell(a: dict | None) -> str:
    if a is None:
        return "not pending"
    if a["preemption"] == "yes":
        return f"preempts {a['victimPods']} pod(s) in {a['victimUnits']} unit(s)"
    if a["outcome"] == "NoPreemptionNeeded":
        return "fits now"
    return f"{a['preemption']}: {a['reason']}" if a["preemption"] not in ("-", "") else a["reason"]


def _change(item: dict) -> str:
    """The cell: counts only (a gang's victim list would make the table unreadable at 80 columns);
    the names follow the table (_names)."""
    parts = []
    if item["victimsAdded"]:
        parts.append(f"+{len(item['victimsAdded'])} victim(s)")
    if item["victimsRemoved"]:
        parts.append(f"-{len(item['victimsRemoved'])} spared")
    if not parts:
        parts.append(", ".join(item["changed"]))
    return ", ".join(parts)


def _names(item: dict) -> list[str]:
    lines = []
    if item["victimsAdded"]:
        lines.append("also preempted: " + ", ".join(item["victimsAdded"]))
    if item["victimsRemoved"]:
        lines.append("spared: " + ", ".join(item["victimsRemoved"]))
    return [f"  {item['namespace']}/{item['name']}: {ln}" for ln in lines]


@inert
def render_version_diff(doc: dict, console: Console, no_headers: bool = False, err: Console | None = None) -> None:
    a, b = (v["schedulerVersion"] for v in doc["versions"])
    builds = ", ".join(f"{v['schedulerVersion']} as kube-scheduler {v['schedulerVersionBuild']}" for v in doc["versions"])
    if not doc["items"]:
        say(err or console, f"No pending object's answer changes between Kubernetes {a} and {b} rules "
                            f"({doc['compared']} compared; {builds}).")
        print_warnings(err or console, doc.get("warnings") or [])
        return
    headers = ["KIND", "NAMESPACE", "NAME", "PRIORITY", a.upper(), b.upper(), "VICTIM CHANGE"]
    rows = [[i["kind"], i["namespace"], i["name"], i["priority"], _cell(i["before"]), _cell(i["after"]), _change(i)]
            for i in doc["items"]]
    print_table(console, None, headers, rows, no_headers)
    names = [ln for i in doc["items"] for ln in _names(i)]
    if names and not no_headers:
        console.print("Victim changes", highlight=False)
        for ln in names:  # a gang's list of names: wrapped at the terminal's width, as pending's reasons
            say(console, ln, indent="    ")
    if not no_headers:
        console.print()
        say(console, f"{doc['changed']} of {doc['compared']} pending object(s) get another answer under Kubernetes {b} "
                     f"rules than under {a} ({builds}).")
    print_warnings(err or console, doc.get("warnings") or [])
