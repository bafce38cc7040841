"""Human renderings of a report: rich tables for `whatif`, numbered steps for `explain`, and the
importance ranking for `rank`. Only this module and the CLI print."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

_OUTCOME_STYLE = {
    "NoPreemptionNeeded": "bold green",
    "Preempt": "bold yellow",
    "Unschedulable": "bold red",
    "NotEligible": "bold magenta",
    "Invalid": "bold red",
}


def _table(title: str | None, headers: list[str], rows: list[list[Any]], no_headers: bool) -> Table:
    t = Table(title=title, box=box.SIMPLE, show_header=not no_headers, title_justify="left", pad_edge=False)
    for h in headers:
        t.add_column(h, overflow="fold")
    for r in rows:
        t.add_row(*[("" if c is None else str(c)) for c in r])
    return t


def render_whatif(doc: dict, console: Console, wide: bool = False, no_headers: bool = False) -> None:
    pre = doc["preemptor"]
    style = _OUTCOME_STYLE.get(doc["outcome"], "bold")
    s = doc["summary"]
    verdict = {
        "Preempt": f"{s['victimPods']} pod(s) in {s['victimUnits']} unit(s) would be preempted; {s['reprievedUnits']} candidate unit(s) spared",
        "NoPreemptionNeeded": f"fits without preemption ({s['placedPods']} pod(s) placed)",
    }.get(doc["outcome"], doc["message"])
    console.print(f"[{style}]{doc['outcome']}[/]: {verdict}", highlight=False)
    console.print(
        f"Preemptor: {pre['kind']} {pre['namespace']}/{pre['name']}  priority {pre['priority']}  "
        f"policy {pre['preemptionPolicy']}  pending pods {pre['pods']}  running {pre['runningPods']}",
        highlight=False,
    )
    if doc["message"] and doc["outcome"] in ("Preempt", "NoPreemptionNeeded"):
        console.print(f"Message: {doc['message']}", highlight=False)
    for w in doc["warnings"]:
        console.print(f"[yellow]Warning:[/] {w}", highlight=False)
    if doc["outcome"] == "Unschedulable" and doc.get("unplaced") and not wide:
        first = doc["unplaced"][0]
        console.print(f"Why: pod {first['pod']['namespace']}/{first['pod']['name']}: {first['message']}", highlight=False)
    if doc["placements"]:
        per: dict[str, list[str]] = {}
        for pl in doc["placements"]:
            per.setdefault(pl["node"], []).append(pl["pod"]["name"])
        rows = [[n, len(p), ", ".join(p) if wide else _short(p)] for n, p in sorted(per.items())]
        console.print(_table("Placement", ["NODE", "PODS", "NAMES"], rows, no_headers))
    if doc["victimUnits"]:
        rows = []
        for v in doc["victimUnits"]:
            u = v["unit"]
            nodes = sorted({p["node"] for p in v["pods"]})
            row = [f"{u['namespace']}/{u['name']}", u["kind"], u["disruptionMode"] or "-", u["priority"], len(v["pods"]),
                   ", ".join(nodes), "yes" if v["violatesPDB"] else "no"]
            if wide:
                row.append(v["reason"])
            rows.append(row)
        headers = ["UNIT", "KIND", "MODE", "PRIORITY", "PODS", "NODES", "PDB"] + (["REASON"] if wide else [])
        console.print(_table("Victims", headers, rows, no_headers))
    if doc["reprieved"]:
        rows = []
        placed_nodes = {pl["node"] for pl in doc["placements"]}
        shown = doc["reprieved"]
        if not wide:
            # Without -o wide, show the spared units that shared a node with the preemptor's
            # placement (the interesting decisions); count the rest.
            shown = [v for v in shown if placed_nodes & {p["node"] for p in v["pods"]}]
        hidden = len(doc["reprieved"]) - len(shown)
        for v in shown:
            u = v["unit"]
            row = [f"{u['namespace']}/{u['name']}", u["kind"], u["disruptionMode"] or "-", u["priority"], len(v["pods"]),
                   "yes" if v["violatesPDB"] else "no"]
            if wide:
                row.append(v["reason"])
            rows.append(row)
        headers = ["UNIT", "KIND", "MODE", "PRIORITY", "PODS", "PDB"] + (["REASON"] if wide else [])
        title = "Spared (reprieved) on the placement's nodes" if not wide else "Spared (reprieved)"
        if rows:
            console.print(_table(title, headers, rows, no_headers))
        if hidden:
            console.print(f"{hidden} more candidate unit(s) on other nodes were spared (-o wide lists them).", highlight=False)
    if doc.get("unplaced") and wide:
        rows = [[f"{u['pod']['namespace']}/{u['pod']['name']}", u["message"]] for u in doc["unplaced"]]
        console.print(_table("Not placed", ["POD", "WHY"], rows, no_headers))


def _short(names: list[str], n: int = 4) -> str:
    return ", ".join(names[:n]) + (f", ... (+{len(names) - n})" if len(names) > n else "")


def render_explain(doc: dict, console: Console) -> None:
    console.print(f"Outcome: {doc['outcome']}: {doc['message']}", highlight=False)
    for i, s in enumerate(doc["explanation"], 1):
        console.print(f"{i:>3}. {s}", highlight=False)
    for w in doc["warnings"]:
        console.print(f"[yellow]Warning:[/] {w}", highlight=False)


def render_rank(rows: list[dict], console: Console, wide: bool = False, no_headers: bool = False) -> None:
    headers = ["#", "UNIT", "KIND", "MODE", "PRIORITY", "PODS", "STARTED", "PDB"] + (["NODES"] if wide else [])
    out = []
    for r in rows:
        row = [r["rank"], f"{r['namespace']}/{r['name']}", r["kind"], r["disruptionMode"] or "-", r["priority"], r["pods"],
               r["earliestStart"] or "-", "violates" if r["violatesPDB"] else "-"]
        if wide:
            row.append(", ".join(r["nodes"]))
        out.append(row)
    console.print(_table(None, headers, out, no_headers))


def render_autoscale(a: dict, console: Console, no_headers: bool = False) -> None:
    """Options side by side: A) preempt, B) add nodes, C) mixed."""
    pre = a.get("preempt") or {}
    add = a.get("addNodes")
    rows = [["A) preempt", f"{pre.get('victimPods', 0)} pod(s) in {pre.get('victimUnits', 0)} unit(s)",
             ", ".join(pre.get("priorityClasses") or []) or "-", "-"]]
    if add:
        nodes = ", ".join(f"{n['count']} x {n['template']}" for n in add["nodes"])
        cost = add.get("costPerHour")
        rows.append(["B) add nodes", nodes, "no preemption", f"{cost:g}/h" if cost is not None else "-"])
    else:
        rows.append(["B) add nodes", "no template combination within maxNodes avoids preemption", "-", "-"])
    for m in a.get("mixed") or []:
        added = ", ".join(f"{n['count']} x {n['template']}" for n in m["added"])
        rows.append(["C) mixed", f"add {added}", f"{m['victimPods']} pod(s) in {m['victimUnits']} unit(s) still preempted", "-"])
    console.print(_table("Autoscaling what-if", ["OPTION", "ACTION", "DISRUPTION", "COST"], rows, no_headers))
    if a.get("overschedule"):
        o = a["overschedule"]
        console.print(f"Overscheduling check (x{o.get('multiplier')}): {'admitted' if o.get('admitted') else 'rejected'}", highlight=False)
    if a.get("noScaleUpHelps"):
        console.print("No scale-up helps: some pod fits no node template.", highlight=False)
    for w in a.get("warnings") or []:
        console.print(f"[yellow]Warning:[/] {w}", highlight=False)
