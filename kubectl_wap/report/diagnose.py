"""Documents and tables for the diagnosis commands: `pending`, `why-preempted`, `whatif --optimal`.

Documents are plain data (the JSON/YAML contract, kind PendingReport / PreemptionForensics);
the renderers only print them."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from rich.console import Console

from .age import age
from .document import API_VERSION
from .profileinfo import profile_line
from .escape import inert
from .tables import print_table, print_warnings, say


def _iso(t: float | None) -> str | None:
    if t is None:
        return None
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def pending_document(t: Any, source: str = "", namespace: str | None = None) -> dict[str, Any]:
    rows = []
    for r in t.rows:
        rows.append({
            "kind": r.kind, "namespace": r.namespace, "name": r.name, "priority": r.priority,
            "pendingPods": r.pending_pods, "created": _iso(r.created),
            "ageSeconds": None if r.created is None else max(int(t.now - r.created), 0),
            "reason": r.reason, "upstreamReason": r.upstream or None, "blockers": list(r.blockers),
            "preemption": {"helps": r.preemption, "victimPods": r.victim_pods, "victimUnits": r.victim_units,
                           "outcome": r.outcome or None, "why": r.preemption_why or None, "victims": list(r.victims)},
            "scaleUp": r.scale_up or None, "notes": list(r.notes), "stage": r.stage,
        })
        if r.queueing is not None:  # a Workload Kueue holds: its line and its `queueing` section (report/kueue.py)
            from .kueue import kueue_hold_line, kueue_json

            rows[-1]["reason"] = kueue_hold_line(r.queueing)
            rows[-1]["queueing"] = kueue_json(r.queueing)
    return {"apiVersion": API_VERSION, "kind": "PendingReport", "source": source, "namespace": namespace, "now": _iso(t.now),
            "nodeTemplates": t.templates, "items": rows, "warnings": list(t.warnings)}


def preemption_cell(p: dict) -> str:
    if p["helps"] == "yes":
        return f"yes: {p['victimPods']} pod(s) in {p['victimUnits']} unit(s)"
    if p["helps"] == "not allowed" and p.get("why"):
        return f"not allowed: {p['why'].split(' (')[0]}"
    return p["helps"]


def _add_node_short(scale_up: str | None) -> str:
    """ADD-NODE of the default table: yes (the templates are in the row's 'Why pending' line), no, or -."""
    if not scale_up:
        return "-"
    return "yes" if scale_up.startswith("+") else scale_up


@inert
def render_pending(doc: dict, console: Console, wide: bool = False, no_headers: bool = False, err: Console | None = None,
                   hint_all_namespaces: bool = False) -> None:
    """The default table is an index that fits 80 columns on the demo (issue 33): who, how many
    pods, how old, whether preemption or a node would help; the reasons follow as prose, one
    paragraph per row. -o wide is the whole story in one row per object."""
    if wide:
        headers = ["KIND", "NAMESPACE", "NAME", "PRIORITY", "PODS", "AGE", "REASON", "PREEMPTION", "ADD-NODE", "UPSTREAM", "BLOCKERS", "NOTES"]
        rows = [[r["kind"], r["namespace"], r["name"], r["priority"], r["pendingPods"], age(r["ageSeconds"]), r["reason"],
                 preemption_cell(r["preemption"]), r["scaleUp"] or "-", r["upstreamReason"] or "-",
                 "; ".join(r["blockers"][1:]) or "-", "; ".join(r["notes"]) or "-"] for r in doc["items"]]
    else:
        headers = ["NAMESPACE", "NAME", "KIND", "PODS", "AGE", "PREEMPTION", "ADD-NODE"]
        rows = [[r["namespace"], r["name"], r["kind"], r["pendingPods"], age(r["ageSeconds"]), r["preemption"]["helps"],
                 _add_node_short(r["scaleUp"])] for r in doc["items"]]
    if not rows:
        where = f" in namespace {doc['namespace']}" if doc.get("namespace") else ""
        # kubectl says "No resources found in default namespace." and leaves the user to think of -A;
        # a namespace the user did not choose (the context's) gets the hint (issue 33).
        hint = "; use -A for all namespaces" if hint_all_namespaces and doc.get("namespace") else ""
        (err or console).print(f"No pending pods or pod groups{where}{hint}.", highlight=False)
        print_warnings(err or console, doc.get("warnings") or [])  # the source's warnings stand without rows too
        return
    print_table(console, None, headers, rows, no_headers)
    # Prose through say(): wrapped at the terminal's width at spaces, no trailing spaces.
    if not wide and not no_headers:
        console.print("Why pending:", highlight=False)
        for r in doc["items"]:
            text = f"  {r['namespace']}/{r['name']}: {r['reason'].rstrip('.')}."
            if r.get("stage") != "kueue" or r["kind"] != "Workload":  # Kueue's line says its own preemption
                text += f" Preemption: {preemption_cell(r['preemption']).rstrip('.')}."
            if r["scaleUp"]:
                text += f" Add a node: {r['scaleUp']}."
            say(console, text, indent="    ")
        console.print()
    if not no_headers and (line := profile_line(doc)):
        say(console, line)
    if not wide and not no_headers:
        ups = [(f"{r['namespace']}/{r['name']}", r["upstreamReason"]) for r in doc["items"] if r["upstreamReason"]]
        if ups:
            console.print("\nUpstream reasons (kube-scheduler's own words):", highlight=False)
            for k, u in ups:
                say(console, f"  {k}: {u}", indent="    ")
    print_warnings(err or console, doc.get("warnings") or [])


def optimal_section(ans: Any, res: Any) -> dict[str, Any]:
    """The `optimal` section of a WhatIfReport: the solver's answer beside kube-scheduler's."""
    from .document import unit_ref

    sched_pods = len(res.victim_pods)
    sched_units = len(res.victims)
    d: dict[str, Any] = {
        "status": ans.status, "message": ans.message,
        "scheduler": {"outcome": res.outcome, "victimUnits": sched_units, "victimPods": sched_pods, "pdbViolations": ans.scheduler_pdb_violations,
                      "victimPodsByPriority": _by_priority([v.unit for v in res.victims])},
        "objective": ["PDB violations", "victim pods per priority level, highest first", "victim pods", "victim units"],
        "unmodelled": list(ans.unmodelled),
    }
    if ans.solution is not None:
        d["solver"] = {"backend": ans.solution.backend, "variables": ans.variables, "constraints": ans.constraints,
                       "stages": [{"objective": s.name, "value": s.value, "bound": s.bound, "optimal": s.optimal,
                                   "gap": s.gap, "seconds": round(s.seconds, 4)} for s in ans.solution.stages]}
    if ans.victims or ans.status in ("optimal", "feasible", "unverified"):
        d["optimum"] = {"victimUnits": len(ans.victims), "victimPods": ans.victim_pods, "pdbViolations": ans.pdb_violations,
                        "victimPodsByPriority": _by_priority(ans.victims),
                        "victims": [unit_ref(u) for u in ans.victims],
                        "placements": [{"pod": {"namespace": p.namespace, "name": p.name}, "node": n} for p, n in ans.placements]}
        d["optimum"]["schedulerPlacesIt"] = ans.scheduler_places
        if ans.verify_failure:
            d["optimum"]["verifyFailure"] = ans.verify_failure
        if ans.cuts:
            d["optimum"]["cuts"] = list(ans.cuts)
        d["summary"] = _optimal_summary(d)
    elif res.outcome != "Preempt" and ans.status != "not-applicable":
        d["summary"] = f"kube-scheduler finds no placement ({res.outcome}); {ans.message}"
    else:
        d["summary"] = ans.message
    return d


def _by_priority(units: list) -> dict[str, int]:
    out: dict[int, int] = {}
    for u in units:
        out[u.priority] = out.get(u.priority, 0) + len(u.pods)
    return {str(k): out[k] for k in sorted(out, reverse=True)}


def _optimal_summary(d: dict) -> str:
    s, o = d["scheduler"], d["optimum"]
    if s.get("outcome", "Preempt") != "Preempt":
        proven = "proven optimal" if d["status"] == "optimal" else "best found, not proven optimal"
        places = ("; kube-scheduler's own cycle would not find it" if o.get("schedulerPlacesIt") is False else "")
        return (f"kube-scheduler finds no placement ({s['outcome']}); a placement needing {o['victimUnits']} unit(s) "
                f"({o['victimPods']} pod(s)) exists ({proven}){places}")
    head = (f"kube-scheduler evicts {s['victimUnits']} unit(s) ({s['victimPods']} pod(s)); "
            f"a placement needing {o['victimUnits']} unit(s) ({o['victimPods']} pod(s)) exists")
    if d["status"] == "unverified":
        return head + " in the solver's model, but it fails our Filter plugins: " + o.get("verifyFailure", "")
    same = (s["pdbViolations"], s["victimPodsByPriority"], s["victimPods"], s["victimUnits"]) == (
        o["pdbViolations"], o["victimPodsByPriority"], o["victimPods"], o["victimUnits"])
    if same:
        return (f"kube-scheduler evicts {s['victimUnits']} unit(s) ({s['victimPods']} pod(s)); that is already the fewest "
                f"by upstream's importance order ({d['status']})")
    proven = "proven optimal" if d["status"] == "optimal" else "best found (not proven optimal)"
    return head + f" ({proven}; {_decides(s, o)})"


def _decides(s: dict, o: dict) -> str:
    """The first criterion of the importance order on which the optimum is better."""
    if o["pdbViolations"] != s["pdbViolations"]:
        return f"PDB violations {o['pdbViolations']} vs {s['pdbViolations']}"
    levels = sorted({int(k) for k in list(s["victimPodsByPriority"]) + list(o["victimPodsByPriority"])}, reverse=True)
    for lvl in levels:
        a, b = o["victimPodsByPriority"].get(str(lvl), 0), s["victimPodsByPriority"].get(str(lvl), 0)
        if a != b:
            return f"victim pods at priority {lvl}: {a} vs {b}"
    if o["victimPods"] != s["victimPods"]:
        return f"victim pods {o['victimPods']} vs {s['victimPods']}"
    return f"victim units {o['victimUnits']} vs {s['victimUnits']}"


@inert
def render_optimal(d: dict, console: Console, no_headers: bool = False) -> None:
    # Prose through say(): wrapped at spaces with no trailing space (rich's own wrap leaves one).
    console.print()
    say(console, f"Fewest victims (--optimal): {d['summary']}")
    o = d.get("optimum")
    if o:
        rows = [[f"{u['namespace']}/{u['name']}", u["kind"], u["disruptionMode"] or "-", u["priority"], u["pods"]] for u in o["victims"]]
        print_table(console, "Victims of the fewest-victims placement", ["UNIT", "KIND", "MODE", "PRIORITY", "PODS"], rows, no_headers)
        per: dict[str, list[str]] = {}
        for p in o["placements"]:
            per.setdefault(p["node"], []).append(p["pod"]["name"])
        print_table(console, "Its placement", ["NODE", "PODS", "NAMES"], [[n, len(v), ", ".join(v)] for n, v in per.items()], no_headers)
        by = lambda x: ", ".join(f"{v} at {k}" for k, v in x.items()) or "none"  # noqa: E731
        say(console, f"Victim pods by priority: kube-scheduler {by(d['scheduler']['victimPodsByPriority'])}; "
                     f"fewest-victims {by(o['victimPodsByPriority'])}")
        if o.get("schedulerPlacesIt") is not None:
            places = ("kube-scheduler's own cycle places the preemptor once these victims are gone (its nodes may differ from the table)"
                   if o["schedulerPlacesIt"] else
                   "kube-scheduler's own cycle would not place the preemptor with only these victims gone (its greedy placement "
                   "needs more room than this packing)")
            say(console, places + ".")
    sv = d.get("solver")
    if sv:
        secs = sum(s["seconds"] for s in sv["stages"])
        gaps = [s for s in sv["stages"] if not s["optimal"]]
        gap = f"; stopped at the time limit, gap {gaps[0]['gap']:.1%} on '{gaps[0]['objective']}'" if gaps and gaps[0]["gap"] is not None else ""
        say(console, f"Solver: {sv['backend']}, {sv['variables']} variables, {sv['constraints']} constraints, {secs:.2f} s{gap}.")
    if sv:
        say(console, "Not modelled by the solver (its placement is re-checked with our Filter plugins): " + ", ".join(d["unmodelled"]) + ".")


def forensics_document(f: Any) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION, "kind": "PreemptionForensics",
        "victim": {"kind": f.kind, "namespace": f.namespace, "name": f.name, "priority": f.priority, "node": f.node or None},
        "preempted": f.preempted, "time": _iso(f.time), "evidence": list(f.evidence),
        "suspects": [{"kind": s.kind, "namespace": s.namespace, "name": s.name, "priority": s.priority,
                      "confidence": s.confidence, "evidence": list(s.evidence)} for s in f.suspects],
        "replay": f.replay or None, "uncertainty": list(f.uncertainty),
        "preemptedBy": "kube-scheduler" if f.preempted else "Kueue" if f.kueue_owner else None,
        **({"kueuePreemptions": [
            {"namespace": k.namespace, "workload": k.workload, "time": _iso(k.time), "reason": k.reason or None,
             "preemptor": k.preemptor or None, "preemptorUID": k.preemptor_uid or None,
             "victimsWorkload": k.workload == f.kueue_owner, "readmitted": k.readmitted,
             "readmittedAt": _iso(k.readmitted_at)} for k in f.kueue]} if f.kueue else {}),
    }


@inert
def render_forensics(d: dict, console: Console, no_headers: bool = False) -> None:
    v = d["victim"]
    # Prose through tables.say: wrapped at spaces with continuation lines indented and no
    # trailing space (rich's own wrap started them at column 0 and left a space at each end).
    line = lambda s, indent="  ": say(console, s, indent=indent)  # noqa: E731
    own = next((k for k in d.get("kueuePreemptions", ()) if k["victimsWorkload"]), None)
    if v["kind"] == "Workload":  # Kueue's: kube-scheduler preempts pods, not Workloads
        verdict = "preempted by Kueue" if own else "no sign of preemption by Kueue"
    elif d["preempted"]:
        verdict = "preempted by kube-scheduler"
    elif own:
        verdict = f"preempted by Kueue (its Workload {own['workload']}), not by kube-scheduler"
    else:
        verdict = "no sign of preemption by kube-scheduler"
    line(f"{v['kind']} {v['namespace']}/{v['name']}: {verdict}" + (f" at {d['time']}" if d["time"] else ""))
    if v["priority"] is not None:
        where = f", on node{'s' if ', ' in (v['node'] or '') else ''} {v['node']}" if v["node"] else ""  # a group's: several
        line(f"Victim priority {v['priority']}{where}")
    for e in d["evidence"]:
        line(f"  - {e}", "    ")
    if d["suspects"]:
        rows = [[f"{s['kind']} {s['namespace']}/{s['name']}", s["priority"], s["confidence"], "; ".join(s["evidence"])] for s in d["suspects"]]
        print_table(console, "Most likely preemptor(s)", ["PREEMPTOR", "PRIORITY", "CONFIDENCE", "REASON"], rows, no_headers)
    if d["replay"]:
        line(f"Replay: {d['replay']}")
    if rules := profile_line(d):
        line(rules)
    for u in d["uncertainty"]:
        line(f"Uncertain: {u}")
    for k in d.get("kueuePreemptions", ()):
        by = (f" to admit Workload {k['preemptor']}" if k["preemptor"] else
              f" to admit the Workload of UID {k['preemptorUID']} (no longer in this state)" if k["preemptorUID"] else "")
        why = f", due to {k['reason']}" if k["reason"] else ""
        whose = {"Workload": "it", "Pod": "this pod's Workload"}.get(v["kind"], "the group's Workload") if k["victimsWorkload"] else "Workload"
        what = whose if whose == "it" else f"{whose} {k['namespace']}/{k['workload']}"
        again = f"; admitted again since {k['readmittedAt']}" if k["readmitted"] and k["readmittedAt"] else "; admitted again since then" if k["readmitted"] else ""
        line(f"Kueue preempted {what}" + (f" at {k['time']}" if k["time"] else "") + by + why + again
             + (" (the preemptor is named in the Preempted condition's message or Kueue's Preempted event, neither kept here)"
                if not k["preemptorUID"] else ""))
    if d.get("kueuePreemptions") and v["kind"] != "Workload":
        line("Kueue's preemptions stop a Workload's job, which removes its pods: they carry none of kube-scheduler's evidence above.")
