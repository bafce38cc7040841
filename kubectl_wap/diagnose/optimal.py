"""`whatif --optimal`: the fewest victims with which the group could be placed on this snapshot.

Workload-aware preemption is not minimal (it removes every candidate, places the gang on the
emptied cluster, then reprieves in importance order), so this asks an exact question beside it:
over every choice of victim units and every placement of the preemptor's pending pods, minimize,
in upstream's order of importance (pickOneNodeForPreemption's criteria, applied to the whole
choice): PDB violations, then victim pods per priority level from the highest level down (so the
highest victim priority first), then victim pods, then victim units.

Modelled: per-node resources (every resource, and the pod count) with every running pod and the
nominated pods kube-scheduler would reserve room for (equal or higher priority); taints, node
affinity/selector and cordons (the static filters, via the framework's cache); a unit is one
choice (a disruption-mode All group goes whole); the number of pods placed per leaf group is at
least what kube-scheduler's own placement places (so both answers place the same gang).
Not modelled in the solver (so the solver's placement is re-checked with our own Filter plugins
before it is reported): inter-pod (anti-)affinity, topology spread, host ports, topology-aware
placement domains, scoring (the optimum need not be where kube-scheduler would put the pods).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import gc_paused
from ..framework.buildstate import build_state, no_progress
from ..framework.filtering import pre_filter
from ..framework.groups import GroupIndex
from ..framework.nominated import nominator_pods
from ..framework.podgroup import PodGroupScheduler
from ..framework.schedule_one import Scheduler
from ..framework.state import ClusterState
from ..framework.status import SUCCESS
from ..model import NEVER, Pod, Snapshot
from ..preemption.gates import Gates
from ..preemption.importance import by_importance
from ..preemption.pdb import pdb_matches
from ..preemption.result import PREEMPT, UNSCHEDULABLE, Result
from ..preemption.units import VictimUnit, build_units
from .solver import LinearModel, Solution, solve_lexicographic

MAX_CUTS = 5
UNMODELLED = ("inter-pod affinity/anti-affinity", "topology spread", "host ports",
              "topology-aware placement domains", "scoring (where kube-scheduler would prefer the pods)")


@dataclass(slots=True)
class OptimalAnswer:
    status: str  # optimal | feasible (time limit) | infeasible | not-applicable | unverified
    message: str
    victims: list[VictimUnit] = field(default_factory=list)
    placements: list[tuple[Pod, str]] = field(default_factory=list)
    pdb_violations: int = 0
    solution: Solution | None = None
    variables: int = 0
    constraints: int = 0
    verify_failure: str = ""
    # Once these victims are gone, does kube-scheduler's own cycle (as the cluster then stands, its
    # own placement and scoring) place the group? None: not checked.
    scheduler_places: bool | None = None
    cuts: list[str] = field(default_factory=list)  # placements our Filters refused, excluded before solving again
    scheduler_pdb_violations: int = 0  # kube-scheduler's victims, counted as the model counts them
    unmodelled: tuple[str, ...] = UNMODELLED

    @property
    def victim_pods(self) -> int:
        return sum(len(u.pods) for u in self.victims)


@gc_paused
def optimal_victims(snap: Snapshot, res: Result, gates: Gates | None = None, time_limit: float = 10.0,
                    backend: str = "highs", progress: Callable[[str, int, int | None], None] | None = None) -> OptimalAnswer:
    """The exact answer for the preemptor of `res` (a workload-aware or default analysis).
    `progress` hears the state's build, ("model", 0, None) while the model is written, ("solve",
    solves so far, None) before each solve (one more per cut) and ("verify", 0, None)."""
    tick = progress if progress is not None else no_progress
    pre = res.preemptor
    gang_unschedulable = (res.outcome == UNSCHEDULABLE and pre.kind in ("PodGroup", "Pod") and bool(pre.pods)
                          and pre.preemption_policy != NEVER)
    if res.outcome != PREEMPT and not gang_unschedulable:
        return OptimalAnswer("not-applicable", f"kube-scheduler's answer is {res.outcome}: there are no victims to minimize")
    gates = gates or Gates()
    index = GroupIndex.build(snap, composite_enabled=gates.composite_pod_group)
    state = build_state(snap, progress=progress)
    tick("model", 0, None)
    nominated = nominator_pods(snap.pods)
    sched = Scheduler(state, nominated)
    prio = res.preemptor.priority
    placed = res.placements or ([(res.preemptor.pods[0], res.nominated_node)] if res.nominated_node else [])
    pods = [p for p, _ in placed]
    need: dict[str, int] = defaultdict(int)  # leaf group (or the pod itself) -> pods kube-scheduler places
    for p in pods:
        need[p.pod_group_name or p.key] += 1
    if res.outcome == UNSCHEDULABLE:
        # kube-scheduler places nothing: ask for what the gang needs (minCount less its running members).
        need = _min_need(index, res)
    units = build_units(state, index, gates.generic_workload, below=prio)

    m = LinearModel()
    # Preemptor pods by shape: (leaf, requests, static signature) -> pods
    shapes: dict[tuple, list[Pod]] = defaultdict(list)
    for p in res.preemptor.pods:
        shapes[(p.pod_group_name or p.key, tuple(sorted(p.requests.items())), tuple(sorted(p.node_selector.items())),
                p.affinity, p.tolerations)].append(p)
    z: dict[tuple[int, int], int] = {}  # (shape, node) -> var
    shape_list = list(shapes.values())
    for s, group in enumerate(shape_list):
        codes = sched.static.get(group[0]).codes
        fits_alloc = np.all(state.alloc >= _req(state, group[0]), axis=1) & (state.alloc_pods >= 1)
        for i in np.flatnonzero((codes == SUCCESS) & fits_alloc):
            z[(s, int(i))] = m.var(len(group), f"z{s}_{state.nodes[int(i)].name}")
    on_node: dict[int, list[tuple[int, int]]] = defaultdict(list)  # node -> [(shape, var)]
    of_shape: dict[int, list[int]] = defaultdict(list)
    for (s, i), v in z.items():
        on_node[i].append((s, v))
        of_shape[s].append(v)
    nodes = sorted(on_node)
    node_set = set(nodes)
    x: dict[int, int] = {}
    for k, u in enumerate(units):
        if any(i in node_set for i in u.nodes):
            x[k] = m.var(1, f"x_{u.key}")
    # Every leaf places at least what kube-scheduler places, at most its pending pods.
    by_leaf: dict[str, list[int]] = defaultdict(list)
    for (s, _), v in z.items():
        by_leaf[shape_list[s][0].pod_group_name or shape_list[s][0].key].append(v)
    for leaf, n in need.items():
        vs = by_leaf.get(leaf, [])
        if not vs:
            return OptimalAnswer("infeasible", f"no node can hold {leaf}'s pods at all (taints, node affinity, cordons, "
                                               "or allocatable below one pod's requests)")
        m.row(vs, [1] * len(vs), lo=n)
    for s, group in enumerate(shape_list):
        if vs := of_shape.get(s):
            m.row(vs, [1] * len(vs), hi=len(group))
    # Resources per node: incoming - freed <= free (nominated pods of >= priority reserve room).
    reserved = np.zeros_like(state.requested)
    reserved_pods = np.zeros(len(state.nodes), dtype=np.int64)
    for idx, noms in sched.nominated.items():
        for p in noms:
            if (p.priority or 0) >= prio and p.uid not in {q.uid for q in res.preemptor.pods}:
                reserved[idx] += _req(state, p)
                reserved_pods[idx] += 1
    unit_pods_on: dict[int, list[tuple[int, Pod]]] = defaultdict(list)
    for k in x:
        for p in units[k].pods:
            i = state.where.get(p.uid)
            if i is not None and i in node_set:
                unit_pods_on[i].append((k, p))
    shape_req = [_req(state, g[0]) for g in shape_list]
    for i in nodes:
        free = state.alloc[i] - state.requested[i] - reserved[i]
        victims_here = [(x[k], _req(state, p)) for k, p in unit_pods_on.get(i, ())]
        for r in range(len(state.resources)):
            idx = [v for s, v in on_node[i] if shape_req[s][r]]
            if not idx:
                continue
            coef = [int(shape_req[s][r]) for s, v in on_node[i] if shape_req[s][r]]
            freed: dict[int, int] = defaultdict(int)
            for v, rq in victims_here:
                if rq[r]:
                    freed[v] += int(rq[r])
            m.row(idx + list(freed), coef + [-a for a in freed.values()], hi=int(free[r]))
        idx = [v for _, v in on_node[i]]
        freed_n: dict[int, int] = defaultdict(int)
        for k, _ in unit_pods_on.get(i, ()):
            freed_n[x[k]] += 1
        m.row(idx + list(freed_n), [1] * len(idx) + [-c for c in freed_n.values()],
              hi=int(state.alloc_pods[i] - state.pod_count[i] - reserved_pods[i]))
    # PDB violations: per budget, victims matched beyond disruptionsAllowed.
    objectives: list[tuple[str, list[int], list[int]]] = []
    viol: list[int] = []
    for b in snap.pdbs:
        matched: dict[int, int] = defaultdict(int)
        for k, v in x.items():
            for p in units[k].pods:
                if p.namespace == b.namespace and p.name not in b.disrupted_pods and pdb_matches(b, p):
                    matched[v] += 1
        if sum(matched.values()) > max(b.disruptions_allowed, 0):
            w = m.var(sum(matched.values()), f"viol_{b.namespace}/{b.name}")
            m.row(list(matched) + [w], list(matched.values()) + [-1], hi=max(b.disruptions_allowed, 0))
            viol.append(w)
    objectives.append(("PDB violations", viol, [1] * len(viol)))
    levels: dict[int, list[int]] = defaultdict(list)
    for k in x:
        levels[units[k].priority].append(k)
    for lvl in sorted(levels, reverse=True):
        ks = levels[lvl]
        objectives.append((f"victim pods at priority {lvl}", [x[k] for k in ks], [len(units[k].pods) for k in ks]))
    objectives.append(("victim pods", [x[k] for k in x], [len(units[k].pods) for k in x]))
    objectives.append(("victim units", [x[k] for k in x], [1] * len(x)))

    deadline = time.monotonic() + time_limit
    cuts: list[str] = []
    while True:
        tick("solve", len(cuts), None)
        sol = solve_lexicographic(m, objectives, max(deadline - time.monotonic(), 0.0), backend)
        ans = OptimalAnswer("", "", solution=sol, variables=len(m.ub), constraints=len(m.rows), cuts=cuts,
                            scheduler_pdb_violations=pdb_violations(snap, [v.unit for v in res.victims]))
        if sol.values is None:
            ans.status = "infeasible" if sol.infeasible else "no-solution"
            ans.message = ("no placement exists under the modelled constraints" + (" and the cuts" if cuts else "")
                           if sol.infeasible else f"no solution within the time limit ({time_limit:g} s)")
            return ans
        vals = sol.values
        ans.victims = by_importance([units[k] for k, v in x.items() if vals[v]])  # most important first
        ans.pdb_violations = sum(vals[w] for w in viol)
        # Turn the counts into pods on nodes, in kube-scheduler's order, and check them with our Filters.
        counts = {key: vals[v] for key, v in z.items() if vals[v]}
        ans.placements, failure = _verify(state, sched, shape_list, counts, ans.victims)
        if failure is None:
            break
        (s_, i_, before), ans.verify_failure = failure
        if len(cuts) >= MAX_CUTS:
            ans.status, ans.message = "unverified", f"the solver's placement fails our Filter plugins: {ans.verify_failure}"
            return ans
        # No more pods of this shape on that node than the Filters accepted; solve again.
        cuts.append(f"at most {before} pod(s) like {shape_list[s_][0].key} on {state.nodes[i_].name}: {ans.verify_failure}")
        m.ub[z[(s_, i_)]] = before
    ans.verify_failure = ""
    tick("verify", 0, None)
    ans.scheduler_places = _scheduler_places(state, sched, index, gates, res, ans.victims, sum(need.values()))
    if cuts:
        # Not exact: a cut from a cross-node plugin (affinity, spread) may
        # forbid placements that another arrangement of the other pods would allow.
        ans.status = "feasible"
        ans.message = f"best found after {len(cuts)} cut(s) from our Filter plugins (optimal under the cuts, not proven overall)"
    else:
        ans.status = "optimal" if sol.optimal else "feasible"
        ans.message = "proven optimal" if sol.optimal else "best found within the time limit"
    return ans


def _min_need(index: GroupIndex, res: Result) -> dict[str, int]:
    pre = res.preemptor
    if pre.kind == "Pod":
        return {pre.pods[0].key: 1}
    pg = index.pgs.get((pre.namespace, pre.name))
    if pg is None:
        return {}
    running = len(pre.running)
    return {pg.name: max(pg.min_count - running, 1) if pg.policy == "gang" else 1}


def pdb_violations(snap: Snapshot, units: list[VictimUnit]) -> int:
    """Victim pods beyond each budget's disruptionsAllowed, summed over budgets: what the model's
    first objective counts (a pod already in disruptedPods does not count again)."""
    out = 0
    pods = [p for u in units for p in u.pods]
    for b in snap.pdbs:
        n = sum(1 for p in pods if p.namespace == b.namespace and p.name not in b.disrupted_pods and pdb_matches(b, p))
        out += max(n - max(b.disruptions_allowed, 0), 0)
    return out


def _scheduler_places(state: ClusterState, sched: Scheduler, index: GroupIndex, gates: Gates, res: Result,
                      victims: list[VictimUnit], placed: int) -> bool:
    """With the victims removed, kube-scheduler's first step (the pod-group cycle, or the pod's
    scheduling cycle) places at least as many pods as its own preemption answer did."""
    cp = state.checkpoint()
    try:
        state.remove_pods([p for u in victims for p in u.pods])
        pre = res.preemptor
        if pre.kind == "Pod":
            return sched.schedule(pre.pods[0]).ok
        root = (index.pgs if pre.kind == "PodGroup" else index.cpgs).get((pre.namespace, pre.name))
        if root is None:
            return False
        r = PodGroupScheduler(sched, index, gates.topology_aware_workload_scheduling, gates.profile.no_pods_schedulable_message).run_root(root)
        return r.status.code == SUCCESS and len(r.assignments) >= placed
    finally:
        state.rollback(cp)


def _req(state: ClusterState, p: Pod) -> np.ndarray:
    """The pod's requests over every resource column of the state (dense_request may be shorter)."""
    r = state.dense_request(p)
    return r if len(r) == len(state.resources) else np.pad(r, (0, len(state.resources) - len(r)))


def _verify(state: ClusterState, sched: Scheduler, shapes: list[list[Pod]], counts: dict[tuple[int, int], int],
            victims: list[VictimUnit]) -> tuple[list[tuple[Pod, str]], tuple[tuple[int, int, int], str] | None]:
    """Remove the victims, then place each pod on its solver node through Filter (with nominated
    pods) and assume it, as the scheduling cycle would; roll everything back after. On failure:
    ((shape, node, pods of that shape the node accepted before), why)."""
    cp = state.checkpoint()
    out: list[tuple[Pod, str]] = []
    try:
        state.remove_pods([p for u in victims for p in u.pods])
        for s, group in enumerate(shapes):
            slots = [(i, c) for (s2, i), c in sorted(counts.items()) if s2 == s]
            it = iter(group)
            for i, c in slots:
                for n in range(c):
                    p = next(it)
                    st = sched.filter_with_nominated(p, pre_filter(state, p), i)
                    if not st.ok:
                        return out, ((s, i, n), f"pod {p.key} on {state.nodes[i].name}: {st.plugin} ({st.message})")
                    state.add_pod(p, i)
                    out.append((p, state.nodes[i].name))
    finally:
        state.rollback(cp)
    return out, None
