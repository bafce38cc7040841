"""ClusterState's bulk paths: the vectorized initial build and bulk removal give the same sums as
pod-by-pod bookkeeping, and rolling back a bulk removal (restored from its saved copy) returns
exactly the state before it, even after later single-pod changes."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_wap.framework.state import ClusterState
from test_properties import cluster_strategy


def _view(s: ClusterState) -> tuple:
    return (
        dict(s.where), [dict(d) for d in s.node_pods], [dict(c) for c in s.ports], dict(s.anti_affinity_pods),
        dict(s.affinity_pods), s.requested.tolist(), s.nonzero.tolist(), s.pod_count.tolist(),
    )


def _by_hand(s: ClusterState) -> tuple:
    """The sums recomputed from the pod maps, one pod at a time."""
    req = np.zeros_like(s.requested)
    nz = np.zeros_like(s.nonzero)
    count = np.zeros_like(s.pod_count)
    for idx, pods in enumerate(s.node_pods):
        for p in pods.values():
            for r, v in p.requests.items():
                req[idx, s.res_index[r]] += v
            nz[idx] += p.nonzero_requests
            count[idx] += 1
    return req.tolist(), nz.tolist(), count.tolist()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_strategy(cross=True), st.data())
def test_bulk_remove_and_rollback(snap, data):
    s = ClusterState(snap.nodes, snap.pods)
    assert (s.requested.tolist(), s.nonzero.tolist(), s.pod_count.tolist()) == _by_hand(s)
    before = _view(s)
    placed = [p for _, p in s.all_pods()]
    gone = data.draw(st.lists(st.sampled_from(placed), unique_by=lambda p: p.uid)) if placed else []
    cp = s.checkpoint()
    s.remove_pods(gone)
    assert not any(s.has(p) for p in gone)
    assert (s.requested.tolist(), s.nonzero.tolist(), s.pod_count.tolist()) == _by_hand(s)
    assert set(s.anti_affinity_pods) == {p.uid for _, p in s.all_pods() if p.affinity and p.affinity.pod_anti_affinity_required}
    # Later single-pod changes on top of the bulk removal, then one rollback of everything.
    if gone:
        s.add_pod(gone[0], before[0][gone[0].uid])
    rest = [p for _, p in s.all_pods()]
    if rest:
        s.remove_pod(rest[0])
    version = s.version
    s.rollback(cp)
    assert _view(s) == before
    assert s.version > version  # caches keyed on the version never see an old number again


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_strategy(cross=True), st.data())
def test_remove_by_rebuilding_from_the_kept_pods(snap, data):
    """remove_pods(gone, keep) rebuilds from the kept pods when they are fewer: same state as
    pruning, and the same rollback."""
    a = ClusterState(snap.nodes, snap.pods)
    b = ClusterState(snap.nodes, snap.pods)
    before = _view(a)
    placed = [p for _, p in a.all_pods()]
    keep = data.draw(st.lists(st.sampled_from(placed), unique_by=lambda p: p.uid, max_size=len(placed) // 2)) if placed else []
    kept = {p.uid for p in keep}
    gone = [p for p in placed if p.uid not in kept]
    cp_a, cp_b = a.checkpoint(), b.checkpoint()
    a.remove_pods(gone, keep)
    b.remove_pods(gone)
    va, vb = _view(a), _view(b)
    assert va[0] == vb[0] and va[3:] == vb[3:]
    assert [set(d) for d in va[1]] == [set(d) for d in vb[1]]
    assert [{k: v for k, v in c.items() if v} for c in va[2]] == [{k: v for k, v in c.items() if v} for c in vb[2]]
    a.rollback(cp_a)
    b.rollback(cp_b)
    assert _view(a) == before == _view(b)
