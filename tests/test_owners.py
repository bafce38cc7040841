"""What `simulate` needs of a pod beyond the model survives every source (issue 33 item 5): the
controlling owner's kind and name (never its uid) and terminationGracePeriodSeconds, through the
allow-list, live capture, our snapshot format (formatVersion 3 rows: an Owners id) and --redact
(owner names hashed through the one mapping). simulate then recreates the same victims in the
same number of cycles from the demo itself, a live capture of it, a `kubectl wap snapshot` of it
and that snapshot's --redact form; formatVersion 2 files still load."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))

from builders import make_pod  # noqa: E402
from fake_apiserver import FakeApiServer  # noqa: E402

from kubectl_wap.cli import app  # noqa: E402
from kubectl_wap.errors import UserError  # noqa: E402
from kubectl_wap.model import Pod  # noqa: E402
from kubectl_wap.snapshot.io.files import DEMO_PATH, load_items, load_snapshot, stream_snapshot  # noqa: E402
from kubectl_wap.snapshot.decode.owners import PodExtras, tap_pod_extras  # noqa: E402
from kubectl_wap.snapshot.share.redact import redactor_for  # noqa: E402
from kubectl_wap.snapshot.io.save import write_snapshot  # noqa: E402
from kubectl_wap.snapshot.io.snapfile import saved_items  # noqa: E402
from kubectl_wap.snapshot.source import build, raw_source  # noqa: E402
from kubectl_wap.snapshot.share.strip import strip_object  # noqa: E402

T = 1795932000
HEADER = {"capturedAt": "2026-11-30T12:00:00Z", "server": {"url": "x", "version": "v1.37.1"}}
V2_DEMO = Path(__file__).parent / "fixtures" / "demo-snapshot-v2.json.gz"  # written by the v2 writer (1a895bf)


def _pod(name: str) -> Any:
    return make_pod(name, "shop").uid(f"u-{name}").req(cpu="1").on("n1", start=T).created(T - 60).label(app="web")


# ---- the allow-list ------------------------------------------------------------------------------

def test_strip_keeps_the_controllers_kind_and_name_only() -> None:
    raw = _pod("web-1").owned_by("Deployment", "web", controller=False).owned_by("ReplicaSet", "web-7d9").grace(45).obj()
    s = strip_object(raw)
    assert s["metadata"]["ownerReferences"] == [{"kind": "ReplicaSet", "name": "web-7d9", "controller": True}]
    assert s["spec"]["terminationGracePeriodSeconds"] == 45
    text = json.dumps(s)
    assert "uid-replicaset" not in text and "blockOwnerDeletion" not in text and "apps/v1" not in text
    assert "Deployment" not in text  # not the controller: nothing simulate reads


def test_the_first_controller_reference_wins_and_none_is_no_key() -> None:
    # metav1.GetControllerOfNoCopy: the first reference with controller: true
    two = _pod("p").owned_by("Job", "a").owned_by("Job", "b").obj()
    assert strip_object(two)["metadata"]["ownerReferences"] == [{"kind": "Job", "name": "a", "controller": True}]
    for raw in (_pod("p").obj(), _pod("p").owned_by("ReplicaSet", "rs", controller=False).obj()):
        assert "ownerReferences" not in strip_object(raw)["metadata"]


# ---- formatVersion 3 rows ------------------------------------------------------------------------

def _cluster() -> list[dict]:
    pods = [_pod(f"web-7d9-{i}").owned_by("ReplicaSet", "web-7d9").grace(45) for i in range(3)]
    pods += [_pod("db-0").owned_by("StatefulSet", "db"), _pod("bare").grace(5),
             _pod("side").owned_by("ReplicaSet", "other", controller=False)]
    return [strip_object(p.obj()) for p in pods]


EXPECTED = {
    **{("shop", f"web-7d9-{i}"): PodExtras("ReplicaSet", "web-7d9", 45) for i in range(3)},
    ("shop", "db-0"): PodExtras("StatefulSet", "db", 30),
    ("shop", "bare"): PodExtras("", "", 5),
    ("shop", "side"): PodExtras("", "", 30),
}


def test_rows_keep_owners_and_the_round_trip_is_exact(tmp_path: Path) -> None:
    items = _cluster()
    path = tmp_path / "s.json"
    write_snapshot(str(path), HEADER, copy.deepcopy(items))
    lines = path.read_text().splitlines()
    assert '"formatVersion":3' in lines[0]
    rows = [json.loads(line.rstrip(",").removesuffix("]}") if line.endswith("]}") else line.rstrip(","))
            for line in lines if line.startswith("[")]
    assert len(rows) == 6  # every pod is still a row
    assert [len(r) for r in rows] == [10, 10, 10, 10, 9, 9]  # an owned pod's row ends with its owners
    rs, sts = ([{"kind": "ReplicaSet", "name": "web-7d9", "controller": True}], [{"kind": "StatefulSet", "name": "db", "controller": True}])
    assert [r[9] for r in rows[:4]] == [rs, 0, 0, sts]  # the list on first sight, then its id (0, 1, ... in that order)
    assert list(stream_snapshot(path)[1]) == items  # the raw path gives back exactly what was written
    assert load_items(path)[1] == items  # and so does the whole-document reader


def test_the_row_fast_path_reports_the_same_extras_as_the_raw_path(tmp_path: Path) -> None:
    path = tmp_path / "s.json.gz"
    write_snapshot(str(path), HEADER, _cluster())
    fast: dict = {}
    models = list(tap_pod_extras(stream_snapshot(path)[1], fast).models())
    assert sum(type(m) is Pod for m in models) == 6  # rows went straight to Pods
    raw: dict = {}
    list(tap_pod_extras(stream_snapshot(path)[1], raw))
    assert fast == raw == EXPECTED
    via_build: dict = {}
    header, its = raw_source(str(path), False, None, None)
    assert len(build(header, tap_pod_extras(its, via_build)).pods) == 6  # as `simulate` loads it
    assert via_build == EXPECTED


@pytest.mark.parametrize("edit, match", [
    (lambda t: t.replace(',0],\n', ',5],\n', 1),
     "pod row refers to owners 5, which are not given before it"),
    (lambda t: t.replace('[{"kind":"ReplicaSet","name":"web-7d9","controller":true}]]', '[]]', 1),
     "a pod row's owners must be a non-empty list or the id of one before it"),
    (lambda t: t.replace('[{"kind":"ReplicaSet","name":"web-7d9","controller":true}]]', '"web-7d9"]', 1),
     "a pod row's owners must be a non-empty list or the id of one before it"),
    (lambda t: t.replace('"formatVersion":3', '"formatVersion":2', 1), "a pod row has 9 fields, this one 10"),
])
def test_damaged_owners_are_one_clear_error(tmp_path: Path, edit: Callable[[str], str], match: str) -> None:
    path = tmp_path / "s.json"
    write_snapshot(str(path), HEADER, _cluster())
    path.write_text(edit(path.read_text()))
    with pytest.raises(UserError, match=match):
        load_snapshot(path)
    with pytest.raises(UserError, match=match):
        load_items(path)


def test_version_2_files_still_load() -> None:
    assert load_snapshot(V2_DEMO).header.format_version == 2
    demo, v2 = load_snapshot(DEMO_PATH), load_snapshot(V2_DEMO)
    assert (v2.nodes, v2.pods, v2.pod_groups, v2.pdbs) == (demo.nodes, demo.pods, demo.pod_groups, demo.pdbs)
    d = _simulate(["--snapshot", str(V2_DEMO)])  # no owners in a v2 file: no recreation, and a warning says why
    assert d["summary"]["recreatedPods"] == 0 and "before formatVersion 3" in d["warnings"][0]


# ---- simulate from every source ------------------------------------------------------------------

AT = ["--at", "2026-11-30T12:00:00Z"]  # the demo's capture time (a live read would start now)


def _simulate(args: list[str]) -> dict:
    out = CliRunner().invoke(app, ["simulate", *args, "-o", "json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output[out.output.index("{"):])


def _run(args: list[str]) -> None:
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output


def _outline(d: dict, name: Callable[[str, str], str], node: Callable[[str], str]) -> dict:
    """What simulate decided, with every name passed through `name(namespace, name)`."""
    def pod(s: str) -> str:
        ns, n = s.split("/", 1)
        return name(ns, ns) + "/" + name(ns, n)

    cycles = [(c["n"], c["object"]["kind"], name(c["object"]["namespace"], c["object"]["namespace"]),
               name(c["object"]["namespace"], c["object"]["name"]), c["outcome"], c["pendingLeft"], c["causedBy"], c["depth"],
               [(pod(p["pod"]), node(p["node"])) for p in c["placed"]],
               [(pod(f"{v['namespace']}/{v['name']}"), node(v["node"]), v["priority"], v["times"],
                 v["owner"] and v["owner"].split("/")[0] + "/" + name(v["namespace"], v["owner"].split("/", 1)[1]))
                for v in c["victims"]]) for c in d["cycles"]]
    cascade = [[(pod(v["pod"]), v["recreatedAs"] and pod(v["recreatedAs"])) for v in c["victims"]] for c in d["cascade"]]
    return {"summary": d["summary"], "cycles": cycles, "cascade": cascade}


def _same(known: set[str]) -> Callable[[str, str], str]:
    # a recreated pod's name is `<owner>-<5 random characters>`: the characters differ per source
    return lambda ns, n: n if n in known else n.rsplit("-", 1)[0] + "-*"


@pytest.fixture(scope="module")
def demo_run() -> dict:
    d = _simulate(["--demo"])
    assert d["summary"]["recreatedPods"] == 8 and d["summary"]["cycles"] == 15  # the cascade the issue counts
    return d


def _names() -> set[str]:
    out: set[str] = set()
    for o in json.loads(DEMO_PATH.read_text())["items"]:
        md = o.get("metadata", {})
        out |= {md.get("name"), md.get("namespace")} | {r["name"] for r in md.get("ownerReferences", [])}
    return out - {None}


def test_live_capture_and_our_snapshots_recreate_what_the_demo_does(demo_run: dict, tmp_path: Path) -> None:
    want = _outline(demo_run, _same(_names()), str)
    snap = tmp_path / "demo.json.gz"
    _run(["snapshot", "--demo", "--output-file", str(snap)])
    assert _outline(_simulate(["--snapshot", str(snap)]), _same(_names()), str) == want
    with FakeApiServer(json.loads(DEMO_PATH.read_text())["items"]) as srv:
        kc = str(srv.write_kubeconfig(tmp_path / "kubeconfig"))
        live = _simulate(["--kubeconfig", kc, *AT])
        captured = tmp_path / "live.json.gz"
        _run(["snapshot", "--kubeconfig", kc, "--output-file", str(captured)])
        assert {r.method for r in srv.requests} == {"GET"}
    assert _outline(live, _same(_names()), str) == want
    assert _outline(_simulate(["--snapshot", str(captured), *AT]), _same(_names()), str) == want


def test_redacted_snapshot_recreates_the_same_victims(demo_run: dict, tmp_path: Path) -> None:
    key = b"an owners test key, 32 bytes...."
    (tmp_path / "key").write_bytes(key)
    red = tmp_path / "red.json.gz"
    _run(["snapshot", "--demo", "--redact", "--redact-key-file", str(tmp_path / "key"), "--output-file", str(red)])
    h = redactor_for(saved_items(None, True)[1], key).h  # the mapping the command used
    names = _names()
    hashed = {h(n) for n in names}

    def mapped(ns: str, n: str) -> str:  # the demo's names as the redacted snapshot spells them
        return h(n) if n in names else h(n.rsplit("-", 1)[0]) + "-*"

    got = _outline(_simulate(["--snapshot", str(red)]), _same(hashed), str)
    assert got == _outline(demo_run, mapped, h)
    text = json.dumps(load_items(red)[1])
    assert not any(f'"{n}"' in text for n in ("protein-fold", "ingest-b1-4", "train-llama"))  # owner names hashed


def test_redaction_hashes_owner_names_through_the_one_mapping() -> None:
    items = [strip_object(_pod("web-7d9-x").owned_by("ReplicaSet", "web-7d9").label(**{"pod-template-hash": "7d9"}).obj()),
             strip_object(_pod("j-1").owned_by("Job", "j", api_version="batch/v1").label(**{"job-name": "j"}).obj()),
             strip_object(_pod("c-0").owned_by("RayCluster", "c", api_version="ray.io/v1").obj())]
    r = redactor_for(items, b"k" * 32)
    out = [r.item(o) for o in items]
    refs = [o["metadata"]["ownerReferences"][0] for o in out]
    assert refs[0] == {"kind": "ReplicaSet", "name": r.h("web-7d9"), "controller": True}
    assert refs[1]["name"] == r.h("j") == out[1]["metadata"]["labels"][r.lkey("job-name")]  # as the job-name label says
    assert refs[2]["kind"] == r.h("RayCluster") != "RayCluster"  # a custom resource's kind is hashed like a name


# ---- property: any owners round-trip exactly ---------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_refs = st.lists(st.fixed_dictionaries({"kind": st.sampled_from(["ReplicaSet", "Job", "X"]), "name": st.sampled_from(["a", "b", "c"])},
                                       optional={"controller": st.booleans(), "uid": st.text(max_size=3)}), max_size=2)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.none(), _refs), min_size=1, max_size=8))
def test_any_owner_references_come_back_exactly_on_every_path(tmp_path: Path, owners: list) -> None:
    # the writer's rule: a pod's ownerReferences, whatever they hold, come back as written (a row
    # when they are a non-empty list: inline once, then by id); the fast path reports the same
    # controller as the raw path
    items = []
    for i, refs in enumerate(owners):
        o = strip_object(_pod(f"p{i}").obj())
        if refs is not None:
            o["metadata"]["ownerReferences"] = refs
        items.append(o)
    path = tmp_path / "s.json"
    write_snapshot(str(path), HEADER, copy.deepcopy(items))
    assert list(stream_snapshot(path)[1]) == items and load_items(path)[1] == items
    fast: dict = {}
    raw: dict = {}
    rows = sum(refs != [] for refs in owners)  # [] keeps the object form: a row would give back no key
    assert sum(type(m) is Pod for m in tap_pod_extras(stream_snapshot(path)[1], fast).models()) == rows
    list(tap_pod_extras(stream_snapshot(path)[1], raw))
    assert fast == raw
