"""The storage objects as the volume plugins look them up: upstream's PVC/PV/StorageClass/CSINode
listers, plus which pods reference each claim (the snapshot's usedPVCSet is derived from it and
the cluster state: a claim is in use while one of its referencing pods is on a node).

`known` says which kinds were captured: a plugin whose objects are unknown (an older snapshot, a
dump of pods only, a forbidden list) is not run, and the analysis warns instead (volumewarnings.py),
rather than judging every pod with a claim unschedulable for a PVC "not found"."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..model.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass

if TYPE_CHECKING:
    from ..model import Pod, Snapshot

PVCS, PVS, STORAGE_CLASSES, CSI_NODES = "persistentvolumeclaims", "persistentvolumes", "storageclasses.storage.k8s.io", "csinodes.storage.k8s.io"


@dataclass(slots=True)
class VolumeIndex:
    pvcs: dict[tuple[str, str], PersistentVolumeClaim] = field(default_factory=dict)
    pvs: dict[str, PersistentVolume] = field(default_factory=dict)
    classes: dict[str, StorageClass] = field(default_factory=dict)
    csi_nodes: dict[str, CSINode] = field(default_factory=dict)
    # (namespace, claim) -> uids of the pods whose volumes reference it (any namespace's pods are
    # only ever matched within their own namespace).
    users: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    known: frozenset[str] = frozenset()

    @property
    def pvcs_known(self) -> bool:
        return PVCS in self.known

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get((namespace, name))

    def note_pod(self, pod: "Pod") -> None:
        for v in pod.volumes:
            key = (pod.namespace, v.claim_name(pod.name))
            users = self.users.setdefault(key, [])
            if pod.uid not in users:
                users.append(pod.uid)


EMPTY = VolumeIndex()


def build_volume_index(snap: "Snapshot") -> VolumeIndex:
    """The index for one snapshot. A kind counts as captured when the live read listed it (header
    `listed`) or the files hold at least one object of it."""
    listed = set(snap.header.listed)
    known = {
        name for name, objs in ((PVCS, snap.pvcs), (PVS, snap.pvs), (STORAGE_CLASSES, snap.storage_classes), (CSI_NODES, snap.csi_nodes))
        if name in listed or objs
    }
    idx = VolumeIndex(
        pvcs={(c.namespace, c.name): c for c in snap.pvcs},
        pvs={v.name: v for v in snap.pvs},
        classes={c.name: c for c in snap.storage_classes},
        csi_nodes={c.name: c for c in snap.csi_nodes},
        known=frozenset(known),
    )
    for p in snap.pods:
        if p.volumes:
            idx.note_pod(p)
    return idx
