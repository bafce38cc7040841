"""`kubectl wap whatif`: what kube-scheduler would preempt for a pending or hypothetical object."""

from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

import typer

from ..errors import UserError
from .analysis import _analysis, _finish
from .app import _examples, _guard, app
from .flags import (
    AllowMissingOpt,
    Color,
    ColorOpt,
    CyclesOpt,
    DebugOpt,
    ExitCodeOpt,
    KindArg,
    NameArg,
    NoHeadersOpt,
    SelectorOpt,
    VictimNsOpt,
    HtmlOutputOpt,
)
from .options import Hypothetical, Source, options
from .progress import step


EXAMPLES_WHATIF = _examples(
    """  # What would kube-scheduler preempt for the pending PodGroup job-1?
  kubectl wap whatif podgroup job-1 -n ml""",
    """  # Same, on the bundled demo cluster or a saved snapshot, as JSON
  kubectl wap whatif podgroup job-1 -n ml --demo -o json
  kubectl wap whatif podgroup job-1 -n ml --snapshot prod.json.gz""",
    """  # A hypothetical gang of 16 GPU pods
  kubectl wap whatif podgroup new-job -n ml --replicas 16 \\
      --requests cpu=8,memory=64Gi,nvidia.com/gpu=1 \\
      --priority-class high-priority --min-count 16 --disruption-mode all \\
      --toleration nvidia.com/gpu=present:NoSchedule""",
    """  # A hypothetical group from a manifest (a PodGroup plus one pod template)
  kubectl wap whatif -f job.yaml --replicas 8 -n ml""",
    """  # Preempt, or add nodes? (node shapes inferred from the cluster,
  # or given with --node-templates FILE)
  kubectl wap whatif podgroup job-1 -n ml --autoscale""",
)


GATE_CODE = 20  # whatif --fail-if fired: apart from the verdict codes, usage (2) and errors (1)


def _autoscale(doc: dict, res: Any, templates: str | None, multiplier: float | None) -> dict:
    from ..autoscale import autoscale_section

    snap, gates = res
    pre = doc["preemptor"]
    return autoscale_section(snap, pre["kind"].lower(), pre["namespace"], pre["name"], gates, templates, multiplier)


def _optimal(doc: dict, res: Any, time_limit: float) -> dict:
    from ..diagnose.optimal import optimal_victims
    from ..preemption.analyze import analyze
    from ..report.diagnose import optimal_section

    snap, gates = res
    pre = doc["preemptor"]
    with step() as progress:
        result = analyze(snap, pre["kind"].lower(), pre["namespace"], pre["name"], gates, progress=progress)  # the Result objects
        return optimal_section(optimal_victims(snap, result, gates, time_limit, progress=progress), result)


@app.command(epilog=EXAMPLES_WHATIF)
@options(src=Source, hyp=Hypothetical)
def whatif(
    kind: KindArg = None,
    name: NameArg = None,
    src: Source = Source(),
    hyp: Hypothetical = Hypothetical(),
    autoscale: Annotated[bool, typer.Option("--autoscale", help="Also answer: would adding nodes avoid this preemption? (side by side: preempt, add nodes, mixed).")] = False,
    node_templates: Annotated[Optional[str], typer.Option("--node-templates", metavar="FILE", help="YAML file of node shapes the autoscaler can add (default: inferred from existing node groups).")] = None,
    overschedule_multiplier: Annotated[Optional[float], typer.Option("--overschedule-multiplier", metavar="X", help="Armada-style overscheduling check: admit when job resources <= largest node shape x M.")] = None,
    optimal: Annotated[bool, typer.Option("--optimal", help="Also compute the fewest victims (PDB violations, then priorities, then pods) any placement needs, with an exact solver.")] = False,
    optimal_time_limit: Annotated[float, typer.Option("--optimal-time-limit", metavar="SECONDS", help="Seconds for --optimal; beyond it the best placement found and its optimality gap are reported.")] = 10.0,
    cycles: CyclesOpt = None,
    selector: SelectorOpt = None,
    victim_namespace: VictimNsOpt = None,
    output: HtmlOutputOpt = "table",
    allow_missing_template_keys: AllowMissingOpt = "true",
    color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False,
    exit_code: ExitCodeOpt = False,
    fail_if: Annotated[Optional[str], typer.Option("--fail-if", metavar="EXPR", help=(
        "CI gate: exit 20, the reason on stderr, when this predicate over the report holds, e.g. 'victims > 0', "
        "'pdbViolated', 'namespace in (prod)', 'gpuPods > 4 or victimUnits >= 3' (docs/ci-gate.md)."))] = None,
    debug: DebugOpt = False,
) -> None:
    """Show what kube-scheduler would preempt for a pending or hypothetical PodGroup, CompositePodGroup or Pod."""

    def run() -> dict:
        from .output import emit, output_format

        out = output_format(output, html=True, allow_missing=allow_missing_template_keys)
        gate = None
        if fail_if is not None:
            from ..report.gate import parse_predicate

            gate = parse_predicate(fail_if)  # refused before the cluster is read
        # The default table shows only the spared units on the placement's nodes: the document
        # need not list the other (at 5,000 nodes, ~100k) spared units for it.
        doc, shown, res = whatif_report(kind, name, src, hyp, color, spared_on_placement_only=out.format == "table", cycles=cycles,
                                        autoscale=autoscale, node_templates=node_templates,
                                        overschedule_multiplier=overschedule_multiplier, optimal=optimal,
                                        optimal_time_limit=optimal_time_limit, selector=selector,
                                        victim_namespace=victim_namespace)
        if gate is not None:
            from ..report.gate import near_misses

            if typos := near_misses(gate, res[0]):  # with the report's warnings, before it is printed
                shown["warnings"] = [*shown.get("warnings", []), *typos]
        emit(shown, out, whatif_printers(res[0]), color, no_headers)
        if gate is not None:
            from ..report.gate import gate_reason

            doc["_gate"] = gate_reason(gate, doc)  # the whole analysis, whatever -l shows
        return doc

    doc = _guard(debug, run)
    fired = doc.pop("_gate", None)
    if fired is not None:
        from ..report.escape import printable

        try:
            typer.echo(f"fail-if: {printable(fired)}", err=True)
        except (OSError, ValueError):
            pass  # stderr is gone: the exit code says it
        raise typer.Exit(GATE_CODE)
    _finish(doc, exit_code)


def whatif_printers(snap: Any) -> Any:
    """whatif's (and explain's) rows are the victim pods; its page draws the cluster (`snap`)."""
    from ..report.formats import victim_names
    from .output import Printers

    def table(shown: dict, console: Any, err: Any, wide: bool, no_headers: bool) -> None:
        from ..report.tables import render_whatif

        render_whatif(shown, console, wide=wide, no_headers=no_headers, err=err)
        if "autoscale" in shown:
            from ..report.tables import render_autoscale

            render_autoscale(shown["autoscale"], console, no_headers=no_headers, err=err)
        if "optimal" in shown:
            from ..report.diagnose import render_optimal

            render_optimal(shown["optimal"], console, no_headers=no_headers)

    def html(doc: dict) -> str:
        from ..report.html import render_html

        return render_html(doc, snap)

    return Printers(table, lambda d: d.get("victims") or [], victim_names, html)


def whatif_report(kind: str | None, name: str | None, src: Source, hyp: Hypothetical, color: Color = Color.never, *,
                  spared_on_placement_only: bool = False, cycles: int | None = None, autoscale: bool = False,
                  node_templates: str | None = None, overschedule_multiplier: float | None = None, optimal: bool = False,
                  optimal_time_limit: float = 10.0, selector: str | None = None, victim_namespace: str | None = None):
    """whatif's answer (the command and the MCP tool): (the whole document, the document as shown
    with -l/--victim-namespace, (snapshot, gates))."""
    from ..report.victimfilter import filter_shown

    doc, res = _analysis(kind, name, src, hyp, color, spared_on_placement_only=spared_on_placement_only, cycles=cycles)
    if autoscale or node_templates or overschedule_multiplier is not None:
        doc["autoscale"] = _autoscale(doc, res, node_templates, overschedule_multiplier)
    if optimal:
        if not optimal_time_limit > 0:
            raise UserError(f"--optimal-time-limit must be a positive number of seconds, not {optimal_time_limit:g}")
        doc["optimal"] = _optimal(doc, res, optimal_time_limit)
    return doc, filter_shown(doc, res[0], selector, victim_namespace), res
