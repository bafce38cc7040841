"""`why-preempted`: forensics on a cluster state built from our own whatif answer applied to the demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from diagnose_builders import aftermath
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.diagnose.forensics import LIKELY, NAMED, why_preempted
from kubectl_wap.errors import UserError
from kubectl_wap.preemption.analyze import analyze
from kubectl_wap.report.document import to_document
from kubectl_wap.snapshot.decode.convert import build_snapshot
from kubectl_wap.snapshot.decode.evidence import collect_evidence
from kubectl_wap.snapshot.io.files import DEMO_PATH, load_items


@pytest.fixture(scope="module")
def after():
    _, items = load_items(DEMO_PATH)
    items = list(items)
    doc = to_document(analyze(build_snapshot(items), "podgroup", "ml", "job-1"))
    return aftermath(items, doc)


def run(items, kind, ns, name):
    c, e = collect_evidence(items)
    return why_preempted(build_snapshot(items), c, e, kind, ns, name)


def test_victim_on_a_placement_node_names_job1_and_replays_consistently(after):
    f = run(after, "pod", "research", "ablation-0")
    assert f.preempted and f.priority == 100
    assert [(s.kind, s.namespace, s.name, s.confidence) for s in f.suspects] == [("PodGroup", "ml", "job-1", LIKELY)]
    # the placement table (docs/demo.md): job-1-0, 5, 10, 15 go to gpu-a3, ablation-0's node
    assert f.suspects[0].evidence == [
        "16 pod(s) nominated on 5 node(s) (gpu-a3, gpu-a4, gpu-b2, gpu-b3 ...); job-1-0, job-1-5, job-1-10 ... on the victim's node"]
    assert f.replay.startswith("consistent:")
    assert any("no event names the preemptor" in u for u in f.uncertainty)


def test_all_mode_member_on_a_node_job1_does_not_use(after):
    """protein-fold-0 runs on gpu-a2, where job-1 places nothing: still job-1's victim (All unit)."""
    f = run(after, "pod", "research", "protein-fold-0")
    assert f.suspects[0].name == "job-1" and f.replay.startswith("consistent:")


def test_podgroup_victim(after):
    f = run(after, "podgroup", "research", "protein-fold")
    assert f.preempted and f.replay.startswith("consistent:")


def test_spared_pod_shows_no_preemption(after):
    f = run(after, "pod", "ml", "hpo-trials-0")
    assert not f.preempted and not f.suspects
    assert f.uncertainty[0].startswith("no sign of preemption by kube-scheduler")


def test_event_names_the_preemptor(after):
    uid = next(o["metadata"]["uid"] for o in after if o.get("kind") == "PodGroup" and o["metadata"]["name"] == "job-1")
    ev = {"apiVersion": "v1", "kind": "Event", "metadata": {"namespace": "research", "name": "ablation-0.1"},
          "reason": "Preempted", "message": f"Preempted by podgroup {uid} on node gpu-a3",
          "involvedObject": {"kind": "Pod", "namespace": "research", "name": "ablation-0"}, "lastTimestamp": "2026-11-30T11:58:00Z"}
    f = run(after + [ev], "pod", "research", "ablation-0")
    assert f.suspects[0].confidence == NAMED and f.suspects[0].name == "job-1"
    assert not any("no event names" in u for u in f.uncertainty)


def test_replay_not_consistent_when_the_named_victim_was_not_picked(after):
    """Mark a pod the analysis spares (hpo-trials-0) as preempted at the same time: the replay
    for job-1 does not pick it, and the answer says so instead of agreeing."""
    items = aftermath(after, {"victims": [{"namespace": "ml", "name": "hpo-trials-0"}], "placements": [],
                              "preemptor": {"kind": "PodGroup"}})
    f = run(items, "pod", "ml", "hpo-trials-0")
    assert f.suspects[0].name == "job-1"
    assert f.replay.startswith("not consistent: the replay for PodGroup ml/job-1 picks")


def test_unknown_pod_without_events_is_an_input_error(after):
    with pytest.raises(UserError):
        run(after, "pod", "research", "nope")


def test_cli_on_a_snapshot_file(after, tmp_path):
    p = tmp_path / "after.json"
    p.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": after}))
    out = CliRunner().invoke(app, ["why-preempted", "pod", "ablation-1", "-n", "research", "--snapshot", str(p), "-o", "json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.output)
    assert d["kind"] == "PreemptionForensics" and d["preempted"] and d["suspects"][0]["name"] == "job-1"
    assert d["time"] == "2026-11-30T11:58:00Z"


def test_strip_keeps_scheduler_condition_message_only_and_preempted_events():
    from kubectl_wap.snapshot.share.strip import strip_object

    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {}, "status": {"conditions": [
        {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI", "message": "evicted by team-x tool",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
    assert strip_object(pod)["status"]["conditions"] == [
        {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI", "lastTransitionTime": "2026-01-01T00:00:00Z"}]
    ev = {"kind": "Event", "apiVersion": "v1", "metadata": {"name": "e", "namespace": "a", "annotations": {"x": "y"}},
          "reason": "Preempted", "message": "Preempted by pod u1 on node n1", "source": {"host": "h"},
          "involvedObject": {"kind": "Pod", "namespace": "a", "name": "v", "fieldPath": "spec"}}
    out = strip_object(ev)
    assert out["involvedObject"] == {"kind": "Pod", "namespace": "a", "name": "v"} and "source" not in out
    assert out["message"] == "Preempted by pod u1 on node n1"


def test_redacted_event_keeps_its_relations():
    from kubectl_wap.snapshot.share.redact import redactor_for

    ev = {"kind": "Event", "apiVersion": "v1", "metadata": {"name": "e", "namespace": "research"}, "reason": "Preempted",
          "message": "Preempted by podgroup uid-1 on node gpu-a3",
          "involvedObject": {"kind": "Pod", "namespace": "research", "name": "ablation-0", "uid": "u"}}
    node = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "gpu-a3"}}
    r = redactor_for([ev, node], b"k" * 16)
    red, rn = r.item(ev), r.item(node)
    assert "gpu-a3" not in json.dumps(red) and "ablation-0" not in json.dumps(red)
    assert red["message"].endswith(f"on node {rn['metadata']['name']}")  # same hash as the node itself
    assert red["involvedObject"]["namespace"] == red["metadata"]["namespace"]


def test_victim_gone_event_without_known_uid_and_a_pod_that_started_on_its_node():
    from diagnose_builders import node, pod

    ev = {"apiVersion": "v1", "kind": "Event", "metadata": {"namespace": "default", "name": "old.1"}, "reason": "Preempted",
          "message": "Preempted by pod 0000-gone on node n1", "involvedObject": {"kind": "Pod", "namespace": "default", "name": "old"},
          "lastTimestamp": "2026-11-30T11:00:00Z"}
    winner = pod("winner", cpu="3", node_name="n1", priority=10)
    winner["status"]["startTime"] = "2026-11-30T11:00:30Z"
    late = pod("late", cpu="1", node_name="n2", priority=10)
    late["status"]["startTime"] = "2026-11-30T13:00:00Z"  # outside the window
    items = [node("n1"), node("n2"), winner, late, ev]
    f = run(items, "pod", "default", "old")
    assert f.preempted and f.node == "n1" and f.time is not None
    assert [(s.name, s.confidence) for s in f.suspects] == [("winner", LIKELY)]
    assert f.suspects[0].evidence == ["1 pod(s) started after the preemption on 1 node(s) (n1); winner on the victim's node"]
    assert f.replay.startswith("not replayed: the preemptor is already bound")


def test_example_file_is_current():
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, str(repo / "tools" / "make_demo_after.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_a_late_capture_is_flagged(after):
    c, e = collect_evidence(after)
    s = build_snapshot(after)
    late = why_preempted(s, c, e, "pod", "research", "ablation-0", now=1796039880.0 + 3600)
    assert any("captured 60 minute(s) after the preemption" in u for u in late.uncertainty)
    soon = why_preempted(s, c, e, "pod", "research", "ablation-0", now=1796039880.0 + 120)
    assert not any("after the preemption:" in u for u in soon.uncertainty)


def test_documents_match_their_schemas(after, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    from pathlib import Path

    report = Path(__file__).resolve().parent.parent / "kubectl_wap" / "report"
    p = tmp_path / "after.json"
    p.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": after}))
    for args, schema in ((["why-preempted", "pod", "ablation-1", "-n", "research"], "forensics-schema.json"),
                         (["why-preempted", "pod", "hpo-trials-0", "-n", "ml"], "forensics-schema.json"),
                         (["pending", "-A"], "pending-schema.json")):
        out = CliRunner().invoke(app, [*args, "--snapshot", str(p), "-o", "json"])
        assert out.exit_code == 0, out.output
        jsonschema.validate(json.loads(out.output), json.loads((report / schema).read_text()))
    out = CliRunner().invoke(app, ["pending", "-A", "--demo", "-o", "json"])
    jsonschema.validate(json.loads(out.output), json.loads((report / "pending-schema.json").read_text()))


def test_a_pod_of_the_victims_own_priority_is_no_suspect():
    # Preemption only evicts pods of lower priority than the preemptor (default_preemption.go
    # SelectVictimsOnNode: `if corev1helpers.PodPriority(pi.Pod) < podPriority`): a pod that
    # started on the victim's node right after the preemption but has the victim's own priority
    # cannot be the one that preempted it.
    from diagnose_builders import node, pod

    old = pod("old", cpu="1", node_name="n1", priority=5, deleted="2026-11-30T11:00:40Z", preempted_at="2026-11-30T11:00:00Z")
    same = pod("same", cpu="1", node_name="n1", priority=5)
    same["status"]["startTime"] = "2026-11-30T11:00:30Z"
    higher = pod("higher", cpu="1", node_name="n1", priority=6)
    higher["status"]["startTime"] = "2026-11-30T11:00:30Z"
    f = run([node("n1"), old, same, higher], "pod", "default", "old")
    assert f.preempted and f.node == "n1"
    assert [s.name for s in f.suspects] == ["higher"]


AFTER_FILE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "demo-after-job-1.json.gz"


@pytest.mark.parametrize("args, words", [
    (["pod/ablation-0", "-n", "researc"], '(found as research/ablation-0: use -n); and no Preempted event names it'),
    (["pod/ablaton-0", "-n", "research"], "(did you mean 'ablation-0'"),
    (["podgroup/protein-fld", "-n", "research"], "(did you mean 'protein-fold'?)"),
    (["podgroup/protein-fold", "-n", "ml"], "(found as research/protein-fold: use -n)"),
])
def test_a_name_not_found_suggests_the_closest_as_whatif_does(args, words):
    """why-preempted's not-found error names the closest pods, or the namespace that has the
    name (a typo of -n said only 'not found in namespace "researc"')."""
    r = CliRunner().invoke(app, ["why-preempted", *args, "--snapshot", str(AFTER_FILE)])
    assert r.exit_code == 2 and not r.stdout, r.output
    assert len(r.stderr.strip().splitlines()) == 1 and words in r.stderr, r.stderr


def test_a_group_on_several_nodes_says_nodes():
    r = CliRunner().invoke(app, ["why-preempted", "podgroup/protein-fold", "-n", "research", "--snapshot", str(AFTER_FILE)])
    assert r.exit_code == 0, r.output
    assert "Victim priority 100, on nodes gpu-a2, gpu-b3\n" in r.stdout  # was "on node gpu-a2, gpu-b3"
    one = CliRunner().invoke(app, ["why-preempted", "pod/ablation-0", "-n", "research", "--snapshot", str(AFTER_FILE)])
    assert "Victim priority 100, on node gpu-a3\n" in one.stdout
