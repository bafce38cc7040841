"""Default per-pod preemption for a standalone pending pod: DefaultPreemption.PostFilter
(preemption.go `Preempt`, `findCandidates`, `DryRunPreemption`, `SelectCandidate`,
`pickOneNodeForPreemption`; default_preemption.go `SelectVictimsOnNode`,
`PodEligibleToPreemptOthers`, `calculateNumCandidates`; semantics doc section 2)."""

from __future__ import annotations

from collections import Counter

from ..framework import ties
from ..framework.filtering import pre_filter
from ..framework.groups import GroupIndex
from ..framework.schedule_one import Scheduler, fit_error_message
from ..framework.status import UNRESOLVABLE, UNSCHEDULABLE, Status
from ..framework.volumewarnings import unmodeled as volume_warnings
from ..model import DEFAULT_SCHEDULER, NEVER, PREEMPT_LOWER, Pod, Snapshot
from ..profiles import Profile
from .importance import by_importance
from .pdb import classify
from .result import INVALID, NO_PREEMPTION_NEEDED, NOT_ELIGIBLE, PREEMPT, Preemptor, Result, UnitVerdict
from .result import UNSCHEDULABLE as OUT_UNSCHEDULABLE
from .units import VictimUnit, build_units

PREFIX = "preemption: "
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


def num_candidates(num_nodes: int) -> int:
    """calculateNumCandidates with the default args (10%, at least 100, at most all)."""
    n = num_nodes * MIN_CANDIDATE_NODES_PERCENTAGE // 100
    n = max(n, MIN_CANDIDATE_NODES_ABSOLUTE)
    return min(n, num_nodes)


class _Candidate:
    __slots__ = ("node", "victims", "num_pdb", "verdicts")

    def __init__(self, node: int, victims: list[VictimUnit], num_pdb: int, verdicts: list[UnitVerdict]):
        self.node, self.victims, self.num_pdb, self.verdicts = node, victims, num_pdb, verdicts

    @property
    def pods(self) -> list[Pod]:
        return [p for u in self.victims for p in u.pods]


def _select_victims_on_node(
    snap: Snapshot, sched: Scheduler, pod: Pod, idx: int, units_here: list[VictimUnit], prio: int, profile: Profile,
) -> tuple[_Candidate | None, Status]:
    state = sched.state
    potential = [u for u in units_here if u.priority < prio]
    dra = state.dra
    if dra is not None and dra.preemption:
        # UPSTREAM-DIFF [DRAPreemption, inferred from upstream's integration test
        # "podgroup-preemption"]: a pod whose claim is reserved for its PodGroup is no victim of a
        # pod-by-pod preemptor ("No preemption victims found"); the code is not on disk.
        potential = [u for u in potential if not any(dra.holds_group_claim(p) for p in u.pods)]
    if not potential:
        return None, Status(UNRESOLVABLE, (NO_VICTIMS,), "DefaultPreemption")
    cp = state.checkpoint()
    try:
        cycle = pre_filter(state, pod)
        node_of = {p.uid: state.where[p.uid] for u in potential for p in u.pods}
        for u in potential:
            for p in u.pods:
                i = state.remove_pod(p)
                if cycle.plugins:
                    cycle.remove_pod(state, pod, p, i)
        st = sched.filter_with_nominated(pod, cycle, idx)
        if not st.ok:
            return None, st
        ordered = by_importance(potential)
        violating, non_violating, which = classify(ordered, snap.pdbs, profile)
        victims: list[VictimUnit] = []
        verdicts: list[UnitVerdict] = []
        num_pdb = 0
        for order, u in enumerate(violating + non_violating):
            for p in u.pods:
                state.add_pod(p, node_of[p.uid])
                if cycle.plugins:
                    cycle.add_pod(state, pod, p, node_of[p.uid])
            fst = sched.filter_with_nominated(pod, cycle, idx)
            v = UnitVerdict(u, order, fst.ok, u.violate_count > 0, which.get(u.key, []))
            if not fst.ok:
                for p in u.pods:
                    i = state.remove_pod(p)
                    if cycle.plugins:
                        cycle.remove_pod(state, pod, p, i)
                victims.append(u)
                num_pdb += u.violate_count
                v.failed_pod, v.failed_node, v.failed_status = pod, state.nodes[idx].name, fst
            verdicts.append(v)
        if violating and non_violating:
            victims = by_importance(victims)
        if not victims:
            return None, Status(1, ("expected at least one victim pod on node",), "DefaultPreemption")
        return _Candidate(idx, victims, num_pdb, verdicts), Status()
    finally:
        state.rollback(cp)


def pick_one_node(cands: list[_Candidate], names: list[str]) -> tuple[_Candidate, list[str]]:
    """pickOneNodeForPreemption: keep the best score of each criterion in turn."""
    why: list[str] = []

    def earliest_of_highest(c: _Candidate) -> float:
        pods = c.pods
        top = max((p.priority or 0) for p in pods)
        return min((p.start_time if p.start_time is not None else float("inf")) for p in pods if (p.priority or 0) == top)

    criteria = [
        ("fewest PDB violations", lambda c: -c.num_pdb),
        ("lowest highest-priority victim", lambda c: -(c.pods[0].priority or 0)),
        ("lowest sum of victim priorities", lambda c: -sum((p.priority or 0) + 2**31 for p in c.pods)),
        ("fewest victims", lambda c: -len(c.pods)),
        ("latest start time of the highest-priority victims", earliest_of_highest),
    ]
    left = list(cands)
    for label, f in criteria:
        if len(left) == 1:
            break
        best = max(f(c) for c in left)
        kept = [c for c in left if f(c) == best]
        if len(kept) < len(left):
            why.append(f"{label}: kept {', '.join(names[c.node] for c in kept)}")
        left = kept
    if len(left) > 1:
        # UPSTREAM-DIFF: upstream takes the first candidate of a Go map iteration (random);
        # we take the smallest node name.
        left.sort(key=lambda c: names[c.node])
        why.append(f"tie after all criteria: smallest node name {names[left[0].node]}")
        ties.tie("preemption-candidate", ", ".join(names[c.node] for c in left))
        left = left[ties.pick(len(left)):]  # the smallest name unless ties.explore() is on
    return left[0], why


def preempt_for_pod(
    snap: Snapshot, sched: Scheduler, index: GroupIndex, pod: Pod, generic_workload: bool, profile: Profile,
) -> Result:
    # `profile` has no default: every caller says which version's rules (a forgotten one gave
    # `pending` the 1.37 rules under --scheduler-version 1.38).
    state = sched.state
    prio = pod.priority or 0
    policy = pod.preemption_policy or PREEMPT_LOWER
    pre = Preemptor("Pod", pod.namespace, pod.name, prio, f"Pod {pod.key} spec.priority" + (
        f" (class {pod.priority_class_name})" if pod.priority_class_name else ""), policy, f"Pod {pod.key} spec.preemptionPolicy", [pod])
    res = Result(outcome="", message="", preemptor=pre, algorithm="default")
    steps = res.steps
    steps.append(f"Preemptor Pod {pod.key}: priority {prio}; preemptionPolicy {policy}.")
    res.warnings.extend(volume_warnings(state.volumes, [pod]))
    if pod.uses_resource_claims and state.dra is None:
        res.warnings.append("the pod uses DRA resource claims, but the input has no DRA objects (ResourceClaims, ResourceSlices, "
                            "DeviceClasses): dynamic resource allocation is not modeled")
    err = snap.admission_errors.get(("Pod", pod.namespace, pod.name))
    if err:
        res.outcome, res.message = INVALID, err
        steps.append(f"Priority admission rejects the pod: {err}.")
        return res
    if pod.scheduling_gates:
        # SchedulingGates' PreEnqueue keeps a gated pod out of the active queue: no scheduling
        # cycle, so no preemption, until every gate is removed (framework/plugins/schedulinggates).
        res.outcome = NOT_ELIGIBLE
        res.message = (f"gated by {', '.join(pod.scheduling_gates)}: kube-scheduler does not try the pod until its "
                       "schedulingGates are removed (--ignore-gates answers as if they were)")
        steps.append("The pod has schedulingGates: the SchedulingGates plugin keeps it out of the scheduling queue "
                     "(PreEnqueue), so no cycle runs and nothing is preempted for it.")
        return res
    if pod.scheduler_name != DEFAULT_SCHEDULER:
        # kube-scheduler only takes pods whose schedulerName is one of its profiles (the default
        # configuration has one, default-scheduler); another scheduler's pod is not its to place.
        res.outcome = NOT_ELIGIBLE
        res.message = (f'schedulerName "{pod.scheduler_name}": not scheduled by kube-scheduler (profile {DEFAULT_SCHEDULER}), '
                       "so kube-scheduler never preempts for it")
        steps.append(f"The pod names schedulerName {pod.scheduler_name}: kube-scheduler's informer skips it "
                     "(responsibleForPod), so no cycle runs.")
        return res
    if generic_workload and pod.pod_group_name:
        # With GenericWorkload on, a pod of a pod group is scheduled in its group's pod-group cycle,
        # never on its own, and DefaultPreemption.PostFilter refuses it.
        # UPSTREAM-DIFF: upstream never runs a per-pod cycle for such a pod, so it has no answer
        # of its own; we answer NotEligible with PostFilter's refusal (and point to the group)
        # instead of reporting a per-pod placement kube-scheduler would never make.
        leaf = index.leaf_of(pod)
        res.outcome = NOT_ELIGIBLE
        if leaf is None:
            res.message = (f"{PREFIX}not eligible due to workload aware preemption enabled; the pod waits for its PodGroup "
                           f"{pod.namespace}/{pod.pod_group_name}, which is not in the cluster state")
        else:
            root = index.root_of(leaf)
            res.message = f"{PREFIX}not eligible due to workload aware preemption enabled"
            res.warnings.append(f"pod {pod.key} belongs to {leaf.kind} {leaf.key}: it is scheduled and preempted for with its group; "
                                f"run `whatif {root.kind.lower()} {root.name} -n {root.namespace}`")
        steps.append("The pod belongs to a pod group: with GenericWorkload on, it is scheduled only in its group's pod-group "
                     "cycle and per-pod preemption refuses it (DefaultPreemption.PostFilter).")
        return res
    r = sched.schedule(pod)
    if r.ok:
        res.outcome = NO_PREEMPTION_NEEDED
        res.placements = [(pod, state.nodes[r.node].name)]
        res.message = f"the pod can be scheduled without preemption on {state.nodes[r.node].name}"
        steps.append(f"Scheduling as the cluster stands succeeds on {state.nodes[r.node].name}: no preemption.")
        return res
    fit_msg = r.message()
    steps.append(f"Scheduling fails: {fit_msg}")
    if policy == NEVER:
        res.outcome, res.message = NOT_ELIGIBLE, f"{fit_msg} {PREFIX}not eligible due to preemptionPolicy=Never."
        steps.append("PodEligibleToPreemptOthers: preemptionPolicy=Never.")
        return res
    # v1.38.0-beta.0 preemption.go builds the node's victims with getCrossNodesVictims / NewVictim at
    # each pod's own priority (units.collect `own_priority`).
    units = build_units(state, index, generic_workload, own_priority=profile.victims_keep_pod_priority)
    if pod.nominated_node_name:
        nidx = state.node_index.get(pod.nominated_node_name)
        nst = r.statuses.get(nidx) if nidx is not None else None
        if nidx is not None and not (nst is not None and nst.code == UNRESOLVABLE):
            for u in units:
                if u.priority >= prio:
                    continue
                for p in u.pods:
                    if state.where.get(p.uid) == nidx and p.terminating_by_preemption:
                        res.outcome = NOT_ELIGIBLE
                        res.nominated_node = pod.nominated_node_name
                        res.message = f"{fit_msg} {PREFIX}not eligible due to a terminating pod on the nominated node."
                        steps.append(f"{p.key} on the nominated node {pod.nominated_node_name} is already terminating by preemption.")
                        return res
    potential_nodes = [i for i in range(len(state.nodes)) if (st := r.statuses.get(i)) is not None and st.code == UNSCHEDULABLE]
    names = [n.name for n in state.nodes]
    steps.append(f"{len(potential_nodes)} node(s) failed with a status preemption may resolve (Unschedulable); "
                 f"{len(state.nodes) - len(potential_nodes)} are UnschedulableAndUnresolvable and skipped.")
    units_on: dict[int, list[VictimUnit]] = {}
    for u in units:
        for i in u.nodes:
            units_on.setdefault(i, []).append(u)
    want = num_candidates(len(potential_nodes)) if potential_nodes else 0
    non_violating: list[_Candidate] = []
    violating: list[_Candidate] = []
    node_status: dict[int, Status] = {}
    # UPSTREAM-DIFF: DryRunPreemption starts at a random offset and runs in parallel; we walk the
    # candidate nodes in name order from offset 0, sequentially, stopping at the same condition.
    for i in potential_nodes:
        cand, st = _select_victims_on_node(snap, sched, pod, i, units_on.get(i, []), prio, profile)
        if cand is not None:
            (non_violating if cand.num_pdb == 0 else violating).append(cand)
            res.node_candidates.append({"node": names[i], "victims": [p.key for p in cand.pods], "pdbViolations": cand.num_pdb})
            if non_violating and len(non_violating) + len(violating) >= want:
                break
        else:
            node_status[i] = st
            res.node_candidates.append({"node": names[i], "victims": None, "status": st.message})
    cands = non_violating + violating
    if not cands:
        statuses = dict(node_status)
        for i in range(len(state.nodes)):
            statuses.setdefault(i, Status(UNRESOLVABLE, (NOT_HELPFUL,)))
        res.outcome = OUT_UNSCHEDULABLE
        res.message = f"{fit_msg} {PREFIX}{fit_error_message(len(state.nodes), statuses)}"
        steps.append("No node can be made feasible by preemption.")
        return res
    best, why = pick_one_node(cands, names)
    steps.append(f"{len(cands)} candidate node(s): " + "; ".join(
        f"{names[c.node]} ({len(c.pods)} victim pod(s), {c.num_pdb} PDB violation(s))" for c in cands))
    for w in why:
        steps.append(f"pickOneNodeForPreemption: {w}.")
    node = names[best.node]
    res.outcome = PREEMPT
    res.nominated_node = node
    res.placements = [(pod, node)]
    victim_uids = {u.key for u in best.victims}
    order = {u.key: k for k, u in enumerate(best.victims)}
    res.candidates = list(best.verdicts)
    res.victims = sorted((v for v in best.verdicts if v.unit.key in victim_uids), key=lambda v: order[v.unit.key])
    res.reprieved = [v for v in best.verdicts if v.unit.key not in victim_uids]
    res.num_pdb_violations = best.num_pdb
    res.message = f"preempting {len(best.pods)} pod(s) on node {node}; the pod is nominated to {node}"
    steps.append(f"Chosen node {node}: {len(best.pods)} victim pod(s).")
    return res
