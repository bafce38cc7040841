"""Label/node selector and toleration matching (kubectl_wap.framework.plugins.selectors)."""

from __future__ import annotations

import pytest

from kubectl_wap.model import Affinity, LabelSelector, Node, NodeSelectorTerm, Pod, Requirement, Taint, Toleration
from kubectl_wap.framework.plugins.selectors import (
    compile_label_selector,
    find_untolerated_taint,
    label_selector_valid,
    match_label_selector,
    match_node_selector_term,
    match_node_selector_terms,
    node_matches_pod_node_affinity,
    tolerates_taint,
)


def R(key, op, *values):
    return Requirement(key, op, tuple(values))


def LS(*exprs, **labels):
    return LabelSelector(match_labels=tuple(sorted(labels.items())), match_expressions=tuple(exprs))


# ---- label selectors -------------------------------------------------------------------------


def test_nil_selector_matches_nothing_and_empty_matches_everything():
    assert not match_label_selector(None, {})
    assert not match_label_selector(None, {"a": "b"})
    assert match_label_selector(LabelSelector(), {})
    assert match_label_selector(LabelSelector(), {"a": "b"})
    assert compile_label_selector(LabelSelector()).empty
    assert not compile_label_selector(None).empty  # labels.Nothing().Empty() is false


@pytest.mark.parametrize(
    "sel,labels,want",
    [
        (LS(a="1"), {"a": "1"}, True),
        (LS(a="1"), {"a": "2"}, False),
        (LS(a="1"), {}, False),
        (LS(R("a", "In", "1", "2")), {"a": "2"}, True),
        (LS(R("a", "In", "1", "2")), {"b": "2"}, False),
        (LS(R("a", "NotIn", "1")), {}, True),  # NotIn matches a missing key
        (LS(R("a", "NotIn", "1")), {"a": "1"}, False),
        (LS(R("a", "NotIn", "1")), {"a": "3"}, True),
        (LS(R("a", "Exists")), {"a": ""}, True),
        (LS(R("a", "Exists")), {}, False),
        (LS(R("a", "DoesNotExist")), {}, True),
        (LS(R("a", "DoesNotExist")), {"a": "x"}, False),
        (LS(R("a", "Exists"), b="x"), {"a": "", "b": "x"}, True),  # requirements are ANDed
        (LS(R("a", "Exists"), b="x"), {"a": ""}, False),
    ],
)
def test_label_selector_operators(sel, labels, want):
    assert match_label_selector(sel, labels) is want


@pytest.mark.parametrize(
    "sel",
    [
        LS(R("a", "Gt", "1")),  # Gt/Lt are node-selector only
        LS(R("a", "In")),  # In needs values
        LS(R("a", "Exists", "x")),  # Exists takes no values
        LS(R("a", "In", "{{.bad-value.}}")),  # label value syntax
        LS(R("bad key!", "Exists")),  # label key syntax
        LabelSelector(invalid=True),
    ],
)
def test_invalid_label_selectors_match_nothing(sel):
    assert not label_selector_valid(sel)
    assert not match_label_selector(sel, {"a": "1"})


# ---- node selectors --------------------------------------------------------------------------


def N(name="node1", **labels):
    return Node(name=name, labels=labels)


def T(exprs=(), fields=()):
    return NodeSelectorTerm(tuple(exprs), tuple(fields))


@pytest.mark.parametrize(
    "term,node,want",
    [
        (T(), N(a="1"), False),  # an empty term matches nothing
        (T([R("a", "In", "1")]), N(a="1"), True),
        (T([R("a", "NotIn", "1")]), N(), True),
        (T([R("cpu", "Gt", "4")]), N(cpu="8"), True),
        (T([R("cpu", "Gt", "4")]), N(cpu="4"), False),
        (T([R("cpu", "Lt", "4")]), N(cpu="3"), True),
        (T([R("cpu", "Lt", "4")]), N(cpu="abc"), False),  # unparsable label value
        (T([R("cpu", "Gt", "4")]), N(), False),  # missing label
        (T([R("cpu", "Gt", "x")]), N(cpu="8"), False),  # parse error: the term never matches
        (T([R("cpu", "Gt", "1", "2")]), N(cpu="8"), False),
        (T([R("a", "Bogus", "1")]), N(a="1"), False),
        (T(fields=[R("metadata.name", "In", "node1")]), N("node1"), True),
        (T(fields=[R("metadata.name", "In", "node1")]), N("node2"), False),
        (T(fields=[R("metadata.name", "NotIn", "node1")]), N("node2"), True),
        (T(fields=[R("metadata.name", "In", "node1", "node2")]), N("node1"), False),  # one value only
        (T(fields=[R("metadata.name", "Exists")]), N("node1"), False),
        (T([R("a", "In", "1")], [R("metadata.name", "In", "node1")]), N("node1", a="1"), True),
        (T([R("a", "In", "1")], [R("metadata.name", "In", "node1")]), N("node2", a="1"), False),
    ],
)
def test_node_selector_term(term, node, want):
    assert match_node_selector_term(term, node) is want


def test_node_selector_terms_are_ored():
    t1, t2 = T([R("a", "In", "1")]), T([R("b", "In", "2")])
    assert match_node_selector_terms([t1, t2], N(b="2"))
    assert not match_node_selector_terms([t1, t2], N(c="3"))
    assert not match_node_selector_terms([], N(a="1"))
    # an unparsable term does not prevent another term from matching (LazyErrorNodeSelector)
    assert match_node_selector_terms([T([R("a", "Gt", "x")]), t1], N(a="1"))


def test_node_matches_pod_node_affinity():
    node = N(zone="z1", disk="ssd")
    assert node_matches_pod_node_affinity(Pod("ns", "p"), node)
    assert node_matches_pod_node_affinity(Pod("ns", "p", node_selector={"zone": "z1"}), node)
    assert not node_matches_pod_node_affinity(Pod("ns", "p", node_selector={"zone": "z2"}), node)
    req = Affinity(node_required=(T([R("disk", "In", "hdd")]),))
    assert not node_matches_pod_node_affinity(Pod("ns", "p", affinity=req), node)
    req = Affinity(node_required=(T([R("disk", "In", "ssd")]),))
    assert node_matches_pod_node_affinity(Pod("ns", "p", affinity=req), node)
    # nodeSelector AND affinity
    assert not node_matches_pod_node_affinity(Pod("ns", "p", affinity=req, node_selector={"zone": "z2"}), node)
    # required node affinity with zero terms matches nothing
    assert not node_matches_pod_node_affinity(Pod("ns", "p", affinity=Affinity(node_required=())), node)
    # affinity without required node terms does not restrict
    assert node_matches_pod_node_affinity(Pod("ns", "p", affinity=Affinity()), node)


# ---- tolerations -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tol,taint,want",
    [
        (Toleration(operator="Exists"), Taint("k", "v", "NoSchedule"), True),  # empty key + Exists = all
        (Toleration(key="k", operator="Exists"), Taint("k", "v", "NoExecute"), True),  # empty effect = all
        (Toleration(key="k", operator="Exists", effect="NoSchedule"), Taint("k", "v", "NoExecute"), False),
        (Toleration(key="k", operator="Equal", value="v"), Taint("k", "v", "NoSchedule"), True),
        (Toleration(key="k", operator="Equal", value="w"), Taint("k", "v", "NoSchedule"), False),
        (Toleration(key="k", operator="", value="v"), Taint("k", "v", "NoSchedule"), True),  # "" means Equal
        (Toleration(key="j", operator="Exists"), Taint("k", "v", "NoSchedule"), False),
        (Toleration(key="k", operator="Gt", value="1"), Taint("k", "2", "NoSchedule"), False),
    ],
)
def test_toleration_tolerates_taint(tol, taint, want):
    assert tolerates_taint([tol], taint) is want


def test_find_untolerated_taint_filters_effects():
    taints = (Taint("a", "", "PreferNoSchedule"), Taint("b", "", "NoSchedule"))
    assert find_untolerated_taint(taints, ()) == taints[1]
    assert find_untolerated_taint(taints, (Toleration(key="b", operator="Exists"),)) is None
