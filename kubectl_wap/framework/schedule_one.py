"""One-pod scheduling: Filter (with nominated pods) then Score, as schedule_one.go's schedulePod.

Deterministic stand-ins for upstream's random choices (documented in docs/fidelity.md):
every node is evaluated (percentageOfNodesToScore = 100, start index 0, nodes in name order),
and score ties go to the smallest node name.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..model import Pod
from .filtering import CycleData, StaticCache, filter_all, filter_node, pre_filter
from .nominated import NominatedIndex
from .scoring import select_host
from .state import ClusterState
from .status import OK, UNSCHEDULABLE, Status


def fit_error_message(num_nodes: int, statuses: dict[int, Status], prefilter_msg: str = "") -> str:
    """FitError.Error(): '0/N nodes are available: <sorted reason histogram>.'"""
    msg = f"0/{num_nodes} nodes are available:"
    if prefilter_msg:
        return msg + f" {prefilter_msg}."
    hist: Counter[str] = Counter()
    for st in statuses.values():
        for r in st.reasons:
            hist[r] += 1
    parts = sorted(f"{v} {k}" for k, v in hist.items())
    if parts:
        msg += " " + ", ".join(parts) + "."
    return msg


@dataclass(slots=True)
class ScheduleResult:
    node: int | None
    cycle: CycleData
    statuses: dict[int, Status] = field(default_factory=dict)  # every node that failed Filter
    num_nodes: int = 0

    @property
    def ok(self) -> bool:
        return self.node is not None

    def message(self) -> str:
        # schedulePod: a rejecting PreFilter sets Diagnosis.PreFilterMsg, which FitError.Error()
        # prints instead of the per-node histogram.
        pre = self.cycle.prefilter_status
        return fit_error_message(self.num_nodes, self.statuses, "" if pre.ok else pre.message)


class NodePreference(Protocol):
    """A preference applied between Filter and Score (the 1.38 profile's victim-aware choice in
    the preemption simulation, preemption/victimaware.py): `narrow` keeps the preferred feasible
    nodes, `chose` hears the node picked, before the pod is assumed there."""

    def narrow(self, pod: Pod, cycle: CycleData, feasible: np.ndarray) -> np.ndarray: ...

    def chose(self, pod: Pod, cycle: CycleData, node: int) -> None: ...


# A node's status when only the mask is wanted (with_statuses=False: nobody reads it).
_NOMINATED_FIT = Status(UNSCHEDULABLE, ("Insufficient resources with nominated pods",), "NodeResourcesFit")


class Scheduler:
    """Filter/Score over one ClusterState, with the nominated pods upstream's PodNominator holds."""

    def __init__(self, state: ClusterState, nominated: list[Pod] | None = None):
        self.preference: NodePreference | None = None  # set only for one simulation run
        self.state = state
        self.static = StaticCache(state)
        self.nominated: dict[int, list[Pod]] = {}
        for p in nominated or ():
            idx = state.node_index.get(p.nominated_node_name)
            if idx is not None and not p.scheduled:
                self.nominated.setdefault(idx, []).append(p)
        # Whoever edits `nominated` (simulate's world) calls self.noms.changed().
        self.noms = NominatedIndex(state, self.nominated)

    def has_nominated_for(self, pod: Pod, idx: int) -> bool:
        return self.noms.on_node(pod, idx) is not None

    def filter_with_nominated(self, pod: Pod, cycle: CycleData, idx: int, passes_alone: bool = False) -> Status:
        """RunFilterPluginsWithNominatedPods: when higher/equal-priority pods are nominated to the
        node, Filter must pass both with them added and without them. `passes_alone`: the caller
        already knows Filter passes without them (filter_all said so), skip that second run."""
        s = self.noms.on_node(pod, idx)
        if s is not None:
            c2 = cycle
            if cycle.plugins and not cycle.inert:
                c2 = cycle.clone()
                for p in s.pods:
                    c2.add_pod(self.state, pod, p, idx)
            st = filter_node(self.state, self.static, pod, c2, idx, s.extra, len(s.pods), s.ports)
            if not st.ok:
                return st
            if passes_alone:
                return OK
        return filter_node(self.state, self.static, pod, cycle, idx)

    def feasible_nodes(self, pod: Pod, cycle: CycleData, with_statuses: bool = True) -> tuple[np.ndarray, dict[int, Status]]:
        mask, statuses = filter_all(self.state, self.static, pod, cycle, with_statuses)
        if self.nominated:
            if not pod.host_ports and cycle.inert:
                # Only NodeResourcesFit can change with the nominated pods added: check every
                # node holding nominations at once, build statuses only for those that fail.
                for idx in self.noms.resource_failures(pod, mask).tolist():
                    mask[idx] = False
                    statuses[idx] = self.filter_with_nominated(pod, cycle, idx, passes_alone=True) if with_statuses else _NOMINATED_FIT
                own = self.noms.node_of(pod.uid)
                check = [own] if own is not None and mask[own] else []
            else:
                check = [idx for idx in self.nominated if mask[idx]]
            for idx in check:
                if self.noms.on_node(pod, idx) is not None:
                    st = self.filter_with_nominated(pod, cycle, idx, passes_alone=True)
                    if not st.ok:
                        mask[idx] = False
                        statuses[idx] = st
        feasible = np.flatnonzero(mask)
        if len(feasible) == 0 and not with_statuses:
            return self.feasible_nodes(pod, cycle, True)  # failing: now build every node's status
        return feasible, statuses

    def schedule(self, pod: Pod, allowed_nodes: np.ndarray | None = None) -> ScheduleResult:
        """schedulePod with a fresh CycleState. No PostFilter here (preemption is separate).

        `allowed_nodes` (bool mask over node indexes) is the placement assumed in the snapshot
        (Snapshot.AssumePlacement, TAS): only those nodes are candidates (ListNodesInPlacement), the
        FitError counts only them ("0/<placement size> nodes are available") and nodes outside get
        no status at all, as upstream. Plugins still see every node (NodeInfos().List())."""
        cycle = pre_filter(self.state, pod)
        n = len(self.state.nodes) if allowed_nodes is None else int(np.count_nonzero(allowed_nodes))
        if n == 0:
            return ScheduleResult(None, cycle, {}, 0)
        # evaluateNominatedNode: a pod that already has a nominated node tries it first and takes
        # it without scoring when it passes (GetNodeInPlacement: only if inside the placement).
        nnn = self.state.node_index.get(pod.nominated_node_name) if pod.nominated_node_name else None
        if nnn is not None and (allowed_nodes is None or allowed_nodes[nnn]) and self.filter_with_nominated(pod, cycle, nnn).ok:
            if self.preference is not None:
                self.preference.chose(pod, cycle, nnn)
            return ScheduleResult(nnn, cycle, {}, n)
        # Statuses are only reported when nothing is feasible: build them only then (a gang pod
        # with a node selector would otherwise make thousands of them per placement).
        feasible, statuses = self.feasible_nodes(pod, cycle, with_statuses=False)
        if allowed_nodes is not None:
            feasible = feasible[allowed_nodes[feasible]]
            if len(feasible) == 0:
                _, statuses = self.feasible_nodes(pod, cycle, with_statuses=True)
            statuses = {i: st for i, st in statuses.items() if allowed_nodes[i]}
        if len(feasible) == 0:
            return ScheduleResult(None, cycle, statuses, n)
        if self.preference is None:
            return ScheduleResult(select_host(self.state, pod, cycle, feasible), cycle, {}, n)
        node = select_host(self.state, pod, cycle, self.preference.narrow(pod, cycle, feasible))
        self.preference.chose(pod, cycle, node)
        return ScheduleResult(node, cycle, {}, n)

