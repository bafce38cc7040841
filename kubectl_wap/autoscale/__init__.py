"""`--autoscale`: would adding nodes (Cluster Autoscaler / overscheduling) avoid preemption?

`autoscale_section(...)` builds the report's ``autoscale`` section; see docs/commands/whatif.md
"Autoscaling what-if" for the fields.
"""

from __future__ import annotations

from ..model import Snapshot
from ..preemption.analyze import analyze
from ..preemption.gates import Gates
from ..preemption.result import INVALID
from .overschedule import overschedule_check, parse_multiplier, pods_fitting_no_template, template_fit
from .scaleup import Simulator, Trial
from .templates import DEFAULT_MAX_NODES, Template, infer_templates, load_templates

# Cluster Autoscaler --expendable-pods-priority-cutoff default.
EXPENDABLE_CUTOFF = -10

__all__ = ["autoscale_section", "Template", "load_templates", "infer_templates", "EXPENDABLE_CUTOFF"]


def _adds(additions: dict[str, int]) -> list[dict]:
    return [{"template": k, "count": v} for k, v in sorted(additions.items()) if v > 0]


def _preempt_summary(res) -> dict:
    classes = sorted({p.priority_class_name for p in res.victim_pods if p.priority_class_name})
    return {
        "outcome": res.outcome,
        "victimPods": len(res.victim_pods),
        "victimUnits": len(res.victims),
        "priorityClasses": classes,
    }


def autoscale_section(
    snap: Snapshot,
    kind: str,
    namespace: str,
    name: str,
    gates: Gates | None,
    templates_path: str | None,
    multiplier: float | None,
    expendable_cutoff: int = EXPENDABLE_CUTOFF,
) -> dict:
    parse_multiplier(multiplier)  # fail early on a bad value
    warnings: list[str] = []
    inferred_from: list[str] = []
    if templates_path:
        templates = load_templates(templates_path)
    else:
        templates, inferred_from = infer_templates(snap, DEFAULT_MAX_NODES)
        if templates:
            warnings.append(
                f"node templates inferred from the snapshot's nodes (grouped by {', '.join(inferred_from)}; "
                f"maxNodes {DEFAULT_MAX_NODES} each, no costs): pass a templates file for the autoscaler's real node groups"
            )
        else:
            warnings.append("no node templates: no node carries an instance-type or node-pool label; pass a templates file")

    base = analyze(snap, kind, namespace, name, gates)
    pending = list(base.preemptor.pods)
    usable = [t for t in templates if t.max_nodes > 0]
    out: dict = {
        "templates": [t.describe() for t in templates],
        "inferredFrom": inferred_from,
        "overschedule": overschedule_check(pending, templates, multiplier) if templates else None,
        "noScaleUpHelps": False,
        "preempt": _preempt_summary(base),
        "addNodes": None,
        "mixed": [],
        "warnings": warnings,
    }
    if multiplier is not None and not templates:
        out["overschedule"] = {"multiplier": float(multiplier), "admitted": False, "jobResources": {}, "largestShapes": []}

    # Cluster Autoscaler filters.
    prio = base.preemptor.priority
    if prio < expendable_cutoff:
        warnings.append(
            f"not as configured: Cluster Autoscaler does not scale up for pods with priority {prio} "
            f"below --expendable-pods-priority-cutoff ({expendable_cutoff})"
        )
    nominated = [p for p in pending if p.nominated_node_name]
    if nominated:
        warnings.append(
            f"not as configured: {len(nominated)} pending pod(s) already have a nominated node "
            f"(e.g. {nominated[0].key} -> {nominated[0].nominated_node_name}); Cluster Autoscaler does not scale up for them"
        )

    if base.outcome == INVALID:
        warnings.append(f"the preemptor is invalid ({base.message}): adding nodes does not help")
        out["noScaleUpHelps"] = True
        return out
    if not pending:
        out["addNodes"] = {"nodes": [], "totalNodes": 0, "costPerHour": 0.0, "note": "no pending pods"}
        return out

    misfits = pods_fitting_no_template(pending, usable)
    if misfits or not usable:
        out["noScaleUpHelps"] = True
        if misfits:
            p, why = misfits[0]
            detail = "; ".join(f"{n}: {w}" for n, w in list(why.items())[:4])
            warnings.append(
                f"no scale-up helps: {len(misfits)} pending pod(s) fit no template on an empty node, e.g. {p.key} ({detail})"
            )
        else:
            warnings.append("no scale-up helps: every template has maxNodes 0")
        return out

    sim = Simulator(snap, kind, namespace, name, gates, usable)
    sim._cache[()] = Trial({}, base)
    if sim.trial({}).works:
        out["addNodes"] = {"nodes": [], "totalNodes": 0, "costPerHour": 0.0, "note": "already schedulable without preemption"}
        return out

    best = _search(sim, usable, True, pending)
    partial = False
    if best is None:
        best = _search(sim, usable, False, pending)
        partial = best is not None
    if best is None:
        out["noScaleUpHelps"] = True
        warnings.append(
            "no scale-up helps within maxNodes: even with the templates' maximum nodes added the group is not schedulable without preemption"
        )
        return out
    total = sum(best.additions.values())
    out["addNodes"] = {
        "nodes": _adds(best.additions),
        "totalNodes": total,
        "costPerHour": sim.cost(best.additions),
        "placedPods": best.placed,
        "pendingPods": best.pending,
    }
    if partial:
        warnings.append(
            f"with the added nodes only {best.placed}/{best.pending} pending pods are placed (the gang's minCount); the rest stay pending"
        )
    # Mixed answers: fewer nodes of the chosen template(s) plus preemption.
    if len(best.additions) == 1:
        (tname, n), = best.additions.items()
        steps = [{tname: k} for k in range(1, n)]
    else:
        steps = []
        # Remove nodes one at a time from the largest count.
        cur = dict(best.additions)
        while sum(cur.values()) > 1:
            big = max(sorted(cur), key=lambda k: cur[k])
            cur = dict(cur)
            cur[big] -= 1
            steps.insert(0, {k: v for k, v in cur.items() if v > 0})
    for add in steps:
        tr = sim.trial(add)
        entry = {
            "added": _adds(add),
            "outcome": tr.result.outcome,
            "victimPods": tr.victim_pods,
            "victimUnits": tr.victim_units,
            "costPerHour": sim.cost(add),
        }
        out["mixed"].append(entry)
    return out


def _search(sim: Simulator, usable: list[Template], require_all: bool, pending: list) -> Trial | None:
    # A template alone can only work if every pending pod fits it; a mix only uses templates
    # that fit at least one pending pod.
    fits = {t.name: [template_fit(p, t) is None for p in pending] for t in usable}
    alone: list[tuple] = []
    for t in usable:
        if require_all and not all(fits[t.name]):
            continue
        tr = sim.fewest_alone(t, require_all)
        if tr is not None:
            n = sum(tr.additions.values())
            c = sim.cost(tr.additions)
            alone.append(((n, c if c is not None else 0.0, t.name), tr))
    if alone:
        alone.sort(key=lambda x: x[0])
        return alone[0][1]
    return sim.greedy([t for t in usable if any(fits[t.name])], require_all)
