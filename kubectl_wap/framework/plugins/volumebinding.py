"""VolumeBinding (PreFilter, Filter) for claims that are bound or cannot be, re-implemented from
upstream pkg/scheduler/framework/plugins/volumebinding/{volume_binding.go,binder.go} (v1.37.2):
`pre_filter` is PreFilter (podHasPVCs, GetPodVolumeClaims), `filter` is FindPodVolumes's
checkBoundClaims plus the selected-node fast path for delayed claims.

UPSTREAM-DIFF: an unbound WaitForFirstConsumer claim is assumed to find or get a volume on every
node (findMatchingVolumes / checkVolumeProvisions, storage capacity and dynamic provisioning are
not simulated); the analysis says so in a warning (framework/volumewarnings.py `unmodeled`). In-tree PVs
are not translated to CSI (tryTranslatePVToCSI) before the node-affinity check; ephemeral claims
are not checked for being owned by their pod (ephemeral.VolumeIsForPod).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...model import Node
from ...model.storage import WAIT_FOR_FIRST_CONSUMER, PersistentVolumeClaim
from ..status import ERROR, OK, Status, unresolvable
from ..volumes import PVCS, PVS, STORAGE_CLASSES, VolumeIndex
from .selectors import match_node_selector_terms
from .volumebase import SKIPPED, VolumePlugin, not_found, volume_index

if TYPE_CHECKING:
    from ...model import Pod
    from ..state import ClusterState

NAME = "VolumeBinding"
ERR_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@dataclass(slots=True, frozen=True)
class BindingClaims:
    """PodVolumeClaims: the pod's claims split as GetPodVolumeClaims does."""

    bound: tuple[PersistentVolumeClaim, ...]
    delayed: tuple[PersistentVolumeClaim, ...]


def delay_binding(index: VolumeIndex, pvc: PersistentVolumeClaim) -> bool | str:
    """IsDelayBindingMode: True/False, or the error text when the class has no binding mode."""
    if not pvc.storage_class:
        return False
    sc = index.classes.get(pvc.storage_class)
    if sc is None:
        return False
    if sc.volume_binding_mode is None:
        return f'VolumeBindingMode not set for StorageClass "{pvc.storage_class}"'
    return sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER


class VolumeBinding(VolumePlugin):
    name = NAME
    requires = frozenset({PVCS, PVS, STORAGE_CLASSES})

    def pre_filter(self, state: "ClusterState", pod: "Pod") -> tuple[BindingClaims | None, Status]:
        index = volume_index(state)
        claims: list[PersistentVolumeClaim] = []
        # podHasPVCs: every claim must exist, not be Lost, not be being deleted.
        for v in pod.volumes:
            name = v.claim_name(pod.name)
            pvc = index.pvc(pod.namespace, name)
            if pvc is None:
                if v.ephemeral:
                    msg = f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
                else:
                    msg = not_found("persistentvolumeclaim", name)
                return None, unresolvable(NAME, msg)
            if pvc.phase == "Lost":
                return None, unresolvable(NAME, f'persistentvolumeclaim "{pvc.name}" bound to non-existent persistentvolume "{pvc.volume_name}"')
            if pvc.deleting:
                return None, unresolvable(NAME, f'persistentvolumeclaim "{pvc.name}" is being deleted')
            claims.append(pvc)
        if not claims:
            return None, SKIPPED
        bound, delayed, immediate = [], [], []
        for pvc in claims:
            if pvc.fully_bound:
                bound.append(pvc)
                continue
            mode = delay_binding(index, pvc)
            if isinstance(mode, str):
                return None, Status(ERROR, (mode,), NAME)
            # Prebound claims (volumeName set, binding not completed) count as immediate.
            (delayed if mode and not pvc.volume_name else immediate).append(pvc)
        if immediate:
            return None, unresolvable(NAME, ERR_UNBOUND_IMMEDIATE)
        return BindingClaims(tuple(bound), tuple(delayed)), OK

    def filter(self, state: "ClusterState", data: BindingClaims, pod: "Pod", node_idx: int) -> Status:
        node = state.nodes[node_idx]
        index = volume_index(state)
        reasons = []
        # checkBoundClaims: the first claim whose PV is missing or does not match ends the check.
        for pvc in data.bound:
            pv = index.pvs.get(pvc.volume_name)
            if pv is None:
                reasons.append(ERR_PV_NOT_EXIST)
                break
            # volume.CheckNodeAffinity matches the terms against the node's labels only.
            if pv.node_affinity is not None and not match_node_selector_terms(pv.node_affinity, Node(name="", labels=node.labels)):
                reasons.append(ERR_NODE_CONFLICT)
                break
        # FindPodVolumes: a delayed claim already given a node (selected-node annotation) fits only there.
        if any(c.selected_node and c.selected_node != node.name for c in data.delayed):
            reasons.append(ERR_BIND_CONFLICT)
        if reasons:
            # FindPodVolumes appends in this order: node conflict, bind conflict, (space), PV not found.
            order = (ERR_NODE_CONFLICT, ERR_BIND_CONFLICT, ERR_PV_NOT_EXIST)
            return unresolvable(NAME, *sorted(reasons, key=order.index))
        return OK


PLUGIN = VolumeBinding()
