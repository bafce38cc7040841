"""Large `kubectl get -o json` Lists are read item by item; the result must mean the same as the
whole-document read, and anything unusual must fall back to it (never a different answer).

Since issue 18 a List in any layout is decoded by snapshot/decode/lean.py into only the fields we read:
the items are then lean (what strip_object keeps, and the same model), not equal to the input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from kubectl_wap.errors import UserError
from kubectl_wap.snapshot.io import files
from kubectl_wap.snapshot.io.files import load_items, load_snapshot, stream_file
from kubectl_wap.snapshot.source import DEMO_PATH
from kubectl_wap.snapshot.share.strip import for_sharing, strip_object

ITEMS = json.loads(DEMO_PATH.read_text())["items"]


def _kubectl_style(items: list[dict], kind: str = "List") -> str:
    # kubectl (Go MarshalIndent, 4 spaces, keys sorted): "items" comes before "kind".
    return json.dumps({"apiVersion": "v1", "items": items, "kind": kind, "metadata": {"resourceVersion": ""}}, indent=4)


def _compact(items: list[dict]) -> str:
    return '{"apiVersion":"v1","kind":"List","items":[\n' + ",\n".join(json.dumps(i) for i in items) + "]}\n"


def _two_space(items: list[dict]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2)


def _one_line(items: list[dict]) -> str:
    return json.dumps({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {}}, separators=(",", ":"))


def _shared(items) -> list:
    return [for_sharing(strip_object(o)) for o in items]


def _model(path: Path):
    s = load_snapshot(path)
    return [s.pods, s.nodes, s.pod_groups, s.composite_pod_groups, s.priority_classes, s.pdbs, s.namespaces, s.warnings]


WRITERS = [_kubectl_style, _compact, _two_space, _one_line]


@pytest.mark.parametrize("writer", WRITERS, ids=["kubectl", "compact", "2-space", "one-line"])
@pytest.mark.parametrize("gz", [False, True])
def test_streamed_list_equals_whole_read(tmp_path: Path, writer, gz: bool, monkeypatch) -> None:
    text = writer(ITEMS).encode()
    path = tmp_path / ("l.json.gz" if gz else "l.json")
    path.write_bytes(gzip.compress(text) if gz else text)
    streamed = stream_file(path)
    assert streamed is not None
    lean = list(streamed[1])
    assert _shared(lean) == _shared(load_items(path)[1]) == _shared(ITEMS)  # a snapshot keeps the same
    got = _model(path)
    monkeypatch.setattr(files, "_lean", None)  # the reader without msgspec (the plugin archive)
    assert list(stream_file(path)[1]) == ITEMS if writer in (_kubectl_style, _compact) else stream_file(path) is None
    assert _model(path) == got


def test_typed_list_items_get_their_kind(tmp_path: Path) -> None:
    pods = [{k: v for k, v in i.items() if k != "kind"} for i in ITEMS if i["kind"] == "Pod"]
    path = tmp_path / "pods.json"
    path.write_text(_kubectl_style(pods, "PodList"))
    got = list(stream_file(path)[1])
    assert len(got) == len(pods) and all(o["kind"] == "Pod" for o in got)


def test_unusual_layouts_fall_back_without_msgspec(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(files, "_lean", None)
    path = tmp_path / "two.json"
    path.write_text(_two_space(ITEMS[:3]))
    assert stream_file(path) is None  # 2-space indentation: whole-document reader
    assert len(load_items(path)[1]) == 3


def test_truncated_kubectl_list_is_one_clear_error(tmp_path: Path) -> None:
    text = _kubectl_style(ITEMS)
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2])
    assert stream_file(path) is None  # no closing bracket found: not streamed
    with pytest.raises(UserError, match="invalid JSON"):
        load_snapshot(path)
