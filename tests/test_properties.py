"""Property tests of workload-aware preemption on small random clusters (hypothesis).

Random clusters mix every kind of preemption unit: standalone pods, Single and All PodGroups and a
CompositePodGroup tree with disruptionMode All at the root, plus PDBs, taints, cordons and node
selectors. The preemptor is a pending gang PodGroup. When the outcome is Preempt we check:

* every victim unit has an effective priority strictly below the preemptor's (semantics doc 3.3);
* an All-mode group is preempted whole or not at all (2.7);
* with the victims removed, the reported placement really fits: replayed in order with
  Filter-with-nominated-pods then assume (3.4), the node-local plugins on the plain reference
  (tests/reference_filter.py), only the cross-node ones on the engine;
* every victim is needed: putting any one victim unit back into that final state breaks the replay.
  With only node-local filters (resources, ports, taints, selectors) fit is monotone in the set of
  running pods, so a unit that failed its reprieve with fewer pods back also fails with more.

`cluster_strategy` is shared with tests/test_reprieval_equivalence.py (with cross-node plugins on).
"""

from __future__ import annotations

from dataclasses import replace as _replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference_filter as ref
from kubectl_wap.framework.filtering import pre_filter
from kubectl_wap.framework.schedule_one import Scheduler
from kubectl_wap.framework.state import ClusterState
from kubectl_wap.model import (
    ALL,
    SINGLE,
    Affinity,
    HostPort,
    CompositePodGroup,
    LabelSelector,
    Node,
    NodeSelectorTerm,
    Pod,
    PodAffinityTerm,
    PodDisruptionBudget,
    PodGroup,
    Requirement,
    Snapshot,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from kubectl_wap.preemption.analyze import analyze

GI = 1024**3
PRE_NS, PRE_NAME, PRE_PRIO = "ml", "pre", 1000
HOSTNAME, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"


def _pod(ns, name, cpu, mem, *, node="", prio=0, group=None, labels=None, start=None, **kw) -> Pod:
    return Pod(
        namespace=ns,
        name=name,
        uid=f"uid-{ns}-{name}",
        labels=labels or {},
        node_name=node,
        priority=prio,
        requests={"cpu": cpu, "memory": mem},
        nonzero_requests=(cpu or 100, mem or 200 * 1024**2),
        pod_group_name=group,
        phase="Running" if node else "Pending",
        start_time=start,
        creation_timestamp=start,
        **kw,
    )


@st.composite
def cluster_strategy(draw, cross: bool = False):
    """A Snapshot with a pending gang PodGroup ml/pre. With `cross`, some pods carry required
    anti-affinity or topology spread constraints (InterPodAffinity / PodTopologySpread)."""
    n_nodes = draw(st.integers(2, 4))
    nodes = []
    for i in range(n_nodes):
        name = f"n{i}"
        taints = ()
        if draw(st.integers(0, 5)) == 0:
            taints = (Taint("dedicated", "gpu", draw(st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"]))),)
        nodes.append(
            Node(
                name=name,
                uid=f"uid-node-{name}",
                labels={HOSTNAME: name, ZONE: "a" if i % 2 == 0 else "b", "tier": draw(st.sampled_from(["x", "y"]))},
                taints=taints,
                unschedulable=draw(st.integers(0, 7)) == 0,
                allocatable={"cpu": draw(st.sampled_from([2000, 3000, 4000])), "memory": draw(st.sampled_from([4, 8])) * GI,
                             "pods": draw(st.sampled_from([3, 4, 110]))},
            )
        )
    pods: list[Pod] = []
    pgs: list[PodGroup] = []
    cpgs: list[CompositePodGroup] = []
    pdbs: list[PodDisruptionBudget] = []
    used = {n.name: [0, 0, 0] for n in nodes}
    clock = [1000.0]

    def place(ns, name, prio, group=None, app="x") -> Pod | None:
        """A running pod on a drawn node, kept only if it fits there (a sane starting cluster)."""
        node = draw(st.sampled_from(nodes))
        cpu = draw(st.sampled_from([250, 500, 1000]))
        mem = draw(st.sampled_from([0, GI // 2, GI]))
        u = used[node.name]
        if u[0] + cpu > node.allocatable["cpu"] or u[1] + mem > node.allocatable["memory"] or u[2] + 1 > node.allocatable["pods"]:
            return None
        u[0] += cpu
        u[1] += mem
        u[2] += 1
        clock[0] += draw(st.sampled_from([1.0, 5.0, 60.0]))
        kw = {}
        if cross and draw(st.integers(0, 3)) == 0:
            # Some terms read the preemptor pods' per-pod "idx" label (an Indexed Job's
            # completion index): reprieval's template signatures must keep that label then.
            sel = draw(st.sampled_from([(("app", app),), (("app", app),), (("idx", "0"),), (("idx", "1"),)]))
            kw["affinity"] = Affinity(pod_anti_affinity_required=(
                PodAffinityTerm(LabelSelector(match_labels=sel), HOSTNAME),))
        p = _pod(ns, name, cpu, mem, node=node.name, prio=prio, group=group, labels={"app": app}, start=clock[0], **kw)
        pods.append(p)
        return p

    # Standalone pods.
    for i in range(draw(st.integers(0, 4))):
        place("default", f"solo-{i}", draw(st.sampled_from([0, 100, 500, 1000, 2000])), app=draw(st.sampled_from(["web", "db"])))
    # Leaf PodGroups, Single or All.
    for g in range(draw(st.integers(0, 3))):
        prio = draw(st.sampled_from([0, 100, 500, 1000, 2000]))
        mode = draw(st.sampled_from([SINGLE, ALL]))
        name = f"pg{g}"
        pgs.append(PodGroup("batch", name, uid=f"uid-pg-{name}", policy="gang", min_count=1, disruption_mode=mode, priority=prio))
        for k in range(draw(st.integers(1, 3))):
            place("batch", f"{name}-{k}", prio, group=name, app=draw(st.sampled_from(["web", "etl"])))
    # A CompositePodGroup tree with All at the root; children Single or All.
    if draw(st.booleans()):
        prio = draw(st.sampled_from([100, 500, 2000]))
        cpgs.append(CompositePodGroup("research", "tree", uid="uid-cpg-tree", disruption_mode=ALL, priority=prio))
        for c in range(2):
            name = f"tree-{c}"
            pgs.append(PodGroup("research", name, uid=f"uid-pg-{name}", disruption_mode=draw(st.sampled_from([SINGLE, ALL])),
                                parent="tree", priority=prio, creation_timestamp=float(c)))
            for k in range(draw(st.integers(1, 2))):
                place("research", f"{name}-{k}", prio, group=name, app="ray")
    # A CPG with Single at the root and an All child (the child is its own unit).
    if draw(st.booleans()):
        prio = draw(st.sampled_from([100, 500]))
        cpgs.append(CompositePodGroup("research", "loose", uid="uid-cpg-loose", disruption_mode=SINGLE, priority=prio))
        pgs.append(PodGroup("research", "loose-all", uid="uid-pg-loose-all", disruption_mode=ALL, parent="loose", priority=prio))
        for k in range(2):
            place("research", f"loose-all-{k}", prio, group="loose-all", app="ray")
    # PDBs.
    for i, app in enumerate(draw(st.lists(st.sampled_from(["web", "db", "etl", "ray"]), max_size=3, unique=True))):
        ns = {"web": "default", "db": "default", "etl": "batch", "ray": "research"}[app]
        if app == "web" and draw(st.booleans()):
            ns = "batch"
        pdbs.append(PodDisruptionBudget(ns, f"pdb-{app}", LabelSelector(match_labels=(("app", app),)), draw(st.integers(0, 2))))

    # A higher-priority pending pod nominated to a node (the preemptor's Filter must count it).
    if draw(st.integers(0, 3)) == 0:
        node = draw(st.sampled_from(nodes))
        pods.append(_pod("default", "nominated", 1000, GI, prio=2000, nominated_node_name=node.name))
    # Host ports: a running pod may hold the port the preemptor wants.
    if draw(st.integers(0, 3)) == 0:
        place("default", "porty", 0, app="db")
        if pods and pods[-1].name == "porty":
            pods[-1] = _replace(pods[-1], host_ports=(HostPort("0.0.0.0", "TCP", 8080),))

    # The pending gang preemptor.
    replicas = draw(st.integers(1, 4))
    min_count = draw(st.integers(1, replicas))
    pgs.append(PodGroup(PRE_NS, PRE_NAME, uid="uid-pg-pre", policy="gang", min_count=min_count,
                        disruption_mode=draw(st.sampled_from([SINGLE, ALL])), priority=PRE_PRIO))
    cpu = draw(st.sampled_from([1000, 1500, 2000]))
    mem = draw(st.sampled_from([GI // 2, GI, 2 * GI]))
    kw: dict = {}
    if draw(st.integers(0, 3)) == 0:
        kw["node_selector"] = {"tier": "x"}
    if draw(st.integers(0, 2)) == 0:
        kw["tolerations"] = (Toleration("dedicated", "Exists", "", ""),)
    if draw(st.integers(0, 3)) == 0:
        kw["affinity"] = Affinity(node_required=(NodeSelectorTerm((Requirement(ZONE, "In", ("a",)),)),))
    if cross:
        shape = draw(st.sampled_from(["none", "anti", "spread", "both"]))
        if shape in ("anti", "both"):
            aff = kw.get("affinity") or Affinity()
            kw["affinity"] = Affinity(node_required=aff.node_required, pod_anti_affinity_required=(
                PodAffinityTerm(LabelSelector(match_labels=(("app", draw(st.sampled_from(["pre", "web"]))),)), HOSTNAME),))
        if shape in ("spread", "both"):
            kw["topology_spread"] = (TopologySpreadConstraint(
                1, draw(st.sampled_from([ZONE, HOSTNAME])), "DoNotSchedule", LabelSelector(match_labels=(("app", "pre"),))),)
    if draw(st.integers(0, 4)) == 0:
        kw["host_ports"] = (HostPort("0.0.0.0", "TCP", 8080),)
    for k in range(replicas):
        pods.append(_pod(PRE_NS, f"pre-{k}", cpu, mem, prio=PRE_PRIO, group=PRE_NAME, labels={"app": "pre", "idx": str(k)},
                         start=None, **kw))
    return Snapshot(nodes=nodes, pods=pods, pod_groups=pgs, composite_pod_groups=cpgs, pdbs=pdbs)


# ---- invariant helpers ------------------------------------------------------------------------

def _effective_priority(snap: Snapshot, pod: Pod) -> int:
    """Independent getPodPriority: root of the group chain, else the pod's own priority."""
    if not pod.pod_group_name:
        return pod.priority or 0
    g = snap.pod_group(pod.namespace, pod.pod_group_name)
    if g is None:
        return pod.priority or 0
    cur = g
    for _ in range(4):
        parent = snap.composite_pod_group(cur.namespace, cur.parent) if cur.parent else None
        if parent is None:
            break
        cur = parent
    return cur.priority or 0


def _all_units(snap: Snapshot) -> list[list[Pod]]:
    """The scheduled pod sets that must be preempted atomically: for every All group that has no
    All ancestor, all scheduled pods of every leaf under it."""
    out = []

    def leaves(ns, name):
        pg = snap.pod_group(ns, name)
        if pg is not None:
            return [pg]
        res = []
        for child in snap.pod_groups + snap.composite_pod_groups:
            if child.namespace == ns and child.parent == name:
                res.extend(leaves(ns, child.name))
        return res

    for g in snap.pod_groups + snap.composite_pod_groups:
        if g.disruption_mode != ALL:
            continue
        parent = snap.composite_pod_group(g.namespace, g.parent) if g.parent else None
        if parent is not None and parent.disruption_mode == ALL:
            continue  # covered by the higher All ancestor (the trees here are at most 2 deep)
        members = [p for leaf in leaves(g.namespace, g.name) for p in snap.pods
                   if p.scheduled and p.namespace == leaf.namespace and p.pod_group_name == leaf.name]
        if members:
            out.append(members)
    return out


def replay_fits(snap: Snapshot, removed: set[str], placements: list[tuple[Pod, str]]) -> bool:
    """Without the `removed` pod uids, place each preemptor pod in order: the node-local Filter
    with nominated pods is the plain reference (tests/reference_filter.py), not the engine's; the
    engine's filter is consulted only for the cross-node plugins (anti-affinity, spread) the
    reference does not model. True when every one passes."""
    state = ClusterState(snap.nodes, [p for p in snap.pods if p.uid not in removed])
    running = [p for p in snap.pods if p.scheduled and p.uid not in removed]
    nominated = [p for p in snap.pods if p.nominated_node_name and not p.scheduled]
    sched = Scheduler(state, nominated)
    nodes = {n.name: n for n in snap.nodes}
    placed: set[str] = set()
    for pod, node in placements:
        noms = [p for p in nominated if p.uid not in placed]
        if ref.node_status_with_nominated(pod, nodes[node], running, noms)[0] != ref.SUCCESS:
            return False
        idx = state.node_index[node]
        cycle = pre_filter(state, pod)
        if cycle.plugins and not sched.filter_with_nominated(pod, cycle, idx).ok:
            return False
        state.add_pod(pod, idx)
        running.append(_replace(pod, node_name=node, phase="Running"))
        placed.add(pod.uid)
    return True


def check_preempt_invariants(snap: Snapshot, res, monotone: bool = True) -> None:
    assert res.outcome == "Preempt", res.message
    prio = res.preemptor.priority
    victim_uids: set[str] = set()
    for v in res.victims:
        assert v.unit.priority < prio, f"victim {v.unit.key} has priority {v.unit.priority} >= {prio}"
        for p in v.unit.pods:
            assert _effective_priority(snap, p) < prio, f"victim pod {p.key} is not of lower priority"
            assert p.scheduled
            victim_uids.add(p.uid)
    for v in res.victims + res.reprieved:
        assert len(set(v.pdbs)) == len(v.pdbs), f"duplicate PDB names {v.pdbs}"
        assert v.violates_pdb == bool(v.pdbs) == (v.unit.violate_count > 0)
    assert len(victim_uids) == sum(len(v.unit.pods) for v in res.victims), "a pod is a victim twice"
    # Reprieved and victims partition the candidate units.
    keys_v = [v.unit.key for v in res.victims]
    keys_r = [v.unit.key for v in res.reprieved]
    assert not set(keys_v) & set(keys_r)
    assert sorted(keys_v + keys_r) == sorted(v.unit.key for v in res.candidates)
    # Output order is reprieve order: PDB-violating victims first.
    flags = [v.violates_pdb for v in res.victims]
    assert flags == sorted(flags, reverse=True), "PDB-violating victims must come first (reprieve order)"
    # All-mode groups are atomic.
    for members in _all_units(snap):
        hit = [p.uid in victim_uids for p in members]
        assert all(hit) or not any(hit), f"All group split: {[p.key for p in members]} -> {hit}"
    # The placement fits once the victims are gone (reprieved units stay).
    assert res.placements, "Preempt without placements"
    assert replay_fits(snap, victim_uids, res.placements), "placement does not fit after removing the victims"
    # Every victim unit is needed (monotone filters only).
    if monotone:
        for v in res.victims:
            back = victim_uids - {p.uid for p in v.unit.pods}
            assert not replay_fits(snap, back, res.placements), f"victim {v.unit.key} is not needed"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(cluster_strategy())
def test_preempt_invariants(snap):
    res = analyze(snap, "podgroup", PRE_NS, PRE_NAME)
    assert res.outcome in ("NoPreemptionNeeded", "Preempt", "Unschedulable", "NotEligible", "Invalid")
    if res.outcome == "Preempt":
        check_preempt_invariants(snap, res)
    elif res.outcome == "NoPreemptionNeeded":
        assert not res.victims
        assert replay_fits(snap, set(), res.placements)
    elif res.outcome == "Unschedulable" and "No preemption victims" in res.message:
        assert all(_effective_priority(snap, p) >= PRE_PRIO for p in snap.pods if p.scheduled)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(cluster_strategy(cross=True))
def test_preempt_invariants_cross_node(snap):
    """Same invariants with anti-affinity / topology spread; victim necessity is not checked
    (those filters are not monotone in the running pods)."""
    res = analyze(snap, "podgroup", PRE_NS, PRE_NAME)
    if res.outcome == "Preempt":
        check_preempt_invariants(snap, res, monotone=False)


def test_pdb_names_listed_once_per_unit():
    """Regression: an All group whose two pods both violate the same PDB listed it twice
    (preemption/pdb.py compared the PDB's name against the namespace/name keys it had stored)."""
    node = Node("n0", allocatable={"cpu": 2000, "memory": 4 * GI, "pods": 110})
    victims = [_pod("b", f"v{i}", 1000, GI, node="n0", group="g", labels={"app": "etl"}, start=float(i)) for i in range(2)]
    pre = _pod(PRE_NS, "pre-0", 2000, GI, prio=PRE_PRIO, group=PRE_NAME)
    snap = Snapshot(nodes=[node], pods=victims + [pre],
                    pod_groups=[PodGroup("b", "g", disruption_mode=ALL, priority=0), PodGroup(PRE_NS, PRE_NAME, priority=PRE_PRIO)],
                    pdbs=[PodDisruptionBudget("b", "pdb", LabelSelector(match_labels=(("app", "etl"),)), 0)])
    res = analyze(snap, "podgroup", PRE_NS, PRE_NAME)
    assert res.outcome == "Preempt"
    [v] = res.victims
    assert v.pdbs == ["b/pdb"]
    assert v.unit.violate_count == 2 and res.num_pdb_violations == 2
