"""`kubectl wap simulate`: kube-scheduler played forward over every pending object (issue 14). The
engine is kubectl_wap/simulate/, the rendering report/simulate.py."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from ..errors import UserError
from .analysis import _hypothetical_objects
from .app import _examples, _guard, app
from .flags import AllowMissingOpt, Color, ColorOpt, DebugOpt, HtmlOutputOpt, NoHeadersOpt
from .inputs import _default_namespace, _early_gates, _gates_for, _load, _snapshot_time
from .options import Hypothetical, Source, options
from .progress import step


@app.command(epilog=_examples(
    "  # Play every pending pod and group of the demo to the end: who preempts whom\n  kubectl wap simulate --demo",
    "  # The same with a hypothetical gang added, victims terminating for\n  # their grace period\n"
    "  kubectl wap simulate podgroup new -n ml --demo --replicas 8 \\\n      --requests nvidia.com/gpu=1 --grace",
    "  # As data\n  kubectl wap simulate --snapshot prod.json.gz -o json",
))
@options(src=Source, hyp=Hypothetical)
def simulate(
    kind: Annotated[Optional[str], typer.Argument(help="With --replicas or -f only: podgroup (or TYPE/NAME) of the hypothetical work to add.")] = None,
    name: Annotated[Optional[str], typer.Argument(help="With --replicas only: the hypothetical group's name.")] = None,
    src: Source = Source(),
    hyp: Hypothetical = Hypothetical(),
    at: Annotated[Optional[str], typer.Option("--at", metavar="TIME", help="Simulated start time (RFC 3339), when hypothetical work is submitted (default: the snapshot's capture time; live: now; a file without one: its latest timestamp).")] = None,
    max_cycles: Annotated[int, typer.Option("--max-cycles", metavar="N", help="Stop after this many scheduling cycles.")] = 10_000,
    time_limit: Annotated[float, typer.Option("--time-limit", metavar="SECONDS", help="Stop after this many seconds of computing.")] = 300.0,
    recreate_victims: Annotated[bool, typer.Option("--recreate-victims/--no-recreate-victims", help="Victims with a controller owner reference come back as new pending pods (default on).")] = True,
    grace: Annotated[bool, typer.Option("--grace", help="Victims keep their resources until their grace period ends (default: they are gone at once).")] = False,
    grace_seconds: Annotated[int, typer.Option("--grace-seconds", metavar="SECONDS", help="With --grace: the grace period of pods whose terminationGracePeriodSeconds is not in the snapshot.")] = 30,
    job_backoff_limit: Annotated[int, typer.Option("--job-backoff-limit", metavar="N", help="A Job's victims are recreated until it has failed more than this many times (Jobs are not in the snapshot).")] = 6,
    storm_limit: Annotated[int, typer.Option("--storm-limit", metavar="N", help="Stop scheduling a preemptor once it has preempted the same victims this many times (a preemption storm).")] = 3,
    output: HtmlOutputOpt = "table",
    allow_missing_template_keys: AllowMissingOpt = "true",
    color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Play kube-scheduler forward: every pending pod and group (plus hypothetical work) in queue order, cycle by
    cycle, until the queue is empty or nothing can change; victims with a controller come back and are scheduled
    too. Shows the timeline, who preempted whom, storms, what is still pending and why, and the totals."""

    def run() -> None:
        from .output import emit, output_format

        out = output_format(output, html=True, allow_missing=allow_missing_template_keys)
        doc = simulation_report(kind, name, src, hyp, color, at=at, max_cycles=max_cycles, time_limit=time_limit,
                                recreate_victims=recreate_victims, grace=grace, grace_seconds=grace_seconds,
                                job_backoff_limit=job_backoff_limit, storm_limit=storm_limit)
        emit(doc, out, simulate_printers(), color, no_headers)

    _guard(debug, run)


def evicted_names(doc: dict) -> list[str]:
    """simulate's -o name: every pod some cycle preempts (`pod/NAME`), once, in the order evicted."""
    seen = dict.fromkeys(f"pod/{v['name']}" for c in doc.get("cycles") or [] for v in c.get("victims") or [])
    return list(seen)


def simulate_printers() -> Any:
    """simulate's rows (custom-columns) are its cycles, the timeline; -o name lists the evicted
    pods; its page is the timeline."""
    from .output import Printers

    def table(doc: dict, console: Any, err: Any, wide: bool, no_headers: bool) -> None:
        from ..report.simulate import render_simulation

        render_simulation(doc, console, wide=wide, no_headers=no_headers, err=err)

    def html(doc: dict) -> str:
        from ..report.html import render_simulation_html

        return render_simulation_html(doc)

    return Printers(table, lambda d: d.get("cycles") or [], evicted_names, html)


def simulation_report(kind: str | None, name: str | None, src: Source, hyp: Hypothetical, color: Color = Color.never, *,
                      at: str | None = None, max_cycles: int = 10_000, time_limit: float = 300.0, recreate_victims: bool = True,
                      grace: bool = False, grace_seconds: int = 30, job_backoff_limit: int = 6, storm_limit: int = 3) -> dict:
    """simulate's answer (the command and the MCP tool): the Simulation document."""
    import time

    from ..model import lookup
    from ..report.simulate import simulation_document
    from ..simulate import Options
    from ..simulate import simulate as play
    from ..snapshot.decode.convert import parse_time

    for flag, v in (("--max-cycles", max_cycles), ("--storm-limit", storm_limit)):
        if v < 1:
            raise UserError(f"{flag} must be at least 1, not {v}")
    if not time_limit > 0 or grace_seconds < 0 or job_backoff_limit < 0:
        raise UserError("--time-limit must be positive; --grace-seconds and --job-backoff-limit at least 0")
    start = parse_time(at) if at else None
    if at and start is None:
        raise UserError(f"--at: want an RFC 3339 time such as 2026-12-01T12:00:00Z, got {at!r}")
    _early_gates(src.feature_gates, src.scheduler_version)
    ns = src.namespace or _default_namespace(src)
    kind_, name_ = lookup.split_type_name(kind, name)
    extra = None
    if hyp.file or any(v is not None for v in (hyp.replicas, hyp.requests, hyp.priority_class, hyp.min_count,
                                               hyp.disruption_mode, hyp.node_selector, hyp.toleration, hyp.preemption_policy)):
        extra, kind_, ns, name_ = _hypothetical_objects(kind_, name_, hyp, ns, src.namespace)
    elif kind_ or name_:
        raise UserError("simulate plays every pending object: TYPE NAME names only hypothetical work (with --replicas or -f)")
    extras: dict = {}
    kueue: list = []
    snap = _load(src, color, extra, extras, kueue)
    if hyp.ignore_gates:
        from ..preemption.liftgates import lift_all_gates

        snap, _ = lift_all_gates(snap)
    # the version's rules, as every analysing command picks them (it used to be 1.37 whatever was asked)
    gates = _gates_for(snap, src.feature_gates, src.scheduler_version)
    lookup.check_cluster(snap, need_pods=extra is None)
    if start is None:  # the capture time; live: now; a file without one: its latest timestamp (engine default)
        start = _snapshot_time(snap) or (None if src.snapshot or src.demo else time.time())
    submitted = frozenset(((o.get("metadata") or {}).get("namespace") or ns, (o.get("metadata") or {}).get("name"))
                          for o in extra or [] if o.get("kind") == "Pod")
    opts = Options(gates=gates, max_cycles=max_cycles, time_limit=time_limit, recreate_victims=recreate_victims, grace=grace,
                   grace_seconds=grace_seconds, job_backoff_limit=job_backoff_limit, storm_limit=storm_limit)
    with step(no_color=color == Color.never) as progress:
        sim = play(snap, opts, extras, start, submitted, progress)
    if recreate_victims and sim.evictions and not any(ex.owner_kind for ex in extras.values()):
        sim.warnings.append("no pod in this source carries a controller owner reference (snapshots saved by kubectl wap before "
                            "formatVersion 3 keep none): no victim is recreated; take a new snapshot or use a `kubectl get -o yaml` "
                            "dump to see cascades")
    if waiting := _kueue_waiting(kueue):
        sim.warnings.append(f"simulate plays kube-scheduler, not Kueue: {len(waiting)} Workload(s) Kueue has not admitted "
                            f"({', '.join(waiting[:3])}{', ...' if len(waiting) > 3 else ''}) are left out (their jobs have no "
                            "pod yet); `pending -A` gives Kueue's answer for them")
    options_doc = {"maxCycles": max_cycles, "recreateVictims": recreate_victims, "grace": grace, "graceSeconds": grace_seconds,
                   "jobBackoffLimit": job_backoff_limit, "stormLimit": storm_limit}
    source = "demo" if src.demo else (src.snapshot or snap.header.source or "cluster")
    doc = simulation_document(sim, source, gates.spelled(), options_doc)
    from ..report.profileinfo import profile_fields

    doc.update(profile_fields(gates))
    return doc


def _kueue_waiting(raw: list[Any]) -> list[str]:
    """namespace/name of the active Workloads without a quota reservation: suspended jobs, no pod
    for simulate's queue to play (pending gives them rows of kind Workload, queueing/kueue/answer.py).
    A Kueue setup the model refuses says nothing here: pending's warning says it."""
    from ..queueing.kueue.objects import objects_from_items

    try:
        objs = objects_from_items(raw)
    except UserError:
        return []
    if objs is None:
        return []
    return sorted(w.key for w in objs.workloads if w.admission is None and w.active and not w.finished)
