"""`rank --for`: the nodes where preemption might help a preemptor, and the units whose removal
could help it there. Mirrors upstream's nodesWherePreemptionMightHelp
(pkg/scheduler/framework/preemption/preemption.go): a node whose Filter status is
UnschedulableAndUnresolvable (taints, affinity, selector, a request above the node's total
allocatable) is skipped, because removing pods cannot change that status."""

from __future__ import annotations

from ..framework.buildstate import build_state
from ..framework.filtering import StaticCache, static_signature
from ..framework.status import UNRESOLVABLE
from ..model import Pod, Snapshot


def nodes_where_preemption_might_help(snap: Snapshot, pods: list[Pod]) -> set[str]:
    """Nodes where at least one preemptor pod is not UnschedulableAndUnresolvable."""
    state = build_state(snap)
    static = StaticCache(state)
    out: set[str] = set()
    for pod in {(static_signature(p), tuple(sorted(p.requests.items()))): p for p in pods}.values():
        codes = static.get(pod).codes
        for i, node in enumerate(state.nodes):
            if codes[i] == UNRESOLVABLE or i in out:
                continue
            if all(v <= node.allocatable.get(r, 0) for r, v in pod.requests.items() if v and r != "pods"):
                out.add(node.name)
    return out
