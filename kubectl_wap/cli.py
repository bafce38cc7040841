"""`kubectl wap`: the typer app. Thin: parse options, load the state, call the engine, render.

kubectl passes no global flags to plugins, so every command accepts the kubectl-style flags
(`-n`, `--context`, `--kubeconfig`) itself, after the subcommand."""

from __future__ import annotations

import gc
import json
import os
import sys
import traceback
from enum import Enum
from typing import Annotated, Any, Callable, Optional

import typer

from . import __version__
from .errors import UserError

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


class Output(str, Enum):
    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"


class Color(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


SnapshotOpt = Annotated[Optional[str], typer.Option("--snapshot", "-s", help="Read cluster state from this snapshot/manifest file or directory (.json, .yaml, .gz, `kubectl get -o yaml` dumps).")]
DemoOpt = Annotated[bool, typer.Option("--demo", help="Use the bundled demo cluster.")]
KubeconfigOpt = Annotated[Optional[str], typer.Option("--kubeconfig", help="Path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config).")]
ContextOpt = Annotated[Optional[str], typer.Option("--context", help="The kubeconfig context to use.")]
NamespaceOpt = Annotated[Optional[str], typer.Option("--namespace", "-n", help="Namespace of the object (default: the context's namespace, else 'default').")]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")]
OutputOpt = Annotated[Output, typer.Option("--output", "-o", help="Output format: table, wide, json or yaml.")]
ColorOpt = Annotated[Color, typer.Option("--color", help="Colorize output: auto, always or never (NO_COLOR is honoured).")]
NoHeadersOpt = Annotated[bool, typer.Option("--no-headers", help="Omit table headers.")]
GatesOpt = Annotated[Optional[str], typer.Option("--feature-gates", help="kube-scheduler feature gates. Defaults: GenericWorkload=true, CompositePodGroup=true, PodGroupPreemptionPolicy=false, TopologyAwareWorkloadScheduling=true.")]
TimeoutOpt = Annotated[float, typer.Option("--request-timeout", help="Seconds to wait for each API request.")]
ExitCodeOpt = Annotated[bool, typer.Option("--exit-code", help="Exit with a verdict code: 0 NoPreemptionNeeded, 10 Preempt, 11 Unschedulable, 12 NotEligible, 13 Invalid.")]

VERDICT_CODES = {"NoPreemptionNeeded": 0, "Preempt": 10, "Unschedulable": 11, "NotEligible": 12, "Invalid": 13}


def _console(color: Color, stderr: bool = False):
    from rich.console import Console

    if color == Color.never or (color == Color.auto and os.environ.get("NO_COLOR")):
        return Console(stderr=stderr, no_color=True, highlight=False, color_system=None, width=_width())
    if color == Color.always:
        return Console(stderr=stderr, force_terminal=True, highlight=False, width=_width())
    return Console(stderr=stderr, highlight=False, width=_width())


def _width() -> int | None:
    """The terminal's width on a terminal; otherwise no wrapping at all (output for grep/awk)."""
    try:
        return None if sys.stdout.isatty() else 10_000
    except (AttributeError, ValueError):
        return 10_000


def _guard(debug: bool, fn: Callable[[], Any]) -> Any:
    """User errors end as one line on stderr and exit 2; anything else as one line and exit 1."""
    try:
        return fn()
    except typer.Exit:
        raise
    except UserError as e:
        if debug:
            traceback.print_exc()
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        typer.echo("error: interrupted", err=True)
        raise typer.Exit(130) from None
    except Exception as e:  # noqa: BLE001 - the last line of defence against tracebacks
        if debug:
            traceback.print_exc()
        typer.echo(f"error: {type(e).__name__}: {e} (run with --debug for details)", err=True)
        raise typer.Exit(1) from None


def _default_namespace(kubeconfig: str | None, context: str | None, snapshot: str | None, demo: bool) -> str:
    if snapshot or demo:
        return "default"
    try:
        import yaml

        path = kubeconfig or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or os.path.expanduser("~/.kube/config")
        with open(path) as f:
            cfg = yaml.safe_load(f) or {}
        ctx_name = context or cfg.get("current-context")
        for c in cfg.get("contexts") or []:
            if c.get("name") == ctx_name:
                return (c.get("context") or {}).get("namespace") or "default"
    except Exception:  # noqa: BLE001 - the namespace default is best effort
        pass
    return "default"


def _load(snapshot, demo, kubeconfig, context, timeout, color, extra=None):
    from .snapshot.hypothetical import Replacement

    from .snapshot.source import build, raw_source

    if not snapshot and not demo:
        console = _console(color, stderr=True)
        with console.status("reading the cluster (read-only)...") as status:
            def progress(resource: str, n: int) -> None:
                status.update(f"reading the cluster (read-only): {resource} {n}")

            header, items = raw_source(snapshot, demo, kubeconfig, context, timeout, progress)
    else:
        header, items = raw_source(snapshot, demo, kubeconfig, context, timeout)
    if not extra:
        return build(header, items)
    replacement = Replacement(extra)
    snap = build(header, items, extra, keep=replacement.keep)
    snap.warnings.extend(replacement.warnings())
    return snap


def _emit(doc: Any, output: Output) -> None:
    if output == Output.json:
        sys.stdout.write(_json_text(doc) + "\n")
    elif output == Output.yaml:
        import yaml

        sys.stdout.write(yaml.safe_dump(doc, sort_keys=False, width=120))


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


def _analysis(
    kind, name, file, replicas, requests, priority_class, min_count, disruption_mode, node_selector, toleration,
    preemption_policy, snapshot, demo, kubeconfig, context, namespace, feature_gates, timeout, color,
    spared_on_placement_only: bool = False,
):
    from .preemption.analyze import analyze
    from .preemption.gates import parse_gates
    from .report.document import to_document
    from .snapshot import hypothetical as hyp

    gates = parse_gates(feature_gates)
    ns = namespace or _default_namespace(kubeconfig, context, snapshot, demo)
    extra: list[Any] | None = None
    shape_flags = {
        "--requests": requests, "--priority-class": priority_class, "--min-count": min_count,
        "--disruption-mode": disruption_mode, "--node-selector": node_selector, "--toleration": toleration,
        "--preemption-policy": preemption_policy,
    }
    given = [flag for flag, v in shape_flags.items() if v]
    if file and given:
        raise UserError(f"{', '.join(given)} describe a flags-only hypothetical group; with -f, put them in the file (only --replicas applies)")
    if not file and replicas is None and given:
        raise UserError(f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} only to hypothetical work: add --replicas N (whatif podgroup NEW --replicas N ...) or use -f FILE")
    if replicas is not None and replicas < 1:
        raise UserError("--replicas must be at least 1")
    if preemption_policy is not None and preemption_policy not in ("PreemptLowerPriority", "Never"):
        raise UserError(f"invalid --preemption-policy {preemption_policy!r}: want PreemptLowerPriority or Never")
    if min_count is not None and replicas is not None and min_count > replicas:
        raise UserError(f"--min-count {min_count} is more than --replicas {replicas}: the gang could never be satisfied")
    if file:
        from .snapshot.files import load_items

        _, items = load_items(file)
        extra, kind, ns, name = hyp.from_manifest(items, replicas, namespace)
    elif replicas is not None:
        if not kind or not name:
            raise UserError("a hypothetical group needs a kind and a name: whatif podgroup NAME --replicas N --requests ...")
        if kind.lower() not in ("podgroup", "pg", "podgroups"):
            raise UserError("flags-only hypothetical objects are PodGroups: whatif podgroup NAME --replicas N ...")
        spec = hyp.GroupSpec(
            name=name, namespace=ns, replicas=replicas, requests=hyp.parse_requests(requests or ""),
            priority_class=priority_class or "", min_count=min_count, disruption_mode=(disruption_mode or "single").lower(),
            node_selector=hyp.parse_selector(node_selector or []),
            tolerations=[hyp.parse_toleration(t) for t in toleration or []], preemption_policy=preemption_policy,
        )
        extra = hyp.group_from_flags(spec)
    elif not kind or not name:
        raise UserError("say what to analyze: whatif podgroup|compositepodgroup|pod NAME, or whatif -f FILE")
    snap = _load(snapshot, demo, kubeconfig, context, timeout, color, extra)
    if file and replicas is None and kind == "podgroup":
        pods = [o for o in extra or [] if o.get("kind") == "Pod"]
        pgs = [o for o in extra or [] if o.get("kind") == "PodGroup"]
        min_count = (((pgs[0].get("spec") or {}).get("schedulingPolicy") or {}).get("gang") or {}).get("minCount") if pgs else None
        if len(pods) == 1 and isinstance(min_count, int) and min_count > 1:
            snap.warnings.append(
                f"the file holds one pod but the gang needs minCount {min_count}: pass --replicas N to use the pod as a template"
            )
    res = analyze(snap, kind, ns, name, gates)
    source = "demo" if demo else (snapshot or snap.header.source or "cluster")
    # snap and gates go back too: the autoscale what-if re-runs the engine on a grown cluster.
    doc = to_document(res, source=source, gates=gates.spelled(), spared_on_placement_only=spared_on_placement_only)
    return doc, (snap, gates)


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


@app.command(epilog=EXAMPLES_WHATIF)
def whatif(
    kind: Annotated[Optional[str], typer.Argument(help="podgroup, compositepodgroup or pod.")] = None,
    name: Annotated[Optional[str], typer.Argument(help="Name of the pending (or hypothetical) object.")] = None,
    file: Annotated[Optional[str], typer.Option("--filename", "-f", help="Hypothetical PodGroup/CompositePodGroup tree and pods (or one pod template with --replicas).")] = None,
    replicas: Annotated[Optional[int], typer.Option("--replicas", help="Hypothetical: number of pods.")] = None,
    requests: Annotated[Optional[str], typer.Option("--requests", help="Hypothetical: per-pod requests, e.g. cpu=8,memory=64Gi,nvidia.com/gpu=1.")] = None,
    priority_class: Annotated[Optional[str], typer.Option("--priority-class", help="Hypothetical: priorityClassName.")] = None,
    min_count: Annotated[Optional[int], typer.Option("--min-count", help="Hypothetical: gang minCount (omit for a Basic group).")] = None,
    disruption_mode: Annotated[Optional[str], typer.Option("--disruption-mode", help="Hypothetical: single or all.")] = None,
    node_selector: Annotated[Optional[list[str]], typer.Option("--node-selector", help="Hypothetical: key=value (repeatable).")] = None,
    toleration: Annotated[Optional[list[str]], typer.Option("--toleration", help="Hypothetical: key=value:Effect (repeatable).")] = None,
    preemption_policy: Annotated[Optional[str], typer.Option("--preemption-policy", help="Hypothetical: PreemptLowerPriority or Never.")] = None,
    autoscale: Annotated[bool, typer.Option("--autoscale", help="Also answer: would adding nodes avoid this preemption? (side by side: preempt, add nodes, mixed).")] = False,
    node_templates: Annotated[Optional[str], typer.Option("--node-templates", help="YAML file of node shapes the autoscaler can add (default: inferred from existing node groups).")] = None,
    overschedule_multiplier: Annotated[Optional[float], typer.Option("--overschedule-multiplier", help="Armada-style overscheduling check: admit when job resources <= largest node shape x M.")] = None,
    optimal: Annotated[bool, typer.Option("--optimal", help="Also compute the fewest victims (PDB violations, then priorities, then pods) any placement needs, with an exact solver.")] = False,
    optimal_time_limit: Annotated[float, typer.Option("--optimal-time-limit", help="Seconds for --optimal; beyond it the best placement found and its optimality gap are reported.")] = 10.0,
    snapshot: SnapshotOpt = None,
    demo: DemoOpt = False,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = Output.table,
    color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False,
    feature_gates: GatesOpt = None,
    request_timeout: TimeoutOpt = 30.0,
    exit_code: ExitCodeOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Show what kube-scheduler would preempt for a pending or hypothetical PodGroup, CompositePodGroup or Pod."""

    def run() -> dict:
        # The default table shows only the spared units on the placement's nodes: the document
        # need not list the other (at 5,000 nodes, ~100k) spared units for it.
        doc, res = _analysis(kind, name, file, replicas, requests, priority_class, min_count, disruption_mode, node_selector,
                             toleration, preemption_policy, snapshot, demo, kubeconfig, context, namespace, feature_gates,
                             request_timeout, color, spared_on_placement_only=output == Output.table)
        if autoscale or node_templates or overschedule_multiplier is not None:
            doc["autoscale"] = _autoscale(doc, res, node_templates, overschedule_multiplier)
        if optimal:
            if not optimal_time_limit > 0:
                raise UserError(f"--optimal-time-limit must be a positive number of seconds, not {optimal_time_limit:g}")
            doc["optimal"] = _optimal(doc, res, optimal_time_limit)
        if output in (Output.json, Output.yaml):
            _emit(doc, output)
        else:
            from .report.tables import render_whatif

            console, err = _console(color), _console(color, stderr=True)
            render_whatif(doc, console, wide=output == Output.wide, no_headers=no_headers, err=err)
            if "autoscale" in doc:
                from .report.tables import render_autoscale

                render_autoscale(doc["autoscale"], console, no_headers=no_headers, err=err)
            if "optimal" in doc:
                from .report.diagnose import render_optimal

                render_optimal(doc["optimal"], console, no_headers=no_headers)
        return doc

    doc = _guard(debug, run)
    _finish(doc, exit_code)


@app.command(epilog=_examples("  kubectl wap explain podgroup job-1 -n ml --demo\n  kubectl wap explain pod urgent-report -n batch --snapshot prod.json.gz"))
def explain(
    kind: Annotated[Optional[str], typer.Argument(help="podgroup, compositepodgroup or pod.")] = None,
    name: Annotated[Optional[str], typer.Argument(help="Name of the pending object.")] = None,
    file: Annotated[Optional[str], typer.Option("--filename", "-f", help="Hypothetical objects, as for whatif.")] = None,
    replicas: Annotated[Optional[int], typer.Option("--replicas")] = None,
    snapshot: SnapshotOpt = None,
    demo: DemoOpt = False,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
    output: OutputOpt = Output.table,
    color: ColorOpt = Color.auto,
    feature_gates: GatesOpt = None,
    request_timeout: TimeoutOpt = 30.0,
    debug: DebugOpt = False,
) -> None:
    """Explain the decision step by step: priority and policy, validation, candidates in importance order, PDBs,
    the placement, and every reprieve attempt with its verdict."""

    def run() -> None:
        doc, _ = _analysis(kind, name, file, replicas, None, None, None, None, None, None, None, snapshot, demo,
                           kubeconfig, context, namespace, feature_gates, request_timeout, color)
        if output in (Output.json, Output.yaml):
            _emit(doc, output)
        else:
            from .report.tables import render_explain

            render_explain(doc, _console(color), err=_console(color, stderr=True))

    _guard(debug, run)


@app.command(epilog=_examples("  kubectl wap rank --priority 1000000 --demo\n  kubectl wap rank -o json --snapshot prod.json.gz"))
def rank(
    priority: Annotated[Optional[int], typer.Option("--priority", help="Preemptor priority (default: above every running unit).")] = None,
    snapshot: SnapshotOpt = None,
    demo: DemoOpt = False,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A", help="List units of every namespace (the default).")] = False,
    output: OutputOpt = Output.table,
    color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False,
    feature_gates: GatesOpt = None,
    request_timeout: TimeoutOpt = 30.0,
    debug: DebugOpt = False,
) -> None:
    """List every preemption unit a preemptor of priority P could take, in the order workload-aware preemption
    tries to spare them (most important first)."""

    def run() -> None:
        from .preemption.gates import parse_gates
        from .preemption.ranking import rank_units
        from .report.document import rank_document

        gates = parse_gates(feature_gates)
        snap = _load(snapshot, demo, kubeconfig, context, request_timeout, color)
        ranked = rank_units(snap, priority, gates)
        doc = rank_document(ranked, priority, None if all_namespaces else namespace)
        if output in (Output.json, Output.yaml):
            _emit(doc, output)
        else:
            from .report.tables import render_rank

            render_rank(doc["units"], _console(color), wide=output == Output.wide, no_headers=no_headers)

    _guard(debug, run)


@app.command(epilog=_examples("  kubectl wap snapshot -o prod.json.gz\n  kubectl wap snapshot -o - --context prod > prod.json"))
def snapshot(
    out: Annotated[str, typer.Option("--output", "-o", help="File to write (gzip when it ends in .gz; - for stdout).")] = "snapshot.json.gz",
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: TimeoutOpt = 30.0,
    redact: Annotated[bool, typer.Option("--redact", help="Replace names, namespaces, label values and node names with keyed hashes (relations kept).")] = False,
    redact_key_file: Annotated[Optional[str], typer.Option("--redact-key-file", help="With --redact: read the hash key from this file (same key, same hashes across captures); default: a random key per run.")] = None,
    redact_map: Annotated[Optional[str], typer.Option("--redact-map", help="With --redact: write a private JSON map of pending PodGroups/CompositePodGroups/pods to their redacted names (keep it; share only the snapshot).")] = None,
    events: Annotated[bool, typer.Option("--events", help="Also keep Preempted events (for why-preempted); redacted like the rest with --redact.")] = False,
    pvcs: Annotated[bool, typer.Option("--pvcs", help="Also keep PersistentVolumeClaims' binding phase (for pending).")] = False,
    color: ColorOpt = Color.auto,
    debug: DebugOpt = False,
) -> None:
    """Capture the cluster's scheduling state (read-only) into a snapshot file to analyze later or share."""

    def run() -> None:
        from .snapshot.live import load_live
        from .snapshot.save import write_snapshot

        console = _console(color, stderr=True)
        with console.status("reading the cluster (read-only)...") as status:
            def progress(resource: str, n: int) -> None:
                status.update(f"reading the cluster (read-only): {resource} {n}")

            header, items = load_live(kubeconfig, context, None, request_timeout, progress, events, pvcs)
        if (redact_key_file or redact_map) and not redact:
            raise UserError("--redact-key-file and --redact-map need --redact")
        if redact:
            from .snapshot.redact import redactor_for

            key = None
            if redact_key_file:
                try:
                    key = open(os.path.expanduser(redact_key_file), "rb").read().strip()
                except OSError as e:
                    raise UserError(f"{redact_key_file}: cannot read the redaction key: {e.strerror or e}") from None
                if len(key) < 16:
                    raise UserError(f"{redact_key_file}: the redaction key must be at least 16 bytes")
            r = redactor_for(items, key)
            if redact_map:
                mapping = _pending_name_map(items, r.h)
                with open(os.path.expanduser(redact_map), "w", opener=lambda p, f: os.open(p, f, 0o600)) as f:
                    json.dump(mapping, f, indent=2)
            items = [r.item(o) if isinstance(o, dict) else o for o in items]
            header["redacted"] = True
        write_snapshot(out, header, items)
        for w in header.get("warnings", []):
            console.print(f"Warning: {w}", highlight=False)
        if out != "-":
            counts = ", ".join(f"{v} {k}" for k, v in header.get("counts", {}).items())
            console.print(f"wrote {out}: {counts}", highlight=False)

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


# --- Diagnosis commands (issue 17): pending, why-preempted. Logic in kubectl_wap/diagnose/, ----
# --- rendering in report/diagnose.py; this block only wires options. ---------------------------


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


@app.command(epilog=_examples("  kubectl wap pending -A --demo\n  kubectl wap pending -n ml -o wide\n  kubectl wap pending -A -l team=vision -o json"))
def pending(
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A", help="Every namespace.")] = False,
    selector: Annotated[Optional[str], typer.Option("--selector", "-l", help="Only rows with a pending pod matching key=value[,key=value].")] = None,
    scale_up: Annotated[bool, typer.Option("--scale-up/--no-scale-up", help="Try one added node of each node template per row (slower on large clusters).")] = True,
    node_templates: Annotated[Optional[str], typer.Option("--node-templates", help="YAML file of node shapes (default: inferred from existing node groups).")] = None,
    snapshot: SnapshotOpt = None, demo: DemoOpt = False, kubeconfig: KubeconfigOpt = None, context: ContextOpt = None,
    namespace: NamespaceOpt = None, output: OutputOpt = Output.table, color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False, feature_gates: GatesOpt = None, request_timeout: TimeoutOpt = 30.0, debug: DebugOpt = False,
) -> None:
    """Why is everything pending? One row per pending pod, PodGroup or CompositePodGroup root: the main reason in plain
    words and kube-scheduler's own, whether preemption would help (victims from the real analysis), whether one more node
    would, and blockers that are not the scheduler's (scheduling gates, queue managers, missing pods, waiting for victims)."""

    def run() -> None:
        from .diagnose.pending import ScaleUp, triage
        from .preemption.gates import parse_gates
        from .report.diagnose import pending_document, render_pending

        gates = parse_gates(feature_gates)
        from .snapshot.evidence import claim_blockers
        from .snapshot.source import build

        ns = None if all_namespaces else (namespace or _default_namespace(kubeconfig, context, snapshot, demo))
        header, items = _raw_items(snapshot, demo, kubeconfig, context, request_timeout, color, pvcs=True)
        claims = claim_blockers(items, "persistentvolumeclaims" in header.listed)
        snap = build(header, items)
        su = None
        if scale_up:
            from .autoscale.templates import infer_templates, load_templates

            su = ScaleUp(load_templates(node_templates) if node_templates else infer_templates(snap)[0])
        t = triage(snap, gates, ns, _label_selector(selector), _snapshot_time(snap), su, claims)
        t.warnings.extend(snap.warnings)
        doc = pending_document(t, "demo" if demo else (snapshot or "cluster"), ns)
        if output in (Output.json, Output.yaml):
            _emit(doc, output)
        else:
            render_pending(doc, _console(color), wide=output == Output.wide, no_headers=no_headers, err=_console(color, stderr=True))

    _guard(debug, run)


@app.command("why-preempted", epilog=_examples("  kubectl wap why-preempted pod ablation-0 -n research\n  kubectl wap why-preempted podgroup protein-fold -n research --snapshot after.json.gz"))
def why_preempted_cmd(
    kind: Annotated[str, typer.Argument(help="pod or podgroup.")],
    name: Annotated[str, typer.Argument(help="Name of the preempted object.")],
    snapshot: SnapshotOpt = None, demo: DemoOpt = False, kubeconfig: KubeconfigOpt = None, context: ContextOpt = None,
    namespace: NamespaceOpt = None, output: OutputOpt = Output.table, color: ColorOpt = Color.auto,
    no_headers: NoHeadersOpt = False, feature_gates: GatesOpt = None, request_timeout: TimeoutOpt = 30.0, debug: DebugOpt = False,
) -> None:
    """Who most likely preempted this pod (or PodGroup), from its DisruptionTarget condition, Preempted events (read live;
    in snapshots taken with --events) and the nominated or newly started pods of higher priority; then our analysis is
    replayed for that preemptor to say whether it picks this victim. A preemptor is never invented."""

    def run() -> None:
        from .diagnose.forensics import why_preempted
        from .preemption.gates import parse_gates
        from .report.diagnose import forensics_document, render_forensics
        from .snapshot.evidence import collect_evidence
        from .snapshot.source import build

        ns = namespace or _default_namespace(kubeconfig, context, snapshot, demo)
        header, items = _raw_items(snapshot, demo, kubeconfig, context, request_timeout, color, events=True)
        conds, events = collect_evidence(items)
        snap = build(header, items)
        import time

        now = _snapshot_time(snap) if (snapshot or demo) else time.time()
        doc = forensics_document(why_preempted(snap, conds, events, kind, ns, name, parse_gates(feature_gates), now=now))
        if output in (Output.json, Output.yaml):
            _emit(doc, output)
        else:
            render_forensics(doc, _console(color), no_headers=no_headers)

    _guard(debug, run)

# --- end of the diagnosis commands --------------------------------------------------------------


@app.command()
def completion() -> None:
    """How to install shell completion for `kubectl wap` (kubectl >= 1.26 uses kubectl_complete-wap)."""
    typer.echo(
        "kubectl completes plugin arguments by running `kubectl_complete-wap` from your PATH.\n"
        "It is installed next to kubectl-wap by `pip install kubectl-wap`. With Krew, link it once:\n"
        "  ln -s \"$(command -v kubectl-wap)\" \"$(dirname \"$(command -v kubectl-wap)\")/kubectl_complete-wap\"\n"
        "Then enable kubectl's own completion, e.g. `source <(kubectl completion bash)`."
    )


@app.command()
def version() -> None:
    """Print the kubectl-wap version."""
    typer.echo(f"kubectl-wap {__version__}")


COMMANDS = ["whatif", "explain", "rank", "snapshot", "pending", "why-preempted", "completion", "version"]
KIND_WORDS = ["podgroup", "compositepodgroup", "pod"]


FILE_FLAGS = {"-f", "--filename", "-s", "--snapshot", "--kubeconfig", "--node-templates"}
FLAGS = ["--snapshot", "--demo", "--kubeconfig", "--context", "--namespace", "--output", "--feature-gates",
         "--filename", "--replicas", "--requests", "--priority-class", "--min-count", "--disruption-mode",
         "--node-selector", "--toleration", "--preemption-policy", "--autoscale", "--node-templates",
         "--overschedule-multiplier", "--optimal", "--optimal-time-limit", "--all-namespaces", "--selector", "--events", "--pvcs", "--scale-up", "--no-scale-up", "--exit-code", "--no-headers", "--color", "--debug"]
OUTPUTS = ["table", "wide", "json", "yaml"]


def complete_main() -> None:
    """`kubectl_complete-wap __complete ARGS... PARTIAL`: Cobra-style completion for kubectl.
    Prints candidates, then `:<directive>` (4 = no file completion, 0 = default: files)."""
    args = sys.argv[1:]
    if args and args[0] in ("__complete", "__completeNoDesc"):
        args = args[1:]
    partial = args[-1] if args else ""
    words = args[:-1]
    prev = words[-1] if words else ""
    if prev in FILE_FLAGS:
        print(":0")  # let the shell complete file names
        return
    if prev in ("-o", "--output"):
        cands = OUTPUTS
    elif not words:
        cands = COMMANDS
    elif partial.startswith("-"):
        cands = FLAGS
    elif words[0] in ("whatif", "explain", "why-preempted") and len(words) == 1:
        cands = KIND_WORDS
    else:
        cands = []
    for c in cands:
        if c.startswith(partial):
            print(c)
    print(":4")  # ShellCompDirectiveNoFileComp


def main() -> None:
    # One short-lived process over a large, acyclic object graph (a 150k-pod snapshot): a cyclic
    # garbage collection would rescan all of it again and again while reports are built, for
    # nothing to free. Memory is returned when the process exits.
    gc.disable()
    try:
        rv = app(standalone_mode=False)
        sys.exit(rv if isinstance(rv, int) else 0)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except SystemExit:
        raise
    except Exception as e:  # click usage errors and anything that escaped
        try:
            import click
        except ImportError:  # typer >= 0.29 vendors click as typer._click
            from typer import _click as click  # type: ignore[no-redef]
        exc = click.exceptions
        if type(e).__name__ == "NoArgsIsHelpError":
            typer.echo(e.format_message())  # bare `kubectl wap`: help on stdout, success
            sys.exit(0)
        if isinstance(e, exc.UsageError):
            typer.echo(f"error: {e.format_message()}", err=True)
            sys.exit(2)
        if isinstance(e, getattr(exc, "Abort", ())) or type(e).__name__ == "Abort":
            sys.exit(130)
        if isinstance(e, exc.ClickException):
            typer.echo(f"error: {e.format_message()}", err=True)
            sys.exit(e.exit_code)
        typer.echo(f"error: {type(e).__name__}: {e}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
