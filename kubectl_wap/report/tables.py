"""Human renderings of a report: rich tables for `whatif`, numbered steps for `explain`, and the
importance ranking for `rank`. Only this module and the CLI print."""

from __future__ import annotations

from typing import Any

import re

from rich.console import Console
from rich.markup import escape

from . import layout
from .age import age_since
from ..preemption.workload import NOT_ATTEMPTED
from ..quantity import format_amount
from .headline import collateral, headline
from .profileinfo import profile_line
from .warnings import summarize
from .escape import inert, printable

_OUTCOME_STYLE = {
    "NoPreemptionNeeded": "bold green",
    "Preempt": "bold yellow",
    "Unschedulable": "bold red",
    "NotEligible": "bold magenta",
    "Invalid": "bold red",
}


def _width(console: Console) -> int | None:
    """The terminal's width; None (no limit) when the output is not a terminal."""
    return console.width if console.is_terminal and console.width < 10_000 else None


def print_warnings(err: Console, warnings: list[str]) -> None:
    """Warnings on stderr, those of one kind counted after the first few (report/warnings.py)."""
    for w in summarize(warnings):
        say(err, f"Warning: {w}", "yellow", "Warning:")


print_warnings = inert(print_warnings, arg=1)


def say(console: Console, text: str, style: str = "", lead: str = "", indent: str = "  ") -> None:
    """A line of prose, wrapped at the terminal's width at spaces (continuation lines indented),
    with no trailing spaces. `lead` (the start of `text`) is printed in `style`."""
    text = printable(text)
    width = _width(console)
    lines = [text] if width is None else layout.fold_words(text, width, indent)
    for i, ln in enumerate(lines):
        if i == 0 and lead and style and ln.startswith(lead):
            console.print(f"[{style}]{escape(lead)}[/]{escape(ln[len(lead):])}", highlight=False, soft_wrap=True, markup=True)
        else:
            console.print(escape(ln), highlight=False, soft_wrap=True, markup=True)


def print_table(console: Console, title: str | None, headers: list[str], rows: list[list[Any]], no_headers: bool) -> None:
    """Every table goes through layout.render: no value is ever cut (see report/layout.py)."""
    console.file.write(layout.render(title, headers, rows, _width(console), no_headers))


def _natural(name: str) -> tuple:
    """job-2 before job-10."""
    import re

    return tuple(int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name))


@inert
def render_whatif(doc: dict, console: Console, wide: bool = False, no_headers: bool = False, err: Console | None = None) -> None:
    """Verdict, preemptor, placement per node, victims by unit, spared units. Warnings go to
    `err` (stderr). With `no_headers`, only the victim rows are printed, for scripts."""
    err = err or console
    print_warnings(err, doc["warnings"])
    if no_headers:
        print_table(console, None, _victim_headers(wide), _victim_rows(doc, wide), True)
        return
    _print_queueing(doc, console)
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
    say(console, f"{doc['outcome']}: {verdict}", style, doc["outcome"])
    lines = headline(doc)
    label = max((len(k) for k, _ in lines), default=0) + 1
    for k, v in lines:
        say(console, f"  {(k + ':').ljust(label)}  {v}", indent=" " * (label + 4))
    for c in collateral(doc):
        say(console, f"  Collateral: {c}", indent="    ")
    if doc.get("filter"):
        f = doc["filter"]
        say(console, f"  Shown: {f['shownUnits']} of {f['victimUnits']} victim unit(s) ({f['description']}); the analysis is for the whole cluster")
    say(console,
        f"Preemptor: {pre['kind']} {pre['namespace']}/{pre['name']}  priority {pre['priority']}  "
        f"policy {pre['preemptionPolicy']}  pending pods {pre['pods']}  running {pre['runningPods']}")
    if line := profile_line(doc):
        say(console, line)
    if doc["message"] and doc["outcome"] in ("Preempt", "NoPreemptionNeeded"):
        say(console, f"Message: {doc['message']}")
    if doc["outcome"] == "Unschedulable" and doc.get("unplaced") and not wide:
        # The pod that failed, not the first in name order (the others were never tried).
        first = next((u for u in doc["unplaced"] if u["message"] != NOT_ATTEMPTED), doc["unplaced"][0])
        say(console, f"Why: pod {first['pod']['namespace']}/{first['pod']['name']}: {first['message']}")
    if doc["placements"]:
        per: dict[str, list[str]] = {}
        for pl in doc["placements"]:
            per.setdefault(pl["node"], []).append(pl["pod"]["name"])
        rows = []
        for n, p in sorted(per.items()):
            p.sort(key=_natural)
            rows.append([n, len(p), ", ".join(p) if wide else _short(p)])
        title = "Nominated node (after preemption)" if doc.get("algorithm") == "default" and doc["outcome"] == "Preempt" else "Placement"
        print_table(console, title, ["NODE", "PODS", "NAMES"], rows, no_headers)
    if doc["victimUnits"]:
        print_table(console, "Victims", _victim_headers(wide), _victim_rows(doc, wide), no_headers)
    if doc.get("candidateNodes"):
        rows = []
        for c in doc["candidateNodes"]:
            chosen = "yes" if c["node"] == doc.get("nominatedNode") else ""
            if c.get("victims") is None:
                rows.append([c["node"], "-", "-", c.get("status", ""), chosen])
            else:
                rows.append([c["node"], len(c["victims"]), c.get("pdbViolations", 0), c.get("why", ""), chosen])
        print_table(console, "Candidate nodes (pickOneNodeForPreemption)", ["NODE", "VICTIM-PODS", "PDB-VIOLATIONS", "WHY", "CHOSEN"], rows, no_headers)
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
            row = [f"{u['namespace']}/{u['name']}", u["kind"]] + ([u["disruptionMode"] or "-"] if wide else []) + [
                u["priority"], len(v["pods"]), "yes" if v["violatesPDB"] else "-"]
            if wide:
                row.append(v["reason"])
            rows.append(row)
        headers = _with_mode(["UNIT", "KIND", "PRIORITY", "PODS", "PDB"], wide) + (["REASON"] if wide else [])
        title = "Spared (reprieved) on the placement's nodes" if not wide else "Spared (reprieved)"
        if rows:
            print_table(console, title, headers, rows, no_headers)
        if hidden and doc.get("filter"):
            say(console, f"{hidden} more spared candidate unit(s) are not shown (on other nodes, or filtered out).")
        elif hidden:
            say(console, f"{hidden} more candidate unit(s) on other nodes were spared (-o wide lists them).")
    if doc.get("unplaced") and wide:
        rows = [[f"{u['pod']['namespace']}/{u['pod']['name']}", u["message"]] for u in doc["unplaced"]]
        print_table(console, "Not placed", ["POD", "WHY"], rows, no_headers)


def _with_mode(headers: list[str], wide: bool) -> list[str]:
    """MODE (the unit's disruptionMode) after KIND with -o wide only: the default tables fit 80
    columns on the demo with kubectl's spacing (issue 33), and KIND already says Pod or group."""
    return headers[:2] + ["MODE"] + headers[2:] if wide else headers


def _victim_headers(wide: bool) -> list[str]:
    return _with_mode(["UNIT", "KIND", "PRIORITY", "PODS", "NODES", "PDB"], wide) + (["REASON"] if wide else [])


def _victim_rows(doc: dict, wide: bool) -> list[list[Any]]:
    rows = []
    for v in doc["victimUnits"]:
        u = v["unit"]
        nodes = sorted({p["node"] for p in v["pods"]})
        row = [f"{u['namespace']}/{u['name']}", u["kind"]] + ([u["disruptionMode"] or "-"] if wide else []) + [
            u["priority"], len(v["pods"]), ",".join(nodes), "yes" if v["violatesPDB"] else "-"]
        if wide:
            row.append(v["reason"])
        rows.append(row)
    return rows


def _short(names: list[str], n: int = 4) -> str:
    return ", ".join(names[:n]) + (f", ... (+{len(names) - n})" if len(names) > n else "")


def _print_queueing(doc: dict, console: Console, steps: bool = False) -> None:
    """The Kueue stage, before kube-scheduler's part (kubectl_wap/cli/kueuestage.py): its line, its
    notes and, for explain, its steps. Called only by render_whatif and render_explain, which are
    @inert: the document reaching it is escaped already (no second pass over it)."""
    q = doc.get("queueing")
    if not q:
        return
    say(console, q["line"])
    if steps:
        for i, s in enumerate(q.get("steps", ()), 1):
            say(console, f"  K{i}. {s}", indent="      ")
    for note in q.get("notes", ()):
        say(console, f"  {note}", indent="    ")


@inert
def render_explain(doc: dict, console: Console, err: Console | None = None, wide: bool = False) -> None:
    """Numbered steps. A step listing many items ("; "-separated) is folded to its first few
    unless `wide`, which lists one item a line."""
    print_warnings(err or console, doc["warnings"])
    _print_queueing(doc, console, steps=True)
    say(console, f"Outcome: {doc['outcome']}: {doc['message']}")
    if line := profile_line(doc):
        say(console, line)
    arithmetic = doc.get("nodeArithmetic") or []
    for i, s in enumerate(doc["explanation"], 1):
        head, items = _list_step(s)
        if not items:
            say(console, f"{i:>3}. {s}{step_numbers(s, arithmetic)}", indent="     ")
        elif wide:
            say(console, f"{i:>3}. {head}", indent="     ")
            for it in items:
                say(console, f"       - {it}", indent="         ")
        else:
            shown = "; ".join(items[:FOLD_ITEMS])
            say(console, f"{i:>3}. {head} {shown}; ... ({len(items)} listed by -o wide)", indent="     ")
    if arithmetic:
        say(console, "Numbers per node of the placement (the deciding resource: the preemptor's tightest there):")
        for a in arithmetic:
            say(console, f"  - {a['text']}", indent="    ")
    for c in collateral(doc):
        say(console, f"Collateral: {c}", indent="  ")


FOLD_ITEMS = 3
_STEP_UNIT = re.compile(r"^Reprieve \d+: (\w+ \S+) -> (needed|spared)")
_FAILS_ON = re.compile(r"fails NodeResourcesFit on (\S+) \(Insufficient ([^),]+)")


def step_numbers(step: str, arithmetic: list[dict]) -> str:
    """The arithmetic behind one unit's reprieve verdict, from the final state of the placement's
    nodes (valid for the verdict at the time: units reprieved later only add to "kept").
    needed: kept + preemptor + the unit > allocatable on the node that failed; spared: on each
    placement node where the unit runs, kept (the unit included) + preemptor <= allocatable."""
    m = _STEP_UNIT.match(step)
    if not m or not arithmetic:
        return ""
    unit, verdict = m.groups()
    by_node = {a["node"]: a for a in arithmetic}
    if verdict == "needed":
        f = _FAILS_ON.search(step)
        a = by_node.get(f.group(1)) if f else None
        if a is None or f.group(2) not in a.get("resources", {}):
            return ""
        r = f.group(2)
        x, mine = a["resources"][r], a["units"].get(unit, {}).get(r, 0)
        total = x["kept"] + x["preemptor"] + mine
        amt = lambda v: format_amount(r, v)  # noqa: E731
        return (f" [{a['node']} {r}: kept {amt(x['kept'])} + preemptor {amt(x['preemptor'])} + this unit {amt(mine)} = "
                f"{amt(total)} > allocatable {amt(x['allocatable'])}]")
    here = [a for a in arithmetic if unit in a.get("units", {})]
    if not here:
        return " [it runs on no node of the placement]"
    parts = []
    for a in here:
        r = a["resource"]
        x, mine = a["resources"].get(r), a["units"][unit].get(r, 0)
        if x is None:
            continue
        amt = lambda v: format_amount(r, v)  # noqa: E731
        parts.append(f"{a['node']} {r}: kept {amt(x['kept'])} (its {amt(mine)} included) + preemptor {amt(x['preemptor'])} = "
                     f"{amt(x['kept'] + x['preemptor'])} <= allocatable {amt(x['allocatable'])}")
    return f" [{'; '.join(parts)}]" if parts else ""


def _list_step(step: str) -> tuple[str, list[str]]:
    """("head:", items) for a step that lists more than FOLD_ITEMS + 2 items after a colon."""
    head, sep, rest = step.partition(": ")
    if not sep:
        return step, []
    items = rest.split("; ")
    if len(items) <= FOLD_ITEMS + 2:
        return step, []
    items[-1] = items[-1].removesuffix(" ...").rstrip(".")
    return head + ":", items


@inert
def render_rank(doc: dict, console: Console, wide: bool = False, no_headers: bool = False, err: Console | None = None,
                now: float | None = None) -> None:
    """The title says the order (risk: the units preemption takes first come first). AGE is the
    time since the unit's earliest start at `now` (the snapshot's capture time), as kubectl prints
    ages; -o wide adds MODE, the start time itself and the nodes."""
    print_warnings(err or console, doc.get("warnings") or [])
    if not no_headers:
        prio = doc["preemptorPriority"]
        how = ("most at risk first (the order preemption gives units up; --order protection reverses it)"
               if doc.get("order", "risk") == "risk" else "most protected first (the reprieve order)")
        scope = f" for {doc['for']}, on the {len(doc.get('nodesWherePreemptionMightHelp', []))} node(s) where preemption might help it" if doc.get("for") else ""
        say(console, f"Units a preemptor of priority {prio} could take{scope}, {how}: {doc.get('totalUnits', len(doc['units']))} unit(s)"
            + (f", first {len(doc['units'])} shown" if len(doc["units"]) < doc.get("totalUnits", len(doc["units"])) else ""))
        if line := profile_line(doc):
            say(console, line)
        console.file.write("\n")
    headers = ["#"] + _with_mode(["UNIT", "KIND", "PRIORITY", "PODS", "AGE", "PDB"], wide) + (["STARTED", "NODES"] if wide else [])
    out = []
    for r in doc["units"]:
        row = [r.get("position", r["rank"]), f"{r['namespace']}/{r['name']}", r["kind"]] + ([r["disruptionMode"] or "-"] if wide else []) + [
            r["priority"], r["pods"], age_since(r["earliestStart"], now), "yes" if r["violatesPDB"] else "-"]
        if wide:
            row += [r["earliestStart"] or "-", ",".join(r["nodes"])]
        out.append(row)
    print_table(console, None, headers, out, no_headers)


@inert
def render_diff(d: dict, console: Console, no_headers: bool = False) -> None:
    """Verdict change, then one row per change (victims added/removed, placements moved)."""
    if not no_headers:
        a, b = d["a"], d["b"]
        for label, x in zip(d["labels"], (a, b)):
            say(console, f"{label}: {x['outcome']}, {x['victimPods']} victim pod(s) in {x['victimUnits']} unit(s), {x['placedPods']} pod(s) placed")
        say(console, "Verdict: " + (f"changed {a['outcome']} -> {b['outcome']}" if a["outcome"] != b["outcome"] else "unchanged")
            + f"; {len(d['victimsAdded'])} victim pod(s) added, {len(d['victimsRemoved'])} removed, "
              f"{len(d['placementChanges'])} placement change(s)")
    rows = [["victim+", f"{v['namespace']}/{v['name']}", "-", v["node"]] for v in d["victimsAdded"]]
    rows += [["victim-", f"{v['namespace']}/{v['name']}", v["node"], "-"] for v in d["victimsRemoved"]]
    rows += [["placed", f"{c['namespace']}/{c['name']}", c["before"] or "-", c["after"] or "-"] for c in d["placementChanges"]]
    if rows or no_headers:
        print_table(console, None if no_headers else "Changes", ["CHANGE", "POD", "BEFORE", "AFTER"], rows, no_headers)


@inert
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
    print_table(console, "Autoscaling what-if", ["OPTION", "ACTION", "DISRUPTION", "COST"], rows, no_headers)
    if a.get("overschedule"):
        o = a["overschedule"]
        say(console, f"Overscheduling check (x{o.get('multiplier')}): {'admitted' if o.get('admitted') else 'rejected'}")
    warnings = list(a.get("warnings") or [])
    if a.get("noScaleUpHelps") and not any("scale-up" in w.lower() or "no template" in w.lower() for w in warnings):
        warnings.insert(0, "no scale-up helps: some pod fits no node template")
    print_warnings(err or console, warnings)
