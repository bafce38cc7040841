"""A snapshot's ClusterState with the indexes its plugins read: the storage objects (volumes.py) and
the DRA index (plugins/dynamicresources.py attach).

Above state.py and the plugins, as upstream's scheduler.New builds the DRA manager
(dynamicresources.NewDRAManager) beside the cache and hands it to the framework
(frameworkruntime.WithSharedDRAManager): the cache, state.py here, knows no plugin."""

from __future__ import annotations

from ..model import Snapshot
from .plugins.dynamicresources import attach
from .state import ClusterState
from .volumes import build_volume_index


def build_state(snap: Snapshot, dra_preemption: bool = False) -> ClusterState:
    state = ClusterState(snap.nodes, snap.pods, {ns.name: dict(ns.labels) for ns in snap.namespaces})
    state.volumes = build_volume_index(snap)
    if snap.dra is not None:
        attach(state, snap, dra_preemption)
    return state
