"""InterPodAffinity plugin: cases transcribed from upstream
pkg/scheduler/framework/plugins/interpodaffinity/{filtering_test.go,scoring_test.go} (case names
quoted), plus a property test that add_pod/remove_pod keep the cycle data equal to a fresh
pre_filter."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_wap.framework.plugins import interpodaffinity as ipa
from kubectl_wap.framework.state import ClusterState
from kubectl_wap.framework.status import SUCCESS, UNRESOLVABLE, UNSCHEDULABLE
from kubectl_wap.model import Affinity, LabelSelector, Node, Pod, PodAffinityTerm, Requirement, WeightedPodAffinityTerm

PLUGIN = ipa.PLUGIN
_ids = itertools.count()

NAMESPACES = {
    "subteam1.team1": {"team": "team1"},
    "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"},
    "subteam2.team2": {"team": "team2"},
}


def R(key, op, *values):
    return Requirement(key, op, tuple(values))


def LS(*exprs):
    return LabelSelector(match_expressions=tuple(exprs))


def term(tk, *exprs, namespaces=(), ns_selector=None, selector=None, **kw):
    return PodAffinityTerm(selector if selector is not None else LS(*exprs), tk, tuple(namespaces), ns_selector, **kw)


def W(weight, t):
    return WeightedPodAffinityTerm(weight, t)


def pod(ns="", labels=None, node="", aff=(), anti=(), paff=(), panti=(), name=None, **kw):
    n = name or f"p{next(_ids)}"
    affinity = None
    if aff or anti or paff or panti:
        affinity = Affinity(
            pod_affinity_required=tuple(aff),
            pod_anti_affinity_required=tuple(anti),
            pod_affinity_preferred=tuple(paff),
            pod_anti_affinity_preferred=tuple(panti),
        )
    return Pod(ns, n, uid=f"{ns}/{n}", labels=dict(labels or {}), node_name=node, affinity=affinity, **kw)


def node(name, **labels):
    return Node(name=name, labels=labels)


def run_filter(nodes, pods, p):
    state = ClusterState(nodes, pods, NAMESPACES)
    data, status = PLUGIN.pre_filter(state, p)
    assert status.ok, status
    return [PLUGIN.filter(state, data, p, i) for i in range(len(state.nodes))], data


def code(st_):
    return st_.code, st_.reasons


OK_ = (SUCCESS, ())
AFF = (UNRESOLVABLE, (ipa.ERR_AFFINITY,))
ANTI = (UNSCHEDULABLE, (ipa.ERR_ANTI_AFFINITY,))
EXISTING = (UNSCHEDULABLE, (ipa.ERR_EXISTING_ANTI_AFFINITY,))

# ---- TestRequiredAffinitySingleNode --------------------------------------------------------

PODLABEL = {"service": "securityscan"}
PODLABEL2 = {"security": "S1"}
NODE1 = node("node1", region="r1", zone="z11")

SINGLE = [
    (
        "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
        pod(),
        [],
        OK_,
    ),
    (
        "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
        pod(labels=PODLABEL2, aff=[term("region", R("service", "In", "securityscan", "value2"))]),
        [pod(labels=PODLABEL, node="node1")],
        OK_,
    ),
    (
        "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
        pod(labels=PODLABEL2, aff=[term("region", R("service", "NotIn", "securityscan3", "value3"))]),
        [pod(labels=PODLABEL, node="node1")],
        OK_,
    ),
    (
        "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        pod(labels=PODLABEL2, aff=[term("", R("service", "In", "securityscan", "value2"), namespaces=["DiffNameSpace"])]),
        [pod(ns="ns", labels=PODLABEL, node="node1")],
        AFF,
    ),
    (
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        pod(labels=PODLABEL, aff=[term("", R("service", "In", "antivirusscan", "value2"))]),
        [pod(labels=PODLABEL, node="node1")],
        AFF,
    ),
    (
        "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
        pod(
            labels=PODLABEL2,
            aff=[
                term("region", R("service", "Exists"), R("wrongkey", "DoesNotExist")),
                term("region", R("service", "In", "securityscan"), R("service", "NotIn", "WrongValue")),
            ],
        ),
        [pod(labels=PODLABEL, node="node1")],
        OK_,
    ),
    (
        "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
        pod(
            labels=PODLABEL2,
            aff=[
                term("region", R("service", "Exists"), R("wrongkey", "DoesNotExist")),
                term("region", R("service", "In", "securityscan2"), R("service", "NotIn", "WrongValue")),
            ],
        ),
        [pod(labels=PODLABEL, node="node1")],
        AFF,
    ),
    (
        "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        pod(
            labels=PODLABEL2,
            aff=[term("region", R("service", "In", "securityscan", "value2"))],
            anti=[term("zone", R("service", "In", "securityscan", "value2"))],
        ),
        [pod(labels=PODLABEL, node="node1")],
        ANTI,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        pod(
            labels=PODLABEL,
            aff=[term("region", R("service", "In", "securityscan", "value2"))],
            anti=[term("node", R("service", "In", "antivirusscan", "value2"))],
        ),
        [pod(labels=PODLABEL, node="node1", anti=[term("zone", R("service", "In", "securityscan", "value2"))])],
        EXISTING,
    ),
    (
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        pod(labels=PODLABEL, aff=[term("region", R("service", "NotIn", "securityscan", "value2"))]),
        [pod(labels=PODLABEL, node="node2")],
        AFF,
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        pod(labels=PODLABEL),
        [pod(labels=PODLABEL, node="node1", anti=[term("zone", R("service", "In", "securityscan", "value2"))])],
        EXISTING,
    ),
    (
        "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
        pod(labels=PODLABEL, anti=[term("zone", R("service", "Exists")), term("zone", R("security", "Exists"))]),
        [pod(labels=PODLABEL2, node="node1", anti=[term("zone", R("security", "Exists"))])],
        ANTI,
    ),
    (
        "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
        pod(labels=PODLABEL2, anti=[term("zone", R("security", "Exists"))]),
        [pod(labels=PODLABEL, node="node1", anti=[term("zone", R("service", "Exists")), term("zone", R("security", "Exists"))])],
        EXISTING,
    ),
    (
        "affinity with NamespaceSelector",
        pod(
            labels=PODLABEL2,
            aff=[term("region", R("service", "In", "securityscan", "value2"), ns_selector=LS(R("team", "In", "team1")))],
        ),
        [pod(ns="subteam1.team1", labels=PODLABEL, node="node1")],
        OK_,
    ),
    (
        "affinity with non-matching NamespaceSelector",
        pod(
            labels=PODLABEL2,
            aff=[term("region", R("service", "In", "securityscan", "value2"), ns_selector=LS(R("team", "In", "team1")))],
        ),
        [pod(ns="subteam1.team2", labels=PODLABEL, node="node1")],
        AFF,
    ),
    (
        "anti-affinity with matching NamespaceSelector",
        pod(
            ns="subteam1.team1",
            labels=PODLABEL2,
            anti=[term("zone", R("service", "In", "securityscan", "value2"), ns_selector=LS(R("team", "In", "team1")))],
        ),
        [pod(ns="subteam2.team1", labels=PODLABEL, node="node1")],
        ANTI,
    ),
    (
        "anti-affinity with matching all NamespaceSelector",
        pod(
            ns="subteam1.team1",
            labels=PODLABEL2,
            anti=[term("zone", R("service", "In", "securityscan", "value2"), ns_selector=LabelSelector())],
        ),
        [pod(ns="subteam2.team1", labels=PODLABEL, node="node1")],
        ANTI,
    ),
    (
        "anti-affinity with non-matching NamespaceSelector",
        pod(
            ns="subteam1.team1",
            labels=PODLABEL2,
            anti=[term("zone", R("service", "In", "securityscan", "value2"), ns_selector=LS(R("team", "In", "team1")))],
        ),
        [pod(ns="subteam1.team2", labels=PODLABEL, node="node1")],
        OK_,
    ),
]


@pytest.mark.parametrize("name,p,pods,want", SINGLE, ids=[c[0][:60] for c in SINGLE])
def test_required_affinity_single_node(name, p, pods, want):
    got, _ = run_filter([NODE1], pods, p)
    assert code(got[0]) == want


def test_prefilter_fails_on_invalid_label_syntax():
    # "PodAffinity fails PreFilter with an invalid affinity label syntax"
    p = pod(labels=PODLABEL, aff=[term("region", R("service", "In", "{{.bad-value.}}")), term("node", R("service", "In", "a"))])
    state = ClusterState([NODE1], [], NAMESPACES)
    _, status = PLUGIN.pre_filter(state, p)
    assert status.code == UNRESOLVABLE
    assert status.message.startswith("parsing pod: requiredAffinityTerms")


def test_prefilter_skip():
    # "A pod that has no required pod affinity scheduling rules..." -> PreFilter Skip
    state = ClusterState([NODE1], [pod(labels=PODLABEL, node="node1")], NAMESPACES)
    data, status = PLUGIN.pre_filter(state, pod(labels=PODLABEL))
    assert status.ok and data.skip


# ---- TestRequiredAffinityMultipleNodes -------------------------------------------------------

CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}

MULTI = [
    (
        "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
        pod(aff=[term("region", R("foo", "In", "bar"))]),
        [pod(node="node1", labels={"foo": "bar"})],
        [node("node1", **CHINA), node("node2", **CHINA_AZ1), node("node3", **INDIA)],
        [OK_, OK_, AFF],
    ),
    (
        "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
        pod(labels={"foo": "bar", "service": "securityscan"}, aff=[term("zone", R("foo", "In", "bar")), term("zone", R("service", "In", "securityscan"))]),
        [pod(node="nodeA", labels={"foo": "bar"})],
        [node("nodeA", zone="az1", hostname="h1"), node("nodeB", zone="az2", hostname="h2")],
        [OK_, OK_],
    ),
    (
        "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
        pod(labels={"foo": "bar", "service": "securityscan"}, aff=[term("zone", R("foo", "In", "bar")), term("zone", R("service", "In", "securityscan"))]),
        [pod(node="nodeA", labels={"foo": "bar"})],
        [node("nodeA", zoneLabel="az1", hostname="h1"), node("nodeB", zoneLabel="az2", hostname="h2")],
        [AFF, AFF],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
        pod(anti=[term("region", R("foo", "In", "abc"))]),
        [pod(node="nodeA", labels={"foo": "abc"})],
        [node("nodeA", region="r1", hostname="nodeA"), node("nodeB", region="r1", hostname="nodeB")],
        [ANTI, ANTI],
    ),
    (
        "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
        pod(anti=[term("region", R("foo", "In", "abc")), term("zone", R("service", "In", "securityscan"))]),
        [pod(node="nodeA", labels={"foo": "abc", "service": "securityscan"})],
        [node("nodeA", region="r1", zone="z1", hostname="nodeA"), node("nodeB", region="r1", zone="z2", hostname="nodeB")],
        [ANTI, ANTI],
    ),
    (
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
        pod(ns="NS1", labels={"foo": "123"}, anti=[term("region", R("foo", "In", "bar"))]),
        [
            pod(ns="NS1", node="nodeA", labels={"foo": "bar"}),
            pod(ns="NS2", node="nodeC", anti=[term("region", R("foo", "In", "123"))]),
        ],
        [node("nodeA", **CHINA), node("nodeB", **CHINA_AZ1), node("nodeC", **INDIA)],
        [ANTI, ANTI, OK_],
    ),
    (
        "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
        pod(labels={"foo": ""}),
        [pod(node="nodeA", anti=[term("invalid-node-label", R("foo", "Exists"))])],
        [node("nodeA", region="r1", zone="z1", hostname="nodeA"), node("nodeB", region="r1", zone="z1", hostname="nodeB")],
        [OK_, OK_],
    ),
    (
        "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
        pod(anti=[term("invalid-node-label", R("foo", "Exists"))]),
        [pod(node="nodeA", labels={"foo": ""})],
        [node("nodeA", region="r1", zone="z1", hostname="nodeA"), node("nodeB", region="r1", zone="z1", hostname="nodeB")],
        [OK_, OK_],
    ),
    (
        "Test existing pods' anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
        pod(labels={"foo": "", "bar": ""}),
        [
            pod(node="nodeA", anti=[term("zone", R("foo", "Exists"))]),
            pod(node="nodeA", anti=[term("region", R("bar", "Exists"))]),
        ],
        [node("nodeA", region="r1", zone="z1", hostname="nodeA"), node("nodeB", region="r1", zone="z2", hostname="nodeB")],
        [EXISTING, EXISTING],
    ),
]


@pytest.mark.parametrize("name,p,pods,nodes,want", MULTI, ids=[c[0][:60] for c in MULTI])
def test_required_affinity_multiple_nodes(name, p, pods, nodes, want):
    got, _ = run_filter(nodes, pods, p)
    assert [code(s) for s in got] == want


# ---- TestPreferredAffinity (scoring) ---------------------------------------------------------

S1, S2 = {"security": "S1"}, {"security": "S2"}
AZ1, AZ2 = {"az": "az1"}, {"az": "az2"}
STAY_S1_REGION = dict(paff=[W(5, term("region", R("security", "In", "S1")))])
STAY_S2_REGION = dict(paff=[W(6, term("region", R("security", "In", "S2")))])
AFFINITY3 = dict(
    paff=[
        W(8, term("region", R("security", "NotIn", "S1"), R("security", "In", "S2"))),
        W(2, term("region", R("security", "Exists"), R("wrongkey", "DoesNotExist"))),
    ]
)
HARD = dict(aff=[term("region", R("security", "In", "S1", "value2")), term("region", R("security", "Exists"), R("wrongkey", "DoesNotExist"))])
AWAY_S1_AZ = dict(panti=[W(5, term("az", R("security", "In", "S1")))])
AWAY_S2_AZ = dict(panti=[W(5, term("az", R("security", "In", "S2")))])
STAY_S1_AWAY_S2 = dict(paff=[W(8, term("region", R("security", "In", "S1")))], panti=[W(5, term("az", R("security", "In", "S2")))])
NS_SEL_AFF = dict(
    paff=[W(5, term("region", R("security", "In", "S1"), namespaces=["subteam2.team2"], ns_selector=LS(R("team", "In", "team1"))))]
)
NS_SEL_ANTI = dict(
    panti=[W(5, term("region", R("security", "In", "S1"), namespaces=["subteam2.team2"], ns_selector=LS(R("team", "In", "team1"))))]
)

SCORE = [
    (
        "all nodes are same priority as Affinity is nil",
        pod(labels=S1),
        [],
        [node("node1", **CHINA), node("node2", **INDIA), node("node3", **AZ1)],
        [0, 0, 0],
    ),
    (
        "Affinity: pod that matches topology key & pods in nodes will get high score comparing to otherswhich doesn't match either pods in nodes or in topology key",
        pod(labels=S1, **STAY_S1_REGION),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S2), pod(node="node3", labels=S1)],
        [node("node1", **CHINA), node("node2", **INDIA), node("node3", **AZ1)],
        [100, 0, 0],
    ),
    (
        "All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
        pod(**STAY_S1_REGION),
        [pod(node="node1", labels=S1)],
        [node("node1", **CHINA), node("node2", **CHINA_AZ1), node("node3", **INDIA)],
        [100, 100, 0],
    ),
    (
        "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
        pod(labels=S1, **STAY_S2_REGION),
        [pod(node=n, labels=S2) for n in ("node1", "node1", "node2", "node3", "node4", "node5")],
        [node("node1", **CHINA), node("node2", **INDIA), node("node3", **CHINA), node("node4", **CHINA), node("node5", **INDIA)],
        [100, 0, 100, 100, 0],
    ),
    (
        "Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures ",
        pod(labels=S1, **AFFINITY3),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S2), pod(node="node3", labels=S1)],
        [node("node1", **CHINA), node("node2", **INDIA), node("node3", **AZ1)],
        [20, 100, 0],
    ),
    (
        "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        pod(labels=S2),
        [pod(node="node1", labels=S1, **STAY_S1_REGION), pod(node="node2", labels=S2, **STAY_S2_REGION)],
        [node("node1", **CHINA), node("node2", **INDIA), node("node3", **AZ1)],
        [0, 100, 0],
    ),
    (
        "Affinity symmetry with namespace selector",
        pod(ns="subteam1.team1", labels=S1),
        [pod(node="node1", labels=S1, **NS_SEL_AFF), pod(node="node2", labels=S2, **STAY_S2_REGION)],
        [node("node1", **CHINA), node("node2", **INDIA), node("node3", **AZ1)],
        [100, 0, 0],
    ),
    (
        "AntiAffinity symmetry with namespace selector",
        pod(ns="subteam1.team1", labels=S1),
        [pod(node="node1", labels=S1, **NS_SEL_ANTI), pod(node="node2", labels=S2, **STAY_S2_REGION)],
        [node("node1", **CHINA), node("node2", **INDIA), node("node3", **AZ1)],
        [0, 100, 100],
    ),
    (
        "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        pod(labels=S1),
        [pod(node="node1", labels=S1, **HARD), pod(node="node2", labels=S2, **HARD)],
        [node("node1", **CHINA), node("node2", **INDIA), node("node3", **AZ1)],
        [100, 100, 0],
    ),
    (
        "Anti Affinity: pod that does not match existing pods in node will get high score ",
        pod(labels=S1, **AWAY_S1_AZ),
        [pod(node="node1", labels=S1), pod(node="node2", labels=S2)],
        [node("node1", **AZ1), node("node2", **CHINA)],
        [0, 100],
    ),
    (
        "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
        pod(labels=S1, **AWAY_S1_AZ),
        [pod(node="node1", labels=S1), pod(node="node1", labels=S1), pod(node="node2", labels=S2)],
        [node("node1", **AZ1), node("node2", **INDIA)],
        [0, 100],
    ),
    (
        "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
        pod(labels=S2),
        [pod(node="node1", labels=S1, **AWAY_S2_AZ), pod(node="node2", labels=S2, **AWAY_S1_AZ)],
        [node("node1", **AZ1), node("node2", **AZ2)],
        [0, 100],
    ),
    (
        "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
        pod(labels=S1, **STAY_S1_AWAY_S2),
        [pod(node=n, labels=S1) for n in ("node1", "node1", "node2", "node3", "node3", "node4", "node5")],
        [node("node1", **CHINA_AZ1), node("node2", **INDIA), node("node3", **CHINA), node("node4", **CHINA), node("node5", **INDIA)],
        [100, 0, 100, 100, 0],
    ),
    (
        "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
        pod(labels=S1, **STAY_S1_AWAY_S2),
        [
            pod(node="node1", labels=S1),
            pod(node="node2", labels=S2),
            pod(node="node3", **STAY_S1_AWAY_S2),
            pod(node="node4", **AWAY_S1_AZ),
        ],
        [node("node1", **CHINA), node("node2", **AZ1), node("node3", **INDIA), node("node4", **AZ2)],
        [100, 0, 100, 0],
    ),
    (
        "Avoid panic when partial nodes in a topology don't have pods with affinity",
        pod(labels=S1),
        [pod(node="node1", labels=S1), pod(node="node2", **STAY_S1_AWAY_S2)],
        [node("node1", **CHINA), node("node2", **CHINA)],
        [0, 0],
    ),
]


@pytest.mark.parametrize("name,p,pods,nodes,want", SCORE, ids=[c[0][:60] for c in SCORE])
def test_preferred_affinity_score(name, p, pods, nodes, want):
    state = ClusterState(nodes, pods, NAMESPACES)
    assert PLUGIN.score(state, p, list(range(len(state.nodes)))) == want


def test_relevant():
    n = [node("n1", zone="a")]
    assert not PLUGIN.relevant(ClusterState(n, [pod(node="n1")], NAMESPACES), pod())
    assert PLUGIN.relevant(ClusterState(n, [pod(node="n1", **AWAY_S1_AZ)], NAMESPACES), pod())
    assert PLUGIN.relevant(ClusterState(n, [], NAMESPACES), pod(**STAY_S1_REGION))


def test_match_label_keys_merged_for_hypothetical_pod():
    # matchLabelKeys: key=value from the incoming pod's labels is ANDed into the selector.
    t = term("zone", R("app", "In", "web"), match_label_keys=("rev",))
    p = pod(labels={"app": "web", "rev": "2"}, anti=[t])
    nodes = [node("n1", zone="a"), node("n2", zone="b")]
    old = pod(node="n1", labels={"app": "web", "rev": "1"})
    new = pod(node="n2", labels={"app": "web", "rev": "2"})
    got, _ = run_filter(nodes, [old, new], p)
    assert [code(s) for s in got] == [OK_, ANTI]


def test_clone_is_independent():
    nodes = [node("n1", zone="a"), node("n2", zone="b")]
    other = pod(node="n1", labels={"app": "x"})
    state = ClusterState(nodes, [other], NAMESPACES)
    p = pod(anti=[term("zone", R("app", "Exists"))])
    data, _ = PLUGIN.pre_filter(state, p)
    c = PLUGIN.clone(data)
    state.remove_pod(other)
    PLUGIN.remove_pod(state, c, p, other, 0)
    assert PLUGIN.filter(state, c, p, 0).ok
    assert not PLUGIN.filter(state, data, p, 0).ok


# ---- property: add_pod/remove_pod == fresh pre_filter ----------------------------------------

KEYS = ("app", "tier")
VALS = ("a", "b")


@st.composite
def selectors(draw):
    key = draw(st.sampled_from(KEYS))
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
    vals = (draw(st.sampled_from(VALS)),) if op in ("In", "NotIn") else ()
    return LS(Requirement(key, op, vals))


@st.composite
def terms(draw):
    ns = draw(st.sampled_from([(), ("subteam1.team1",), ("subteam1.team1", "subteam1.team2")]))
    nsel = draw(st.sampled_from([None, None, LabelSelector(), LS(R("team", "In", "team1"))]))
    tk = draw(st.sampled_from(["zone", "kubernetes.io/hostname", "rack"]))
    return term(tk, selector=draw(selectors()), namespaces=ns, ns_selector=nsel)


@st.composite
def pods(draw, nodes):
    labels = draw(st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALS), max_size=2))
    ns = draw(st.sampled_from(list(NAMESPACES)))
    aff = draw(st.lists(terms(), max_size=2)) if draw(st.integers(0, 3)) == 0 else []
    anti = draw(st.lists(terms(), max_size=2)) if draw(st.integers(0, 2)) == 0 else []
    return pod(ns=ns, labels=labels, node=draw(st.sampled_from(nodes)) if nodes else "", aff=aff, anti=anti)


@st.composite
def clusters(draw):
    n = draw(st.integers(1, 4))
    nodes = []
    for i in range(n):
        labels = {"kubernetes.io/hostname": f"n{i}"}
        if draw(st.booleans()):
            labels["zone"] = draw(st.sampled_from(["z1", "z2"]))
        if draw(st.integers(0, 3)) == 0:
            labels["rack"] = "r1"
        nodes.append(Node(name=f"n{i}", labels=labels))
    names = [x.name for x in nodes]
    existing = draw(st.lists(pods(names), max_size=8))
    extra = draw(st.lists(pods(names), max_size=4))
    incoming = draw(pods([]))
    removals = draw(st.lists(st.booleans(), min_size=len(existing), max_size=len(existing)))
    return nodes, existing, extra, incoming, removals


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_add_remove_matches_fresh_prefilter(case):
    nodes, existing, extra, incoming, removals = case
    state = ClusterState(nodes, existing, NAMESPACES)
    data, status = PLUGIN.pre_filter(state, incoming)
    if not status.ok or data.skip:
        return  # upstream ignores AddPod/RemovePod of a plugin that skipped PreFilter
    for p, rm in zip(existing, removals):
        if rm:
            idx = state.remove_pod(p)
            PLUGIN.remove_pod(state, data, incoming, p, idx)
    for p in extra:
        idx = state.node_index[p.node_name]
        state.add_pod(p, idx)
        PLUGIN.add_pod(state, data, incoming, p, idx)
    fresh, _ = PLUGIN.pre_filter(state, incoming)
    assert data.existing_anti == fresh.existing_anti
    assert data.affinity == fresh.affinity
    assert data.anti == fresh.anti
    for i in range(len(state.nodes)):
        assert PLUGIN.filter(state, data, incoming, i) == PLUGIN.filter(state, fresh, incoming, i)


def test_score_cache_keeps_labels_an_existing_term_reads():
    """InterPodAffinity's PreScore map is cached per gang template, keyed only on the labels some
    existing pod's term reads: a per-pod index label read by a preferred term must still split
    the cache (pre-1 is pulled to the node of the pod that prefers idx=1; pre-0 is not)."""
    from kubectl_wap.model import Affinity, LabelSelector, Node, PodAffinityTerm, PodGroup, Snapshot, WeightedPodAffinityTerm
    from kubectl_wap.preemption.analyze import analyze
    from test_properties import GI, HOSTNAME, _pod

    nodes = [Node(name="n0", labels={HOSTNAME: "n0"}, allocatable={"cpu": 16000, "memory": 64 * GI, "pods": 110}),
             Node(name="n1", labels={HOSTNAME: "n1"}, allocatable={"cpu": 4000, "memory": 64 * GI, "pods": 110})]
    pref = Affinity(pod_affinity_preferred=(WeightedPodAffinityTerm(100, PodAffinityTerm(
        LabelSelector(match_labels=(("idx", "1"),)), HOSTNAME, namespaces=("ml",))),))
    pods = [_pod("default", "magnet", 100, 0, node="n1", prio=0, labels={"app": "m"}, start=1.0, affinity=pref)]
    pods += [_pod("ml", f"pre-{k}", 1000, 0, prio=1000, group="g", labels={"app": "pre", "idx": str(k)}) for k in range(2)]
    snap = Snapshot(nodes=nodes, pods=pods, pod_groups=[PodGroup("ml", "g", policy="gang", min_count=2, priority=1000)])
    res = analyze(snap, "podgroup", "ml", "g")
    assert res.outcome == "NoPreemptionNeeded"
    assert sorted((p.name, n) for p, n in res.placements) == [("pre-0", "n0"), ("pre-1", "n1")]


def test_self_affinity_exception_ends_once_a_matching_pod_exists():
    # v1.37.2 filtering.go nodeTopologyMatchesAffinity: with no matching pod in the term's domain,
    # the pod passes only as "the first pod in a series" -
    # `len(state.clusterWideAffinityCounts) == 0 && satisfiesSelfAffinityCheck(...)`. Once a pod
    # anywhere in the cluster matches the terms (on nodeA, zone az1), a self-matching pod must go
    # to that domain: nodeB (zone az2) fails although the pod matches its own term.
    p = pod(labels={"foo": "bar"}, aff=[term("zone", R("foo", "In", "bar"))])
    nodes = [node("nodeA", zone="az1"), node("nodeB", zone="az2")]
    got, _ = run_filter(nodes, [pod(node="nodeA", labels={"foo": "bar"})], p)
    assert [code(s) for s in got] == [OK_, AFF]
    # With no matching pod at all the same pod may open either zone.
    got, _ = run_filter(nodes, [pod(node="nodeA", labels={"foo": "other"})], p)
    assert [code(s) for s in got] == [OK_, OK_]
