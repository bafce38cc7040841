"""Kueue on a live cluster (issue 35): the kueue.x-k8s.io objects are captured (read-only) when the
API is served, kept by the snapshot format and by --redact, and `whatif -f job.yaml` live gives the
same two-stage answer as on the dump (tests/fixtures/kueue-demo) served by the loopback server."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))

from fake_apiserver import KUEUE_RESOURCES, FakeApiServer  # noqa: E402

from kubectl_wap.cli import app  # noqa: E402
from kubectl_wap.snapshot.io.live import load_live  # noqa: E402

DEMO = Path(__file__).parent / "fixtures" / "kueue-demo"
CLUSTER, JOB = DEMO / "cluster.yaml", DEMO / "job.yaml"
KUEUE_KINDS = {"ResourceFlavor", "ClusterQueue", "Cohort", "LocalQueue", "Workload", "WorkloadPriorityClass",
               "Topology", "AdmissionCheck"}


def _objects() -> list[dict]:
    return copy.deepcopy(yaml.safe_load(CLUSTER.read_text())["items"])


def _run(args: list[str], code: int = 0):  # type: ignore[no-untyped-def]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == code, f"{args}: exit {res.exit_code}\n{res.output}"
    return res


def _extra_kueue_objects() -> list[dict]:
    """A Topology, an AdmissionCheck (no ClusterQueue names it) and a Cohort: captured, not used."""
    api = "kueue.x-k8s.io/v1beta2"
    return [
        {"apiVersion": api, "kind": "Topology", "metadata": {"name": "dc"}, "spec": {"levels": [{"nodeLabel": "kubernetes.io/hostname"}]}},
        {"apiVersion": api, "kind": "AdmissionCheck", "metadata": {"name": "prov"},
         "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request", "parameters": {"name": "secret-ish"}},
         "status": {"conditions": [{"type": "Active", "status": "True", "reason": "Active", "message": "ok"}]}},
        {"apiVersion": api, "kind": "Cohort", "metadata": {"name": "ml"}, "spec": {}},
    ]


def test_live_capture_lists_kueue_objects_read_only(tmp_path: Path) -> None:
    with FakeApiServer(_objects() + _extra_kueue_objects()) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        header, items = load_live(str(kc), None, None)
        assert srv.methods() == {"GET"}
    kinds = {o["kind"] for o in items if str(o.get("apiVersion", "")).startswith("kueue.x-k8s.io/")}
    assert kinds == KUEUE_KINDS
    assert {r.plural + ".kueue.x-k8s.io" for r in KUEUE_RESOURCES} <= set(header["listed"])
    assert header["apiVersions"]["workloads.kueue.x-k8s.io"] == "kueue.x-k8s.io/v1beta2"
    assert header["warnings"] == []
    wl = next(o for o in items if o["kind"] == "Workload")
    # what admission reads survives the strip: admission, conditions, priority, owner
    assert wl["status"]["admission"]["clusterQueue"] == "team-b-cq" and wl["spec"]["priority"] == 100
    assert {c["type"] for c in wl["status"]["conditions"]} == {"QuotaReserved", "Admitted"}
    assert wl["metadata"]["ownerReferences"] == [{"kind": "Job", "name": "train-7", "controller": True}]
    ac = next(o for o in items if o["kind"] == "AdmissionCheck")
    # what Kueue's cache keeps of it (admissionchecks.py): its controller and Active state; not its parameters
    assert ac["spec"] == {"controllerName": "kueue.x-k8s.io/provisioning-request"}
    assert ac["status"] == {"conditions": [{"type": "Active", "status": "True"}]}


def test_no_kueue_api_no_kueue_request_beyond_discovery_and_no_warning(tmp_path: Path) -> None:
    objs = [o for o in _objects() if not o["apiVersion"].startswith("kueue")]
    with FakeApiServer(objs) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        header, _ = load_live(str(kc), None, None)
        kueue_paths = [p for p in srv.paths() if "kueue" in p]
    assert kueue_paths == ["/apis/kueue.x-k8s.io"]  # discovery only: 404, nothing listed
    assert not [r for r in header["listed"] + header["notServed"] if "kueue" in r] and header["warnings"] == []


def test_kueue_served_only_at_v1beta1_is_one_warning(tmp_path: Path) -> None:
    objs = [o for o in _objects() if not o["apiVersion"].startswith("kueue")]
    with FakeApiServer(objs, kueue=True, versions={r.plural: ("v1beta1",) for r in KUEUE_RESOURCES}) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        header, _ = load_live(str(kc), None, None)
    said = [w for w in header["warnings"] if "kueue" in w]
    assert said == ["kueue.x-k8s.io is served only at kueue.x-k8s.io/v1beta1, which kubectl-wap does not read "
                    "(it reads kueue.x-k8s.io/v1beta2): its objects are not captured"]
    assert not [r for r in header["listed"] if "kueue" in r]


def _answer(args: list[str]) -> tuple[dict, list[str]]:
    doc = json.loads(_run(args + ["-o", "json"]).stdout)
    text = _run(args).stdout.splitlines()
    return doc, text


def test_whatif_live_gives_the_same_two_stages_as_the_dump(tmp_path: Path) -> None:
    base = ["whatif", "-f", str(JOB), "--replicas", "1"]
    dump_doc, dump_text = _answer(base + ["--snapshot", str(CLUSTER)])
    with FakeApiServer(_objects()) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        live_doc, live_text = _answer(base + ["--kubeconfig", str(kc)])
        _run(["snapshot", "--kubeconfig", str(kc), "--output-file", str(tmp_path / "snap.json")])
        assert srv.methods() == {"GET"}
    assert live_doc["queueing"]["outcome"] == "admitted-after-evictions"
    assert live_doc["queueing"] == dump_doc["queueing"]
    assert live_doc["outcome"] == dump_doc["outcome"] == "NoPreemptionNeeded"
    assert live_text[:4] == dump_text[:4]
    # the snapshot format keeps the Kueue objects: the saved capture answers alike
    snap_doc, _ = _answer(base + ["--snapshot", str(tmp_path / "snap.json")])
    assert snap_doc["queueing"] == dump_doc["queueing"] and snap_doc["outcome"] == dump_doc["outcome"]


def test_forbidden_kueue_list_refuses_the_stage_in_one_line(tmp_path: Path) -> None:
    with FakeApiServer(_objects()) as srv:
        srv.fail("/apis/kueue.x-k8s.io/v1beta2/workloads", 403, times=None)
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        res = _run(["whatif", "-f", str(JOB), "--replicas", "1", "--kubeconfig", str(kc)], code=2)
        ok = _run(["whatif", "-f", str(JOB), "--replicas", "1", "--kubeconfig", str(kc), "--no-kueue"])
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and "forbidden to list workloads.kueue.x-k8s.io" in err[0] and "--no-kueue" in err[0]
    assert "Traceback" not in res.output and "Kueue:" not in ok.stdout


def test_redacted_capture_keeps_what_admission_needs() -> None:
    """`snapshot --redact` of a Kueue cluster: names hashed through one mapping, so the Job (its
    namespace, queue and WorkloadPriorityClass mapped the same way) gets the same answer."""
    from kubectl_wap.cli.kueuestage import kueue_section
    from kubectl_wap.snapshot.share.redact import redact_items, redactor_for

    items = _objects()
    key = b"k" * 32
    red = redact_items(items, key)
    h = redactor_for(items, key).h
    assert not [o for o in red if o.get("kind") in KUEUE_KINDS and "team-a-cq" in json.dumps(o)]
    job = yaml.safe_load(JOB.read_text())
    job["metadata"]["namespace"] = h("team-a")
    job["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": h("lq"), "kueue.x-k8s.io/priority-class": h("urgent")}
    path = Path(__file__).parent / "fixtures" / "kueue-demo" / "job.yaml"
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(job, f)
    plain = kueue_section(str(path), items)
    redacted = kueue_section(f.name, red)
    Path(f.name).unlink()
    assert plain is not None and redacted is not None
    assert redacted["outcome"] == plain["outcome"] == "admitted-after-evictions"
    assert redacted["clusterQueue"] == h("team-a-cq") and redacted["podSets"][0]["flavors"]["nvidia.com/gpu"] == h("h100")
    assert [e["workload"] for e in redacted["evictions"]] == [f"{h('team-b')}/{h('train-7')}"]


@pytest.mark.parametrize("kind", sorted(KUEUE_KINDS))
def test_redaction_keeps_kueue_kinds_and_api_version(kind: str) -> None:
    from kubectl_wap.snapshot.share.redact import redact_items

    obj = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind, "metadata": {"name": "x", "namespace": "n"}}
    out = redact_items([obj], b"k")[0]
    assert out["apiVersion"] == "kueue.x-k8s.io/v1beta2" and out["kind"] == kind and out["metadata"]["name"] != "x"


def test_pending_live_names_the_workload_kueue_holds(tmp_path: Path) -> None:
    """The demo's sweep Workload (tools/make_demo_kueue.py) served live: pending gives it the row it
    gets on the bundled demo."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    from make_demo_kueue import SWEEP

    with FakeApiServer(_objects() + [copy.deepcopy(SWEEP)]) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        live = json.loads(_run(["pending", "-A", "--kubeconfig", str(kc), "-o", "json", "--no-scale-up"]).stdout)["items"]
    demo = json.loads(_run(["pending", "-A", "--snapshot", "@demo-kueue", "-o", "json", "--no-scale-up"]).stdout)["items"]
    assert [(r["kind"], r["name"], r["stage"], r["reason"]) for r in live] == [
        (r["kind"], r["name"], r["stage"], r["reason"]) for r in demo] and live[0]["name"] == "sweep"
