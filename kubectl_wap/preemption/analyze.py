"""Entry point of the engine: pick the algorithm kube-scheduler would run for a pending object."""

from __future__ import annotations

import gc
from typing import Callable

from ..errors import UserError
from ..framework.buildstate import build_state
from ..framework.groups import GroupIndex
from ..framework.nominated import nominator_pods
from ..framework.schedule_one import Scheduler
from ..model import ALL, Snapshot
from .default import preempt_for_pod
from .gates import Gates
from .result import DEFAULT_MAX_CYCLES, Result
from .workload import preempt_for_group

KINDS = {"podgroup": "PodGroup", "pg": "PodGroup", "podgroups": "PodGroup",
         "compositepodgroup": "CompositePodGroup", "cpg": "CompositePodGroup", "compositepodgroups": "CompositePodGroup",
         "pod": "Pod", "po": "Pod", "pods": "Pod"}


def analyze(snap: Snapshot, kind: str, namespace: str, name: str, gates: Gates | None = None, fast: bool = True,
            max_cycles: int = DEFAULT_MAX_CYCLES, progress: Callable[[str, int, int | None], None] | None = None) -> Result:
    """Run the algorithm kube-scheduler would run for the pending object. The garbage collector
    is paused meanwhile: the simulation allocates many short-lived objects and no cycles, and a
    collection would rescan the whole loaded cluster each time. A pod-group analysis plays the
    group's cycles forward (at most `max_cycles`): pods that fit bind first, preemption runs in
    the cycle that fails (preemption/workload.py). `progress` hears the state's build
    (framework/buildstate.py), then ("analysis", 0, None)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _analyze(snap, kind, namespace, name, gates, fast, max_cycles, progress)
    finally:
        if enabled:
            gc.enable()


def _analyze(snap: Snapshot, kind: str, namespace: str, name: str, gates: Gates | None, fast: bool, max_cycles: int,
             progress: Callable[[str, int, int | None], None] | None = None) -> Result:
    gates = gates or Gates()
    k = KINDS.get(kind.lower())
    if k is None:
        raise UserError(f"unknown kind {kind!r}: want podgroup, compositepodgroup or pod")
    index = GroupIndex.build(snap, composite_enabled=gates.composite_pod_group)
    state = build_state(snap, gates.dra_preemption, progress)
    if progress is not None:
        progress("analysis", 0, None)
    nominated = nominator_pods(snap.pods)
    sched = Scheduler(state, nominated)
    warnings = list(snap.warnings) + _not_creatable(snap, gates)
    if k == "Pod":
        pod = next((p for p in snap.pods if p.namespace == namespace and p.name == name), None)
        if pod is None:
            raise UserError(_not_found("pod", namespace, name, [p.key for p in snap.pods if p.name == name]))
        if pod.scheduled:
            raise UserError(f"pod {pod.key} is already bound to node {pod.node_name}: nothing to schedule")
        res = preempt_for_pod(snap, sched, index, pod, gates.generic_workload, gates.profile)
    else:
        if not gates.generic_workload:
            raise UserError("GenericWorkload is off: PodGroups are not scheduled as groups; analyze their pods with `whatif pod`")
        if k == "PodGroup":
            g = index.pgs.get((namespace, name))
            others = [f"{x.namespace}/{x.name}" for x in snap.pod_groups if x.name == name]
        else:
            if not gates.composite_pod_group:
                raise UserError("CompositePodGroup is off: CompositePodGroups are not scheduled")
            g = index.cpgs.get((namespace, name))
            others = [f"{x.namespace}/{x.name}" for x in snap.composite_pod_groups if x.name == name]
        if g is None:
            raise UserError(_not_found(k.lower(), namespace, name, others))
        root = index.root_of(g)
        if root is not g:
            warnings.append(
                f"{k} {g.key} belongs to CompositePodGroup {root.key}: kube-scheduler schedules and preempts for the whole tree from its root, "
                "so the analysis is for the root"
            )
        res = preempt_for_group(
            snap, sched, index, root, gates.pod_group_preemption_policy, gates.generic_workload, fast,
            tas=gates.topology_aware_workload_scheduling, max_cycles=max_cycles, profile=gates.profile,
        )
    res.warnings = warnings + res.warnings
    res.defaulted = snap.defaulted
    res.admitted = snap.admitted
    if state.dra is not None:
        res.warnings.extend(state.dra.warnings)  # DRA claims or selectors we could not model
    return res


def _not_creatable(snap: Snapshot, gates: Gates) -> list[str]:
    """Groups the profile's API server would refuse to create (profiles.py all_mode_requires_gang):
    said, not refused, since one stored before an upgrade is still scheduled around."""
    if not gates.profile.all_mode_requires_gang:
        return []
    bad = [g for g in [*snap.pod_groups, *snap.composite_pod_groups]
           if g.disruption_mode == ALL and g.disruption_mode_set and g.policy != "gang"]
    if not bad:
        return []
    names = ", ".join(f"{g.kind} {g.key}" for g in bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
    return [f"{names}: disruptionMode all with a basic scheduling policy, which a Kubernetes {gates.profile.version} API server "
            'refuses to create (cannot have "all" disruption mode when scheduling policy is other than "gang"); a group stored '
            "before the upgrade keeps it, and kube-scheduler, like this analysis, treats it as All"]


def _not_found(kind: str, namespace: str, name: str, elsewhere: list[str]) -> str:
    msg = f'{kind} "{name}" not found in namespace "{namespace}"'
    if elsewhere:
        msg += f" (found as {', '.join(sorted(elsewhere)[:3])}: use -n)"
    return msg
