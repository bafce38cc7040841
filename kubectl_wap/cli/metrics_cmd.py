"""`kubectl wap metrics` (issue 36): the preemption outlook in the Prometheus text format. The
analysis is diagnose/outlook.py, the text report/metrics.py, the server metricsserve.py."""

from __future__ import annotations

import gc
import sys
from typing import Annotated, Optional

import typer

from ..errors import UserError, scrub
from .app import _examples, _guard, app
from .flags import (
    Color,
    ColorOpt,
    ContextOpt,
    DebugOpt,
    DemoOpt,
    GatesOpt,
    KubeconfigOpt,
    SchedVersionOpt,
    SnapshotOpt,
    TimeoutOpt,
)
from .inputs import _early_gates, _gates_for, _snapshot_time
from .options import Connection, Source, options
from .pending import _pending_state, _scale_up


def metrics_report(src: Source, scale_up: bool = False, node_templates: str | None = None, color: Color = Color.never,
                   top_units: int | None = None) -> tuple[str, list[str]]:
    """metrics' answer: (the Prometheus text of the cluster's preemption outlook, warnings)."""
    from ..diagnose.outlook import outlook
    from ..report.metrics import outlook_text

    _early_gates(src.feature_gates, src.scheduler_version)
    snap, claims = _pending_state(src, color)
    gates = _gates_for(snap, src.feature_gates, src.scheduler_version)
    o = outlook(snap, gates, _snapshot_time(snap), _scale_up(snap, scale_up, node_templates), claims)
    return outlook_text(o, top_units), list(dict.fromkeys(list(snap.warnings) + o.warnings))


@app.command(epilog=_examples(
    "  # The preemption outlook of the current cluster (Prometheus text format)\n  kubectl wap metrics",
    "  # For node-exporter's textfile collector (atomic write), e.g. from a CronJob\n"
    "  kubectl wap metrics --snapshot prod.json.gz \\\n      --output-file /var/lib/node_exporter/wap.prom",
    "  # Serve it on 127.0.0.1:9108/metrics, re-listing the cluster every 5 min\n  kubectl wap metrics --serve :9108 --interval 300",
))
@options(conn=Connection)
def metrics(
    snapshot: SnapshotOpt = None, demo: DemoOpt = False, kubeconfig: KubeconfigOpt = None, context: ContextOpt = None,
    feature_gates: GatesOpt = None, scheduler_version: SchedVersionOpt = None, request_timeout: TimeoutOpt = None,
    output_file: Annotated[Optional[str], typer.Option("--output-file", metavar="FILE", help="Write the metrics to this file (atomically: written beside it, then renamed) instead of stdout.")] = None,
    serve: Annotated[Optional[str], typer.Option("--serve", metavar="HOST:PORT", help="Serve the metrics over HTTP at /metrics (:PORT binds 127.0.0.1; give a host to listen elsewhere).")] = None,
    interval: Annotated[float, typer.Option("--interval", metavar="SECONDS", help="With --serve: seconds between the end of one refresh (a re-list or re-read and the analysis) and the next.")] = 60.0,
    top_units: Annotated[Optional[int], typer.Option("--top-units", metavar="N", help="Per-unit series only for the N units most at risk and those a pending object would take (default: every running unit).")] = None,
    scale_up: Annotated[bool, typer.Option("--scale-up/--no-scale-up", "--autoscale/--no-autoscale", help="Also try one added node of each node template per pending object (slower; default off).")] = False,
    node_templates: Annotated[Optional[str], typer.Option("--node-templates", metavar="FILE", help="With --scale-up: YAML file of node shapes (default: inferred from existing node groups).")] = None,
    color: ColorOpt = Color.auto, debug: DebugOpt = False, conn: Connection = Connection(),
) -> None:
    """Preemption-risk metrics in the Prometheus text format: the outlook of every pending pod and group (would
    preemption help, how many victims) and the risk of every running unit (its place in the order preemption gives
    units up to the highest pending priority, and which pending objects would take it). Metric names: docs/commands/metrics.md."""

    def run() -> None:
        from .metricsserve import run_metrics
        from ..report.escape import printable

        src = Source(snapshot=snapshot, demo=demo, kubeconfig=kubeconfig, context=context, feature_gates=feature_gates,
                     scheduler_version=scheduler_version, request_timeout=request_timeout, **conn.connection())
        src.check()
        if top_units is not None and top_units < 0:
            raise UserError(f"--top-units must be at least 0, not {top_units}")
        if serve:
            gc.enable()  # a long-lived server: the one-shot commands' collector switch (_main) does not fit it
        run_metrics(lambda quiet: metrics_report(src, scale_up, node_templates, Color.never if quiet else color, top_units),
                    output_file, serve, interval, say=lambda line: typer.echo(printable(scrub(line)), err=True), out=sys.stdout)

    _guard(debug, run)
