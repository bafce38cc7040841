"""VolumeZone (PreFilter, Filter), re-implemented from upstream
pkg/scheduler/framework/plugins/volumezone/volume_zone.go (v1.37.2): a bound PV's zone/region
labels must match the node's, when the node has any of those labels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...model.storage import TOPOLOGY_LABELS, WAIT_FOR_FIRST_CONSUMER
from ..status import OK, Status, unresolvable
from ..volumes import PVCS, PVS, STORAGE_CLASSES
from .volumebase import SKIPPED, VolumePlugin, not_found, volume_index

if TYPE_CHECKING:
    from ...model import Pod
    from ..state import ClusterState

NAME = "VolumeZone"
ERR_CONFLICT = "node(s) had no available volume zone"
_GA = {
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
}

Topologies = tuple[tuple[str, frozenset[str]], ...]  # (label key, allowed values) per PV label


def zones_to_set(value: str) -> frozenset[str]:
    """volumehelpers.LabelZonesToSet: a multi-zone label value joins zones with "__"."""
    return frozenset(z for z in value.split("__") if z)


class VolumeZone(VolumePlugin):
    name = NAME
    requires = frozenset({PVCS, PVS, STORAGE_CLASSES})

    def pre_filter(self, state: "ClusterState", pod: "Pod") -> tuple[Topologies | None, Status]:
        """PreFilter/getPVbyPod: the topology labels of the PVs of the pod's PVC volumes (not its
        ephemeral ones); Skip when there are none."""
        index = volume_index(state)
        out: list[tuple[str, frozenset[str]]] = []
        for v in pod.volumes:
            if v.ephemeral:
                continue
            if not v.claim:
                return None, unresolvable(NAME, "PersistentVolumeClaim had no name")
            pvc = index.pvc(pod.namespace, v.claim)
            if pvc is None:
                return None, unresolvable(NAME, not_found("persistentvolumeclaim", v.claim))
            if not pvc.volume_name:
                if not pvc.storage_class:
                    return None, unresolvable(NAME, "PersistentVolumeClaim had no pv name and storageClass name")
                sc = index.classes.get(pvc.storage_class)
                if sc is None:
                    return None, unresolvable(NAME, not_found("storageclass.storage.k8s.io", pvc.storage_class))
                if sc.volume_binding_mode is None:
                    return None, unresolvable(NAME, f'VolumeBindingMode not set for StorageClass "{pvc.storage_class}"')
                if sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
                    continue  # the volume is provisioned in the node's zone
                return None, unresolvable(NAME, "PersistentVolume had no name")
            pv = index.pvs.get(pvc.volume_name)
            if pv is None:
                return None, unresolvable(NAME, not_found("persistentvolume", pvc.volume_name))
            for key in TOPOLOGY_LABELS:  # getPVTopologies
                if key in pv.labels:
                    out.append((key, zones_to_set(pv.labels[key])))
        if not out:
            return None, SKIPPED
        return tuple(out), OK

    def filter(self, state: "ClusterState", data: Topologies, pod: "Pod", node_idx: int) -> Status:
        labels = state.nodes[node_idx].labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return OK  # a node without zone/region labels accepts any volume
        for key, values in data:
            v = labels.get(key)
            if v is None:
                v = labels.get(_GA.get(key, key))
            if v is None or v not in values:
                return unresolvable(NAME, ERR_CONFLICT)
        return OK


PLUGIN = VolumeZone()
