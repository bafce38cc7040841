"""Item-by-item reading of a large `kubectl get ... -o json` List.

A 150k-pod List is ~830 MB of JSON; parsing it whole builds ~7 GB of Python objects at once.
kubectl prints Lists with Go's 4-space indentation, so every item starts on a line that is exactly
eight spaces and `{` and ends on a line of eight spaces and `}` (plus a comma between items); a
compact List with one item per line is handled too. Each item's bytes are parsed on their own and
converted before the next, so only the raw text and the lean model are held. Anything that does
not look exactly like that falls back to the whole-document reader.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from ...errors import UserError
from ...model import SnapshotHeader

try:
    import orjson as _orjson
except ImportError:  # optional
    _orjson = None

import json

_PRETTY_OPEN = b'\n    "items": [\n'
_COMPACT_OPEN = b'"items":[\n'
_ITEM_START = b"        {\n"
_ITEM_END = b"\n        }"
_KIND = re.compile(rb'"kind":\s*"([A-Za-z0-9]*List)"')
# JSON's whitespace (RFC 8259 section 2). Runs of it are skipped with one regex search each, never a
# line at a time: 64 MiB of blank lines (a 65 KB gzip) cost ~20 s of per-line Python before (issue 31).
_NON_SPACE = re.compile(rb"[^ \t\r\n]")
_SKIP_CHUNK = 1 << 20


def next_non_space(buf: bytes | bytearray | memoryview, pos: int) -> int:
    """The offset of the first byte at or after `pos` that is not JSON whitespace (len(buf) if none)."""
    m = _NON_SPACE.search(buf, pos)
    return len(buf) if m is None else m.start()


def skip_blank(f: Any) -> tuple[int, int]:
    """Consume the whitespace at the read position of `f` (an io.BufferedReader) in bulk, up to the
    next byte that is not whitespace: (bytes skipped, line breaks among them)."""
    skipped = breaks = 0
    while True:
        buf = f.peek(_SKIP_CHUNK)  # what the reader has buffered (one read if nothing): no copy
        if not buf:
            return skipped, breaks
        n = next_non_space(buf, 0)
        breaks += buf.count(b"\n", 0, n)
        skipped += n
        f.read(n)
        if n < len(buf):
            return skipped, breaks


def _loads(b: bytes) -> Any:
    return _orjson.loads(b) if _orjson is not None else json.loads(b)


def _list_kind(raw: bytes, head_end: int, tail_start: int) -> str | None:
    """The List's own kind, from the text around the items (kubectl sorts keys: it follows them)."""
    for part in (raw[tail_start:], raw[:head_end]):
        m = _KIND.search(part)
        if m:
            return m.group(1).decode()
    return None


def _pretty_ranges(raw: bytes, start: int) -> tuple[list[tuple[int, int]], int] | None:
    ranges = []
    pos = start
    while True:
        if raw.startswith(b"    ]", pos):
            return ranges, pos
        if not raw.startswith(_ITEM_START, pos):
            return None
        end = raw.find(_ITEM_END + b"\n", pos)
        end2 = raw.find(_ITEM_END + b",\n", pos)
        if end2 != -1 and (end == -1 or end2 < end):
            ranges.append((pos, end2 + len(_ITEM_END)))
            pos = end2 + len(_ITEM_END) + 2
        elif end != -1:
            ranges.append((pos, end + len(_ITEM_END)))
            pos = end + len(_ITEM_END) + 1
        else:
            return None


def _compact_ranges(raw: bytes, start: int) -> tuple[list[tuple[int, int]], int] | None:
    ranges = []
    pos = start
    while pos < len(raw):
        pos = next_non_space(raw, pos)  # blank lines (and indentation) in bulk, not a line at a time
        if pos == len(raw):
            break
        nl = raw.find(b"\n", pos)
        line_end = len(raw) if nl == -1 else nl
        line = raw[pos:line_end]
        if line.startswith(b"]"):
            return ranges, pos
        if line.endswith(b","):
            ranges.append((pos, line_end - 1))
        elif line.endswith(b"]}"):
            # `<last item>]}` closes the list (what json.dumps with one item per line writes),
            # unless the item itself ends in "]}": check that the shorter slice parses.
            try:
                _loads(line[:-2])
            except (ValueError, TypeError):
                ranges.append((pos, line_end))
            else:
                ranges.append((pos, line_end - 2))
                return ranges, line_end - 2
        elif line:
            ranges.append((pos, line_end))
        pos = line_end + 1
    return None


def stream_list(path: Path, raw: bytes) -> tuple[SnapshotHeader, Iterator[Any]] | None:
    """(header, items) for a List laid out as kubectl or one-item-per-line, else None."""
    if not raw.lstrip()[:1] == b"{":
        return None
    layout = None
    i = raw.find(_PRETTY_OPEN, 0, 4096)
    if i != -1:
        start = i + len(_PRETTY_OPEN)
        found = _pretty_ranges(raw, start)
        layout = "pretty"
    else:
        i = raw.find(_COMPACT_OPEN, 0, 4096)
        if i == -1:
            return None
        start = i + len(_COMPACT_OPEN)
        found = _compact_ranges(raw, start)
        layout = "compact"
    if found is None or not found[0]:
        return None
    ranges, tail = found
    kind = _list_kind(raw, i, tail) or ""
    if kind == "Snapshot" or not kind.endswith("List"):
        return None
    item_kind = kind[: -len("List")]
    header = SnapshotHeader(source=str(path))

    def items() -> Iterator[Any]:
        for n, (a, b) in enumerate(ranges):
            try:
                obj = _loads(raw[a:b])
            except (ValueError, TypeError) as e:
                raise UserError(f"{path}: invalid JSON in List item {n} ({layout} layout): {e}") from None
            if isinstance(obj, dict) and "kind" not in obj and item_kind:
                obj["kind"] = item_kind  # typed lists (`PodList`) omit item kinds
            yield obj

    return header, items()
