"""Reading a command's input: the namespace a command defaults to, the cluster state with any
hypothetical work added (`_load`), raw items for the diagnosis commands (`_raw_items`), the
snapshot's capture time, and the version profile and feature gates the analysis runs under."""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from .app import _console
from .flags import Color
from .options import Source
from .progress import step


def _default_namespace(src: Source) -> str:
    if src.snapshot or src.demo:
        return "default"
    from ..snapshot.io.kubeconfig import context_namespace

    return context_namespace(src.kubeconfig, src.context)


def _load(src: Source, color: Color, extra: list[Any] | None = None, extras: dict | None = None,
          kueue: list[Any] | None = None):
    """The model of the source plus `extra` (hypothetical) objects; `extras`, when given, is
    filled with each raw pod's owner and grace period (snapshot/decode/owners.py, for simulate).
    `kueue`, when given, with the raw objects Kueue's stage reads (cli/kueuestage.py),
    as they stream past: a live read, the demo and a snapshot alike, without reading twice. A file
    read past a second shows its progress on a terminal's stderr (cli/progress.py)."""
    src.check()
    if not src.snapshot and not src.demo:  # a live read shows its own status line (one rich display at a time)
        return _loaded(src, color, extra, extras, None, kueue)
    with step(_what(src), "read", no_color=color == Color.never) as file_progress:
        return _loaded(src, color, extra, extras, file_progress, kueue)


@contextlib.contextmanager
def live_status(color: Color) -> Iterator[Callable[[str, int], None]]:
    """A live read's status line on stderr (rich's spinner), and the callback that updates it with
    the resource being listed and the objects read so far."""
    with _console(color, stderr=True).status("reading the cluster (read-only)...") as status:
        yield lambda resource, n: status.update(f"reading the cluster (read-only): {resource} {n}")


def _what(src: Source) -> str:
    """The file as the progress line names it."""
    import os

    return "the demo" if src.demo else os.path.basename(src.snapshot or "")


def _loaded(src: Source, color: Color, extra: list[Any] | None, extras: dict | None, file_progress: Any,
            kueue: list[Any] | None = None):
    from ..snapshot.source import build, raw_source

    if not src.snapshot and not src.demo:
        with live_status(color) as progress:
            header, items = raw_source(None, False, src.kubeconfig, src.context, src.request_timeout, progress,
                                       overrides=src.overrides())
    else:
        # A streamed file is read as the model is built from it (build below): one step, one line.
        header, items = raw_source(src.snapshot, src.demo, src.kubeconfig, src.context, src.request_timeout,
                                   file_progress=file_progress)
    if extras is not None:
        from ..snapshot.decode.owners import tap_pod_extras  # simulate's: not imported by the other commands

        items = tap_pod_extras(items, extras)
    if kueue is not None:
        from .kueuestage import tap_kueue

        items = tap_kueue(items, kueue)
    if not extra:
        return build(header, items)
    from ..snapshot.decode.hypothetical import FlagsWork, Replacement

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
    from ..preemption.gates import parse_gates
    from .profilepick import parse_scheduler_version
    from ..profiles import DEFAULT

    parse_gates(feature_gates, parse_scheduler_version(scheduler_version) or DEFAULT)


def _gates_for(snap: Any, feature_gates: str | None, scheduler_version: str | None):
    """The gates and version profile for this input (cli/profilepick.py); a defaulted profile's
    warning joins the snapshot's warnings, so every report shows it."""
    from ..preemption.gates import parse_gates
    from .profilepick import parse_scheduler_version, pick_profile

    picked = pick_profile(parse_scheduler_version(scheduler_version), snap.header.server_version)
    if picked.warning and picked.warning not in snap.warnings:
        snap.warnings.append(picked.warning)
    return parse_gates(feature_gates, picked.profile, picked.source, picked.warning)


def _snapshot_time(snap: Any) -> float | None:
    """The capture time of a snapshot (ages and forensics are relative to it); None for live."""
    import datetime as dt

    t = snap.header.captured_at
    try:
        return dt.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp() if t else None
    except ValueError:
        return None


def _raw_items(src: Source, color: Color, **optional: bool) -> tuple[Any, list[Any]]:
    """Raw items as well as the model: the diagnosis commands read what the model drops (events,
    PVCs, condition times). Live reads show progress as _load does."""
    from ..snapshot.source import raw_source

    src.check()  # flags for a live cluster are refused with --snapshot/--demo, as _load does
    snapshot, demo, kubeconfig, context, timeout = src.snapshot, src.demo, src.kubeconfig, src.context, src.request_timeout
    if snapshot or demo:
        with step(_what(src), "read", no_color=color == Color.never) as file_progress:
            header, items = raw_source(snapshot, demo, kubeconfig, context, timeout, file_progress=file_progress, **optional)
            return header, list(items)
    with live_status(color) as progress:
        header, items = raw_source(snapshot, demo, kubeconfig, context, timeout, progress, overrides=src.overrides(), **optional)
    return header, list(items)
