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
