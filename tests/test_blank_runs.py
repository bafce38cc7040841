"""Issue 31 item 4 (the last part): runs of blank lines and whitespace are skipped in bulk by the
streaming readers (our snapshot format, files.py stream_snapshot; a one-item-per-line List,
liststream.py). 64 MiB of blank lines (a 65 KB gzip) cost ~20 s of CPU before, a Python loop
turn per line (4 GiB, under the default input bound, would have been 21 minutes).

The result must not change where whitespace is inserted between lines (JSON allows it there), and
the work must not grow with the number of lines: counted as calls into C functions (sys.setprofile
c_call events), never by the wall clock."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_wap.errors import UserError
from kubectl_wap.snapshot.io import files
from kubectl_wap.snapshot.io.files import stream_file, stream_snapshot
from kubectl_wap.snapshot.io.save import write_snapshot

HEADER = {"formatVersion": 1, "capturedAt": "2026-11-30T00:00:00Z", "server": {"url": "x", "version": "v1.37.1"}}
ITEMS: list[dict] = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}} for i in range(3)
] + [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "a"},
     "spec": {"nodeName": "n0", "priority": i, "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
     "zz": [i]}  # an item ending in "]}" like the list's own end
    for i in range(4)
]


def _snapshot_bytes() -> bytes:
    import io

    from kubectl_wap.snapshot.io.save import _write_body

    out = io.StringIO()
    _write_body(out, HEADER, ITEMS)
    return out.getvalue().encode()


def _compact_list_bytes() -> bytes:
    """A List with one item per line, as json.dumps writes it item by item (liststream's compact layout)."""
    body = ",\n".join(json.dumps(o) for o in ITEMS)
    return b'{"apiVersion":"v1","kind":"List","items":[\n' + body.encode() + b"]}\n"


def _with_runs(data: bytes, runs: dict[int, bytes]) -> bytes:
    """`data` with a whitespace run inserted at the start of line k for every k in `runs` (never in
    the first line: that is the snapshot's header, or the List's opening)."""
    lines = data.split(b"\n")
    for k, run in runs.items():
        if 1 <= k < len(lines):
            lines[k] = run + lines[k]
    return b"\n".join(lines)


def _read(path: Path) -> list[Any]:
    streamed = stream_file(path)
    assert streamed is not None, "the streaming reader must take this layout"
    return list(streamed[1])


RUNS = st.dictionaries(st.integers(1, len(ITEMS) + 1),
                       st.lists(st.sampled_from([b"\n", b" ", b"\t", b"\r\n", b"\n\n\n", b"  \n"]), min_size=1, max_size=40).map(b"".join),
                       max_size=6)
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@PROPERTY
@given(runs=RUNS, gz=st.booleans())
def test_snapshot_items_unchanged_by_whitespace_runs(tmp_path: Path, runs: dict[int, bytes], gz: bool) -> None:
    data = _with_runs(_snapshot_bytes(), runs)
    path = tmp_path / ("s.json.gz" if gz else "s.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    assert stream_snapshot(path) is not None
    assert _read(path) == ITEMS


@PROPERTY
@given(runs=RUNS)
def test_compact_list_items_unchanged_by_whitespace_runs(tmp_path: Path, runs: dict[int, bytes],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "_lean", None)  # the plugin archive's reader (no compiled msgspec): liststream.py
    path = tmp_path / "l.json"
    path.write_bytes(_with_runs(_compact_list_bytes(), runs))
    assert _read(path) == ITEMS


def _c_calls(fn: Callable[[], Any]) -> int:
    """How many calls into C functions `fn` makes (every builtin or method call, however cheap)."""
    count = 0

    def prof(_frame: Any, event: str, _arg: Any) -> None:
        nonlocal count
        if event == "c_call":
            count += 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


BLANK_LINES = 200_000


@pytest.mark.parametrize("gz", [False, True])
def test_snapshot_blank_lines_are_skipped_in_bulk(tmp_path: Path, gz: bool) -> None:
    """Before: a few C calls per blank line (strip, endswith: >400,000 here); now a handful per
    megabyte of blank lines."""
    data = _with_runs(_snapshot_bytes(), {3: b"\n" * BLANK_LINES, 5: b" \t\r\n" * (BLANK_LINES // 4)})
    path = tmp_path / ("s.json.gz" if gz else "s.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    got: list[Any] = []
    calls = _c_calls(lambda: got.extend(_read(path)))
    assert got == ITEMS
    assert calls < 5_000, calls


def test_compact_list_blank_lines_are_skipped_in_bulk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "_lean", None)
    path = tmp_path / "l.json"
    path.write_bytes(_with_runs(_compact_list_bytes(), {2: b"\n" * BLANK_LINES, 4: b"  \n" * (BLANK_LINES // 3)}))
    got: list[Any] = []
    calls = _c_calls(lambda: got.extend(_read(path)))
    assert got == ITEMS
    assert calls < 5_000, calls


def test_line_numbers_count_the_skipped_lines(tmp_path: Path) -> None:
    """An error after a skipped run still names its real line."""
    data = _snapshot_bytes().split(b"\n")
    data[2] = b"\n" * 1000 + b'{"kind": oops},'
    path = tmp_path / "s.json"
    path.write_bytes(b"\n".join(data))
    with pytest.raises(UserError, match=r"invalid JSON on snapshot line 1003:"):
        _read(path)


def test_a_run_of_blank_lines_still_counts_toward_the_input_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "max_input_bytes", 100_000)
    path = tmp_path / "s.json.gz"
    path.write_bytes(gzip.compress(_with_runs(_snapshot_bytes(), {3: b"\n" * 200_000})))
    with pytest.raises(UserError, match="larger than --max-input-size"):
        _read(path)
