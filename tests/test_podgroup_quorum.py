"""GangScheduling's PreEnqueue quorum (framework/podgroup.py quorum_wait) and the queue's
nominator (framework/nominated.py nominator_pods), each rule on the smallest cluster that shows it.
The same clusters, as scenario fixtures (wap-quorum-*, pod-nominated-*), are checked against the
real kube-scheduler v1.37.2 and v1.38.0-beta.0 by the oracle tier."""

from __future__ import annotations

from builders import make_cpg, make_node, make_pod, make_podgroup

from kubectl_wap.framework.groups import GroupIndex
from kubectl_wap.framework.nominated import nominator_pods
from kubectl_wap.framework.podgroup import quorum_wait
from kubectl_wap.model import SnapshotHeader
from kubectl_wap.snapshot.decode.convert import build_snapshot

T = 1_795_000_000


def _index(items):
    snap = build_snapshot([dict(o) for o in items], SnapshotHeader(source="test"))
    return snap, GroupIndex.build(snap)


def _member(name, group, **kw):
    p = make_pod(name).priority(1000).req(cpu="1", memory="64Mi").group(group)
    if kw.get("node"):
        p.on(kw["node"], start=T)
    if kw.get("scheduler"):
        p.scheduler(kw["scheduler"])
    if kw.get("gated"):
        p.gated("example.com/wait")
    return p.obj()


def test_gang_short_of_pods_waits():
    _, gi = _index([make_podgroup("job").gang(3).obj(), _member("a", "job"), _member("b", "job")])
    msg = quorum_wait(gi, gi.pgs[("default", "job")])
    assert msg and "waiting for minCount pods" in msg and "2 of 3" in msg


def test_running_and_gated_members_count_toward_the_quorum():
    # isPGReady counts AllPodsCount: bound members (of any scheduler) and every pending pod the
    # queue knows of, gated ones included
    items = [make_node("n1").obj(), make_podgroup("job").gang(3).obj(), _member("a", "job"),
             _member("r", "job", node="n1", scheduler="volcano"), _member("g", "job", gated=True)]
    _, gi = _index(items)
    assert quorum_wait(gi, gi.pgs[("default", "job")]) is None


def test_another_schedulers_pending_pod_does_not_count():
    _, gi = _index([make_podgroup("job").gang(2).obj(), _member("a", "job"), _member("v", "job", scheduler="volcano")])
    assert quorum_wait(gi, gi.pgs[("default", "job")])


def test_basic_group_needs_one_pod():
    _, gi = _index([make_podgroup("job").obj(), _member("a", "job")])
    assert quorum_wait(gi, gi.pgs[("default", "job")]) is None


def test_cpg_tree_needs_min_group_count_ready_children():
    items = [make_cpg("tree").gang(2).obj(), make_podgroup("c0").gang(1).parent("tree").obj(),
             make_podgroup("c1").gang(2).parent("tree").obj(), _member("c0-0", "c0"), _member("c1-0", "c1")]
    _, gi = _index(items)
    msg = quorum_wait(gi, gi.cpgs[("default", "tree")])
    assert msg and "1 of 2" in msg
    _, gi = _index(items + [_member("c1-1", "c1")])
    assert quorum_wait(gi, gi.cpgs[("default", "tree")]) is None


def test_nested_tree_counts_ready_subtrees():
    items = [make_cpg("tree").gang(1).obj(), make_cpg("mid").gang(2).parent("tree").obj(),
             make_podgroup("c0").parent("mid").obj(), make_podgroup("c1").parent("mid").obj(), _member("c0-0", "c0")]
    _, gi = _index(items)
    assert quorum_wait(gi, gi.cpgs[("default", "tree")])  # mid has 1 of 2 ready children
    _, gi = _index(items + [_member("c1-0", "c1")])
    assert quorum_wait(gi, gi.cpgs[("default", "tree")]) is None


def test_nominator_holds_gated_pods_but_not_another_schedulers():
    items = [make_node("n1").obj(),
             make_pod("mine").priority(10).req(cpu="1").nominated("n1").obj(),
             make_pod("gated").priority(10).req(cpu="1").nominated("n1").gated("x/y").obj(),
             make_pod("theirs").priority(10).req(cpu="1").nominated("n1").scheduler("volcano").obj(),
             make_pod("plain").priority(10).req(cpu="1").obj()]
    snap, _ = _index(items)
    assert sorted(p.name for p in nominator_pods(snap.pods)) == ["gated", "mine"]


def test_pending_blames_missing_pods_only_when_the_tree_misses_its_quorum(tmp_path):
    import json

    from typer.testing import CliRunner

    from kubectl_wap.cli import app

    base = [make_node("n1").alloc(cpu="4", memory="8Gi").obj(), make_podgroup("c0").gang(1).parent("tree").obj(),
            make_podgroup("c1").gang(2).parent("tree").obj(), _member("c0-0", "c0"), _member("c1-0", "c1")]
    reasons = {}
    for need in (1, 2):
        f = tmp_path / f"t{need}.json"
        f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [make_cpg("tree").gang(need).obj(), *base]}))
        r = CliRunner().invoke(app, ["pending", "-A", "--snapshot", str(f), "-o", "json", "--scheduler-version", "1.37"])
        assert r.exit_code == 0, r.output
        (row,) = [i for i in json.loads(r.stdout)["items"] if i["name"] == "tree"]
        reasons[need] = row["reason"]
    assert "not created yet" in reasons[2]  # c1 short of pods: the tree misses minGroupCount 2
    assert "not created yet" not in reasons[1]  # c0 alone meets minGroupCount 1: the tree is queued
