"""`kubectl wap pending`: why everything pending is pending (issue 17). The triage is
kubectl_wap/diagnose/, the rendering report/diagnose.py; this module only wires options."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from ..errors import UserError
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
    HtmlOutputOpt,
)
from .inputs import _default_namespace, _early_gates, _gates_for, _raw_items, _snapshot_time
from .options import Connection, Source, options
from .progress import step


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
@options(conn=Connection)
def pending(
    conn: Connection = Connection(),
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A", help="Every namespace.")] = False,
    selector: Annotated[Optional[str], typer.Option("--selector", "-l", metavar="SELECTOR", help="Only rows with a pending pod matching key=value[,key=value].")] = None,
    scale_up: Annotated[bool, typer.Option("--scale-up/--no-scale-up", "--autoscale/--no-autoscale", help="Try one added node of each node template per row (slower on large clusters).")] = True,
    node_templates: Annotated[Optional[str], typer.Option("--node-templates", metavar="FILE", help="YAML file of node shapes (default: inferred from existing node groups).")] = None,
    kueue_config: Annotated[Optional[str], typer.Option("--kueue-config", metavar="FILE", help="Kueue's Configuration (or the ConfigMap kueue-system/kueue-manager-config holding it); without it Kueue's defaults are assumed.")] = None,
    snapshot: SnapshotOpt = None, demo: DemoOpt = False, kubeconfig: KubeconfigOpt = None, context: ContextOpt = None,
    namespace: NamespaceOpt = None, output: HtmlOutputOpt = "table", color: ColorOpt = Color.auto,
    allow_missing_template_keys: AllowMissingOpt = "true",
    no_headers: NoHeadersOpt = False, feature_gates: GatesOpt = None, scheduler_version: SchedVersionOpt = None,
    request_timeout: TimeoutOpt = None, debug: DebugOpt = False,
    compare_versions: Annotated[Optional[str], typer.Option("--compare-versions", metavar="A,B", help=(
        "Compare two versions' scheduler rules (e.g. 1.37,1.38): list only the pending objects whose answer (outcome, "
        "victims, reason) changes, as the 'what changes when we upgrade' report. Not with --scheduler-version."))] = None,
) -> None:
    """Why is everything pending? One row per pending pod, PodGroup or CompositePodGroup root: the main reason in plain
    words and kube-scheduler's own, whether preemption would help (victims from the real analysis), whether one more node
    would, and blockers that are not the scheduler's (scheduling gates, queue managers, missing pods, waiting for victims)."""

    def run() -> None:
        from .output import emit, output_format

        # the version comparison has no page
        out = output_format(output, html=compare_versions is None, allow_missing=allow_missing_template_keys)
        src = Source(snapshot=snapshot, demo=demo, kubeconfig=kubeconfig, context=context, namespace=namespace,
                     feature_gates=feature_gates, scheduler_version=scheduler_version, request_timeout=request_timeout,
                     **conn.connection())
        doc, versions = pending_report(src, all_namespaces, selector, scale_up, node_templates, compare_versions, color, kueue_config)
        emit(doc, out, pending_printers(versions, hint_all_namespaces=namespace is None and not all_namespaces), color, no_headers)

    _guard(debug, run)


def pending_report(src: Source, all_namespaces: bool = False, selector: str | None = None, scale_up: bool = True,
                   node_templates: str | None = None, compare_versions: str | None = None, color: Color = Color.never,
                   kueue_config: str | None = None) -> tuple[dict, bool]:
    """pending's answer (the command and the MCP tool): (the PendingReport, False), or with
    compare_versions (the version comparison, True). `kueue_config`: --kueue-config's file."""
    from .analysis import _kueue_config

    from ..diagnose.pending import triage
    from ..report.diagnose import pending_document
    from ..report.profileinfo import profile_fields

    versions = _compare_versions(compare_versions, src.scheduler_version, src.feature_gates)
    _early_gates(src.feature_gates, src.scheduler_version)
    ns = None if all_namespaces else (src.namespace or _default_namespace(src))
    kueue_cfg = _kueue_config(kueue_config)
    kueue: list[Any] = []
    snap, claims = _pending_state(src, color, kueue)
    if versions:
        return _pending_versions(snap, versions, src.feature_gates, ns, selector, claims, src.demo, src.snapshot), True
    gates = _gates_for(snap, src.feature_gates, src.scheduler_version)
    objs = _kueue_objects(kueue, snap, kueue_cfg)
    with step(no_color=color == Color.never) as progress:
        t = triage(snap, gates, ns, _label_selector(selector), _snapshot_time(snap), _scale_up(snap, scale_up, node_templates), claims,
                   progress, kueue=objs)
    t.warnings.extend(snap.warnings)
    if ns is not None:
        # kubectl says "No resources found" for a namespace that does not exist too, but a typo of -n
        # gets the closest name, as rank and whatif give it (there an error: they name one object).
        from ..model.lookup import namespace_near_miss

        if miss := namespace_near_miss(snap, ns):
            t.warnings.append(miss)
    doc = pending_document(t, "demo" if src.demo else (src.snapshot or "cluster"), ns)
    doc.update(profile_fields(gates))
    return doc, False


def _pending_state(src: Source, color: Color, kueue: list[Any] | None = None) -> tuple[Any, Any]:
    """The model and the claims' blockers (PVCs read too) that pending and metrics triage;
    `kueue`, when given, gets the raw objects Kueue's stage reads (kueuestage.read_by_kueue)."""
    from ..snapshot.decode.evidence import claim_blockers
    from ..snapshot.source import build

    header, items = _raw_items(src, color, pvcs=True)
    claims = claim_blockers(items, "persistentvolumeclaims" in header.listed)
    if kueue is not None:
        from .kueuestage import read_by_kueue

        kueue.extend(o for o in items if read_by_kueue(o))
    return build(header, items), claims


def _kueue_objects(raw: list[Any], snap: Any, config: Any) -> Any:
    """The cluster's Kueue objects for pending's Workload rows, or None (no Kueue object). One
    that needs what the model does not read (fair sharing, topology-aware scheduling, ...; `config`:
    Kueue's Configuration) or a forbidden Kueue list becomes a warning: the pods' rows still stand."""
    from ..errors import UserError
    from ..queueing.kueue.objects import KUEUE_GROUP
    from .kueuestage import fair_sharing_warning, kueue_objects

    denied = [r for r in snap.header.forbidden if r.endswith("." + KUEUE_GROUP)]
    try:
        objs = kueue_objects(raw, config)
    except UserError as e:
        snap.warnings.append(f"Workloads Kueue has not admitted are not listed: {e}")
        return None
    if objs is not None and (warning := fair_sharing_warning(config, raw)) is not None:
        snap.warnings.append(warning)
    if objs is not None and denied:
        snap.warnings.append(f"Workloads Kueue has not admitted are not listed: forbidden to list {', '.join(denied)}")
        return None
    return objs


def _scale_up(snap: Any, scale_up: bool, node_templates: str | None) -> Any:
    if not scale_up:
        return None
    from ..autoscale.templates import infer_templates, load_templates
    from ..diagnose.pending import ScaleUp

    return ScaleUp(load_templates(node_templates) if node_templates else infer_templates(snap)[0])


def _compare_versions(value: str | None, scheduler_version: str | None, feature_gates: str | None) -> list[Any]:
    """The two versions of --compare-versions A,B (checked before the cluster is read), or []."""
    if value is None:
        return []
    from ..errors import UserError
    from ..preemption.gates import parse_gates
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
                      claims: Any, demo: bool, snapshot: str | None) -> dict:
    from ..diagnose.pending import triage
    from ..diagnose.upgrade import compare_triages
    from ..preemption.gates import parse_gates
    from ..report.profileinfo import profile_fields
    from ..report.upgrade import version_diff_document

    gates = [parse_gates(feature_gates, profile, "--compare-versions") for profile in versions]
    # Scale-up is not compared (it does not depend on the version's preemption rules).
    a, b = (triage(snap, g, ns, _label_selector(selector), _snapshot_time(snap), None, claims) for g in gates)
    changes, compared = compare_triages(a, b)
    return version_diff_document(changes, compared, [profile_fields(g) for g in gates], "demo" if demo else (snapshot or "cluster"),
                                 ns, list(snap.warnings))


def pending_printers(versions: bool, hint_all_namespaces: bool = False) -> Any:
    """pending's rows (custom-columns, -o name) are the pending objects (or, comparing versions, the
    objects whose answer changes); its page lists them. `hint_all_namespaces`: the namespace came from
    the context (no -n, no -A), so an empty table hints -A as kubectl does."""
    from .output import Printers

    def table(doc: dict, console: Any, err: Any, wide: bool, no_headers: bool) -> None:
        if versions:
            from ..report.upgrade import render_version_diff

            render_version_diff(doc, console, no_headers=no_headers, err=err)
        else:
            from ..report.diagnose import render_pending

            render_pending(doc, console, wide=wide, no_headers=no_headers, err=err,
                           hint_all_namespaces=hint_all_namespaces)

    def html(doc: dict) -> str:
        from ..report.html import render_pending_html

        return render_pending_html(doc)

    return Printers(table, lambda d: d.get("items") or [], lambda d: [f"{i['kind'].lower()}/{i['name']}" for i in d.get("items") or []],
                    None if versions else html)
