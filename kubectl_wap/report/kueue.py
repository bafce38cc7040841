"""Words and JSON for Kueue's stage (kubectl_wap/queueing/kueue/answer.py KueueStage): the line
that comes before the kube-scheduler part of a two-stage answer, e.g.

    Kueue: admitted to ClusterQueue team-a on flavor h100 (borrowing 8 nvidia.com/gpu from cohort ml)
    Kueue: admitted to ClusterQueue team-a on flavor h100 once it has evicted Workloads team-b/train-7
      (priority 100, reclamation within the cohort)
    Kueue: not admitted: ClusterQueue team-a: couldn't assign flavors to pod set main: ...
"""

from __future__ import annotations

from typing import Any

from kubectl_wap.quantity import format_amount
from kubectl_wap.queueing.kueue.answer import (
    STAGE_ADMITTED,
    STAGE_ADMITTED_AFTER_EVICTIONS,
    STAGE_NOT_ADMITTED,
    STAGE_NOT_MANAGED,
    STAGE_QUEUED,
    KueueStage,
)
from kubectl_wap.queueing.kueue.cycle import NO_CANDIDATES
from kubectl_wap.queueing.kueue.fairpreempt import IN_COHORT_FAIR_SHARING, FairTarget
from kubectl_wap.queueing.kueue.flavors import FIT, NO_FIT, PREEMPT
from kubectl_wap.queueing.kueue.preemption import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
    Target,
)

# preemption.go HumanReadablePreemptionReasons
REASON_WORDS = {
    IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    IN_COHORT_RECLAMATION: "reclamation within the cohort",
    IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
    IN_COHORT_FAIR_SHARING: "fair sharing within the cohort",
}
_MODE_WORDS = {FIT: "fits", PREEMPT: "needs preemption", NO_FIT: "no fit"}
NOT_MODELLED = ("admission fair sharing", "topology-aware scheduling", "admission checks", "partial admission",
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


def kueue_line(stage: KueueStage) -> str:
    """One line (two when it evicts) for the Kueue stage."""
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
    line = kueue_line(stage)
    if stage.outcome == STAGE_ADMITTED:
        line += " in its next cycle (no quota reserved yet when the cluster was read)"
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
                  STAGE_NOT_ADMITTED: f"Not admitted ({d.outcome}).",
                  }.get(stage.outcome, stage.outcome))
    return steps


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
