"""What a pod-group cycle and the TAS placement algorithm share: the cycle's result, the queue order
of a group's pods, and what the placement algorithm asks of the cycle that runs it (`GroupCycle`).

podgroup.py runs the cycle and calls placement.py for a group with a topology constraint;
placement.py evaluates each placement by calling back into the cycle. Both import this module and
placement.py sees the cycle only as a GroupCycle, so podgroup.py imports placement.py and not the
other way round (upstream the two are one package: schedule_one_podgroup.go)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..model import Pod, PodGroup
from .filtering import CycleData
from .groups import Group, GroupIndex
from .schedule_one import ScheduleResult
from .state import ClusterState
from .status import Status


@dataclass(slots=True)
class Assignment:
    """A proposed placement: the pod, its node, and the cycle state it was placed with (which
    preemption's reprieval replays)."""

    pod: Pod
    node: int
    cycle: CycleData


@dataclass(slots=True)
class GroupResult:
    status: Status
    assignments: list[Assignment] = field(default_factory=list)
    any_scheduled: bool = False
    # Per-pod failures, for explanations: pod uid -> schedule result.
    failures: dict[str, ScheduleResult] = field(default_factory=dict)
    group_statuses: dict[str, Status] = field(default_factory=dict)  # group key -> status
    # TAS (placement.py): group key -> name of the chosen placement (topology domain).
    chosen_placements: dict[str, str] = field(default_factory=dict)
    # Pods of groups in this subtree that failed (and were reverted) but had found a node one by
    # one. kube-scheduler keeps their per-pod Success results in the cycle's results map, and the
    # scheduling function PodGroupPostFilter calls proposes every Success result of that map
    # (schedule_one_podgroup.go podGroupCycle's pgSchedulingFunc -> makeProposedAssignments), so
    # under a root that succeeds, workload-aware preemption makes room for them too (measured:
    # tests/oracle, CompositePodGroup with a failing child gang). Nothing else uses them.
    leaked: list[Assignment] = field(default_factory=list)


def pending_pods(index: GroupIndex, pg: PodGroup) -> list[Pod]:
    """Queued, unscheduled pods of a leaf group in a deterministic queue order: priority desc,
    creation time asc, then name (semantics doc 6.4).
    UPSTREAM-DIFF: upstream uses the scheduling queue's order (arrival/attempt timestamps we do
    not see in a snapshot); creation time is the closest stable stand-in. Terminating and gated pods are not queued
    (skipPodGroupPodSchedule / SchedulingGates PreEnqueue)."""
    bound = index.bound
    pods = [
        p
        for p in index.pods(pg)
        if not p.node_name and not p.terminal and p.deletion_timestamp is None and not p.scheduling_gates
        and p.uid not in bound
    ]
    pods.sort(key=lambda p: (-(p.priority or 0), p.creation_timestamp if p.creation_timestamp is not None else float("inf"), p.name))
    return pods


class GroupCycle(Protocol):
    """The pod-group cycle as placement.py drives it (podgroup.PodGroupScheduler)."""

    state: ClusterState
    index: GroupIndex
    placement: np.ndarray | None  # the node mask assumed in the snapshot (None = every node)
    root: Group | None  # the entity the cycle runs for

    def run_default_algorithm(self, g: Group) -> GroupResult:
        """The default (or composite default) algorithm for `g` inside `placement`."""
        ...
