"""`kubectl wap explain`: the decision step by step."""

from __future__ import annotations

from .analysis import _analysis, _finish
from typing import Any

from .app import _examples, _guard, app
from .flags import (AllowMissingOpt, Color, ColorOpt, CyclesOpt, DebugOpt, ExitCodeOpt, KindArg, NameArg, NoHeadersOpt,
                    OutputOpt)
from .options import Hypothetical, Source, options


@app.command(epilog=_examples(
    "  kubectl wap explain podgroup job-1 -n ml --demo\n  kubectl wap explain pod/urgent-report -n batch --snapshot prod.json.gz",
    "  # The same hypothetical flags as whatif\n  kubectl wap explain podgroup big-train -n ml --demo --replicas 40 \\\n"
    "      --requests nvidia.com/gpu=1",
))
@options(src=Source, hyp=Hypothetical)
def explain(
    kind: KindArg = None,
    name: NameArg = None,
    src: Source = Source(),
    hyp: Hypothetical = Hypothetical(),
    output: OutputOpt = "table",
    allow_missing_template_keys: AllowMissingOpt = "true",
    color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False,
    cycles: CyclesOpt = None,
    exit_code: ExitCodeOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Explain the decision step by step: priority and policy, validation, candidates in importance order, PDBs,
    the placement, and every reprieve attempt with its verdict (-o wide: long lists unfolded)."""

    def run() -> dict:
        from .output import emit, output_format

        out = output_format(output, allow_missing=allow_missing_template_keys)
        doc, _ = _analysis(kind, name, src, hyp, color, cycles=cycles)
        emit(doc, out, explain_printers(), color, no_headers)
        return doc

    doc = _guard(debug, run)
    _finish(doc, exit_code)


def explain_printers() -> Any:
    """explain's table is the decision step by step; its rows (custom-columns, -o name) are the
    victim pods, as whatif's."""
    from ..report.formats import victim_names
    from .output import Printers

    def table(doc: dict, console: Any, err: Any, wide: bool, no_headers: bool) -> None:
        from ..report.tables import render_explain

        render_explain(doc, console, err=err, wide=wide)  # prose: --no-headers has no header to drop

    return Printers(table, lambda d: d.get("victims") or [], victim_names)
