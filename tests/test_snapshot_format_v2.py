"""Snapshot formatVersion 2 (pod specs in PodSpecTemplate items): the same cluster loads to the
same model from kubectl's List and from our snapshot; v1 files still load; a damaged v2 file is
one clear error; the loader's fast paths give the objects the general paths give."""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_wap.errors import UserError
from kubectl_wap.model import Pod, new_pod
from kubectl_wap.snapshot.decode.convert import build_snapshot, pod_from
from kubectl_wap.snapshot.io.files import DEMO_PATH, load_items, load_snapshot, stream_snapshot
from kubectl_wap.snapshot.io.save import write_snapshot
from kubectl_wap.snapshot.decode.spectemplates import TemplatedSpec
from kubectl_wap.snapshot.share.strip import strip_object

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import generate  # noqa: E402

HEADER = {"formatVersion": 1, "capturedAt": "2026-11-30T00:00:00Z", "server": {"url": "x", "version": "v1.37.1"}}


def _model(snap):  # everything the analysis reads
    return (snap.nodes, snap.pods, snap.pod_groups, snap.composite_pod_groups, snap.priority_classes, snap.pdbs,
            snap.namespaces, snap.admission_errors)


def test_generated_cluster_same_model_from_list_and_snapshot(tmp_path: Path) -> None:
    meta = generate.generate("T", str(tmp_path), seed=7, nodes=20, pods=600, gangs=(8, 16))
    with gzip.open(meta["snapshot_path"], "rt") as f:
        assert '"formatVersion":3' in f.readline()
    from_list, from_snap = load_snapshot(meta["list_path"]), load_snapshot(meta["snapshot_path"])
    assert len(from_snap.pods) == meta["counts"]["pods"] > 500
    assert _model(from_snap) == _model(from_list)
    # field by field too (dataclass equality would hide nothing, but a failure here names the field)
    for a, b in zip(from_list.pods, from_snap.pods):
        assert dataclasses.astuple(a) == dataclasses.astuple(b), a.key
    templates = sum(1 for line in gzip.open(meta["snapshot_path"]) if b'"kind":"PodSpecTemplate"' in line)
    assert 0 < templates < len(from_snap.pods) // 3  # replicas share templates


def test_v1_file_still_loads(tmp_path: Path) -> None:
    # The bundled demo is formatVersion 1 (every pod carries its whole spec).
    doc = json.loads(DEMO_PATH.read_text())
    assert doc["header"]["formatVersion"] == 1
    v1 = load_snapshot(DEMO_PATH)
    path = tmp_path / "v2.json.gz"
    write_snapshot(str(path), doc["header"], doc["items"])
    v2 = load_snapshot(path)
    assert v2.header.format_version == 3 and v1.header.format_version == 1
    assert _model(v2) == _model(v1)
    assert any(type(o.get("spec")) is TemplatedSpec for o in stream_snapshot(path)[1])  # the fast path ran


@pytest.mark.parametrize("name", ["s.json", "s.json.gz"])
def test_v2_items_come_back_exactly(tmp_path: Path, name: str) -> None:
    items = json.loads(DEMO_PATH.read_text())["items"]
    weird = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "odd", "namespace": "x"}, "spec": "junk",
             "specTemplate": 99}
    items = items + [weird]
    path = tmp_path / name
    write_snapshot(str(path), HEADER, copy.deepcopy(items))
    expected = items[:-1] + [{k: v for k, v in weird.items() if k != "specTemplate"}]  # the key is reserved
    assert list(stream_snapshot(path)[1]) == expected
    assert load_items(path)[1] == expected  # the whole-document reader decodes the same way


def _v2_lines(tmp_path: Path, items: list[dict]) -> list[str]:
    path = tmp_path / "a.json"
    write_snapshot(str(path), HEADER, items)
    return path.read_text().splitlines()


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a", "uid": "u"},
       "spec": {"nodeName": "n1", "priority": 5, "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
       "status": {"phase": "Running"}}


def test_pod_before_its_template_is_one_clear_error(tmp_path: Path) -> None:
    lines = _v2_lines(tmp_path, [POD])
    head, template, pod = lines[0].split(',"items":[')[0], lines[0].split(',"items":[')[1], lines[1]
    bad = tmp_path / "bad.json"
    bad.write_text(head + ',"items":[' + pod[: -len("]}")] + ",\n" + template.rstrip(",") + "]}\n")
    with pytest.raises(UserError, match="specTemplate 0, which is not defined before it"):
        load_snapshot(bad)
    with pytest.raises(UserError, match="specTemplate 0, which is not defined before it"):
        load_items(bad)


def test_newer_format_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.json"
    write_snapshot(str(path), HEADER, [POD])
    path.write_text(path.read_text().replace('"formatVersion":3', '"formatVersion":4', 1))
    with pytest.raises(UserError, match="formatVersion 4 is newer than this kubectl-wap reads"):
        load_snapshot(path)
    doc = json.loads(path.read_text())
    pretty = tmp_path / "future-pretty.json"
    pretty.write_text(json.dumps(doc, indent=1))  # not streamable: the whole-document reader
    with pytest.raises(UserError, match="formatVersion 4"):
        load_snapshot(pretty)


def test_edited_templated_spec_is_converted_from_its_contents(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    write_snapshot(str(path), HEADER, [POD, dict(POD, metadata={"name": "q", "namespace": "a", "uid": "v"})])
    a, b = list(stream_snapshot(path)[1])
    assert pod_from(a).priority == 5
    b["spec"]["priority"] = 7  # e.g. a what-if edit of the raw item: the template cache no longer applies
    assert b["spec"].template is None and pod_from(b).priority == 7
    assert pod_from(a).priority == 5


def test_new_pod_equals_the_dataclass_constructor() -> None:
    p = pod_from(copy.deepcopy(POD))
    values = [getattr(p, f.name) for f in dataclasses.fields(Pod)]
    q = Pod(*values)
    assert new_pod(*values) == q and type(new_pod(*values)) is Pod
    with pytest.raises(dataclasses.FrozenInstanceError):
        new_pod(*values).name = "x"  # still frozen
    with pytest.raises(TypeError):
        new_pod(*values[:-1])
    from kubectl_wap.model import new_pod_from_runs

    runs = new_pod_from_runs(*values[:5], tuple(values[5:17]), *values[17:23], tuple(values[23:28]), values[28])
    assert runs == q and dataclasses.astuple(runs) == dataclasses.astuple(q)
    with pytest.raises(ValueError):
        new_pod_from_runs(*values[:5], tuple(values[5:16]), *values[17:23], tuple(values[23:28]), values[28])


def test_fast_and_general_pod_paths_agree() -> None:
    # The inline shape checks in pod_from against the general helpers: odd but valid inputs.
    variants = [
        {"metadata": {"name": "p", "namespace": "a"}},  # no uid -> ns/name
        {"metadata": {"name": "p"}},  # no namespace -> default
        {"metadata": {"name": "p", "namespace": "a", "uid": 5, "labels": {"k": 1, "j": True}}},
        {"metadata": {"name": "p", "namespace": "a", "uid": "u", "deletionTimestamp": "2026-01-01T00:00:00+00:00"},
         "status": {"phase": None, "nominatedNodeName": "n2",
                    "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]}},
        {"metadata": {"name": "p", "namespace": "a", "uid": "u", "creationTimestamp": "2026-01-01T00:00:00Z"},
         "status": "junk", "spec": {"nodeName": 7}},
    ]
    for v in variants:
        obj = {"kind": "Pod", **v}
        p = pod_from(copy.deepcopy(obj))
        md = obj["metadata"]
        assert p.namespace == (md.get("namespace") or "default") and p.name == "p"
        assert p.uid == (str(md["uid"]) if "uid" in md else f"{p.namespace}/p")
    p = pod_from({"kind": "Pod", "metadata": {"name": "p", "namespace": "a", "uid": 5, "labels": {"k": 1, "j": True}}})
    assert p.labels == {"k": "1", "j": "True"}
    q = pod_from({"kind": "Pod", "metadata": {"name": "p", "namespace": "a", "labels": {"k": 1.0, "j": 1}}})
    assert q.labels == {"k": "1.0", "j": "1"}  # equal-as-tuple junk values do not share a cache entry
    d = pod_from({"kind": "Pod", **variants[3]})
    assert d.deletion_timestamp == 1767225600.0 and d.disruption_target and d.nominated_node_name == "n2"
    assert d.phase == "Pending" and d.terminating_by_preemption
    e = pod_from({"kind": "Pod", **variants[4]})
    assert e.creation_timestamp == 1767225600.0 and e.node_name == "7" and e.phase == "Pending"


def test_strip_then_write_then_load_equals_loading_the_full_objects(tmp_path: Path) -> None:
    # The fields strip now drops (limits, ports without hostPort, conditions other than
    # DisruptionTarget, resourceVersion, ownerReferences) change nothing in the model.
    g = generate.Gen(20, 300, seed=3, gangs=(8,))
    full = list(g.items())
    path = tmp_path / "s.json.gz"
    write_snapshot(str(path), HEADER, (strip_object(o) for o in full))
    assert _model(load_snapshot(path)) == _model(build_snapshot(copy.deepcopy(full)))


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_plain_pods_are_rows_and_others_objects(tmp_path: Path) -> None:
    plain = {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "p", "namespace": "a", "uid": "u", "labels": {"app": "x"}, "creationTimestamp": "2026-01-01T00:00:00Z"},
             "spec": {"nodeName": "n1", "priority": 5}, "status": {"phase": "Running", "startTime": "2026-01-01T00:00:01Z"}}
    pending = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q", "namespace": "a", "uid": "v"}, "spec": {"priority": 5}}
    others = [
        dict(plain, status={"phase": "Running", "nominatedNodeName": "n2"}),  # a field rows do not carry
        dict(plain, metadata=dict(plain["metadata"], labels=None)),  # explicit null: must come back as null
        dict(plain, metadata=dict(plain["metadata"], labels={"k": 1})),  # non-string label value
        dict(plain, status={}),  # empty status: must come back as {}
        dict(plain, spec={"nodeName": None, "priority": 5}),
        dict(plain, apiVersion="v2"),
        dict(plain, extra=1),
    ]
    items = [plain, pending, *others]
    for i, o in enumerate(items):
        o["metadata"] = dict(o["metadata"], name=f"p{i}")
        if i > 1:
            o["metadata"]["uid"] = f"u{i}"  # pods sharing a UID are an error (issue 19)
    path = tmp_path / "s.json"
    write_snapshot(str(path), HEADER, copy.deepcopy(items))
    body = _lines(path)[1:]  # line 0: header + template
    rows = [line for line in body if line.startswith("[")]
    assert len(rows) == 2 and rows[0] == '[0,"a","p0","u",{"app":"x"},1767225600,"n1","Running",1767225601],'
    assert rows[1] == '[0,"a","p1","v",null,null,null,null,null],'
    assert list(stream_snapshot(path)[1]) == items
    assert load_items(path)[1] == items
    # the models path (rows straight to Pods) and the raw path give the same snapshot
    fast = load_snapshot(path)
    slow = build_snapshot(list(stream_snapshot(path)[1]))
    assert _model(fast) == _model(slow) and len(fast.pods) == len(items)


def test_pod_from_row_equals_pod_from_on_generated_cluster(tmp_path: Path) -> None:
    from kubectl_wap.snapshot.decode.convert import pod_from_row
    from kubectl_wap.snapshot.decode.spectemplates import Decoder

    meta = generate.generate("T", str(tmp_path), seed=11, nodes=20, pods=600, gangs=(8,))
    doc = json.loads(gzip.decompress(Path(meta["snapshot_path"]).read_bytes()))
    raw, fast = Decoder("x: "), Decoder("x: ", pod_from_row)
    n_rows = 0
    for n, obj in enumerate(doc["items"]):
        expanded = raw.item(copy.deepcopy(obj), n)
        model = fast.model(copy.deepcopy(obj), n)
        if isinstance(obj, list):
            n_rows += 1
            assert isinstance(model, Pod) and model == pod_from(expanded)
    assert n_rows > 500


@pytest.mark.parametrize("row, match", [
    ('[0,"a",5,"u",null,null,null,null,null]', "without metadata.name"),  # hand-edited junk: the general path decides
    ('[0,"a","p","u",{"k":[1]},null,null,null,null]', None),
    ('[0,"a","p","u",null,"yesterday",7,null,null]', None),
    ('[9,"a","p","u",null,null,null,null,null]', "specTemplate 9, which is not defined before it"),
    ('[0,"a","p"]', "a pod row has 9 or 10 fields, this one 3"),
])
def test_odd_rows(tmp_path: Path, row: str, match: str | None) -> None:
    path = tmp_path / "s.json"
    write_snapshot(str(path), HEADER, [POD])
    head, _ = path.read_text().split("\n", 1)
    path.write_text(head + "\n" + row + "]}\n")
    if match:
        with pytest.raises(UserError, match=match):
            load_snapshot(path)
        return
    fast = load_snapshot(path)
    slow = build_snapshot(list(stream_snapshot(path)[1]))
    assert _model(fast) == _model(slow)
    assert fast.pods[-1].name == "p"


def test_whatif_with_hypothetical_work_reads_raw_items(tmp_path: Path) -> None:
    # keep (hypothetical replacement) filters raw items; without it rows go straight to Pods.
    from kubectl_wap.snapshot.source import build, raw_source

    meta = generate.generate("T", str(tmp_path), seed=7, nodes=20, pods=600, gangs=(8, 16))
    plain = build(*raw_source(meta["snapshot_path"], False, None, None))
    kept = build(*raw_source(meta["snapshot_path"], False, None, None), keep=lambda o: True)
    dropped = build(*raw_source(meta["snapshot_path"], False, None, None),
                    keep=lambda o: not (isinstance(o, dict) and o.get("kind") == "Pod" and not o["spec"].get("nodeName")))
    assert _model(plain) == _model(kept)
    assert len(dropped.pods) == sum(1 for p in plain.pods if p.node_name) < len(plain.pods)


def test_repeated_label_sets_and_odd_timestamps(tmp_path: Path) -> None:
    def pod(i: int, labels: dict, created: str) -> dict:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "a", "uid": f"u{i}", "labels": labels, "creationTimestamp": created},
                "spec": {"nodeName": "n1", "priority": 5}, "status": {"phase": "Running"}}
    items = [pod(0, {"app": "x"}, "2026-01-01T00:00:00Z"), pod(1, {"app": "x"}, "2026-01-01T00:00:00.5Z"),
             pod(2, {"app": "x"}, "2026-01-01T00:00:00+00:00"), pod(3, {"app": "y"}, "1969-12-31T23:59:59Z"),
             pod(4, {"app": "x"}, "garbage-garbage-garbZ")]
    path = tmp_path / "s.json"
    write_snapshot(str(path), HEADER, copy.deepcopy(items))
    lines = _lines(path)
    assert sum('"kind":"LabelSet"' in line for line in lines) == 1  # defined when {"app":"x"} repeats
    rows = [line for line in lines if line.startswith("[")]
    assert rows[0].startswith('[0,"a","p0","u0",{"app":"x"},1767225600,')  # first sight: inline
    assert rows[1].startswith('[0,"a","p1","u1",0,"2026-01-01T00:00:00.5Z",')  # then by id; not whole seconds: a string
    assert rows[2].startswith('[0,"a","p2","u2",0,"2026-01-01T00:00:00+00:00",')  # another spelling: a string
    assert rows[3].startswith('[0,"a","p3","u3",{"app":"y"},-1,')
    assert list(stream_snapshot(path)[1]) == items and load_items(path)[1] == items
    fast, slow = load_snapshot(path), build_snapshot(copy.deepcopy(items))
    assert _model(fast) == _model(slow)
    assert [p.creation_timestamp for p in fast.pods] == [1767225600.0, 1767225600.5, 1767225600.0, -1.0, None]
    assert fast.pods[0].labels is fast.pods[1].labels  # one converted dict per label set


def test_redacted_snapshot_written_as_v2_loads_to_the_redacted_model(tmp_path: Path) -> None:
    # `kubectl wap snapshot --redact` redacts the stripped items, then write_snapshot encodes them.
    from kubectl_wap.snapshot.share.redact import redact_items

    doc = json.loads(DEMO_PATH.read_text())
    red = redact_items(doc["items"], b"k" * 32)
    path = tmp_path / "r.json.gz"
    write_snapshot(str(path), dict(doc["header"], redacted=True), red)
    lines = gzip.open(path).read().decode().splitlines()
    assert sum(line.startswith("[") for line in lines) > 100  # the pods became rows
    assert _model(load_snapshot(path)) == _model(build_snapshot(copy.deepcopy(red)))
    assert load_items(path)[1] == red


# ---- dump_compact: orjson where it writes what json.dumps writes, json.dumps otherwise ----------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_json_values)
def test_dump_compact_is_json_dumps_text(v):
    # Without floats the text is exactly json.dumps's (compact, non-ASCII kept): bigints, nulls
    # and control characters included.
    from kubectl_wap.snapshot.decode.spectemplates import dump_compact

    assert dump_compact(v) == json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def test_dump_compact_keeps_what_orjson_would_change():
    from kubectl_wap.snapshot.decode.spectemplates import dump_compact

    assert dump_compact({"a": float("nan")}) == '{"a":NaN}'  # orjson would write null
    assert dump_compact({1: "x"}) == '{"1":"x"}'  # orjson refuses non-string keys
    assert json.loads(dump_compact({"f": 0.1, "g": 1e16})) == {"f": 0.1, "g": 1e16}


from kubectl_wap.snapshot.decode.podrows import _time, format_time  # noqa: E402


def _round_trip(s):
    """podrows._time's definition: POSIX seconds when format_time gives `s` back exactly."""
    from datetime import datetime

    if type(s) is not str or len(s) != 20 or s[19] != "Z":
        return s
    try:
        t = int(datetime.fromisoformat(s).timestamp())
        return t if format_time(t) == s else s
    except (ValueError, OverflowError, OSError):
        return s


@settings(max_examples=3000, deadline=None)
@given(st.one_of(
    st.integers(-62135596800, 253402300799).map(format_time),
    st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\Z"),
    st.text(alphabet="0123456789-T:Z +.\u0663", min_size=20, max_size=20),
    st.sampled_from(["2026-02-29T00:00:00Z", "2024-02-29T00:00:00Z", "2026-01-01T00:00:60Z", "0999-01-01T00:00:00Z",
                      "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01 00:00:00Z", "+026-01-01T00:00:00Z", "\u0663026-01-01T00:00:00Z"]),
))
def test_row_timestamps_are_exactly_the_round_trip(s):
    assert _time(s) == _round_trip(s)
