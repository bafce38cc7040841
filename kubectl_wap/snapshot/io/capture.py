"""`kubectl wap snapshot` from a live cluster, written as the pages arrive (issue 34 item 3).

Before, the capture held every stripped object of the cluster (150k pods: ~550 MB) until the writer
ran, and each pod went decode -> dict -> stripped dict -> shared dict -> row. Here each page is
turned into the snapshot's lines before the next page is read, and the lines go to an unnamed
temporary file (the header, which says what was listed, is only known at the end and comes first
in the file); the file is written from it at the end. Memory is a page plus the template, label
set and owner tables, not the cluster.

A pod of the usual shape (what a row holds: podrows.py) goes from its msgspec Struct
(decode/lean.py) to its row directly: the fields a row keeps are read off the Struct, and its spec
is shared per distinct spec as before, stripped and written once per template. Any other pod, and
every other kind, takes the path the collecting reader takes (strip_object, for_sharing, the line
encoder), in item order, through the same encoder: the file is the one write_snapshot writes of
the collected items, byte for byte (tests/test_live_stream.py).
"""

from __future__ import annotations

import io
import tempfile
from typing import IO, Any

from ...errors import UserError
from ..decode.spectemplates import LineEncoder, TemplatedSpec, dump_compact, templated
from ..share.strip import _per_template, _pod_spec, _shared_spec, controller_ref, for_sharing, strip_object
from .pages import NotAnObject

try:
    from ..decode import lean
except ImportError:  # optional (see files.py): every page is then parsed whole, as dicts
    lean = None  # type: ignore[assignment]

_CHUNK = 1 << 20
_DISRUPTION = "DisruptionTarget"


class LineSpool:
    """The items' lines in output order, joined by ",\\n", in an unnamed temporary file (created
    0600 and never linked: the stripped cluster data has no name on disk), or in memory
    (`in_memory`: a live read analysed at once, which writes nothing). `mark`/`rewind` drop what a
    list that restarts (410 Gone) had added."""

    def __init__(self, in_memory: bool = False) -> None:
        if in_memory:
            self.file: IO[bytes] = io.BytesIO()
        else:
            try:
                self.file = tempfile.TemporaryFile()
            except OSError as e:
                raise _spool_error(e) from None
        self.empty = True

    def write(self, lines: list[str]) -> None:
        if not lines:
            return
        text = ",\n".join(lines)
        try:
            self.file.write(text.encode("utf-8") if self.empty else (",\n" + text).encode("utf-8"))
        except OSError as e:
            raise _spool_error(e) from None
        self.empty = False

    def mark(self) -> tuple[int, bool]:
        return self.file.tell(), self.empty

    def rewind(self, mark: tuple[int, bool]) -> None:
        self.file.seek(mark[0])
        self.file.truncate()
        self.empty = mark[1]

    def chunks(self) -> Any:
        """The lines written, as bytes in chunks of 1 MiB (from the start)."""
        self.file.flush()
        self.file.seek(0)
        while True:
            chunk = self.file.read(_CHUNK)
            if not chunk:
                return
            yield chunk

    def closed_list(self) -> IO[bytes]:
        """The file from its start, the list closed as write_snapshot closes it: what
        files.spooled_snapshot reads. Nothing can be written after."""
        self.file.write(b"]}\n" if self.empty else b"\n]}\n")
        self.file.seek(0)
        return self.file

    def close(self) -> None:
        self.file.close()


def _spool_error(e: OSError) -> UserError:
    return UserError(f"cannot keep the capture in the temporary directory {tempfile.gettempdir()} until it is written: "
                     f"{e.strerror or e}; set TMPDIR to a directory with room (the snapshot's size, uncompressed)")


class StreamSink:
    """Where live.py's pagination puts each page when the capture is written as it arrives: the
    page's lines, encoded in item order, go to the spool. Events are kept only when Preempted
    (`keep_preempted`, as load_live keeps them)."""

    def __init__(self, in_memory: bool = False) -> None:
        self.spool = LineSpool(in_memory)
        self.encoder = LineEncoder()
        self.read = 0  # items read of the current resource
        self.keep_preempted = False
        self._mark: Any = None
        self._templates: Any = None
        self._texts: dict[bytes, list[str | None]] = {}  # spec key -> template text [without, with nodeName]

    # -- the sink protocol live.py's _paginate drives ---------------------------------------------
    def begin(self) -> None:
        self.read = 0
        self._mark = (self.spool.mark(), _copy_encoder(self.encoder))
        self._templates = lean.PageTemplates() if lean is not None else None

    def restart(self) -> None:
        """Forget what the current resource added (its list restarts after 410 Gone)."""
        at, encoder = self._mark
        self.spool.rewind(at)
        self.encoder = encoder
        self._mark = (self.spool.mark(), _copy_encoder(encoder))
        self.read = 0

    raw_specs = True  # pages.py: decode pods with their spec stanzas as text (lean._RawSpecPod)

    def page(self, api_version: str, kind: str, items: list[Any], structs: bool) -> bool:
        """One page's items, decoded (`structs`: as lean.decode_page_structs gives them). False
        (nothing taken) when a spec kept as text does not decode as the typed page would have:
        the caller then decodes the page the usual way and hands it again."""
        out: list[str] = []
        add = out.extend
        lines = self.encoder.lines
        pod_row = self._pod_row if structs and kind == "Pod" and api_version == "v1" else None
        keys = self._checked_keys(items) if pod_row is not None else None
        if keys is False:
            return False
        templates = self._templates
        for i, x in enumerate(items):
            if pod_row is not None:
                found = pod_row(x, keys[i] if keys else None)
                if found is not None:
                    add(found)
                    continue
                x = lean.typed_pod(x)  # type: ignore[union-attr]
            raw = lean.as_dicts([x], kind, templates)[0] if structs else x  # type: ignore[union-attr]
            if not isinstance(raw, dict):
                raise NotAnObject()
            raw["apiVersion"] = api_version
            raw["kind"] = kind
            obj = strip_object(raw)
            if self.keep_preempted and obj.get("reason") != "Preempted":
                continue
            add(lines(for_sharing(obj)))
        self.read += len(items)
        self.spool.write(out)
        return True

    def _checked_keys(self, items: list[Any]) -> list[Any] | bool | None:
        """Each pod's spec key (None for a pod without a spec kept as text), every spec not seen
        before decoded once as the typed page would (a known key is the same text, decoded
        before): False when one does not decode. None when the page holds no such spec."""
        keys: list[Any] = []
        texts = self._texts
        found = False
        for x in items:
            spec = x.spec if type(x) is lean.RAW_SPEC_POD else None  # type: ignore[union-attr]
            if spec is None:
                keys.append(None)
                continue
            found = True
            key = lean.spec_key(spec)  # type: ignore[union-attr]
            if key not in texts:
                try:
                    lean.typed_spec(spec)  # type: ignore[union-attr]
                except lean.DECODE_ERRORS:  # type: ignore[union-attr]
                    return False
                texts[key] = [None, None]
            keys.append(key)
        return keys if found else None

    # -- a pod's row from its Struct ----------------------------------------------------------------
    def _pod_row(self, p: Any, key: bytes | None = None) -> list[str] | None:
        """The lines of one pod (its template's and label set's definitions when new, then its
        row), or None when the pod is not of the row's shape: the caller then takes the dict path,
        which decides the same for every pod this accepts (the checks of podrows.RowWriter.row and
        strip.py's _pod, read off the Struct: a field the Struct holds as None is one the dict
        path leaves out)."""
        md, spec, st = p.metadata, p.spec, p.status
        if md is None or spec is None or md.deletionTimestamp is not None:
            return None
        ns, name, uid, labels, created = md.namespace, md.name, md.uid, md.labels, md.creationTimestamp
        if type(ns) is not str or type(name) is not str or type(uid) is not str:
            return None
        if created is not None and type(created) is not str:
            return None
        if labels is not None and (type(labels) is not dict or not all(type(k) is str and type(v) is str for k, v in labels.items())):
            return None
        phase = started = None
        if st is not None:
            if st.nominatedNodeName is not None or st.resourceClaimStatuses is not None:
                return None
            phase, started = st.phase, st.startTime
            if (phase is not None and type(phase) is not str) or (started is not None and type(started) is not str):
                return None
            if st.conditions is not None and any(c.type == _DISRUPTION for c in st.conditions):
                return None
            for statuses in (st.containerStatuses, st.initContainerStatuses):
                if statuses is not None and any(c.allocatedResources is not None or c.resources is not None for c in statuses):
                    return None  # resize in flight: kept in the object form
        owners = None
        refs = md.ownerReferences
        if refs is not None:
            for r in refs:
                if r.controller is True:  # metav1.GetControllerOf: the first controller reference
                    owners = controller_ref([{"kind": r.kind, "name": r.name, "controller": True}])
                    break
        node = spec.nodeName
        if node is not None and type(node) is not str:
            return None
        text = self._spec_text(spec, node, key)
        if text is None:
            return None
        tid, define = self.encoder.template(text)
        row, labels_define = self.encoder.rows.make(tid, ns, name, uid, labels, created, node, phase, started, owners, dump_compact)
        out = [] if define is None else [define]
        if labels_define is not None:
            out.append(labels_define)
        out.append(dump_compact(row))
        return out

    def _spec_text(self, spec: Any, node: str | None, key: bytes | None = None) -> str | None:
        """The template text of a pod's spec: shared per distinct spec (lean's key: the spec's JSON
        without nodeName), stripped and projected as for_sharing does, by the functions the dict
        path calls, once per distinct spec and presence of nodeName. Only the key and the texts
        are kept (a template's dicts and derived forms are several KB; the generated L cluster
        has 18,811 distinct specs)."""
        if key is None:
            key = lean.spec_key(spec)  # type: ignore[union-attr]
        texts = self._texts.get(key)
        if texts is None:
            texts = self._texts[key] = [None, None]
        i = node is not None
        text = texts[i]
        if text is None:
            t = lean.spec_template(spec)  # type: ignore[union-attr]
            stripped = _per_template(templated(t, node), t, "stripped", _pod_spec)
            if type(stripped) is not TemplatedSpec or stripped.template is None:
                return None  # derived per pod (strip.py says never): the dict path's business
            shared = _per_template(stripped, stripped.template, "shared", _shared_spec)
            if type(shared) is not TemplatedSpec or shared.template is None:
                return None
            text = texts[i] = self.encoder.spec_text(shared)
        return text

    def close(self) -> None:
        self.spool.close()


def _copy_encoder(enc: LineEncoder) -> LineEncoder:
    out = LineEncoder()
    out.ids = dict(enc.ids)
    rows, src = out.rows, enc.rows
    rows._seen, rows._ids, rows._owners = set(src._seen), dict(src._ids), dict(src._owners)
    return out
