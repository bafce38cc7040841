"""Kueue's answer for one submitted Workload: admitted (on which flavors, borrowing how much from
the cohort), admitted once it has evicted whom, not admitted and why, or queued behind other
Workloads. A record for report/ to word; the kube-scheduler stage runs after it, on the pods of
an admitted Workload with Kueue's evictions applied first."""

from __future__ import annotations

from dataclasses import dataclass, replace

from kubectl_wap.queueing.kueue.cycle import (
    ADMITTED,
    PREEMPTING,
    CycleResult,
    Decision,
    queue_order_key,
    active_cluster_queues,
    schedule_cycle,
)
from kubectl_wap.queueing.kueue.admissionchecks import (
    admitted_with_reservation,
    check_state,
    checks_for_workload,
    inactive_message,
    inactive_reasons,
)
from kubectl_wap.queueing.kueue.objects import CheckRule, FlavorResource, KueueObjects, Workload
from kubectl_wap.queueing.kueue.quota import Snapshot

# KueueStage.outcome
STAGE_ADMITTED = "admitted"
STAGE_ADMITTED_AFTER_EVICTIONS = "admitted-after-evictions"
STAGE_NOT_ADMITTED = "not-admitted"
STAGE_QUEUED = "queued"  # not the head of its ClusterQueue in this cycle
STAGE_NOT_MANAGED = "not-managed"  # no queue name: Kueue leaves the job alone
STAGE_NO_QUEUE = "no-queue"  # its LocalQueue or ClusterQueue is missing, stopped or inactive
# Quota reserved (QuotaReserved) but not Admitted: admission checks apply to it, and Kueue admits
# it (its job unsuspended) once every one of them is Ready (admissionchecks.py).
STAGE_RESERVED = "quota-reserved"
STAGE_RESERVED_AFTER_EVICTIONS = "quota-reserved-after-evictions"
STAGE_WAITING_FOR_CHECKS = "waiting-for-admission-checks"  # `pending`: reserved earlier, a check not Ready yet
RESERVES_QUOTA = frozenset({STAGE_ADMITTED, STAGE_ADMITTED_AFTER_EVICTIONS, STAGE_RESERVED, STAGE_RESERVED_AFTER_EVICTIONS})
EVICTS = frozenset({STAGE_ADMITTED_AFTER_EVICTIONS, STAGE_RESERVED_AFTER_EVICTIONS})


@dataclass(frozen=True, slots=True)
class KueueStage:
    workload: Workload | None
    outcome: str
    local_queue: str | None
    cluster_queue: str | None
    cohort: str | None
    decision: Decision | None
    borrowing: tuple[tuple[FlavorResource, int], ...]  # over the ClusterQueue's nominal quota, once admitted
    ahead: tuple[Workload, ...]  # pending Workloads its ClusterQueue orders before it
    message: str
    checks: tuple[CheckRule, ...] = ()  # the admission checks that apply once its quota is reserved


def kueue_stage(objs: KueueObjects, wl: Workload | None, now: float, namespace: str = "default") -> KueueStage:
    """What Kueue does with the new pending Workload `wl` (None: the job carries no queue name)
    in the next scheduling cycle."""
    if wl is None:
        return KueueStage(None, STAGE_NOT_MANAGED, None, None, None, None, (), (),
                          f"no kueue.x-k8s.io/queue-name label and no LocalQueue \"default\" in namespace {namespace}")
    refused = _queue_refusal(objs, wl)
    if refused is not None:
        return refused
    with_wl = replace(objs, workloads=(*objs.workloads, wl))
    return _from_cycle(with_wl, wl, schedule_cycle(with_wl, now))


STAGE_INACTIVE = "inactive"  # spec.active false: Kueue does not queue it (a deactivated Workload)


def pending_stages(objs: KueueObjects, now: float) -> list[KueueStage]:
    """What Kueue's next scheduling cycle does with each Workload of the cluster that does not
    hold a quota reservation (its job stays suspended: no pod exists): one cycle for all, as
    Kueue runs it (`pending` names the stage that holds each such job)."""
    result = schedule_cycle(objs, now)
    out = []
    for wl in objs.workloads:
        if wl.finished:
            continue
        if wl.admission is not None:
            if (waiting := _waiting_for_checks(objs, wl)) is not None:
                out.append(waiting)
            continue
        if not wl.active:
            out.append(KueueStage(wl, STAGE_INACTIVE, f"{wl.namespace}/{wl.queue_name}", None, None, None, (), (),
                                  "deactivated (spec.active is false): Kueue does not queue it"))
            continue
        out.append(_queue_refusal(objs, wl) or _from_cycle(objs, wl, result))
    return out


def _waiting_for_checks(objs: KueueObjects, wl: Workload) -> KueueStage | None:
    """A Workload with its quota reserved but not Admitted: a check that applies to it is not
    Ready yet (workload.SyncAdmittedCondition), e.g. a ProvisioningRequest waiting for nodes. Its
    job stays suspended; None when nothing holds it (or it is being evicted)."""
    assert wl.admission is not None
    cq = objs.cluster_queues.get(wl.admission.cluster_queue)
    if cq is None or wl.evicted or not wl.active:
        return None
    checks = checks_for_workload(cq, (f for ps in wl.admission.pod_sets for _, f in ps.flavors))
    if admitted_with_reservation(wl, checks):
        return None
    waiting = ", ".join(f"{r.name} {check_state(wl, r.name)}" for r in checks)
    return KueueStage(wl, STAGE_WAITING_FOR_CHECKS, f"{wl.namespace}/{wl.queue_name}", cq.name, cq.cohort, None, (), (),
                      f"quota reserved, waiting for admission checks: {waiting}", checks)


def _queue_refusal(objs: KueueObjects, wl: Workload) -> KueueStage | None:
    """Its LocalQueue or ClusterQueue missing, stopped or inactive: Kueue never nominates it."""
    lq_key = f"{wl.namespace}/{wl.queue_name}"
    lq = objs.local_queues.get(lq_key)
    if lq is None:
        return KueueStage(wl, STAGE_NO_QUEUE, lq_key, None, None, None, (), (), f"LocalQueue {lq_key} not found")
    cq = objs.cluster_queues.get(lq.cluster_queue)
    if cq is None:
        return KueueStage(wl, STAGE_NO_QUEUE, lq_key, lq.cluster_queue, None, None, (), (),
                          f"ClusterQueue {lq.cluster_queue} not found")
    if lq.stopped:
        return KueueStage(wl, STAGE_NO_QUEUE, lq_key, cq.name, cq.cohort, None, (), (), f"LocalQueue {lq_key} is stopped")
    if lq.cluster_queue not in active_cluster_queues(objs):
        return KueueStage(wl, STAGE_NO_QUEUE, lq_key, cq.name, cq.cohort, None, (), (),
                          f"ClusterQueue {cq.name} is inactive: {inactive_message(inactive_reasons(cq, objs.flavors))}")
    return None


def _from_cycle(objs: KueueObjects, wl: Workload, result: CycleResult) -> KueueStage:
    """The stage of pending `wl` (one of objs' Workloads, its queues checked) after `result`."""
    lq_key = f"{wl.namespace}/{wl.queue_name}"
    cq = objs.cluster_queues[objs.local_queues[lq_key].cluster_queue]
    d = result.decision_for(wl.key)
    if d is None:
        ahead = tuple(sorted((p for p in objs.workloads if p.admission is None and p.key != wl.key and p.active
                              and not p.finished and p.namespace + "/" + p.queue_name in objs.local_queues
                              and objs.local_queues[p.namespace + "/" + p.queue_name].cluster_queue == cq.name
                              and queue_order_key(p) < queue_order_key(wl)), key=queue_order_key))
        return KueueStage(wl, STAGE_QUEUED, lq_key, cq.name, cq.cohort, None, (), ahead,
                          f"{len(ahead)} pending Workload(s) of ClusterQueue {cq.name} come first")
    if d.outcome not in (ADMITTED, PREEMPTING):
        return KueueStage(wl, STAGE_NOT_ADMITTED, lq_key, cq.name, cq.cohort, d, (), (), d.message)
    assert d.assignment is not None
    snap = Snapshot(objs)  # the quota of admitted Workloads only: a pending one holds none
    snap.simulate_removal(t.workload for t in d.targets)
    node = snap.cluster_queues[cq.name]
    over = tuple(sorted((fr, node.usage.get(fr, 0) + q - node.nominal(fr)) for fr, q in d.assignment.usage.items()
                        if node.usage.get(fr, 0) + q > node.nominal(fr)))
    checks = checks_for_workload(cq, (c.flavor for ps in d.assignment.pod_sets for c in ps.flavors.values()))
    if not admitted_with_reservation(wl, checks):
        outcome = STAGE_RESERVED if d.outcome == ADMITTED else STAGE_RESERVED_AFTER_EVICTIONS
    else:
        outcome = STAGE_ADMITTED if d.outcome == ADMITTED else STAGE_ADMITTED_AFTER_EVICTIONS
    return KueueStage(wl, outcome, lq_key, cq.name, cq.cohort, d, over, (), d.message, checks)
