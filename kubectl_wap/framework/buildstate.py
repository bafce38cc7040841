"""A snapshot's ClusterState with the indexes its plugins read: the storage objects (volumes.py) and
the DRA index (plugins/dynamicresources.py attach).

Above state.py and the plugins, as upstream's scheduler.New builds the DRA manager
(dynamicresources.NewDRAManager) beside the cache and hands it to the framework
(frameworkruntime.WithSharedDRAManager): the cache, state.py here, knows no plugin."""

from __future__ import annotations

from typing import Callable

from ..model import Snapshot
from .plugins.dynamicresources import attach
from .state import ClusterState
from .volumes import build_volume_index


def build_state(snap: Snapshot, dra_preemption: bool = False,
                progress: Callable[[str, int, int | None], None] | None = None) -> ClusterState:
    """`progress` hears ("state", step, 3) after each of the three steps (the nodes and their
    pods, the storage index, the DRA index): the state is built in vectorized bulk, so steps are
    what there is to report (cli/progress.py shows them on a terminal)."""
    tick = progress if progress is not None else no_progress
    tick("state", 0, 3)
    state = ClusterState(snap.nodes, snap.pods, {ns.name: dict(ns.labels) for ns in snap.namespaces})
    tick("state", 1, 3)
    state.volumes = build_volume_index(snap)
    tick("state", 2, 3)
    if snap.dra is not None:
        attach(state, snap, dra_preemption)
    tick("state", 3, 3)
    return state


def no_progress(phase: str, done: int, total: int | None) -> None:
    """The progress callback of a caller that wants none."""
    return None
