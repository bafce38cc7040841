"""`kubectl wap mcp` (issue 36): a Model Context Protocol server over stdio, with the official `mcp`
SDK (the optional extra `kubectl-wap[mcp]`; imported only here, so no other command pays for it).

Tools `whatif`, `explain`, `pending`, `why_preempted`, `simulate`, `rank` and `diff` take the CLI's
inputs (a snapshot path, the demo, or the current context; namespace; kind/name or a manifest as
text; the hypothetical flags) and answer with the document the command prints with `-o json` (its
JSON schema, kubectl_wap/report/*schema*.json, is the tool's output schema) plus a one-paragraph
summary (report/summary.py). Resources: the demo snapshot and the schemas. Read-only like the rest.

The answers are the functions the commands call (cli.py `whatif_report`, `rank_report`, ...),
handed in as `Answers` by the `mcp` command: this module never imports cli.py, which imports it
(dependency injection, as upstream's `Preempt` receives the scheduling function it needs)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from typing import Any, Callable

from .options import Hypothetical, Source, group_hints
from ..errors import UserError, scrub
from ..report import summary

MISSING = "the MCP server needs the mcp extra: pip install '.[mcp]' in a clone of kubectl-wap (the package is not on PyPI yet), or pip install 'mcp>=2.3,<3'"


@dataclass(frozen=True, slots=True)
class Answers:
    """The commands' computations (cli.py), each returning the document -o json prints."""

    whatif: Callable[..., tuple[dict, dict, Any]]  # whatif_report: (doc, shown, (snap, gates))
    explain: Callable[..., tuple[dict, Any]]  # _analysis: (doc, (snap, gates))
    pending: Callable[..., tuple[dict, bool]]  # pending_report
    why_preempted: Callable[..., dict]  # forensics_report
    simulate: Callable[..., dict]  # simulation_report
    rank: Callable[..., dict]  # rank_report
    diff: Callable[..., dict]  # diff_report


# ---- the tools' inputs, as JSON Schema --------------------------------------------------------

_S = {"type": "string"}
_B = {"type": "boolean"}
_I = {"type": "integer"}
SOURCE_FIELDS = {"snapshot": "snapshot", "demo": "demo", "context": "context", "kubeconfig": "kubeconfig", "namespace": "namespace",
                 "featureGates": "feature_gates", "schedulerVersion": "scheduler_version", "requestTimeout": "request_timeout"}
HYP_FIELDS = {"replicas": "replicas", "requests": "requests", "priorityClass": "priority_class", "minCount": "min_count",
              "disruptionMode": "disruption_mode", "nodeSelector": "node_selector", "tolerations": "toleration",
              "preemptionPolicy": "preemption_policy", "ignoreGates": "ignore_gates"}
_TYPES = {"demo": _B, "requestTimeout": {"type": "number", "exclusiveMinimum": 0}, "replicas": dict(_I, minimum=1),
          "minCount": dict(_I, minimum=1), "disruptionMode": {"enum": ["single", "all"]}, "nodeSelector": {"type": "array", "items": _S},
          "tolerations": {"type": "array", "items": _S}, "preemptionPolicy": {"enum": ["PreemptLowerPriority", "Never"]}, "ignoreGates": _B}


def _props(group: type, fields: dict[str, str]) -> dict[str, dict]:
    """The group's inputs with the CLI's own help (cliopts.py is the one definition of what a flag means)."""
    hints = group_hints(group)
    return {k: dict(_TYPES.get(k, _S), description=hints[f].__metadata__[0].help) for k, f in fields.items()}


SOURCE_PROPS = _props(Source, {k: f for k, f in SOURCE_FIELDS.items()})
SOURCE_PROPS["context"]["description"] += " Without snapshot or demo, the current context's cluster is read (read-only)."
OBJECT_PROPS: dict[str, dict] = {
    "kind": dict(_S, description="podgroup, compositepodgroup or pod (or TYPE/NAME)."),
    "name": dict(_S, description="Name of the pending (or hypothetical) object."),
}
HYP_PROPS = {"manifest": dict(_S, description="Hypothetical work as YAML or JSON text (the CLI's -f FILE): a PodGroup/CompositePodGroup "
                                               "tree and pods, or one pod template with replicas."),
             **_props(Hypothetical, HYP_FIELDS)}
CYCLES = dict(_I, minimum=1, description="Play at most this many pod-group scheduling cycles.")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    props: dict[str, dict]
    required: tuple[str, ...]
    schema: str  # the report's schema file in kubectl_wap/report/
    run: Callable[[Answers, dict, Source, Hypothetical], tuple[dict, str]]  # -> (document, summary)


def _whatif(a: Answers, args: dict, src: Source, hyp: Hypothetical) -> tuple[dict, str]:
    _, shown, _ = a.whatif(args.get("kind"), args.get("name"), src, hyp, cycles=args.get("cycles"),
                           selector=args.get("selector"), victim_namespace=args.get("victimNamespace"))
    return shown, summary.whatif_summary(shown)


def _explain(a: Answers, args: dict, src: Source, hyp: Hypothetical) -> tuple[dict, str]:
    doc, _ = a.explain(args.get("kind"), args.get("name"), src, hyp, cycles=args.get("cycles"))
    return doc, summary.explain_summary(doc)


def _pending(a: Answers, args: dict, src: Source, hyp: Hypothetical) -> tuple[dict, str]:
    doc, _ = a.pending(src, bool(args.get("allNamespaces")), args.get("selector"), args.get("scaleUp", True))
    return doc, summary.pending_summary(doc)


def _why(a: Answers, args: dict, src: Source, hyp: Hypothetical) -> tuple[dict, str]:
    doc = a.why_preempted(args["kind"], args["name"], src)
    return doc, summary.forensics_summary(doc)


def _simulate(a: Answers, args: dict, src: Source, hyp: Hypothetical) -> tuple[dict, str]:
    kw = {k: args[j] for j, k in (("maxCycles", "max_cycles"), ("timeLimit", "time_limit"), ("recreateVictims", "recreate_victims"),
                                  ("grace", "grace"), ("graceSeconds", "grace_seconds"), ("stormLimit", "storm_limit"),
                                  ("jobBackoffLimit", "job_backoff_limit"), ("at", "at")) if j in args}
    doc = a.simulate(args.get("kind"), args.get("name"), src, hyp, **kw)
    return doc, summary.simulation_summary(doc)


def _rank(a: Answers, args: dict, src: Source, hyp: Hypothetical) -> tuple[dict, str]:
    doc = a.rank(args.get("priority"), args.get("order", "risk"), args.get("limit"), args.get("for"),
                 bool(args.get("allNamespaces")), src, hyp)
    return doc, summary.rank_summary(doc)


def _diff(a: Answers, args: dict, src: Source, hyp: Hypothetical) -> tuple[dict, str]:
    doc = a.diff(args.get("kind"), args.get("name"), src, hyp, args["to"])
    return doc, summary.diff_summary(doc)


_SEL = dict(_S, description="Only rows with a pod matching key=value[,key=value].")
TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("whatif", "What would kube-scheduler preempt?",
             "What kube-scheduler's workload-aware preemption would preempt for a pending or hypothetical PodGroup, "
             "CompositePodGroup or Pod: verdict, victims, placement, PDBs. The `kubectl wap whatif -o json` report.",
             {**SOURCE_PROPS, **OBJECT_PROPS, **HYP_PROPS, "cycles": CYCLES,
              "selector": dict(_S, description="Show only victims/spared units with a pod matching this label selector."),
              "victimNamespace": dict(_S, description="Show only victims/spared units in this namespace.")},
             (), "schema.json", _whatif),
    ToolSpec("explain", "Explain the preemption decision",
             "The whatif report with its step-by-step explanation (priority and policy, validation, candidates, PDBs, "
             "placement, every reprieve). The `kubectl wap explain -o json` report.",
             {**SOURCE_PROPS, **OBJECT_PROPS, **HYP_PROPS, "cycles": CYCLES}, (), "schema.json", _explain),
    ToolSpec("pending", "Why is everything pending?",
             "One row per pending pod, PodGroup or CompositePodGroup: the main reason, kube-scheduler's own, whether "
             "preemption would help (victims from the real analysis), whether one more node would, and blockers that are not "
             "the scheduler's. The `kubectl wap pending -o json` report.",
             {**SOURCE_PROPS, "allNamespaces": dict(_B, description="Every namespace."), "selector": _SEL,
              "scaleUp": dict(_B, description="Try one added node of each node template per row (default true).")},
             (), "pending-schema.json", _pending),
    ToolSpec("why_preempted", "Who preempted this pod?",
             "Who most likely preempted a pod or PodGroup, from its DisruptionTarget condition, Preempted events and the "
             "pods of higher priority that started; our analysis replayed for that preemptor. A preemptor is never "
             "invented. The `kubectl wap why-preempted -o json` report.",
             {**SOURCE_PROPS, "kind": dict(_S, description="pod, podgroup or workload (Kueue's)."), "name": dict(_S, description="Name of the preempted object.")},
             ("kind", "name"), "forensics-schema.json", _why),
    ToolSpec("simulate", "Play the scheduler forward",
             "Every pending pod and group (plus hypothetical work) in queue order, cycle by cycle: who preempts whom, "
             "cascades of recreated victims, storms, what stays pending. The `kubectl wap simulate -o json` report.",
             {**SOURCE_PROPS, **OBJECT_PROPS, **HYP_PROPS,
              "at": dict(_S, description="Simulated start time (RFC 3339)."),
              "maxCycles": dict(_I, minimum=1, description="Stop after this many scheduling cycles (default 10000)."),
              "timeLimit": {"type": "number", "exclusiveMinimum": 0, "description": "Stop after this many seconds of computing (default 300)."},
              "recreateVictims": dict(_B, description="Victims with a controller owner come back as new pending pods (default true)."),
              "grace": dict(_B, description="Victims keep their resources until their grace period ends."),
              "graceSeconds": dict(_I, minimum=0, description="With grace: the grace period of pods without one."),
              "jobBackoffLimit": dict(_I, minimum=0, description="A Job's victims are recreated until it failed more than this."),
              "stormLimit": dict(_I, minimum=1, description="Stop a preemptor that preempted the same victims this many times.")},
             (), "simulate-schema.json", _simulate),
    ToolSpec("rank", "Who is preempted first?",
             "Every preemption unit a preemptor could take, most at risk first (or most protected first), optionally only "
             "those whose removal could help one preemptor (`for`). The `kubectl wap rank -o json` report.",
             {**SOURCE_PROPS, **HYP_PROPS,
              "priority": dict(_I, description="Preemptor priority (default: above every running unit; with `for`, the preemptor's)."),
              "order": {"enum": ["risk", "protection"], "description": "risk (default): taken first come first; protection: the reprieve order."},
              "limit": dict(_I, minimum=1, description="At most this many units."),
              "for": dict(_S, description="TYPE/NAME of a preemptor (existing, or hypothetical with replicas/manifest)."),
              "allNamespaces": dict(_B, description="Units of every namespace (the default unless namespace is given).")},
             (), "rank-schema.json", _rank),
    ToolSpec("diff", "Compare two scenarios",
             "Two scenarios of one preemptor compared (verdict, victims added/removed, placements moved): A from the inputs, "
             "B from A's inputs overridden by `to`, CLI flags such as '--replicas 16' or '--snapshot b.json'. "
             "The `kubectl wap diff -o json` report.",
             {**SOURCE_PROPS, **OBJECT_PROPS, **HYP_PROPS,
              "to": dict(_S, description="Scenario B: CLI flags overriding A's, e.g. '--replicas 16' or '--feature-gates PodGroupPreemptionPolicy=true'.")},
             ("to",), "diff-schema.json", _diff),
)
TOOL_BY_NAME = {t.name: t for t in TOOLS}


def read_schema(name: str) -> dict:
    return json.loads(resources.files("kubectl_wap.report").joinpath(name).read_text())


def input_schema(t: ToolSpec) -> dict:
    return {"type": "object", "properties": t.props, "required": list(t.required), "additionalProperties": False}


def _sources(args: dict) -> Source:
    return Source(**{f: args[k] for k, f in SOURCE_FIELDS.items() if args.get(k) is not None})


def _hypothetical(args: dict, manifest_path: str | None) -> Hypothetical:
    kw = {f: args[k] for k, f in HYP_FIELDS.items() if args.get(k) is not None}
    return Hypothetical(file=manifest_path, **kw)


def answer(answers: Answers, tool: str, args: dict) -> tuple[dict, str]:
    """One tool call, synchronously: (the report, its summary), or UserError."""
    t = TOOL_BY_NAME.get(tool)
    if t is None:
        raise UserError(f"unknown tool {tool!r}: {', '.join(TOOL_BY_NAME)}")
    unknown = sorted(set(args) - set(t.props))
    if unknown:
        raise UserError(f"{tool}: unknown argument(s) {', '.join(unknown)}; valid: {', '.join(t.props)}")
    missing = [k for k in t.required if not args.get(k)]
    if missing:
        raise UserError(f"{tool}: missing argument(s) {', '.join(missing)}")
    src = _sources(args)
    manifest = args.get("manifest")
    if not manifest:
        return t.run(answers, args, src, _hypothetical(args, None))
    # The loader reads -f from a path (snapshot/io/files.py load_items, with its size and YAML-expansion
    # limits): the text goes to a private temporary file for the call and is removed after it.
    fd, path = tempfile.mkstemp(prefix="kubectl-wap-mcp-", suffix=".yaml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(manifest)
        return t.run(answers, args, src, _hypothetical(args, path))
    finally:
        os.unlink(path)


RESOURCES: tuple[tuple[str, str, str, str], ...] = (
    # (uri, name, description, package file)
    ("kubectl-wap://demo/snapshot.json", "demo-snapshot", "The bundled demo cluster (the `demo` input), as a snapshot.", "data/demo-snapshot.json"),
    ("kubectl-wap://demo/kueue-snapshot.json", "demo-kueue-snapshot",
     "The bundled Kueue demo cluster (snapshot `@demo-kueue`): ClusterQueues, a cohort, Workloads, their pods.",
     "data/demo-kueue-snapshot.json"),
    ("kubectl-wap://schema/whatif.json", "whatif-schema", "JSON schema of the whatif/explain report.", "report/schema.json"),
    ("kubectl-wap://schema/rank.json", "rank-schema", "JSON schema of the rank report.", "report/rank-schema.json"),
    ("kubectl-wap://schema/pending.json", "pending-schema", "JSON schema of the pending report.", "report/pending-schema.json"),
    ("kubectl-wap://schema/why-preempted.json", "why-preempted-schema", "JSON schema of the why-preempted report.", "report/forensics-schema.json"),
    ("kubectl-wap://schema/simulate.json", "simulate-schema", "JSON schema of the simulate report.", "report/simulate-schema.json"),
    ("kubectl-wap://schema/diff.json", "diff-schema", "JSON schema of the diff report.", "report/diff-schema.json"),
)


def read_resource_text(uri: str) -> str:
    for u, _, _, path in RESOURCES:
        if u == uri:
            return resources.files("kubectl_wap").joinpath(path).read_text()
    raise UserError(f"unknown resource {uri!r}: {', '.join(r[0] for r in RESOURCES)}")


def build_server(answers: Answers, version: str = "") -> Any:
    """The MCP server (mcp.server.lowlevel.Server) over these answers; ImportError without the extra."""
    import anyio
    import mcp_types as types
    from mcp.server import Server

    schemas = {t.name: read_schema(t.schema) for t in TOOLS}
    tools = [types.Tool(name=t.name, title=t.title, description=t.description, input_schema=input_schema(t), output_schema=schemas[t.name],
                        annotations=types.ToolAnnotations(title=t.title, read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                                          open_world_hint=False))
             for t in TOOLS]
    one_at_a_time = anyio.CapacityLimiter(1)  # the engine keeps process-wide settings (the input size limit): one analysis at a time

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        args = dict(params.arguments or {})
        try:
            doc, text = await anyio.to_thread.run_sync(answer, answers, params.name, args, limiter=one_at_a_time)
        except UserError as e:
            return _error(types, f"error: {scrub(str(e))}")
        except MemoryError:
            return _error(types, "error: out of memory: the input is too large for this machine")
        except Exception as e:  # noqa: BLE001 - a tool call never ends the server or prints a traceback
            return _error(types, f"error: {type(e).__name__}: {scrub(str(e))}")
        return types.CallToolResult(content=[types.TextContent(type="text", text=text),
                                             types.TextContent(type="text", text=json.dumps(doc))],
                                    structured_content=doc)

    async def list_resources(ctx: Any, params: Any) -> Any:
        return types.ListResourcesResult(resources=[types.Resource(uri=u, name=n, description=d, mime_type="application/json")
                                                    for u, n, d, _ in RESOURCES])

    async def read_resource(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=read_resource_text(uri))])

    return Server("kubectl-wap", version=version, title="kubectl-wap: Kubernetes workload-aware preemption, offline",
                  instructions="Read-only what-if analysis of kube-scheduler's workload-aware preemption. Every tool takes a "
                               "snapshot path, demo=true, or reads the current kubeconfig context (read-only).",
                  on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources, on_read_resource=read_resource)


def _error(types: Any, text: str) -> Any:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def serve(answers: Answers, version: str = "") -> None:
    """Serve over stdin/stdout until the client closes stdin (or SIGINT)."""
    try:
        import anyio
        from mcp.server.stdio import stdio_server
    except ImportError:
        raise UserError(MISSING) from None
    server = build_server(answers, version)
    sys.stdout = sys.__stdout__  # the SDK writes the protocol to fd 1 itself; nothing of ours may print there

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)
