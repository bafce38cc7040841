"""`kubectl wap`: the typer app. Thin: parse options, load the state, call the engine, render.

kubectl passes no global flags to plugins, so every command accepts the kubectl-style flags
(`-n`, `--context`, `--kubeconfig`) itself, after the subcommand."""

from __future__ import annotations

import atexit
import errno
import gc
import json
import os
import sys
import traceback
from enum import Enum
from typing import Annotated, Any, Callable, Optional

import typer

from . import __version__
from .cliopts import Hypothetical, Source, group_hints, options
from .errors import UserError, scrub
from .pipes import QuietPipe

def _examples(*blocks: str) -> str:
    """An epilog click prints verbatim: each block is marked with \\b so it is not re-wrapped."""
    return "Examples:\n\n" + "\n\n".join("\b\n" + b.strip("\n") for b in blocks)


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


app = typer.Typer(
    name="kubectl-wap",
    help="What-if analysis of Kubernetes workload-aware preemption: which pods and PodGroups kube-scheduler would "
    "preempt for a pending or hypothetical PodGroup or Pod, and why. Read-only: it never writes to the cluster.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Color(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


def _field(group: type, name: str) -> Any:
    """The Annotated type of one shared option (cliopts is the one definition)."""
    return group_hints(group)[name]


# Single options kept under their names for commands that take only some of the shared set.
SnapshotOpt = _field(Source, "snapshot")
DemoOpt = _field(Source, "demo")
KubeconfigOpt = _field(Source, "kubeconfig")
ContextOpt = _field(Source, "context")
NamespaceOpt = _field(Source, "namespace")
GatesOpt = _field(Source, "feature_gates")
SchedVersionOpt = _field(Source, "scheduler_version")
TimeoutOpt = _field(Source, "request_timeout")


MaxInputOpt = _field(Source, "max_input_size")
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")]
ColorOpt = Annotated[Color, typer.Option("--color", help="Colorize output: auto, always or never (NO_COLOR is honoured).")]
NoHeadersOpt = Annotated[bool, typer.Option("--no-headers", help="Omit table headers; columns have fixed widths (stable across runs).")]
ExitCodeOpt = Annotated[bool, typer.Option("--exit-code", help="Exit with a verdict code: 0 NoPreemptionNeeded, 10 Preempt, 11 Unschedulable, 12 NotEligible, 13 Invalid.")]
SelectorOpt = Annotated[Optional[str], typer.Option("--selector", "-l", help="Show only victims/spared units with a pod matching this label selector (the analysis is unchanged).")]
VictimNsOpt = Annotated[Optional[str], typer.Option("--victim-namespace", help="Show only victims/spared units in this namespace (the analysis is unchanged).")]

KindArg = Annotated[Optional[str], typer.Argument(help="podgroup, compositepodgroup or pod (or TYPE/NAME).")]
NameArg = Annotated[Optional[str], typer.Argument(help="Name of the pending (or hypothetical) object.")]

WHATIF_FORMATS = ("table", "wide", "json", "yaml", "name", "jsonpath", "custom-columns", "html")
EXPLAIN_FORMATS = ("table", "wide", "json", "yaml", "jsonpath")
RANK_FORMATS = ("table", "wide", "json", "yaml", "name", "jsonpath", "custom-columns")


def _output_opt(formats: tuple[str, ...]) -> Any:
    shown = "|".join(f + ("=..." if f in ("jsonpath", "custom-columns") else "") for f in formats)
    return Annotated[str, typer.Option("--output", "-o", help=f"Output format: {shown}.")]


# A hypothetical group is simulated pod by pod: 100k pods take minutes and gigabytes; 2e9 would
# exhaust memory before saying anything.
MAX_REPLICAS = 100_000
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

VERDICT_CODES = {"NoPreemptionNeeded": 0, "Preempt": 10, "Unschedulable": 11, "NotEligible": 12, "Invalid": 13}


def _console(color: Color, stderr: bool = False):
    from rich.console import Console

    # markup=False: text from the input is never read as Rich markup (`a[/x]` in a name).
    if color == Color.never or (color == Color.auto and os.environ.get("NO_COLOR")):
        return Console(stderr=stderr, no_color=True, highlight=False, color_system=None, width=_width(), markup=False)
    if color == Color.always:
        return Console(stderr=stderr, force_terminal=True, highlight=False, width=_width(), markup=False)
    return Console(stderr=stderr, highlight=False, width=_width(), markup=False)


def _width() -> int | None:
    """The terminal's width on a terminal; otherwise no wrapping at all (output for grep/awk)."""
    try:
        return None if sys.stdout.isatty() else 10_000
    except (AttributeError, ValueError):
        return 10_000


def _say_error(text: str) -> None:
    """One line on stderr: credentials scrubbed, control characters escaped (issue 19)."""
    from .report.escape import printable

    try:
        typer.echo(f"error: {printable(scrub(text))}", err=True)
    except (BrokenPipeError, OSError, ValueError):
        pass  # stderr is gone too: the exit code is all that is left to say it


def _print_traceback() -> None:
    """--debug: the traceback, with credentials scrubbed like every other line we print."""
    try:
        sys.stderr.write(scrub(traceback.format_exc()))
    except (OSError, ValueError):
        pass


def _guard(debug: bool, fn: Callable[[], Any]) -> Any:
    """User errors end as one line on stderr and exit 2; anything else as one line and exit 1."""
    try:
        return fn()
    except typer.Exit:
        raise
    except UserError as e:
        if debug:
            _print_traceback()
        _say_error(str(e))
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        _say_error("interrupted")
        raise typer.Exit(130) from None
    except MemoryError:
        if debug:
            _print_traceback()
        _say_error("out of memory: the input is too large for this machine (see --max-input-size)")
        raise typer.Exit(2) from None
    except RecursionError:
        if debug:
            _print_traceback()
        _say_error("the input is nested too deeply to analyze")
        raise typer.Exit(2) from None
    except _ClosedStdout:
        _say_error("cannot write the output: stdout is closed")
        raise typer.Exit(2) from None
    except OSError as e:
        if e.errno == errno.EPIPE:  # the reader went away (`| head`): stop quietly, like kubectl
            _quiet_stdout()
            raise typer.Exit(141) from None
        if debug:
            _print_traceback()
        _say_error(f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}")
        raise typer.Exit(2) from None
    except Exception as e:  # noqa: BLE001 - the last line of defence against tracebacks
        if debug:
            _print_traceback()
        _say_error(f"{type(e).__name__}: {e} (run with --debug for details)")
        raise typer.Exit(1) from None


class _ClosedStdout(Exception):
    """Writing to a stdout that was closed (`kubectl wap ... >&-`)."""


class _ClosedStream:
    """Stands in for sys.stdout when the process started with it closed (Python sets it to None)."""

    def write(self, _text: str) -> int:
        raise _ClosedStdout()

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _quiet_stdout() -> None:
    """After EPIPE (`| head`): point stdout at /dev/null so the interpreter's final flush does
    not print a second error (the Python docs' recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _default_namespace(src: Source) -> str:
    if src.snapshot or src.demo:
        return "default"
    from .snapshot.kubeconfig import context_namespace

    return context_namespace(src.kubeconfig, src.context)


def _load(src: Source, color: Color, extra: list[Any] | None = None, extras: dict | None = None):
    """The model of the source plus `extra` (hypothetical) objects; `extras`, when given, is
    filled with each raw pod's owner and grace period (snapshot/owners.py, for simulate)."""
    from .snapshot.hypothetical import Replacement
    from .snapshot.owners import tap_pod_extras
    from .snapshot.source import build, raw_source

    src.check()
    if not src.snapshot and not src.demo:
        console = _console(color, stderr=True)
        with console.status("reading the cluster (read-only)...") as status:
            def progress(resource: str, n: int) -> None:
                status.update(f"reading the cluster (read-only): {resource} {n}")

            header, items = raw_source(None, False, src.kubeconfig, src.context, src.request_timeout, progress)
    else:
        header, items = raw_source(src.snapshot, src.demo, src.kubeconfig, src.context, src.request_timeout)
    if extras is not None:
        items = tap_pod_extras(items, extras)
    if not extra:
        return build(header, items)
    from .snapshot.hypothetical import FlagsWork

    if isinstance(extra, FlagsWork):
        items = list(items)  # a snapshot file streams its items once: read them, then look up the group
        extra.resolve(items)
    objects = list(extra)
    replacement = Replacement(objects)
    snap = build(header, items, objects, keep=replacement.keep)
    if extra.note:
        snap.warnings.append(extra.note)
    if not (isinstance(extra, FlagsWork) and extra.note):  # a modified group's note says what it replaces
        snap.warnings.extend(replacement.warnings())
    return snap


def _early_gates(feature_gates: str | None, scheduler_version: str | None) -> None:
    """Refuse a bad --scheduler-version or --feature-gates before reading the cluster."""
    from .preemption.gates import parse_gates
    from .profilepick import parse_scheduler_version
    from .profiles import DEFAULT

    parse_gates(feature_gates, parse_scheduler_version(scheduler_version) or DEFAULT)


def _gates_for(snap: Any, feature_gates: str | None, scheduler_version: str | None):
    """The gates and version profile for this input (profilepick.py); a defaulted profile's
    warning joins the snapshot's warnings, so every report shows it."""
    from .preemption.gates import parse_gates
    from .profilepick import parse_scheduler_version, pick_profile

    picked = pick_profile(parse_scheduler_version(scheduler_version), snap.header.server_version)
    if picked.warning and picked.warning not in snap.warnings:
        snap.warnings.append(picked.warning)
    return parse_gates(feature_gates, picked.profile, picked.source, picked.warning)


def _emit(doc: Any, fmt: str, arg: str = "") -> None:
    """json/yaml/jsonpath/name to stdout (the table formats are rendered by report/tables)."""
    if fmt == "json":
        sys.stdout.write(_json_text(doc) + "\n")
    elif fmt == "yaml":
        import yaml

        sys.stdout.write(yaml.safe_dump(doc, sort_keys=False, width=120))
    elif fmt == "jsonpath":
        from .report.formats import jsonpath

        sys.stdout.write(jsonpath(arg, doc))  # as kubectl: the template says where lines end


def _json_text(doc: Any) -> str:
    """Indented JSON; orjson when installed (a 100k-candidate report is tens of MB: ~20x faster
    than the json module). Both write the same document; orjson keeps non-ASCII unescaped."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency, but optional at run time
        return json.dumps(doc, indent=2)
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # an integer beyond 64 bits, or a type orjson does not know
        return json.dumps(doc, indent=2)


def _hypothetical_objects(kind: str | None, name: str | None, hyp: Hypothetical, ns: str, namespace_given: str | None):
    """(extra objects, kind, namespace, name) for hypothetical work; extra None for existing work."""
    from .snapshot import hypothetical as h

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
    if hyp.preemption_policy is not None and hyp.preemption_policy not in ("PreemptLowerPriority", "Never"):
        raise UserError(f"invalid --preemption-policy {hyp.preemption_policy!r}: want PreemptLowerPriority or Never")
    if hyp.min_count is not None and hyp.replicas is not None and hyp.min_count > hyp.replicas:
        raise UserError(f"--min-count {hyp.min_count} is more than --replicas {hyp.replicas}: the gang could never be satisfied")
    if hyp.file:
        from .snapshot.files import load_items

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


def _command() -> str:
    """The running subcommand's name, for messages shared by the analysing commands."""
    ctx = _click().globals.get_current_context(silent=True)
    return ctx.info_name if ctx is not None and ctx.info_name else "whatif"


def _click() -> Any:
    try:
        import click
    except ImportError:  # typer >= 0.29 vendors click as typer._click
        from typer import _click as click  # type: ignore[no-redef]
    return click


CyclesOpt = Annotated[Optional[int], typer.Option("--cycles", help="Play at most this many pod-group scheduling cycles (default: until the group is placed or preemption runs; 1 = the first cycle only, where pods that fit bind and nothing is preempted).")]


def _analysis(kind: str | None, name: str | None, src: Source, hyp: Hypothetical, color: Color,
              spared_on_placement_only: bool = False, cycles: int | None = None):
    """The scenario's report document, plus (snapshot, gates) for renderings that need the cluster."""
    from . import lookup
    from .preemption.analyze import analyze
    from .report.document import to_document
    from .report.profileinfo import profile_fields

    kind, name = lookup.split_type_name(kind, name)
    if kind:
        lookup.kind_of(kind)
    _early_gates(src.feature_gates, src.scheduler_version)
    ns = src.namespace or _default_namespace(src)
    extra, kind, ns, name = _hypothetical_objects(kind, name, hyp, ns, src.namespace)
    snap = _load(src, color, extra)
    gates = _gates_for(snap, src.feature_gates, src.scheduler_version)
    lookup.check_cluster(snap, need_pods=extra is None)
    if extra is None:
        lookup.check_object(snap, kind, ns, name)
    elif not hyp.file:
        from .snapshot.hypothetical import parse_requests

        mine = frozenset(((o.get("metadata") or {}).get("namespace") or ns, (o.get("metadata") or {}).get("name")) for o in extra)
        lookup.check_hypothetical(snap, hyp.priority_class, parse_requests(hyp.requests or ""), ns, mine)
    if hyp.ignore_gates:
        from .preemption.liftgates import lift_gates

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
    res = analyze(snap, kind, ns, name, gates, **({"max_cycles": cycles} if cycles else {}))
    source = "demo" if src.demo else (src.snapshot or snap.header.source or "cluster")
    doc = to_document(res, source=source, gates=gates.spelled(), spared_on_placement_only=spared_on_placement_only)
    doc.update(profile_fields(gates))
    _add_numbers(doc, snap)
    return doc, (snap, gates)


def _add_numbers(doc: dict, snap: Any) -> None:
    """Fields computed from the document and the cluster (issue 16): the per-node arithmetic of
    the deciding resource, and the pick criterion behind each candidate node of default preemption."""
    from .report.candidates import with_why
    from .report.nodeuse import node_usage

    doc["nodeArithmetic"] = node_usage(doc, snap)
    if doc.get("candidateNodes"):
        doc["candidateNodes"] = with_why(doc, snap)


def _autoscale(doc: dict, res: Any, templates: str | None, multiplier: float | None) -> dict:
    from .autoscale import autoscale_section

    snap, gates = res
    pre = doc["preemptor"]
    return autoscale_section(snap, pre["kind"].lower(), pre["namespace"], pre["name"], gates, templates, multiplier)


def _optimal(doc: dict, res: Any, time_limit: float) -> dict:
    from .diagnose.optimal import optimal_victims
    from .preemption.analyze import analyze
    from .report.diagnose import optimal_section

    snap, gates = res
    pre = doc["preemptor"]
    result = analyze(snap, pre["kind"].lower(), pre["namespace"], pre["name"], gates)  # the Result objects, not the document
    return optimal_section(optimal_victims(snap, result, gates, time_limit), result)


def _finish(doc: dict, exit_code: bool) -> None:
    if exit_code:
        raise typer.Exit(VERDICT_CODES.get(doc["outcome"], 1))


def _render_items(items: list[dict], fmt: str, arg: str, color: Color, no_headers: bool) -> None:
    """-o custom-columns over a list of items (whatif: victims; rank: units)."""
    from .report.formats import custom_columns
    from .report.tables import print_table

    headers, rows = custom_columns(arg, items)
    print_table(_console(color), None, headers, rows, no_headers)


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
        from .report.formats import parse_output, victim_names
        from .report.victimfilter import filter_shown

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
            sys.stdout.write(victim_names(shown))
        elif fmt == "custom-columns":
            _render_items(shown["victims"], fmt, arg, color, no_headers)
        elif fmt == "html":
            from .report.html import render_html

            sys.stdout.write(render_html(shown, res[0]))
        else:
            from .report.tables import render_whatif

            console, err = _console(color), _console(color, stderr=True)
            render_whatif(shown, console, wide=fmt == "wide", no_headers=no_headers, err=err)
            if "autoscale" in doc:
                from .report.tables import render_autoscale

                render_autoscale(shown["autoscale"], console, no_headers=no_headers, err=err)
            if "optimal" in shown:
                from .report.diagnose import render_optimal

                render_optimal(shown["optimal"], console, no_headers=no_headers)
        return doc

    doc = _guard(debug, run)
    _finish(doc, exit_code)


@app.command(epilog=_examples(
    "  kubectl wap explain podgroup job-1 -n ml --demo\n  kubectl wap explain pod/urgent-report -n batch --snapshot prod.json.gz",
    "  # The same hypothetical flags as whatif\n  kubectl wap explain podgroup big-train -n ml --demo --replicas 40 --requests nvidia.com/gpu=1",
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
        from .report.formats import parse_output

        fmt, arg = parse_output(output, EXPLAIN_FORMATS)
        doc, _ = _analysis(kind, name, src, hyp, color, cycles=cycles)
        if fmt in ("json", "yaml", "jsonpath"):
            _emit(doc, fmt, arg)
        else:
            from .report.tables import render_explain

            render_explain(doc, _console(color), err=_console(color, stderr=True), wide=fmt == "wide")
        return doc

    doc = _guard(debug, run)
    _finish(doc, exit_code)


class Order(str, Enum):
    risk = "risk"
    protection = "protection"


@app.command(epilog=_examples(
    "  # Most at risk first (the default): the units a priority-1000000 preemptor would take first\n"
    "  kubectl wap rank --priority 1000000 --demo --limit 10",
    "  # Only the units whose removal could help this (existing or hypothetical) preemptor\n"
    "  kubectl wap rank --for podgroup/job-1 -n ml --demo\n"
    "  kubectl wap rank --for podgroup/new --replicas 8 --requests nvidia.com/gpu=1 -n ml --demo",
    "  # The reprieve order (most protected first), as JSON\n  kubectl wap rank --order protection -o json --snapshot prod.json.gz",
))
@options(src=Source, hyp=Hypothetical)
def rank(
    priority: Annotated[Optional[int], typer.Option("--priority", help="Preemptor priority (default: above every running unit; with --for, the preemptor's).")] = None,
    order: Annotated[Order, typer.Option("--order", help="risk: the units preemption takes first come first (default); protection: the reprieve order, most protected first.")] = Order.risk,
    limit: Annotated[Optional[int], typer.Option("--limit", help="Show at most this many units.")] = None,
    for_: Annotated[Optional[str], typer.Option("--for", help="TYPE/NAME of a preemptor (existing, or hypothetical with --replicas/-f): keep only units on nodes where preemption might help it.")] = None,
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A", help="List units of every namespace (the default unless -n is given).")] = False,
    src: Source = Source(),
    hyp: Hypothetical = Hypothetical(),
    output: _output_opt(RANK_FORMATS) = "table",
    color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False,
    debug: DebugOpt = False,
) -> None:
    """List every preemption unit a preemptor could take: by default most at risk first (the order
    workload-aware preemption gives units up), or in reprieve order (--order protection)."""

    def run() -> None:
        from .preemption.ranking import rank_units
        from .report.profileinfo import profile_fields
        from .report.document import rank_document
        from .report.formats import parse_output
        from .report.rankview import for_preemptor, ordered

        fmt, arg = parse_output(output, RANK_FORMATS)
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
            doc, (snap, gates) = _analysis(fkind, fname, src, hyp, color)
            helps = for_preemptor(snap, doc, gates)
            prio = doc["preemptor"]["priority"] if priority is None else priority
        else:
            if hyp.file or hyp.replicas is not None:
                raise UserError("hypothetical flags apply to rank only with --for TYPE/NAME")
            snap = _load(src, color)
            lookup_ns = src.namespace if src.namespace and not all_namespaces else None
            if lookup_ns:
                from .lookup import check_namespace

                check_namespace(snap, lookup_ns)
            gates = _gates_for(snap, src.feature_gates, src.scheduler_version)
        ranked = rank_units(snap, prio, gates)
        doc = ordered(rank_document(ranked, prio, shown_ns), order.value, limit, helps, for_)
        doc.update(profile_fields(gates))
        if gates.profile_warning:
            doc["warnings"] = [gates.profile_warning]
        if fmt in ("json", "yaml", "jsonpath"):
            _emit(doc, fmt, arg)
        elif fmt == "name":
            from .report.formats import unit_names

            sys.stdout.write(unit_names(doc))
        elif fmt == "custom-columns":
            _render_items(doc["units"], fmt, arg, color, no_headers)
        else:
            from .report.tables import render_rank

            render_rank(doc, _console(color), wide=fmt == "wide", no_headers=no_headers, err=_console(color, stderr=True))

    _guard(debug, run)


@app.command(epilog=_examples(
    "  # Two snapshots: what changes for job-1 between yesterday and today?\n"
    "  kubectl wap diff podgroup job-1 -n ml --snapshot monday.json.gz --to '--snapshot tuesday.json.gz'",
    "  # One snapshot, two sets of hypothetical flags (B = A's flags overridden by --to)\n"
    "  kubectl wap diff podgroup new -n ml --demo --replicas 8 --requests nvidia.com/gpu=1 --to '--replicas 16'",
    "  # In CI: exit 1 when the scenarios differ\n  kubectl wap diff podgroup job-1 -n ml --demo --to '--feature-gates PodGroupPreemptionPolicy=true' --exit-code",
))
@options(src=Source, hyp=Hypothetical)
def diff(
    kind: KindArg = None,
    name: NameArg = None,
    to: Annotated[str, typer.Option("--to", help="Scenario B: flags that override scenario A's (e.g. '--snapshot b.json' or '--replicas 16').")] = "",
    src: Source = Source(),
    hyp: Hypothetical = Hypothetical(),
    output: _output_opt(("table", "json", "yaml")) = "table",
    color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False,
    exit_code: Annotated[bool, typer.Option("--exit-code", help="Exit 1 when the scenarios differ, 0 when they agree (like git diff --exit-code).")] = False,
    debug: DebugOpt = False,
) -> None:
    """Compare two scenarios of one preemptor: verdict, victims added/removed, placement changes."""

    def run() -> dict:
        from .report.diff import compare
        from .report.formats import parse_output

        fmt, _ = parse_output(output, ("table", "json", "yaml"))
        if not to.strip():
            raise UserError("say what scenario B changes: --to '--snapshot other.json' or --to '--replicas 16'")
        click = _click()
        ctx = click.globals.get_current_context()
        a_params = dict(ctx.params)
        import shlex

        try:
            b_ctx = ctx.command.make_context("diff", shlex.split(to), parent=ctx.parent, default_map=a_params)
        except click.exceptions.ClickException as e:
            raise UserError(f"--to: {e.format_message()}") from None
        b = dict(b_ctx.params)
        b_src = Source(**{f: b[f] for f in Source.__dataclass_fields__})
        b_hyp = Hypothetical(**{f: b[f] for f in Hypothetical.__dataclass_fields__})
        doc_a, _ = _analysis(kind, name, src, hyp, color)
        doc_b, _ = _analysis(b.get("kind") or kind, b.get("name") or name, b_src, b_hyp, color)
        d = compare(doc_a, doc_b, "A", f"B ({to.strip()})")
        if fmt in ("json", "yaml"):
            _emit(d, fmt)
        else:
            from .report.tables import print_warnings, render_diff

            render_diff(d, _console(color), no_headers=no_headers)
            print_warnings(_console(color, stderr=True), d["warnings"])
        return d

    d = _guard(debug, run)
    if exit_code:
        raise typer.Exit(1 if d["changed"] else 0)


SNAPSHOT_FORMATS = ("json", "yaml")


@app.command(epilog=_examples(
    "  # Capture the current context's cluster into a file (gzip for .gz)\n  kubectl wap snapshot --output-file prod.json.gz",
    "  # kubectl style: the snapshot as JSON on stdout\n  kubectl wap snapshot -o json --context prod > prod.json",
    "  # Convert and redact an existing `kubectl get -A -o json` dump before sharing it\n"
    "  kubectl wap snapshot --snapshot dump.json --redact -o json > shared.json",
))
def snapshot(
    output: Annotated[Optional[str], typer.Option("--output", "-o", help="Format printed to stdout: json or yaml (default json, unless --output-file is given).")] = None,
    output_file: Annotated[Optional[str], typer.Option("--output-file", help="Write the snapshot to this file instead (gzip when it ends in .gz).")] = None,
    from_snapshot: SnapshotOpt = None,
    max_input_size: MaxInputOpt = None,
    demo: DemoOpt = False,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: TimeoutOpt = 30.0,
    redact: Annotated[bool, typer.Option("--redact", help="Replace names, namespaces, label values and node names with keyed hashes (relations kept).")] = False,
    redact_key_file: Annotated[Optional[str], typer.Option("--redact-key-file", help="With --redact: read the hash key from this file (same key, same hashes across captures); default: a random key per run.")] = None,
    redact_map: Annotated[Optional[str], typer.Option("--redact-map", help="With --redact: write a private JSON map of pending PodGroups/CompositePodGroups/pods to their redacted names (keep it; share only the snapshot).")] = None,
    events: Annotated[bool, typer.Option("--events", help="Also keep Preempted events (for why-preempted); redacted like the rest with --redact.")] = False,
    pvcs: Annotated[bool, typer.Option("--pvcs", help="Kept for compatibility: PersistentVolumeClaims are always captured now (with PVs, StorageClasses, CSINodes).")] = False,
    color: ColorOpt = Color.auto,
    debug: DebugOpt = False,
) -> None:
    """Capture the cluster's scheduling state (read-only), or convert a saved dump (--snapshot/--demo),
    into a snapshot to analyze later or share (stripped: no env values, commands, annotations)."""

    def run() -> None:
        from .snapshot.save import check_targets, dump_snapshot, write_snapshot

        if output is not None and output not in SNAPSHOT_FORMATS:
            hint = f"; to write a file use --output-file {output}" if ("." in output or "/" in output or output == "-") else ""
            raise UserError(f"-o is a format: json or yaml (got {output!r}){hint}")
        if output and output_file:
            raise UserError("-o prints to stdout and --output-file writes a file: give one of them")
        check_targets(output_file, redact_map)
        if (redact_key_file or redact_map) and not redact:
            raise UserError("--redact-key-file and --redact-map need --redact")
        console = _console(color, stderr=True)
        if from_snapshot or demo:
            from .snapshot.snapfile import saved_items

            Source(snapshot=from_snapshot, demo=demo, kubeconfig=kubeconfig, context=context).check()
            header, items = saved_items(from_snapshot, demo)
            from .snapshot.strip import wanted_events

            items = wanted_events(items, events)
        else:
            from .snapshot.live import load_live

            with console.status("reading the cluster (read-only)...") as status:
                def progress(resource: str, n: int) -> None:
                    status.update(f"reading the cluster (read-only): {resource} {n}")

                header, items = load_live(kubeconfig, context, None, request_timeout, progress, events, pvcs)
        if redact:
            from .snapshot.redact import redactor_for

            key = None
            if redact_key_file:
                from pathlib import Path

                from .snapshot.files import check_regular

                key_path = Path(os.path.expanduser(redact_key_file))
                check_regular(key_path)  # /dev/zero or a FIFO would never end
                try:
                    with open(key_path, "rb") as f:
                        key = f.read(4096).strip()
                except OSError as e:
                    raise UserError(f"{redact_key_file}: cannot read the redaction key: {e.strerror or e}") from None
                if len(key) < 16:
                    raise UserError(f"{redact_key_file}: the redaction key must be at least 16 bytes")
            r = redactor_for(items, key)
            if redact_map:
                from .snapshot.save import write_private_text

                write_private_text(redact_map, json.dumps(_pending_name_map(items, r.h), indent=2) + "\n")
            items = [r.item(o) if isinstance(o, dict) else o for o in items]
            header["redacted"] = True
            # The version stays (behaviour depends on it); the endpoint does not.
            header["server"] = dict(header.get("server") or {}, url="redacted")
        if output_file:
            write_snapshot(output_file, header, items)
        else:
            dump_snapshot(sys.stdout, header, items, output or "json")
        from .report.escape import printable

        for w in header.get("warnings", []):
            console.print(f"Warning: {printable(str(w))}", highlight=False)
        if output_file:
            counts = ", ".join(f"{v} {k}" for k, v in header.get("counts", {}).items())
            console.print(f"wrote {printable(output_file)}: {counts}", highlight=False)

    _guard(debug, run)


def _pending_name_map(items: list[Any], h: Callable[[str], str]) -> dict[str, dict[str, str]]:
    """original 'kind ns/name' -> {namespace, name} after redaction, for objects one would ask
    `whatif` about: PodGroups, CompositePodGroups and pods that are not bound to a node."""
    out: dict[str, dict[str, str]] = {}
    for o in items:
        if not isinstance(o, dict) or o.get("kind") not in ("PodGroup", "CompositePodGroup", "Pod"):
            continue
        md = o.get("metadata") or {}
        if o["kind"] == "Pod" and (o.get("spec") or {}).get("nodeName"):
            continue
        ns, name = md.get("namespace") or "default", md.get("name")
        if isinstance(name, str):
            out[f"{o['kind'].lower()} {ns}/{name}"] = {"namespace": h(ns), "name": h(name)}
    return out


# --- simulate (issue 14): the engine is kubectl_wap/simulate/, the rendering report/simulate.py. ---

SIMULATE_FORMATS = ("table", "wide", "json", "yaml")


@app.command(epilog=_examples(
    "  # Play every pending pod and group of the demo to the end: who preempts whom\n  kubectl wap simulate --demo",
    "  # The same with a hypothetical gang added, victims terminating for their grace period\n"
    "  kubectl wap simulate podgroup new -n ml --demo --replicas 8 --requests nvidia.com/gpu=1 --grace",
    "  # As data\n  kubectl wap simulate --snapshot prod.json.gz -o json",
))
@options(src=Source, hyp=Hypothetical)
def simulate(
    kind: Annotated[Optional[str], typer.Argument(help="With --replicas or -f only: podgroup (or TYPE/NAME) of the hypothetical work to add.")] = None,
    name: Annotated[Optional[str], typer.Argument(help="With --replicas only: the hypothetical group's name.")] = None,
    src: Source = Source(),
    hyp: Hypothetical = Hypothetical(),
    at: Annotated[Optional[str], typer.Option("--at", help="Simulated start time (RFC 3339), when hypothetical work is submitted (default: the snapshot's capture time; live: now; a file without one: its latest timestamp).")] = None,
    max_cycles: Annotated[int, typer.Option("--max-cycles", help="Stop after this many scheduling cycles.")] = 10_000,
    time_limit: Annotated[float, typer.Option("--time-limit", help="Stop after this many seconds of computing.")] = 300.0,
    recreate_victims: Annotated[bool, typer.Option("--recreate-victims/--no-recreate-victims", help="Victims with a controller owner reference come back as new pending pods (default on).")] = True,
    grace: Annotated[bool, typer.Option("--grace", help="Victims keep their resources until their grace period ends (default: they are gone at once).")] = False,
    grace_seconds: Annotated[int, typer.Option("--grace-seconds", help="With --grace: the grace period of pods whose terminationGracePeriodSeconds is not in the snapshot.")] = 30,
    job_backoff_limit: Annotated[int, typer.Option("--job-backoff-limit", help="A Job's victims are recreated until it has failed more than this many times (Jobs are not in the snapshot).")] = 6,
    storm_limit: Annotated[int, typer.Option("--storm-limit", help="Stop scheduling a preemptor once it has preempted the same victims this many times (a preemption storm).")] = 3,
    output: _output_opt(SIMULATE_FORMATS) = "table",
    color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Play kube-scheduler forward: every pending pod and group (plus hypothetical work) in queue order, cycle by
    cycle, until the queue is empty or nothing can change; victims with a controller come back and are scheduled
    too. Shows the timeline, who preempted whom, storms, what is still pending and why, and the totals."""

    def run() -> None:
        import time

        from . import lookup
        from .report.formats import parse_output
        from .report.simulate import render_simulation, simulation_document
        from .simulate import Options
        from .simulate import simulate as play
        from .snapshot.convert import parse_time

        fmt, _ = parse_output(output, SIMULATE_FORMATS)
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
        snap = _load(src, color, extra, extras)
        if hyp.ignore_gates:
            from .preemption.liftgates import lift_all_gates

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
        sim = play(snap, opts, extras, start, submitted)
        if recreate_victims and not extras and sim.evictions:
            sim.warnings.append("no pod in this source carries an owner reference (snapshots saved by kubectl wap and live reads keep none): "
                                "no victim is recreated; use a `kubectl get -o yaml` dump to see cascades")
        options_doc = {"maxCycles": max_cycles, "recreateVictims": recreate_victims, "grace": grace, "graceSeconds": grace_seconds,
                       "jobBackoffLimit": job_backoff_limit, "stormLimit": storm_limit}
        source = "demo" if src.demo else (src.snapshot or snap.header.source or "cluster")
        doc = simulation_document(sim, source, gates.spelled(), options_doc)
        from .report.profileinfo import profile_fields

        doc.update(profile_fields(gates))
        if fmt in ("json", "yaml"):
            _emit(doc, fmt)
        else:
            render_simulation(doc, _console(color), wide=fmt == "wide", no_headers=no_headers, err=_console(color, stderr=True))

    _guard(debug, run)


# --- Diagnosis commands (issue 17): pending, why-preempted. Logic in kubectl_wap/diagnose/, ----
# --- rendering in report/diagnose.py; this block only wires options. ---------------------------


DIAG_FORMATS = ("table", "wide", "json", "yaml")


def _snapshot_time(snap: Any) -> float | None:
    """The capture time of a snapshot (ages and forensics are relative to it); None for live."""
    import datetime as dt

    t = snap.header.captured_at
    try:
        return dt.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp() if t else None
    except ValueError:
        return None


def _raw_items(snapshot, demo, kubeconfig, context, timeout, color, **optional: bool) -> tuple[Any, list[Any]]:
    """Raw items as well as the model: the diagnosis commands read what the model drops (events,
    PVCs, condition times). Live reads show progress as _load does."""
    from .snapshot.source import raw_source

    if snapshot or demo:
        header, items = raw_source(snapshot, demo, kubeconfig, context, timeout, **optional)
        return header, list(items)
    with _console(color, stderr=True).status("reading the cluster (read-only)...") as status:
        def progress(resource: str, n: int) -> None:
            status.update(f"reading the cluster (read-only): {resource} {n}")

        header, items = raw_source(snapshot, demo, kubeconfig, context, timeout, progress, **optional)
    return header, list(items)


def _label_selector(text: str | None) -> dict[str, str] | None:
    if not text:
        return None
    out: dict[str, str] = {}
    for part in filter(None, (x.strip() for x in text.split(","))):
        k, eq, v = part.partition("=")
        if not eq or not k.strip() or v.startswith("="):
            raise UserError(f"invalid -l {part!r}: only key=value selectors are supported")
        out[k.strip()] = v.strip()
    return out


@app.command(epilog=_examples("  kubectl wap pending -A --demo\n  kubectl wap pending -n ml -o wide\n  kubectl wap pending -A -l team=vision -o json\n  # What changes for us when we upgrade: only the objects whose answer differs\n  kubectl wap pending -A --compare-versions 1.37,1.38"))
def pending(
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A", help="Every namespace.")] = False,
    selector: Annotated[Optional[str], typer.Option("--selector", "-l", help="Only rows with a pending pod matching key=value[,key=value].")] = None,
    scale_up: Annotated[bool, typer.Option("--scale-up/--no-scale-up", help="Try one added node of each node template per row (slower on large clusters).")] = True,
    node_templates: Annotated[Optional[str], typer.Option("--node-templates", help="YAML file of node shapes (default: inferred from existing node groups).")] = None,
    snapshot: SnapshotOpt = None, demo: DemoOpt = False, kubeconfig: KubeconfigOpt = None, context: ContextOpt = None,
    namespace: NamespaceOpt = None, output: _output_opt(DIAG_FORMATS) = "table", color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False, feature_gates: GatesOpt = None, scheduler_version: SchedVersionOpt = None,
    request_timeout: TimeoutOpt = 30.0, debug: DebugOpt = False,
    compare_versions: Annotated[Optional[str], typer.Option("--compare-versions", metavar="A,B", help=(
        "Compare two versions' scheduler rules (e.g. 1.37,1.38): list only the pending objects whose answer (outcome, "
        "victims, reason) changes, as the 'what changes when we upgrade' report. Not with --scheduler-version."))] = None,
) -> None:
    """Why is everything pending? One row per pending pod, PodGroup or CompositePodGroup root: the main reason in plain
    words and kube-scheduler's own, whether preemption would help (victims from the real analysis), whether one more node
    would, and blockers that are not the scheduler's (scheduling gates, queue managers, missing pods, waiting for victims)."""

    def run() -> None:
        from .diagnose.pending import ScaleUp, triage
        from .report.diagnose import pending_document, render_pending
        from .report.profileinfo import profile_fields

        versions = _compare_versions(compare_versions, scheduler_version, feature_gates)
        _early_gates(feature_gates, scheduler_version)
        from .snapshot.evidence import claim_blockers
        from .snapshot.source import build

        ns = None if all_namespaces else (namespace or _default_namespace(Source(snapshot=snapshot, demo=demo, kubeconfig=kubeconfig, context=context)))
        header, items = _raw_items(snapshot, demo, kubeconfig, context, request_timeout, color, pvcs=True)
        claims = claim_blockers(items, "persistentvolumeclaims" in header.listed)
        snap = build(header, items)
        if versions:
            _pending_versions(snap, versions, feature_gates, ns, selector, claims, demo, snapshot, output, color, no_headers)
            return
        gates = _gates_for(snap, feature_gates, scheduler_version)
        su = None
        if scale_up:
            from .autoscale.templates import infer_templates, load_templates

            su = ScaleUp(load_templates(node_templates) if node_templates else infer_templates(snap)[0])
        t = triage(snap, gates, ns, _label_selector(selector), _snapshot_time(snap), su, claims)
        t.warnings.extend(snap.warnings)
        doc = pending_document(t, "demo" if demo else (snapshot or "cluster"), ns)
        doc.update(profile_fields(gates))
        from .report.formats import parse_output

        fmt, _ = parse_output(output, DIAG_FORMATS)
        if fmt in ("json", "yaml"):
            _emit(doc, fmt)
        else:
            render_pending(doc, _console(color), wide=fmt == "wide", no_headers=no_headers, err=_console(color, stderr=True))

    _guard(debug, run)


def _compare_versions(value: str | None, scheduler_version: str | None, feature_gates: str | None) -> list[Any]:
    """The two versions of --compare-versions A,B (checked before the cluster is read), or []."""
    if value is None:
        return []
    from .errors import UserError
    from .preemption.gates import parse_gates
    from .profilepick import parse_scheduler_version

    if scheduler_version:
        raise UserError("--compare-versions names both versions: drop --scheduler-version")
    parts = [v.strip() for v in value.split(",") if v.strip()]
    if len(parts) != 2:
        raise UserError(f"--compare-versions wants two versions, e.g. 1.37,1.38; got {value!r}")
    profiles = [parse_scheduler_version(v, "--compare-versions version") for v in parts]
    if profiles[0] is profiles[1]:
        raise UserError(f"--compare-versions: {parts[0]} and {parts[1]} are the same rules ({profiles[0].version})")
    for p in profiles:
        parse_gates(feature_gates, p)  # a gate one of the versions does not have is refused here
    return profiles


def _pending_versions(snap: Any, versions: list[Any], feature_gates: str | None, ns: str | None, selector: str | None,
                      claims: Any, demo: bool, snapshot: str | None, output: str, color: Any, no_headers: bool) -> None:
    from .diagnose.pending import triage
    from .diagnose.upgrade import compare_triages
    from .preemption.gates import parse_gates
    from .report.formats import parse_output
    from .report.profileinfo import profile_fields
    from .report.upgrade import render_version_diff, version_diff_document

    gates = [parse_gates(feature_gates, profile, "--compare-versions") for profile in versions]
    # Scale-up is not compared (it does not depend on the version's preemption rules).
    a, b = (triage(snap, g, ns, _label_selector(selector), _snapshot_time(snap), None, claims) for g in gates)
    changes, compared = compare_triages(a, b)
    doc = version_diff_document(changes, compared, [profile_fields(g) for g in gates], "demo" if demo else (snapshot or "cluster"),
                                ns, list(snap.warnings))
    fmt, _ = parse_output(output, DIAG_FORMATS)
    if fmt in ("json", "yaml"):
        _emit(doc, fmt)
    else:
        render_version_diff(doc, _console(color), no_headers=no_headers, err=_console(color, stderr=True))


@app.command("why-preempted", epilog=_examples("  kubectl wap why-preempted pod ablation-0 -n research\n  kubectl wap why-preempted podgroup protein-fold -n research --snapshot after.json.gz"))
def why_preempted_cmd(
    kind: Annotated[str, typer.Argument(help="pod or podgroup.")],
    name: Annotated[str, typer.Argument(help="Name of the preempted object.")],
    snapshot: SnapshotOpt = None, demo: DemoOpt = False, kubeconfig: KubeconfigOpt = None, context: ContextOpt = None,
    namespace: NamespaceOpt = None, output: _output_opt(DIAG_FORMATS) = "table", color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False, feature_gates: GatesOpt = None, scheduler_version: SchedVersionOpt = None,
    request_timeout: TimeoutOpt = 30.0, debug: DebugOpt = False,
) -> None:
    """Who most likely preempted this pod (or PodGroup), from its DisruptionTarget condition, Preempted events (read live;
    in snapshots taken with --events) and the nominated or newly started pods of higher priority; then our analysis is
    replayed for that preemptor to say whether it picks this victim. A preemptor is never invented."""

    def run() -> None:
        from .diagnose.forensics import why_preempted
        from .report.diagnose import forensics_document, render_forensics
        from .report.profileinfo import profile_fields
        from .snapshot.evidence import collect_evidence
        from .snapshot.source import build

        _early_gates(feature_gates, scheduler_version)
        ns = namespace or _default_namespace(Source(snapshot=snapshot, demo=demo, kubeconfig=kubeconfig, context=context))
        header, items = _raw_items(snapshot, demo, kubeconfig, context, request_timeout, color, events=True)
        conds, events = collect_evidence(items)
        snap = build(header, items)
        gates = _gates_for(snap, feature_gates, scheduler_version)
        import time

        now = _snapshot_time(snap) if (snapshot or demo) else time.time()
        doc = forensics_document(why_preempted(snap, conds, events, kind, ns, name, gates, now=now))
        doc.update(profile_fields(gates))
        from .report.formats import parse_output

        fmt, _ = parse_output(output, DIAG_FORMATS)
        if fmt in ("json", "yaml"):
            _emit(doc, fmt)
        else:
            render_forensics(doc, _console(color), no_headers=no_headers)

    _guard(debug, run)

# --- end of the diagnosis commands --------------------------------------------------------------



class Shell(str, Enum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"
    powershell = "powershell"


@app.command(epilog=_examples("  source <(kubectl-wap completion bash)\n  kubectl-wap completion fish | source"))
def completion(shell: Annotated[Optional[Shell], typer.Argument(help="bash, zsh, fish or powershell.")] = None) -> None:
    """Print a completion script for the standalone kubectl-wap command; without a shell, how
    `kubectl wap` completion works (kubectl >= 1.26 runs kubectl_complete-wap)."""
    from .completion import KUBECTL_HINT, SCRIPTS

    typer.echo(SCRIPTS[shell.value] if shell else KUBECTL_HINT, nl=not shell)


@app.command()
def version() -> None:
    """Print the kubectl-wap version."""
    typer.echo(f"kubectl-wap {__version__}")


def _version_flag(value: bool) -> None:
    if value:
        typer.echo(f"kubectl-wap {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version_flag, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """What-if analysis of Kubernetes workload-aware preemption: which pods and PodGroups kube-scheduler would
    preempt for a pending or hypothetical PodGroup or Pod, and why. Read-only: it never writes to the cluster."""


def complete_main() -> None:
    """`kubectl_complete-wap __complete ARGS... PARTIAL`: Cobra-style completion for kubectl.
    Prints candidates, then `:<directive>` (4 = no file completion, 0 = default: files)."""
    from .completion import candidates

    args = sys.argv[1:]
    if args and args[0] in ("__complete", "__completeNoDesc"):
        args = args[1:]
    cands, directive = candidates(args)
    try:
        sys.stdout.write("".join(f"{c}\n" for c in cands) + f"{directive}\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the shell stopped reading (`| head`): nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main() -> None:
    try:
        _main()
    except SystemExit as e:
        _exit_without_teardown(e.code)


def _exit_without_teardown(code: object) -> None:
    """Leave the way SystemExit(code) would, minus the interpreter's teardown, which frees every
    object one by one: 0.4 s after a whatif on a 150k-pod snapshot, for memory the OS takes back
    at once. What teardown does that matters is done first: atexit handlers run (the kubernetes
    client deletes its temporary certificate files there; coverage saves its data there) and the
    standard streams are flushed. Only the console entry point comes here (tests drive `app`)."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # SystemExit("message"): printed, status 1
        print(code, file=sys.stderr)
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass  # a reader that went away, or no stream: nothing left to say
    os._exit(status)


def _main() -> None:
    # One short-lived process over a large, acyclic object graph (a 150k-pod snapshot): a cyclic
    # garbage collection would rescan all of it again and again while reports are built, for
    # nothing to free. Memory is returned when the process exits.
    gc.disable()
    if sys.stdout is None:
        sys.stdout = _ClosedStream()  # type: ignore[assignment]
    if not isinstance(sys.stdout, QuietPipe):
        sys.stdout = QuietPipe(sys.stdout)  # type: ignore[assignment]
    try:
        rv = app(standalone_mode=False, prog_name="kubectl wap")
        sys.exit(rv if isinstance(rv, int) else 0)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except SystemExit:
        raise
    except Exception as e:  # click usage errors and anything that escaped
        exc = _click().exceptions
        if type(e).__name__ == "NoArgsIsHelpError":
            typer.echo(e.format_message())  # bare `kubectl wap`: help on stdout, success
            sys.exit(0)
        if isinstance(e, exc.UsageError):
            _say_error(e.format_message())
            sys.exit(2)
        if isinstance(e, getattr(exc, "Abort", ())) or type(e).__name__ == "Abort":
            sys.exit(130)
        if isinstance(e, exc.ClickException):
            _say_error(e.format_message())
            sys.exit(e.exit_code)
        _say_error(f"{type(e).__name__}: {e}")
        sys.exit(1)


if __name__ == "__main__":
    main()
