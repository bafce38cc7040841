"""The reprieval loop of workload-aware preemption: podgrouppreemption.go `selectVictimsOnDomain`
(in-place Filter reprieval, PR #139980; semantics doc 3.4).

All potential victims have been removed and the preemptor's placement is fixed. Each unit, in
reprieve order, is put back; the placement is replayed (Filter with nominated pods, then assume,
for every placed preemptor pod in scheduling order, each with the cycle state it was placed with);
if every pod still fits the unit stays (spared), otherwise it is taken out again (a victim).

Two implementations, proven equal by tests/test_reprieval_equivalence.py:
- `literal`: replays every assignment for every unit, as upstream does.
- `fast`: with only node-local plugins in play, a unit can change verdicts only on the nodes its
  pods occupy, so only the assignments on those nodes are replayed, and a unit whose nodes hold no
  preemptor pod fits without any replay. When a cross-node plugin (inter-pod affinity, topology
  spread) is in play for any assignment or the unit carries anti-affinity, the two-phase check of
  upstream's open PR #142152 runs instead (`_two_phase`), and AddPod/RemovePod are skipped for
  assignments whose template signature group the victim pod cannot affect.

The loop over all units is `reprieve_in_order`; one unit is `reprieve`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..framework.filtering import CycleData, cross_node_filter
from ..framework.groupcycle import Assignment
from ..framework.plugins.dynamicresources import reaches_other_nodes
from ..framework.plugins.selectors import affinity_label_keys, selector_keys, term_label_keys
from ..framework.schedule_one import Scheduler
from ..framework.status import Status
from ..model import Pod
from .units import VictimUnit


@dataclass(slots=True)
class ReprieveOutcome:
    fits: bool
    failed: Assignment | None = None
    status: Status | None = None


def template_signature(pod: Pod, label_keys: frozenset[str] | None = None) -> tuple:
    """What a cross-node plugin's AddPod/RemovePod outcome depends on, on the preemptor side:
    pods with equal signatures (one gang template) react identically to the same victim pod.
    With `label_keys` (see signature_label_keys) only those labels count: a label no selector
    reads, such as an Indexed Job's completion index, cannot change any match."""
    labels = pod.labels.items()
    if label_keys is not None:
        labels = [kv for kv in labels if kv[0] in label_keys]
    return (
        pod.namespace,
        tuple(sorted(labels)),
        pod.affinity,
        pod.tolerations,
        tuple(sorted(pod.node_selector.items())),
        pod.topology_spread,
    )


def signature_label_keys(units: list[VictimUnit], valid: list[Assignment]) -> frozenset[str]:
    """Every label key whose value on a preemptor pod can change a cross-node AddPod/RemovePod
    outcome for these victims: keys read by the victims' required anti-affinity terms (matched
    against the preemptor pod: InterPodAffinity updateWithPod), and keys of the preemptor pods'
    own terms and spread constraints (their matchLabelKeys take the preemptor's values)."""
    keys: set[str] = set()
    for u in units:
        if unit_has_cross_node_terms(u):
            for p in u.pods:
                if p.affinity is not None:
                    for t in p.affinity.pod_anti_affinity_required:
                        keys |= term_label_keys(t)
    for a in valid:
        keys |= affinity_label_keys(a.pod.affinity)
        for c in a.pod.topology_spread:
            keys |= selector_keys(c.label_selector) | set(c.match_label_keys)
    return frozenset(keys)


def _add_back(
    sched: Scheduler, unit: VictimUnit, valid: list[Assignment], node_of: dict[str, int], cycles: bool,
    groups: list[list[int]] | None,
) -> tuple[set[int], dict[str, list[int]]]:
    """Put the unit's pods back, with PreFilter AddPod on every assignment's cycle state.

    `groups` (fast path) are the indices of the assignments with cross-node cycle data, grouped
    by template signature: pods with equal signatures react identically to the same victim pod,
    so when AddPod changes nothing for a group's first assignment it would change nothing for
    the others, and they are skipped. Returns (indices of assignments whose cycle data changed,
    victim uid -> the groups skipped for it, which _take_out skips too). Without `groups`
    (the literal reference) every assignment gets the call, as upstream."""
    st = sched.state
    changed: set[int] = set()
    unaffected: dict[str, list[int]] = {}
    for p in unit.pods:
        idx = node_of[p.uid]
        st.add_pod(p, idx)
        if not cycles:
            continue
        if groups is None:
            for i, a in enumerate(valid):
                if a.cycle.plugins and a.cycle.add_pod(st, a.pod, p, idx):  # RunPreFilterExtensionAddPod
                    changed.add(i)
            continue
        skipped = unaffected[p.uid] = []
        for g, members in enumerate(groups):
            a = valid[members[0]]
            if not a.cycle.add_pod(st, a.pod, p, idx):
                skipped.append(g)
                continue
            changed.add(members[0])
            for i in members[1:]:
                b = valid[i]
                if b.cycle.add_pod(st, b.pod, p, idx):
                    changed.add(i)
    return changed, unaffected


def _take_out(
    sched: Scheduler, unit: VictimUnit, valid: list[Assignment], cycles: bool, groups: list[list[int]] | None,
    unaffected: dict[str, list[int]],
) -> None:
    st = sched.state
    for p in unit.pods:
        idx = st.remove_pod(p)
        if not cycles:
            continue
        if groups is None:
            for a in valid:
                if a.cycle.plugins:
                    a.cycle.remove_pod(st, a.pod, p, idx)  # RunPreFilterExtensionRemovePod
            continue
        skipped = set(unaffected.get(p.uid, ()))
        for g, members in enumerate(groups):
            if g in skipped:
                continue  # AddPod changed nothing there, so RemovePod changes nothing either
            for i in members:
                b = valid[i]
                b.cycle.remove_pod(st, b.pod, p, idx)


def signature_groups(valid: list[Assignment], keys: frozenset[str]) -> list[list[int]]:
    """Indices of the assignments with cross-node cycle data, grouped by template signature
    (groups in order of first appearance, members in scheduling order)."""
    by_sig: dict[tuple, list[int]] = {}
    for i, a in enumerate(valid):
        if a.cycle.plugins:
            by_sig.setdefault(template_signature(a.pod, keys), []).append(i)
    return list(by_sig.values())


def _replay(sched: Scheduler, assignments: list[Assignment]) -> ReprieveOutcome:
    """Filter + Reserve (assume) each assignment in order; always undone afterwards."""
    st = sched.state
    cp = st.checkpoint()
    try:
        for a in assignments:
            status = sched.filter_with_nominated(a.pod, a.cycle, a.node)
            if not status.ok:
                return ReprieveOutcome(False, a, status)
            st.add_pod(a.pod, a.node)
        return ReprieveOutcome(True)
    finally:
        st.rollback(cp)


def preemptor_has_cross_node_terms(valid: list[Assignment], dra_state: Any = None) -> bool:
    """Whether any placed preemptor pod carries terms whose cross-node Filter verdict depends on
    other pods: required pod (anti-)affinity, or DoNotSchedule topology spread."""
    for a in valid:
        aff = a.pod.affinity
        if aff is not None and (aff.pod_affinity_required or aff.pod_anti_affinity_required):
            return True
        if any(c.when_unsatisfiable == "DoNotSchedule" for c in a.pod.topology_spread):
            return True
        if a.pod.resource_claims and a.cycle.plugins and dra_state is not None and reaches_other_nodes(a.pod, a.cycle, dra_state):
            # DynamicResources with devices reachable from several nodes (allNodes or nodeSelector
            # slices): a victim anywhere may hold one, so no unit is spared without a full replay.
            return True
    return False


def unit_has_cross_node_terms(unit: VictimUnit) -> bool:
    """A victim with required anti-affinity changes InterPodAffinity's existing-pods counts."""
    if unit.anti_affinity is not None:
        return unit.anti_affinity
    return any(p.affinity is not None and p.affinity.pod_anti_affinity_required for p in unit.pods)


FITS = ReprieveOutcome(True)  # shared by every trivially spared unit; never mutated


@dataclass(slots=True)
class ReprievePlan:
    """What the reprieval loop decides once for all units (reprieve_in_order's preamble)."""

    fast: bool  # the fast path (False: replay every assignment for every unit, as upstream)
    by_node: dict[int, list[tuple[int, Assignment]]]
    preemptor_cross: bool  # a placed preemptor pod carries cross-node terms
    groups: list[list[int]] | None  # signature_groups (fast path)
    touched: set[int]  # nodes holding a placed preemptor pod
    trivial: bool  # a unit off `touched` without cross-node terms fits without a check
    dra: bool  # _dra_in_play

    def reprieve(self, sched: Scheduler, unit: VictimUnit, valid: list[Assignment], node_of: dict[str, int]) -> ReprieveOutcome:
        return reprieve(sched, unit, valid, node_of, self.by_node, fast=self.fast, preemptor_cross=self.preemptor_cross,
                        groups=self.groups, dra=self.dra)


def plan_reprieval(sched: Scheduler, units: list[VictimUnit], valid: list[Assignment], fast: bool = True,
                   leaked: bool = False) -> ReprievePlan:
    """The reprieval loop's decisions before its first unit. `units` must include every unit with
    cross-node terms (signature_label_keys reads theirs; it skips the others).

    `leaked`: `valid` holds assignments of a failed child group (GroupResult.leaked), placed and
    then reverted, so the pods placed after them never saw them."""
    if fast and any(getattr(p, "needs_literal_replay", False) for a in valid for p, _ in a.cycle.plugins):
        # A volume plugin in play (a ReadWriteOncePod claim count, CSI attach limits): its
        # verdicts follow neither the node-local nor the cross-node split below.
        fast = False
    if fast and leaked and not _replay(sched, valid).fits:
        # The fast path rests on the replay passing with every victim gone (true of assignments
        # placed one after another, each with the earlier ones assumed). Leaked assignments break
        # that: e.g. a failed gang's first pod and a sibling group's pods proposed on one node
        # that holds only one of them. Upstream replays every assignment for every unit, so the
        # overcommitted node fails each check and no unit is spared (gen-5000-4823: all ten
        # lower-priority pods preempted); only the literal replay gives that.
        fast = False
    by_node = index_by_node(valid)
    preemptor_cross = preemptor_has_cross_node_terms(valid, sched.state)
    groups = signature_groups(valid, signature_label_keys(units, valid)) if fast else None
    return ReprievePlan(fast, by_node, preemptor_cross, groups, set(by_node), fast and not preemptor_cross,
                        _dra_in_play(valid))  # DRA once, not per unit: O(assignments) each time


def reprieve_in_order(
    sched: Scheduler, order: list[VictimUnit], valid: list[Assignment], node_of: dict[str, int], fast: bool = True,
    leaked: bool = False,
) -> list[ReprieveOutcome]:
    """The reprieval loop of selectVictimsOnDomain: try to put back each unit in `order`
    (PDB-violating units first, each group by importance); one outcome per unit, in order.
    `leaked`: see plan_reprieval.

    The common case is decided inline: with the fast path on and no cross-node terms on either
    side, a unit whose nodes hold no preemptor pod fits without any replay, which is what almost
    all of a large cluster's candidates are (preemption/candidates.py decides it for all of them
    at once)."""
    plan = plan_reprieval(sched, order, valid, fast, leaked)
    trivial, touched = plan.trivial, plan.touched
    out: list[ReprieveOutcome] = []
    for u in order:
        if trivial and u.nodes.isdisjoint(touched) and not unit_has_cross_node_terms(u):
            out.append(FITS)
        else:
            out.append(plan.reprieve(sched, u, valid, node_of))
    return out


def reprieve(
    sched: Scheduler,
    unit: VictimUnit,
    valid: list[Assignment],
    node_of: dict[str, int],
    by_node: dict[int, list[tuple[int, Assignment]]],
    fast: bool = True,
    preemptor_cross: bool = True,
    groups: list[list[int]] | None = None,  # signature_groups (fast path; None: call every assignment)
    dra: bool | None = None,  # _dra_in_play(valid), if the caller knows it
) -> ReprieveOutcome:
    """Try to put `unit` back. On success it stays in the cluster state permanently.

    When neither the preemptor's pods nor the unit carry cross-node terms, the cross-node
    plugins' AddPod/RemovePod are no-ops for this unit (nothing they count changes) and their
    Filter verdicts cannot change; the fast path then skips those calls and replays only the
    assignments on the nodes the unit occupies. (A unit none of whose nodes holds a preemptor pod
    then fits without any replay: reprieve_in_order decides that case before calling here. Its
    pods need not even be put back: no later check looks at those nodes.)"""
    cross = preemptor_cross or unit_has_cross_node_terms(unit)
    if not fast:
        cross = True  # the literal reference always does the full upstream sequence
        groups = None
    changed, unaffected = _add_back(sched, unit, valid, node_of, cross, groups)
    if not cross:
        out = _replay(sched, [a for _, a in _on_unit_nodes(unit, node_of, by_node)])
    elif fast and not (_dra_in_play(valid) if dra is None else dra):
        # Not with DRA: the DynamicResources verdict depends on the devices the assignments
        # before it were allocated (their assumes), which the two-phase check leaves out.
        out = _two_phase(sched, unit, valid, node_of, by_node, changed)
    else:
        out = _replay(sched, valid)
    if not out.fits:
        _take_out(sched, unit, valid, cross, groups, unaffected)
    return out


def _dra_in_play(valid: list[Assignment]) -> bool:
    """Whether a placed preemptor pod has resource claims that DynamicResources checks."""
    return any(a.pod.resource_claims and a.cycle.plugins for a in valid)


_NODE_LOCAL = CycleData()


def _two_phase(
    sched: Scheduler,
    unit: VictimUnit,
    valid: list[Assignment],
    node_of: dict[str, int],
    by_node: dict[int, list[tuple[int, Assignment]]],
    changed: set[int],
) -> ReprieveOutcome:
    """The two-phase reprieval of upstream PR #142152, equal to the literal replay:
    phase 1 replays only the assignments on the nodes the unit occupies with the node-local
    Filters (the others see an unchanged node, so they pass as before); phase 2 runs only the
    cross-node Filters of every assignment against its (already updated) cycle data, which does
    not depend on the replay's assumes. The first failure in scheduling order wins, and on one
    assignment a node-local failure comes first, as in the profile's Filter order. Phase 2
    re-checks only the assignments whose cycle data AddPod changed."""
    subset = _on_unit_nodes(unit, node_of, by_node)
    first: tuple[int, Assignment, Status] | None = None
    st = sched.state
    cp = st.checkpoint()
    try:
        for i, a in subset:
            status = sched.filter_with_nominated(a.pod, _NODE_LOCAL, a.node)
            if not status.ok:
                first = (i, a, status)
                break
            st.add_pod(a.pod, a.node)
    finally:
        st.rollback(cp)
    limit = first[0] if first is not None else len(valid)
    # Phase 2 needs only the assignments whose cycle data the unit changed: an unchanged cycle
    # state gives the same cross-node verdict as before, and that verdict was a pass.
    for i in sorted(changed):
        if i >= limit:
            break
        a = valid[i]
        if sched.has_nominated_for(a.pod, a.node):
            status = sched.filter_with_nominated(a.pod, a.cycle, a.node)
        else:
            status = cross_node_filter(st, a.pod, a.cycle, a.node)
        if not status.ok:
            first = (i, a, status)
            break
    if first is None:
        return ReprieveOutcome(True)
    return ReprieveOutcome(False, first[1], first[2])


def index_by_node(valid: list[Assignment]) -> dict[int, list[tuple[int, Assignment]]]:
    out: dict[int, list[tuple[int, Assignment]]] = {}
    for i, a in enumerate(valid):
        out.setdefault(a.node, []).append((i, a))
    return out


def _on_unit_nodes(
    unit: VictimUnit, node_of: dict[str, int], by_node: dict[int, list[tuple[int, Assignment]]]
) -> list[tuple[int, Assignment]]:
    """(scheduling order, assignment) of the preemptor pods placed on the nodes the unit
    occupies, in scheduling order."""
    touched = {node_of[p.uid] for p in unit.pods}
    return sorted(x for n in touched for x in by_node.get(n, ()))
