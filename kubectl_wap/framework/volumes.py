"""The storage objects as the volume plugins look them up: upstream's PVC/PV/StorageClass/CSINode
listers, plus which pods reference each claim (the snapshot's usedPVCSet is derived from it and
the cluster state: a claim is in use while one of its referencing pods is on a node).

`known` says which kinds were captured: a plugin whose objects are unknown (an older snapshot, a
dump of pods only, a forbidden list) is not run, and the analysis warns instead (`unmodeled`),
rather than judging every pod with a claim unschedulable for a PVC "not found"."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass

if TYPE_CHECKING:
    from ..model import Pod, Snapshot
    from .state import ClusterState

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


def unmodeled(index: VolumeIndex, pods: "list[Pod]") -> list[str]:
    """Warnings for preemptor pods whose volumes the analysis cannot judge."""
    if not any(p.volumes for p in pods):
        return []
    if not index.pvcs_known:
        return ["PersistentVolumeClaims are not in the snapshot: the volume filters (VolumeRestrictions, "
                "NodeVolumeLimits, VolumeBinding, VolumeZone) are not applied to the preemptor's volumes"]
    out = []
    delayed = sorted({
        c.key for p in pods for v in p.volumes
        if (c := index.pvc(p.namespace, v.claim_name(p.name))) is not None and not c.fully_bound and not c.volume_name
        and (sc := index.classes.get(c.storage_class)) is not None and sc.volume_binding_mode == "WaitForFirstConsumer"
    })
    if delayed:
        out.append("unbound WaitForFirstConsumer claim(s) " + ", ".join(delayed) + ": volume provisioning and binding "
                   "are not simulated (any node is assumed to get a volume)")
    names = {PVS: "PersistentVolumes", STORAGE_CLASSES: "StorageClasses", CSI_NODES: "CSINodes"}
    missing = [n for k, n in names.items() if k not in index.known]
    if missing:
        from .filtering import cross_node_plugins

        skipped = [p.name for p in cross_node_plugins() if getattr(p, "requires", None) and not p.requires <= index.known]
        out.append("not in the snapshot: " + ", ".join(missing) + "; filters not applied to the preemptor's volumes: "
                   + ", ".join(skipped))
    return out


def spared_rwop_holders(state: "ClusterState", pods: "list[Pod]", victims: set[str]) -> list[str]:
    """Warnings for a workload-aware preemption whose preemptor pods' ReadWriteOncePod claims stay
    held by pods that are not victims. kube-scheduler v1.37.2 builds the preemptor's cycle states
    with every potential victim removed (podgrouppreemption.go selectVictimsOnDomain: "podGroupSchedulingFunc
    creates empty CycleStates"), so VolumeRestrictions finds no claim in use and returns Skip, and
    RunPreFilterExtensionAddPod skips it when a victim is put back: the holder is reprieved. We mirror
    that (derived from the code, not measured) and say what it means."""
    index = state.volumes
    if not index.pvcs_known:
        return []
    own = {p.uid for p in pods}
    out = []
    for p in pods:
        for v in p.volumes:
            c = index.pvc(p.namespace, v.claim) if not v.ephemeral else None
            if c is None or not c.read_write_once_pod:
                continue
            holders = [uid for uid in index.users.get((p.namespace, c.name), ())
                       if uid in state.where and uid not in own and uid not in victims]
            if holders:
                names = [state.node_pods[state.where[u]][u].key for u in holders]
                out.append(
                    f"ReadWriteOncePod claim {c.key} of pod {p.key} stays held by {', '.join(names)} (not a victim): "
                    "kube-scheduler v1.37.2's workload-aware preemption does not see the conflict (VolumeRestrictions "
                    "skips in cycle states built without the potential victims), so the pod still cannot start after "
                    "this preemption")
    return list(dict.fromkeys(out))
