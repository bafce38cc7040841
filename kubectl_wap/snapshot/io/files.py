"""Load cluster state from files: our snapshot format (JSON, optionally gzip), a `kubectl get
-o json|yaml` List, multi-document YAML, a directory of such files, and `.gz` of any of them."""

from __future__ import annotations

import gc
import gzip
import io
import itertools
import json
import os
import stat
import zlib
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Iterable, Iterator

from ...errors import UserError

try:  # orjson parses our snapshots ~30% faster than json (measured: 50 MB, 0.98 s vs 1.4 s)
    import orjson as _orjson
except ImportError:  # optional: the zipapp plugin may run without compiled extensions
    _orjson = None
from ...model import Snapshot, SnapshotHeader
from ..decode.convert import build_snapshot, pod_from_row

if TYPE_CHECKING:
    from ...queueing.kueue.config import KueueConfig

# msgspec decodes a List in any layout straight into the fields we read (lean.py, issue 18). Imported
# on first use (`_lean_decoder`): our own snapshots never need it, and msgspec with its typed Structs
# is ~6 ms of a demo `whatif`'s start-up (issue 34). Ellipsis: not imported yet; None: not
# installed (optional like orjson: the plugin archive bundles no compiled JSON library), or switched
# off by a test.
_lean: Any = ...


def _lean_decoder() -> Any:
    global _lean
    if _lean is ...:
        try:
            from ..decode import lean
        except ImportError:
            lean = None  # type: ignore[assignment]
        _lean = lean
    return _lean

from ..decode.spectemplates import FORMAT_VERSION, Decoder, check_version
from .liststream import skip_blank
from .safeyaml import safe_yaml

SNAPSHOT_API_VERSION = "kubectl-wap/v1alpha1"
_EXTS = (".json", ".yaml", ".yml", ".json.gz", ".yaml.gz", ".yml.gz", ".gz")


# Bounds on what one input may cost (issue 19). The decompressed size of each file is capped
# (`--max-input-size`; a 47 MB gzip can expand to 10 GB), and YAML aliases may expand a document to
# at most this many nodes beyond the ones written out (a 1 KB "billion laughs" expands to 10^9).
MAX_INPUT_BYTES_DEFAULT = 4 << 30
MAX_DOCUMENT_BYTES_DEFAULT = MAX_INPUT_BYTES_DEFAULT
max_input_bytes = MAX_INPUT_BYTES_DEFAULT
_CHUNK = 1 << 20
_IN_CHUNK = 1 << 16  # gzip input fed per call (see _gunzip)


def set_max_input_size(n: int) -> None:
    global max_input_bytes
    max_input_bytes = n


def _too_big(path: Path) -> UserError:
    return UserError(f"{path}: larger than --max-input-size ({max_input_bytes:,} bytes after decompression)")


def check_regular(path: Path) -> None:
    """Refuse FIFOs, character devices and sockets before opening them: a FIFO blocks open()
    forever and /dev/zero never ends. (A directory is handled by the callers.)"""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        what = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file"
        raise UserError(f"{path}: is {what}; give a regular file")


def _read_bytes(path: Path) -> bytes:
    check_regular(path)
    limit = max_input_bytes
    try:
        with open(path, "rb") as f:
            # read(n) allocates n bytes up front: ask for what the file holds, not the limit
            raw = f.read(min(os.fstat(f.fileno()).st_size, limit) + 1)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror or e}") from None
    if len(raw) > limit:
        raise _too_big(path)
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(path, raw, limit)
    return raw


def _gunzip(path: Path, raw: bytes, limit: int) -> bytes:
    """gzip.decompress with the output capped at `limit` (checked as it grows, chunk by chunk).
    Input is fed in slices of _IN_CHUNK and every member is found by its offset: zlib copies the
    input it has not used (`unconsumed_tail`, `unused_data`), so handing it the whole rest of the
    file copied that rest once per output megabyte (9.5 of 24 s loading an 830 MB List from its
    47 MB gzip), and once per member of a many-member file (bgzip writes one per 64 KiB). The
    bytearray is returned as it is (every reader takes bytes-like input): a copy would double the
    peak memory of a large file."""
    out = bytearray()
    data = memoryview(raw)
    start = 0
    try:
        while start < len(data):
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)  # one gzip member, from `start`
            pos = start
            while not d.eof:
                if pos >= len(data):
                    raise EOFError("compressed file ended before the end-of-stream marker was reached")
                buf: bytes | memoryview = data[pos:pos + _IN_CHUNK]
                pos += len(buf)
                while buf and not d.eof:
                    chunk = d.decompress(buf, _CHUNK)
                    buf = d.unconsumed_tail
                    if chunk:
                        out += chunk
                        if len(out) > limit:
                            raise _too_big(path)
            # The member ended inside the last slice fed (a suffix of it is unused): more members
            # may follow, and zero padding between them is skipped.
            start = _skip_zeros(data, pos - len(d.unused_data))
            if start < len(data) and data[start:start + 2] != b"\x1f\x8b":
                raise OSError("trailing garbage after the gzip data")
    except (OSError, EOFError, zlib.error) as e:
        raise UserError(f"{path}: corrupt or truncated gzip data ({e})") from None
    return out  # type: ignore[return-value]


def _skip_zeros(data: memoryview, at: int) -> int:
    """The offset of the first non-zero byte at or after `at` (len(data) if none)."""
    while at < len(data):
        piece = data[at:at + _IN_CHUNK].tobytes()
        rest = piece.lstrip(b"\x00")
        if rest:
            return at + len(piece) - len(rest)
        at += len(piece)
    return at


def _decode(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text (byte {e.start}: {raw[e.start:e.start+1]!r})") from None


def read_text(path: Path) -> str:
    """A whole (maybe gzip) UTF-8 file, with the same bounds and one-line errors as any input."""
    return _decode(path, _read_bytes(path))


def _documents(path: Path, raw: bytes, whole: bool = False) -> list[Any]:
    stripped = raw.lstrip()
    if stripped[:1] in (b"{", b"["):
        lean = None if whole or _is_snapshot(raw) else _lean_decoder()
        found = lean.decode_list(raw) if lean is not None else None
        if found is not None:
            kind, items = found
            return [{"kind": kind, "items": list(items)}]
        if _orjson is not None:
            try:
                return [_orjson.loads(raw)]
            except _orjson.JSONDecodeError:
                pass  # fall through: the stdlib parser gives the line/column for the error
        try:
            return [json.loads(raw)]
        except json.JSONDecodeError as e:
            raise UserError(f"{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
        except RecursionError:
            raise UserError(f"{path}: invalid JSON: nested too deeply") from None
        except UnicodeDecodeError:
            _decode(path, raw)
            raise
        except ValueError as e:  # a number of more than 4300 digits (int_max_str_digits)
            raise UserError(f"{path}: invalid JSON: {str(e).split(';')[0]}") from None
    text = _decode(path, raw)
    return safe_yaml(text, str(path), UserError, many=True)


def _items(path: Path, doc: Any, header: SnapshotHeader) -> Iterator[Any]:
    if isinstance(doc, list):
        yield from doc
        return
    if not isinstance(doc, dict):
        raise UserError(f"{path}: expected Kubernetes objects, found {type(doc).__name__}")
    if doc.get("kind") == "Snapshot":
        if doc.get("apiVersion") != SNAPSHOT_API_VERSION:
            raise UserError(f"{path}: unsupported snapshot apiVersion {doc.get('apiVersion')!r} (want {SNAPSHOT_API_VERSION})")
        _fill_header(header, doc.get("header"))
        version = header.format_version if isinstance(doc.get("header"), dict) else 1
        check_version(f"{path}: ", version)
        items = doc.get("items")
        if not isinstance(items, list):
            raise UserError(f"{path}: snapshot has no 'items' list")
        if version >= 2:
            yield from Decoder(f"{path}: ", version=version).items(items)
        else:
            yield from items
    elif isinstance(doc.get("kind"), str) and doc["kind"].endswith("List") and isinstance(doc.get("items"), list):
        list_kind = doc["kind"][: -len("List")]
        for it in doc["items"]:
            if isinstance(it, dict) and "kind" not in it and list_kind:
                it = dict(it, kind=list_kind)  # typed lists (`PodList`) omit item kinds
            yield it
    else:
        yield doc


def _fill_header(header: SnapshotHeader, h: Any) -> None:
    if not isinstance(h, dict):
        return
    fv = h.get("formatVersion", 1)
    try:
        if isinstance(fv, bool) or not isinstance(fv, (int, str)):
            raise ValueError
        header.format_version = int(fv or 1)
    except ValueError:
        shown = repr(fv) if len(repr(fv)) <= 40 else repr(fv)[:37] + "..."
        raise UserError(f"snapshot header: formatVersion must be an integer, got {shown}") from None
    header.captured_at = str(h.get("capturedAt", ""))
    server = h.get("server") if isinstance(h.get("server"), dict) else {}
    header.server_url = str(server.get("url", ""))
    header.server_version = str(server.get("version", ""))
    for attr, key in (("listed", "listed"), ("not_served", "notServed"), ("forbidden", "forbidden")):
        v = h.get(key)
        if isinstance(v, list):
            setattr(header, attr, [str(x) for x in v])
    if isinstance(h.get("resourceVersions"), dict):
        header.resource_versions = {str(k): str(v) for k, v in h["resourceVersions"].items()}
    if isinstance(h.get("warnings"), list):
        header.warnings = [str(w) for w in h["warnings"]]
    if isinstance(h.get("counts"), dict):
        header.counts = {str(k): v for k, v in h["counts"].items() if isinstance(v, int)}


def _files_in(path: Path) -> list[Path]:
    out = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(_EXTS))
    if not out:
        raise UserError(f"{path}: directory holds no .json/.yaml/.yml(.gz) files")
    return out


_SNAPSHOT_PREFIX = b'{"apiVersion":"' + SNAPSHOT_API_VERSION.encode() + b'","kind":"Snapshot","header":'
_ITEMS_OPEN = b',"items":['


_loads = _orjson.loads if _orjson is not None else json.loads


_FIRST_LINE_MAX = 64 << 20


def _open_lines(path: Path) -> Any:
    """A binary file object over the (maybe gzip) file, with a large buffer: iterating its lines
    then runs in C (GzipFile's own line iteration costs a Python call per line). A helper thread
    decompressing ahead was tried and gained nothing (the GIL hand-offs eat the overlap)."""
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        return io.BufferedReader(gzip.GzipFile(path, "rb"), 1 << 20)  # type: ignore[arg-type]
    return open(path, "rb", buffering=1 << 20)


# How often a streamed read reports its progress: every this many items (a 150k-pod snapshot
# reports ~150 times; a report is a tuple store in the CLI's callback, cli/progress.py).
PROGRESS_EVERY = 1024

# progress(phase, done, total): "read" counts bytes of the file on disk (compressed bytes for a
# gzip file, so the total is the file's size), "items" counts objects; total None when unknown.
Progress = Callable[[str, int, "int | None"], None]


def _file_position(f: Any) -> Callable[[], int]:
    """Where the reader stands in the file on disk: the compressed offset under a GzipFile."""
    inner = getattr(f, "raw", None)
    disk = getattr(inner, "fileobj", None) if isinstance(inner, gzip.GzipFile) else f
    return disk.tell if disk is not None else (lambda: 0)


def stream_snapshot(path: Path, progress: Progress | None = None) -> tuple[SnapshotHeader, Iterator[Any]] | None:
    """Stream our own snapshot format, one item per line as `write_snapshot` lays it out, so a
    150k-pod snapshot is never held as raw JSON all at once (peak memory stays near the lean
    model's). Returns None when the file is not laid out that way (then it is read whole).
    `progress` hears ("read", bytes, file size) every PROGRESS_EVERY items."""
    try:
        f = _open_lines(path)
    except OSError:
        return None
    try:
        first = f.readline(_FIRST_LINE_MAX)
    except (OSError, EOFError, zlib.error):
        f.close()
        return None  # the whole-file reader reports corrupt data with a clear message
    if not first.startswith(_SNAPSHOT_PREFIX) or not first.endswith(b"\n"):
        f.close()
        return None  # not our layout (or a first line too long for it): the bounded whole-file reader
    try:
        text = first.decode("utf-8")
        h, end = json.JSONDecoder().raw_decode(text, len(_SNAPSHOT_PREFIX))
    except (UnicodeDecodeError, json.JSONDecodeError):
        f.close()
        return None
    rest = text[end:].encode("utf-8")
    if not rest.startswith(_ITEMS_OPEN):
        f.close()
        return None
    header = SnapshotHeader(source=str(path))
    try:
        _fill_header(header, h)
    except (TypeError, ValueError):
        f.close()
        return None
    version = header.format_version if isinstance(h, dict) else 1
    try:
        check_version(f"{path}: ", version)
    except UserError:
        f.close()
        raise
    decoder = Decoder(f"{path}: ", pod_from_row, version) if version >= 2 else None

    size = path.stat().st_size
    where = _file_position(f)

    def tick() -> None:
        progress("read", min(where(), size), size)  # type: ignore[misc]

    def items(models: bool) -> Iterator[Any]:
        return _snapshot_lines(str(path), f, rest[len(_ITEMS_OPEN):], len(first), decoder, models,
                               tick if progress is not None else None, lambda: _too_big(path))

    return header, SnapshotItems(items, decoder)


def spooled_snapshot(label: str, f: IO[bytes]) -> SnapshotItems:
    """The items of a live read spooled as a snapshot's item lines (io/capture.py LineSpool with
    its closing line): what stream_snapshot gives for the file the snapshot command would write of
    the same read, read by the same loop. `label` names the source in errors."""
    decoder = Decoder(f"{label}: ", pod_from_row, FORMAT_VERSION)

    def items(models: bool) -> Iterator[Any]:
        return _snapshot_lines(label, f, None, 0, decoder, models, None, None)

    return SnapshotItems(items, decoder)


def _snapshot_lines(label: str, f: IO[bytes], rest: bytes | None, total: int, decoder: Decoder | None, models: bool,
                    tick: Callable[[], None] | None, too_big: Callable[[], UserError] | None) -> Iterator[Any]:
    """The items of a snapshot laid out as write_snapshot lays it out (one item per line, each but
    the last ending in a comma, `]}` closing the list), from the rest of the header's line (`rest`,
    None when `f` starts at the first item's line) and `f`'s lines; `models` converts pod rows.
    `tick` hears every PROGRESS_EVERY lines; `too_big` is the error past --max-input-size
    (`total`: the bytes before `rest`). Closes `f` when done."""

    def _parse_line(body: bytes, lineno: int) -> Any:
        try:
            return _loads(body)
        except (ValueError, TypeError) as e:
            raise UserError(f"{label}: invalid JSON on snapshot line {lineno}: {e}") from None

    def _last(body: bytes, lineno: int) -> tuple[Any, bool]:
        """(item, closes the list) for a line that does not end in a comma."""
        if body.endswith(b"]}"):
            # `<item>]}` closes the list; an item whose own last field is a list also ends in
            # "]}", so fall back to reading the line as one item.
            try:
                return _loads(body[:-2]), True
            except (ValueError, TypeError):
                return _parse_line(body, lineno), False
        return _parse_line(body, lineno), False  # no comma: the list closes on a later line

    decode = None if decoder is None else decoder.model if models else decoder.item
    loads = _loads
    lineno = 0
    n = 0
    limit = max_input_bytes if too_big is not None else float("inf")
    lines = itertools.chain((rest,), f) if rest is not None else f
    try:
        for line in lines:
            lineno += 1
            total += len(line)
            if total > limit:
                raise too_big()  # type: ignore[misc]
            if tick is not None and lineno % PROGRESS_EVERY == 0:
                tick()
            done = False
            if line[-2:] == b",\n":  # every line but the last, as write_snapshot lays it out
                try:
                    obj = loads(line[:-2])
                except (ValueError, TypeError):
                    obj = _parse_line(line.strip()[:-1], lineno)
            else:
                body = line.strip()
                if body == b"]}":
                    return
                if body.endswith(b","):
                    obj = _parse_line(body[:-1], lineno)
                elif body:
                    obj, done = _last(body, lineno)
                else:  # a blank line: skip the whole run of whitespace it starts at once
                    skipped, breaks = skip_blank(f)
                    total += skipped
                    lineno += breaks
                    if total > limit:
                        raise too_big()  # type: ignore[misc]
                    continue
            if decode is not None:
                try:
                    obj = decode(obj, n)
                except UserError as e:
                    msg = str(e)
                    raise UserError(msg if msg.startswith(f"{label}: ") else f"{label}: {msg}") from None
            n += 1
            if obj is not None:
                yield obj
            if done:
                return
        raise UserError(f"{label}: snapshot ends early at line {lineno + 1} (truncated file?)")
    except (OSError, EOFError, zlib.error) as e:
        raise UserError(f"{label}: corrupt or truncated gzip data ({e})") from None
    finally:
        f.close()


class SnapshotItems:
    """The items of a streamed snapshot, readable once. Iterating gives the items as written
    (dicts); `models()` gives the same sequence with formatVersion 2 and 3 pod rows already
    converted to Pods, which build_snapshot accepts: the fast path when nothing else looks at raw
    items. `decoder` (None for formatVersion 1) is what converts the rows: its `on_row` hears of
    each (owners.py)."""

    def __init__(self, make: Callable[[bool], Iterator[Any]], decoder: Decoder | None = None) -> None:
        self._make = make
        self.decoder = decoder

    def __iter__(self) -> Iterator[Any]:
        return self._make(False)

    def models(self) -> Iterator[Any]:
        return self._make(True)


def model_items(items: Iterable[Any]) -> Iterable[Any]:
    """What build_snapshot should read for `items`: their models() when they are SnapshotItems."""
    return items.models() if isinstance(items, SnapshotItems) else items


def _counted(items: Any, progress: Progress) -> Iterator[Any]:
    """The items of a List, reporting ("items", n, how many) every PROGRESS_EVERY items."""
    total = len(items) if hasattr(items, "__len__") else None
    for n, obj in enumerate(items, 1):
        if n % PROGRESS_EVERY == 0:
            progress("items", n, total)
        yield obj


def stream_file(path: Path, progress: Progress | None = None) -> tuple[SnapshotHeader, Iterator[Any]] | None:
    """Item-by-item reading when the file's layout allows it: our snapshot format, or a large
    `kubectl get -o json` List. None means: read the whole document (load_items). `progress`
    hears how far the reading is (stream_snapshot's bytes, a List's items)."""
    check_regular(path)
    if not path.is_file():
        return None
    streamed = stream_snapshot(path, progress)
    if streamed is not None:
        return streamed
    if not path.name.endswith((".json", ".json.gz", ".gz")):
        return None
    try:
        raw = _read_bytes(path)
    except UserError:
        return None  # the whole-document reader reports it
    if _is_snapshot(raw):
        return None  # our format, not laid out in lines (the demo): read whole, it is no List
    from .liststream import stream_list

    lean = _lean_decoder()
    found = lean.decode_list(raw) if lean is not None else None
    listed = (SnapshotHeader(source=str(path)), found[1]) if found is not None else stream_list(path, raw)
    if listed is None or progress is None:
        return listed
    return listed[0], _counted(listed[1], progress)


def load_items(path: str | os.PathLike, whole: bool = False) -> tuple[SnapshotHeader, list[Any]]:
    """Every object of a file or directory. `whole`: every field of every object (the lean
    decoder keeps only what the engine reads; tests/oracle sends objects to an API server)."""
    p = Path(path)
    header = SnapshotHeader(source=str(p))
    files = _files_in(p) if p.is_dir() else [p]
    items: list[Any] = []
    for f in files:
        raw = _read_bytes(f)
        if not raw.strip():
            raise UserError(f"{f}: empty file (no Kubernetes objects to read)")
        before = len(items)
        for doc in _documents(f, raw, whole):
            items.extend(_items(f, doc, header))
        if len(items) == before and not _is_snapshot(raw):
            raise UserError(f"{f}: holds no Kubernetes objects")
    return header, items


def _is_snapshot(raw: bytes) -> bool:
    """Our own snapshot format may hold no items (a capture of an empty namespace is still one)."""
    return b'"kind":"Snapshot"' in raw[:200] or b'"kind": "Snapshot"' in raw[:200]


def load_snapshot(path: str | os.PathLike) -> Snapshot:
    """Read a snapshot or manifest file/directory into the model. User errors are one line."""
    enabled = gc.isenabled()
    gc.disable()  # the load allocates millions of small objects and frees none: GC is pure cost
    try:
        streamed = stream_file(Path(path))
        header, items = streamed if streamed is not None else load_items(path)
        snap = build_snapshot(model_items(items), header, source=f"{path}: ")
    finally:
        if enabled:
            gc.enable()
    return snap


DEMO_PATH = Path(__file__).resolve().parent.parent.parent / "data" / "demo-snapshot.json"
DEMO_MISSING = "the bundled demo snapshot is missing from this installation"
# Further bundled clusters, named on --snapshot with a leading "@" (no file name starts with it in
# practice; ./@x still reads a file): @demo-dra is the Dynamic Resource Allocation demo (issue 15,
# tools/make_demo_dra.py).
# @demo-kueue is the Kueue demo (issue 35, tools/make_demo_kueue.py; `--demo kueue` reads it too).
BUNDLED = {"@demo-dra": DEMO_PATH.parent / "demo-dra-snapshot.json",
           "@demo-kueue": DEMO_PATH.parent / "demo-kueue-snapshot.json"}
# `--demo NAME`: the bundled clusters by their short name (cli/app.py demo_args).
DEMOS = {name.removeprefix("@demo-"): name for name in BUNDLED}


def snapshot_path(name: str) -> Path:
    """The file --snapshot NAME reads: a bundled cluster for "@name", else the path itself."""
    if not name.startswith("@"):
        return Path(name)
    p = BUNDLED.get(name)
    if p is None:
        import difflib

        close = difflib.get_close_matches(name, list(BUNDLED), n=1)
        hint = f" (did you mean {close[0]}?)" if close else f" (bundled: {', '.join(sorted(BUNDLED))})"
        raise UserError(f"no bundled snapshot {name}{hint}")
    if not p.exists():
        raise UserError(f"the bundled snapshot {name} is missing from this installation")
    return p


def load_demo() -> Snapshot:
    if not DEMO_PATH.exists():
        raise UserError(DEMO_MISSING)
    return load_snapshot(DEMO_PATH)


def read_kueue_config(path: str | os.PathLike) -> KueueConfig:
    """--kueue-config FILE: Kueue's Configuration, bare or inside the ConfigMap kueue-manager-config
    (`kubectl get cm -n kueue-system kueue-manager-config -o yaml`, also as a one-item List)."""
    # Imported here: a whatif without --kueue-config does not load Kueue's modules (startup time).
    from ...queueing.kueue.config import CONFIGMAP_KEY, embedded_configuration, kueue_config

    p = Path(path)
    doc = safe_yaml(read_text(p), str(p))
    if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
        maps = [o for o in doc["items"] if isinstance(o, dict) and o.get("kind") == "ConfigMap"]
        if len(maps) != 1:
            raise UserError(f"{p}: a List of {len(maps)} ConfigMaps; --kueue-config wants kueue-system/kueue-manager-config alone")
        doc = maps[0]
    text = embedded_configuration(doc, str(p))
    if text is not None:
        doc = safe_yaml(text, f"{p}: data[{CONFIGMAP_KEY}]")
    return kueue_config(doc, str(p))
