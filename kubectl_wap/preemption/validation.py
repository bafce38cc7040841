"""Scheduler-side validation of a pod group before it is scheduled: schedule_one_podgroup.go
`validatePodGroup` (semantics doc 5.2), and the preemptor's priority and policy
(manager.go `getPreemptorPriority` / `getPreemptionPolicy`)."""

from __future__ import annotations

from ..framework.groups import Group, GroupIndex, group_priority
from ..model import NEVER, PREEMPT_LOWER, CompositePodGroup, Pod

DEFAULT_SCHEDULER = "default-scheduler"


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


def preemptor_policy(root: Group, unscheduled: list[Pod], policy_gate: bool) -> tuple[str, str]:
    """(policy, where it came from). Gate on: the root object's spec.preemptionPolicy (nil is
    PreemptLowerPriority). Gate off: Never if any unscheduled member pod says Never."""
    if policy_gate:
        return _policy(root.preemption_policy), f"{root.kind} {root.key} spec.preemptionPolicy" + (
            "" if root.preemption_policy else " (unset: PreemptLowerPriority)"
        )
    for p in unscheduled:
        if p.preemption_policy == NEVER:
            return NEVER, f"member pod {p.key} has preemptionPolicy Never (PodGroupPreemptionPolicy gate off)"
    return PREEMPT_LOWER, "no unscheduled member pod sets Never (PodGroupPreemptionPolicy gate off)"


def _hierarchy(index: GroupIndex, root: Group) -> list[Group]:
    """Every group under the root, parents before children (cycle-safe)."""
    out: list[Group] = []
    seen: set[tuple[str, str, str]] = set()
    todo: list[Group] = [root]
    while todo:
        g = todo.pop(0)
        k = (g.kind, g.namespace, g.name)
        if k in seen:
            continue
        seen.add(k)
        out.append(g)
        if isinstance(g, CompositePodGroup):
            todo.extend(index.children(g))
    return out


def validate_hierarchy(index: GroupIndex, root: Group, pods: list[Pod], policy_gate: bool) -> str | None:
    """The 1.38 profile's validation (upstream-changes.md D4: schedule_one_podgroup.go
    validatePodGroup + validatePodGroupHierarchy on the development branch): every group of the
    hierarchy against the root (priority; preemption policy with the PodGroupPreemptionPolicy
    gate on), then every pod, with the hierarchy-wide error strings that name the objects.
    UPSTREAM-DIFF: the strings are upstream's formats as quoted in upstream-changes.md; that the
    groups are checked before the pods and that `%q` is the object's name (not namespace/name)
    are inferred, the code was not read."""
    root_prio = group_priority(root)
    root_policy = _policy(root.preemption_policy)
    for g in _hierarchy(index, root)[1:]:
        if group_priority(g) != root_prio:
            return ("all pod groups in a hierarchy should have the same priority as the root pod group's priority, "
                    f'got {group_priority(g)} ("{g.name}") and {root_prio} ("{root.name}")')
        if policy_gate and _policy(g.preemption_policy) != root_policy:
            return ("all pod groups in a hierarchy should have the same preemption policy as the root pod group's preemption "
                    f'policy, got {_policy(g.preemption_policy)} ("{g.name}") and {root_policy} ("{root.name}")')
    if not pods:
        return None
    first = pods[0]
    for p in pods:
        if p.scheduler_name != first.scheduler_name:
            return ("all pods in a pod group hierarchy should have the same .spec.schedulerName set, "
                    f'got: "{p.scheduler_name}" ("{p.name}") and "{first.scheduler_name}" ("{first.name}")')
        if (p.priority or 0) != root_prio:
            return ("all pods in a pod group hierarchy should have the same priority as the root pod group's priority, "
                    f'got {p.priority or 0} ("{p.name}") and {root_prio} ("{root.name}")')
        if policy_gate:
            if _policy(p.preemption_policy) != root_policy:
                return ("all pods in a pod group hierarchy should have the same preemption policy as the root pod group's "
                        f'preemption policy, got {_policy(p.preemption_policy)} ("{p.name}") and {root_policy} ("{root.name}")')
        elif _policy(p.preemption_policy) != _policy(first.preemption_policy):
            return ("all pods in a pod group hierarchy should have the same preemption policy, "
                    f'got {_policy(p.preemption_policy)} ("{p.name}") and {_policy(first.preemption_policy)} ("{first.name}")')
    if first.scheduler_name != DEFAULT_SCHEDULER:
        return f'profile not found for scheduler name "{first.scheduler_name}"'
    return None
