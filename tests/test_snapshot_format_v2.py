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

from kubectl_wap.errors import UserError
from kubectl_wap.model import Pod, new_pod
from kubectl_wap.snapshot.convert import build_snapshot, pod_from
from kubectl_wap.snapshot.files import DEMO_PATH, load_items, load_snapshot, stream_snapshot
from kubectl_wap.snapshot.save import write_snapshot
from kubectl_wap.snapshot.spectemplates import TemplatedSpec
from kubectl_wap.snapshot.strip import strip_object

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
        assert '"formatVersion":2' in f.readline()
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
    assert v2.header.format_version == 2 and v1.header.format_version == 1
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
    path.write_text(path.read_text().replace('"formatVersion":2', '"formatVersion":3', 1))
    with pytest.raises(UserError, match="formatVersion 3 is newer than this kubectl-wap reads"):
        load_snapshot(path)
    doc = json.loads(path.read_text())
    pretty = tmp_path / "future-pretty.json"
    pretty.write_text(json.dumps(doc, indent=1))  # not streamable: the whole-document reader
    with pytest.raises(UserError, match="formatVersion 3"):
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
