"""Our snapshot format is streamed one item per line (low peak memory); the result must equal a
whole-file read, and a damaged file must still end in one clear error."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from kubectl_wap.errors import UserError
from kubectl_wap.snapshot.decode.convert import build_snapshot
from kubectl_wap.snapshot.io.files import load_snapshot, stream_snapshot
from kubectl_wap.snapshot.io.save import write_snapshot
from kubectl_wap.snapshot.source import DEMO_PATH

HEADER = {"formatVersion": 1, "capturedAt": "2026-11-30T00:00:00Z", "server": {"url": "x", "version": "v1.37.1"}}


def _demo_items() -> list[dict]:
    return json.loads(DEMO_PATH.read_text())["items"]


@pytest.mark.parametrize("name", ["s.json", "s.json.gz"])
def test_streamed_equals_whole_read(tmp_path: Path, name: str) -> None:
    items = _demo_items()
    path = tmp_path / name
    write_snapshot(str(path), HEADER, items)
    streamed = stream_snapshot(path)
    assert streamed is not None, "write_snapshot's layout must be streamable"
    header, it = streamed
    assert header.server_version == "v1.37.1"
    got = list(it)
    assert got == items
    a, b = load_snapshot(path), build_snapshot(items)
    assert (a.nodes, a.pods, a.pod_groups, a.pdbs) == (b.nodes, b.pods, b.pod_groups, b.pdbs)


def test_item_whose_last_field_is_a_list_ends_the_file(tmp_path: Path) -> None:
    # An item ending in "]}" on the last line must not be mistaken for the list's end.
    items = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "zz": [1]}]
    path = tmp_path / "s.json"
    write_snapshot(str(path), HEADER, items)
    _, it = stream_snapshot(path)
    assert list(it) == items


def test_other_layouts_fall_back_to_whole_read(tmp_path: Path) -> None:
    doc = {"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot", "header": HEADER, "items": _demo_items()[:5]}
    path = tmp_path / "pretty.json"
    path.write_text(json.dumps(doc, indent=2))
    assert stream_snapshot(path) is None
    snap = load_snapshot(path)
    assert len(snap.nodes) + len(snap.priority_classes) + len(snap.pods) + len(snap.namespaces) == 5


def test_truncated_snapshot_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    write_snapshot(str(path), HEADER, _demo_items())
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: len(lines) // 2]))
    with pytest.raises(UserError, match="truncated|ends early"):
        load_snapshot(path)
    gz = tmp_path / "s.json.gz"
    gz.write_bytes(gzip.compress(b"".join(lines))[:-200])
    with pytest.raises(UserError):
        load_snapshot(gz)
