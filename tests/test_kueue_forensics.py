"""`why-preempted` on a Kueue cluster: the Workloads Kueue preempted are reported beside
kube-scheduler's evidence, never as it. Kueue v0.17.0 (pkg/scheduler/preemption/preemption.go,
IssuePreemptions) evicts a target Workload with a Preempted condition (workload.SetPreemptedCondition)
and records a "Preempted" event on it whose message is preemptionMessage's

    Preempted to accommodate a workload (UID: %s, JobUID: %s) due to %s; preemptor path: %s; preemptee path: %s

followed by "; preemptor effective priority: ..." (the event only); %s after "due to" is
HumanReadablePreemptionReasons[reason]. The job integration then stops the job, which removes its
pods: none of them gets kube-scheduler's DisruptionTarget condition or Preempted event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from diagnose_builders import node, pod
from kueue_builders import WL
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.diagnose.forensics import why_preempted
from kubectl_wap.snapshot.decode.convert import build_snapshot
from kubectl_wap.snapshot.decode.evidence import KueuePreemption, collect_evidence, kueue_preemptions, pod_controllers

REPORT = Path(__file__).resolve().parent.parent / "kubectl_wap" / "report"
KUEUE = "kueue.x-k8s.io/v1beta2"


def _owned(obj: dict[str, Any], kind: str, name: str, controller: bool = True) -> dict[str, Any]:
    obj["metadata"].setdefault("ownerReferences", []).append({"apiVersion": "batch/v1", "kind": kind, "name": name,
                                                               "uid": f"uid-{name}", "controller": controller})
    return obj


def _workload(name: str, ns: str = "team", preempted_at: str | None = None, job: str | None = None) -> dict[str, Any]:
    w = WL(name, ns).queue("lq").priority(10).request(cpu="1").build()
    w.update(apiVersion=KUEUE, kind="Workload")
    if job:
        _owned(w, "Job", job)  # jobframework: ctrl.SetControllerReference(job, wl)
    if preempted_at:
        w["status"] = {"conditions": [
            {"type": "Evicted", "status": "True", "reason": "Preempted", "lastTransitionTime": preempted_at},
            {"type": "Preempted", "status": "True", "reason": "InClusterQueue", "lastTransitionTime": preempted_at}]}
    return w


def _kueue_event(target: str, preemptor_uid: str, ns: str = "team", reason: str = "prioritization in the ClusterQueue",
                 at: str = "2026-11-30T11:00:05Z") -> dict[str, Any]:
    message = (f"Preempted to accommodate a workload (UID: {preemptor_uid}, JobUID: job-uid-1) due to {reason}; "
               "preemptor path: /cq-a; preemptee path: /cq-a; preemptor effective priority: 100 (base: 100, boost: 0); "
               "preemptee effective priority: 10 (base: 10, boost: 0)")
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{target}.1", "namespace": ns}, "reason": "Preempted",
            "type": "Normal", "message": message, "lastTimestamp": at,
            "involvedObject": {"apiVersion": KUEUE, "kind": "Workload", "namespace": ns, "name": target, "uid": f"{ns}-{target}"}}


def _cluster(events: bool = True) -> list[dict[str, Any]]:
    items = [node("n1", cpu="8"), _owned(pod("train-0", ns="team", node_name="n1", priority=10), "Job", "train"),
             pod("web-0", ns="team", node_name="n1", priority=10),
             _workload("job-train-abc12", preempted_at="2026-11-30T11:00:04Z", job="train"),
             _workload("job-urgent-77f3a", job="urgent")]
    if events:
        items.append(_kueue_event("job-train-abc12", "team-job-urgent-77f3a"))
    return items


def test_the_preempted_workload_and_its_preemptor_are_read_from_the_condition_and_the_event() -> None:
    found = kueue_preemptions(_cluster())
    assert found == [KueuePreemption("team", "job-train-abc12", found[0].time, "prioritization in the ClusterQueue",
                                     "team/job-urgent-77f3a", "team-job-urgent-77f3a", ("Job/train",))]
    assert found[0].time == pytest.approx(1796036404.0)  # the condition's time, not the event's
    # Without events the condition is left: its reason (HumanReadablePreemptionReasons' words for
    # InClusterQueue), no preemptor (its message is not in this condition).
    assert kueue_preemptions(_cluster(events=False)) == [KueuePreemption(
        "team", "job-train-abc12", found[0].time, "prioritization in the ClusterQueue", owners=("Job/train",))]
    # A preemptor no longer in the state keeps its UID only; a Workload named only by the event is still one.
    gone = kueue_preemptions([_kueue_event("job-x", "uid-gone", reason="reclamation within the cohort")])
    assert gone == [KueuePreemption("team", "job-x", gone[0].time, "reclamation within the cohort", "", "uid-gone")]


def _message(uid: str) -> str:
    return (f"Preempted to accommodate a workload (UID: {uid}, JobUID: j1) due to reclamation within the cohort; "
            "preemptor path: /co/cq-b; preemptee path: /co/cq-a")


def test_the_condition_s_message_names_the_preemptor_and_a_readmitted_workload_is_still_one() -> None:
    """A dump keeps the condition's message (SetPreemptedCondition's is preemptionMessage's); once
    Kueue admits the Workload again the condition is False, its message "Previously: " + the old one
    and its time the readmission's (SetQuotaReservation, resetActiveCondition)."""
    now = _workload("job-a-1", preempted_at="2026-11-30T11:00:04Z")
    now["status"]["conditions"][1]["message"] = _message("team-job-urgent-77f3a")
    again = _workload("job-b-2", preempted_at="2026-11-30T11:00:04Z")
    again["status"]["conditions"] = [{"type": "Preempted", "status": "False", "reason": "QuotaReserved",
                                      "message": "Previously: " + _message("uid-gone"), "lastTransitionTime": "2026-11-30T11:20:00Z"}]
    found = {k.workload: k for k in kueue_preemptions([now, again, _workload("job-urgent-77f3a")])}
    assert (found["job-a-1"].preemptor, found["job-a-1"].reason, found["job-a-1"].readmitted) == (
        "team/job-urgent-77f3a", "reclamation within the cohort", False)
    b = found["job-b-2"]
    assert (b.readmitted, b.preemptor_uid, b.reason, b.time) == (True, "uid-gone", "reclamation within the cohort", None)
    assert b.readmitted_at == pytest.approx(1796037600.0)  # not a preemption time
    # Without its message (a snapshot): still a preemption, readmitted, nothing more known.
    del again["status"]["conditions"][0]["message"]
    b = kueue_preemptions([again])[0]
    assert (b.readmitted, b.reason, b.preemptor_uid) == (True, "", "")


def test_an_event_of_an_earlier_workload_of_that_name_is_not_this_one_s_and_the_newest_counts() -> None:
    w = _workload("job-a-1")  # no Preempted condition: this Workload was never preempted
    old = _kueue_event("job-a-1", "uid-x", at="2026-11-30T10:00:00Z")
    old["involvedObject"]["uid"] = "an-earlier-uid"
    assert kueue_preemptions([w, old]) == []
    first = _kueue_event("job-a-1", "uid-1", at="2026-11-30T10:00:00Z")
    second = _kueue_event("job-a-1", "uid-2", at="2026-11-30T10:30:00Z")
    assert [k.preemptor_uid for k in kueue_preemptions([w, second, first])] == ["uid-2"]


def test_kueue_s_event_is_no_evidence_of_kube_scheduler_even_for_a_pod_of_the_same_name() -> None:
    """kube-scheduler records its Preempted event on the victim pod (executor.go PreemptPod); one
    on a Workload is Kueue's, whatever it is named."""
    items = [node("n1", cpu="8"), pod("job-train-abc12", ns="team", node_name="n1", priority=10),
             _kueue_event("job-train-abc12", "team-job-urgent-77f3a")]
    conds, events = collect_evidence(items)
    assert events == []
    f = why_preempted(build_snapshot(items), conds, events, "pod", "team", "job-train-abc12", kueue=kueue_preemptions(items))
    assert not f.preempted and not f.suspects
    assert [k.workload for k in f.kueue] == ["job-train-abc12"]


def _snapshot(tmp_path: Path, items: list[dict[str, Any]], name: str = "kueue.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(p)


@pytest.mark.parametrize("victim, own", [("train-0", True), ("web-0", False)])
def test_why_preempted_reports_kueue_s_preemptions_in_the_namespace(tmp_path: Path, victim: str, own: bool) -> None:
    """train-0 belongs to Job train, whose Workload Kueue preempted: "this pod's Workload"; web-0
    to no Workload: the namespace's preemption is listed, as no answer about web-0."""
    jsonschema = pytest.importorskip("jsonschema")
    snap = _snapshot(tmp_path, _cluster())
    out = CliRunner().invoke(app, ["why-preempted", "pod", victim, "-n", "team", "--snapshot", snap, "-o", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    jsonschema.validate(doc, json.loads((REPORT / "forensics-schema.json").read_text()))
    assert not doc["preempted"]
    assert doc["kueuePreemptions"] == [{"namespace": "team", "workload": "job-train-abc12", "time": "2026-11-30T11:00:04Z",
                                        "reason": "prioritization in the ClusterQueue", "preemptor": "team/job-urgent-77f3a",
                                        "preemptorUID": "team-job-urgent-77f3a", "victimsWorkload": own,
                                        "readmitted": False, "readmittedAt": None}]
    assert doc["preemptedBy"] == ("Kueue" if own else None)
    table = CliRunner().invoke(app, ["why-preempted", "pod", victim, "-n", "team", "--snapshot", snap])
    assert table.exit_code == 0, table.output
    text = " ".join(table.stdout.split())
    whose = "this pod's Workload" if own else "Workload"
    assert (f"Kueue preempted {whose} team/job-train-abc12 at 2026-11-30T11:00:04Z to admit Workload "
            "team/job-urgent-77f3a, due to prioritization in the ClusterQueue") in text
    headline = (f"Pod team/{victim}: preempted by Kueue (its Workload job-train-abc12), not by kube-scheduler" if own else
                f"Pod team/{victim}: no sign of preemption by kube-scheduler")
    assert text.startswith(headline)
    assert ("deleted another way" in text) is not own  # the generic guess is not made when Kueue's answer is there
    assert "they carry none of kube-scheduler's evidence above" in text


def test_a_plain_pod_group_s_workload_is_found_through_its_pods() -> None:
    """Kueue's pod integration makes a group's Workload owned by each pod (SetOwnerReference, no
    controller); a single pod's by the pod as controller (jobframework)."""
    group = _workload("pod-group-a-1f2e3", preempted_at="2026-11-30T11:00:04Z")
    for n in ("a-0", "a-1"):
        _owned(group, "Pod", n, controller=False)
    single = _owned(_workload("pod-solo-9a8b7", preempted_at="2026-11-30T11:00:04Z"), "Pod", "solo")
    items = [node("n1", cpu="8"), pod("a-1", ns="team", node_name="n1"), pod("solo", ns="team", node_name="n1"), group, single]
    conds, events = collect_evidence(items)
    snap = build_snapshot(items)
    for victim, wl in (("a-1", "pod-group-a-1f2e3"), ("solo", "pod-solo-9a8b7")):
        f = why_preempted(snap, conds, events, "pod", "team", victim, kueue=kueue_preemptions(items))
        assert f.kueue_owner == wl


def test_no_kueue_preemption_no_key(tmp_path: Path) -> None:
    """Another namespace's preemptions, or none: the document is as before."""
    snap = _snapshot(tmp_path, [*_cluster(), pod("api-0", ns="web", node_name="n1")])
    out = CliRunner().invoke(app, ["why-preempted", "pod", "api-0", "-n", "web", "--snapshot", snap, "-o", "json"])
    assert out.exit_code == 0, out.output
    assert "kueuePreemptions" not in json.loads(out.stdout)


def test_a_gone_pod_on_a_kueue_cluster_points_at_kueue_s_preemptions(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, _cluster())
    out = CliRunner().invoke(app, ["why-preempted", "pod", "trainer-7", "-n", "team", "--snapshot", snap])
    assert out.exit_code == 2
    err = " ".join(out.stderr.split())
    assert "no Preempted event names it" in err
    assert ("Kueue preempted Workload(s) job-train-abc12 in this namespace: Kueue's preemption stops a Workload's job, "
            "which removes its pods (ask: why-preempted workload NAME)") in err
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.output


def test_a_redacted_snapshot_keeps_the_condition_and_drops_kueue_s_message() -> None:
    from kubectl_wap.snapshot.share.redact import redactor_for

    items = _cluster()
    r = redactor_for(items, b"k" * 16)
    red = [r.item(o) for o in items]
    event = next(o for o in red if o.get("kind") == "Event")
    assert "message" not in event  # not kube-scheduler's "Preempted by ..." shape: dropped, UIDs and paths with it
    found = kueue_preemptions(red)
    assert len(found) == 1 and found[0].preemptor == "" and found[0].reason == ""
    assert found[0].workload != "job-train-abc12" and found[0].time is not None  # hashed name, the condition's time


def test_why_preempted_workload_answers_from_kueue_s_evidence(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    snap = _snapshot(tmp_path, _cluster())
    runner = CliRunner()
    out = runner.invoke(app, ["why-preempted", "workload", "job-train-abc12", "-n", "team", "--snapshot", snap, "-o", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    jsonschema.validate(doc, json.loads((REPORT / "forensics-schema.json").read_text()))
    assert doc["victim"]["kind"] == "Workload" and not doc["preempted"] and doc["replay"] is None
    assert [k["victimsWorkload"] for k in doc["kueuePreemptions"]] == [True]
    table = runner.invoke(app, ["why-preempted", "workload/job-train-abc12", "-n", "team", "--snapshot", snap])
    text = " ".join(table.stdout.split())
    assert text.startswith("Workload team/job-train-abc12: preempted by Kueue")
    assert ("Kueue preempted it at 2026-11-30T11:00:04Z to admit Workload team/job-urgent-77f3a, "
            "due to prioritization in the ClusterQueue") in text
    assert doc["preemptedBy"] == "Kueue"
    name = runner.invoke(app, ["why-preempted", "wl", "job-train-abc12", "-n", "team", "--snapshot", snap, "-o", "name"])
    assert name.stdout == "workload.kueue.x-k8s.io/job-urgent-77f3a\n"
    # Not preempted: said so; without events: no preemptor, and the answer says where it would be.
    calm = runner.invoke(app, ["why-preempted", "workload", "job-urgent-77f3a", "-n", "team", "--snapshot", snap])
    assert "Workload team/job-urgent-77f3a: no sign of preemption by Kueue" in " ".join(calm.stdout.split())
    quiet = _snapshot(tmp_path, _cluster(events=False), "quiet.json")
    out = runner.invoke(app, ["why-preempted", "workload", "job-train-abc12", "-n", "team", "--snapshot", quiet, "-o", "json"])
    doc = json.loads(out.stdout)
    assert doc["kueuePreemptions"][0]["preemptor"] is None
    assert any("kubectl wap snapshot --events" in u for u in doc["uncertainty"])


def test_a_readmitted_workload_was_preempted_earlier(tmp_path: Path) -> None:
    """The Preempted condition turned False by the readmission (resetActiveCondition): "preempted by
    Kueue", admitted again since its time, which is not given as the preemption's."""
    items = _cluster(events=False)
    wl = next(o for o in items if o.get("kind") == "Workload" and o["metadata"]["name"] == "job-train-abc12")
    wl["status"]["conditions"] = [{"type": "Preempted", "status": "False", "reason": "QuotaReserved",
                                   "message": "Previously: " + _message("team-job-urgent-77f3a"),
                                   "lastTransitionTime": "2026-11-30T11:20:00Z"}]
    snap = _snapshot(tmp_path, items)
    out = CliRunner().invoke(app, ["why-preempted", "workload", "job-train-abc12", "-n", "team", "--snapshot", snap])
    text = " ".join(out.stdout.split())
    assert text.startswith("Workload team/job-train-abc12: preempted by Kueue")
    assert ("Kueue preempted it to admit Workload team/job-urgent-77f3a, due to reclamation within the cohort; "
            "admitted again since 2026-11-30T11:20:00Z") in text


def test_an_unknown_workload_is_one_line_with_the_closest_name(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path, _cluster())
    out = CliRunner().invoke(app, ["why-preempted", "workload", "job-train-abc21", "-n", "team", "--snapshot", snap])
    assert out.exit_code == 2
    err = out.stderr.strip()
    assert len(err.splitlines()) == 1
    assert 'workload "job-train-abc21" not found in namespace "team"' in err and "job-train-abc12" in err
    out = CliRunner().invoke(app, ["why-preempted", "workload", "job-train-abc12", "-n", "web", "--snapshot", snap])
    assert "found as team/job-train-abc12: use -n" in out.stderr
    none = _snapshot(tmp_path, [node("n1", cpu="8")], "none.json")
    out = CliRunner().invoke(app, ["why-preempted", "workload", "x", "-n", "team", "--snapshot", none])
    assert "the cluster state holds no Kueue Workloads" in out.stderr


def test_live_why_preempted_reads_kueue_s_event(tmp_path: Path) -> None:
    """Live: the Workloads (Kueue's lists) and the Preempted events (read for why-preempted) come
    from the API server, and the preemptor is named from the event."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from fake_apiserver import FakeApiServer

    with FakeApiServer(_cluster()) as srv:
        kc = str(srv.write_kubeconfig(tmp_path / "kc"))
        out = CliRunner().invoke(app, ["why-preempted", "pod", "train-0", "-n", "team", "--kubeconfig", kc, "-o", "json"])
        assert out.exit_code == 0, out.output
        doc = json.loads(out.stdout)
        assert [(k["workload"], k["preemptor"], k["victimsWorkload"]) for k in doc["kueuePreemptions"]] == [
            ("job-train-abc12", "team/job-urgent-77f3a", True)]
        assert all(r.method == "GET" for r in srv.requests)


def test_a_jobset_s_pod_is_matched_as_kueue_finds_it() -> None:
    """A JobSet's pods belong to its child Jobs (their controller is Job js-workers-0), the Workload
    to the JobSet: Kueue's JobSet integration finds the pods by jobset.sigs.k8s.io/jobset-name
    (jobset_controller.go PodLabelSelector), and so do we. A RayJob's pods are found through a
    RayCluster name kept in the RayJob's status, which no input here carries: not matched."""
    wl = _owned(_workload("jobset-js-1a2b3", preempted_at="2026-11-30T11:00:04Z"), "JobSet", "js")
    member = _owned(pod("js-workers-0-0", ns="team", node_name="n1", labels={"jobset.sigs.k8s.io/jobset-name": "js"}),
                    "Job", "js-workers-0")
    stranger = _owned(pod("other-0", ns="team", node_name="n1", labels={"jobset.sigs.k8s.io/jobset-name": "other"}),
                      "Job", "other-workers-0")
    ray = _owned(_workload("rayjob-rj-9f8e7", preempted_at="2026-11-30T11:00:04Z"), "RayJob", "rj")
    raypod = _owned(pod("rj-head-0", ns="team", node_name="n1", labels={"ray.io/cluster": "rj-raycluster-x"}),
                    "RayCluster", "rj-raycluster-x")
    items = [node("n1", cpu="8"), member, stranger, raypod, wl, ray]
    conds, events = collect_evidence(items)
    snap = build_snapshot(items)
    kueued = kueue_preemptions(items)
    got = {v: why_preempted(snap, conds, events, "pod", "team", v, kueue=kueued, controllers=pod_controllers(items)).kueue_owner
           for v in ("js-workers-0-0", "other-0", "rj-head-0")}
    assert got == {"js-workers-0-0": "jobset-js-1a2b3", "other-0": "", "rj-head-0": ""}


def test_the_items_are_read_once() -> None:
    """A snapshot file's items stream: the Workloads and the events after them are read in one pass."""
    assert kueue_preemptions(iter(_cluster())) == kueue_preemptions(_cluster())
    assert [k.preemptor for k in kueue_preemptions(iter(_cluster()))] == ["team/job-urgent-77f3a"]
