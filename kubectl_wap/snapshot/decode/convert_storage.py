"""Raw PersistentVolumeClaim / PersistentVolume / StorageClass / CSINode JSON and pod volume
stanzas -> the lean objects of :mod:`kubectl_wap.model.storage`.

Kept apart from convert.py (which registers these converters) so the storage kinds grow on their
own; the field choice follows what the volume plugins of kube-scheduler v1.37.2 read."""

from __future__ import annotations

import sys
from typing import Any

from ...model.storage import TOPOLOGY_LABELS, CSINode, PersistentVolume, PersistentVolumeClaim, PodVolume, StorageClass
from .fields import as_dict, as_int, as_list, as_str, label_map, meta, node_term

_intern = sys.intern

# Annotations the volume binder reads (pkg/controller/volume/persistentvolume/util, volume.Ann*).
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
STORAGE_ANNOTATIONS = (ANN_BIND_COMPLETED, ANN_SELECTED_NODE, ANN_BETA_STORAGE_CLASS)

_VOLUMES_CACHE: dict[tuple, tuple[PodVolume, ...]] = {}


def pod_volumes(raw: Any) -> tuple[PodVolume, ...]:
    """The PVC and generic ephemeral entries of pod.spec.volumes, in spec order (the order
    upstream's plugins walk them). Pods of one template share the tuple."""
    out = []
    for v in as_list(raw):
        v = as_dict(v)
        pvc = v.get("persistentVolumeClaim")
        if isinstance(pvc, dict):
            out.append((as_str(v.get("name")), as_str(pvc.get("claimName")), False))
        elif isinstance(v.get("ephemeral"), dict):
            out.append((as_str(v.get("name")), "", True))
    if not out:
        return ()
    key = tuple(out)
    hit = _VOLUMES_CACHE.get(key)
    if hit is None:
        hit = _VOLUMES_CACHE[key] = tuple(PodVolume(_intern(n), _intern(c), e) for n, c, e in out)
    return hit


def _access_modes(v: Any) -> tuple[str, ...]:
    return tuple(as_str(m) for m in as_list(v) if isinstance(m, str))


def pvc_from(obj: dict) -> PersistentVolumeClaim:
    ns, name, _ = meta(obj, "PersistentVolumeClaim", True)
    md, spec, status = as_dict(obj.get("metadata")), as_dict(obj.get("spec")), as_dict(obj.get("status"))
    ann = as_dict(md.get("annotations"))
    volume_name = as_str(spec.get("volumeName"))
    # GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName.
    sc = ann.get(ANN_BETA_STORAGE_CLASS)
    sc = as_str(sc) if sc is not None else as_str(spec.get("storageClassName"))
    return PersistentVolumeClaim(
        namespace=ns,
        name=name,
        access_modes=_access_modes(spec.get("accessModes")),
        storage_class=_intern(sc),
        volume_name=volume_name,
        fully_bound=bool(volume_name) and ANN_BIND_COMPLETED in ann,
        phase=as_str(status.get("phase")) or "Pending",
        deleting=bool(md.get("deletionTimestamp")),
        selected_node=as_str(ann.get(ANN_SELECTED_NODE)),
    )


def pv_from(obj: dict) -> PersistentVolume:
    _, name, _ = meta(obj, "PersistentVolume", False)
    md, spec = as_dict(obj.get("metadata")), as_dict(obj.get("spec"))
    labels = label_map(md.get("labels"))
    required = as_dict(as_dict(spec.get("nodeAffinity")).get("required"))
    terms = tuple(node_term(t) for t in as_list(required.get("nodeSelectorTerms"))) if required else None
    csi = as_dict(spec.get("csi"))
    return PersistentVolume(
        name=name,
        labels={k: labels[k] for k in TOPOLOGY_LABELS if k in labels},
        access_modes=_access_modes(spec.get("accessModes")),
        storage_class=as_str(spec.get("storageClassName")),
        node_affinity=terms,
        csi_driver=_intern(as_str(csi.get("driver"))),
        csi_handle=as_str(csi.get("volumeHandle")),
    )


def storage_class_from(obj: dict) -> StorageClass:
    _, name, _ = meta(obj, "StorageClass", False)
    mode = obj.get("volumeBindingMode")
    return StorageClass(name=name, provisioner=_intern(as_str(obj.get("provisioner"))),
                        volume_binding_mode=as_str(mode) if mode is not None else None)


def csi_node_from(obj: dict) -> CSINode:
    _, name, _ = meta(obj, "CSINode", False)
    drivers: list[str] = []
    limits: dict[str, int] = {}
    for d in as_list(as_dict(obj.get("spec")).get("drivers")):
        d = as_dict(d)
        dname = _intern(as_str(d.get("name")))
        drivers.append(dname)
        count = as_dict(d.get("allocatable")).get("count")
        if count is not None:
            limits[dname] = as_int(count, f"csinode {name}: driver {dname} allocatable.count", 0, (0, 2**31 - 1)) or 0
    return CSINode(name=name, drivers=tuple(drivers), limits=limits)


# kind -> (Snapshot attribute, converter), merged into convert._CONVERTERS.
STORAGE_CONVERTERS = {
    "PersistentVolumeClaim": ("pvcs", pvc_from),
    "PersistentVolume": ("pvs", pv_from),
    "StorageClass": ("storage_classes", storage_class_from),
    "CSINode": ("csi_nodes", csi_node_from),
}
