"""The warnings of an analysis whose preemptor has volumes it cannot judge as kube-scheduler would:
storage kinds missing from the snapshot (so a volume filter is not run), claims whose binding is
not simulated, and ReadWriteOncePod claims workload-aware preemption leaves held.

Apart from volumes.py, which the volume plugins import: naming the filters skipped takes the plugin
list (registry.py), and a module the plugins import may not import them."""

from __future__ import annotations

from ..model import Pod
from .registry import cross_node_plugins
from .state import ClusterState
from .volumes import CSI_NODES, PVS, STORAGE_CLASSES, VolumeIndex


def unmodeled(index: VolumeIndex, pods: list[Pod]) -> list[str]:
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
        skipped = [p.name for p in cross_node_plugins() if getattr(p, "requires", None) and not p.requires <= index.known]
        out.append("not in the snapshot: " + ", ".join(missing) + "; filters not applied to the preemptor's volumes: "
                   + ", ".join(skipped))
    return out


def spared_rwop_holders(state: ClusterState, pods: list[Pod], victims: set[str]) -> list[str]:
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
