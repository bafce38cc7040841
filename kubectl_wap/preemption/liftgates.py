"""`--ignore-gates`: the question as if the schedulingGates of its pods were removed.

kube-scheduler never takes a gated pod into a cycle (SchedulingGates PreEnqueue), so whatif on a
gated pod or group answers NotEligible. Users who hold work behind a gate (Kueue, a quota
controller, their own admission) ask the next question: what happens the moment the gate is
lifted? That is this cluster with the gates of the question's pods gone, nothing else changed.
A pure function of the model: the caller says so in the report (the returned note)."""

from __future__ import annotations

from dataclasses import replace

from ..framework.groups import GroupIndex
from ..model import Pod, Snapshot
from .analyze import KINDS


def lift_gates(snap: Snapshot, kind: str, namespace: str, name: str, composite_enabled: bool = True) -> tuple[Snapshot, str]:
    """The snapshot with no schedulingGates on the pods of the question (the pod, or every pod of
    the group's hierarchy from its root), and a one-line note of what was lifted ("" when none)."""
    k = KINDS.get(kind.lower())
    if k == "Pod":
        wanted = lambda p: p.namespace == namespace and p.name == name  # noqa: E731
    else:
        index = GroupIndex.build(snap, composite_enabled=composite_enabled)
        g = (index.pgs if k == "PodGroup" else index.cpgs).get((namespace, name))
        if g is None:
            return snap, ""
        leaves = {pg.name for pg in index.leaves_under(index.root_of(g))}
        wanted = lambda p: p.namespace == namespace and p.pod_group_name in leaves  # noqa: E731
    return _lift(snap, wanted, f"the schedulingGates of {{n}} pod(s) of {kind} {namespace}/{name}")


def lift_all_gates(snap: Snapshot) -> tuple[Snapshot, str]:
    """Every pending pod's gates lifted (simulate --ignore-gates)."""
    return _lift(snap, lambda p: True, "the schedulingGates of {n} pending pod(s)")


def _lift(snap: Snapshot, wanted, what: str) -> tuple[Snapshot, str]:
    lifted: list[Pod] = []
    gates: set[str] = set()
    pods = []
    for p in snap.pods:
        if p.scheduling_gates and not p.node_name and wanted(p):
            gates.update(p.scheduling_gates)
            lifted.append(p)
            p = replace(p, scheduling_gates=())
        pods.append(p)
    if not lifted:
        return snap, ""
    note = (f"--ignore-gates: answered as if {what.format(n=len(lifted))} were removed ({', '.join(sorted(gates))}); "
            "kube-scheduler does not try them while the gates are there")
    return replace(snap, pods=pods, warnings=list(snap.warnings) + [note]), note
