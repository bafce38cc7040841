"""Priority admission for objects that arrive without `spec.priority` (hand-written files,
hypothetical manifests). Mirrors plugin/pkg/admission/priority (`Admit` / `getDefaultPriority`),
extended to PodGroup and CompositePodGroup as the v1.37 disruption-and-priority docs describe.
Objects that already carry spec.priority keep it (a live cluster's objects always do)."""

from __future__ import annotations

import dataclasses

from ...model import SYSTEM_PRIORITY_CLASSES, PriorityClass, Snapshot


def no_class_message(name: str) -> str:
    # Exact upstream text (priority admission plugin).
    return f"no PriorityClass with name {name} was found"


def class_table(snap: Snapshot) -> dict[str, PriorityClass]:
    table = {n: PriorityClass(n, v) for n, v in SYSTEM_PRIORITY_CLASSES.items()}
    for pc in snap.priority_classes:
        table[pc.name] = pc
    return table


def default_class(snap: Snapshot) -> PriorityClass | None:
    """The globalDefault class; when several claim it, the lowest value wins (getDefaultPriorityClass)."""
    defaults = [pc for pc in snap.priority_classes if pc.global_default]
    if not defaults:
        return None
    return min(defaults, key=lambda pc: (pc.value, pc.name))


def resolve(snap: Snapshot, class_name: str) -> tuple[int | None, str | None, str | None]:
    """(priority, class preemptionPolicy, error) for a priorityClassName ('' = default class)."""
    if class_name:
        pc = class_table(snap).get(class_name)
        if pc is None:
            return None, None, no_class_message(class_name)
        return pc.value, pc.preemption_policy, None
    dc = default_class(snap)
    if dc is None:
        return 0, None, None
    return dc.value, dc.preemption_policy, None


def admit(snap: Snapshot) -> None:
    """Fill in missing priorities in place, recording rejections in snap.admission_errors."""
    for i, pod in enumerate(snap.pods):
        if pod.priority is not None:
            continue
        prio, policy, err = resolve(snap, pod.priority_class_name)
        changes: dict = {"priority": prio if prio is not None else 0}
        if err:
            snap.admission_errors[("Pod", pod.namespace, pod.name)] = err
            snap.warnings.append(f"pod {pod.key}: {err}; its priority is taken as 0")
        elif pod.preemption_policy is None and policy:
            # Admission copies the class's preemptionPolicy into the pod when the pod sets none.
            changes["preemption_policy"] = policy
        snap.pods[i] = dataclasses.replace(pod, **changes)
    for attr, kind in (("pod_groups", "PodGroup"), ("composite_pod_groups", "CompositePodGroup")):
        lst = getattr(snap, attr)
        for i, g in enumerate(lst):
            if g.priority is not None:
                continue
            prio, _policy, err = resolve(snap, g.priority_class_name)
            if err:
                snap.admission_errors[(kind, g.namespace, g.name)] = err
                snap.warnings.append(f"{kind.lower()} {g.key}: {err}; its priority is taken as 0")
            # UPSTREAM-DIFF: the class's preemptionPolicy is not copied into PodGroups here: the
            # apiserver does that only with PodGroupPreemptionPolicy on, which we do not know at
            # load time. Give the PodGroup an explicit spec.preemptionPolicy to model it.
            lst[i] = dataclasses.replace(g, priority=prio if prio is not None else 0, priority_admitted=True)
