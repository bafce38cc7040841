"""snapshot/decode/lean.py (issue 18): msgspec decodes Lists and live pages into only the fields we read.

The contract: the fast path never changes what an input means. Every item gives the same model (or
the same one-line error) as the whole-document read, a snapshot written from it keeps the same
fields, and what the decoder does not type (other kinds, untyped pod spec fields) passes through
whole for other readers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_wap.errors import UserError
from kubectl_wap.snapshot.io import files
from kubectl_wap.snapshot.decode import lean
from kubectl_wap.snapshot.io.files import load_items, load_snapshot
from kubectl_wap.snapshot.source import DEMO_PATH
from kubectl_wap.snapshot.share.strip import for_sharing, strip_object

ITEMS = json.loads(DEMO_PATH.read_text())["items"]
CORPUS = Path(__file__).resolve().parent / "bad_inputs"


def _pod(**over) -> dict:
    pod = json.loads(json.dumps(next(i for i in ITEMS if i["kind"] == "Pod")))
    for path, v in over.items():
        *head, last = path.split("__")
        d = pod
        for k in head:
            d = d[k]
        d[last] = v
    return pod


def _outcome(path: Path, monkeypatch, with_lean: bool):
    monkeypatch.setattr(files, "_lean", lean if with_lean else None)
    try:
        s = load_snapshot(path)
    except UserError as e:
        return ("error", str(e))
    return ("ok", s.pods, s.nodes, s.pod_groups, s.composite_pod_groups, s.priority_classes, s.pdbs, s.namespaces, s.warnings)


def _same_either_way(tmp_path: Path, monkeypatch, items: list, name: str = "l.json") -> tuple:
    path = tmp_path / name
    path.write_text(json.dumps({"apiVersion": "v1", "items": items, "kind": "List"}, separators=(",", ":")))
    fast, whole = _outcome(path, monkeypatch, True), _outcome(path, monkeypatch, False)
    assert fast == whole
    return fast


MISTYPED = [
    {"metadata": []},  # a list where a map belongs: the whole item goes to convert.py
    {"metadata__labels": ["a"]},
    {"spec": "abc"},
    {"spec__containers": "abc"},
    {"spec__containers": [5]},
    {"spec__containers": [{"resources": {"requests": {"cpu": "abc"}}}]},  # convert's quantity error
    {"spec__containers": [{"resources": {"requests": {"cpu": "-1"}}}]},
    {"spec__containers": [{"resources": []}]},
    {"spec__priority": 1.5},
    {"status": {"conditions": "x"}},
    {"status__startTime": 12},
    {"metadata__name": None},
]


@pytest.mark.parametrize("over", MISTYPED, ids=[next(iter(o)) + "=" + repr(next(iter(o.values())))[:20] for o in MISTYPED])
def test_mistyped_items_read_as_the_whole_document_reader_does(tmp_path: Path, monkeypatch, over: dict) -> None:
    _same_either_way(tmp_path, monkeypatch, [*ITEMS[:30], _pod(**over)])


def test_a_bad_field_is_one_line_naming_the_object_and_field(tmp_path: Path, monkeypatch) -> None:
    out = _same_either_way(tmp_path, monkeypatch, [*ITEMS, _pod(spec__containers=[{"resources": {"requests": {"cpu": "abc"}}}])])
    assert out[0] == "error" and "\n" not in out[1]
    assert "spec.containers[0].resources.requests.cpu" in out[1] and "pod " in out[1]


@pytest.mark.parametrize("case", sorted(p.name for p in CORPUS.iterdir() if p.suffix in (".yaml", ".json")))
def test_bad_input_corpus_as_a_json_list_reads_the_same(tmp_path: Path, monkeypatch, case: str) -> None:
    """Every corpus file the whole reader can read, rewritten as a one-line JSON List: the same model
    or the same error with and without msgspec."""
    monkeypatch.setattr(files, "_lean", None)
    try:
        _, items = load_items(CORPUS / case)
        text = json.dumps(items)
    except (UserError, ValueError, TypeError, RecursionError):
        pytest.skip("not readable as items by the whole reader")
    path = tmp_path / "l.json"
    path.write_text('{"kind":"List","items":' + text + "}")
    assert _outcome(path, monkeypatch, True) == _outcome(path, monkeypatch, False)


def test_numbers_msgspec_refuses_read_as_json_does(tmp_path: Path, monkeypatch) -> None:
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "x"}}
    for value in ("1e999", "NaN", "123456789012345678901234567890"):
        path = tmp_path / "l.json"
        path.write_text('{"kind":"List","items":[' + json.dumps(pc)[:-1] + ',"value":' + value + "}]}")
        fast, whole = _outcome(path, monkeypatch, True), _outcome(path, monkeypatch, False)
        if value[0] == "1" and value != "1e999":
            # orjson reads a 30-digit integer as a float (json, without orjson, as the exact int):
            # the message shows the number as read; both refuse it.
            assert fast[0] == whole[0] == "error" and "out of range" in fast[1] and fast[1].endswith(value)
        else:
            assert fast == whole


UNKNOWN = [
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"}, "provisioner": "x",
     "volumeBindingMode": "WaitForFirstConsumer", "allowedTopologies": [{"matchLabelExpressions": [{"key": "z", "values": ["a"]}]}]},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s", "managedFields": [{}]},
     "spec": {"driver": "gpu.example.com", "devices": [{"name": "d0", "attributes": {"a": {"int": 1}}}]}},
    {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "n"}, "reason": "Preempted", "message": "m"},
]


def test_kinds_not_typed_pass_through_whole() -> None:
    kind, items = lean.decode_list(json.dumps({"kind": "List", "items": UNKNOWN + ITEMS[:3]}).encode())
    got = list(items)
    assert kind == "List" and got[: len(UNKNOWN)] == UNKNOWN


def test_pod_spec_fields_not_typed_pass_through_whole() -> None:
    vols = [{"name": "data", "persistentVolumeClaim": {"claimName": "c", "readOnly": True}}, {"name": "p", "projected": {"sources": []}}]
    claims = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
    pod = _pod(spec__volumes=vols, spec__resourceClaims=claims)
    (got,) = lean.decode_list(json.dumps({"kind": "PodList", "items": [pod]}).encode())[1]
    assert got["spec"]["volumes"] == vols and got["spec"]["resourceClaims"] == claims
    assert "volumes" in lean.POD_SPEC_FIELDS and "resourceClaims" in lean.POD_SPEC_FIELDS


def test_lean_items_keep_what_a_snapshot_keeps_and_drop_the_rest() -> None:
    pod = _pod(metadata__managedFields=[{"manager": "kubectl"}], metadata__annotations={"secret": "x"})
    pod["spec"]["containers"][0]["env"] = [{"name": "TOKEN", "value": "hunter2"}]
    (got,) = lean.decode_list(json.dumps({"kind": "List", "items": [pod]}).encode())[1]
    assert for_sharing(strip_object(got)) == for_sharing(strip_object(pod))
    assert "managedFields" not in got["metadata"] and "env" not in got["spec"]["containers"][0]
    assert "hunter2" not in json.dumps(got)


def test_typed_list_items_get_their_kind_and_other_kinds_are_whole() -> None:
    pod = {k: v for k, v in _pod().items() if k != "kind"}
    secret = {"kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "dg=="}}
    got = list(lean.decode_list(json.dumps({"kind": "PodList", "items": [pod, secret]}).encode())[1])
    assert got[0]["kind"] == "Pod" and got[1] == secret


@pytest.mark.parametrize("text", [b"[1, 2]", b'{"kind": "Pod"}', b'{"kind": "List", "items": {}}', b'{"kind": "Snapshot", "items": []}',
                                  b'{"kind": "List", "items": [', b'{"kind":"List","items":[{"a":NaN}]}'])
def test_not_a_list_msgspec_reads_is_left_to_the_whole_reader(text: bytes) -> None:
    assert lean.decode_list(text) is None


def test_live_page_is_decoded_lean_and_falls_back_whole() -> None:
    pods = [i for i in ITEMS if i["kind"] == "Pod"][:5]
    page = json.dumps({"kind": "PodList", "metadata": {"continue": "t"}, "items": [{k: v for k, v in p.items() if k != "kind"} for p in pods]})
    kind, meta, items = lean.decode_page(page.encode(), "Pod")
    assert kind == "PodList" and meta == {"continue": "t"}
    assert [for_sharing(strip_object(dict(i, kind="Pod"))) for i in items] == [for_sharing(strip_object(p)) for p in pods]
    assert lean.decode_page(b'{"kind":"PodList","items":{"a":1}}', "Pod") is None
    assert lean.decode_page(b'{"kind":"PodList","items":[{"metadata":[]}]}', "Pod") is None
    ev = {"kind": "EventList", "items": [UNKNOWN[2]]}
    assert lean.decode_page(json.dumps(ev).encode(), "Event")[2] == [UNKNOWN[2]]
