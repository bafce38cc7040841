"""Write a snapshot file (format ``kubectl-wap/v1alpha1`` ``Snapshot``, formatVersion 2: pod specs
deduplicated into ``PodSpecTemplate`` items; see docs/snapshot-format.md).

Items are streamed one by one so a 150k-pod snapshot never exists as one big string. The file is
written to a temporary sibling and renamed into place, so a reader never sees half a snapshot and an
interrupted save leaves the previous file intact.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
import tempfile
from typing import IO, Iterable

from .spectemplates import API_VERSION, FORMAT_VERSION, encode

KIND = "Snapshot"

_SEP = (",", ":")


def _dump(obj: object) -> str:
    return json.dumps(obj, separators=_SEP, ensure_ascii=False)


def _write_body(out: IO[str], header: dict, items: Iterable[dict]) -> None:
    # The layout is what our streaming reader expects: header on the first line, one item per line.
    header = dict(header, formatVersion=FORMAT_VERSION)  # the encoding below is what makes it 2
    out.write('{"apiVersion":' + _dump(API_VERSION) + ',"kind":' + _dump(KIND))
    out.write(',"header":' + _dump(header) + ',"items":[')
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
    if path == "-":
        _write_body(sys.stdout, header, items)
        sys.stdout.flush()
        return
    target = os.path.abspath(os.path.expanduser(path))
    directory = os.path.dirname(target)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as raw:
            if target.endswith(".gz"):
                # mtime=0: identical content gives identical bytes (reproducible snapshots).
                # Closing the GzipFile writes the trailer but leaves `raw` open (it does not own it).
                with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
                    with io.TextIOWrapper(gz, encoding="utf-8") as text:
                        _write_body(text, header, items)
            else:
                text = io.TextIOWrapper(raw, encoding="utf-8")
                _write_body(text, header, items)
                text.flush()
                text.detach()  # hand `raw` back without closing it: we still fsync it below
            raw.flush()
            os.fsync(raw.fileno())
        # mkstemp creates 0600; give the file the mode a plain open() would have had.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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
