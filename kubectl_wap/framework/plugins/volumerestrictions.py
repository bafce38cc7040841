"""VolumeRestrictions (PreFilter, AddPod/RemovePod, Filter), re-implemented from upstream
pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go (v1.37.2).

A pod whose ReadWriteOncePod claim another pod already uses is Unschedulable on every node (the
count is cluster-wide, not per node). Preemption's RemovePod of the pod holding the claim brings
the count to zero, so the node that holder ran on becomes feasible: the holder is a victim, as
upstream's TestReadWriteOncePodPreemption asserts.

UPSTREAM-DIFF: the in-tree disk conflicts (GCE PD, AWS EBS, iSCSI, RBD volumes, reason
"node(s) had no available disk") are not modelled: those volume sources are not captured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..status import OK, Status, unresolvable, unschedulable
from ..volumes import PVCS
from .volumebase import SKIPPED, VolumePlugin, not_found, volume_index

if TYPE_CHECKING:
    from ...model import Pod
    from ..state import ClusterState

NAME = "VolumeRestrictions"
ERR_RWOP_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)


@dataclass(slots=True)
class RWOPState:
    """preFilterState: the pod's ReadWriteOncePod claim names and how many are in use."""

    claims: frozenset[str]
    conflicts: int

    def count_for(self, other: "Pod") -> int:
        # conflictingPVCRefCountForPod: claim names only. Upstream does not compare namespaces
        # here (the PreFilter count does); mirrored as is.
        return sum(1 for v in other.volumes if not v.ephemeral and v.claim in self.claims)


class VolumeRestrictions(VolumePlugin):
    name = NAME
    requires = frozenset({PVCS})
    needs_literal_replay = True

    def pre_filter(self, state: "ClusterState", pod: "Pod") -> tuple[RWOPState | None, Status]:
        """PreFilter: readWriteOncePodPVCsForPod (a missing claim is UnschedulableAndUnresolvable),
        then calPreFilterState (IsPVCUsedByPods per claim); Skip when no claim is in use."""
        index = volume_index(state)
        index.note_pod(pod)  # once assumed, it uses its claims (snapshot AssumePod's PVC refs)
        claims: set[str] = set()
        for v in pod.volumes:
            if v.ephemeral:
                continue  # only spec.volumes[].persistentVolumeClaim is looked at
            pvc = index.pvc(pod.namespace, v.claim)
            if pvc is None:
                return None, unresolvable(NAME, not_found("persistentvolumeclaim", v.claim))
            if pvc.read_write_once_pod:
                claims.add(pvc.name)
        where = state.where
        conflicts = sum(
            1 for c in claims
            if any(uid in where for uid in index.users.get((pod.namespace, c), ()))
        )
        if conflicts == 0:
            return None, SKIPPED
        return RWOPState(frozenset(claims), conflicts), OK

    def clone(self, data: RWOPState) -> RWOPState:
        return RWOPState(data.claims, data.conflicts)

    def add_pod(self, state: "ClusterState", data: RWOPState, pod: "Pod", added: "Pod", node_idx: int) -> bool:
        n = data.count_for(added)
        data.conflicts += n
        return n != 0

    def remove_pod(self, state: "ClusterState", data: RWOPState, pod: "Pod", removed: "Pod", node_idx: int) -> bool:
        n = data.count_for(removed)
        data.conflicts -= n
        return n != 0

    def passes_everywhere(self, data: RWOPState) -> bool:
        return data.conflicts <= 0

    def filter(self, state: "ClusterState", data: RWOPState, pod: "Pod", node_idx: int) -> Status:
        # satisfyReadWriteOncePod
        if data.conflicts > 0:
            return unschedulable(NAME, ERR_RWOP_CONFLICT)
        return OK


PLUGIN = VolumeRestrictions()
