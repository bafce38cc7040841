"""Kueue's admission checks (sigs.k8s.io/kueue v0.17.0): what they do to admission.

- A ClusterQueue is inactive while one of its checks is missing or not Active, and under the
  MultiKueue rules (pkg/cache/scheduler clusterqueue.go updateWithAdmissionChecks,
  updateQueueStatus, inactiveReason). An inactive ClusterQueue has no head (queue Manager.heads)
  and no part in the cycle's snapshot (Cache.Snapshot), so nothing is admitted from it.
- Checks change nothing in flavor assignment, quota or preemption (outside topology-aware
  scheduling, refused at input): a Workload gets its quota reserved (QuotaReserved) as without
  them, and is Admitted only once every check that applies to it is Ready
  (scheduler.go prepareWorkload, workload.SyncAdmittedCondition). Which apply:
  workload.AdmissionChecksForWorkload (every check when each covers all the ClusterQueue's
  flavors, else those whose onFlavors hold a flavor the Workload was assigned).
- A pending Workload with a check in Retry or Rejected is not nominated ("The workload has
  failed admission checks", Scheduler.nominate).

What a check's controller then does is not modelled: the ProvisioningRequest controller
(pkg/controller/admissionchecks/provisioning) creates one ProvisioningRequest for the podsets
that use its managed resources, the cluster autoscaler provisions nodes for them, and the check
turns Ready once they exist; MultiKueue runs the Workload on a worker cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kubectl_wap.queueing.kueue.objects import (
    MULTIKUEUE_CONTROLLER,
    PROVISIONING_REQUEST_CONTROLLER,
    CheckRule,
    ClusterQueue,
    KueueObjects,
    ResourceFlavor,
    Workload,
)

# v1beta2 CheckState
PENDING, READY, RETRY, REJECTED = "Pending", "Ready", "Retry", "Rejected"
FAILED_CHECKS_MESSAGE = "The workload has failed admission checks"  # Scheduler.nominate's inadmissibleMsg


def inactive_reasons(cq: ClusterQueue, flavors: Mapping[str, ResourceFlavor]) -> list[str]:
    """Why Kueue's cache holds the ClusterQueue inactive (clusterQueue.inactiveReason's messages, in
    its order); empty when it is active. Topology-aware scheduling is refused at input."""
    out = []
    if cq.stopped:
        out.append("is stopped")
    missing_flavors = [f for g in cq.resource_groups for f in g.flavors if f not in flavors]
    if missing_flavors:
        out.append(f"references missing ResourceFlavor(s): {','.join(missing_flavors)}")
    rules = cq.admission_checks
    missing = sorted(r.name for r in rules if r.check is None)
    inactive = sorted(r.name for r in rules if r.check is not None and not r.check.active)
    if missing:
        out.append(f"references missing AdmissionCheck(s): {','.join(missing)}")
    if inactive:
        out.append(f"references inactive AdmissionCheck(s): {','.join(inactive)}")
    every = frozenset(f for g in cq.resource_groups for f in g.flavors)
    multikueue = sorted(r.name for r in rules if r.check is not None and r.check.controller == MULTIKUEUE_CONTROLLER)
    provisioning = sorted(r.name for r in rules if r.check is not None and r.check.controller == PROVISIONING_REQUEST_CONTROLLER)
    per_flavor_mk = sorted(r.name for r in rules if r.name in multikueue and r.flavors != every)
    if len(multikueue) > 1:
        out.append(f"Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, found: {','.join(multikueue)}")
    if per_flavor_mk:
        out.append(f"Cannot specify MultiKueue AdmissionCheck per flavor, found: {','.join(per_flavor_mk)}")
    if multikueue and provisioning:
        out.append("Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks together, found: "
                   f"{','.join(multikueue)}, {','.join(provisioning)}")
    return out


def active_cluster_queues(objs: KueueObjects) -> set[str]:
    """The ClusterQueues the cache reports active (Cache.ClusterQueueActive): not stopped, every
    flavor and admission check they name exists, every check Active."""
    return {cq.name for cq in objs.cluster_queues.values() if not inactive_reasons(cq, objs.flavors)}


def inactive_message(reasons: list[str]) -> str:
    """The ClusterQueue's Active=False condition message (inactiveReason)."""
    return f"Can't admit new workloads: {', '.join(reasons)}." if reasons else ""


def checks_for_workload(cq: ClusterQueue, assigned_flavors: Iterable[str]) -> tuple[CheckRule, ...]:
    """workload.AdmissionChecksForWorkload once quota is reserved (the flavors assigned known),
    in the ClusterQueue's order."""
    every = frozenset(f for g in cq.resource_groups for f in g.flavors)
    rules = cq.admission_checks
    if all(r.flavors == every for r in rules):
        return rules
    assigned = set(assigned_flavors)
    return tuple(r for r in rules if r.flavors & assigned)


def admitted_with_reservation(wl: Workload, checks: tuple[CheckRule, ...]) -> bool:
    """Whether the scheduler sets Admitted together with QuotaReserved (scheduler.go
    prepareWorkload): the Workload already carries a state for every check that applies
    (workload.HasAllChecks) and every state it carries is Ready (SyncAdmittedCondition,
    HasAllChecksReady). A new Workload carries none: admitted at once only when no check applies."""
    names = {n for n, _ in wl.check_states}
    return all(r.name in names for r in checks) and all(s == READY for _, s in wl.check_states)


def failed_checks(wl: Workload) -> list[str]:
    """workload.HasRetryChecks / HasRejectedChecks: the checks that keep a pending Workload from
    being nominated."""
    return [f"{name} ({state})" for name, state in wl.check_states if state in (RETRY, REJECTED)]


def check_state(wl: Workload, name: str) -> str:
    """The Workload's state for check `name` (Pending when it has none yet: the workload
    controller adds every check as Pending)."""
    return next((s for n, s in wl.check_states if n == name), PENDING)
