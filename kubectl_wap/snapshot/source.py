"""Where the cluster state comes from: a snapshot file, the bundled demo, or a live cluster.
Returns raw items so hypothetical objects can be added before the model is built once."""

from __future__ import annotations

import gc
import itertools
from pathlib import Path
from typing import Any, Callable, Iterable

from ..errors import UserError
from ..model import Snapshot, SnapshotHeader
from .decode.convert import build_snapshot
from .decode.podadmission import Admission, admit_pod, policy_from
from .io.files import (DEMO_MISSING, DEMO_PATH, _fill_header, load_items, model_items, snapshot_path, spooled_snapshot,
                       stream_file)



def raw_source(
    snapshot: str | None,
    demo: bool,
    kubeconfig: str | None,
    context: str | None,
    request_timeout: float = 30.0,
    progress: Callable[[str, int], None] | None = None,
    events: bool = False,
    pvcs: bool = False,
    overrides: Any = None,
    file_progress: Callable[[str, int, int | None], None] | None = None,
) -> tuple[SnapshotHeader, Iterable[Any]]:
    """`progress` hears a live read's (resource, objects so far); `file_progress` a file's
    (phase, done, total) as it is read (io/files.py stream_file)."""
    if snapshot and demo:
        raise UserError("use either --snapshot or --demo, not both")
    if demo:
        if not DEMO_PATH.exists():
            raise UserError(DEMO_MISSING)
        return _file_items(DEMO_PATH, file_progress)
    if snapshot:
        return _file_items(snapshot_path(snapshot), file_progress)
    from .io.capture import StreamSink
    from .io.live import load_live  # lazily: importing the kubernetes client is slow

    # The read goes the way `kubectl wap snapshot` writes it (io/capture.py: each page becomes the
    # snapshot's lines as it arrives, a pod of the usual shape straight from its decoded Struct to
    # its row), into memory, and is read back as a snapshot file is (files.spooled_snapshot): the
    # model is the one the snapshot of the same read gives, without holding the cluster's objects
    # as dicts first (issue 34: L 15.3 s / 599 MiB before).
    sink = StreamSink(in_memory=True)
    try:
        # Preemption is cluster-wide: always read every namespace; -n only selects the preemptor.
        header_dict, _ = load_live(kubeconfig, context, None, request_timeout, progress, events, pvcs, overrides, sink=sink)
    except BaseException:
        sink.close()
        raise
    header = SnapshotHeader(source=f"cluster {header_dict.get('server', {}).get('url', '')}")
    _fill_header(header, header_dict)
    return header, spooled_snapshot(header.source, sink.spool.closed_list())


def _file_items(path: Path, progress: Callable[[str, int, int | None], None] | None = None) -> tuple[SnapshotHeader, Iterable[Any]]:
    streamed = stream_file(path, progress)
    return streamed if streamed is not None else load_items(path)


def build(
    header: SnapshotHeader,
    items: Iterable[Any],
    extra: list[Any] | None = None,
    extra_warnings: list[str] | None = None,
    keep: Callable[[Any], bool] | None = None,
) -> Snapshot:
    """The model from raw items, plus `extra` (hypothetical) objects; `keep` filters the raw
    items first (hypothetical work replaces what it names)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        if keep is not None:
            items = filter(keep, items)  # keep reads raw items: no pod rows converted ahead
        else:
            items = model_items(items)
        admitted: dict[tuple[str, str], Admission] = {}
        if extra:
            policy_objects: list[dict] = []
            items = _tap_policy(items, policy_objects)
            extra = _admitted(extra, policy_objects, header.listed, admitted)  # runs after the items are read
        snap = build_snapshot(itertools.chain(items, extra or []), header)
    finally:
        if enabled:
            gc.enable()
    _record_admission(snap, admitted)
    # Name forbidden / not-served lists unless the capture's own warnings already explain them.
    said = "\n".join(header.warnings)
    forbidden = [r for r in header.forbidden if r not in said]
    not_served = [r for r in header.not_served if r not in said]
    if forbidden:
        snap.warnings.insert(0, f"these lists were forbidden when the snapshot was taken: {', '.join(forbidden)}; the answer may differ from the scheduler's")
    if not_served:
        snap.warnings.insert(0, f"not served by the API server: {', '.join(not_served)}")
    for w in list(header.warnings) + list(extra_warnings or []):
        snap.warnings.append(w)
    return snap


_POLICY_KINDS = ("RuntimeClass", "LimitRange")


def _tap_policy(items: Iterable[Any], into: list[dict]) -> Iterable[Any]:
    """The items unchanged, keeping the RuntimeClasses and LimitRanges seen in `into`."""
    for o in items:
        if type(o) is dict and o.get("kind") in _POLICY_KINDS:
            into.append(o)
        yield o


def _admitted(extra: list[Any], policy_objects: list[dict], listed: Iterable[str],
              records: dict[tuple[str, str], Admission]) -> Iterable[Any]:
    """The hypothetical objects with their pods admitted as the API server would on create
    (podadmission.py), read lazily: the cluster's items come first in the chain, so by the time
    this runs every RuntimeClass and LimitRange of the input has been seen."""
    own = [o for o in extra if isinstance(o, dict) and o.get("kind") in _POLICY_KINDS]
    policy = policy_from(policy_objects + own, listed)
    for o in extra:
        if isinstance(o, dict) and o.get("kind") == "Pod" and isinstance(o.get("spec"), dict):
            o, record = admit_pod(o, policy)
            md = o.get("metadata") if isinstance(o.get("metadata"), dict) else {}
            records[(md.get("namespace") or "default", str(md.get("name")))] = record
        yield o


def _record_admission(snap: Snapshot, records: dict[tuple[str, str], Admission]) -> None:
    """Rejections become admission errors (the preemptor is then Invalid); what was changed or
    could not be checked becomes one warning line per distinct record (a workload's pods share one)."""
    said: dict[tuple, list[str]] = {}
    for (ns, name), rec in records.items():
        if rec.error:
            snap.admission_errors.setdefault(("Pod", ns, name), rec.error)
        if rec.changes:
            snap.admitted[(ns, name)] = rec.changes
        if rec.changes or rec.unknown:
            said.setdefault((rec.changes, rec.unknown), []).append(f"{ns}/{name}")
    for (changes, unknown), pods in said.items():
        who = pods[0] if len(pods) == 1 else f"{pods[0]} and {len(pods) - 1} more pod(s)"
        if changes:
            snap.warnings.append(f"admission on create, as the API server would admit them: {who}: {'; '.join(changes)}")
        for u in unknown:
            snap.warnings.append(f"not checked for {who}: {u}")
