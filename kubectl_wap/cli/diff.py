"""`kubectl wap diff`: two scenarios of one preemptor compared."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..errors import UserError
from .analysis import _analysis
from .app import _click, _examples, _guard, app
from .flags import AllowMissingOpt, Color, ColorOpt, DebugOpt, HtmlOutputOpt, KindArg, NameArg, NoHeadersOpt
from .options import Hypothetical, Source, options


@app.command(epilog=_examples(
    "  # Two snapshots: what changes for job-1 between yesterday and today?\n"
    "  kubectl wap diff podgroup job-1 -n ml --snapshot monday.json.gz \\\n      --to '--snapshot tuesday.json.gz'",
    "  # One snapshot, two sets of hypothetical flags (B = A's flags\n  # overridden by --to)\n"
    "  kubectl wap diff podgroup new -n ml --demo --replicas 8 \\\n      --requests nvidia.com/gpu=1 --to '--replicas 16'",
    "  # In CI: exit 1 when the scenarios differ\n  kubectl wap diff podgroup job-1 -n ml --demo --exit-code \\\n"
    "      --to '--feature-gates PodGroupPreemptionPolicy=true'",
))
@options(src=Source, hyp=Hypothetical)
def diff(
    kind: KindArg = None,
    name: NameArg = None,
    to: Annotated[str, typer.Option("--to", metavar="FLAGS", help="Scenario B: flags that override scenario A's (e.g. '--snapshot b.json' or '--replicas 16').")] = "",
    src: Source = Source(),
    hyp: Hypothetical = Hypothetical(),
    output: HtmlOutputOpt = "table",
    allow_missing_template_keys: AllowMissingOpt = "true",
    color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False,
    exit_code: Annotated[bool, typer.Option("--exit-code", help="Exit 1 when the scenarios differ, 0 when they agree (like git diff --exit-code).")] = False,
    debug: DebugOpt = False,
) -> None:
    """Compare two scenarios of one preemptor: verdict, victims added/removed, placement changes."""

    def run() -> dict:
        from .output import emit, output_format

        out = output_format(output, html=True, allow_missing=allow_missing_template_keys)
        d = diff_report(kind, name, src, hyp, to, color)
        emit(d, out, diff_printers(), color, no_headers)
        return d

    d = _guard(debug, run)
    if exit_code:
        raise typer.Exit(1 if d["changed"] else 0)


def changed_victims(d: dict) -> list[dict]:
    """diff's rows: each victim that only one scenario preempts, with `change` added or removed."""
    return [{"change": change, **v} for change, key in (("added", "victimsAdded"), ("removed", "victimsRemoved"))
            for v in d.get(key) or []]


def diff_printers() -> Any:
    """diff's rows (custom-columns, -o name) are the victims that changed; it has one table (wide
    is the table) and a page."""
    from .output import Printers

    def table(d: dict, console: Any, err: Any, wide: bool, no_headers: bool) -> None:
        from ..report.tables import print_warnings, render_diff

        render_diff(d, console, no_headers=no_headers)
        print_warnings(err, d["warnings"])

    def html(d: dict) -> str:
        from ..report.html import render_diff_html

        return render_diff_html(d)

    return Printers(table, changed_victims, lambda d: [f"pod/{v['name']}" for v in changed_victims(d)], html)


def diff_report(kind: str | None, name: str | None, src: Source, hyp: Hypothetical, to: str, color: Color = Color.never) -> dict:
    """diff's answer (the command and the MCP tool): scenario A from the inputs, scenario B from A's
    flags overridden by `to` (parsed by the diff command itself, so B's flags mean what A's do)."""
    import dataclasses
    import shlex

    from ..report.diff import compare

    if not to.strip():
        raise UserError("say what scenario B changes: --to '--snapshot other.json' or --to '--replicas 16'")
    click = _click()
    ctx = click.globals.get_current_context(silent=True)
    command = typer.main.get_command(app).commands["diff"] if ctx is None else ctx.command  # the MCP tool: no context
    a_params = {"kind": kind, "name": name, **dataclasses.asdict(src), **dataclasses.asdict(hyp)}
    from .options import demo_args

    try:
        # `--demo kueue` as A's command line reads it (demo_args runs on the process's arguments only)
        b_ctx = command.make_context("diff", demo_args(shlex.split(to)), parent=ctx.parent if ctx else None, default_map=a_params)
    except click.exceptions.ClickException as e:
        raise UserError(f"--to: {e.format_message()}") from None
    b = dict(b_ctx.params)
    # B's source replaces A's: `--demo --to '--snapshot after.json'` compares the demo with the file
    # (A's --demo stayed set beside B's --snapshot: "use either --snapshot or --demo, not both").
    given = {f for f in ("snapshot", "demo") if b_ctx.get_parameter_source(f) == click.core.ParameterSource.COMMANDLINE}
    if given == {"snapshot"}:
        b["demo"] = False
    elif given == {"demo"}:
        b["snapshot"] = None
    b_src = Source(**{f: b[f] for f in Source.__dataclass_fields__})
    b_hyp = Hypothetical(**{f: b[f] for f in Hypothetical.__dataclass_fields__})
    doc_a, _ = _analysis(kind, name, src, hyp, color)
    doc_b, _ = _analysis(b.get("kind") or kind, b.get("name") or name, b_src, b_hyp, color)
    return compare(doc_a, doc_b, "A", f"B ({to.strip()})")
