"""framework/nominated.py: the per-priority sums of nominated pods and the all-nodes resource check
give the same feasible nodes and statuses as filtering node by node with the nominated pods added
(RunFilterPluginsWithNominatedPods), also after nominated pods are placed and nominations move."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_wap.framework.filtering import filter_node, pre_filter
from kubectl_wap.framework.schedule_one import Scheduler
from kubectl_wap.framework.state import ClusterState
from kubectl_wap.model import Node, Pod


def _reference(sched: Scheduler, pod: Pod) -> set[int]:
    """Per node, as upstream: Filter with the counted nominated pods added, then without."""
    state = sched.state
    cycle = pre_filter(state, pod)
    ok = set()
    for i in range(len(state.nodes)):
        noms = [p for p in sched.nominated.get(i, ()) if p.uid != pod.uid and (p.priority or 0) >= (pod.priority or 0) and not state.has(p)]
        if noms:
            extra = sum((state.dense_request(p) for p in noms), start=state.dense_request(noms[0]) * 0)
            if not filter_node(state, sched.static, pod, cycle, i, extra, len(noms), []).ok:
                continue
        if filter_node(state, sched.static, pod, cycle, i).ok:
            ok.add(i)
    return ok


@st.composite
def clusters(draw):
    n = draw(st.integers(1, 5))
    nodes = [Node(f"n{i}", labels={"kubernetes.io/hostname": f"n{i}"},
                  allocatable={"cpu": draw(st.sampled_from([2000, 4000])), "memory": 8 << 30, "pods": draw(st.sampled_from([3, 20]))})
             for i in range(n)]
    running = [Pod("d", f"r{j}", uid=f"r{j}", node_name=f"n{draw(st.integers(0, n - 1))}", phase="Running",
                   requests={"cpu": draw(st.sampled_from([500, 1000]))}) for j in range(draw(st.integers(0, 6)))]
    nominated = [Pod("d", f"m{j}", uid=f"m{j}", nominated_node_name=f"n{draw(st.integers(0, n - 1))}",
                     priority=draw(st.sampled_from([10, 100])),
                     requests={"cpu": draw(st.sampled_from([500, 1500])), **({"example.com/gpu": 1} if draw(st.booleans()) else {})})
                 for j in range(draw(st.integers(0, 6)))]
    pods = [Pod("d", f"q{j}", uid=f"q{j}", priority=draw(st.sampled_from([10, 50, 100])),
                requests={"cpu": draw(st.sampled_from([100, 1000, 2500]))}) for j in range(3)]
    placed = draw(st.lists(st.integers(0, max(0, len(nominated) - 1)), max_size=3))
    return nodes, running, nominated, pods, placed


@settings(max_examples=200, deadline=None)
@given(clusters())
def test_vectorized_nominated_check_matches_per_node(c) -> None:
    nodes, running, nominated, pods, placed = c
    state = ClusterState(nodes, running)
    sched = Scheduler(state, nominated)
    for step in range(3):
        for pod in pods + nominated[:1]:  # a nominated pod is never filtered against itself
            feasible, _ = sched.feasible_nodes(pod, pre_filter(state, pod), with_statuses=False)
            assert set(feasible.tolist()) == _reference(sched, pod)
            feasible, statuses = sched.feasible_nodes(pod, pre_filter(state, pod), with_statuses=True)
            assert set(feasible.tolist()) == _reference(sched, pod)
            for i, s in statuses.items():
                assert not s.ok and i not in set(feasible.tolist())
        # Place some nominated pods (they stop counting), then move a nomination.
        if step == 0:
            for k in (k for k in placed if k < len(nominated)):
                p = nominated[k]
                if not state.has(p):
                    state.add_pod(p, state.node_index[p.nominated_node_name])
        elif step == 1 and nominated:
            p = nominated[-1]
            for lst in sched.nominated.values():
                if p in lst:
                    lst.remove(p)
            sched.nominated.setdefault(0, []).append(p)
            sched.noms.changed()


def test_placing_a_pod_with_a_resource_new_to_the_state() -> None:
    # Found by the property above on a clean CI run: ClusterState._apply took the node's row
    # before the pod's pairs added the new resource's column, and wrote past the old row.
    state = ClusterState([Node("n0", labels={}, allocatable={"cpu": 2000, "pods": 10})], [])
    p = Pod("d", "m", uid="m", requests={"cpu": 500, "example.com/gpu": 1})
    state.add_pod(p, 0)
    assert state.requested[0, state.res_index["example.com/gpu"]] == 1
    state.remove_pod(p)
    assert state.requested[0].sum() == 0


def test_reprieval_replay_counts_a_higher_priority_nominated_pod() -> None:
    """selectVictimsOnDomain replays the placement with Filter *with nominated pods*
    (RunFilterPluginsWithNominatedPods): a higher-priority pod nominated to the node keeps its
    room. Node n0 (1000m) runs victim v (400m); h (2000, 400m) is nominated to n0 but not bound;
    the gang pod (1000, 400m) fits on n0 only with v gone (1000 - 400 - 400 = 200m otherwise), so
    v is a victim. Ignoring the nominated pod's requests in the per-node check would spare v
    (the survivor `nominated-fast-path` of tests/mutants.py)."""
    from kubectl_wap.model import PodGroup, Snapshot
    from kubectl_wap.preemption.analyze import analyze
    from test_properties import GI, HOSTNAME, _pod

    nodes = [Node(name="n0", labels={HOSTNAME: "n0"}, allocatable={"cpu": 1000, "memory": 8 * GI, "pods": 110})]
    pods = [
        _pod("default", "v", 400, 0, node="n0", prio=0, start=1.0),
        _pod("default", "h", 400, 0, prio=2000, nominated_node_name="n0"),
        _pod("ml", "pre-0", 400, 0, prio=1000, group="pre"),
    ]
    snap = Snapshot(nodes=nodes, pods=pods, pod_groups=[PodGroup("ml", "pre", policy="gang", min_count=1, priority=1000)])
    for fast in (True, False):
        res = analyze(snap, "podgroup", "ml", "pre", fast=fast)
        assert res.outcome == "Preempt", res.message
        assert [(p.key, n) for p, n in res.placements] == [("ml/pre-0", "n0")]
        assert [p.key for p in res.victim_pods] == ["default/v"]
        assert res.victims[0].failed_status is not None and res.victims[0].failed_status.plugin == "NodeResourcesFit"


def _sums(b) -> dict[int, tuple]:
    """A batch as {node: (pod uids, summed requests, count)} over its active rows, checked
    against its `sums` map."""
    out = {}
    for r, idx in enumerate(b.nodes.tolist()):
        if b.active[r]:
            s = b.sums[idx]
            assert int(b.counts[r]) == len(s.pods) and b.extra[r].tolist() == s.extra.tolist()
            out[idx] = (sorted(s.uids), b.extra[r].tolist(), int(b.counts[r]))
    assert set(out) == set(b.sums)
    return out


@settings(max_examples=150, deadline=None)
@given(clusters(), st.lists(st.tuples(st.sampled_from(["add", "remove", "checkpoint", "rollback", "bulk", "move"]),
                                      st.integers(0, 50)), max_size=25))
def test_incremental_batch_equals_a_fresh_one(c, ops) -> None:
    """NominatedIndex follows placed nominated pods through the state's undo log (single adds and
    removes) and recomputes only their nodes' rows: after any sequence of adds, removes, bulk
    removals, rollbacks and nomination moves its batches equal those of a new index built on the
    same state (the per-node sums, pod counts and which nodes count)."""
    nodes, running, nominated, pods, _ = c
    state = ClusterState(nodes, running)
    sched = Scheduler(state, nominated)
    cps: list[int] = []
    for op, k in ops:
        if op == "add" and nominated:
            p = nominated[k % len(nominated)]
            if not state.has(p):
                state.add_pod(p, k % len(nodes))
        elif op == "remove":
            on = [p for d in state.node_pods for p in d.values()]
            if on:
                state.remove_pod(on[k % len(on)])
        elif op == "checkpoint":
            cps.append(state.checkpoint())
        elif op == "rollback" and cps:
            state.rollback(cps.pop())
        elif op == "bulk":
            on = [p for d in state.node_pods for p in d.values()]
            gone = on[: k % (len(on) + 1)]
            keep = on[len(gone):]
            state.remove_pods(gone, keep if k % 2 else None)
            cps = [cp for cp in cps if cp < len(state._log)]
        elif op == "move" and nominated:
            p = nominated[k % len(nominated)]
            for lst in sched.nominated.values():
                if p in lst:
                    lst.remove(p)
            sched.nominated.setdefault(k % len(nodes), []).append(p)
            sched.noms.changed()
        fresh = Scheduler(state, []).noms
        fresh.nominated = sched.nominated
        for prio in (10, 50, 100):
            assert _sums(sched.noms.batch(prio)) == _sums(fresh.batch(prio)), (op, k, prio)
        assert sched.noms.placed() == fresh.placed()
