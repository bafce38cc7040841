"""Pod-group (gang) scheduling: what kube-scheduler's pod-group cycle runs for a root entity
(schedule_one_podgroup.go runRootSchedulingAlgorithm, podGroupSchedulingDefaultAlgorithm,
compositePodGroupSchedulingDefaultAlgorithm; GangScheduling PlacementFeasible)."""

from __future__ import annotations

import numpy as np

from ..model import DEFAULT_SCHEDULER, WORKLOAD_MAX_TREE_DEPTH, CompositePodGroup, Pod, PodGroup
from .groupcycle import Assignment, GroupResult, pending_pods
from .groups import Group, GroupIndex
from .placement import run_placement_algorithm
from .schedule_one import Scheduler
from .status import ERROR, SUCCESS, UNSCHEDULABLE, WAIT, Status

GANG = "GangScheduling"


def placement_feasible(min_count: int, scheduled: int, remaining: int) -> Status:
    """GangScheduling.PlacementFeasible (Basic groups use minCount 1)."""
    if remaining + scheduled < min_count:
        return Status(UNSCHEDULABLE, (f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining",), GANG)
    if scheduled < min_count:
        return Status(WAIT, (f"minCount ({min_count}) is not yet satisfied: {scheduled} scheduled, {remaining} remaining",), GANG)
    return Status(SUCCESS, (), GANG)


def quorum_wait(index: GroupIndex, root: Group) -> str | None:
    """Why GangScheduling's PreEnqueue keeps the tree's pods out of the queue, or None when it lets
    them in. A PodGroup is ready when the pods kube-scheduler knows of in it (every non-terminal
    member: bound ones of any scheduler, pending ones of its own, gated ones included) reach its
    minCount (1 for basic); a CompositePodGroup when its ready children reach minGroupCount (1 for
    basic). The tree's pods are queued only when its root is ready: v1.37.2 gangscheduling.go
    preEnqueueWithHierarchies / isCPGTreeReady / isPGReady (AllPodsCount), v1.38.0-beta.0
    hierarchy_tracker.go isGroupReady. Until then no cycle runs, so nothing is preempted (the
    oracle's scheduler leaves such a tree pending: tests/scenarios/wap-quorum-*)."""

    def known(p: Pod) -> bool:
        # the scheduler's pod informer drops terminal pods; a pending pod reaches its cache only
        # when it is this scheduler's (eventhandlers.go addPod / responsibleForPod)
        return not p.terminal and (bool(p.node_name) or p.scheduler_name == DEFAULT_SCHEDULER)

    def have_need(g: Group, depth: int) -> tuple[int, int]:
        """(pods known, minCount) of a PodGroup; (ready children, minGroupCount) of a CPG."""
        if isinstance(g, PodGroup):
            return sum(1 for p in index.pods(g) if known(p)), (g.min_count if g.policy == "gang" else 1)
        need = g.min_group_count if g.policy == "gang" else 1
        if depth > WORKLOAD_MAX_TREE_DEPTH:
            return 0, need
        return sum(1 for ch in index.children(g) if ready(ch, depth + 1)), need

    def ready(g: Group, depth: int) -> bool:
        have, need = have_need(g, depth)
        return have >= need

    have, need = have_need(root, 0)
    if have >= need:
        return None
    if isinstance(root, PodGroup):
        return (f"waiting for minCount pods: PodGroup {root.namespace}/{root.name} has {have} of {root.min_count}; kube-scheduler "
                "does not take its pods into a scheduling cycle until they exist")
    return (f"waiting for CompositePodGroup {root.namespace}/{root.name}'s tree to meet quorum: {have} of {need} child group(s) "
            "have their minimum of pods (or ready children); kube-scheduler does not take its pods into a scheduling cycle "
            "until it does")


def scheduled_count(index: GroupIndex, pg: PodGroup) -> int:
    """PodGroupState.ScheduledPodsCount: running members, and members bound in an earlier cycle."""
    bound = index.bound
    return sum(1 for p in index.pods(pg) if p.scheduled or p.uid in bound)


class PodGroupScheduler:
    def __init__(self, scheduler: Scheduler, index: GroupIndex, tas: bool = True,
                 nothing_placed: str = "pod group is unschedulable"):
        self.sched = scheduler
        # The fit error of a cycle that placed no pod: the version profile's wording
        # (profiles.py no_pods_schedulable_message).
        self.nothing_placed = nothing_placed
        self.state = scheduler.state
        self.index = index
        self._path: set[tuple[str, str]] = set()
        # TopologyAwareWorkloadScheduling: groups with schedulingConstraints.topology run the
        # placement algorithm (placement.py). `placement` is the node mask currently assumed in
        # the snapshot (None = every node), `root` the entity this cycle runs for.
        self.tas = tas
        self.placement: np.ndarray | None = None
        self.root: Group | None = None

    def run_root(self, root: Group) -> GroupResult:
        """runRootSchedulingAlgorithm: schedule the whole tree, then revert every assume so the
        cluster is unchanged; the result keeps the proposed assignments."""
        cp = self.state.checkpoint()
        self.root, self.placement = root, None
        try:
            res = self._run(root)
        finally:
            self.state.rollback(cp)
        if res.status.code == SUCCESS and not res.any_scheduled:
            res.status = Status(UNSCHEDULABLE, (self.nothing_placed,), GANG)
        return res

    def _run(self, g: Group) -> GroupResult:
        if self.tas and g.topology_keys:
            # TAS placement algorithm (placement.py); groups without topology are unchanged
            return run_placement_algorithm(self, g)
        return self.run_default_algorithm(g)

    def run_default_algorithm(self, g: Group) -> GroupResult:
        """podGroupSchedulingDefaultAlgorithm / compositePodGroupSchedulingDefaultAlgorithm: the
        group's pods (or children) in the current placement; placement.py runs it per placement."""
        if isinstance(g, CompositePodGroup):
            return self._run_composite(g)
        return self._run_leaf(g)

    def _run_leaf(self, pg: PodGroup) -> GroupResult:
        pods = pending_pods(self.index, pg)
        scheduled = scheduled_count(self.index, pg)
        remaining = len(pods)
        min_count = pg.min_count if pg.policy == "gang" else 1
        res = GroupResult(placement_feasible(min_count, scheduled, remaining))
        if res.status.code == UNSCHEDULABLE:
            res.group_statuses[pg.key] = res.status
            return res
        cp = self.state.checkpoint()
        status = res.status
        for pod in pods:
            r = self.sched.schedule(pod, self.placement)
            if r.ok:
                self.state.add_pod(pod, r.node)  # AssumeAndReserveInSnapshot
                res.assignments.append(Assignment(pod, r.node, r.cycle))
                scheduled += 1
            else:
                res.failures[pod.uid] = r
            remaining -= 1
            st = placement_feasible(min_count, scheduled, remaining)
            status = st
            if st.code == UNSCHEDULABLE:
                break  # fast-fail: minCount can no longer be reached
            res.any_scheduled = res.any_scheduled or r.ok
        return self._finish(res, status, cp, pg.key)

    def _finish(self, res: GroupResult, status: Status, cp: int, key: str) -> GroupResult:
        """End of a group's algorithm: a final Wait is Unschedulable; a failed group reverts every
        assume it (and, for a CompositePodGroup, its children) made, so children that succeeded
        under a failed parent are invalidated too (completeCompositePodGroupAlgorithmResultMap)."""
        if status.code == WAIT:
            status = Status(UNSCHEDULABLE, status.reasons, GANG)
        if status.code != SUCCESS:
            self.state.rollback(cp)
            res.leaked = res.assignments + res.leaked
            res.assignments = []
            res.any_scheduled = False
        res.status = status
        res.group_statuses[key] = status
        return res

    def _run_composite(self, cpg: CompositePodGroup) -> GroupResult:
        # A parent cycle (impossible through the API, possible in a hand-written file) must not
        # recurse forever: a child already on the current path is left out.
        path = self._path
        key = (cpg.namespace, cpg.name)
        path.add(key)
        try:
            children = [c for c in self.index.children(cpg) if isinstance(c, PodGroup) or (c.namespace, c.name) not in path]
            return self._run_composite_children(cpg, children)
        finally:
            path.discard(key)

    def _run_composite_children(self, cpg: CompositePodGroup, children: list[Group]) -> GroupResult:
        min_count = cpg.min_group_count if cpg.policy == "gang" else 1
        scheduled, remaining = 0, len(children)
        res = GroupResult(placement_feasible(min_count, scheduled, remaining))
        if res.status.code == UNSCHEDULABLE:
            res.group_statuses[cpg.key] = res.status
            return res
        cp = self.state.checkpoint()
        status = res.status
        for child in children:
            r = self._run(child)
            res.failures.update(r.failures)
            res.group_statuses.update(r.group_statuses)
            res.leaked.extend(r.leaked)
            if r.status.code == ERROR:
                status = r.status
                break
            remaining -= 1
            if r.status.code == SUCCESS:
                scheduled += 1
                # UPSTREAM-DIFF: upstream concatenates the children's assignments by iterating a
                # map; we keep child order, then each child's scheduling order (semantics doc 3.4).
                res.assignments.extend(r.assignments)
                res.any_scheduled = res.any_scheduled or r.any_scheduled
            status = placement_feasible(min_count, scheduled, remaining)
            if status.code == UNSCHEDULABLE:
                break
        return self._finish(res, status, cp, cpg.key)
