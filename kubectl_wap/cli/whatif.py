"""`kubectl wap whatif`: what kube-scheduler would preempt for a pending or hypothetical object."""

from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

import typer

from ..errors import UserError
from .analysis import _analysis, _finish, _render_items
from .app import _console, _emit, _examples, _guard, app
from .flags import (
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
    _output_opt,
)
from .options import Hypothetical, Source, options


EXAMPLES_WHATIF = _examples(
    """  # What would kube-scheduler preempt for the pending PodGroup job-1?
  kubectl wap whatif podgroup job-1 -n ml""",
    """  # Same, on the bundled demo cluster or a saved snapshot, as JSON
  kubectl wap whatif podgroup job-1 -n ml --demo -o json
  kubectl wap whatif podgroup job-1 -n ml --snapshot prod.json.gz""",
    """  # A hypothetical gang of 16 GPU pods
  kubectl wap whatif podgroup new-job -n ml --replicas 16 \\
      --requests cpu=8,memory=64Gi,nvidia.com/gpu=1 --priority-class high-priority \\
      --min-count 16 --disruption-mode all --toleration nvidia.com/gpu=present:NoSchedule""",
    """  # A hypothetical group from a manifest (a PodGroup plus one pod template)
  kubectl wap whatif -f job.yaml --replicas 8 -n ml""",
    """  # Preempt, or add nodes? (node shapes inferred from the cluster, or --node-templates FILE)
  kubectl wap whatif podgroup job-1 -n ml --autoscale""",
)


WHATIF_FORMATS = ("table", "wide", "json", "yaml", "name", "jsonpath", "custom-columns", "html")


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
    result = analyze(snap, pre["kind"].lower(), pre["namespace"], pre["name"], gates)  # the Result objects, not the document
    return optimal_section(optimal_victims(snap, result, gates, time_limit), result)


@app.command(epilog=EXAMPLES_WHATIF)
@options(src=Source, hyp=Hypothetical)
def whatif(
    kind: KindArg = None,
    name: NameArg = None,
    src: Source = Source(),
    hyp: Hypothetical = Hypothetical(),
    autoscale: Annotated[bool, typer.Option("--autoscale", help="Also answer: would adding nodes avoid this preemption? (side by side: preempt, add nodes, mixed).")] = False,
    node_templates: Annotated[Optional[str], typer.Option("--node-templates", help="YAML file of node shapes the autoscaler can add (default: inferred from existing node groups).")] = None,
    overschedule_multiplier: Annotated[Optional[float], typer.Option("--overschedule-multiplier", help="Armada-style overscheduling check: admit when job resources <= largest node shape x M.")] = None,
    optimal: Annotated[bool, typer.Option("--optimal", help="Also compute the fewest victims (PDB violations, then priorities, then pods) any placement needs, with an exact solver.")] = False,
    optimal_time_limit: Annotated[float, typer.Option("--optimal-time-limit", help="Seconds for --optimal; beyond it the best placement found and its optimality gap are reported.")] = 10.0,
    cycles: CyclesOpt = None,
    selector: SelectorOpt = None,
    victim_namespace: VictimNsOpt = None,
    output: _output_opt(WHATIF_FORMATS) = "table",
    color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False,
    exit_code: ExitCodeOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Show what kube-scheduler would preempt for a pending or hypothetical PodGroup, CompositePodGroup or Pod."""

    def run() -> dict:
        from ..report.formats import parse_output, victim_names
        from ..report.victimfilter import filter_shown

        fmt, arg = parse_output(output, WHATIF_FORMATS)
        # The default table shows only the spared units on the placement's nodes: the document
        # need not list the other (at 5,000 nodes, ~100k) spared units for it.
        doc, res = _analysis(kind, name, src, hyp, color, spared_on_placement_only=fmt == "table", cycles=cycles)
        if autoscale or node_templates or overschedule_multiplier is not None:
            doc["autoscale"] = _autoscale(doc, res, node_templates, overschedule_multiplier)
        if optimal:
            if not optimal_time_limit > 0:
                raise UserError(f"--optimal-time-limit must be a positive number of seconds, not {optimal_time_limit:g}")
            doc["optimal"] = _optimal(doc, res, optimal_time_limit)
        shown = filter_shown(doc, res[0], selector, victim_namespace)
        if fmt in ("json", "yaml", "jsonpath"):
            _emit(shown, fmt, arg)
        elif fmt == "name":
            sys.stdout.write("".join(n + "\n" for n in victim_names(shown)))
        elif fmt == "custom-columns":
            _render_items(shown["victims"], fmt, arg, color, no_headers)
        elif fmt == "html":
            from ..report.html import render_html

            sys.stdout.write(render_html(shown, res[0]))
        else:
            from ..report.escape import printable_doc
            from ..report.tables import render_whatif

            console, err = _console(color), _console(color, stderr=True)
            safe = printable_doc(shown)
            render_whatif(safe, console, wide=fmt == "wide", no_headers=no_headers, err=err)
            if "autoscale" in doc:
                from ..report.tables import render_autoscale

                render_autoscale(safe["autoscale"], console, no_headers=no_headers, err=err)
            if "optimal" in shown:
                from ..report.diagnose import render_optimal

                render_optimal(shown["optimal"], console, no_headers=no_headers)
        return doc

    doc = _guard(debug, run)
    _finish(doc, exit_code)
