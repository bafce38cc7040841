"""Human renderings of a report: rich tables for `whatif`, numbered steps for `explain`, and the
importance ranking for `rank`. Only this module and the CLI print."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

_OUTCOME_STYLE = {
    "NoPreemptionNeeded": "bold green",
    "Preempt": "bold yellow",
    "Unschedulable": "bold red",
    "NotEligible": "bold magenta",
    "Invalid": "bold red",
}


def _warning(w: str) -> Text:
    # Styled without markup: the consoles print with markup off, so text from the input (a name
    # like `a[/x]`) is never read as markup (issue 19).
    return Text.assemble(("Warning:", "yellow"), f" {w}")


# Free-text columns wrap at words; every other column (names, nodes, numbers) never wraps, so
# identifiers stay copyable in a narrow terminal.
_WRAPPING = {"REASON", "WHY", "NAMES", "ACTION", "DISRUPTION"}


def _table(title: str | None, headers: list[str], rows: list[list[Any]], no_headers: bool) -> Table:
    t = Table(
        title=None if no_headers else title,
        box=None if no_headers else box.SIMPLE,
        show_header=not no_headers,
        title_justify="left",
        pad_edge=False,
    )
    for h in headers:
        if h in _WRAPPING:
            t.add_column(h, overflow="fold", min_width=20)
        else:
            t.add_column(h, no_wrap=True)
    for r in rows:
        t.add_row(*[("" if c is None else str(c)) for c in r])
    return t


# Tables longer than this are laid out by _plain_table instead of rich: rich's per-cell
# measuring costs ~0.1 ms a cell, seconds for the tens of thousands of rows a 5,000-node cluster
# gives. The layout is the same (rich's SIMPLE box), except that long cells never wrap.
_PLAIN_ROWS = 100


def _plain_table(title: str | None, headers: list[str], rows: list[list[Any]], no_headers: bool) -> str:
    cells = [[("" if c is None else str(c)) for c in r] for r in rows]
    widths = [len(h) if not no_headers else 0 for h in headers]
    for i, h in enumerate(headers):
        if h in _WRAPPING:
            widths[i] = max(widths[i], 20)  # the wrapping columns' min_width
    for r in cells:
        for i, c in enumerate(r):
            if len(c) > widths[i]:
                widths[i] = len(c)
    if no_headers:
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
        return "\n".join(lines) + "\n"
    total = sum(widths) + 3 * (len(widths) - 1) + 2
    out = []
    if title:
        out.append(title.ljust(total))
    out.append(" " * total)
    out.append(" " + "   ".join(h.ljust(w) for h, w in zip(headers, widths)) + " ")
    out.append(" " + "─" * (total - 2) + " ")
    for r in cells:
        out.append(" " + "   ".join(c.ljust(w) for c, w in zip(r, widths)) + " ")
    out.append(" " * total)
    return "\n".join(out) + "\n"


def _print_table(console: Console, title: str | None, headers: list[str], rows: list[list[Any]], no_headers: bool) -> None:
    if len(rows) > _PLAIN_ROWS:
        console.file.write(_plain_table(title, headers, rows, no_headers))
    else:
        console.print(_table(title, headers, rows, no_headers))


def _natural(name: str) -> tuple:
    """job-2 before job-10."""
    import re

    return tuple(int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name))


def render_whatif(doc: dict, console: Console, wide: bool = False, no_headers: bool = False, err: Console | None = None) -> None:
    """Verdict, preemptor, placement per node, victims by unit, spared units. Warnings go to
    `err` (stderr). With `no_headers`, only the victim rows are printed, for scripts."""
    err = err or console
    for w in doc["warnings"]:
        err.print(_warning(w), highlight=False)
    if no_headers:
        _print_table(console, None, _VICTIM_HEADERS + (["REASON"] if wide else []), _victim_rows(doc, wide), True)
        return
    pre = doc["preemptor"]
    style = _OUTCOME_STYLE.get(doc["outcome"], "bold")
    s = doc["summary"]
    verdict = {
        "Preempt": f"{s['victimPods']} pod(s) in {s['victimUnits']} unit(s) would be preempted; {s['reprievedUnits']} candidate unit(s) spared",
        "NoPreemptionNeeded": (f"fits without preemption ({s['placedPods']} pod(s) placed)" if s["placedPods"]
                               else doc["message"]),
    }.get(doc["outcome"], doc["message"])
    if doc["outcome"] == "Unschedulable" and s.get("candidateUnits"):
        verdict = (f"does not fit even if all {s['candidateUnits']} lower-priority unit(s) were preempted "
                   f"({doc['message']})")
    console.print(Text.assemble((doc["outcome"], style), f": {verdict}"), highlight=False)
    console.print(
        f"Preemptor: {pre['kind']} {pre['namespace']}/{pre['name']}  priority {pre['priority']}  "
        f"policy {pre['preemptionPolicy']}  pending pods {pre['pods']}  running {pre['runningPods']}",
        highlight=False,
    )
    if doc["message"] and doc["outcome"] in ("Preempt", "NoPreemptionNeeded"):
        console.print(f"Message: {doc['message']}", highlight=False)
    if doc["outcome"] == "Unschedulable" and doc.get("unplaced") and not wide:
        first = doc["unplaced"][0]
        console.print(f"Why: pod {first['pod']['namespace']}/{first['pod']['name']}: {first['message']}", highlight=False)
    if doc["placements"]:
        per: dict[str, list[str]] = {}
        for pl in doc["placements"]:
            per.setdefault(pl["node"], []).append(pl["pod"]["name"])
        rows = []
        for n, p in sorted(per.items()):
            p.sort(key=_natural)
            rows.append([n, len(p), ", ".join(p) if wide else _short(p)])
        title = "Nominated node (after preemption)" if doc.get("algorithm") == "default" and doc["outcome"] == "Preempt" else "Placement"
        _print_table(console, title, ["NODE", "PODS", "NAMES"], rows, no_headers)
    if doc["victimUnits"]:
        _print_table(console, "Victims", _VICTIM_HEADERS + (["REASON"] if wide else []), _victim_rows(doc, wide), no_headers)
    if doc.get("candidateNodes"):
        rows = []
        for c in doc["candidateNodes"]:
            chosen = "yes" if c["node"] == doc.get("nominatedNode") else ""
            if c.get("victims") is None:
                rows.append([c["node"], "-", "-", c.get("status", ""), chosen])
            else:
                rows.append([c["node"], len(c["victims"]), c.get("pdbViolations", 0), "", chosen])
        _print_table(console, "Candidate nodes (pickOneNodeForPreemption)", ["NODE", "VICTIM-PODS", "PDB-VIOLATIONS", "WHY", "CHOSEN"], rows, no_headers)
    if doc["summary"]["reprievedUnits"]:
        rows = []
        placed_nodes = {pl["node"] for pl in doc["placements"]}
        shown = doc["reprieved"]
        if not wide:
            # Without -o wide, show the spared units that shared a node with the preemptor's
            # placement (the interesting decisions); count the rest. (The CLI may have listed
            # only those in the document already: to_document(spared_on_placement_only).)
            shown = [v for v in shown if placed_nodes & {p["node"] for p in v["pods"]}]
        hidden = doc["summary"]["reprievedUnits"] - len(shown)
        for v in shown:
            u = v["unit"]
            row = [f"{u['namespace']}/{u['name']}", u["kind"], u["disruptionMode"] or "-", u["priority"], len(v["pods"]),
                   "yes" if v["violatesPDB"] else "-"]
            if wide:
                row.append(v["reason"])
            rows.append(row)
        headers = ["UNIT", "KIND", "MODE", "PRIORITY", "PODS", "VIOLATES-PDB"] + (["REASON"] if wide else [])
        title = "Spared (reprieved) on the placement's nodes" if not wide else "Spared (reprieved)"
        if rows:
            _print_table(console, title, headers, rows, no_headers)
        if hidden:
            console.print(f"{hidden} more candidate unit(s) on other nodes were spared (-o wide lists them).", highlight=False)
    if doc.get("unplaced") and wide:
        rows = [[f"{u['pod']['namespace']}/{u['pod']['name']}", u["message"]] for u in doc["unplaced"]]
        _print_table(console, "Not placed", ["POD", "WHY"], rows, no_headers)


_VICTIM_HEADERS = ["UNIT", "KIND", "MODE", "PRIORITY", "PODS", "NODES", "VIOLATES-PDB"]


def _victim_rows(doc: dict, wide: bool) -> list[list[Any]]:
    rows = []
    for v in doc["victimUnits"]:
        u = v["unit"]
        nodes = sorted({p["node"] for p in v["pods"]})
        row = [f"{u['namespace']}/{u['name']}", u["kind"], u["disruptionMode"] or "-", u["priority"], len(v["pods"]),
               ",".join(nodes), "yes" if v["violatesPDB"] else "-"]
        if wide:
            row.append(v["reason"])
        rows.append(row)
    return rows


def _short(names: list[str], n: int = 4) -> str:
    return ", ".join(names[:n]) + (f", ... (+{len(names) - n})" if len(names) > n else "")


def render_explain(doc: dict, console: Console, err: Console | None = None) -> None:
    for w in doc["warnings"]:
        (err or console).print(_warning(w), highlight=False)
    console.print(f"Outcome: {doc['outcome']}: {doc['message']}", highlight=False)
    for i, s in enumerate(doc["explanation"], 1):
        console.print(f"{i:>3}. {s}", highlight=False)


def render_rank(rows: list[dict], console: Console, wide: bool = False, no_headers: bool = False) -> None:
    headers = ["#", "UNIT", "KIND", "MODE", "PRIORITY", "PODS", "STARTED", "VIOLATES-PDB"] + (["NODES"] if wide else [])
    out = []
    for r in rows:
        row = [r["rank"], f"{r['namespace']}/{r['name']}", r["kind"], r["disruptionMode"] or "-", r["priority"], r["pods"],
               r["earliestStart"] or "-", "yes" if r["violatesPDB"] else "-"]
        if wide:
            row.append(",".join(r["nodes"]))
        out.append(row)
    _print_table(console, None, headers, out, no_headers)


def render_autoscale(a: dict, console: Console, no_headers: bool = False, err: Console | None = None) -> None:
    """Options side by side: A) preempt, B) add nodes, C) mixed."""
    pre = a.get("preempt") or {}
    add = a.get("addNodes")
    outcome = pre.get("outcome", "Preempt")
    if outcome == "Preempt":
        a_action = f"{pre.get('victimPods', 0)} pod(s) in {pre.get('victimUnits', 0)} unit(s)"
        a_hit = ", ".join(pre.get("priorityClasses") or []) or "-"
    elif outcome == "NoPreemptionNeeded":
        a_action, a_hit = "none needed: the group fits now", "-"
    elif outcome == "NotEligible":
        a_action, a_hit = "not allowed (NotEligible)", "-"
    else:
        a_action, a_hit = f"does not help ({outcome})", "-"
    rows = [["A) preempt", a_action, a_hit, "-"]]
    if add and add.get("nodes"):
        nodes = ", ".join(f"{n['count']} x {n['template']}" for n in add["nodes"])
        cost = add.get("costPerHour")
        rows.append(["B) add nodes", nodes, "no preemption", f"{cost:g}/h" if cost is not None else "-"])
    elif add is not None:
        rows.append(["B) add nodes", "none needed: the group fits now", "-", "-"])
    else:
        rows.append(["B) add nodes", "no template combination within maxNodes avoids preemption", "-", "-"])
    for m in a.get("mixed") or []:
        added = ", ".join(f"{n['count']} x {n['template']}" for n in m["added"])
        rows.append(["C) mixed", f"add {added}", f"{m['victimPods']} pod(s) in {m['victimUnits']} unit(s) still preempted", "-"])
    _print_table(console, "Autoscaling what-if", ["OPTION", "ACTION", "DISRUPTION", "COST"], rows, no_headers)
    if a.get("overschedule"):
        o = a["overschedule"]
        console.print(f"Overscheduling check (x{o.get('multiplier')}): {'admitted' if o.get('admitted') else 'rejected'}", highlight=False)
    warnings = list(a.get("warnings") or [])
    if a.get("noScaleUpHelps") and not any("scale-up" in w.lower() or "no template" in w.lower() for w in warnings):
        warnings.insert(0, "no scale-up helps: some pod fits no node template")
    for w in warnings:
        (err or console).print(_warning(w), highlight=False)
