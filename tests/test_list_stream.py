"""Large `kubectl get -o json` Lists are read item by item; the result must equal the whole-document
read, and anything unusual must fall back to it (never a different answer)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from kubectl_wap.errors import UserError
from kubectl_wap.snapshot.files import load_items, load_snapshot, stream_file
from kubectl_wap.snapshot.source import DEMO_PATH

ITEMS = json.loads(DEMO_PATH.read_text())["items"]


def _kubectl_style(items: list[dict], kind: str = "List") -> str:
    # kubectl (Go MarshalIndent, 4 spaces, keys sorted): "items" comes before "kind".
    return json.dumps({"apiVersion": "v1", "items": items, "kind": kind, "metadata": {"resourceVersion": ""}}, indent=4)


def _compact(items: list[dict]) -> str:
    return '{"apiVersion":"v1","kind":"List","items":[\n' + ",\n".join(json.dumps(i) for i in items) + "]}\n"


@pytest.mark.parametrize("writer", [_kubectl_style, _compact], ids=["kubectl", "compact"])
@pytest.mark.parametrize("gz", [False, True])
def test_streamed_list_equals_whole_read(tmp_path: Path, writer, gz: bool) -> None:
    text = writer(ITEMS).encode()
    path = tmp_path / ("l.json.gz" if gz else "l.json")
    path.write_bytes(gzip.compress(text) if gz else text)
    streamed = stream_file(path)
    assert streamed is not None
    assert list(streamed[1]) == load_items(path)[1] == ITEMS


def test_typed_list_items_get_their_kind(tmp_path: Path) -> None:
    pods = [{k: v for k, v in i.items() if k != "kind"} for i in ITEMS if i["kind"] == "Pod"]
    path = tmp_path / "pods.json"
    path.write_text(_kubectl_style(pods, "PodList"))
    got = list(stream_file(path)[1])
    assert len(got) == len(pods) and all(o["kind"] == "Pod" for o in got)


def test_unusual_layouts_fall_back(tmp_path: Path) -> None:
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": ITEMS[:3]}, indent=2))
    assert stream_file(path) is None  # 2-space indentation: whole-document reader
    assert len(load_items(path)[1]) == 3


def test_truncated_kubectl_list_is_one_clear_error(tmp_path: Path) -> None:
    text = _kubectl_style(ITEMS)
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2])
    assert stream_file(path) is None  # no closing bracket found: not streamed
    with pytest.raises(UserError, match="invalid JSON"):
        load_snapshot(path)
