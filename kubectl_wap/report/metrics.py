"""`kubectl wap metrics` (issue 36): the preemption outlook (diagnose/outlook.py) in the Prometheus
text exposition format 0.0.4. Names follow Prometheus' conventions: the `wap_` prefix, base units in
the name (`_seconds`), `_total` only on counters, `_info` for a constant-1 series whose labels carry
the facts. README "Preemption-risk metrics" lists every family; METRIC_HELP is the one list."""

from __future__ import annotations

from typing import Any, Iterable

from ..diagnose.outlook import Outlook

GAUGE, COUNTER = "gauge", "counter"

# name -> (type, help). The order is the order of the output.
METRIC_HELP: dict[str, tuple[str, str]] = {
    "wap_pending_objects": (GAUGE, "Pending pods, PodGroups and CompositePodGroups (roots) analyzed."),
    "wap_pending_info": (GAUGE, "One series per pending object; labels: kind, namespace, name, preemption (yes, no, not needed, not allowed, -), outcome of its analysis."),
    "wap_pending_pods": (GAUGE, "Pending pods of the object."),
    "wap_pending_priority": (GAUGE, "Effective priority of the pending object."),
    "wap_pending_age_seconds": (GAUGE, "Seconds since the object (its earliest pending pod) was created."),
    "wap_pending_preemption_victim_pods": (GAUGE, "Pods kube-scheduler would preempt for the object (0 unless preemption helps)."),
    "wap_pending_preemption_victim_units": (GAUGE, "Preemption units (pods or whole groups) it would preempt."),
    "wap_pending_blocked": (GAUGE, "1 when something other than the scheduler holds the object (scheduling gates, queue managers, missing pods)."),
    "wap_pending_scale_up_helps": (GAUGE, "1 when one added node of a template would let the object schedule (only with --scale-up)."),
    "wap_preemptor_priority": (GAUGE, "The preemptor priority the unit risk ranks are for: the highest pending priority (above every unit when nothing is pending)."),
    "wap_running_units": (GAUGE, "Running preemption units (a pod, or a PodGroup/CompositePodGroup preempted whole), all of them, whatever --top-units shows."),
    "wap_unit_risk_rank": (GAUGE, "Place in the order workload-aware preemption gives units up to a preemptor of wap_preemptor_priority: 1 goes first. Absent for units that preemptor cannot take."),
    "wap_unit_priority": (GAUGE, "Effective priority of the running unit."),
    "wap_unit_pods": (GAUGE, "Pods of the running unit."),
    "wap_unit_violates_pdb": (GAUGE, "1 when preempting the unit would violate a PodDisruptionBudget (such units are reprieved first)."),
    "wap_unit_preemption_targeted": (GAUGE, "1 when some pending object's analysis preempts a pod of the unit (wap_unit_preempted_by lists which)."),
    "wap_unit_preempted_by": (GAUGE, "One series per (unit, pending object) whose analysis preempts a pod of the unit; labels preemptor_kind, preemptor_namespace, preemptor_name."),
    "wap_refresh_timestamp_seconds": (GAUGE, "Unix time the served metrics were last computed (--serve)."),
    "wap_refresh_duration_seconds": (GAUGE, "Seconds the last refresh took: re-list (or re-read) and analysis (--serve)."),
    "wap_refresh_success": (GAUGE, "1 when the last refresh succeeded; 0 keeps serving the previous values (--serve)."),
    "wap_refreshes_total": (COUNTER, "Refreshes attempted since the server started (--serve)."),
    "wap_refresh_errors_total": (COUNTER, "Refreshes that failed since the server started (--serve)."),
}


def _escape(value: str) -> str:
    # the exposition format's label-value escapes: backslash, double quote, line feed
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _value(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def render(samples: dict[str, list[tuple[dict[str, str], float]]]) -> str:
    """The families in METRIC_HELP order, each with its HELP and TYPE lines (only families that
    have samples)."""
    out: list[str] = []
    for name, (kind, help_text) in METRIC_HELP.items():
        rows = samples.get(name)
        if not rows:
            continue
        out.append(f"# HELP {name} {help_text}")
        out.append(f"# TYPE {name} {kind}")
        for labels, v in rows:
            lab = ",".join(f'{k}="{_escape(str(val))}"' for k, val in labels.items())
            out.append(f"{name}{{{lab}}} {_value(v)}" if lab else f"{name} {_value(v)}")
    return "\n".join(out) + "\n" if out else ""


def outlook_samples(o: Outlook, top_units: int | None = None) -> dict[str, list[tuple[dict[str, str], float]]]:
    """With top_units, the per-unit families hold only the units of risk rank <= top_units and
    those a pending object would take (a few series per unit: a 30k-pod cluster has ~22k units)."""
    s: dict[str, list[tuple[dict[str, str], float]]] = {name: [] for name in METRIC_HELP}
    s["wap_pending_objects"].append(({}, len(o.pending)))
    for r in o.pending:
        key = {"kind": r.kind, "namespace": r.namespace, "name": r.name}
        s["wap_pending_info"].append(({**key, "preemption": r.preemption, "outcome": r.outcome or "-"}, 1))
        s["wap_pending_pods"].append((key, r.pending_pods))
        s["wap_pending_priority"].append((key, r.priority))
        if r.created is not None:
            s["wap_pending_age_seconds"].append((key, max(0.0, o.now - r.created)))
        s["wap_pending_preemption_victim_pods"].append((key, r.victim_pods))
        s["wap_pending_preemption_victim_units"].append((key, r.victim_units))
        s["wap_pending_blocked"].append((key, 1 if r.blockers else 0))
        if r.scale_up:
            s["wap_pending_scale_up_helps"].append((key, 0 if r.scale_up == "no" else 1))
    s["wap_preemptor_priority"].append(({}, o.preemptor_priority))
    s["wap_running_units"].append(({}, len(o.units)))
    for u in o.units:
        if top_units is not None and not u.taken_by and (u.risk_rank is None or u.risk_rank > top_units):
            continue
        key = {"kind": u.kind, "namespace": u.namespace, "name": u.name}
        if u.risk_rank is not None:
            s["wap_unit_risk_rank"].append((key, u.risk_rank))
        s["wap_unit_priority"].append((key, u.priority))
        s["wap_unit_pods"].append((key, u.pods))
        s["wap_unit_violates_pdb"].append((key, 1 if u.violates_pdb else 0))
        s["wap_unit_preemption_targeted"].append((key, 1 if u.taken_by else 0))
        for kind, ns, name in u.taken_by:
            s["wap_unit_preempted_by"].append(({**key, "preemptor_kind": kind, "preemptor_namespace": ns, "preemptor_name": name}, 1))
    return s


def outlook_text(o: Outlook, top_units: int | None = None) -> str:
    return render(outlook_samples(o, top_units))


def refresh_text(stats: Any) -> str:
    """The server's own families (metricsserve.py RefreshStats)."""
    return render({
        "wap_refresh_timestamp_seconds": [({}, stats.last_success)] if stats.last_success else [],
        "wap_refresh_duration_seconds": [({}, round(stats.last_duration, 3))],
        "wap_refresh_success": [({}, 1 if stats.ok else 0)],
        "wap_refreshes_total": [({}, stats.refreshes)],
        "wap_refresh_errors_total": [({}, stats.errors)],
    })


def family_names() -> Iterable[str]:
    return METRIC_HELP.keys()
