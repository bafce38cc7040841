"""Lean, immutable storage objects: the fields of PersistentVolumeClaims, PersistentVolumes,
StorageClasses and CSINodes that kube-scheduler's volume plugins read (VolumeRestrictions,
NodeVolumeLimits, VolumeBinding, VolumeZone), and a pod's volume references.

Part of the model layer (built by :mod:`kubectl_wap.snapshot.decode.convert_storage`); nothing here
knows an algorithm."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .terms import NodeSelectorTerm

READ_WRITE_ONCE_POD = "ReadWriteOncePod"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

# Node/PV topology labels VolumeZone compares (volumezone.topologyLabels), in upstream's order.
TOPOLOGY_LABELS = (
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
)


@dataclass(slots=True, frozen=True)
class PodVolume:
    """One entry of pod.spec.volumes that a volume plugin reads: a PVC reference (`claim`), or a
    generic ephemeral volume (its PVC is named `<pod>-<volume>`, ephemeral.VolumeClaimName).
    Other volume sources are not kept (see README "Volumes")."""

    name: str
    claim: str = ""
    ephemeral: bool = False

    def claim_name(self, pod_name: str) -> str:
        return f"{pod_name}-{self.name}" if self.ephemeral else self.claim


@dataclass(slots=True, frozen=True)
class PersistentVolumeClaim:
    """A PersistentVolumeClaim as the volume plugins read it: class, volume, phase, access modes."""

    namespace: str
    name: str
    access_modes: tuple[str, ...] = ()
    # GetPersistentVolumeClaimClass: the beta annotation wins over spec.storageClassName; "" = none.
    storage_class: str = ""
    volume_name: str = ""  # spec.volumeName
    # isPVCFullyBound: spec.volumeName set and the pv.kubernetes.io/bind-completed annotation present.
    fully_bound: bool = False
    phase: str = "Pending"
    deleting: bool = False  # metadata.deletionTimestamp set
    selected_node: str = ""  # volume.kubernetes.io/selected-node annotation

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def read_write_once_pod(self) -> bool:
        return READ_WRITE_ONCE_POD in self.access_modes


@dataclass(slots=True, frozen=True)
class PersistentVolume:
    """A PersistentVolume as the volume plugins read it: topology labels, access modes, class, node affinity, CSI driver."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)  # only the topology labels are kept
    access_modes: tuple[str, ...] = ()
    storage_class: str = ""
    # spec.nodeAffinity.required.nodeSelectorTerms (None = no required node affinity)
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None
    csi_driver: str = ""  # spec.csi.driver
    csi_handle: str = ""  # spec.csi.volumeHandle


@dataclass(slots=True, frozen=True)
class StorageClass:
    """A storage.k8s.io StorageClass: provisioner and volume binding mode."""

    name: str
    provisioner: str = ""
    volume_binding_mode: str | None = None  # Immediate | WaitForFirstConsumer (None: not set)


@dataclass(slots=True, frozen=True)
class CSINode:
    """A storage.k8s.io CSINode: the drivers installed on a node and their volume limits."""

    name: str
    drivers: tuple[str, ...] = ()  # spec.drivers[].name
    # spec.drivers[].allocatable.count, for the drivers that set it (getVolumeLimits)
    limits: Mapping[str, int] = field(default_factory=dict)
