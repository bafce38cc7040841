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


_TAIL = "]}\n"


def _head(header: dict) -> str:
    # The layout is what our streaming reader expects: header on the first line, one item per line.
    header = dict(header, formatVersion=FORMAT_VERSION)  # the encoding below is what makes it 2
    return ('{"apiVersion":' + dump_compact(API_VERSION) + ',"kind":' + dump_compact(KIND)
            + ',"header":' + dump_compact(header) + ',"items":[')


def _write_body(out: IO[str], header: dict, items: Iterable[dict]) -> None:
    out.write(_head(header))
    first = True
    for line in encode(items):
        if not first:
            out.write(",\n")  # one object per line keeps the file greppable and diffable
        out.write(line)
        first = False
    out.write(_TAIL)


def write_spooled(path: str, header: dict, lines: Callable[[], Iterable[bytes]]) -> None:
    """write_snapshot of items already encoded: `lines()` gives their lines joined by ",\n" as
    UTF-8 bytes, in chunks (a live capture written as it arrived: io/capture.py). The same file
    as write_snapshot of the items those lines encode, byte for byte."""
    if path == "-":
        dump_spooled(sys.stdout, header, lines)
        return

    def body(raw: IO[bytes]) -> None:
        if path.endswith(".gz"):
            # As write_snapshot: mtime=0, and the same bytes in give the same deflate stream out
            # however they are cut into writes.
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
                _write_spooled_bytes(gz, header, lines)
                # write_snapshot's TextIOWrapper flushes the GzipFile as it closes (a sync flush
                # ends the deflate block): so does this, for the same bytes.
                gz.flush()
        else:
            _write_spooled_bytes(raw, header, lines)

    write_file(path, body)


def _write_spooled_bytes(out: IO[bytes], header: dict, lines: Callable[[], Iterable[bytes]]) -> None:
    out.write(_head(header).encode("utf-8"))
    for chunk in lines():
        out.write(chunk)
    out.write(_TAIL.encode())


def dump_spooled(out: IO[str], header: dict, lines: Callable[[], Iterable[bytes]]) -> None:
    """dump_snapshot (json) of items already encoded (see write_spooled)."""
    import codecs

    text = codecs.getincrementaldecoder("utf-8")()  # a chunk may end inside a character
    out.write(_head(header))
    for chunk in lines():
        out.write(text.decode(chunk))
    out.write(text.decode(b"", final=True) + _TAIL)
    out.flush()


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
    * a symlink is followed (the file it points to is replaced, the link stays), unless another
      user owns it in a shared directory (:func:`resolve_target`); a dangling one is refused;
    * an existing file without write permission for the caller is refused, never replaced;
    * a path that exists and is not a regular file (/dev/null, /dev/stdout, a FIFO) is written
      in place: renaming over a device node would replace it with a file;
    * SIGTERM and SIGHUP during the write remove the temporary file, then exit 128+signal; the
      temporary files of a writer that was killed outright are swept by the next write;
    * every failure is one line naming the path (missing directory, read-only file system, full
      disk, a directory as target).
    """
    target = resolve_target(path)
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise UserError(f"{path}: cannot write: {e.strerror or e}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UserError(f"{path}: is a directory; give a file name")
    if st is not None and stat.S_ISREG(st.st_mode) and not _writable(st, target):
        # rename() would replace it all the same (the directory is writable, and root may
        # anyway): the file's mode says it is not to be written.
        raise UserError(f"{path}: is write-protected (mode {stat.S_IMODE(st.st_mode):04o}); make it writable or remove it first")
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


_MAX_LINKS = 40  # Linux's MAXSYMLINKS: more is ELOOP


def resolve_target(path: str) -> str:
    """`path` with its symbolic links followed, as realpath does, but only those the kernel's
    fs.protected_symlinks would follow (fs/namei.c may_follow_link): a link in a sticky or
    other-writable directory is followed only when the caller or the directory's owner owns it
    (UPSTREAM-DIFF: the kernel asks for sticky *and* world-writable; a directory other users can
    write to is as shared without the sticky bit). A link as the last component must point at
    something that exists: a file is never created through a dangling link."""
    pending = os.path.abspath(os.path.expanduser(path)).split("/")[::-1]
    cur, links = "/", 0
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            cur = os.path.dirname(cur)
            continue
        nxt = os.path.join(cur, name)
        try:
            st = os.lstat(nxt)
        except OSError:
            return os.path.join(nxt, *pending[::-1])  # not there (yet): the write says why
        if not stat.S_ISLNK(st.st_mode):
            cur = nxt
            continue
        links += 1
        if links > _MAX_LINKS:
            raise UserError(f"{path}: cannot write: too many levels of symbolic links")
        _check_link(path, nxt, st, os.stat(cur))
        dest = os.readlink(nxt)
        if not pending and not os.path.exists(nxt):
            raise UserError(f"{path}: is a dangling symbolic link (to {dest}); refusing to create a file through it")
        if dest.startswith("/"):
            cur = "/"
        pending.extend(dest.split("/")[::-1])
    return cur


def _check_link(path: str, link: str, st: os.stat_result, parent: os.stat_result) -> None:
    shared = parent.st_mode & (stat.S_ISVTX | stat.S_IWOTH)
    if shared and st.st_uid not in (os.geteuid(), parent.st_uid):
        raise UserError(f"{path}: {link} is a symbolic link owned by another user (uid {st.st_uid}) in a shared "
                        f"directory; refusing to follow it (as fs.protected_symlinks would)")


def _writable(st: os.stat_result, target: str) -> bool:
    """The caller may open the file for writing by its mode bits (root included: a 0444 file is
    not to be replaced), and the kernel agrees (ACLs, read-only mounts)."""
    uid = os.geteuid()
    if st.st_uid == uid:
        bit = stat.S_IWUSR
    elif st.st_gid == os.getegid() or st.st_gid in os.getgroups():
        bit = stat.S_IWGRP
    else:
        bit = stat.S_IWOTH
    return bool(st.st_mode & bit) and (uid == 0 or os.access(target, os.W_OK))


def check_targets(output_file: str | None, redact_map: str | None) -> None:
    """The file flags of `snapshot`, before a long cluster read: no empty name, the map and the
    snapshot not one file (the map would be replaced by the snapshot it describes, or the other
    way round), each target writable."""
    for flag, value in (("--output-file", output_file), ("--redact-map", redact_map)):
        if value is not None and not value.strip():
            raise UserError(f"{flag} is empty; give a file name")
    if output_file and redact_map:
        a, b = resolve_target(output_file), resolve_target(redact_map)
        same = a == b
        try:
            same = same or os.path.samefile(a, b)
        except OSError:
            pass
        if same:
            raise UserError(f"--redact-map and --output-file are the same file ({output_file}); the map must stay "
                            f"private while the snapshot is shared")
    for value in (output_file, redact_map):
        if value:
            check_target(value)


def check_target(path: str) -> None:
    """Fail before a long cluster read when `path` can obviously not be written."""
    if path == "-":
        return
    target = resolve_target(path)
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
    prefix = "." + os.path.basename(target) + "."
    _sweep(directory, prefix)
    # The writer's pid in the name: a later run can tell a killed writer's file from a live one's.
    fd, tmp = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}.", suffix=".tmp", dir=directory)
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


def _sweep(directory: str, prefix: str) -> None:
    """Remove the temporary files (`.NAME.PID.XXXX.tmp`) that a writer of the same target left
    when it was killed (SIGKILL, a power cut): ours by owner, regular files, and their pid no
    longer running. Another user's, or a live process's, are left alone."""
    try:
        names = [n for n in os.listdir(directory) if n.startswith(prefix) and n.endswith(".tmp")]
    except OSError:
        return
    for n in names:
        pid = n[len(prefix):].split(".", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        p = os.path.join(directory, n)
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid():
            _unlink(p)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return True  # not a pid we can judge: keep the file
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


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
