"""Words and JSON for Kueue's stage (kubectl_wap/queueing/kueue/answer.py KueueStage): the line
that comes before the kube-scheduler part of a two-stage answer, e.g.

    Kueue: admitted to ClusterQueue team-a on flavor h100 (borrowing 8 nvidia.com/gpu from cohort ml)
    Kueue: admitted to ClusterQueue team-a on flavor h100 once it has evicted Workloads team-b/train-7
      (priority 100, reclamation within the cohort)
    Kueue: not admitted: ClusterQueue team-a: couldn't assign flavors to pod set main: ...
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kubectl_wap.quantity import format_amount
from kubectl_wap.queueing.kueue.answer import (
    STAGE_ADMITTED,
    STAGE_ADMITTED_AFTER_EVICTIONS,
    STAGE_NOT_ADMITTED,
    STAGE_NOT_MANAGED,
    STAGE_QUEUED,
    STAGE_RESERVED,
    STAGE_RESERVED_AFTER_EVICTIONS,
    STAGE_WAITING_FOR_CHECKS,
    KueueStage,
)
from kubectl_wap.queueing.kueue.admissionchecks import check_state
from kubectl_wap.queueing.kueue.cycle import NO_CANDIDATES
from kubectl_wap.queueing.kueue.fairpreempt import IN_COHORT_FAIR_SHARING, FairTarget
from kubectl_wap.queueing.kueue.flavors import FIT, NO_FIT, PREEMPT
from kubectl_wap.queueing.kueue.preemption import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
    Target,
)
from kubectl_wap.queueing.kueue.objects import MULTIKUEUE_CONTROLLER, PROVISIONING_REQUEST_CONTROLLER, CheckRule

# preemption.go HumanReadablePreemptionReasons
REASON_WORDS = {
    IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    IN_COHORT_RECLAMATION: "reclamation within the cohort",
    IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
    IN_COHORT_FAIR_SHARING: "fair sharing within the cohort",
}
_MODE_WORDS = {FIT: "fits", PREEMPT: "needs preemption", NO_FIT: "no fit"}
NOT_MODELLED = ("admission fair sharing", "topology-aware scheduling", "what an admission check's controller does "
                "(the nodes a ProvisioningRequest provisions, MultiKueue's worker clusters)", "partial admission",
                "more than one scheduling cycle")


def share_words(share: float) -> str:
    """A dominant resource share as a fraction of what the parent could lend (Kueue's status
    weightedShare is the same per mille); a zero-weight borrower's is unbounded."""
    return "unbounded (weight 0)" if share == float("inf") else f"{share / 1000:.2f}"


def reason_words(t: Target) -> str:
    """Why Kueue evicts `t`, in preemption.go HumanReadablePreemptionReasons' words; for a fair
    sharing eviction, the shares the strategy compared."""
    words = REASON_WORDS.get(t.reason, t.reason)
    if isinstance(t, FairTarget):
        above = ">" if t.target_share > t.preemptor_share else ">="
        words += (f": {t.target_node}'s share {share_words(t.target_share)} {above} {t.preemptor_node}'s "
                  f"{share_words(t.preemptor_share)} after admission")
    return words


def _flavors(stage: KueueStage) -> str:
    d = stage.decision
    assert d is not None and d.assignment is not None
    by_res: dict[str, set[str]] = {}
    for ps in d.assignment.pod_sets:
        for res, c in ps.flavors.items():
            by_res.setdefault(res, set()).add(c.flavor)
    names = {f for fs in by_res.values() for f in fs}
    if len(names) == 1:
        return f"on flavor {next(iter(names))}"
    return "on flavors " + ", ".join(f"{r}: {'/'.join(sorted(fs))}" for r, fs in sorted(by_res.items()))


def checks_words(stage: KueueStage) -> str:
    """The admission checks a reservation waits for: 'prov (kueue.x-k8s.io/provisioning-request)'."""
    return ", ".join(f"{r.name} ({r.check.controller if r.check else 'no such AdmissionCheck'})" for r in stage.checks)


def _reserved_line(stage: KueueStage, when: str = "") -> str:
    """kueue_line for a reservation that admission checks hold: the admitted words (flavors,
    borrowing, evictions), with the quota reserved rather than admitted."""
    as_admitted = replace(stage, outcome=STAGE_ADMITTED if stage.outcome == STAGE_RESERVED else STAGE_ADMITTED_AFTER_EVICTIONS)
    rest = kueue_line(as_admitted).removeprefix("Kueue: admitted to ")
    return (f"Kueue: quota reserved in {rest}{when}; admitted once its admission checks are Ready: "
            f"{checks_words(stage)}")


def kueue_line(stage: KueueStage) -> str:
    """One line (two when it evicts) for the Kueue stage."""
    if stage.outcome in (STAGE_RESERVED, STAGE_RESERVED_AFTER_EVICTIONS):
        return _reserved_line(stage)
    if stage.outcome == STAGE_WAITING_FOR_CHECKS and stage.workload is not None:
        wl = stage.workload
        states = ", ".join(f"{r.name} ({r.check.controller if r.check else 'no such AdmissionCheck'}): "
                           f"{check_state(wl, r.name)}" for r in stage.checks)
        return f"Kueue: quota reserved in ClusterQueue {stage.cluster_queue}; not admitted until its admission checks are Ready: {states}"
    if stage.outcome == STAGE_NOT_MANAGED:
        return f"Kueue: not managed ({stage.message}): kube-scheduler sees its pods directly"
    if stage.outcome == STAGE_QUEUED:
        shown = ", ".join(w.key for w in stage.ahead[:3]) + (", ..." if len(stage.ahead) > 3 else "")
        return (f"Kueue: queued in ClusterQueue {stage.cluster_queue} behind {len(stage.ahead)} Workload(s) ({shown}); "
                "Kueue admits one head per ClusterQueue per cycle and later cycles are not modelled yet")
    if stage.outcome == STAGE_NOT_ADMITTED:
        d = stage.decision
        why = ""
        if d is not None and d.outcome == NO_CANDIDATES and d.assignment is not None:
            spec_words = "no Workload may be preempted for it under its ClusterQueue's preemption policies"
            why = f"; no preemption possible: {spec_words}"
        return f"Kueue: not admitted: ClusterQueue {stage.cluster_queue}: {stage.message}{why}"
    if stage.outcome in (STAGE_ADMITTED, STAGE_ADMITTED_AFTER_EVICTIONS):
        line = f"Kueue: admitted to ClusterQueue {stage.cluster_queue} {_flavors(stage)}"
        if stage.borrowing:
            amounts = ", ".join(f"{format_amount(r, q)} {r}" for (_, r), q in stage.borrowing)
            line += f" (borrowing {amounts} from cohort {stage.cohort})"
        if stage.outcome == STAGE_ADMITTED_AFTER_EVICTIONS:
            assert stage.decision is not None
            victims = ", ".join(f"{t.workload.key} (priority {t.workload.priority}, {reason_words(t)})"
                                for t in stage.decision.targets)
            line += f" once it has evicted Workloads {victims}"
        return line
    return f"Kueue: not admitted: {stage.message}"


def kueue_hold_line(stage: KueueStage) -> str:
    """`pending`'s reason for a Workload Kueue has not admitted (its job suspended): what Kueue's
    next cycle does with it, in kueue_line's words."""
    when = " in its next cycle (no quota reserved yet when the cluster was read)"
    if stage.outcome == STAGE_RESERVED:
        return _reserved_line(stage, when)
    line = kueue_line(stage)
    if stage.outcome == STAGE_ADMITTED:
        line += when
    return line


def kueue_steps(stage: KueueStage) -> list[str]:
    """Kueue's steps for `explain`, in the order of its scheduling cycle (scheduler.go schedule)."""
    if stage.workload is None:
        return [f"Not managed by Kueue: {stage.message}."]
    wl = stage.workload
    steps = [f"Workload {wl.key} (priority {wl.priority}) pending in LocalQueue {stage.local_queue}"
             + (f" -> ClusterQueue {stage.cluster_queue}" if stage.cluster_queue else "")
             + (f" (cohort {stage.cohort})" if stage.cohort else "") + "."]
    if stage.outcome == STAGE_QUEUED:
        steps.append(f"Not the head of its ClusterQueue: {stage.message} (higher priority or older).")
        return steps
    if stage.outcome == STAGE_WAITING_FOR_CHECKS:
        steps.extend(f"Admission check {r.name} ({check_state(wl, r.name)}): {check_note(r)}" for r in stage.checks)
        steps.append("Quota reserved earlier; not Admitted until its admission checks are Ready.")
        return steps
    d = stage.decision
    if d is None or d.assignment is None:
        steps.append(f"Not nominated: {stage.message}.")
        return steps
    if d.standing is not None and stage.cohort is not None:
        st = d.standing
        if st.rival is not None and st.rival_share is not None:
            steps.append(f"Fair sharing: tried in the cohort tournament (lowest share after admission first) with "
                         f"share {share_words(st.share)}; next: ClusterQueue {st.rival} at {share_words(st.rival_share)}.")
        else:
            steps.append(f"Fair sharing: the only entry of its cohort tree in this cycle (its share after admission "
                         f"{share_words(st.share)}).")
    for ps in d.assignment.pod_sets:
        chosen = ", ".join(f"{r} on {c.flavor} ({_MODE_WORDS[c.mode]}"
                           + (f", borrowing level {c.borrow}" if c.borrow else "") + ")" for r, c in sorted(ps.flavors.items()))
        steps.append(f"Flavor assignment, podset {ps.name} x{ps.count}: {chosen or 'no flavor'}"
                     + (f"; {'; '.join(ps.reasons)}" if ps.reasons else "") + ".")
    if d.targets:
        steps.append("Preemption: evict " + "; ".join(
            f"{t.workload.key} in {t.cluster_queue} (priority {t.workload.priority}, {reason_words(t)})"
            for t in d.targets) + ".")
    steps.append({STAGE_ADMITTED: "Admitted in this cycle (quota reserved).",
                  STAGE_ADMITTED_AFTER_EVICTIONS: "Admitted in a later cycle, once the evicted Workloads release their quota.",
                  STAGE_RESERVED: "Quota reserved in this cycle (QuotaReserved); not Admitted until its admission checks are Ready.",
                  STAGE_RESERVED_AFTER_EVICTIONS: "Quota reserved in a later cycle, once the evicted Workloads release their "
                                                  "quota; not Admitted until its admission checks are Ready.",
                  STAGE_NOT_ADMITTED: f"Not admitted ({d.outcome}).",
                  }.get(stage.outcome, stage.outcome))
    steps.extend(f"Admission check {r.name}: {check_note(r)}" for r in stage.checks)
    return steps


def check_note(rule: CheckRule) -> str:
    """What a check does before the Workload is Admitted, and what of it we do not see."""
    controller = rule.check.controller if rule.check else ""
    if controller == PROVISIONING_REQUEST_CONTROLLER:
        # UPSTREAM-DIFF: Kueue's ProvisioningRequest controller (pkg/controller/admissionchecks/
        # provisioning) asks the cluster autoscaler for nodes for the podsets and admits the
        # Workload once they exist; its pods then go to those nodes. They are not in the cluster
        # we read, so kube-scheduler's part is answered on today's nodes.
        return ("Kueue's ProvisioningRequest controller asks the cluster autoscaler for nodes for the Workload's podsets "
                "(a ProvisioningRequest) and the check turns Ready once they are provisioned; those nodes are not in the "
                "cluster read, so kube-scheduler's part is answered on today's nodes.")
    if controller == MULTIKUEUE_CONTROLLER:
        return ("MultiKueue runs the Workload on a worker cluster (not modelled): kube-scheduler's part is answered on "
                "this cluster, where the pods do not run.")
    return f"its controller ({controller}) decides when it is Ready (not modelled)."


def _fair_json(t: Target) -> dict[str, Any]:
    """An eviction's `fairSharing` field: only for one decided by a fair sharing strategy."""
    if not isinstance(t, FairTarget):
        return {}
    inf = float("inf")
    return {"fairSharing": {"preemptorNode": t.preemptor_node, "targetNode": t.target_node,
                            "preemptorShare": None if t.preemptor_share == inf else t.preemptor_share / 1000,
                            "targetShare": None if t.target_share == inf else t.target_share / 1000}}


def kueue_json(stage: KueueStage) -> dict[str, Any]:
    """The `queueing` section of a JSON answer."""
    d = stage.decision
    out: dict[str, Any] = {
        "controller": "kueue",
        "kueueVersion": "v0.17.0",
        "outcome": stage.outcome,
        "workload": stage.workload.key if stage.workload else None,
        "localQueue": stage.local_queue,
        "clusterQueue": stage.cluster_queue,
        "cohort": stage.cohort,
        "message": stage.message,
        "podSets": [],
        "borrowing": [{"flavor": f, "resource": r, "amount": q} for (f, r), q in stage.borrowing],
        "evictions": [],
        "queuedBehind": [w.key for w in stage.ahead],
        "admissionChecks": [{"name": r.name, "controller": r.check.controller if r.check else None,
                             "onFlavors": sorted(r.flavors),
                             "state": check_state(stage.workload, r.name) if stage.workload else "Pending"}
                            for r in stage.checks],
        "notModelled": list(NOT_MODELLED),
        "steps": kueue_steps(stage),
    }
    if d is not None and d.assignment is not None:
        out["podSets"] = [{"name": ps.name, "count": ps.count, "flavors": {r: c.flavor for r, c in sorted(ps.flavors.items())}}
                          for ps in d.assignment.pod_sets]
        out["evictions"] = [{"workload": t.workload.key, "clusterQueue": t.cluster_queue, "priority": t.workload.priority,
                             "reason": t.reason,
                             "owner": {"kind": t.workload.owner[0], "name": t.workload.owner[1]} if t.workload.owner else None,
                             **_fair_json(t)}
                            for t in d.targets]
    return out
