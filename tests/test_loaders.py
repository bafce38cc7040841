"""File loaders: multi-document YAML, JSON, Lists, directories, .gz, our snapshot format, the
write_snapshot round trip, and the reference checks (duplicates, dangling references, cycles)."""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
import threading
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from kubectl_wap.errors import UserError
from kubectl_wap.model import Snapshot, SnapshotHeader
from kubectl_wap.snapshot.decode.convert import build_snapshot
from kubectl_wap.snapshot.io.files import load_items, load_snapshot
from kubectl_wap.snapshot.io.save import write_snapshot
from kubectl_wap.snapshot.source import DEMO_PATH

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
NODE2 = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}, "status": {"allocatable": {"cpu": "2"}}}
PG = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "ml"},
      "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "priorityClassName": "high"}}
PC = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "g-0", "namespace": "ml"},
       "spec": {"schedulingGroup": {"podGroupName": "g"}, "priorityClassName": "high",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
RUNNING = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop"},
           "spec": {"nodeName": "n1", "priority": 5, "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]},
           "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}}
ITEMS = [NODE, NODE2, PC, PG, POD, RUNNING]


def summary(snap: Snapshot) -> dict[str, Any]:
    return {
        "nodes": sorted(n.name for n in snap.nodes),
        "pods": sorted(p.key for p in snap.pods),
        "pod_groups": sorted(g.key for g in snap.pod_groups),
        "priority_classes": sorted(p.name for p in snap.priority_classes),
        "priorities": {p.key: p.priority for p in snap.pods},
    }


EXPECTED = {
    "nodes": ["n1", "n2"], "pods": ["ml/g-0", "shop/web"], "pod_groups": ["ml/g"], "priority_classes": ["high"],
    "priorities": {"ml/g-0": 1000, "shop/web": 5},
}


def _w(path: Path, data: bytes | str, gz: bool = False) -> Path:
    raw = data.encode() if isinstance(data, str) else data
    if gz:
        raw = gzip.compress(raw)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return path


def multi_yaml(items: list[dict]) -> str:
    return "---\n# a comment\n" + "\n---\n".join(yaml.safe_dump(i) for i in items) + "\n---\n"


def as_list(items: list[dict]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})


def as_snapshot(items: list[dict]) -> str:
    return json.dumps({"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot", "header": {"formatVersion": 1},
                       "items": items})


FORMATS: dict[str, tuple[str, Callable[[list[dict]], str]]] = {
    "multi-doc-yaml": ("all.yaml", multi_yaml),
    "yml-extension": ("all.yml", multi_yaml),
    "json-array": ("all.json", lambda items: json.dumps(items)),
    "json-list": ("all.json", as_list),
    "yaml-list": ("all.yaml", lambda items: yaml.safe_dump(json.loads(as_list(items)))),
    "snapshot": ("snap.json", as_snapshot),
}


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_formats(tmp_path: Path, fmt: str, gz: bool) -> None:
    name, render = FORMATS[fmt]
    path = _w(tmp_path / (name + (".gz" if gz else "")), render(copy.deepcopy(ITEMS)), gz=gz)
    snap = load_snapshot(path)
    assert summary(snap) == EXPECTED
    assert snap.warnings == []


def test_gzip_detected_by_magic_not_extension(tmp_path: Path) -> None:
    path = _w(tmp_path / "cluster.json", as_list(ITEMS), gz=True)
    assert summary(load_snapshot(path)) == EXPECTED


def test_single_json_object(tmp_path: Path) -> None:
    snap = load_snapshot(_w(tmp_path / "n.json", json.dumps(NODE)))
    assert [n.name for n in snap.nodes] == ["n1"]


def test_utf8_bom_accepted(tmp_path: Path) -> None:
    snap = load_snapshot(_w(tmp_path / "n.yaml", b"\xef\xbb\xbf" + yaml.safe_dump(NODE).encode()))
    assert [n.name for n in snap.nodes] == ["n1"]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_typed_lists_fill_item_kinds(tmp_path: Path, gz: bool) -> None:
    strip = lambda o: {k: v for k, v in o.items() if k not in ("kind", "apiVersion")}  # noqa: E731
    docs = [
        {"apiVersion": "v1", "kind": "PodList", "items": [strip(POD), strip(RUNNING)]},
        {"apiVersion": "v1", "kind": "NodeList", "items": [strip(NODE), strip(NODE2)]},
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroupList", "items": [strip(PG)]},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClassList", "items": [strip(PC)]},
    ]
    path = _w(tmp_path / ("lists.yaml" + (".gz" if gz else "")), "\n---\n".join(yaml.safe_dump(d) for d in docs), gz=gz)
    assert summary(load_snapshot(path)) == EXPECTED


def test_list_item_kind_wins_over_list_kind(tmp_path: Path) -> None:
    doc = {"kind": "List", "items": [NODE, POD]}
    assert len(load_items(_w(tmp_path / "l.json", json.dumps(doc)))[1]) == 2
    doc = {"kind": "PodList", "items": [NODE]}  # an explicit kind is kept
    assert [n.name for n in load_snapshot(_w(tmp_path / "l2.json", json.dumps(doc))).nodes] == ["n1"]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_directory(tmp_path: Path, gz: bool) -> None:
    ext = ".gz" if gz else ""
    d = tmp_path / "dump"
    _w(d / f"nodes.yaml{ext}", multi_yaml([NODE, NODE2]), gz)
    _w(d / f"classes.json{ext}", as_list([PC]), gz)
    _w(d / "ml" / f"group.yml{ext}", multi_yaml([PG, POD]), gz)
    _w(d / "shop" / f"web.json{ext}", json.dumps(RUNNING), gz)
    _w(d / "README.md", "# not a manifest: ignored\n{{{")
    _w(d / "notes.txt", "kind: Node\nmetadata: {name: ignored}\n")
    snap = load_snapshot(d)
    assert summary(snap) == EXPECTED
    assert snap.header.source == str(d)


def test_directory_without_manifests(tmp_path: Path) -> None:
    _w(tmp_path / "d" / "README.md", "hello")
    with pytest.raises(UserError, match="holds no"):
        load_snapshot(tmp_path / "d")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        load_snapshot(tmp_path / "nope.json")


# ---- our snapshot format ---------------------------------------------------------------------

HEADER = {
    "formatVersion": 1, "capturedAt": "2026-01-01T00:00:00Z",
    "server": {"url": "https://k8s:6443", "version": "v1.37.1"},
    "listed": ["nodes", "pods"], "notServed": ["compositepodgroups.scheduling.k8s.io"], "forbidden": ["poddisruptionbudgets.policy"],
    "resourceVersions": {"pods": "12", "nodes": "7"}, "counts": {"nodes": 2, "pods": 2, "bogus": "x"},
    "warnings": ["w ü"],
}


def test_snapshot_header_fields(tmp_path: Path) -> None:
    path = _w(tmp_path / "s.json", json.dumps({"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot",
                                              "header": HEADER, "items": ITEMS}))
    h = load_snapshot(path).header
    assert h.format_version == 1
    assert h.captured_at == "2026-01-01T00:00:00Z"
    assert (h.server_url, h.server_version) == ("https://k8s:6443", "v1.37.1")
    assert h.listed == ["nodes", "pods"]
    assert h.not_served == ["compositepodgroups.scheduling.k8s.io"]
    assert h.forbidden == ["poddisruptionbudgets.policy"]
    assert h.resource_versions == {"pods": "12", "nodes": "7"}
    assert h.counts == {"nodes": 2, "pods": 2}  # non-integers dropped
    assert h.warnings == ["w ü"]
    assert h.source == str(path)


def test_snapshot_header_warnings_reach_the_built_snapshot(tmp_path: Path) -> None:
    from kubectl_wap.snapshot.source import build, raw_source

    path = _w(tmp_path / "s.json", json.dumps({"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot",
                                              "header": HEADER, "items": ITEMS}))
    snap = build(*raw_source(str(path), False, None, None))
    text = "\n".join(snap.warnings)
    assert "w ü" in text and "poddisruptionbudgets.policy" in text and "compositepodgroups" in text


@pytest.mark.parametrize(
    "doc, match",
    [
        ({"apiVersion": "kubectl-wap/v9", "kind": "Snapshot", "items": []}, "unsupported snapshot apiVersion"),
        ({"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot", "header": {}}, "no 'items' list"),
        ({"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot", "items": {"a": 1}}, "no 'items' list"),
    ],
)
def test_bad_snapshot_envelope(tmp_path: Path, doc: dict, match: str) -> None:
    with pytest.raises(UserError, match=match):
        load_snapshot(_w(tmp_path / "s.json", json.dumps(doc)))


@pytest.mark.parametrize(
    "header",
    [None, "junk", [], {"formatVersion": "x"}, {"formatVersion": [1]}, {"server": "s"}, {"listed": "nodes"},
     {"counts": [1]}, {"resourceVersions": "x"}, {"warnings": "w"}],
)
def test_junk_header_never_crashes(tmp_path: Path, header: Any) -> None:
    doc = {"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot", "header": header, "items": [NODE]}
    try:
        snap = load_snapshot(_w(tmp_path / "s.json", json.dumps(doc)))
    except UserError:
        return
    assert [n.name for n in snap.nodes] == ["n1"]


def _without_header(snap: Snapshot) -> Snapshot:
    return dataclasses.replace(snap, header=SnapshotHeader())


@pytest.mark.parametrize("name", ["round.json", "round.json.gz"])
@pytest.mark.parametrize("source", ["small", "demo"])
def test_write_snapshot_round_trip(tmp_path: Path, name: str, source: str) -> None:
    if source == "demo":
        doc = json.loads(DEMO_PATH.read_text())
        header, items = doc["header"], doc["items"]
    else:
        header, items = HEADER, ITEMS
    direct = build_snapshot(copy.deepcopy(items), SnapshotHeader())
    path = tmp_path / name
    write_snapshot(str(path), header, iter(copy.deepcopy(items)))
    loaded = load_snapshot(path)
    assert _without_header(loaded) == _without_header(direct)
    assert loaded.nodes == direct.nodes and loaded.pods == direct.pods  # the dataclasses, field by field
    assert loaded.header.captured_at == header["capturedAt"]
    assert loaded.header.server_version == header["server"]["version"]
    # and once more: saving what we loaded gives the same bytes' worth of model
    path2 = tmp_path / ("again-" + name)
    write_snapshot(str(path2), header, iter(load_items(path)[1]))
    assert _without_header(load_snapshot(path2)) == _without_header(direct)


def test_yaml_and_snapshot_give_same_model(tmp_path: Path) -> None:
    a = load_snapshot(_w(tmp_path / "a.yaml", multi_yaml(ITEMS)))
    write_snapshot(str(tmp_path / "b.json.gz"), HEADER, ITEMS)
    b = load_snapshot(tmp_path / "b.json.gz")
    assert _without_header(a) == _without_header(b)


# ---- duplicates and references ------------------------------------------------------------------

def test_duplicate_objects_warn_and_last_wins() -> None:
    n_new = copy.deepcopy(NODE)
    n_new["status"]["allocatable"]["cpu"] = "16"
    pod_new = copy.deepcopy(RUNNING)
    pod_new["spec"]["priority"] = 99
    snap = build_snapshot([NODE, RUNNING, NODE2, n_new, pod_new, PC, PC])
    assert [n.name for n in snap.nodes] == ["n1", "n2"]  # position of the first, content of the last
    assert snap.nodes[0].allocatable["cpu"] == 16000
    assert [p.priority for p in snap.pods] == [99]
    dup = [w for w in snap.warnings if w.startswith("duplicate")]
    assert dup == [
        "duplicate Node n1: the last definition is used",
        "duplicate Pod shop/web: the last definition is used",
        "duplicate PriorityClass high: the last definition is used",
    ]


def test_same_name_in_other_namespace_is_not_a_duplicate() -> None:
    other = copy.deepcopy(RUNNING)
    other["metadata"]["namespace"] = "other"
    snap = build_snapshot([NODE, RUNNING, other])
    assert len(snap.pods) == 2 and not any("duplicate" in w for w in snap.warnings)


def test_missing_namespace_defaults_to_default() -> None:
    p = copy.deepcopy(RUNNING)
    del p["metadata"]["namespace"]
    dup = copy.deepcopy(p)
    dup["metadata"]["namespace"] = "default"
    snap = build_snapshot([NODE, p, dup])
    assert [x.key for x in snap.pods] == ["default/web"]
    assert any("duplicate Pod default/web" in w for w in snap.warnings)


def test_pod_with_missing_podgroup_warns() -> None:
    snap = build_snapshot([NODE, PC, POD])
    assert any("PodGroup ml/g" in w and "not in the snapshot" in w for w in snap.warnings)
    assert snap.pods[0].pod_group_name == "g"


def test_pod_bound_to_missing_node_warns() -> None:
    p = copy.deepcopy(RUNNING)
    p["spec"]["nodeName"] = "ghost"
    snap = build_snapshot([NODE, p])
    assert any("node ghost" in w and "ignored" in w for w in snap.warnings)


def cpg(name: str, parent: str | None = None, ns: str = "ml") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}}}
    if parent:
        spec["parentCompositePodGroupName"] = parent
    return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def leaf(name: str, parent: str) -> dict[str, Any]:
    o = copy.deepcopy(PG)
    o["metadata"]["name"] = name
    o["spec"]["parentCompositePodGroupName"] = parent
    return o


def _build_with_deadline(items: list[dict], seconds: float = 10.0) -> Snapshot:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["snap"] = build_snapshot(items)
        except BaseException as e:  # noqa: BLE001
            out["err"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "build_snapshot hangs"
    if "err" in out:
        raise out["err"]
    return out["snap"]


@pytest.mark.parametrize(
    "items",
    [
        pytest.param([PC, cpg("a", "b"), cpg("b", "a"), leaf("g", "a")], id="two-cycle"),
        pytest.param([PC, cpg("a", "a"), leaf("g", "a")], id="self-parent"),
        pytest.param([PC, cpg("a", "b"), cpg("b", "c"), cpg("c", "b"), leaf("g", "a")], id="cycle-above"),
    ],
)
def test_parent_cycles_warn_without_hanging(items: list[dict]) -> None:
    snap = _build_with_deadline(items)
    assert any("cycle" in w for w in snap.warnings), snap.warnings
    assert any("PodGroup ml/g" in w and "cycle" in w for w in snap.warnings)


def test_over_deep_tree_warns_without_hanging() -> None:
    # leaf -> c1 -> c2 -> c3 -> c4 -> c5 -> c6: more than WorkloadMaxTreeDepth (4) steps.
    chain = [cpg(f"c{i}", f"c{i + 1}" if i < 6 else None) for i in range(1, 7)]
    snap = _build_with_deadline([PC, *chain, leaf("g", "c1")])
    assert any("PodGroup ml/g" in w and "deeper than 4" in w for w in snap.warnings), snap.warnings


def test_tree_of_allowed_depth_is_quiet() -> None:
    chain = [cpg(f"c{i}", f"c{i + 1}" if i < 4 else None) for i in range(1, 5)]  # leaf + 4 ancestors
    snap = _build_with_deadline([PC, *chain, leaf("g", "c1")])
    assert not any("deeper" in w or "cycle" in w or "not in the snapshot" in w for w in snap.warnings), snap.warnings


def test_missing_parent_warns() -> None:
    snap = build_snapshot([PC, leaf("g", "nowhere")])
    assert any("CompositePodGroup ml/nowhere" in w and "not in the snapshot" in w for w in snap.warnings)


def test_parent_in_other_namespace_is_missing() -> None:
    snap = build_snapshot([PC, cpg("a", ns="other"), leaf("g", "a")])
    assert any("ml/a" in w and "not in the snapshot" in w for w in snap.warnings)


def test_unknown_and_ignored_kinds() -> None:
    snap = build_snapshot([NODE, {"kind": "Deployment", "metadata": {"name": "d"}}, {"kind": "Secret", "metadata": {"name": "s"}},
                           {"kind": "FooBar"}, {"kind": "FooBar"}])
    assert snap.warnings == ["ignored objects of kinds the scheduler does not read: FooBar, Secret"]


@pytest.mark.parametrize("item", [{"metadata": {"name": "x"}}, {"kind": ""}, {"kind": 5}, "text", 5, None, ["a"]])
def test_items_without_kind_or_not_objects_are_user_errors(item: Any) -> None:
    with pytest.raises(UserError, match="item 1"):
        build_snapshot([NODE, item])


def test_timestamps_keep_their_utc_offset():
    # metav1.Time.UnmarshalJSON parses RFC 3339 (time.Parse(time.RFC3339, ...)): the offset is part
    # of the instant. The API server writes UTC ("Z"), but a hand-written file may not; a start
    # time read two hours off would reorder victims (MoreImportantPod) and the node pick.
    from kubectl_wap.snapshot.decode.convert import parse_time

    utc = parse_time("2026-11-30T11:00:00Z")
    assert utc == 1796036400.0
    assert parse_time("2026-11-30T13:00:00+02:00") == utc
    assert parse_time("2026-11-30T06:30:00-04:30") == utc
    assert parse_time("2026-11-30T11:00:00.5Z") == utc + 0.5
    assert parse_time("not a time") is None and parse_time("") is None and parse_time(None) is None
