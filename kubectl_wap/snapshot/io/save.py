"""Write a snapshot file (format ``kubectl-wap/v1alpha1`` ``Snapshot``, formatVersion 2: pod specs
deduplicated into ``PodSpecTemplate`` items; see docs/snapshot-format.md).

Items are streamed one by one so a 150k-pod snapshot never exists as one big string. The file is
written to a temporary sibling and renamed into place, so a reader never sees half a snapshot and an
interrupted save leaves the previous file intact.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import json
import os
import signal
import stat
import sys
import tempfile
import threading
from typing import IO, Callable, Iterable, Iterator

from ...errors import UserError

from ..decode.spectemplates import API_VERSION, FORMAT_VERSION, dump_compact, encode

KIND = "Snapshot"


def _write_body(out: IO[str], header: dict, items: Iterable[dict]) -> None:
    # The layout is what our streaming reader expects: header on the first line, one item per line.
    header = dict(header, formatVersion=FORMAT_VERSION)  # the encoding below is what makes it 2
    out.write('{"apiVersion":' + dump_compact(API_VERSION) + ',"kind":' + dump_compact(KIND))
    out.write(',"header":' + dump_compact(header) + ',"items":[')
    first = True
    for line in encode(items):
        if not first:
            out.write(",\n")  # one object per line keeps the file greppable and diffable
        out.write(line)
        first = False
    out.write("]}\n")


def write_snapshot(path: str, header: dict, items: Iterable[dict]) -> None:
    """Write header and items to `path` (gzip when it ends in .gz; "-" means stdout). Items are
    the stripped (and possibly redacted) objects; pod specs are deduplicated on the way out, and
    the reader gives back exactly these items."""
    from ..share.strip import for_sharing

    items = (for_sharing(o) for o in items)  # nested pod stanzas to the allow-list as well
    if path == "-":
        _write_body(sys.stdout, header, items)
        sys.stdout.flush()
        return

    def body(raw: IO[bytes]) -> None:
        if path.endswith(".gz"):
            # mtime=0: identical content gives identical bytes (reproducible snapshots).
            # Closing the GzipFile writes the trailer but leaves `raw` open (it does not own it).
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
                with io.TextIOWrapper(gz, encoding="utf-8") as text:
                    _write_body(text, header, items)
        else:
            text = io.TextIOWrapper(raw, encoding="utf-8")
            _write_body(text, header, items)
            text.flush()
            text.detach()  # hand `raw` back without closing it

    write_file(path, body)


def write_private_text(path: str, text: str) -> None:
    """Write `text` to `path` readable by the owner only, even when the file existed with a wider
    mode (the --redact-map file maps redacted names back to real ones)."""
    write_file(path, lambda raw: raw.write(text.encode("utf-8")), private=True)


def write_file(path: str, body: Callable[[IO[bytes]], None], private: bool = False) -> None:
    """Write a file the way a reader can trust (issue 19):

    * a regular file (new or existing) is written to a temporary sibling and renamed into place,
      so a reader never sees half of it and an interrupted write leaves the old file intact;
    * a new file is created 0600 (it holds cluster data); an existing file keeps its mode
      (`private` forces 0600 either way);
    * a symlink is followed (the file it points to is replaced, the link stays);
    * a path that exists and is not a regular file (/dev/null, /dev/stdout, a FIFO) is written
      in place: renaming over a device node would replace it with a file;
    * SIGTERM and SIGHUP during the write remove the temporary file, then exit 128+signal;
    * every failure is one line naming the path (missing directory, read-only file system, full
      disk, a directory as target).
    """
    target = os.path.realpath(os.path.abspath(os.path.expanduser(path)))
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise UserError(f"{path}: cannot write: {e.strerror or e}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UserError(f"{path}: is a directory; give a file name")
    try:
        if st is not None and not stat.S_ISREG(st.st_mode):
            with open(target, "wb") as raw:  # a device or FIFO: in place, never replaced
                body(raw)
            return
        with _cleanup_on_signals() as tmps:
            _replace(target, body, st, private, tmps)
    except UserError:
        raise
    except OSError as e:
        raise UserError(_write_error(path, target, e)) from None


def check_target(path: str) -> None:
    """Fail before a long cluster read when `path` can obviously not be written."""
    if path == "-":
        return
    target = os.path.realpath(os.path.abspath(os.path.expanduser(path)))
    if os.path.isdir(target):
        raise UserError(f"{path}: is a directory; give a file name")
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise UserError(f"{path}: cannot write: directory {directory} does not exist")
    if not os.path.exists(target) and not os.access(directory, os.W_OK):
        raise UserError(f"{path}: cannot write: directory {directory} is not writable")


def _write_error(path: str, target: str, e: OSError) -> str:
    directory = os.path.dirname(target)
    if isinstance(e, FileNotFoundError) and not os.path.isdir(directory):
        return f"{path}: cannot write: directory {directory} does not exist"
    if e.errno == errno.ENOSPC:
        return f"{path}: cannot write: no space left on the device"
    if e.errno == errno.EROFS:
        return f"{path}: cannot write: read-only file system"
    return f"{path}: cannot write: {e.strerror or e}"


def _replace(target: str, body: Callable[[IO[bytes]], None], st: os.stat_result | None, private: bool, tmps: list[str]) -> None:
    directory = os.path.dirname(target)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=directory)
    tmps.append(tmp)  # mkstemp creates it 0600: the mode for a new file of cluster data
    try:
        with os.fdopen(fd, "wb") as raw:
            body(raw)
            raw.flush()
            os.fsync(raw.fileno())
            if st is not None and not private:
                os.fchmod(raw.fileno(), stat.S_IMODE(st.st_mode))
        os.replace(tmp, target)
        tmps.remove(tmp)
    except BaseException:
        _unlink(tmp)
        if tmp in tmps:
            tmps.remove(tmp)
        raise


def _unlink(p: str) -> None:
    try:
        os.unlink(p)
    except OSError:
        pass


@contextlib.contextmanager
def _cleanup_on_signals() -> Iterator[list[str]]:
    """While a temporary file exists, SIGTERM/SIGHUP remove it before the process ends (the
    default action would kill us with the hidden .tmp left behind)."""
    tmps: list[str] = []
    if threading.current_thread() is not threading.main_thread():
        yield tmps  # signal handlers can only be set from the main thread
        return

    def on_signal(signum: int, _frame: object) -> None:
        for t in list(tmps):
            _unlink(t)
        raise SystemExit(128 + signum)

    saved = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield tmps
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def dump_snapshot(out: IO[str], header: dict, items: Iterable[dict], fmt: str = "json") -> None:
    """The snapshot on a stream, kubectl style (`-o json|yaml`): the same document the file
    holds (json: byte for byte; yaml: the same objects)."""
    if fmt == "json":
        _write_body(out, header, items)
    else:
        import yaml

        buf = io.StringIO()
        _write_body(buf, header, items)
        yaml.safe_dump(json.loads(buf.getvalue()), out, sort_keys=False, width=120)
    out.flush()
