"""What the four volume plugins share: the no-op parts of the cross-node plugin shape (they have
no Score in the default profile), and upstream's NotFound error texts (apierrors.NewNotFound
formats `<resource>[.<group>] "<name>" not found`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..status import SKIP, Status
from ..volumes import EMPTY, VolumeIndex

if TYPE_CHECKING:
    from ...model import Pod
    from ..state import ClusterState

SKIPPED = Status(SKIP)  # PreFilter's Skip: the plugin sits out the whole cycle (and its AddPod/RemovePod)


def not_found(resource: str, name: str) -> str:
    return f'{resource} "{name}" not found'


def volume_index(state: "ClusterState") -> VolumeIndex:
    return getattr(state, "volumes", EMPTY)


class VolumePlugin:
    """Defaults for a volume plugin: relevant only for pods with PVC/ephemeral volumes and only
    when every kind it reads was captured (`requires`); no Score; no PreFilterExtensions."""

    name = ""
    score_weight = 0
    requires: frozenset[str] = frozenset()
    # The verdict depends on other pods in a way the reprieval fast path's node-local/cross-node
    # split does not capture: WAP reprieval replays every assignment instead (reprieval.py).
    needs_literal_replay = False

    def relevant(self, state: "ClusterState", pod: "Pod") -> bool:
        return bool(pod.volumes) and self.requires <= volume_index(state).known

    def clone(self, data: Any) -> Any:
        return data

    def add_pod(self, state: "ClusterState", data: Any, pod: "Pod", added: "Pod", node_idx: int) -> bool:
        return False

    def remove_pod(self, state: "ClusterState", data: Any, pod: "Pod", removed: "Pod", node_idx: int) -> bool:
        return False

    def passes_everywhere(self, data: Any) -> bool:
        return False

    def score(self, state: "ClusterState", pod: "Pod", feasible: list[int]) -> list[int]:
        return [0] * len(feasible)
