"""One decoder for JSON input, built on msgspec (issue 18): Lists in any layout, live API pages.

msgspec decodes JSON straight into typed Structs that hold only the declared fields and skips the
rest in C without building it. A full API Pod is ~5.4 KB (managedFields, env, probes, status
conditions of every kind); what the scheduler reads and a snapshot keeps is a tenth of that.

The interface (the one place it is written down)
------------------------------------------------
* ``decode_list(raw)`` -> ``(list kind, items)`` or None: a ``kubectl get -o json`` List (or a
  typed ``PodList`` & co.) in any layout: 4-space, 2-space, one item per line, one line. None means
  "not a List, or not JSON msgspec reads": the caller reads the document as before.
* ``decode_page(raw, kind)`` -> the decoded page (``.kind``, ``.metadata``, ``.items``) or None:
  one page of a live LIST, every item of one kind.
* Every item comes out as a **plain dict** (dict-in is the conversion interface: convert.py,
  strip.py, redaction and the snapshot writer read these dicts exactly as they read a full object).
  A typed kind's dict holds the fields of its Struct below that the input had (absent and null
  fields are left out: every reader treats them alike); a kind not typed here is decoded whole,
  every field, so another reader (Events, PVCs, and whatever kind a later change adds) gets it as
  it was written. Untyped stanzas inside typed kinds (`Any` below: affinity, tolerations, volumes,
  resourceClaims, PodGroup and PDB specs) are decoded whole too.
* An item that does not fit its Struct (a list where a map belongs, a number for a container,
  ...) is decoded whole and handed on like an untyped kind: convert.py then reports it with its
  one-line message naming the object and field, or reads it as it always did (convert treats many
  mistyped fields as unset). So the fast path never changes what an input means; msgspec's own
  validation messages never reach the user.

To read another field: add it to the Struct (a pod spec field: to ``POD_SPEC_FIELDS``; it is
decoded whole, as ``Any``). To read another kind: nothing (it is passed through whole); to make it
cheap, add a Struct and list it in ``_TYPED``.

YAML is not decoded here: PyYAML's C loader builds every field (see files.py, issue 18 numbers in
benchmarks/README.md).
"""

from __future__ import annotations

import json
from typing import Any, Iterator, Union

import msgspec
import msgspec.structs

from .fields import ObjectError
from .spectemplates import SpecTemplate, templated

_Opt = dict(omit_defaults=True)  # to_builtins leaves out absent (and null) fields


class _OwnerRef(msgspec.Struct, **_Opt):
    # what strip.controller_ref keeps (uid, apiVersion and blockOwnerDeletion are skipped)
    kind: Any = None
    name: Any = None
    controller: Any = None


class _Meta(msgspec.Struct, **_Opt):
    # strip._META_KEYS (annotations and managedFields are skipped), plus ownerReferences: the cycle
    # simulator brings a controller's victims back (snapshot/decode/owners.py); strip.py keeps a pod's
    # controller's kind and name.
    name: Any = None
    namespace: Any = None
    uid: Any = None
    labels: Any = None
    creationTimestamp: Any = None
    deletionTimestamp: Any = None
    ownerReferences: Union[list[_OwnerRef], None] = None


class _Resources(msgspec.Struct, **_Opt):
    requests: Any = None
    limits: Any = None  # only to default missing requests from (snapshot/decode/defaulting.py)
    claims: Any = None


class _Container(msgspec.Struct, **_Opt):
    # strip._CONTAINER_KEYS: env, command, probes, mounts, securityContext are skipped
    name: Any = None
    image: Any = None
    resources: _Resources | None = None
    ports: Any = None
    restartPolicy: Any = None


# Pod spec fields decoded whole (`Any`): strip._POD_SPEC_KEYS plus volumes and resourceClaims
# (read by the volume and DRA checks). Add a name here to read another spec field.
POD_SPEC_FIELDS: tuple[str, ...] = (
    "overhead", "resources", "nodeName", "nodeSelector", "affinity", "tolerations", "topologySpreadConstraints",
    "priority", "priorityClassName", "preemptionPolicy", "schedulerName", "schedulingGroup", "schedulingGates",
    "hostNetwork", "volumes", "resourceClaims",
    # read by the cycle simulator (snapshot/decode/owners.py: how long a victim stays terminating)
    "terminationGracePeriodSeconds",
)
_PodSpec = msgspec.defstruct(
    "_PodSpec",
    [("containers", Union[list[_Container], None], None), ("initContainers", Union[list[_Container], None], None)]
    + [(f, Any, None) for f in POD_SPEC_FIELDS],
    **_Opt,
)


class _Condition(msgspec.Struct, **_Opt):
    type: Any = None
    status: Any = None
    reason: Any = None
    lastTransitionTime: Any = None
    message: Any = None


class _ContainerStatus(msgspec.Struct, **_Opt):
    # in-place resize: state, lastState, image ids are skipped
    name: Any = None
    allocatedResources: Any = None
    resources: Any = None


class _PodStatus(msgspec.Struct, **_Opt):
    phase: Any = None
    startTime: Any = None
    nominatedNodeName: Any = None
    conditions: Union[list[_Condition], None] = None
    containerStatuses: Union[list[_ContainerStatus], None] = None
    initContainerStatuses: Union[list[_ContainerStatus], None] = None
    resourceClaimStatuses: Any = None  # DRA: the ResourceClaim generated for each template claim


class _Pod(msgspec.Struct, tag="Pod", tag_field="kind", **_Opt):
    apiVersion: Any = None
    metadata: _Meta | None = None
    spec: _PodSpec | None = None  # type: ignore[valid-type]
    status: _PodStatus | None = None


class _NodeSpec(msgspec.Struct, **_Opt):
    taints: Any = None
    unschedulable: Any = None


class _NodeInfo(msgspec.Struct, **_Opt):
    kubeletVersion: Any = None


class _NodeStatus(msgspec.Struct, **_Opt):
    # conditions, addresses, daemonEndpoints and most of nodeInfo are skipped
    allocatable: Any = None
    capacity: Any = None
    images: Any = None
    nodeInfo: _NodeInfo | None = None


class _Node(msgspec.Struct, tag="Node", tag_field="kind", **_Opt):
    apiVersion: Any = None
    metadata: _Meta | None = None
    spec: _NodeSpec | None = None
    status: _NodeStatus | None = None


class _NamespaceStatus(msgspec.Struct, **_Opt):
    phase: Any = None


class _Namespace(msgspec.Struct, tag="Namespace", tag_field="kind", **_Opt):
    apiVersion: Any = None
    metadata: _Meta | None = None
    status: _NamespaceStatus | None = None


class _PriorityClass(msgspec.Struct, tag="PriorityClass", tag_field="kind", **_Opt):
    apiVersion: Any = None
    metadata: _Meta | None = None
    value: Any = None
    globalDefault: Any = None
    preemptionPolicy: Any = None


# PodGroups, CompositePodGroups and PDBs are few and small: spec and status whole (strip.py
# projects them onto allowlist.py's schema), metadata lean.
class _PodGroup(msgspec.Struct, tag="PodGroup", tag_field="kind", **_Opt):
    apiVersion: Any = None
    metadata: _Meta | None = None
    spec: Any = None
    status: Any = None


class _CompositePodGroup(msgspec.Struct, tag="CompositePodGroup", tag_field="kind", **_Opt):
    apiVersion: Any = None
    metadata: _Meta | None = None
    spec: Any = None
    status: Any = None


class _PDB(msgspec.Struct, tag="PodDisruptionBudget", tag_field="kind", **_Opt):
    apiVersion: Any = None
    metadata: _Meta | None = None
    spec: Any = None
    status: Any = None


_TYPED: tuple[type, ...] = (_Pod, _Node, _Namespace, _PriorityClass, _PodGroup, _CompositePodGroup, _PDB)
TYPED_KINDS = frozenset(t.__struct_config__.tag for t in _TYPED)  # type: ignore[attr-defined]
_ANY_KIND = msgspec.json.Decoder(Union[_TYPED])  # type: ignore[arg-type]
_ONE_KIND = {t.__struct_config__.tag: msgspec.json.Decoder(t) for t in _TYPED}  # type: ignore[attr-defined]
_WHOLE = msgspec.json.Decoder()
_to_builtins = msgspec.to_builtins
_Error = (msgspec.ValidationError, msgspec.DecodeError)


class _Doc(msgspec.Struct):
    """A List document: its items as byte spans, each decoded when it is read."""

    kind: Any = None
    items: Union[list[msgspec.Raw], None] = None


_DOC = msgspec.json.Decoder(_Doc)


def _whole(raw: Any) -> Any:
    """An item decoded whole, exactly as the whole-document reader would: msgspec refuses what
    Python's json reads (NaN, 1e999 as inf), so those go to json. The document parsed already, so
    the item is valid JSON."""
    try:
        return _WHOLE.decode(raw)
    except _Error:
        pass
    try:
        return json.loads(bytes(raw))
    except UnicodeDecodeError as e:  # one invalid byte in a List (issue 31 item 5)
        raise ObjectError(f"not UTF-8 text (byte 0x{bytes(raw)[e.start]:02x} at offset {e.start} of the item)") from None
    except ValueError as e:  # a 5,000-digit number: beyond Python's int-from-text limit
        raise ObjectError(f"holds a value we cannot read: {str(e).split(';')[0]}") from None


_encode = msgspec.json.encode


class _Templates:
    """Replicas carry the same spec apart from nodeName: each distinct spec becomes one shared
    SpecTemplate (the formatVersion 2 mechanism, spectemplates.py), so convert.py computes the
    spec-derived fields once per distinct spec instead of once per pod. The key is the spec's own
    JSON without nodeName, encoded by msgspec from the Struct (a few microseconds)."""

    def __init__(self) -> None:
        self._by_key: dict[bytes, SpecTemplate] = {}

    def pod(self, p: Any) -> dict:
        spec = p.spec
        out = _to_builtins(msgspec.structs.replace(p, spec=None))
        if spec is None:
            return out
        out["spec"] = templated(self.template(spec), spec.nodeName)
        return out

    def template(self, spec: Any) -> SpecTemplate:
        """The shared template of a pod spec Struct: the spec without nodeName."""
        key = spec_key(spec)
        t = self._by_key.get(key)
        if t is None:
            if len(self._by_key) > 100_000:
                self._by_key.clear()
            t = self._by_key[key] = spec_template(spec)
        return t


def spec_key(spec: Any) -> bytes:
    """What a pod spec Struct is shared by: its JSON without nodeName (the Struct is given back as
    it came)."""
    node = spec.nodeName
    if node is None:
        return _encode(spec)
    spec.nodeName = None
    try:
        return _encode(spec)
    finally:
        spec.nodeName = node


def spec_template(spec: Any) -> SpecTemplate:
    """A new template of a pod spec Struct: its fields as dicts, without nodeName."""
    out = _to_builtins(typed_spec(spec))
    out.pop("nodeName", None)
    return SpecTemplate(out)


def item_decoder(item_kind: str) -> Any:
    """decode(raw) -> a plain dict for one item: typed when it fits, else whole (see module doc).
    `item_kind` is the kind every item has (a typed list's), or "" for a mixed `List`. A pod's
    spec is a TemplatedSpec (a dict) shared with the pods of the same spec."""
    typed = _ONE_KIND.get(item_kind) if item_kind else _ANY_KIND
    if typed is None:
        return _whole
    dec = typed.decode
    pod = _Templates().pod

    def decode(raw: Any) -> Any:
        try:
            obj = dec(raw)
        except _Error:  # not this shape, or a kind not typed here: the whole object
            return _whole(raw)
        return pod(obj) if type(obj) is _Pod else _to_builtins(obj)

    return decode


def decode_list(raw: bytes | bytearray | memoryview) -> tuple[str, "ListItems"] | None:
    """(the List's kind, its items as plain dicts, decoded one by one as iterated), or None when
    `raw` is not a JSON List msgspec reads (the caller then reads it as before and reports errors).
    The item spans point into `raw`, which stays alive while the iterator does."""
    try:
        doc = _DOC.decode(raw)
    except _Error:
        return None
    kind, spans = doc.kind, doc.items
    if not isinstance(kind, str) or not kind.endswith("List") or spans is None:
        return None
    return kind, ListItems(kind[: -len("List")], spans)


class ListItems:
    """A List's items as plain dicts, decoded one by one as iterated; len() says how many there
    are before any is decoded (a progress report's total, cli/progress.py)."""

    __slots__ = ("item_kind", "spans")

    def __init__(self, item_kind: str, spans: list[Any]) -> None:
        self.item_kind = item_kind
        self.spans = spans

    def __len__(self) -> int:
        return len(self.spans)

    def __iter__(self) -> Iterator[Any]:
        item_kind = self.item_kind
        decode = item_decoder(item_kind)
        for span in self.spans:
            obj = decode(span)
            if item_kind and type(obj) is dict and "kind" not in obj:
                obj["kind"] = item_kind  # typed lists (`PodList`) omit item kinds
            yield obj


def page_decoder(item_kind: str) -> msgspec.json.Decoder:
    """A decoder for one live LIST page whose items are `item_kind` (typed when we type the kind)."""
    typed = next((t for t in _TYPED if t.__struct_config__.tag == item_kind), None)  # type: ignore[attr-defined]
    item_type: Any = typed if typed is not None else Any
    page = msgspec.defstruct(
        f"_{item_kind}Page",
        [("kind", Any, None), ("metadata", Any, None), ("items", Union[list[item_type], None], None)],  # type: ignore[valid-type]
    )
    return msgspec.json.Decoder(page)


_PAGES: dict[str, msgspec.json.Decoder] = {}


class PageTemplates(_Templates):
    """The spec templates of one live LIST (pass the same one for every page of it)."""


def decode_page(raw: bytes, item_kind: str, templates: PageTemplates | None = None) -> tuple[Any, Any, list[Any]] | None:
    """(kind, metadata, items as plain dicts without kind/apiVersion set) of one LIST page, or None
    when it does not fit the typed shape (the caller then parses it whole, as before). With
    `templates`, a pod's spec is a TemplatedSpec shared with the pods of the same spec, as in a
    decoded List: converted to dicts once per distinct spec (to_builtins copies every nested map,
    ~30 us a pod), and stripped and written once per template downstream."""
    found = decode_page_structs(raw, item_kind)
    if found is None:
        return None
    kind, meta, items = found
    return kind, meta, as_dicts(items, item_kind, templates)


class _Head(msgspec.Struct):
    kind: Any = None
    metadata: Any = None
    items: msgspec.Raw = msgspec.Raw()  # skipped (checked as JSON), not built


_HEAD = msgspec.json.Decoder(_Head)


_ITEMS_KEY = b'"items":'


def decode_head(raw: bytes) -> tuple[Any, Any, Any] | None:
    """(kind, metadata, the items as a list, None or an int standing for anything else) of a LIST
    page without building its items, or None when `raw` is not a JSON object msgspec reads: what
    live.py needs to ask for the next page while another thread decodes this one.

    The API server writes kind, apiVersion and metadata before the items (metav1.List's field
    order): then only the text before `"items":` is read. That text closed with `}` reads as an
    object only when the key is the document's own (a string cannot hold a bare `"items":`,
    and a key nested deeper leaves an object open); it must hold the kind and the metadata (a
    second one after the items is caught when the page is decoded: live.py). Anything else is
    scanned whole (~1.4 GB/s: 0.6 s of an L capture's 872 MB, all of it holding the GIL)."""
    at = raw.find(_ITEMS_KEY, 0, 1 << 16)
    if at > 0:
        prefix = raw[:at].rstrip(b" \t\r\n")
        if prefix.endswith(b","):
            try:
                head = _HEAD.decode(prefix[:-1] + b"}")
            except _Error:
                head = None
            if head is not None and head.kind is not None and head.metadata is not None:
                first = raw[at + len(_ITEMS_KEY):at + len(_ITEMS_KEY) + 64].lstrip(b" \t\r\n")[:1]
                items = [] if first == b"[" else None if first == b"n" else 0
                return head.kind, head.metadata, items
    try:
        head = _HEAD.decode(raw)
    except _Error:
        return None
    span = memoryview(head.items)
    first = bytes(span[:1])
    items = [] if first in (b"", b"[") else None if span == b"null" else 0
    return head.kind, head.metadata, items


# A live capture's pods (io/capture.py): the spec's whole-decoded fields kept as their JSON text
# (msgspec.Raw: scanned, not built), so a page costs the Python objects of what a row holds, not
# of every replica's affinity, tolerations and volumes. Absent is Raw() (omitted when encoded).
_RawSpec = msgspec.defstruct(
    "_RawSpec",
    [("containers", Union[list[_Container], None], None), ("initContainers", Union[list[_Container], None], None)]
    + [(f, Any, None) if f == "nodeName" else (f, msgspec.Raw, msgspec.Raw()) for f in POD_SPEC_FIELDS],
    **_Opt,
)
_RAW_FIELDS = tuple(f for f in POD_SPEC_FIELDS if f != "nodeName")


class _RawSpecPod(msgspec.Struct, tag="Pod", tag_field="kind", **_Opt):
    apiVersion: Any = None
    metadata: _Meta | None = None
    spec: _RawSpec | None = None  # type: ignore[valid-type]
    status: _PodStatus | None = None


def typed_spec(spec: Any) -> Any:
    """The _PodSpec a page decoded whole would hold for a _RawSpec (its texts decoded); raises
    msgspec's errors where that decode would have failed (1e999, bytes that are not UTF-8)."""
    if type(spec) is not _RawSpec:
        return spec
    fields = {f: getattr(spec, f) for f in _RAW_FIELDS}
    return _PodSpec(containers=spec.containers, initContainers=spec.initContainers, nodeName=spec.nodeName,
                    **{f: _WHOLE.decode(v) for f, v in fields.items() if len(memoryview(v))})


def typed_pod(p: Any) -> Any:
    """A _RawSpecPod as the _Pod the typed page decode gives (see typed_spec)."""
    if type(p) is not _RawSpecPod:
        return p
    return _Pod(apiVersion=p.apiVersion, metadata=p.metadata, status=p.status,
                spec=typed_spec(p.spec) if p.spec is not None else None)


RAW_SPEC_POD = _RawSpecPod
DECODE_ERRORS = _Error
_RAW_SPEC_PAGE = msgspec.json.Decoder(msgspec.defstruct(
    "_RawSpecPodPage", [("kind", Any, None), ("metadata", Any, None), ("items", Union[list[_RawSpecPod], None], None)]))


def decode_page_structs(raw: bytes, item_kind: str, raw_specs: bool = False) -> tuple[Any, Any, list[Any]] | None:
    """decode_page's first half: the items as decoded, Structs of a typed kind (`as_dicts` makes
    them dicts; io/capture.py writes a pod's row straight from its Struct). `raw_specs`: pods as
    _RawSpecPod (see typed_pod; their spec_key differs from a _Pod's, consistently)."""
    dec = _RAW_SPEC_PAGE if raw_specs and item_kind == "Pod" else _PAGES.get(item_kind)
    if dec is None:
        dec = _PAGES[item_kind] = page_decoder(item_kind)
    try:
        page = dec.decode(raw)
    except _Error:
        return None
    return page.kind, page.metadata, page.items if page.items is not None else []


def as_dicts(items: list[Any], item_kind: str, templates: PageTemplates | None = None) -> list[Any]:
    """decode_page's second half: the decoded items as plain dicts (see decode_page)."""
    if templates is not None and item_kind == "Pod":
        pod = templates.pod
        return [pod(x) for x in items]
    if item_kind in TYPED_KINDS:
        return [_to_builtins(x) for x in items]
    return items
