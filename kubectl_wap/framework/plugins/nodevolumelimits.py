"""NodeVolumeLimits (CSILimits: PreFilter, Filter), re-implemented from upstream
pkg/scheduler/framework/plugins/nodevolumelimits/csi.go (v1.37.2): the CSI volumes a node would
have attached, per driver, must stay within its CSINode `allocatable.count`.

UPSTREAM-DIFF: VolumeAttachments are not captured, so volumes attached to a node without a pod
using them there are not counted; in-tree volumes and provisioners (kubernetes.io/...) are not
translated to their CSI drivers (CSI migration), so they are not counted either; the
VolumeLimitScaling gate (off by default in 1.37) is not modelled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..status import OK, Status, unresolvable, unschedulable
from ..volumes import CSI_NODES, PVCS, PVS, VolumeIndex
from .volumebase import VolumePlugin, not_found, volume_index

if TYPE_CHECKING:
    from ...model import Pod
    from ..state import ClusterState

NAME = "NodeVolumeLimits"
ERR_MAX_VOLUME_COUNT = "node(s) exceed max volume count"


class _MissingClaim(Exception):
    pass


def attachable_volumes(index: VolumeIndex, pod: "Pod", new_pod: bool, out: dict[str, str]) -> None:
    """filterAttachableVolumes: unique volume name (driver/handle) -> driver, for the pod's
    claims with a CSI driver. A missing claim is an error for the pod being scheduled and
    skipped for a pod already on the node."""
    for v in pod.volumes:
        name = v.claim_name(pod.name)
        pvc = index.pvc(pod.namespace, name)
        if pvc is None:
            if new_pod:
                raise _MissingClaim(f"looking up PVC {pod.namespace}/{name}: {not_found('persistentvolumeclaim', name)}")
            continue
        driver, handle = "", ""
        pv = index.pvs.get(pvc.volume_name) if pvc.volume_name else None
        if pv is not None:
            driver, handle = pv.csi_driver, pv.csi_handle  # a non-CSI PV: not counted
        else:
            # getCSIDriverInfoFromSC: a claim still to be provisioned counts against the
            # provisioner, under a handle unique to the claim (upstream adds a random prefix).
            sc = index.classes.get(pvc.storage_class) if pvc.storage_class else None
            if sc is not None and not sc.provisioner.startswith("kubernetes.io/"):
                driver, handle = sc.provisioner, f"~{pvc.namespace}/{pvc.name}"
        if driver and handle:
            out[f"{driver}/{handle}"] = driver


class NodeVolumeLimits(VolumePlugin):
    name = NAME
    requires = frozenset({PVCS, PVS, CSI_NODES})
    needs_literal_replay = True  # node-local, but counts the volumes of the pods on the node

    def pre_filter(self, state: "ClusterState", pod: "Pod") -> tuple[None, Status]:
        return None, OK  # relevant() already skips pods without PVC/ephemeral volumes

    def filter(self, state: "ClusterState", data: None, pod: "Pod", node_idx: int) -> Status:
        index = volume_index(state)
        new: dict[str, str] = {}
        try:
            attachable_volumes(index, pod, True, new)
        except _MissingClaim as e:
            return unresolvable(NAME, str(e))
        if not new:
            return OK
        csi_node = index.csi_nodes.get(state.nodes[node_idx].name)
        limits = csi_node.limits if csi_node is not None else {}
        if not limits:
            return OK
        attached: dict[str, str] = {}
        for other in state.pods_on(node_idx):
            if other.volumes:
                attachable_volumes(index, other, False, attached)
        count: dict[str, int] = {}
        for unique, driver in attached.items():
            new.pop(unique, None)  # already attached: the pod adds nothing for it
            count[driver] = count.get(driver, 0) + 1
        adding: dict[str, int] = {}
        for driver in new.values():
            adding[driver] = adding.get(driver, 0) + 1
        for driver, n in adding.items():
            limit = limits.get(driver)
            if limit is not None and count.get(driver, 0) + n > limit:
                return unschedulable(NAME, ERR_MAX_VOLUME_COUNT)
        return OK


PLUGIN = NodeVolumeLimits()
