"""The fast reprieval (replay only the assignments on the nodes a unit touches) must decide exactly
as the literal one (replay every assignment, as upstream's selectVictimsOnDomain does): same
victims in the same order, same reprieved units, same placements. Random clusters mix every unit
kind and PDBs, and some pods carry required anti-affinity or topology spread so the fast path's
fallback to the literal replay is exercised too."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from kubectl_wap.preemption.analyze import analyze
from test_properties import PRE_NAME, PRE_NS, cluster_strategy


def _summary(res):
    return (
        res.outcome,
        res.message,
        [(v.unit.key, [p.key for p in v.unit.pods]) for v in res.victims],
        [v.unit.key for v in res.reprieved],
        [(p.key, n) for p, n in res.placements],
        res.num_pdb_violations,
    )


def _check(snap):
    fast = analyze(snap, "podgroup", PRE_NS, PRE_NAME, fast=True)
    literal = analyze(snap, "podgroup", PRE_NS, PRE_NAME, fast=False)
    assert _summary(fast) == _summary(literal)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_strategy())
def test_fast_equals_literal_node_local(snap):
    _check(snap)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_strategy(cross=True))
def test_fast_equals_literal_cross_node(snap):
    _check(snap)


def test_fast_equals_literal_demo():
    from kubectl_wap.snapshot.source import build, raw_source

    header, items = raw_source(None, True, None, None, 30)
    snap = build(header, items)
    fast = analyze(snap, "podgroup", "ml", "job-1", fast=True)
    literal = analyze(snap, "podgroup", "ml", "job-1", fast=False)
    assert fast.outcome == "Preempt"
    assert _summary(fast) == _summary(literal)
