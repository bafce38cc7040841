"""`kubectl wap explain`: the decision step by step."""

from __future__ import annotations

from .analysis import _analysis, _finish
from .app import _console, _emit, _examples, _guard, app
from .flags import Color, ColorOpt, CyclesOpt, DebugOpt, ExitCodeOpt, KindArg, NameArg, _output_opt
from .options import Hypothetical, Source, options


EXPLAIN_FORMATS = ("table", "wide", "json", "yaml", "jsonpath")


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
    output: _output_opt(EXPLAIN_FORMATS) = "table",
    color: ColorOpt = Color.auto,
    cycles: CyclesOpt = None,
    exit_code: ExitCodeOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Explain the decision step by step: priority and policy, validation, candidates in importance order, PDBs,
    the placement, and every reprieve attempt with its verdict (-o wide: long lists unfolded)."""

    def run() -> dict:
        from ..report.formats import parse_output

        fmt, arg = parse_output(output, EXPLAIN_FORMATS)
        doc, _ = _analysis(kind, name, src, hyp, color, cycles=cycles)
        if fmt in ("json", "yaml", "jsonpath"):
            _emit(doc, fmt, arg)
        else:
            from ..report.tables import render_explain

            render_explain(doc, _console(color), err=_console(color, stderr=True), wide=fmt == "wide")
        return doc

    doc = _guard(debug, run)
    _finish(doc, exit_code)
