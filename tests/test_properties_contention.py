"""Property tests on contended clusters, checked without the engine's own Filter.

The generator packs every node with lower-priority work so that the preemptor usually has to
preempt, on a cluster where at least two nodes could take it (hypothesis.assume), and steers
towards several victims (hypothesis.target). It mixes what the older generator (test_properties.py)
never drew: group priorities that differ from their pods' spec.priority, victim groups with
minCount > 1, partly scheduled preemptor gangs, CompositePodGroup and single-pod preemptors, several
PDBs per pod with matchExpressions and status.disruptedPods, and pending pods nominated to a node
with a priority equal to or above the preemptor's.

Checks use tests/reference_filter.py (a plain per-node Filter/Score written from upstream's plugin
code) plus nominated-pod handling written here from RunFilterPluginsWithNominatedPods, never
kubectl_wap's Scheduler:
* Preempt: victims have effective priority below the preemptor's; All groups go whole; the reported
  placements fit once the victims are gone (Filter passes with and without the nominated pods);
  every victim unit is needed (filters here are node-local, so fit is monotone in running pods);
  a gang places at least minCount (running members included), a CompositePodGroup at least
  minGroupCount children.
* Unschedulable (completeness): even with every lower-priority unit removed, a reference
  scheduling of the group (pod by pod, each to the reference's best node, as the pod-group
  cycle does) does not reach minCount; for a single pod, no node fits it with every
  lower-priority pod on that node removed.
* NoPreemptionNeeded: the reference schedules the group as the cluster stands.

Statistics: `python -m pytest tests/test_properties_contention.py --hypothesis-show-statistics`
prints the event() counts; test_contention_rate asserts that at least 40% of the examples
preempt with two or more victim units.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, assume, event, given, settings, target
from hypothesis import strategies as st

import reference_filter as ref
from test_properties import _effective_priority as effective_priority  # getPodPriority, written independently
from kubectl_wap.model import (
    ALL,
    SINGLE,
    CompositePodGroup,
    LabelSelector,
    Node,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    Requirement,
    Snapshot,
    Taint,
    Toleration,
)
from kubectl_wap.preemption.analyze import analyze

GI = 1024**3
NS = "ml"
PRIO = 1000
HOSTNAME = "kubernetes.io/hostname"
STATS: list[tuple[str, int]] = []  # (outcome, victim units) per example of test_contention


def _pod(ns, name, cpu, *, node="", prio=0, group=None, labels=None, start=None, **kw) -> Pod:
    mem = GI // 4
    return Pod(namespace=ns, name=name, uid=f"uid-{ns}-{name}", labels=labels or {}, node_name=node, priority=prio,
               requests={"cpu": cpu, "memory": mem}, nonzero_requests=(cpu, mem), pod_group_name=group,
               phase="Running" if node else "Pending", start_time=start, creation_timestamp=start, **kw)


@st.composite
def contended(draw):
    n_nodes = draw(st.integers(2, 4))
    cap = draw(st.sampled_from([2000, 3000, 4000]))
    max_pods = draw(st.sampled_from([4, 110]))
    nodes = []
    for i in range(n_nodes):
        taints = (Taint("dedicated", "gpu", "NoSchedule"),) if draw(st.integers(0, 5)) == 0 else ()
        nodes.append(Node(name=f"n{i}", uid=f"uid-n{i}", labels={HOSTNAME: f"n{i}"}, taints=taints,
                          unschedulable=draw(st.integers(0, 9)) == 0,
                          allocatable={"cpu": cap, "memory": 16 * GI, "pods": max_pods}))
    free = {n.name: cap for n in nodes}
    count = {n.name: 0 for n in nodes}
    pods: list[Pod] = []
    pgs: list[PodGroup] = []
    cpgs: list[CompositePodGroup] = []
    clock = [1000.0]
    labels_st = st.fixed_dictionaries({"app": st.sampled_from(["web", "db", "etl"]), "tier": st.sampled_from(["a", "b"])})

    def place(ns, name, prio, group=None, node=None) -> bool:
        cpu = draw(st.sampled_from([500, 1000]))
        cands = [n.name for n in nodes if free[n.name] >= cpu and count[n.name] < max_pods]
        if not cands:
            return False
        where = node if node in cands else draw(st.sampled_from(cands))
        free[where] -= cpu
        count[where] += 1
        start = None if draw(st.integers(0, 4)) == 0 else clock[0]
        clock[0] += draw(st.sampled_from([1.0, 30.0]))
        pods.append(_pod(ns, name, cpu, node=where, prio=prio, group=group, labels=draw(labels_st), start=start))
        return True

    # Lower- and higher-priority work until the nodes are (nearly) full. Group priorities are
    # drawn apart from their pods' spec.priority: the group's (root's) priority is what counts.
    pod_prio = st.sampled_from([0, 50, 500, 2000])
    for u in range(draw(st.integers(3, 9))):
        shape = draw(st.sampled_from(["pod", "pod", "single", "all", "cpg-all", "cpg-single"]))
        gprio = draw(st.sampled_from([0, 100, 500, 500, 2000]))
        if shape == "pod":
            place("default", f"solo-{u}", draw(st.sampled_from([0, 100, 500, 2000])))
        elif shape in ("single", "all"):
            name = f"pg{u}"
            size = draw(st.integers(1, 3))
            pgs.append(PodGroup("batch", name, uid=f"uid-pg-{name}", policy="gang", min_count=draw(st.integers(1, size)),
                                disruption_mode=ALL if shape == "all" else SINGLE, priority=gprio))
            for k in range(size):
                place("batch", f"{name}-{k}", draw(pod_prio), group=name)
        else:
            name = f"tree{u}"
            cpgs.append(CompositePodGroup("research", name, uid=f"uid-cpg-{name}",
                                          disruption_mode=ALL if shape == "cpg-all" else SINGLE, priority=gprio))
            for c in range(2):
                leaf = f"{name}-{c}"
                pgs.append(PodGroup("research", leaf, uid=f"uid-pg-{leaf}", parent=name, priority=draw(pod_prio),
                                    disruption_mode=draw(st.sampled_from([SINGLE, ALL]))))
                for k in range(draw(st.integers(1, 2))):
                    place("research", f"{leaf}-{k}", draw(pod_prio), group=leaf)

    # PDBs: several may select one pod; matchLabels or matchExpressions; some disruptedPods.
    running_names = [p.name for p in pods]
    pdbs = []
    for i in range(draw(st.integers(0, 3))):
        ns = draw(st.sampled_from(["default", "batch", "research"]))
        if draw(st.booleans()):
            sel = LabelSelector(match_labels=(("app", draw(st.sampled_from(["web", "db", "etl"]))),))
        else:
            sel = LabelSelector(match_expressions=(
                draw(st.sampled_from([Requirement("tier", "In", ("a",)), Requirement("app", "NotIn", ("web",)),
                                      Requirement("tier", "Exists")])),))
        disrupted = frozenset(draw(st.lists(st.sampled_from(running_names), max_size=2))) if running_names else frozenset()
        pdbs.append(PodDisruptionBudget(ns, f"pdb-{i}", sel, draw(st.integers(0, 2)), disrupted))

    # A pending pod nominated to a node, of equal or higher priority than the preemptor.
    if draw(st.integers(0, 3)) == 0:
        pods.append(_pod("default", "nominee", draw(st.sampled_from([500, 1000])), prio=draw(st.sampled_from([PRIO, 2000])),
                         nominated_node_name=draw(st.sampled_from(nodes)).name))

    # The preemptor: a gang PodGroup (maybe partly running), a CompositePodGroup, or a single pod.
    kind = draw(st.sampled_from(["podgroup", "podgroup", "compositepodgroup", "pod"]))
    cpu = draw(st.sampled_from([1000, 2000]))
    tol = (Toleration("dedicated", "Exists"),) if draw(st.booleans()) else ()
    if kind == "pod":
        pods.append(_pod(NS, "pre", cpu, prio=PRIO, tolerations=tol))
    elif kind == "podgroup":
        replicas = draw(st.integers(1, 4))
        running = draw(st.integers(0, 1))
        pgs.append(PodGroup(NS, "pre", uid="uid-pg-pre", policy="gang", min_count=draw(st.integers(1, replicas + running)),
                            priority=PRIO))
        for k in range(running):
            place(NS, f"pre-run-{k}", PRIO, group="pre")
        for k in range(replicas):
            pods.append(_pod(NS, f"pre-{k}", cpu, prio=PRIO, group="pre", labels={"app": "pre"}, tolerations=tol))
    else:
        cpgs.append(CompositePodGroup(NS, "pre", uid="uid-cpg-pre", policy="gang", min_group_count=draw(st.integers(1, 2)),
                                      priority=PRIO))
        per_child = draw(st.integers(1, 2))
        for c in range(2):
            leaf = f"pre-{c}"
            pgs.append(PodGroup(NS, leaf, uid=f"uid-pg-{leaf}", policy="gang", min_count=per_child, parent="pre", priority=PRIO))
            for k in range(per_child):
                pods.append(_pod(NS, f"{leaf}-{k}", cpu, prio=PRIO, group=leaf, labels={"app": "pre"}, tolerations=tol))

    snap = Snapshot(nodes=nodes, pods=pods, pod_groups=pgs, composite_pod_groups=cpgs, pdbs=pdbs)
    # At least two nodes the preemptor could use once emptied (contention, not a single choice).
    probe = _pod(NS, "probe", cpu, prio=PRIO, tolerations=tol)
    assume(sum(ref.node_status(probe, n, [])[0] == ref.SUCCESS for n in nodes) >= 2)
    return kind, snap


# ---- independent model of the rules the checks need ------------------------------------------

def _group(snap: Snapshot, ns: str, name: str | None):
    return (snap.pod_group(ns, name) or snap.composite_pod_group(ns, name)) if name else None


def all_units(snap: Snapshot) -> list[set[str]]:
    """Pod uids preempted together: everything under the highest All-mode group of a chain."""
    units: dict[str, set[str]] = {}
    for p in snap.pods:
        if not p.scheduled or not p.pod_group_name:
            continue
        g, top = snap.pod_group(p.namespace, p.pod_group_name), None
        while g is not None:
            if g.disruption_mode == ALL:
                top = g
            g = snap.composite_pod_group(g.namespace, g.parent) if g.parent else None
        if top is not None:
            units.setdefault(f"{top.namespace}/{top.name}", set()).add(p.uid)
    return list(units.values())


def fits(snap: Snapshot, pod: Pod, node: Node, running: list[Pod], placed: set[str]) -> bool:
    """Filter with the nominated pods (pending, not placed in this replay) on the reference."""
    noms = [p for p in snap.pods if not p.scheduled and p.nominated_node_name and p.uid not in placed]
    return ref.node_status_with_nominated(pod, node, running, noms)[0] == ref.SUCCESS


def _bind(p: Pod, node: str) -> Pod:
    return replace(p, node_name=node, phase="Running")


def ref_schedule(snap: Snapshot, pod: Pod, running: list[Pod], placed: set[str]) -> str | None:
    """schedulePod on the reference: feasible nodes (with nominated pods), best score, smallest name."""
    feasible = sorted((n for n in snap.nodes if fits(snap, pod, n, running, placed)), key=lambda n: n.name)
    if not feasible:
        return None
    if len(feasible) == 1:
        return feasible[0].name
    s = ref.scores(pod, feasible, running)
    best = max(s.values())
    return min(name for name, v in s.items() if v == best)


def _pending(snap: Snapshot, leaf: PodGroup) -> list[Pod]:
    return sorted((p for p in snap.pods if not p.scheduled and p.namespace == leaf.namespace and p.pod_group_name == leaf.name),
                  key=lambda p: p.name)


def ref_group_fits(snap: Snapshot, kind: str, running: list[Pod]) -> bool:
    """The pod-group cycle on the reference: each leaf gang places its pending pods one by one
    (AssumeAndReserve) and succeeds with running + placed >= minCount; a CompositePodGroup needs
    minGroupCount successful children (a failed child's pods are taken back)."""
    running = list(running)
    placed: set[str] = set()

    def leaf_ok(leaf: PodGroup) -> bool:
        have = sum(1 for p in running if p.namespace == leaf.namespace and p.pod_group_name == leaf.name)
        added = []
        for p in _pending(snap, leaf):
            node = ref_schedule(snap, p, running, placed)
            if node is not None:
                running.append(_bind(p, node))
                placed.add(p.uid)
                added.append(p.uid)
        if have + len(added) >= leaf.min_count and added:
            return True
        running[:] = [p for p in running if p.uid not in added]
        placed.difference_update(added)
        return False

    if kind == "podgroup":
        return leaf_ok(snap.pod_group(NS, "pre"))
    cpg = snap.composite_pod_group(NS, "pre")
    children = sorted((g for g in snap.pod_groups if g.namespace == NS and g.parent == "pre"), key=lambda g: g.name)
    return sum(leaf_ok(c) for c in children) >= cpg.min_group_count


def replay(snap: Snapshot, removed: set[str], placements: list[tuple[Pod, str]]) -> bool:
    running = [p for p in snap.pods if p.scheduled and p.uid not in removed]
    placed: set[str] = set()
    nodes = {n.name: n for n in snap.nodes}
    for pod, node in placements:
        if not fits(snap, pod, nodes[node], running, placed):
            return False
        running.append(_bind(pod, node))
        placed.add(pod.uid)
    return True


# ---- the properties ------------------------------------------------------------------------------

def check(kind: str, snap: Snapshot, res) -> None:
    lower = {p.uid for p in snap.pods if p.scheduled and effective_priority(snap, p) < PRIO}
    running = [p for p in snap.pods if p.scheduled]
    pre_pod = next((p for p in snap.pods if p.namespace == NS and p.name == "pre"), None)
    # Pods that fit bind in an earlier cycle (a basic group, or a gang whose minCount running
    # members meet): the cycle that then fails sees them as running, so the "as the cluster stands"
    # and "with every lower-priority unit removed" checks below are about the first cycle only.
    bound_first = any(c.action == "bind" for c in res.cycles)
    if res.outcome == "Preempt":
        if kind == "pod":  # PostFilter runs only when the pod fits nowhere as the cluster stands
            assert not any(fits(snap, pre_pod, n, running, set()) for n in snap.nodes)
        elif not bound_first:
            assert not ref_group_fits(snap, kind, running), "Preempt, but the group fits as the cluster stands"
        victims = {p.uid for v in res.victims for p in v.unit.pods}
        for v in res.victims:
            for p in v.unit.pods:
                assert effective_priority(snap, p) < PRIO, f"victim {p.key} is not of lower priority"
        for members in all_units(snap):
            assert members <= victims or not members & victims, "an All-mode group was split"
        assert replay(snap, victims, res.placements), "the placement does not fit once the victims are gone"
        for v in res.victims:
            back = victims - {p.uid for p in v.unit.pods}
            assert not replay(snap, back, res.placements), f"victim {v.unit.key} is not needed"
        if kind == "pod":
            assert [n for _, n in res.placements] == [res.nominated_node]
            assert all(p.node_name == res.nominated_node for v in res.victims for p in v.unit.pods
                       if not v.unit.kind.endswith("Group")), "a single-pod victim off the nominated node"
        else:
            _check_min_count(kind, snap, res.placements)
    elif res.outcome == "Unschedulable":
        if kind == "pod":
            for n in snap.nodes:
                here = [p for p in running if not (p.node_name == n.name and p.uid in lower)]
                assert not fits(snap, pre_pod, n, here, set()), f"the pod fits on {n.name} without its lower-priority pods"
        elif not bound_first:
            keep = [p for p in running if p.uid not in lower]
            assert not ref_group_fits(snap, kind, keep), "the group fits with every lower-priority unit removed"
    elif res.outcome == "NoPreemptionNeeded":
        assert not res.victims
        assert replay(snap, set(), res.placements)
        if kind != "pod":
            _check_min_count(kind, snap, res.placements)
            assert ref_group_fits(snap, kind, running)


def _check_min_count(kind: str, snap: Snapshot, placements: list[tuple[Pod, str]]) -> None:
    by_leaf: dict[str, int] = {}
    for p in snap.pods:
        if p.namespace == NS and p.pod_group_name and p.scheduled:
            by_leaf[p.pod_group_name] = by_leaf.get(p.pod_group_name, 0) + 1
    for p, _ in placements:
        by_leaf[p.pod_group_name] = by_leaf.get(p.pod_group_name, 0) + 1
    if kind == "podgroup":
        assert by_leaf.get("pre", 0) >= snap.pod_group(NS, "pre").min_count, "success below minCount"
    else:
        ok = sum(1 for g in snap.pod_groups if g.parent == "pre" and by_leaf.get(g.name, 0) >= g.min_count)
        assert ok >= snap.composite_pod_group(NS, "pre").min_group_count, "success below minGroupCount"


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(contended())
def test_contention(case):
    kind, snap = case
    res = analyze(snap, kind, NS, "pre")
    n_units = len(res.victims)
    event(f"preemptor={kind}")
    event(f"outcome={res.outcome}")
    if res.outcome == "Preempt":
        event("victim units=" + ("1" if n_units == 1 else "2-3" if n_units <= 3 else ">=4"))
        if any(v.violates_pdb for v in res.victims):
            event("a victim violates a PDB")
    target(float(n_units), label="victim units")
    STATS.append((res.outcome, n_units))
    check(kind, snap, res)


def test_contention_rate():
    """At least 40% of the generated examples preempt with two or more victim units."""
    if len(STATS) < 100:  # run alone (or -k): draw the examples here
        STATS.clear()
        test_contention()
    several = sum(1 for outcome, n in STATS if outcome == "Preempt" and n >= 2)
    rate = several / len(STATS)
    print(f"\ncontention: {len(STATS)} examples, {several} preempt with >= 2 victim units ({rate:.0%})")
    assert rate >= 0.40, f"only {rate:.0%} of the examples preempt with several victims"
