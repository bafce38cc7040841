"""framework/filtering.py, rule by rule: the node-local Filter plugins of the default profile
(NodeUnschedulable, TaintToleration, NodePorts, NodeResourcesFit's pod count) and the nominated
pods RunFilterPluginsWithNominatedPods adds, each case transcribed from the v1.37.2 plugin's unit
test (k8s.io/kubernetes@v1.37.2/pkg/scheduler/framework/plugins/...). Every case runs both the
per-node Filter (`filter_node`, what reprieval replays) and the all-nodes pass (`filter_all`), which
must give the same verdict."""

from __future__ import annotations

import pytest
from builders import make_node, make_pod

from kubectl_wap.framework.filtering import StaticCache, filter_all, filter_node, pre_filter
from kubectl_wap.framework.nominated import nominator_pods
from kubectl_wap.framework.schedule_one import Scheduler
from kubectl_wap.framework.buildstate import build_state
from kubectl_wap.framework.status import SUCCESS, UNRESOLVABLE, UNSCHEDULABLE
from kubectl_wap.model import SnapshotHeader
from kubectl_wap.snapshot.decode.convert import build_snapshot

T = 1_795_000_000
CODE = {SUCCESS: "Success", UNSCHEDULABLE: "Unschedulable", UNRESOLVABLE: "UnschedulableAndUnresolvable"}


def _cluster(node: dict, incoming: dict, running: tuple[dict, ...] = ()):
    snap = build_snapshot([node, *running, incoming], SnapshotHeader(source="test"))
    state = build_state(snap)
    (pod,) = [p for p in snap.pods if p.name == incoming["metadata"]["name"]]
    return snap, state, pod


def _verdicts(node: dict, incoming: dict, running: tuple[dict, ...] = ()) -> tuple[tuple, tuple]:
    """(code, plugin) of filter_node on the only node, and the same read off filter_all."""
    _, state, pod = _cluster(node, incoming, running)
    static, cycle = StaticCache(state), pre_filter(state, pod)
    st = filter_node(state, static, pod, cycle, 0)
    mask, statuses = filter_all(state, static, pod, cycle)
    st_all = statuses.get(0)
    one = (CODE[st.code], st.plugin if not st.ok else "")
    # a node the mask drops must carry a failing status (a Success there is a vector/per-node split)
    every = ("Success", "") if bool(mask[0]) else \
        ("filtered out without a failing status", "") if st_all is None or st_all.ok else (CODE[st_all.code], st_all.plugin)
    return one, every


def _check(node, incoming, running, want, why) -> None:
    one, every = _verdicts(node, incoming, running)
    assert one == want, f"filter_node: got {one}, want {want} ({why})"
    assert every == want, f"filter_all: got {every}, want {want} ({why})"


def _pod(name: str = "p") -> object:
    return make_pod(name).priority(0).req(cpu="100m", memory="64Mi")


# ---- NodeUnschedulable.Filter (node_unschedulable.go; node_unschedulable_test.go TestNodeUnschedulable)
@pytest.mark.parametrize("node, pod, want, why", [
    pytest.param(make_node("n1").unschedulable().obj(), _pod().obj(),
                 ("UnschedulableAndUnresolvable", "NodeUnschedulable"),
                 "node.Spec.Unschedulable and no toleration: ErrReasonUnschedulable, UnschedulableAndUnresolvable",
                 id="a cordoned node rejects a pod that does not tolerate the unschedulable taint"),
    pytest.param(make_node("n1").obj(), _pod().obj(), ("Success", ""), "a schedulable node",
                 id="a schedulable node accepts the pod"),
    pytest.param(make_node("n1").unschedulable().obj(),
                 _pod().toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoSchedule").obj(),
                 ("Success", ""), "the pod tolerates node.kubernetes.io/unschedulable:NoSchedule",
                 id="a pod tolerating the unschedulable taint passes a cordoned node"),
])
def test_node_unschedulable(node, pod, want, why):
    _check(node, pod, (), want, why)


# ---- TaintToleration.Filter (taint_toleration.go: FindMatchingUntoleratedTaint over the taints
# helper.DoNotScheduleTaintsFilterFunc keeps, NoSchedule and NoExecute; taint_toleration_test.go
# TestTaintTolerationFilter). The status message is not compared here: see the note at the end.
@pytest.mark.parametrize("node, pod, want, why", [
    pytest.param(make_node("n1").taint("dedicated", "user1", "NoSchedule").obj(), _pod().obj(),
                 ("UnschedulableAndUnresolvable", "TaintToleration"), "no tolerations, a NoSchedule taint",
                 id="a pod without tolerations is rejected by a NoSchedule taint"),
    pytest.param(make_node("n1").taint("dedicated", "user1", "NoSchedule").obj(),
                 _pod().toleration("dedicated", "Equal", "user1", "NoSchedule").obj(), ("Success", ""),
                 "the toleration matches key, value and effect", id="a matching toleration passes a NoSchedule taint"),
    pytest.param(make_node("n1").taint("dedicated", "user1", "NoSchedule").obj(),
                 _pod().toleration("dedicated", "Equal", "user2", "NoSchedule").obj(),
                 ("UnschedulableAndUnresolvable", "TaintToleration"), "the toleration's value differs",
                 id="a toleration of another value is rejected"),
    pytest.param(make_node("n1").taint("foo", "bar", "NoSchedule").obj(),
                 _pod().toleration("foo", "Equal", "bar", "PreferNoSchedule").obj(),
                 ("UnschedulableAndUnresolvable", "TaintToleration"), "a non-empty effect must match the taint's",
                 id="a toleration of PreferNoSchedule does not tolerate NoSchedule"),
    pytest.param(make_node("n1").taint("dedicated", "user1", "PreferNoSchedule").obj(), _pod().obj(), ("Success", ""),
                 "PreferNoSchedule is a Score matter, not a Filter one", id="a PreferNoSchedule taint does not filter"),
    pytest.param(make_node("n1").taint("dedicated", "user1", "NoExecute").obj(), _pod().obj(),
                 ("UnschedulableAndUnresolvable", "TaintToleration"),
                 "DoNotScheduleTaintsFilterFunc keeps NoExecute taints as well as NoSchedule ones",
                 id="an untolerated NoExecute taint rejects the pod as a NoSchedule one does"),
    pytest.param(make_node("n1").taint("dedicated", "user1", "NoExecute").obj(),
                 _pod().toleration("dedicated", "Equal", "user1", "NoExecute").obj(), ("Success", ""),
                 "the NoExecute taint is tolerated", id="a tolerated NoExecute taint passes"),
])
def test_taint_toleration(node, pod, want, why):
    _check(node, pod, (), want, why)


def _with_ports(b, *specs: str) -> dict:
    """A pod whose first container asks for host ports "PROTO/IP/PORT", as nodeports' newPod."""
    o = b.obj()
    o["spec"]["containers"][0]["ports"] = [
        {"containerPort": int(port), "hostPort": int(port), "hostIP": ip, "protocol": proto}
        for proto, ip, port in (s.split("/") for s in specs)]
    return o


def _holder(*specs: str) -> dict:
    return _with_ports(make_pod("holder").priority(0).req(cpu="100m").on("n1", start=T), *specs)


# ---- NodePorts.Filter (node_ports.go fitsPorts / HostPortInfo.CheckConflict; node_ports_test.go
# TestNodePorts): Unschedulable, ErrReason.
@pytest.mark.parametrize("want_port, have_port, want, why", [
    pytest.param(("UDP/127.0.0.1/8080",), ("UDP/127.0.0.1/9090",), ("Success", ""), "another port",
                 id="another port on the node does not conflict"),
    pytest.param(("UDP/127.0.0.1/8080",), ("UDP/127.0.0.1/8080",), ("Unschedulable", "NodePorts"), "the same UDP port",
                 id="the same udp port conflicts"),
    pytest.param(("TCP/127.0.0.1/8080",), ("TCP/127.0.0.1/8080",), ("Unschedulable", "NodePorts"), "the same TCP port",
                 id="the same tcp port conflicts"),
    pytest.param(("TCP/127.0.0.1/8080",), ("TCP/127.0.0.2/8080",), ("Success", ""), "another host IP",
                 id="the same port on another host ip does not conflict"),
    pytest.param(("UDP/127.0.0.1/8080",), ("TCP/127.0.0.1/8080",), ("Success", ""), "another protocol",
                 id="the same port over another protocol does not conflict"),
    pytest.param(("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"), ("UDP/127.0.0.1/8080",), ("Unschedulable", "NodePorts"),
                 "the second port asked for is taken", id="a conflict on the second port asked for"),
    pytest.param(("TCP/0.0.0.0/8001",), ("TCP/127.0.0.1/8001",), ("Unschedulable", "NodePorts"),
                 "0.0.0.0 conflicts with every IP", id="asking for 0.0.0.0 conflicts with a port held on one ip"),
    pytest.param(("TCP/127.0.0.1/8001",), ("TCP/0.0.0.0/8001",), ("Unschedulable", "NodePorts"),
                 "a port held on 0.0.0.0 conflicts with every IP", id="a port held on 0.0.0.0 conflicts with one ip"),
])
def test_node_ports(want_port, have_port, want, why):
    _check(make_node("n1").obj(), _with_ports(_pod(), *want_port), (_holder(*have_port),), want, why)


# ---- NodeResourcesFit.Filter, the pod count (fit.go fitsRequest: `len(nodeInfo.GetPods())+1 >
# allowedPodNumber` gives "Too many pods"; fit_test.go testNotEnoughRequests, on a node that allows
# one pod and runs one).
@pytest.mark.parametrize("incoming, why", [
    pytest.param(make_pod("p").priority(0).obj(), "no requests at all: only the pod count can fail",
                 id="even without requests the pod fails on a node with no room for another pod"),
    pytest.param(make_pod("p").priority(0).req(cpu="1m", memory="1").obj(), "cpu and memory fit, the pod count does not",
                 id="even when cpu and memory fit the pod fails on a node with no room for another pod"),
])
def test_too_many_pods(incoming, why):
    node = make_node("n1").alloc(pods="1", cpu="10m", memory="20").obj()
    running = (make_pod("r").priority(0).req(cpu="5m", memory="5").on("n1", start=T).obj(),)
    _check(node, incoming, running, ("Unschedulable", "NodeResourcesFit"), why)
    _, state, pod = _cluster(node, incoming, running)
    st = filter_node(state, StaticCache(state), pod, pre_filter(state, pod), 0)
    assert st.reasons == ("Too many pods",), f"got {st.reasons}, want ('Too many pods',) (fitsRequest's reason)"


# ---- RunFilterPluginsWithNominatedPods / addGENominatedPods (framework/runtime/framework.go): the
# first pass adds the nominated pods of equal or higher priority (`PodPriority(nominated) >=
# PodPriority(pod)`) to the node, so their requests count against the pod's fit; lower-priority
# ones are not added.
@pytest.mark.parametrize("nominated_prio, want, why", [
    pytest.param(10, ("Unschedulable", "NodeResourcesFit"), "600m nominated + 500m asked > 1000m",
                 id="a nominated pod of equal priority takes its room from the pod"),
    pytest.param(20, ("Unschedulable", "NodeResourcesFit"), "a higher-priority nomination counts too",
                 id="a nominated pod of higher priority takes its room from the pod"),
    pytest.param(5, ("Success", ""), "a lower-priority nomination is not added (the pod may take its room)",
                 id="a nominated pod of lower priority leaves its room to the pod"),
])
def test_filter_with_nominated_pods(nominated_prio, want, why):
    node = make_node("n1").alloc(cpu="1", memory="4Gi").obj()
    nominated = make_pod("nom").priority(nominated_prio).req(cpu="600m", memory="64Mi").nominated("n1").obj()
    incoming = make_pod("p").priority(10).req(cpu="500m", memory="64Mi").obj()
    snap, state, pod = _cluster(node, incoming, (nominated,))
    sched = Scheduler(state, nominator_pods(snap.pods))
    st = sched.filter_with_nominated(pod, pre_filter(state, pod), 0)
    got = (CODE[st.code], st.plugin if not st.ok else "")
    assert got == want, f"got {got}, want {want} ({why})"
    feasible, _ = sched.feasible_nodes(pod, pre_filter(state, pod))
    assert (0 in feasible.tolist()) == (want[0] == "Success"), f"feasible_nodes: got {feasible.tolist()} ({why})"


def test_taint_reason_is_upstreams_fixed_text() -> None:
    """v1.37.2 and v1.38.0-beta.0 TaintToleration.Filter (taint_toleration.go) return the fixed
    reason "node(s) had untolerated taint(s)", naming no taint, so nodes with different taints are
    one count in the FitError message (older releases named the taint)."""
    from kubectl_wap.framework.filtering import ERR_TAINT

    assert ERR_TAINT == "node(s) had untolerated taint(s)"
    node = make_node("n1").alloc(cpu="4").taint("dedicated", "gpu").obj()
    snap = build_snapshot([node, make_pod("p").priority(1).req(cpu="1").obj()])
    state = build_state(snap)
    pod = next(p for p in snap.pods if p.name == "p")
    st = Scheduler(state, []).filter_with_nominated(pod, pre_filter(state, pod), 0)
    assert st.reasons == (ERR_TAINT,), f"got {st.reasons}, want the fixed upstream reason"


# ---- NodeResourcesFit.Filter, the amounts (fit.go fitsRequest; fit_test.go testEnoughRequests, on
# its node of makeResources(10, 20, 32, 5, 20, 5): 10m cpu, 20 bytes of memory, 32 pods, 5 of the
# extended resource A). A request fits when it is at most what is free (`delta > allocatable -
# requested` fails), and the failure is UnschedulableAndUnresolvable only when the request exceeds
# the node's whole allocatable (`Unresolvable: podRequest > allocatable`): then no victim can help.
EXT_A = "example.com/aaa"


@pytest.mark.parametrize("running, incoming, want, reasons, why", [
    pytest.param({"cpu": "5m", "memory": "19"}, [{"cpu": "5m", "memory": "1"}], ("Success", ""), (),
                 "5m + 5m = 10m and 19 + 1 = 20: exactly what is free fits",
                 id="equal edge case"),
    pytest.param({"cpu": "10m", "memory": "20"}, [{"cpu": "1m", "memory": "1"}], ("Unschedulable", "NodeResourcesFit"),
                 ("Insufficient cpu", "Insufficient memory"), "nothing is free; cpu before memory in the reasons",
                 id="too many resources fails"),
    pytest.param({"cpu": "5m", "memory": "19"}, [{"cpu": "1m", "memory": "2"}], ("Unschedulable", "NodeResourcesFit"),
                 ("Insufficient memory",), "the cpu fits, 2 bytes of memory do not (1 free)",
                 id="one resource cpu fits"),
    pytest.param({EXT_A: "2"}, [{"cpu": "1m", "memory": "1", EXT_A: "3"}, {"cpu": "1m", "memory": "1", EXT_A: "3"}],
                 ("UnschedulableAndUnresolvable", "NodeResourcesFit"), (f"Insufficient {EXT_A}",),
                 "two containers ask 3 + 3 = 6 of A, more than the node's 5 in all: no preemption can help",
                 id="extended resource allocatable enforced for multiple containers"),
    pytest.param({EXT_A: "2"}, [{"cpu": "1m", "memory": "1", EXT_A: "5"}], ("Unschedulable", "NodeResourcesFit"),
                 (f"Insufficient {EXT_A}",),
                 "derived: 5 of A asked, 3 free, 5 allocatable: not above the allocatable, so removing the user helps",
                 id="a request equal to the whole allocatable is resolvable by preemption"),
])
def test_resource_amounts(running: dict, incoming: list[dict], want: tuple, reasons: tuple, why: str) -> None:
    node = make_node("n1").alloc(pods="32", cpu="10m", memory="20", **{EXT_A: "5"}).obj()
    run = make_pod("r").priority(0).on("n1", start=T)
    run.container("c", requests={k: v for k, v in running.items()})
    pod = make_pod("p").priority(0)
    for i, req in enumerate(incoming):
        pod.container(f"c{i}", requests=req)
    _check(node, pod.obj(), (run.obj(),), want, why)
    _, state, p = _cluster(node, pod.obj(), (run.obj(),))
    st = filter_node(state, StaticCache(state), p, pre_filter(state, p), 0)
    assert tuple(st.reasons) == reasons, f"got {st.reasons}, want {reasons} ({why})"


# ---- NodeAffinity.Filter (node_affinity.go Filter: spec.nodeSelector AND the required node affinity;
# node_affinity_test.go TestNodeAffinity). A mismatch is UnschedulableAndUnresolvable with
# ErrReasonPod.
@pytest.mark.parametrize("pod, want, why", [
    pytest.param(_pod().node_selector(foo="bar").obj(), ("UnschedulableAndUnresolvable", "NodeAffinity"),
                 "the node has no label foo", id="missing labels"),
    pytest.param(_pod().node_selector(**{"kubernetes.io/hostname": "n1"}).obj(), ("Success", ""),
                 "the node carries the selected label", id="same labels"),
    pytest.param(_pod().node_affinity_in("kubernetes.io/hostname", ["n2", "n3"]).obj(),
                 ("UnschedulableAndUnresolvable", "NodeAffinity"), "required In over other values",
                 id="Pod with matchExpressions using In operator that does not match the existing node"),
    pytest.param(_pod().node_affinity_in("kubernetes.io/hostname", ["n1", "n2"]).obj(), ("Success", ""),
                 "required In over the node's value", id="Pod with matchExpressions using In operator that matches the existing node"),
    pytest.param(_pod().node_affinity_in("kubernetes.io/hostname", ["n2"], required=False).obj(), ("Success", ""),
                 "a preferred term never filters", id="preferred node affinity does not filter"),
])
def test_node_affinity(pod: dict, want: tuple, why: str) -> None:
    _check(make_node("n1").obj(), pod, (), want, why)
