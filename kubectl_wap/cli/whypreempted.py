"""`kubectl wap why-preempted`: who most likely preempted a pod or PodGroup, and whether our analysis
agrees (issue 17). The forensics are kubectl_wap/diagnose/forensics.py, the rendering
report/diagnose.py."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from .app import _examples, _guard, app
from .flags import (
    AllowMissingOpt,
    Color,
    ColorOpt,
    ContextOpt,
    DebugOpt,
    DemoOpt,
    GatesOpt,
    KubeconfigOpt,
    NamespaceOpt,
    NoHeadersOpt,
    SchedVersionOpt,
    SnapshotOpt,
    TimeoutOpt,
    OutputOpt,
)
from .inputs import _default_namespace, _early_gates, _gates_for, _raw_items, _snapshot_time
from .options import Connection, Source, options


@app.command("why-preempted", epilog=_examples("  kubectl wap why-preempted pod ablation-0 -n research\n  kubectl wap why-preempted pod/ablation-0 -n research -o name\n  kubectl wap why-preempted podgroup protein-fold -n research \\\n      --snapshot after.json.gz\n  kubectl wap why-preempted workload job-train-5f1c2 -n team-a"))
@options(conn=Connection)
def why_preempted_cmd(
    # Optional for click, so that a bare `why-preempted` gets forensics_report's line as whatif's bare
    # call does, not click's "Missing argument 'kind'."
    kind: Annotated[Optional[str], typer.Argument(help="pod, podgroup or workload (Kueue's) (or TYPE/NAME).")] = None,
    name: Annotated[Optional[str], typer.Argument(help="Name of the preempted object.")] = None,
    snapshot: SnapshotOpt = None, demo: DemoOpt = False, kubeconfig: KubeconfigOpt = None, context: ContextOpt = None,
    namespace: NamespaceOpt = None, output: OutputOpt = "table", color: ColorOpt = Color.auto,
    allow_missing_template_keys: AllowMissingOpt = "true",
    no_headers: NoHeadersOpt = False, feature_gates: GatesOpt = None, scheduler_version: SchedVersionOpt = None,
    request_timeout: TimeoutOpt = None, debug: DebugOpt = False, conn: Connection = Connection(),
) -> None:
    """Who most likely preempted this pod (or PodGroup), from its DisruptionTarget condition, Preempted events (read live;
    in snapshots taken with --events) and the nominated or newly started pods of higher priority; then our analysis is
    replayed for that preemptor to say whether it picks this victim. A preemptor is never invented."""

    def run() -> None:
        from .output import emit, output_format

        out = output_format(output, allow_missing=allow_missing_template_keys)
        src = Source(snapshot=snapshot, demo=demo, kubeconfig=kubeconfig, context=context, namespace=namespace,
                     feature_gates=feature_gates, scheduler_version=scheduler_version, request_timeout=request_timeout,
                     **conn.connection())
        doc = forensics_report(kind, name, src, color)
        emit(doc, out, forensics_printers(), color, no_headers)

    _guard(debug, run)

def forensics_printers() -> Any:
    """why-preempted's rows (custom-columns, -o name) are the suspected preemptors."""
    from .output import Printers

    def table(doc: dict, console: Any, err: Any, wide: bool, no_headers: bool) -> None:
        from ..report.diagnose import render_forensics

        render_forensics(doc, console, no_headers=no_headers)

    def names(d: dict) -> list[str]:
        # kube-scheduler's suspects, then the Workload that Kueue preempted the victim's own for
        # (`workload.kueue.x-k8s.io/NAME`, as whatif -o name prints Kueue's evictions).
        out = [f"{s['kind'].lower()}/{s['name']}" for s in d.get("suspects") or []]
        out += [f"workload.kueue.x-k8s.io/{k['preemptor'].partition('/')[2]}" for k in d.get("kueuePreemptions") or ()
                if k["victimsWorkload"] and k["preemptor"]]
        return out

    return Printers(table, lambda d: d.get("suspects") or [], names)


def forensics_report(kind: str | None, name: str | None, src: Source, color: Color = Color.never) -> dict:
    """why-preempted's answer (the command and the MCP tool): the PreemptionForensics document."""
    import time

    from ..errors import UserError
    from ..model.lookup import split_type_name

    kind_, name_ = split_type_name(kind, name)  # kubectl's TYPE/NAME: pod/ablation-0
    if not kind_ or not name_:
        raise UserError("say which object: why-preempted pod|podgroup|workload NAME (or TYPE/NAME)")
    kind, name = kind_, name_

    from ..diagnose.forensics import why_preempted
    from ..report.diagnose import forensics_document
    from ..report.profileinfo import profile_fields
    from ..snapshot.decode.evidence import collect_evidence, kueue_preemptions, kueue_workloads, pod_controllers
    from ..snapshot.source import build

    _early_gates(src.feature_gates, src.scheduler_version)
    ns = src.namespace or _default_namespace(src)
    header, items = _raw_items(src, color, events=True)
    conds, events = collect_evidence(items)
    kueued = kueue_preemptions(items)
    controllers = pod_controllers(items) if kueued else {}
    snap = build(header, items)
    gates = _gates_for(snap, src.feature_gates, src.scheduler_version)
    now = _snapshot_time(snap) if (src.snapshot or src.demo) else time.time()
    doc = forensics_document(why_preempted(snap, conds, events, kind, ns, name, gates, now=now, kueue=kueued,
                                                     controllers=controllers, workloads=kueue_workloads(items)))
    doc.update(profile_fields(gates))
    return doc
