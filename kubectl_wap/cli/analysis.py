"""What the analysing commands (whatif, explain, rank --for, diff, simulate) share: the hypothetical
work their flags or -f describe, the analysis of one preemptor as a report document, and the
verdict's exit code."""

from __future__ import annotations

from typing import Any

import typer

from ..errors import UserError
from .app import _command
from .flags import Color
from .inputs import _default_namespace, _early_gates, _gates_for, _load
from .options import Hypothetical, Source
from .progress import step


# A hypothetical group is simulated pod by pod: 100k pods take minutes and gigabytes; 2e9 would
# exhaust memory before saying anything.
MAX_REPLICAS = 100_000


VERDICT_CODES = {"NoPreemptionNeeded": 0, "Preempt": 10, "Unschedulable": 11, "NotEligible": 12, "Invalid": 13}


def _hypothetical_objects(kind: str | None, name: str | None, hyp: Hypothetical, ns: str, namespace_given: str | None):
    """(extra objects, kind, namespace, name) for hypothetical work; extra None for existing work."""
    from ..snapshot.decode import hypothetical as h

    shape_flags = {
        "--requests": hyp.requests, "--priority-class": hyp.priority_class, "--min-count": hyp.min_count,
        "--disruption-mode": hyp.disruption_mode, "--node-selector": hyp.node_selector, "--toleration": hyp.toleration,
        "--preemption-policy": hyp.preemption_policy,
    }
    given = [flag for flag, v in shape_flags.items() if v]
    if hyp.file and given:
        raise UserError(f"{', '.join(given)} describe a flags-only hypothetical group; with -f, put them in the file (only --replicas applies)")
    if not hyp.file and hyp.replicas is None and given and (kind or "").lower() not in ("podgroup", "pg", "podgroups"):
        raise UserError(f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} only to a PodGroup (an existing one is "
                        "modified, a new one needs --replicas N) or to -f FILE")
    if hyp.replicas is not None and not 1 <= hyp.replicas <= MAX_REPLICAS:
        raise UserError(f"--replicas must be between 1 and {MAX_REPLICAS:,}")
    if hyp.min_count is not None and not 1 <= hyp.min_count <= MAX_REPLICAS:
        raise UserError(f"--min-count must be between 1 and {MAX_REPLICAS:,}")
    # Checked here, before the cluster is read, for an existing group as for a new one: an existing
    # group's copy took `--disruption-mode al` as a mode named "al" (group_from_flags checks only a new one).
    from ..model.lookup import did_you_mean

    if hyp.disruption_mode is not None and hyp.disruption_mode.lower() not in ("single", "all"):
        raise UserError(f"invalid --disruption-mode {hyp.disruption_mode!r}{did_you_mean(hyp.disruption_mode.lower(), ['single', 'all'])}: "
                        "want single or all")
    if hyp.preemption_policy is not None and hyp.preemption_policy not in (policies := ["PreemptLowerPriority", "Never"]):
        raise UserError(f"invalid --preemption-policy {hyp.preemption_policy!r}{did_you_mean(hyp.preemption_policy, policies)}: "
                        "want PreemptLowerPriority or Never")
    if hyp.min_count is not None and hyp.replicas is not None and hyp.min_count > hyp.replicas:
        raise UserError(f"--min-count {hyp.min_count} is more than --replicas {hyp.replicas}: the gang could never be satisfied")
    if hyp.file:
        from ..snapshot.io.files import load_items

        _, items = load_items(hyp.file)
        notes: list[str] = []
        objs, kind, ns, name = h.from_manifest(items, hyp.replicas, namespace_given, notes)
        return h.FileWork(objs, "-f: " + "; ".join(notes) if notes else ""), kind, ns, name
    if hyp.replicas is not None or given:
        if not kind or not name:
            raise UserError("a hypothetical group needs a kind and a name: whatif podgroup NAME --replicas N --requests ...")
        if kind.lower() not in ("podgroup", "pg", "podgroups"):
            raise UserError("flags-only hypothetical objects are PodGroups: whatif podgroup NAME --replicas N ...")
        spec = h.GroupSpec(
            name=name, namespace=ns, replicas=hyp.replicas, requests=h.parse_requests(hyp.requests or ""),
            priority_class=hyp.priority_class or "", min_count=hyp.min_count,
            disruption_mode=(hyp.disruption_mode or "single").lower(),
            node_selector=h.parse_selector(hyp.node_selector or []),
            tolerations=[h.parse_toleration(t) for t in hyp.toleration or []], preemption_policy=hyp.preemption_policy,
        )
        # resolved once the cluster is read: an existing PodGroup is modified, a new name built (_load)
        flags = (["--replicas"] if hyp.replicas is not None else []) + given
        return h.FlagsWork(spec, tuple(flags)), kind, ns, name
    if not kind or not name:
        raise UserError(f"say what to analyze: {_command()} podgroup|compositepodgroup|pod NAME (or TYPE/NAME), or {_command()} -f FILE")
    return None, kind, ns, name


def _analysis(kind: str | None, name: str | None, src: Source, hyp: Hypothetical, color: Color,
              spared_on_placement_only: bool = False, cycles: int | None = None):
    """The scenario's report document, plus (snapshot, gates) for renderings that need the cluster."""
    from ..model import lookup
    from ..preemption.analyze import analyze
    from ..report.document import to_document
    from ..report.profileinfo import profile_fields

    kind, name = lookup.split_type_name(kind, name)
    if kind:
        lookup.kind_of(kind)
    _early_gates(src.feature_gates, src.scheduler_version)
    ns = src.namespace or _default_namespace(src)
    extra, kind, ns, name = _hypothetical_objects(kind, name, hyp, ns, src.namespace)
    kueue_items: list | None = [] if hyp.file and not hyp.no_kueue else None
    kueue_cfg = _kueue_config(hyp.kueue_config)  # before the cluster is read: a bad file fails fast
    snap = _load(src, color, extra, kueue=kueue_items)
    gates = _gates_for(snap, src.feature_gates, src.scheduler_version)
    lookup.check_cluster(snap, need_pods=extra is None)
    if extra is None:
        lookup.check_object(snap, kind, ns, name)
    elif not hyp.file:
        from ..snapshot.decode.hypothetical import parse_requests

        mine = frozenset(((o.get("metadata") or {}).get("namespace") or ns, (o.get("metadata") or {}).get("name")) for o in extra)
        lookup.check_hypothetical(snap, hyp.priority_class, parse_requests(hyp.requests or ""), ns, mine)
    if hyp.ignore_gates:
        from ..preemption.liftgates import lift_gates

        snap, _ = lift_gates(snap, kind, ns, name, gates.composite_pod_group)
    if hyp.file and hyp.replicas is None and kind == "podgroup":
        pods = [o for o in extra or [] if o.get("kind") == "Pod"]
        pgs = [o for o in extra or [] if o.get("kind") == "PodGroup"]
        min_count = (((pgs[0].get("spec") or {}).get("schedulingPolicy") or {}).get("gang") or {}).get("minCount") if pgs else None
        if len(pods) == 1 and isinstance(min_count, int) and min_count > 1:
            snap.warnings.append(
                f"the file holds one pod but the gang needs minCount {min_count}: pass --replicas N to use the pod as a template"
            )
    if cycles is not None and cycles < 1:
        raise UserError(f"--cycles must be at least 1, not {cycles}")
    queueing = None
    if kueue_items is not None:  # a Kueue cluster: its admission comes first (kueuestage.py)
        from .kueuestage import apply_evictions, kueue_section

        if (queueing := kueue_section(hyp.file, kueue_items, snap.header.forbidden, kueue_cfg, snap.warnings)) is not None:
            snap = apply_evictions(snap, queueing)
    with step(no_color=color == Color.never) as progress:
        res = analyze(snap, kind, ns, name, gates, **({"max_cycles": cycles} if cycles else {}), progress=progress)
    source = "demo" if src.demo else (src.snapshot or snap.header.source or "cluster")
    doc = to_document(res, source=source, gates=gates.spelled(), spared_on_placement_only=spared_on_placement_only)
    doc.update(profile_fields(gates))
    if queueing is not None:
        doc["queueing"] = queueing
    _add_numbers(doc, snap)
    return doc, (snap, gates)


def _kueue_config(path: str | None) -> Any:
    """--kueue-config's switches, or None: Kueue's defaults (the stage's notes say they are assumed)."""
    if path is None:
        return None  # Kueue's modules stay unloaded on a cluster without Kueue (startup time)
    from ..snapshot.io.files import read_kueue_config

    return read_kueue_config(path)


def _add_numbers(doc: dict, snap: Any) -> None:
    """Fields computed from the document and the cluster (issue 16): the per-node arithmetic of
    the deciding resource, and the pick criterion behind each candidate node of default preemption."""
    from ..report.candidates import with_why
    from ..report.nodeuse import node_usage

    doc["nodeArithmetic"] = node_usage(doc, snap)
    if doc.get("candidateNodes"):
        doc["candidateNodes"] = with_why(doc, snap)


def _finish(doc: dict, exit_code: bool) -> None:
    if exit_code:
        raise typer.Exit(VERDICT_CODES.get(doc["outcome"], 1))

