"""`kubectl wap simulate`: the simulation as a document (kind SimulationReport, schema in
simulate-schema.json) and as tables. The engine's records (simulate/records.py) are the input;
nothing is recomputed here but sums over them."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Console

from ..simulate import records as R
from .diagnose import _iso
from .document import API_VERSION
from .tables import print_table, print_warnings, say
from .escape import inert


def _obj(o: R.ObjectRef) -> dict[str, str]:
    return {"kind": o.kind, "namespace": o.namespace, "name": o.name}


def _victim(v: R.Victim) -> dict[str, Any]:
    return {"namespace": v.namespace, "name": v.name, "node": v.node, "priority": v.priority, "unit": _obj(v.unit),
            "owner": v.owner or None, "origin": v.origin, "times": v.times, "violatesPDB": v.violates_pdb,
            "started": _iso(v.started), "gpus": dict(v.gpus)}


def _cycle(c: R.CycleRecord) -> dict[str, Any]:
    return {"n": c.n, "time": _iso(c.time), "object": _obj(c.obj), "priority": c.priority, "action": c.action,
            "outcome": c.outcome, "message": c.message, "placed": [{"pod": p, "node": n} for p, n in c.placed],
            "victims": [_victim(v) for v in c.victims], "pendingLeft": c.pending_left, "causedBy": list(c.caused_by),
            "depth": c.depth, "pdbViolations": c.pdb_violations}


def _tree(sim: R.Simulation) -> list[dict[str, Any]]:
    """Who preempted whom: each preemption with the preemptions its recreated victims made."""
    recreated = {(e.cycle, e.pod): e.detail for e in sim.events if e.kind == R.RECREATED}
    preemptions = [c for c in sim.cycles if c.action == R.PREEMPT]
    children: dict[int, list[R.CycleRecord]] = {}
    for c in preemptions:
        for parent in c.caused_by:
            children.setdefault(parent, []).append(c)

    def node(c: R.CycleRecord, seen: frozenset[int]) -> dict[str, Any]:
        kids = [node(k, seen | {c.n}) for k in children.get(c.n, []) if k.n not in seen]
        return {"cycle": c.n, "object": _obj(c.obj), "priority": c.priority, "depth": c.depth,
                "victims": [{"pod": v.key, "priority": v.priority, "recreatedAs": recreated.get((c.n, v.key))} for v in c.victims],
                "then": kids}

    numbers = {c.n for c in preemptions}
    return [node(c, frozenset()) for c in preemptions if not numbers.intersection(c.caused_by)]


def _totals(sim: R.Simulation) -> dict[str, Any]:
    by_ns: Counter[str] = Counter()
    by_prio: Counter[int] = Counter()
    gpu_hours: Counter[str] = Counter()
    unknown = 0
    times = {c.n: c.time for c in sim.cycles}
    for n, v in sim.evictions:
        by_ns[v.namespace] += 1
        by_prio[v.priority] += 1
        if v.gpus:
            if v.started is None:
                unknown += 1
                continue
            run = max(times[n] - v.started, 0.0) / 3600.0
            for r, amount in v.gpus.items():
                gpu_hours[r] += run * amount
    return {
        "evictions": sum(by_ns.values()),
        "evictionsByNamespace": dict(sorted(by_ns.items(), key=lambda kv: (-kv[1], kv[0]))),
        "evictionsByPriority": {str(p): by_prio[p] for p in sorted(by_prio, reverse=True)},
        "pdbViolations": sum(c.pdb_violations for c in sim.cycles),
        "gpuHoursLost": {r: round(h, 2) for r, h in sorted(gpu_hours.items())},
        "gpuVictimsWithoutStartTime": unknown,
    }


def _repeated(sim: R.Simulation) -> list[dict[str, Any]]:
    seen: dict[str, list[tuple[int, R.ObjectRef, str]]] = {}
    for c in sim.cycles:
        for v in c.victims:
            seen.setdefault(v.origin, []).append((c.n, c.obj, v.key))
    return [{"pod": origin, "times": len(xs), "cycles": [n for n, _, _ in xs], "as": [k for _, _, k in xs],
             "by": [_obj(o) for _, o, _ in xs]} for origin, xs in seen.items() if len(xs) > 1]


def simulation_document(sim: R.Simulation, source: str, gates: str, options: dict[str, Any]) -> dict[str, Any]:
    preemptions = [c for c in sim.cycles if c.action == R.PREEMPT]
    storms = [{"preemptor": _obj(s.preemptor), "victim": s.victim, "cycles": list(s.cycles), "cutOff": s.cut_off} for s in sim.storms]
    warnings = list(sim.warnings)
    for s in sim.storms:
        warnings.append(f"preemption storm: {s.preemptor} preempted the lineage of {s.victim} {len(s.cycles)} times "
                        f"(cycles {', '.join(map(str, s.cycles))})" + ("; cut off: it is no longer scheduled" if s.cut_off else ""))
    return {
        "apiVersion": API_VERSION, "kind": "SimulationReport", "source": source, "featureGates": gates, "options": options,
        "start": _iso(sim.start), "end": _iso(sim.end), "stopReason": sim.stop_reason,
        "summary": {"cycles": len(sim.cycles), "boundPods": sim.bound, "preemptions": len(preemptions),
                    "evictedPods": sum(len(c.victims) for c in preemptions),
                    "recreatedPods": sum(1 for e in sim.events if e.kind == R.RECREATED),
                    "pendingObjects": len(sim.pending), "cascadeDepth": max((c.depth for c in preemptions), default=0)},
        "cycles": [_cycle(c) for c in sim.cycles],
        "cascade": _tree(sim),
        "evictedMoreThanOnce": _repeated(sim),
        "storms": storms,
        "totals": _totals(sim),
        "pending": [{**_obj(p.obj), "priority": p.priority, "pods": p.pods, "reason": p.reason} for p in sim.pending],
        "events": [{"time": _iso(e.time), "kind": e.kind, "pod": e.pod, "detail": e.detail or None, "cycle": e.cycle} for e in sim.events],
        "warnings": warnings,
    }


# ---- tables --------------------------------------------------------------------------------

_STOP = {R.DONE: "the queue is empty", R.NO_PROGRESS: "nothing left can change", R.MAX_CYCLES: "--max-cycles reached",
         R.TIME_LIMIT: "--time-limit reached"}


def _object(o: dict) -> str:
    return f"{o['kind']} {o['namespace']}/{o['name']}"


def _action(c: dict) -> str:
    a = c["action"]
    if a == R.BIND:
        return f"bind {len(c['placed'])} pod(s)" + (f", {c['pendingLeft']} left" if c["pendingLeft"] else "")
    if a == R.PREEMPT:
        nodes = sorted({p["node"] for p in c["placed"]})
        return f"preempt; {len(c['placed'])} pod(s) nominated" + (f" to {nodes[0]}" if len(nodes) == 1 else "")
    return a


def _names(names: list[str], wide: bool, n: int = 4) -> str:
    if wide or len(names) <= n:
        return ", ".join(names) or "-"
    return ", ".join(names[:n]) + f" ... (+{len(names) - n})"


@inert
def render_simulation(doc: dict, console: Console, wide: bool = False, no_headers: bool = False, err: Console | None = None) -> None:
    s = doc["summary"]
    if not no_headers:  # --no-headers: the timeline's rows alone, as whatif gives only its victims' (for scripts)
        say(console, f"Simulation: {s['cycles']} cycle(s), stopped because {_STOP.get(doc['stopReason'], doc['stopReason'])}; "
                     f"{s['preemptions']} preemption(s) evicted {s['evictedPods']} pod(s), {s['recreatedPods']} recreated by their controllers; "
                     f"{s['boundPods']} pod(s) bound; {s['pendingObjects']} object(s) still pending; cascade depth {s['cascadeDepth']}")
    # "#" (the cycle) and the victims as a count keep the timeline within 80 columns on the demo
    # (issue 33); who they were is the next section, and -o wide lists them here too.
    headers = ["#", "KIND", "OBJECT", "PRIORITY", "ACTION", "VICTIMS"] + (["MESSAGE"] if wide else [])
    rows = []
    for c in doc["cycles"]:
        o = c["object"]
        victims = [f"{v['namespace']}/{v['name']}" for v in c["victims"]]
        row = [c["n"], o["kind"], f"{o['namespace']}/{o['name']}", c["priority"], _action(c),
               _names(victims, wide) if wide else (len(victims) or "-")]
        rows.append(row + ([c["message"]] if wide else []))
    if rows or no_headers:  # no cycle: the summary says 0 cycle(s); a header over no rows says nothing more
        print_table(console, "Timeline", headers, rows, no_headers)
    if no_headers:
        if err is not None:
            print_warnings(err, doc["warnings"])
        return
    if doc["cascade"]:
        console.print("Who preempted whom", highlight=False)
        for n in doc["cascade"]:
            _tree_lines(console, n, "  ", wide)
        console.print()
    if doc["evictedMoreThanOnce"]:
        console.print("Evicted more than once", highlight=False)
        for r in doc["evictedMoreThanOnce"]:
            say(console, f"  {r['pod']}: {r['times']} times (cycles {', '.join(map(str, r['cycles']))}; as {', '.join(r['as'])})")
        console.print()
    for st in doc["storms"]:
        say(console, f"WARNING: preemption storm: {_object(st['preemptor'])} preempted the lineage of {st['victim']} "
                     f"{len(st['cycles'])} times (cycles {', '.join(map(str, st['cycles']))})"
                     + ("; cut off: the simulation stopped scheduling it" if st["cutOff"] else ""), "bold red", "WARNING:")
    if doc["storms"]:
        console.print()
    if doc["pending"]:
        print_table(console, "Still pending", ["KIND", "OBJECT", "PRIORITY", "PODS", "REASON"],
                    [[p["kind"], f"{p['namespace']}/{p['name']}", p["priority"], p["pods"], p["reason"]] for p in doc["pending"]], no_headers)
    t = doc["totals"]
    console.print("Totals", highlight=False)
    say(console, "  Evictions by namespace:  " + (", ".join(f"{k} {v}" for k, v in t["evictionsByNamespace"].items()) or "none"))
    say(console, "  By priority:             " + (", ".join(f"{k}: {v}" for k, v in t["evictionsByPriority"].items()) or "none"))
    say(console, f"  PDB violations:          {t['pdbViolations']}")
    gpu = ", ".join(f"{r} {h:g}" for r, h in t["gpuHoursLost"].items()) or "none"
    extra = f" ({t['gpuVictimsWithoutStartTime']} GPU victim(s) without a start time not counted)" if t["gpuVictimsWithoutStartTime"] else ""
    say(console, f"  GPU-hours of work lost:  {gpu}{extra}")
    if err is not None:
        print_warnings(err, doc["warnings"])


def _tree_lines(console: Console, n: dict, indent: str, wide: bool) -> None:
    victims = [v["pod"] + (f" -> {v['recreatedAs']}" if v["recreatedAs"] else "") for v in n["victims"]]
    say(console, f"{indent}cycle {n['cycle']}: {_object(n['object'])} (priority {n['priority']}) preempted {len(victims)} pod(s): "
                 + _names(victims, wide, 6), indent=indent + "    ")
    for k in n["then"]:
        _tree_lines(console, k, indent + "  ", wide)
