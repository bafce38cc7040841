"""Workload-aware preemption for a root PodGroup or CompositePodGroup: the pod-group cycle
(schedule_one_podgroup.go `podGroupCycle`) and DefaultPreemption's PodGroupPostFilter
(podgrouppreemption.go `Preempt` / `selectVictimsOnDomain`; semantics doc section 3)."""

from __future__ import annotations

from collections.abc import Sequence

from ..framework.groupcycle import pending_pods
from ..framework.groups import Group, GroupIndex, group_priority
from ..framework.podgroup import PodGroupScheduler, quorum_wait
from ..framework.schedule_one import Scheduler
from ..framework.status import SUCCESS, UNSCHEDULABLE
from ..framework.volumewarnings import spared_rwop_holders
from ..framework.volumewarnings import unmodeled as volume_warnings
from ..model import NEVER, Pod, Snapshot
from ..profiles import Profile
from .candidates import choose_victims, reprieve_order, verdict
from .candidates import importance_order as column_order
from .importance import by_importance
from .pdb import classify
from .reprieval import reprieve_in_order
from .result import (
    BIND,
    DEFAULT_MAX_CYCLES,
    INVALID,
    NO_PREEMPTION_NEEDED,
    NOT_ELIGIBLE,
    PREEMPT,
    PREEMPT_CYCLE,
    Cycle,
    Preemptor,
    Result,
    UnitVerdict,
    verdict_flags,
)
from .result import UNSCHEDULABLE as OUT_UNSCHEDULABLE
from .units import collect, victim_priority
from .validation import preemptor_policy, validate_group_pods, validate_hierarchy
from .victimaware import VictimAwareChoice

PREFIX = "pod group preemption: "


# The reason given for a member pod the group never reached (its scheduling stopped earlier).
NOT_ATTEMPTED = "not attempted: the group failed before this pod was tried"


def _members(index: GroupIndex, root: Group) -> tuple[list[Pod], list[Pod]]:
    pending: list[Pod] = []
    running: list[Pod] = []
    for leaf in index.leaves_under(root):
        pending.extend(pending_pods(index, leaf))
        running.extend(p for p in index.pods(leaf) if p.scheduled)
    return pending, running


def _unplaced(res_failures: dict, pending: list[Pod], placed: set[str]) -> list[tuple[Pod, str]]:
    out = []
    for p in pending:
        if p.uid in placed:
            continue
        r = res_failures.get(p.uid)
        out.append((p, r.message() if r is not None else NOT_ATTEMPTED))
    return out


def preempt_for_group(
    snap: Snapshot,
    sched: Scheduler,
    index: GroupIndex,
    root: Group,
    policy_gate: bool = False,
    generic_workload: bool = True,
    fast: bool = True,
    tas: bool = True,
    max_cycles: int = DEFAULT_MAX_CYCLES,
    *,
    profile: Profile,
) -> Result:
    # `profile` has no default: every caller says which version's rules (see preempt_for_pod).
    state = sched.state
    pending, running = _members(index, root)
    prio = group_priority(root)
    policy, policy_src = preemptor_policy(root, pending, policy_gate, profile.preemption_policy_gated)
    pre = Preemptor(
        kind=root.kind,
        namespace=root.namespace,
        name=root.name,
        priority=prio,
        priority_source=(
            (f"PriorityClass {root.priority_class_name} (resolved by priority admission for {root.kind} {root.key})"
             if root.priority_class_name else f"the default priority (priority admission for {root.kind} {root.key})")
            if root.priority_admitted
            else f"{root.kind} {root.key} spec.priority" + (f" (class {root.priority_class_name})" if root.priority_class_name else "")
        ),
        preemption_policy=policy,
        policy_source=policy_src,
        pods=pending,
        running=running,
    )
    res = Result(outcome="", message="", preemptor=pre, algorithm="workload-aware")
    steps = res.steps
    steps.append(f"Preemptor {root.kind} {root.key}: priority {prio} from {pre.priority_source}; preemptionPolicy {policy} ({policy_src}).")
    steps.append(f"{len(pending)} pod(s) to place, {len(running)} member pod(s) already running.")
    for w in _unmodeled_warnings(root, pending, index, tas, dra_modelled=sched.state.dra is not None):
        res.warnings.append(w)
    res.warnings.extend(volume_warnings(state.volumes, pending))

    # A group whose parent CompositePodGroup does not exist is never popped: GangScheduling's
    # PreEnqueue waits for the tree (v1.37.2 gangscheduling.go "waiting for composite pod group %q
    # tree to meet quorum"; the v1.37.2 and v1.38.0-beta.0 oracles leave such a group pending with
    # nothing preempted).
    if index.composite_enabled and root.parent and index.parent_of(root) is None:
        res.outcome = NOT_ELIGIBLE
        res.message = (f"waits for its parent CompositePodGroup {root.namespace}/{root.parent}, which does not exist: "
                       "kube-scheduler does not take the group into a scheduling cycle until the tree exists")
        steps.append(f"{root.kind} {root.key} names parent CompositePodGroup {root.namespace}/{root.parent}, which is not in the "
                     "cluster state: GangScheduling's PreEnqueue keeps its pods out of the queue, so nothing is preempted.")
        return res

    # Priority admission rejected the preemptor (or one of its pods).
    for kind, obj in [(g.kind, g) for g in index.chain(root)] + [("Pod", p) for p in pending]:
        err = snap.admission_errors.get((kind, obj.namespace, obj.name))
        if err:
            res.outcome, res.message = INVALID, err
            steps.append(f"Priority admission rejects {kind} {obj.namespace}/{obj.name}: {err}.")
            return res

    # GangScheduling's PreEnqueue: a tree that has not met its quorum is never popped, so neither
    # validated nor preempted for (a hierarchy without pending pods is answered below).
    wait = quorum_wait(index, root) if pending else None
    if wait:
        res.outcome, res.message = NOT_ELIGIBLE, wait
        steps.append(f"GangScheduling PreEnqueue: {wait}. No cycle runs, so nothing is preempted.")
        return res

    # validatePodGroup: every pod of the hierarchy, scheduled and unscheduled.
    # A group with no pods is never popped from the queue upstream, so never validated: only
    # a hierarchy with pods is (1.38's validation fails on an empty one).
    err = (validate_hierarchy(index, root, pending + running) if profile.validate_hierarchy and (pending or running)
           else validate_group_pods(root, pending + running, policy_gate))
    if err:
        res.outcome, res.message = INVALID, err
        steps.append(f"Validation fails (validatePodGroup): {err}. Nothing is scheduled and no preemption is attempted.")
        return res
    steps.append("Validation passes: every member pod has the group's priority, scheduler and preemption policy.")
    gated = sorted({g for leaf in index.leaves_under(root) for p in index.pods(leaf)
                    if p.scheduling_gates and not p.node_name and not p.terminal for g in p.scheduling_gates})
    if not pending and gated:
        # SchedulingGates PreEnqueue: every unscheduled member is gated, so no cycle runs.
        res.outcome = NOT_ELIGIBLE
        res.message = (f"gated by {', '.join(gated)}: kube-scheduler does not try the group's pods until their "
                       "schedulingGates are removed (--ignore-gates answers as if they were)")
        steps.append("Every unscheduled member pod has schedulingGates: the SchedulingGates plugin keeps them out of the "
                     "scheduling queue (PreEnqueue), so no cycle runs and nothing is preempted for the group.")
        return res
    if not pending:
        res.outcome, res.message = NO_PREEMPTION_NEEDED, "the group has no pending pods to place"
        steps.append("No pending member pods: nothing to schedule.")
        return res

    pgs = PodGroupScheduler(sched, index, tas, profile.no_pods_schedulable_message)
    cp_bound = state.checkpoint()
    try:
        out = _cycles(snap, sched, index, root, pgs, res, pending, prio, policy, generic_workload, fast, max_cycles, profile)
        if out.outcome == PREEMPT:
            out.warnings.extend(spared_rwop_holders(state, pending, {p.uid for p in out.victim_pods}))
        return out
    finally:
        # Pods bound in earlier cycles were added to the state: the analysis leaves it as it was.
        state.rollback(cp_bound)
        index.bound.clear()


def _cycles(
    snap: Snapshot, sched: Scheduler, index: GroupIndex, root: Group, pgs: PodGroupScheduler, res: Result,
    pending: list[Pod], prio: int, policy: str, generic_workload: bool, fast: bool, max_cycles: int, profile: Profile,
) -> Result:
    """Pod-group cycles until the group is placed, or a cycle fails and PodGroupPostFilter runs
    (upstream-changes.md 2.2). podGroupCycle runs PodGroupPostFilter only when the root status is
    Unschedulable: a basic group (or a gang whose minCount running members already meet) that
    partly fits binds what fits, and the pods left are requeued; their next cycle, with the bound
    pods now running members, is where preemption happens (integration test "Binding first before
    preemption for basic policy")."""
    state, steps = sched.state, res.steps
    cycle = 1
    while True:
        # 1. The pod-group cycle as the cluster stands.
        first = pgs.run_root(root)
        if first.status.code != SUCCESS:
            break
        placed = [(a.pod, state.nodes[a.node].name) for a in first.assignments]
        placed_uids = {a.pod.uid for a in first.assignments}
        left = [p for p in pending if p.uid not in placed_uids]
        res.placements.extend(placed)
        res.cycles.append(Cycle(cycle, BIND, placed=placed))
        steps.extend(_placement_steps(first))
        if not left or cycle >= max_cycles:
            res.outcome = NO_PREEMPTION_NEEDED
            res.unplaced = _unplaced(first.failures, pending, placed_uids)
            n_placed, n_all = len(res.placements), len(res.placements) + len(res.unplaced)
            res.message = f"the group can be scheduled without preemption: {n_placed}/{n_all} pending pod(s) placed"
            steps.append(f"Cycle {cycle}: scheduling the group as the cluster stands succeeds: {len(placed)} pod(s) placed. "
                         "Binding has priority over preemption, so no preemption runs.")
            if res.unplaced:
                steps.append(f"{len(res.unplaced)} pod(s) stay pending and are retried in a later cycle "
                             f"(analysis stopped after {max_cycles} cycle(s): --cycles).")
            return res
        steps.append(f"Cycle {cycle}: {len(placed)} pod(s) fit as the cluster stands and bind without preemption "
                     f"(Success: PodGroupPostFilter does not run); {len(left)} pod(s) are requeued for the next cycle.")
        # Bind: the placed pods become running members of the group for the next cycle.
        for a in first.assignments:
            state.add_pod(a.pod, a.node)
            index.bound[a.pod.uid] = a.node
        pending = left
        cycle += 1

    sched_msg = first.status.message
    steps.append(f"Cycle {cycle}: scheduling the group as the cluster stands fails: {sched_msg}. "
                 "PodGroupPostFilter (workload-aware preemption) runs.")
    bound_first = list(res.placements)  # pods bound without preemption in earlier cycles
    res.cycles.append(Cycle(cycle, PREEMPT_CYCLE))
    if first.status.code != UNSCHEDULABLE:
        res.outcome, res.message = OUT_UNSCHEDULABLE, sched_msg
        return _close_cycle(res, bound_first)
    return _close_cycle(_post_filter(snap, sched, index, root, pgs, res, pending, prio, policy, generic_workload, fast, profile),
                        bound_first)


def _close_cycle(res: Result, bound_first: list[tuple[Pod, str]]) -> Result:
    """Fill the last cycle's record from the result, and say in the message that some pods bind
    without preemption first."""
    last = res.cycles[-1]
    last.outcome = res.outcome
    last.placed = [pc for pc in res.placements if pc not in bound_first]
    last.victims = list(res.victims)
    if bound_first and res.outcome != NO_PREEMPTION_NEEDED:
        res.message += f" (after {len(bound_first)} pod(s) bind without preemption in earlier cycle(s))"
    return res


def _post_filter(
    snap: Snapshot, sched: Scheduler, index: GroupIndex, root: Group, pgs: PodGroupScheduler, res: Result,
    pending: list[Pod], prio: int, policy: str, generic_workload: bool, fast: bool, profile: Profile,
) -> Result:
    """DefaultPreemption's PodGroupPostFilter for the pods still pending (podgrouppreemption.go
    Preempt / selectVictimsOnDomain)."""
    state, steps = sched.state, res.steps

    # 2. Eligibility.
    if policy == NEVER:
        res.outcome, res.message = NOT_ELIGIBLE, PREFIX + "not eligible due to preemptionPolicy=Never."
        steps.append("The preemptor may not preempt: preemptionPolicy=Never.")
        return res
    nominated = {p.nominated_node_name for p in pending if p.nominated_node_name}
    for nn in sorted(nominated):
        idx = state.node_index.get(nn)
        if idx is None:
            continue
        for p in state.pods_on(idx):
            # IsPodGroupWaitingForVictims: v1.38.0-beta.0 compares the pod's own priority (executor.go).
            if victim_priority(p, index, generic_workload, profile.victims_keep_pod_priority) < prio and p.terminating_by_preemption:
                res.outcome = NOT_ELIGIBLE
                # isOngoingPreemption (PR #138710): newer code returns Success with the members'
                # current nominations and picks no new victims; v1.36 reported the group
                # ineligible. UPSTREAM-DIFF: either way nothing new is preempted, and our report
                # contract names that outcome NotEligible (not a Success with zero victims).
                res.message = PREFIX + f"ongoing preemption on nominated nodes ({nn}): not eligible due to a terminating pod on the nominated node."
                res.nominated_node = nn
                steps.append(
                    f"Ongoing preemption: {p.key} on nominated node {nn} is terminating by preemption; "
                    "the scheduler waits for it instead of choosing new victims."
                )
                return res

    # 3. Potential victims: every unit cluster-wide with strictly lower effective priority.
    keep: list[Pod] = []
    cands = collect(state, index, generic_workload, below=prio, keep=keep, own_priority=profile.victims_keep_pod_priority)
    if not len(cands):
        res.outcome, res.message = OUT_UNSCHEDULABLE, PREFIX + "No preemption victims found for incoming preemptor"
        steps.append("No running unit has a lower priority than the preemptor: nothing to preempt.")
        return res
    res.num_potential = len(cands)
    # The fast path works on the candidates as columns (preemption/candidates.py); the literal
    # reference and the 1.38 victim-aware choice (which reads every unit) on VictimUnits.
    columnar = fast and not profile.victim_aware_placement
    if columnar:
        order = column_order(cands)
        top = [cands.unit(k) for k in order[:10]]
    else:
        ordered = by_importance(cands.units())
        top = ordered[:10]
    steps.append(f"{len(cands)} candidate unit(s) with priority below {prio}, most important first: " + "; ".join(
        f"{u.kind} {u.namespace}/{u.name} (priority {u.priority}, {len(u.pods)} pod(s))" for u in top
    ) + (" ..." if len(cands) > 10 else ""))

    cp = state.checkpoint()
    classified: tuple | None = None
    try:
        # node_of: where every pod (each potential victim among them) ran before the removal.
        node_of = state.remove_pods(cands.victim_pods, keep)
        # 4. Schedule once on the cluster without any potential victim (fresh cycle states);
        # under the 1.38 profile each pod's node choice prefers the cheapest new victims.
        if profile.victim_aware_placement:
            classified = classify(ordered, snap.pdbs, profile)
            sched.preference = VictimAwareChoice(sched, classified[0] + classified[1], node_of)
            steps.append("Victim-aware node choice (Kubernetes 1.38 rules, DefaultPreemption RankNodes): each preemptor pod goes to "
                         "the feasible nodes whose surviving potential victims cost least (none; then fewest PDB violations; then, from "
                         "the highest priority down, lower priority and fewer pods; fewest pods; smaller units), choosing a node "
                         "condemns all of its surviving victims, then the score plugins decide; reprieval later keeps those not needed.")
        try:
            after = pgs.run_root(root)
        finally:
            sched.preference = None
        if after.status.code != SUCCESS:
            res.outcome = OUT_UNSCHEDULABLE
            res.message = PREFIX + after.status.message
            placed = {a.pod.uid for a in after.assignments}
            res.unplaced = _unplaced(after.failures, pending, placed)
            steps.append(f"Even with every candidate removed the group does not fit: {after.status.message}.")
            return res
        # What upstream's scheduling function proposes: the tree's assignments, plus the pods a
        # failed child group had placed one by one (framework/groupcycle.py GroupResult.leaked).
        leaked = after.leaked if profile.failed_child_pods_proposed else []
        valid = after.assignments + leaked
        # With TAS the scheduling function already chose the best placement (topology domain);
        # reprieval below keeps these assignments fixed, i.e. it works inside that domain.
        steps.extend(_placement_steps(after))
        proposed = [(a.pod, state.nodes[a.node].name) for a in valid]
        res.placements.extend(proposed)
        res.unplaced = _unplaced(after.failures, pending, {a.pod.uid for a in valid})
        steps.append(f"With every candidate removed the group fits: {len(valid)} pod(s) placed ("
                     + ", ".join(f"{n}: {c}" for n, c in _per_node(proposed)) + ").")

        # 5. PDB classification on the importance order; reprieve violating units first.
        if columnar:
            reprieve_units, n_violating, which_k = reprieve_order(cands, order, snap.pdbs, profile)
        else:
            # The same classification as above when the victim-aware choice made it (same units,
            # same order, same budgets: classify depends on nothing else).
            violating, non_violating, which = classified or classify(ordered, snap.pdbs, profile)
            n_violating = len(violating)
        steps.append(f"PDBs: {n_violating} unit(s) would violate a PodDisruptionBudget and are tried for reprieve first.")
        if profile.reprieval == "two-phase":
            # Same verdicts as the full replay (upstream documents the phases as equivalent, and
            # the default ReprieveFilter attempts every victim): only the procedure is named.
            steps.append("Reprieval by the 1.38 procedure: " + ("the ReprieveFilter admits each unit, then " if profile.reprieve_filter else "")
                         + "Phase 1 checks node-local Filters on the unit's nodes and Phase 2 the cross-node Filters over every "
                         "assignment (the same verdicts as replaying every assignment).")
        if columnar:
            res.candidates, res.reprieved, res.victims = choose_victims(
                sched, cands, reprieve_units, which_k, valid, node_of, leaked=bool(leaked))
        else:
            order_units = violating + non_violating
            outcomes = reprieve_in_order(sched, order_units, valid, node_of, fast, leaked=bool(leaked))
            candidates = [verdict(u, i, out, which.get(u.key), state.nodes) for i, (u, out) in enumerate(zip(order_units, outcomes))]
            res.candidates = candidates
            res.reprieved = [v for v in candidates if v.reprieved]
            res.victims = [v for v in candidates if not v.reprieved]
        steps.extend(_reprieve_steps(res.candidates))
        res.num_pdb_violations = sum(v.unit.violate_count for v in res.victims)
    finally:
        state.rollback(cp)
    n = sum(len(v.unit.pods) for v in res.victims)
    res.outcome = PREEMPT
    res.message = f"found a placement for {root.kind.lower()}, preempting {n} victims"
    steps.append(f"Result: {n} victim pod(s) in {len(res.victims)} unit(s); {len(res.reprieved)} unit(s) spared; "
                 f"{res.num_pdb_violations} PDB violation(s).")
    return res


# Consecutive spared units are summarized in one explanation step from this many on: a 5,000-node
# cluster has ~100k candidates, almost all spared for the same reason. Spared units that a PDB
# protects are tried first and name their PDB, so they are listed one by one unless there are
# many (~27k at L).
_RUN = 4
_PDB_RUN = 50


def _reprieve_steps(verdicts: Sequence[UnitVerdict]) -> list[str]:
    """One "Reprieve i" step per unit, except that a long run of consecutive spared units (alike
    in whether a PDB protects them) becomes one step naming the first and last (every unit keeps
    its own verdict and reason in the report's candidate lists). Runs are found on the flags, so
    only the verdicts named in a step are read."""
    out: list[str] = []
    spared, protected = verdict_flags(verdicts)
    i, n = 0, len(verdicts)
    while i < n:
        j = i
        if spared[i]:
            while j + 1 < n and spared[j + 1] and protected[j + 1] == protected[i]:
                j += 1
        if j - i + 1 >= (_PDB_RUN if protected[i] else _RUN):
            a, b = verdicts[i].unit, verdicts[j].unit
            note = " (each would violate a PodDisruptionBudget if preempted)" if protected[i] else ""
            out.append(f"Reprieve {i + 1}-{j + 1}: {j - i + 1} units, {a.kind} {a.namespace}/{a.name} ... {b.kind} {b.namespace}/{b.name} "
                       f"-> spared: every placed preemptor pod still fits with each of them back{note}.")
            i = j + 1
            continue
        for k in range(i, j + 1):
            v = verdicts[k]
            out.append(f"Reprieve {k + 1}: {v.unit.kind} {v.unit.namespace}/{v.unit.name} -> {v.reason}.")
        i = j + 1
    return out


def _per_node(placements: list[tuple[Pod, str]]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for _, n in placements:
        counts[n] = counts.get(n, 0) + 1
    return sorted(counts.items())


def _tree(index: GroupIndex | None, root: Group) -> list[Group]:
    out, todo, seen = [], [root], set()
    while todo:
        g = todo.pop()
        if (g.kind, g.namespace, g.name) in seen:
            continue
        seen.add((g.kind, g.namespace, g.name))
        out.append(g)
        if index is not None and g.kind == "CompositePodGroup":
            todo.extend(index.children(g))
    return out


def _placement_steps(res) -> list[str]:
    return [f"Topology-aware scheduling: {key} is placed in topology domain {dom!r} (best placement)."
            for key, dom in res.chosen_placements.items()]


def _unmodeled_warnings(root: Group, pods: list[Pod], index: GroupIndex | None = None, tas: bool = True,
                        dra_modelled: bool = False) -> list[str]:
    out = []
    if getattr(root, "uses_resource_claims", False):
        out.append("the PodGroup has resourceClaims (DRAWorkloadResourceClaims): PodGroup-level claims are not modeled")
    elif any(p.uses_resource_claims for p in pods) and not dra_modelled:
        out.append("preemptor pods use DRA resource claims, but the input has no DRA objects: dynamic resource allocation is not modeled")
    if not tas:
        keys = sorted({k for g in _tree(index, root) for k in g.topology_keys})
        if keys:
            out.append(
                "topology-aware scheduling constraints (" + ", ".join(keys) + ") are ignored: "
                "TopologyAwareWorkloadScheduling is off, so the group is placed with the default algorithm over all nodes"
            )
    return out
