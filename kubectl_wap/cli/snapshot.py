"""`kubectl wap snapshot`: capture the cluster's scheduling state, or convert and redact a dump."""

from __future__ import annotations

import json
import os
import sys
from typing import Annotated, Any, Callable, Optional

import typer

from ..errors import UserError
from ..report.formats import pflag_value
from .app import _console, _examples, _guard, app
from .flags import (
    Color,
    ColorOpt,
    ContextOpt,
    DebugOpt,
    DemoOpt,
    KubeconfigOpt,
    MaxInputOpt,
    SnapshotOpt,
    TimeoutOpt,
)
from .options import Connection, Source, options


SNAPSHOT_FORMATS = ("json", "yaml")


@app.command(epilog=_examples(
    "  # Capture the current context's cluster into a file (gzip for .gz)\n  kubectl wap snapshot --output-file prod.json.gz",
    "  # kubectl style: the snapshot as JSON on stdout\n  kubectl wap snapshot -o json --context prod > prod.json",
    "  # Convert and redact an existing `kubectl get -A -o json` dump before\n  # sharing it\n"
    "  kubectl wap snapshot --snapshot dump.json --redact -o json > shared.json",
))
@options(conn=Connection)
def snapshot(
    output: Annotated[Optional[str], typer.Option("--output", "-o", metavar="json|yaml", callback=pflag_value, help="Format printed to stdout: json or yaml (default json, unless --output-file is given).")] = None,
    output_file: Annotated[Optional[str], typer.Option("--output-file", metavar="FILE", help="Write the snapshot to this file instead (gzip when it ends in .gz).")] = None,
    from_snapshot: SnapshotOpt = None,
    max_input_size: MaxInputOpt = None,
    demo: DemoOpt = False,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    request_timeout: TimeoutOpt = None,
    redact: Annotated[bool, typer.Option("--redact", help="Replace names, namespaces, label values and node names with keyed hashes (relations kept).")] = False,
    redact_key_file: Annotated[Optional[str], typer.Option("--redact-key-file", metavar="FILE", help="With --redact: read the hash key from this file (same key, same hashes across captures); default: a random key per run.")] = None,
    redact_map: Annotated[Optional[str], typer.Option("--redact-map", metavar="FILE", help="With --redact: write a private JSON map of pending PodGroups/CompositePodGroups/pods to their redacted names (keep it; share only the snapshot).")] = None,
    events: Annotated[bool, typer.Option("--events", help="Also keep Preempted events (for why-preempted); redacted like the rest with --redact.")] = False,
    pvcs: Annotated[bool, typer.Option("--pvcs", help="Kept for compatibility: PersistentVolumeClaims are always captured now (with PVs, StorageClasses, CSINodes).")] = False,
    color: ColorOpt = Color.auto,
    debug: DebugOpt = False,
    conn: Connection = Connection(),
) -> None:
    """Capture the cluster's scheduling state (read-only), or convert a saved dump (--snapshot/--demo),
    into a snapshot to analyze later or share (stripped: no env values, commands, annotations)."""

    def run() -> None:
        from ..snapshot.io.save import check_targets, dump_snapshot, write_snapshot

        if output is not None and output not in SNAPSHOT_FORMATS:
            # A path (`-o prod.json.gz`) gets the flag that writes one; a printer's template
            # (`-o jsonpath={.kind}`, which has dots too) is not a file name.
            path = ("." in output or "/" in output or output == "-") and "=" not in output
            hint = f"; to write a file use --output-file {output}" if path else ""
            raise UserError(f"-o is a format: json or yaml (got {output!r}){hint}")
        if output and output_file:
            raise UserError("-o prints to stdout and --output-file writes a file: give one of them")
        check_targets(output_file, redact_map)
        if (redact_key_file or redact_map) and not redact:
            raise UserError("--redact-key-file and --redact-map need --redact")
        console = _console(color, stderr=True)
        if from_snapshot or demo:
            from ..snapshot.io.snapfile import saved_items

            Source(snapshot=from_snapshot, demo=demo, kubeconfig=kubeconfig, context=context, **conn.connection()).check()
            header, items = saved_items(from_snapshot, demo)
            from ..snapshot.share.strip import wanted_events

            items = wanted_events(items, events)
        elif not redact and output != "yaml":
            # Written as the pages arrive (io/capture.py): memory is a page, not the cluster.
            # --redact needs every name before the first is hashed, YAML the whole document.
            from ..snapshot.io.capture import StreamSink
            from ..snapshot.io.live import load_live
            from ..snapshot.io.save import dump_spooled, write_spooled
            from .inputs import live_status

            sink = StreamSink()
            try:
                with live_status(color) as progress:
                    header, _ = load_live(kubeconfig, context, None, request_timeout, progress, events, pvcs,
                                          conn.overrides(), sink=sink)
                if output_file:
                    write_spooled(output_file, header, sink.spool.chunks)
                else:
                    dump_spooled(sys.stdout, header, sink.spool.chunks)
            finally:
                sink.close()
            _said(console, header, output_file)
            return
        else:
            from ..snapshot.io.live import load_live
            from .inputs import live_status

            with live_status(color) as progress:
                header, items = load_live(kubeconfig, context, None, request_timeout, progress, events, pvcs, conn.overrides())
        if redact:
            from ..snapshot.share.redact import redact_header, redactor_for

            key = None
            if redact_key_file:
                from pathlib import Path

                from ..snapshot.io.files import check_regular

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
                from ..snapshot.io.save import write_private_text

                write_private_text(redact_map, json.dumps(_pending_name_map(items, r.h), indent=2) + "\n")
            items = [r.item(o) if isinstance(o, dict) else o for o in items]
            # No input path, endpoint or vendor version suffix (the minor version stays: behaviour depends on it)
            header = redact_header(header, from_file=bool(from_snapshot or demo))
        if output_file:
            write_snapshot(output_file, header, items)
        else:
            dump_snapshot(sys.stdout, header, items, output or "json")
        _said(console, header, output_file)

    _guard(debug, run)


def _said(console: Any, header: dict, output_file: str | None) -> None:
    """The capture's warnings, and what was written where."""
    from ..report.escape import printable

    for w in header.get("warnings", []):
        console.print(f"Warning: {printable(str(w))}", highlight=False)
    if output_file:
        counts = ", ".join(f"{v} {k}" for k, v in header.get("counts", {}).items())
        console.print(f"wrote {printable(output_file)}: {counts}", highlight=False)


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
