"""`kubectl wap simulate` and the cycle simulator (issue 14): upstream's two "Binding first before
preemption" integration scenarios played through the queue, queue order deciding the victims, a
cascade of recreated victims two preemptions deep, a preemption storm detected and cut off,
victims kept for their grace period, Jobs out of retries, determinism, the demo, the schema."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.simulate import Options, simulate
from kubectl_wap.simulate import records as R
from kubectl_wap.snapshot.decode.owners import tap_pod_extras
from kubectl_wap.snapshot.source import build, raw_source

T0 = "2026-12-01T10:00:00Z"


def _pod(name: str, prio: int, cpu: str = "1", node: str | None = None, group: str | None = None, owner: tuple[str, str] | None = None,
         created: str = T0, scheduler: str | None = None, selector: dict | None = None, grace: int | None = None) -> dict:
    spec: dict = {"priority": prio, "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if scheduler:
        spec["schedulerName"] = scheduler
    if selector:
        spec["nodeSelector"] = selector
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    md: dict = {"namespace": "default", "name": name, "uid": name, "creationTimestamp": created}
    if owner:
        md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": "o-" + owner[1], "controller": True}]
    status: dict = {"phase": "Running" if node else "Pending"}
    if node:
        status["startTime"] = "2026-12-01T08:00:00Z"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status}


def _node(name: str, cpu: str, labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": "32"}}}


def _group(name: str, prio: int, min_count: int | None = None, created: str = T0) -> dict:
    policy = {"gang": {"minCount": min_count}} if min_count else {"basic": {}}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"namespace": "default", "name": name, "creationTimestamp": created},
            "spec": {"schedulingPolicy": policy, "priority": prio}}


def _write(tmp_path: Path, items: list[dict]) -> str:
    p = tmp_path / "cluster.json"
    p.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(p)


def _sim(path: str, **opts) -> R.Simulation:
    header, items = raw_source(path, False, None, None)
    extras: dict = {}
    snap = build(header, tap_pod_extras(items, extras))
    return simulate(snap, Options(**opts), extras)


def _cli(*args: str) -> dict:
    r = CliRunner().invoke(app, ["simulate", *args, "-o", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _steps(sim: R.Simulation) -> list[tuple]:
    return [(c.n, c.obj.name, c.action, [p for p, _ in c.placed], [v.name for v in c.victims]) for c in sim.cycles]


# ---- upstream: "Binding first before preemption" (podgroup/podgrouppreemption_test.go) ---------
# node1 (4 cpu) runs pg-pod-1, pg-pod-2 (members of pg1) and low-1 (priority 10); high-1 and high-2
# (pg1, priority 100) arrive; one cpu is free. Expected event order: Bind:high-1,
# PodGroupPostFilter:pg1 (victim low-1), Bind:high-2.

def _binding_first(tmp_path: Path, min_count: int | None) -> str:
    return _write(tmp_path, [
        _node("node1", "4"), _group("pg1", 100, min_count),
        _pod("pg-pod-1", 100, node="node1", group="pg1"), _pod("pg-pod-2", 100, node="node1", group="pg1"),
        _pod("low-1", 10, node="node1"),
        _pod("high-1", 100, group="pg1"), _pod("high-2", 100, group="pg1"),
    ])


@pytest.mark.parametrize("min_count", [None, 2], ids=["basic", "gang"])
def test_binding_first_then_preemption(tmp_path, min_count):
    sim = _sim(_binding_first(tmp_path, min_count))
    assert _steps(sim) == [
        (1, "pg1", R.BIND, ["default/high-1"], []),
        (2, "pg1", R.PREEMPT, ["default/high-2"], ["low-1"]),
        (3, "pg1", R.BIND, ["default/high-2"], []),
    ]
    assert sim.stop_reason == R.DONE and sim.pending == [] and sim.bound == 2


# ---- queue order decides the victims ---------------------------------------------------------
# Two pending pod groups of equal priority, one 2-cpu pod each; node a runs v-low (priority 10),
# node b runs v-mid (priority 20), each using the whole node. The first group in the queue takes
# the cheaper victim and is nominated there; the second must honour that nomination and takes the
# other. activeQ sorts by priority, then queue timestamp (creation).

def _two_groups(tmp_path: Path, first: str, prio_second: int = 100) -> str:
    second = "g2" if first == "g1" else "g1"
    return _write(tmp_path, [
        _node("a", "2"), _node("b", "2"),
        _pod("v-low", 10, "2", node="a"), _pod("v-mid", 20, "2", node="b"),
        _group(first, 100, created="2026-12-01T09:00:00Z"), _group(second, prio_second, created="2026-12-01T09:30:00Z"),
        _pod(f"{first}-0", 100, "2", group=first, created="2026-12-01T09:00:00Z"),
        _pod(f"{second}-0", prio_second, "2", group=second, created="2026-12-01T09:30:00Z"),
    ])


def _victims_of(sim: R.Simulation) -> dict[str, list[str]]:
    return {c.obj.name: [v.name for v in c.victims] for c in sim.cycles if c.action == R.PREEMPT}


def test_queue_order_changes_the_victims(tmp_path):
    assert _victims_of(_sim(_two_groups(tmp_path, "g1"))) == {"g1": ["v-low"], "g2": ["v-mid"]}
    assert _victims_of(_sim(_two_groups(tmp_path, "g2"))) == {"g2": ["v-low"], "g1": ["v-mid"]}


def test_priority_goes_before_age(tmp_path):
    # g2 is newer but of higher priority: it is first in activeQ and takes the cheaper victim.
    sim = _sim(_two_groups(tmp_path, "g1", prio_second=200))
    # g2 preempts, is woken by its victim's deletion and, still first in activeQ, binds.
    assert [(c.obj.name, c.action) for c in sim.cycles][:3] == [("g2", R.PREEMPT), ("g2", R.BIND), ("g1", R.PREEMPT)]
    assert _victims_of(sim) == {"g2": ["v-low"], "g1": ["v-mid"]}



def test_a_failed_attempt_goes_behind_the_entries_already_waiting(tmp_path):
    # AddUnschedulablePodIfNotPresent: "Refresh the timestamp since the pod is re-added" -
    # a's preempting attempt fails (a PostFilter result is a failed cycle), so when its victim's
    # deletion makes it active again it sorts after b, which has waited in activeQ since the
    # start with the same priority (PrioritySort.Less: equal priority, earlier timestamp first).
    # b finds n1 reserved by a's nomination (equal priority counts, addGENominatedPods) and
    # nothing lower to preempt; then a binds.
    path = _write(tmp_path, [_node("n1", "2"), _pod("low", 10, "2", node="n1"),
                             _pod("a", 100, "2", created="2026-12-01T10:00:00Z"),
                             _pod("b", 100, "2", created="2026-12-01T10:01:00Z")])
    assert [(c.obj.name, c.action) for c in _sim(path).cycles] == [("a", R.PREEMPT), ("b", R.UNSCHEDULABLE), ("a", R.BIND)]

# ---- a cascade two preemptions deep ----------------------------------------------------------
# p (priority 100, pinned to a) preempts b-0 (priority 50, a ReplicaSet's) on a; the ReplicaSet
# recreates it; the replacement has nowhere to go but b, where it preempts c-0 (priority 10); c-0
# comes back too and finds nothing of lower priority to preempt.

def _cascade(tmp_path: Path, owner_c: tuple[str, str] = ("ReplicaSet", "c")) -> str:
    return _write(tmp_path, [
        _node("a", "2", {"kubernetes.io/hostname": "a"}), _node("b", "2", {"kubernetes.io/hostname": "b"}),
        _pod("b-0", 50, "2", node="a", owner=("ReplicaSet", "b")),
        _pod("c-0", 10, "2", node="b", owner=owner_c),
        _pod("p", 100, "2", selector={"kubernetes.io/hostname": "a"}),
    ])


def test_cascade_of_depth_two(tmp_path):
    sim = _sim(_cascade(tmp_path))
    pre = [c for c in sim.cycles if c.action == R.PREEMPT]
    assert [(c.obj.name, [v.name for v in c.victims], c.depth) for c in pre][0] == ("p", ["b-0"], 1)
    second = pre[1]
    assert second.obj.name.startswith("b-") and second.obj.name != "b-0"  # the ReplicaSet's new pod
    assert [v.name for v in second.victims] == ["c-0"] and second.depth == 2 and second.caused_by == (pre[0].n,)
    recreated = [(e.pod, e.detail) for e in sim.events if e.kind == R.RECREATED]
    assert recreated[0] == ("default/b-0", f"default/{second.obj.name}")
    # c-0's replacement is the only thing left: nothing of lower priority to preempt.
    [left] = sim.pending
    assert left.obj.name.startswith("c-") and left.reason.endswith("preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.")
    doc = _cli("--snapshot", _cascade(tmp_path))
    assert doc["summary"]["cascadeDepth"] == 2
    [root] = doc["cascade"]
    assert root["object"]["name"] == "p" and root["victims"][0]["recreatedAs"] == f"default/{second.obj.name}"
    assert [k["victims"][0]["pod"] for k in root["then"]] == ["default/c-0"]


def test_job_out_of_retries_is_not_recreated(tmp_path):
    sim = _sim(_cascade(tmp_path), job_backoff_limit=0)  # b-0 is a ReplicaSet's: still recreated
    assert any(e.kind == R.RECREATED and e.pod == "default/b-0" for e in sim.events)
    sim = _sim(_cascade(tmp_path, owner_c=("Job", "c")), job_backoff_limit=0)
    assert [(e.kind, e.pod) for e in sim.events if e.pod == "default/c-0"] == [(R.JOB_FAILED, "default/c-0")]


def test_a_job_fails_only_past_its_backoff_limit(tmp_path):
    """job_controller.go: `exceedsBackoffLimit := jobCtx.failed > *job.Spec.BackoffLimit`: with
    backoffLimit 1 the first preempted pod is the one failure allowed, so it is recreated."""
    sim = _sim(_cascade(tmp_path, owner_c=("Job", "c")), job_backoff_limit=1)
    got = [e.kind for e in sim.events if e.pod == "default/c-0"]
    assert got == [R.RECREATED], f"got {got}, want [recreated] (1 failure is not more than backoffLimit 1)"


def test_no_recreation_when_off(tmp_path):
    sim = _sim(_cascade(tmp_path), recreate_victims=False)
    assert [c.obj.name for c in sim.cycles if c.action == R.PREEMPT] == ["p"]
    assert sim.stop_reason == R.DONE


# ---- a preemption storm (kubernetes issue #130429) -------------------------------------------
# v-0 belongs to another scheduler. p preempts it; its ReplicaSet recreates it and the other
# scheduler, which does not know p's nomination, puts it straight back on the node; p preempts
# it again, and again: the storm is reported and cut off at --storm-limit.

def _storm(tmp_path: Path) -> str:
    return _write(tmp_path, [
        _node("a", "2"),
        _pod("v-0", 10, "2", node="a", owner=("ReplicaSet", "v"), scheduler="other-scheduler"),
        _pod("p", 100, "2"),
    ])


def test_storm_is_detected_and_cut_off(tmp_path):
    sim = _sim(_storm(tmp_path), storm_limit=3)
    assert [(c.obj.name, c.action) for c in sim.cycles] == [("p", R.PREEMPT)] * 3
    assert [v.times for c in sim.cycles for v in c.victims] == [1, 2, 3]
    [storm] = sim.storms
    assert storm.victim == "default/v-0" and storm.cycles == [1, 2, 3] and storm.cut_off
    assert [(p.obj.name, p.reason.startswith("cut off: preemption storm")) for p in sim.pending] == [("p", True)]
    assert sum(1 for e in sim.events if e.kind == R.OTHER_SCHEDULER) == 3
    doc = _cli("--snapshot", _storm(tmp_path), "--storm-limit", "2")
    assert doc["storms"][0]["cycles"] == [1, 2] and doc["storms"][0]["cutOff"]
    assert doc["evictedMoreThanOnce"][0]["pod"] == "default/v-0" and doc["evictedMoreThanOnce"][0]["times"] == 2
    assert any("preemption storm" in w for w in doc["warnings"])


def test_storm_table_warns(tmp_path):
    r = CliRunner().invoke(app, ["simulate", "--snapshot", _storm(tmp_path)])
    assert r.exit_code == 0 and "WARNING: preemption storm: Pod default/p preempted the lineage of default/v-0 3 times" in r.stdout


# ---- grace periods -----------------------------------------------------------------------------

def test_grace_keeps_victims_until_their_grace_period_ends(tmp_path):
    path = _write(tmp_path, [_node("a", "2"), _pod("low", 10, "2", node="a", grace=45), _pod("p", 100, "2")])
    sim = _sim(path, grace=True)
    assert [c.action for c in sim.cycles] == [R.PREEMPT, R.BIND]
    assert sim.cycles[1].time - sim.cycles[0].time == 45
    assert [e.kind for e in sim.events if e.kind == R.TERMINATED] == [R.TERMINATED]
    instant = _sim(path)
    assert [c.action for c in instant.cycles] == [R.PREEMPT, R.BIND] and instant.cycles[1].time == instant.cycles[0].time


# ---- determinism, the demo, the schema ----------------------------------------------------------

def test_same_input_same_timeline(tmp_path):
    assert _cli("--demo") == _cli("--demo")
    assert _cli("--snapshot", _cascade(tmp_path)) == _cli("--snapshot", _cascade(tmp_path))


def test_demo_plays_to_the_end_and_names_who_preempted_whom():
    doc = _cli("--demo")
    assert doc["stopReason"] in (R.DONE, R.NO_PROGRESS)
    assert [(c["object"]["name"], c["action"]) for c in doc["cycles"] if c["action"] != R.UNSCHEDULABLE][:3] == [
        ("job-1", R.PREEMPT), ("small-eval", R.BIND), ("job-1", R.BIND)]
    assert {n["object"]["name"] for n in doc["cascade"]} == {"job-1", "urgent-report"}
    r = CliRunner().invoke(app, ["simulate", "--demo"])
    assert r.exit_code == 0 and "Who preempted whom" in r.stdout and "cycle 2: PodGroup ml/job-1" in r.stdout


@pytest.mark.parametrize("args", [["--demo"], ["--demo", "--grace"], ["--demo", "podgroup", "hypo", "-n", "ml", "--replicas", "4",
                                                                     "--requests", "nvidia.com/gpu=1", "--priority-class", "high-priority",
                                                                     "--toleration", "nvidia.com/gpu=present:NoSchedule"]])
def test_reports_validate(args):
    schema = json.loads(resources.files("kubectl_wap").joinpath("report/simulate-schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(_cli(*args)))
    assert not errors, [e.message for e in errors[:5]]


def test_bad_options_are_one_line_errors():
    for args, msg in ((["--max-cycles", "0"], "--max-cycles must be at least 1"), (["--at", "noon"], "--at: want an RFC 3339 time"),
                      (["podgroup", "x"], "TYPE NAME names only hypothetical work")):
        r = CliRunner().invoke(app, ["simulate", "--demo", *args])
        assert r.exit_code == 2 and msg in r.output, r.output


def test_docs_examples():
    docs = Path(__file__).parent.parent / "docs" / "examples"
    cascade = _cli("--snapshot", str(docs / "simulate-cascade.yaml"))
    assert cascade["summary"]["cascadeDepth"] == 2 and cascade["stopReason"] == R.NO_PROGRESS
    assert [p["name"].startswith("etl-28931-") for p in cascade["pending"]] == [True]
    storm = _cli("--snapshot", str(docs / "simulate-storm.yaml"))
    assert [s["cutOff"] for s in storm["storms"]] == [True] and storm["summary"]["evictedPods"] == 3


def test_failed_postfilter_clears_the_pods_nomination(tmp_path):
    # p was nominated to a in an earlier cycle; nothing of lower priority runs anywhere now:
    # PostFilter finds no candidate and clears the nomination (preemption.go evaluate).
    path = _write(tmp_path, [_node("a", "2"), _pod("big", 100, "2", node="a"), _pod("p", 100, "2")])
    data = json.loads(Path(path).read_text())
    data["items"][2]["status"]["nominatedNodeName"] = "a"
    Path(path).write_text(json.dumps(data))
    header, items = raw_source(path, False, None, None)
    snap = build(header, items)
    from kubectl_wap.simulate.engine import Simulator

    s = Simulator(snap, Options(), {}, 0.0)
    sim = s.run()
    assert [c.action for c in sim.cycles] == [R.UNSCHEDULABLE]
    assert s.w.pods["p"].nominated_node_name == "" and s.w.sched.nominated == {}


def test_a_terminating_victim_is_not_deleted_again(tmp_path):
    # low was already terminating in the snapshot (grace period 60 s): p counts it as its victim,
    # but nothing is deleted or recreated for it again; p binds when low's grace period ends.
    path = _write(tmp_path, [_node("a", "2"), _pod("low", 10, "2", node="a", grace=60, owner=("ReplicaSet", "low")), _pod("p", 100, "2")])
    data = json.loads(Path(path).read_text())
    data["items"][1]["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:00Z"
    Path(path).write_text(json.dumps(data))
    sim = _sim(path)
    assert [(c.action, [v.name for v in c.victims]) for c in sim.cycles] == [(R.PREEMPT, ["low"]), (R.BIND, [])]
    assert [e.kind for e in sim.events] == [R.TERMINATED]
    assert sim.cycles[1].time == _ts("2026-12-01T10:01:00Z")


def _ts(t: str) -> float:
    import datetime as dt

    return dt.datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()


def test_statefulset_victim_comes_back_with_its_name(tmp_path):
    path = _write(tmp_path, [_node("a", "2"), _node("b", "1"), _pod("db-0", 10, "2", node="a", owner=("StatefulSet", "db")), _pod("p", 100, "2")])
    sim = _sim(path)
    [ev] = [e for e in sim.events if e.kind == R.RECREATED]
    assert (ev.pod, ev.detail) == ("default/db-0", "default/db-0")
    assert [p.obj.name for p in sim.pending] == ["db-0"]  # nowhere to go: b is too small


def test_max_cycles_bounds_the_run():
    doc = _cli("--demo", "--max-cycles", "3")
    assert doc["stopReason"] == R.MAX_CYCLES and len(doc["cycles"]) == 3
    assert any(p["reason"].startswith("not attempted before the simulation stopped") for p in doc["pending"])


def test_no_headers_prints_only_the_timeline_rows() -> None:
    """--no-headers is for scripts: the timeline's rows alone (as whatif prints only its victims'),
    not the summary, the Still pending rows run on after them, and the Totals."""
    from typer.testing import CliRunner

    from kubectl_wap.cli import app

    full = CliRunner().invoke(app, ["simulate", "--demo", "-o", "json"])
    cycles = json.loads(full.stdout)["cycles"]
    r = CliRunner().invoke(app, ["simulate", "--demo", "--no-headers"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert [int(ln.split()[0]) for ln in lines] == [c["n"] for c in cycles]
    assert [ln.split()[2] for ln in lines] == [f"{c['object']['namespace']}/{c['object']['name']}" for c in cycles]
