"""`kubectl wap rank`: every preemption unit a preemptor could take, in importance order."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated, Any, Optional

import typer

from ..errors import UserError
from .analysis import _analysis
from .app import _examples, _guard, app
from .flags import AllowMissingOpt, Color, ColorOpt, DebugOpt, NoHeadersOpt, OutputOpt
from .inputs import _early_gates, _gates_for, _load, _snapshot_time
from .options import Hypothetical, Source, options


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


class Order(str, Enum):
    risk = "risk"
    protection = "protection"


@app.command(epilog=_examples(
    "  # Most at risk first (the default): the units a priority-1000000\n  # preemptor would take first\n"
    "  kubectl wap rank --priority 1000000 --demo --limit 10",
    "  # Only the units whose removal could help this (existing or\n  # hypothetical) preemptor\n"
    "  kubectl wap rank --for podgroup/job-1 -n ml --demo\n"
    "  kubectl wap rank --for podgroup/new --replicas 8 \\\n      --requests nvidia.com/gpu=1 -n ml --demo",
    "  # The reprieve order (most protected first), as JSON\n  kubectl wap rank --order protection -o json --snapshot prod.json.gz",
))
@options(src=Source, hyp=Hypothetical)
def rank(
    priority: Annotated[Optional[int], typer.Option("--priority", metavar="N", help="Preemptor priority (default: above every running unit; with --for, the preemptor's).")] = None,
    order: Annotated[Order, typer.Option("--order", help="risk: the units preemption takes first come first (default); protection: the reprieve order, most protected first.")] = Order.risk,
    limit: Annotated[Optional[int], typer.Option("--limit", metavar="N", help="Show at most this many units.")] = None,
    for_: Annotated[Optional[str], typer.Option("--for", metavar="TYPE/NAME", help="TYPE/NAME of a preemptor (existing, or hypothetical with --replicas/-f): keep only units on nodes where preemption might help it.")] = None,
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A", help="List units of every namespace (the default unless -n is given).")] = False,
    src: Source = Source(),
    hyp: Hypothetical = Hypothetical(),
    output: OutputOpt = "table",
    allow_missing_template_keys: AllowMissingOpt = "true",
    color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False,
    debug: DebugOpt = False,
) -> None:
    """List every preemption unit a preemptor could take: by default most at risk first (the order
    workload-aware preemption gives units up), or in reprieve order (--order protection)."""

    def run() -> None:
        from .output import emit, output_format

        out = output_format(output, allow_missing=allow_missing_template_keys)
        doc, captured = _rank_report(priority, order.value, limit, for_, all_namespaces, src, hyp, color)
        emit(doc, out, rank_printers(captured), color, no_headers)

    _guard(debug, run)


def rank_printers(captured: float | None) -> Any:
    """rank's rows are the preemption units; the table's AGE counts from the capture time."""
    from ..report.formats import unit_names
    from .output import Printers

    def table(doc: dict, console: Any, err: Any, wide: bool, no_headers: bool) -> None:
        import time

        from ..report.tables import render_rank

        render_rank(doc, console, wide=wide, no_headers=no_headers, err=err, now=captured or time.time())

    return Printers(table, lambda d: d.get("units") or [], unit_names)


def rank_report(priority: int | None, order: str, limit: int | None, for_: str | None, all_namespaces: bool,
                src: Source, hyp: Hypothetical, color: Color = Color.never) -> dict:
    """rank's answer (the command and the MCP tool): the RankReport in the order asked."""
    return _rank_report(priority, order, limit, for_, all_namespaces, src, hyp, color)[0]


def _rank_report(priority: int | None, order: str, limit: int | None, for_: str | None, all_namespaces: bool,
                 src: Source, hyp: Hypothetical, color: Color = Color.never) -> tuple[dict, float | None]:
    """(the RankReport, the snapshot's capture time: what the table's AGE column counts from)."""
    from ..preemption.ranking import rank_units
    from ..report.profileinfo import profile_fields
    from ..report.document import rank_document
    from ..report.rankview import for_preemptor, ordered

    if limit is not None and limit < 1:
        raise UserError("--limit must be at least 1")
    _early_gates(src.feature_gates, src.scheduler_version)
    if priority is not None and not INT32_MIN <= priority <= INT32_MAX:
        raise UserError(f"--priority must be a 32-bit integer (PriorityClass values are int32), got {priority}")
    # -n selects the listed namespace, except with --for, where it is the preemptor's.
    shown_ns = None if all_namespaces or for_ else src.namespace
    helps = None
    prio = priority
    if for_:
        fkind, fname = for_.split("/", 1) if "/" in for_ else (for_, None)
        if not hyp.file and not (fkind and fname):  # _analysis would speak of `rank podgroup NAME`, which rank does not take
            raise UserError(f"--for wants TYPE/NAME, e.g. --for podgroup/job-1 (got {for_!r})")
        doc, (snap, gates) = _analysis(fkind, fname, src, hyp, color)
        helps = for_preemptor(snap, doc, gates)
        prio = doc["preemptor"]["priority"] if priority is None else priority
        warnings = doc.get("warnings") or []  # the load's and the preemptor's (the -f note, defaulting, ...)
    else:
        if hyp.file or hyp.replicas is not None:
            raise UserError("hypothetical flags apply to rank only with --for TYPE/NAME")
        snap = _load(src, color)
        lookup_ns = src.namespace if src.namespace and not all_namespaces else None
        if lookup_ns:
            from ..model.lookup import check_namespace

            check_namespace(snap, lookup_ns)
        gates = _gates_for(snap, src.feature_gates, src.scheduler_version)
        warnings = snap.warnings  # the load's, the version profile's among them (_gates_for)
    ranked = rank_units(snap, prio, gates)
    doc = ordered(rank_document(ranked, prio, shown_ns), order, limit, helps, for_)
    doc.update(profile_fields(gates))
    if warnings:
        doc["warnings"] = list(dict.fromkeys(warnings))
    return doc, _snapshot_time(snap)
