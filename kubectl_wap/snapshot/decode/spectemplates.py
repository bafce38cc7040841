"""Snapshot formatVersion 2 and 3: pod specs stored once per distinct spec (see docs/snapshot-format.md).

Replicas of one workload carry the same spec apart from `nodeName`. The writer emits each distinct
spec once as a `PodSpecTemplate` item and every pod refers to it by `specTemplate` id, keeping only
`nodeName` in its own `spec`. A pod of the usual shape is written as a row (podrows.py), which
the loader turns into a Pod without building its dicts; since formatVersion 3 a row may end with
the pod's owner references (the list on first sight, its id after: for `simulate`). The reader expands every pod back to exactly the item that was written (a plain dict to every
consumer), and marks the expanded spec so the converter computes the spec-derived model fields
once per template instead of once per pod: that is where a 150k-pod load spends its time.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Iterator

from ...errors import UserError
from .podrows import LABELSET_KIND, OWNED_ROW_LEN, ROW_LEN, LabelSet, RowWriter, expand

API_VERSION = "kubectl-wap/v1alpha1"
TEMPLATE_KIND = "PodSpecTemplate"
TEMPLATE_REF = "specTemplate"  # the key on a pod item that names its template
FORMAT_VERSION = 3  # what the writer emits (3: rows may carry owner references)
NEWEST_READABLE = 3

_SEP = (",", ":")

try:  # optional at run time, like the readers' orjson
    from orjson import dumps as _fast_dumps
except ImportError:
    _fast_dumps = None


def dump_compact(obj: object) -> str:
    """Compact JSON text of one snapshot line. orjson writes it ~5x faster than json.dumps (a live
    capture of 30k pods spent 1.7 s of 12 s here); anything it would write differently, or cannot
    write, goes to json.dumps: a text with `null` in it (orjson writes NaN and infinities as null,
    json writes NaN; a real null takes the slow path too, rare in API objects), integer keys and
    integers beyond 64 bits (TypeError). Otherwise the two agree on the value; float spelling may
    differ (1e16 vs 1e+16)."""
    if _fast_dumps is not None:
        try:
            raw = _fast_dumps(obj)
        except TypeError:
            pass
        else:
            if b"null" not in raw:
                return raw.decode()
    return json.dumps(obj, separators=_SEP, ensure_ascii=False)


def encode(items: Iterable[Any]) -> Iterator[str]:
    """The JSON text of each output line: a template right before the first pod that uses it."""
    lines = LineEncoder().lines
    for item in items:
        yield from lines(item)


class LineEncoder:
    """encode()'s state (template ids, label sets and owners written so far) as an object, so a
    writer can encode items as they arrive (the live capture, io/capture.py) and reach the pieces
    a pod row is made of without building the pod's dict first."""

    __slots__ = ("ids", "rows")

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.rows = RowWriter()

    def spec_text(self, spec: dict) -> str:
        """The JSON text of a pod spec without its nodeName (its template's `spec`), computed once
        per template."""
        t = spec.template if type(spec) is TemplatedSpec else None
        text = t.derived.get("text") if t is not None else None
        if text is None:
            text = dump_compact({k: v for k, v in spec.items() if k != "nodeName"})
            if t is not None:
                t.derived["text"] = text  # a template has no nodeName: its pods' text is this
        return text

    def template(self, text: str) -> tuple[int, str | None]:
        """(the id of the template with this spec text, its definition line when it is new)."""
        tid = self.ids.get(text)
        if tid is not None:
            return tid, None
        tid = self.ids[text] = len(self.ids)
        return tid, f'{{"apiVersion":"{API_VERSION}","kind":"{TEMPLATE_KIND}","id":{tid},"spec":{text}}}'

    def lines(self, item: Any) -> Iterator[str]:
        """The output lines of one item (a template or LabelSet definition before its pod)."""
        if not isinstance(item, dict) or item.get("kind") != "Pod":
            yield dump_compact(item)
            return
        spec = item.get("spec")
        if not isinstance(spec, dict):  # junk spec: written as it is, minus the reserved key
            yield dump_compact({k: v for k, v in item.items() if k != TEMPLATE_REF})
            return
        # nodeName is the one spec field that differs between replicas; keep it on the pod.
        tid, define = self.template(self.spec_text(spec))
        if define is not None:
            yield define
        found = self.rows.row(item, spec, tid, dump_compact)
        if found is not None:
            row, define = found
            if define is not None:
                yield define
            yield dump_compact(row)
            return
        pod = {k: v for k, v in item.items() if k != TEMPLATE_REF}  # the key is reserved in v2
        pod["spec"] = {"nodeName": spec["nodeName"]} if "nodeName" in spec else {}
        pod[TEMPLATE_REF] = tid
        yield dump_compact(pod)


class SpecTemplate:
    """One PodSpecTemplate as read; `fields` is the converter's cache of its spec-derived model
    fields (filled on first use, so a bad template is reported with the first pod's name).
    `derived` holds what other steps compute from the spec alone, once per template: strip.py's
    stripped and shared forms (keyed by step and nodeName's place, each a SpecTemplate of its
    own with that place) and the writer's JSON text (key "text")."""

    __slots__ = ("spec", "fields", "derived")

    def __init__(self, spec: dict) -> None:
        self.spec = spec
        self.fields: Any = None
        self.derived: dict[Any, Any] = {}


def templated(template: SpecTemplate, node: Any, position: int | None = None) -> "TemplatedSpec":
    """A pod's spec made of `template` and the pod's own nodeName, inserted at `position` among
    the template's keys (the key order a per-pod copy would have), or after them when `position`
    is None (as the readers expand a row or a templated pod; a template that carries a nodeName
    of its own has it replaced in place). nodeName is absent when `node` is None."""
    spec = template.spec
    if node is None:
        out = TemplatedSpec(spec)
    elif position is None or position >= len(spec):
        out = TemplatedSpec(spec)
        dict.__setitem__(out, "nodeName", node)
    else:
        items = list(spec.items())
        out = TemplatedSpec(items[:position])
        dict.__setitem__(out, "nodeName", node)
        dict.update(out, items[position:])
    out.template = template
    return out


class TemplatedSpec(dict):
    """An expanded pod spec: the template's fields plus the pod's own nodeName. It is a plain dict
    to every reader; `template` lets the converter reuse the template's converted fields. Any
    mutation through this dict's own methods drops `template`, so an edited spec is converted
    from its contents like any other (nested values are shared with the template: read-only)."""

    __slots__ = ("template",)

    def _edited(self) -> None:
        self.template = None

    def __setitem__(self, k: Any, v: Any) -> None:
        self._edited()
        dict.__setitem__(self, k, v)

    def __delitem__(self, k: Any) -> None:
        self._edited()
        dict.__delitem__(self, k)

    def update(self, *a: Any, **kw: Any) -> None:
        self._edited()
        dict.update(self, *a, **kw)

    def pop(self, *a: Any) -> Any:
        self._edited()
        return dict.pop(self, *a)

    def popitem(self) -> Any:
        self._edited()
        return dict.popitem(self)

    def setdefault(self, *a: Any) -> Any:
        self._edited()
        return dict.setdefault(self, *a)

    def clear(self) -> None:
        self._edited()
        dict.clear(self)

    def __ior__(self, other: Any) -> "TemplatedSpec":
        self._edited()
        dict.update(self, other)
        return self


class Decoder:
    """Turns formatVersion 2 and 3 items back into the items that were written. `item` returns
    None for a template or label set definition (consumed here) and the expanded item
    otherwise. With `pod_from_row` (the converter's), `model` returns plain pod rows as Pods and
    everything else as `item` does; `on_row`, when set, is told each such Pod's owner references
    (None without) and template: what `simulate` reads of a pod the model does not keep
    (owners.py)."""

    def __init__(self, where: str, pod_from_row: Callable[[list, SpecTemplate, Any], Any] | None = None,
                 version: int = FORMAT_VERSION) -> None:
        self.where = where
        self.templates: dict[int, SpecTemplate] = {}
        self.labelsets: dict[int, LabelSet] = {}
        self.owners: list[list] = []  # by id: in the order rows first carry them
        self.pod_from_row = pod_from_row
        self.on_row: Callable[[Any, Any, SpecTemplate], None] | None = None
        self._owned_len = OWNED_ROW_LEN if version >= 3 else ROW_LEN  # a version 2 row never has owners

    def _template(self, ref: Any, n: int) -> SpecTemplate:
        t = self.templates.get(ref) if type(ref) is int else None
        if t is None:
            raise UserError(f"{self.where}item {n}: pod refers to {TEMPLATE_REF} {ref!r}, which is not defined before it")
        return t

    def _labelset(self, ref: Any, n: int) -> LabelSet:
        ls = self.labelsets.get(ref)
        if ls is None:
            raise UserError(f"{self.where}item {n}: pod row refers to {LABELSET_KIND} {ref!r}, which is not defined before it")
        return ls

    def _owners(self, row: list, n: int) -> list | None:
        """A row's owner references: read once per row (a list seen first gets the next id)."""
        if len(row) == ROW_LEN:
            return None
        ref = row[ROW_LEN]
        if type(ref) is int:
            if 0 <= ref < len(self.owners):
                return self.owners[ref]
            raise UserError(f"{self.where}item {n}: pod row refers to owners {ref!r}, which are not given before it")
        if type(ref) is not list or not ref:
            raise UserError(f"{self.where}item {n}: a pod row's owners must be a non-empty list or the id of one before it")
        self.owners.append(ref)
        return ref

    def model(self, obj: Any, n: int) -> Any:
        if type(obj) is list and (len(obj) == ROW_LEN or len(obj) == self._owned_len):  # once per pod: lookups inline
            ref, labels = obj[0], obj[4]
            t = self.templates.get(ref) if type(ref) is int else None
            if t is None:
                t = self._template(ref, n)  # raises
            if type(labels) is int:
                labels = self._labelset(labels, n)
            owners = None
            if len(obj) != ROW_LEN:
                owners = obj[ROW_LEN]
                owners = self.owners[owners] if type(owners) is int and 0 <= owners < len(self.owners) else self._owners(obj, n)
            pod = self.pod_from_row(obj, t, labels)  # type: ignore[misc]
            if pod is not None:
                if self.on_row is not None:
                    self.on_row(pod, owners, t)
                return pod
            # a value of an odd kind: the expanded item, for the general path to judge (owners read once)
            return expand(obj, templated(t, obj[6]), labels.labels if type(labels) is LabelSet else labels, owners)
        return self.item(obj, n)

    def _expand_row(self, row: list, n: int) -> dict:
        spec = templated(self._template(row[0], n), row[6])
        labels = row[4]
        if type(labels) is int:
            labels = self._labelset(labels, n).labels
        return expand(row, spec, labels, self._owners(row, n))

    def item(self, obj: Any, n: int) -> Any:
        if type(obj) is not dict:
            if type(obj) is list and (len(obj) == ROW_LEN or len(obj) == self._owned_len):
                return self._expand_row(obj, n)
            if type(obj) is list:
                want = f"{ROW_LEN} or {OWNED_ROW_LEN}" if self._owned_len != ROW_LEN else f"{ROW_LEN}"
                raise UserError(f"{self.where}item {n}: a pod row has {want} fields, this one {len(obj)}")
            return obj
        kind = obj.get("kind")
        if kind == "Pod":
            ref = obj.pop(TEMPLATE_REF, None)
            if ref is None:
                return obj  # written inline (its spec was not a map)
            t = self._template(ref, n)
            own = obj.get("spec")
            if not own:
                spec = templated(t, None)
            elif type(own) is dict and len(own) == 1 and type(own.get("nodeName")) is str:
                spec = templated(t, own["nodeName"])
            elif type(own) is dict:
                spec = dict(t.spec)  # fields beyond nodeName: an ordinary spec, converted as such
                spec.update(own)
            else:
                raise UserError(f"{self.where}item {n}: pod spec must be a map, got {type(own).__name__}")
            obj["spec"] = spec
            return obj
        if kind == LABELSET_KIND and obj.get("apiVersion") == API_VERSION:
            lid, labels = obj.get("id"), obj.get("labels")
            if type(lid) is not int or type(labels) is not dict or lid in self.labelsets:
                raise UserError(f"{self.where}item {n}: {LABELSET_KIND} needs a new integer 'id' and a 'labels' map")
            self.labelsets[lid] = LabelSet(labels)
            return None
        if kind == TEMPLATE_KIND and obj.get("apiVersion") == API_VERSION:
            tid, spec = obj.get("id"), obj.get("spec")
            if type(tid) is not int or type(spec) is not dict:
                raise UserError(f"{self.where}item {n}: {TEMPLATE_KIND} needs an integer 'id' and a 'spec' map")
            if tid in self.templates:
                raise UserError(f"{self.where}item {n}: {TEMPLATE_KIND} id {tid} is defined twice")
            self.templates[tid] = SpecTemplate(spec)
            return None
        return obj

    def items(self, items: Iterable[Any]) -> Iterator[Any]:
        for n, obj in enumerate(items):
            out = self.item(obj, n)
            if out is not None:
                yield out

    def models(self, items: Iterable[Any]) -> Iterator[Any]:
        for n, obj in enumerate(items):
            out = self.model(obj, n)
            if out is not None:
                yield out


def check_version(where: str, version: int) -> None:
    if version > NEWEST_READABLE:
        raise UserError(
            f"{where}snapshot formatVersion {version} is newer than this kubectl-wap reads "
            f"(1-{NEWEST_READABLE}): upgrade kubectl-wap"
        )
