"""The shape of a cross-node plugin (InterPodAffinity, PodTopologySpread).

Cross-node plugins keep per-pod *cycle data* computed in pre_filter from the whole cluster, and
update it through add_pod/remove_pod exactly like upstream's PreFilterExtensions, so that
preemption can remove victims, put them back and replay placements without recomputing.
Node-local plugins (taints, affinity, resources, ports, ...) need no cycle data and live in the
vectorized filter path (`framework/filtering.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..status import Status

if TYPE_CHECKING:
    from ...model import Pod
    from ..state import ClusterState


class CrossNodePlugin(Protocol):
    name: str
    score_weight: int

    def relevant(self, state: "ClusterState", pod: "Pod") -> bool:
        """False when this plugin can neither filter nor score `pod` (fast skip)."""

    def pre_filter(self, state: "ClusterState", pod: "Pod") -> tuple[Any, Status]:
        """Cycle data for `pod` over the current cluster, and a status (non-OK = every node fails)."""

    def clone(self, data: Any) -> Any:
        """An independent copy of cycle data (CycleState.Clone)."""

    def add_pod(self, state: "ClusterState", data: Any, pod: "Pod", added: "Pod", node_idx: int) -> bool:
        """PreFilterExtensions.AddPod: `added` now runs on node `node_idx`. Returns whether the
        cycle data changed (False promises that Filter verdicts are unchanged)."""

    def remove_pod(self, state: "ClusterState", data: Any, pod: "Pod", removed: "Pod", node_idx: int) -> bool:
        """PreFilterExtensions.RemovePod; returns whether the cycle data changed."""

    def passes_everywhere(self, data: Any) -> bool:
        """True when Filter would pass on every node with this cycle data (lets the caller skip
        the per-node loop)."""

    def filter(self, state: "ClusterState", data: Any, pod: "Pod", node_idx: int) -> Status:
        """Filter verdict for one node, with upstream's reason strings and codes."""

    def score(self, state: "ClusterState", pod: "Pod", feasible: list[int]) -> list[int]:
        """Normalized 0..100 scores for the feasible nodes (PreScore+Score+NormalizeScore)."""
