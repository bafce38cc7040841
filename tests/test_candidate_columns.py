"""The columnar candidate passes of workload-aware preemption (preemption/candidates.py, the fast
path) against the object passes they replace (units.build_units, importance.by_importance_literal,
pdb.classify, reprieval.reprieve_in_order): the same order, the same PDB classification, the same
verdicts, field by field; and `Verdicts` (the lazily built verdict lists of a result) behaving as
the list it stands for."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_wap.framework.buildstate import build_state
from kubectl_wap.framework.groups import GroupIndex
from kubectl_wap.preemption import candidates, importance
from kubectl_wap.preemption.analyze import analyze
from kubectl_wap.preemption.importance import by_importance_literal, importance_key, importance_order_columns
from kubectl_wap.preemption.pdb import classify
from kubectl_wap.preemption.result import spared_on, verdict_flags
from kubectl_wap.preemption.units import collect
from test_properties import PRE_NAME, PRE_NS, cluster_strategy

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _verdict(v) -> tuple:
    u = v.unit
    return (u.kind, u.namespace, u.name, [p.uid for p in u.pods], u.priority, u.rank, u.disruption_mode, u.group,
            u.source, u.violate_count, set(u.nodes), u.anti_affinity, u.importance,
            v.order, v.reprieved, v.violates_pdb, v.pdbs, v.failed_pod.uid if v.failed_pod else None, v.failed_node,
            v.failed_status.message if v.failed_status else None, v.reason)


@pytest.mark.parametrize("below", [None, 0, 500, 10**9])
@_SETTINGS
@given(snap=cluster_strategy())
def test_order_and_classification_equal_the_object_passes(snap, below):
    index = GroupIndex.build(snap, composite_enabled=True)
    state = build_state(snap)
    units = by_importance_literal(collect(state, index, True, below=below).units())
    violating, non_violating, which_ref = classify(units, snap.pdbs)
    # Classified before any unit is built (as on the fast path, where most are never built):
    # the units built afterwards take their violate counts from the columns.
    c = collect(state, index, True, below=below)
    order = candidates.importance_order(c)
    reprieve_units, n_violating, which = candidates.reprieve_order(c, order, snap.pdbs)
    assert [(c.unit(k).key, c.unit(k).importance) for k in order] == [(u.key, u.importance) for u in units]
    assert n_violating == len(violating)
    assert [c.unit(k).key for k in reprieve_units] == [u.key for u in violating + non_violating]
    assert [c.unit(k).violate_count for k in reprieve_units] == [u.violate_count for u in violating + non_violating]
    assert {c.unit(k).key: names for k, names in which.items()} == which_ref


def same_verdicts(fast, literal) -> None:
    """The fast path's result equals the literal reference's field by field (every verdict,
    its unit and reason, the steps); test_reprieval_equivalence runs this on its clusters."""
    assert (fast.outcome, fast.message, fast.num_potential, fast.steps) == (literal.outcome, literal.message, literal.num_potential, literal.steps)
    for name in ("candidates", "reprieved", "victims"):
        assert [_verdict(v) for v in getattr(fast, name)] == [_verdict(v) for v in getattr(literal, name)], name
    if fast.outcome == "Preempt":
        assert isinstance(fast.candidates, candidates.Verdicts)  # the columnar path ran
        _check_sequence(fast.candidates, literal.candidates)
        _check_sequence(fast.reprieved, literal.reprieved)
        nodes = {n for _, n in fast.placements}
        assert [_verdict(v) for v in spared_on(fast.reprieved, nodes)] == [_verdict(v) for v in spared_on(literal.reprieved, nodes)]
        assert [v.unit.key for v in spared_on(fast.reprieved, nodes)] == [
            v.unit.key for v in literal.reprieved if any(p.node_name in nodes for p in v.unit.pods)]


def _check(snap):
    same_verdicts(analyze(snap, "podgroup", PRE_NS, PRE_NAME, fast=True), analyze(snap, "podgroup", PRE_NS, PRE_NAME, fast=False))


def test_victim_order_ties_reported_as_the_object_path():
    """The differential tests learn from the ties the engine breaks (framework/ties.py) whether
    the real scheduler may have ordered equal victims otherwise: the columnar order must report
    the same victim-order ties as by_importance. Three pods equal in priority, kind, size and
    start time (two pairs of neighbours), and a PodGroup unit that ties with nothing."""
    from kubectl_wap.framework import ties
    from kubectl_wap.model import Node, PodGroup, Snapshot
    from test_properties import GI, HOSTNAME, PRE_PRIO, _pod

    nodes = [Node(name=f"n{i}", labels={HOSTNAME: f"n{i}"}, allocatable={"cpu": 1000, "memory": 8 * GI, "pods": 110})
             for i in range(2)]
    pods = [_pod("default", f"t{i}", 300, 0, node=f"n{i % 2}", prio=5, start=7.0) for i in range(3)] + [
        _pod("batch", "g-0", 300, 0, node="n1", prio=0, group="g", start=1.0),
        _pod(PRE_NS, "pre-0", 900, 0, prio=PRE_PRIO, group=PRE_NAME),
    ]
    snap = Snapshot(nodes=nodes, pods=pods, pod_groups=[
        PodGroup(PRE_NS, PRE_NAME, policy="gang", min_count=1, priority=PRE_PRIO), PodGroup("batch", "g", priority=0)])
    seen = []
    for fast in (True, False):
        with ties.observe() as got:
            res = analyze(snap, "podgroup", PRE_NS, PRE_NAME, fast=fast)
        assert res.outcome == "Preempt"
        seen.append([t for t in got if t[0] == "victim-order"])
    assert isinstance(res.candidates, list) and seen[0] == seen[1]
    assert seen[0] == [("victim-order", "Pod default/t0 and Pod default/t1"), ("victim-order", "Pod default/t1 and Pod default/t2")]


def _check_sequence(lazy, ref: list) -> None:
    assert len(lazy) == len(ref)
    assert lazy == ref and ref == lazy
    assert verdict_flags(lazy) == ([v.reprieved for v in ref], [v.violates_pdb for v in ref])
    if ref:
        assert lazy[-1] is lazy[len(ref) - 1]  # one verdict object per unit
        assert _verdict(lazy[-1]) == _verdict(ref[-1])
        with pytest.raises(IndexError):
            lazy[len(ref)]
    assert [_verdict(v) for v in lazy[1:3]] == [_verdict(v) for v in ref[1:3]]
    assert len(lazy + ref) == len(ref + lazy) == 2 * len(ref)


_cols = st.lists(
    st.tuples(st.sampled_from([-(2**31), -5, 0, 7, 2**31 - 1]), st.integers(1, 3), st.integers(1, 4),
              st.sampled_from([0.0, 1.7e9, 1.7e9 + 0.25, math.inf]), st.sampled_from(["", "a", "b", "uid-2"])),
    max_size=50)


def _by_columns(rows):
    import numpy as np

    cols = list(zip(*rows)) if rows else [(), (), (), (), ()]
    return importance_order_columns(np.array(cols[0], dtype=np.int64), np.array(cols[1], dtype=np.int64),
                                    np.array(cols[2], dtype=np.int64), np.array(cols[3], dtype=np.float64), list(cols[4]))


@settings(max_examples=200, deadline=None)
@given(_cols)
def test_columns_sort_as_the_key_tuples(rows):
    keys = [importance_key(*r) for r in rows]
    assert _by_columns(rows) == sorted(range(len(keys)), key=keys.__getitem__)


@pytest.mark.parametrize("key", [
    lambda p, r, s, t, u: (-p, -s, -r, t, u),  # pods before rank
    lambda p, r, s, t, u: (-p, -r, -s, -t, u),  # later start more important
    lambda p, r, s, t, u: (p, -r, -s, t, u),  # lower priority more important
    lambda p, r, s, t, u: (-p, -r, -s, u, t),  # not the columnar form: the tuple fallback
])
def test_columns_follow_whatever_importance_key_says(monkeypatch, key):
    """importance_key is the only encoding of the order: the columns read their layout off it,
    so a change there (or a mutant) changes the columnar order too."""
    monkeypatch.setattr(importance, "importance_key", key)

    @settings(max_examples=40, deadline=None)
    @given(_cols)
    def check(rows):
        keys = [key(*r) for r in rows]
        assert _by_columns(rows) == sorted(range(len(keys)), key=keys.__getitem__)

    check()


def test_victim_anti_affinity_off_the_placement_nodes_is_checked():
    """A victim whose node receives no preemptor pod is spared without a check, unless it carries
    required anti-affinity: its term spans its topology domain (here the zone), so with it back
    the preemptor pod on another node of the zone fails InterPodAffinity (existing pods'
    anti-affinity) and it must go too. Upstream replays every assignment for every unit. (A
    higher-priority pod whose hostname anti-affinity term matches the preemptor on n0 only keeps
    InterPodAffinity's PreFilter from being skipped once the victims are removed: a skipped plugin
    sees no AddPod, upstream too. The preemptor itself has no cross-node terms, so the shortcut
    applies.)"""
    from kubectl_wap.model import Affinity, LabelSelector, Node, PodAffinityTerm, PodGroup, Snapshot
    from test_properties import GI, HOSTNAME, PRE_PRIO, ZONE, _pod

    nodes = [Node(name=f"n{i}", labels={HOSTNAME: f"n{i}", ZONE: "a", "pool": "ab"[i]},
                  allocatable={"cpu": 1000, "memory": 8 * GI, "pods": 110}) for i in range(2)]
    anti = Affinity(pod_anti_affinity_required=(PodAffinityTerm(LabelSelector(match_labels=(("app", "pre"),)), ZONE, namespaces=(PRE_NS,)),))
    pods = [
        _pod("default", "v", 900, 0, node="n0", prio=0, labels={"app": "v"}, start=1.0, affinity=anti),
        _pod("default", "w", 900, 0, node="n1", prio=0, labels={"app": "w"}, start=2.0),
        _pod("system", "keeper", 50, 0, node="n0", prio=2000, labels={"app": "k"}, start=0.5, affinity=Affinity(
            pod_anti_affinity_required=(PodAffinityTerm(LabelSelector(match_labels=(("app", "pre"),)), HOSTNAME, namespaces=(PRE_NS,)),))),
        _pod(PRE_NS, "pre-0", 500, 0, prio=PRE_PRIO, group=PRE_NAME, labels={"app": "pre"}, node_selector={"pool": "b"}),
    ]
    snap = Snapshot(nodes=nodes, pods=pods, pod_groups=[PodGroup(PRE_NS, PRE_NAME, policy="gang", min_count=1, priority=PRE_PRIO)])
    _check(snap)
    fast = analyze(snap, "podgroup", PRE_NS, PRE_NAME)
    assert [(p.key, n) for p, n in fast.placements] == [(f"{PRE_NS}/pre-0", "n1")]
    assert sorted(p.key for p in fast.victim_pods) == ["default/v", "default/w"]
    v = next(v for v in fast.victims if v.unit.name == "v")
    assert v.failed_status is not None and v.failed_status.plugin == "InterPodAffinity"
