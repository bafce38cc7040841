"""why-preempted and snapshot --events against the loopback API server: events are read only on
request, only Preempted ones are kept, and a server that does not serve them is a warning."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from fake_apiserver import FakeApiServer  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from kubectl_wap.cli import app  # noqa: E402
from kubectl_wap.snapshot.io.live import load_live  # noqa: E402

T = "2026-11-30T11:58:00Z"
OBJECTS = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "victim", "namespace": "a", "uid": "uv", "deletionTimestamp": T},
     "spec": {"nodeName": "n1", "priority": 0, "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "3"}}}]},
     "status": {"phase": "Running", "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                                                    "lastTransitionTime": T, "message": "default-scheduler: preempting to accommodate a higher priority pod"}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "winner", "namespace": "a", "uid": "uw"},
     "spec": {"priority": 10, "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "3"}}}]},
     "status": {"phase": "Pending", "nominatedNodeName": "n1"}},
    {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "victim.1", "namespace": "a"}, "reason": "Preempted",
     "message": "Preempted by pod uw on node n1", "involvedObject": {"kind": "Pod", "namespace": "a", "name": "victim"},
     "lastTimestamp": T, "source": {"component": "default-scheduler", "host": "cp-1"}},
    {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "winner.2", "namespace": "a"}, "reason": "FailedScheduling",
     "message": "0/1 nodes are available", "involvedObject": {"kind": "Pod", "namespace": "a", "name": "winner"}},
]


def test_events_only_on_request_and_only_preempted(tmp_path):
    with FakeApiServer(OBJECTS) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        _, plain = load_live(str(kc), None, None)
        _, with_events = load_live(str(kc), None, None, events=True)
    assert not [o for o in plain if o["kind"] == "Event"]
    evs = [o for o in with_events if o["kind"] == "Event"]
    assert [e["metadata"]["name"] for e in evs] == ["victim.1"] and "source" not in evs[0]


def test_why_preempted_live_names_the_preemptor_from_the_event(tmp_path):
    with FakeApiServer(OBJECTS) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        out = CliRunner().invoke(app, ["why-preempted", "pod", "victim", "-n", "a", "--kubeconfig", str(kc), "-o", "json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.output[out.output.index("{"):])
    assert d["suspects"][0]["name"] == "winner" and d["suspects"][0]["confidence"] == "named by the Preempted event"
    assert d["replay"].startswith("consistent")


def test_events_not_served_is_a_warning_not_an_error(tmp_path):
    with FakeApiServer(OBJECTS, not_served=["events"]) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        header, items = load_live(str(kc), None, None, events=True)
    assert "events" in header["notServed"]
    assert any(o["kind"] == "Pod" for o in items)


def test_pending_live_reads_pvcs(tmp_path):
    objs = [o for o in OBJECTS if o["kind"] == "Node"] + [
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "a"}, "status": {"phase": "Pending"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db", "namespace": "a", "uid": "udb"},
         "spec": {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}], "containers": [{"name": "c", "image": "x"}]},
         "status": {"phase": "Pending"}}]
    with FakeApiServer(objs) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        out = CliRunner().invoke(app, ["pending", "-A", "--kubeconfig", str(kc), "--no-scale-up", "-o", "json"])
        assert out.exit_code == 0, out.output
        d = json.loads(out.output[out.output.index("{"):])
        assert [r["reason"] for r in d["items"]] == ["PVC data is Pending (not bound)"]
        assert all(r.method == "GET" for r in srv.requests)
