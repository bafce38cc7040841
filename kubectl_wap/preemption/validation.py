"""Scheduler-side validation of a pod group before it is scheduled: schedule_one_podgroup.go
`validatePodGroup` (semantics doc 5.2), and the preemptor's priority and policy
(manager.go `getPreemptorPriority` / `getPreemptionPolicy`)."""

from __future__ import annotations

from ..framework.groups import Group, GroupIndex, group_priority
from ..model import ALL, DEFAULT_SCHEDULER, NEVER, PREEMPT_LOWER, SINGLE, WORKLOAD_MAX_TREE_DEPTH, CompositePodGroup, Pod



def _policy(p: str | None) -> str:
    return p or PREEMPT_LOWER


def validate_group_pods(root: Group, pods: list[Pod], policy_gate: bool) -> str | None:
    """First validation error over every pod of the hierarchy, unscheduled pods first, then the
    scheduled ones (validateScheduledPods), or None. The first pod sets the reference scheduler
    name (and, with the PodGroupPreemptionPolicy gate off, the reference policy); messages print
    the offending pod's value first. Error strings are upstream's, verbatim."""
    if not pods:
        return None
    first = pods[0]
    root_prio = group_priority(root)
    for p in pods:
        if p.scheduler_name != first.scheduler_name:
            return (
                "all pods in a single pod group should have the same .spec.schedulerName set, "
                f'got: "{p.scheduler_name}" and "{first.scheduler_name}"'
            )
        if (p.priority or 0) != root_prio:
            return (
                "all pods in a single pod group should have the same priority as the pod group's priority, "
                f"got {p.priority or 0} and {root_prio}"
            )
        if policy_gate:
            if _policy(p.preemption_policy) != _policy(root.preemption_policy):
                return (
                    "all pods in a single pod group should have the same preemption policy as the pod group's "
                    f"preemption policy, got {_policy(p.preemption_policy)} and {_policy(root.preemption_policy)}"
                )
        elif _policy(p.preemption_policy) != _policy(first.preemption_policy):
            return (
                "all pods in a single pod group should have the same preemption policy, "
                f"got {_policy(p.preemption_policy)} and {_policy(first.preemption_policy)}"
            )
    if first.scheduler_name != DEFAULT_SCHEDULER:
        # UPSTREAM-DIFF: we model only the default-scheduler profile; a group for another
        # scheduler would be ignored by kube-scheduler, and we say so the way validation does.
        return f'profile not found for scheduler name "{first.scheduler_name}"'
    return None


def preemptor_policy(root: Group, unscheduled: list[Pod], policy_gate: bool, gated: bool = True) -> tuple[str, str]:
    """(policy, where it came from). `gated` (1.37, podGroupPreemptor): gate on, the root
    object's spec.preemptionPolicy (nil is PreemptLowerPriority); gate off, Never if any
    unscheduled member pod says Never. Not gated (v1.38.0-beta.0 manager.go getPreemptionPolicy,
    the gate removed): the root's spec.preemptionPolicy when set, else the pods' rule."""
    if not gated and root.preemption_policy:
        return root.preemption_policy, f"{root.kind} {root.key} spec.preemptionPolicy"
    if gated and policy_gate:
        return _policy(root.preemption_policy), f"{root.kind} {root.key} spec.preemptionPolicy" + (
            "" if root.preemption_policy else " (unset: PreemptLowerPriority)"
        )
    # the pods' rule: gate off (1.37), or no group policy (1.38)
    unset = f"{root.kind} {root.key} sets no spec.preemptionPolicy and "
    for p in unscheduled:
        if p.preemption_policy == NEVER:
            return NEVER, (f"member pod {p.key} has preemptionPolicy Never (PodGroupPreemptionPolicy gate off)" if gated
                           else unset + f"member pod {p.key} has Never")
    return PREEMPT_LOWER, ("no unscheduled member pod sets Never (PodGroupPreemptionPolicy gate off)" if gated
                           else unset + "no unscheduled member pod sets Never")


def _key(g: Group) -> str:
    """framework.EntityKey.String(): "podgroup/NS/NAME" or "compositepodgroup/NS/NAME"."""
    return f"{g.kind.lower()}/{g.namespace}/{g.name}"


def validate_hierarchy(index: GroupIndex, root: Group, pods: list[Pod]) -> str | None:
    """The 1.38 profile's validation: v1.38.0-beta.0 schedule_one_podgroup.go
    validatePodGroupHierarchy / validatePodGroupSubtree (read). Depth first from the root; for each
    group below the root, in this order: its workload against the root's, its priority, its
    preemption policy (when set) against the expected one, no basic child of a gang parent, no
    Single child of an All parent; for each PodGroup its unscheduled pods, then its scheduled ones.
    The expected policy is the root's spec.preemptionPolicy, or when unset the first pod's. The
    reference scheduler name is the first pod's. Error strings verbatim (objects named by
    EntityKey, "podgroup/NS/NAME"); no PodGroupPreemptionPolicy gate (1.38 removed it). UPSTREAM-DIFF: upstream walks PodGroupInfo.Children() and the queue's pod order; we walk
    children and pods in the snapshot's order (GroupIndex), so which of two errors is reported
    first may differ; whether there is an error does not."""
    root_prio = group_priority(root)
    expected = root.preemption_policy or ""
    first = pods[0] if pods else None
    if first is not None and not expected:
        expected = _policy(first.preemption_policy)
    scheduler = first.scheduler_name if first is not None else ""
    by_leaf: dict[tuple[str, str], list[Pod]] = {}
    for p in pods:  # pending first, then running: each leaf's unscheduled pods before its scheduled ones
        by_leaf.setdefault((p.namespace, p.pod_group_name or ""), []).append(p)

    def check_pod(p: Pod) -> str | None:
        if p.scheduler_name != scheduler:
            return ("all pods in a pod group hierarchy should have the same .spec.schedulerName set, "
                    f'got: "{p.scheduler_name}" ("{p.name}") and "{scheduler}" ("{first.name if first else ""}")')
        if (p.priority or 0) != root_prio:
            return ("all pods in a pod group hierarchy should have the same priority as the root pod group's priority, "
                    f'got {p.priority or 0} ("{p.name}") and {root_prio} ("{_key(root)}")')
        if _policy(p.preemption_policy) != expected:
            return ("all pods in a pod group hierarchy should have the same preemption policy, "
                    f'got {_policy(p.preemption_policy)} ("{p.name}") and {expected}')
        return None

    def check_child(g: Group, parent: Group) -> str | None:
        if g.workload_name != root.workload_name:
            return (f'pod group workload does not match root workload, got: "{g.workload_name}" ("{_key(g)}") and '
                    f'"{root.workload_name}" ("{_key(root)}")')
        if group_priority(g) != root_prio:
            return ("all pod groups in a hierarchy should have the same priority as the root pod group's priority, "
                    f'got {group_priority(g)} ("{_key(g)}") and {root_prio} ("{_key(root)}")')
        if g.preemption_policy and g.preemption_policy != expected:
            return ("all pod groups in a hierarchy should have the same preemption policy, "
                    f'got {g.preemption_policy} ("{_key(g)}") and {expected}')
        if parent.policy == "gang" and g.policy == "basic":
            return f'gang parent "{_key(parent)}" cannot have basic child "{_key(g)}"'
        if parent.disruption_mode_set and parent.disruption_mode == ALL and g.disruption_mode_set and g.disruption_mode == SINGLE:
            return f'parent "{_key(parent)}" with All disruption mode cannot have child "{_key(g)}" with Single disruption mode'
        return None

    def subtree(g: Group, parent: Group | None, depth: int, seen: set) -> str | None:
        if isinstance(g, CompositePodGroup) and depth == WORKLOAD_MAX_TREE_DEPTH:
            return f'hierarchy depth exceeds maximum allowed depth {WORKLOAD_MAX_TREE_DEPTH} at "{_key(g)}"'
        if parent is not None:
            err = check_child(g, parent)
            if err:
                return err
        if isinstance(g, CompositePodGroup):
            if (g.namespace, g.name) in seen:
                return None
            seen.add((g.namespace, g.name))
            for c in index.children(g):
                err = subtree(c, g, depth + 1, seen)
                if err:
                    return err
            return None
        for p in by_leaf.get((g.namespace, g.name), []):
            err = check_pod(p)
            if err:
                return err
        return None

    err = subtree(root, None, 1, set())
    if err:
        return err
    # With no pod the reference name stays "" and no profile has it (upstream's "failure when no
    # pods to evaluate"; the engine does not validate a group without pods: workload.py).
    if scheduler != DEFAULT_SCHEDULER:
        return f'profile not found for scheduler name "{scheduler}"'
    return None
