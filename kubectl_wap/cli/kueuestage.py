"""`whatif -f job.yaml` on a Kueue cluster (live, a snapshot or a dump): the Kueue stage before the
kube-scheduler one. Reads the cluster's kueue.x-k8s.io objects and the file's Job, asks the Kueue
model (queueing/kueue) what its next scheduling cycle does with the Job's Workload, and returns
the JSON `queueing` section (report/kueue.py) with its one-line wording under "line".

Glue of the command line: the snapshot reads, queueing answers, report words."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from kubectl_wap.errors import UserError
from kubectl_wap.model import Snapshot
from kubectl_wap.queueing.kueue.answer import (
    STAGE_ADMITTED,
    STAGE_ADMITTED_AFTER_EVICTIONS,
    STAGE_NOT_ADMITTED,
    STAGE_NOT_MANAGED,
    STAGE_RESERVED,
    STAGE_RESERVED_AFTER_EVICTIONS,
    EVICTS,
    kueue_stage,
)
from kubectl_wap.queueing.kueue.jobs import JOBSET_API, PRIORITY_CLASS_LABEL, QUEUE_LABEL, job_priority, workload_for_job
from kubectl_wap.queueing.kueue.config import DEFAULTS, KueueConfig, defaults_note, not_modelled
from kubectl_wap.queueing.kueue.objects import (
    KUEUE_GROUP,
    KueueNotModelled,
    KueueObjects,
    objects_from_items,
    workload_priority_classes,
)
from kubectl_wap.report.kueue import check_note, kueue_json, kueue_line
from kubectl_wap.snapshot.io.files import load_items


def _priority_classes(items: Sequence[Any]) -> tuple[dict[str, int], int | None]:
    values: dict[str, int] = {}
    default = None
    for o in items:
        if isinstance(o, Mapping) and o.get("kind") == "PriorityClass":
            name, value = str((o.get("metadata") or {}).get("name")), int(o.get("value", 0))
            values[name] = value
            if o.get("globalDefault") is True:
                default = value
    return values, default


# What the Kueue stage reads of the cluster: Kueue's objects, Namespaces (a ClusterQueue's
# namespaceSelector) and PriorityClasses (a Job's priority without a WorkloadPriorityClass).
# A tuple, not a set: a malformed item's kind may be a list (unhashable); the loader reports it.
_CORE_KINDS = (("v1", "Namespace"), ("scheduling.k8s.io/v1", "PriorityClass"))


def read_by_kueue(o: Any) -> bool:
    """Whether the Kueue stage reads this raw item (a Kueue object, a Namespace, a PriorityClass)."""
    return type(o) is dict and (str(o.get("apiVersion", "")).startswith(KUEUE_GROUP + "/")
                                or (o.get("apiVersion"), o.get("kind")) in _CORE_KINDS)


def tap_kueue(items: Iterable[Any], into: list[Any]) -> Iterator[Any]:
    """`items` unchanged, keeping in `into` the ones the Kueue stage reads, as they stream past."""
    for o in items:
        if read_by_kueue(o):
            into.append(o)
        yield o


def kueue_section(manifest: str, items: Sequence[Any], forbidden: Sequence[str] = (),
                  config: KueueConfig | None = None, warnings: list[str] | None = None) -> dict[str, Any] | None:
    """The Kueue stage for the Job of `manifest` on the cluster whose objects `items` holds
    (tap_kueue); None when there is no Kueue object or the file no Job (the answer is
    kube-scheduler's alone). `forbidden`: the capture's forbidden lists; a Kueue list among them
    is refused in one line (its quota or Workloads would be unknown: a wrong answer). `config`:
    Kueue's Configuration (--kueue-config; None: its defaults); a switch the model does not follow is refused.
    `warnings` gets the stage's warnings (the command prints them on stderr)."""
    warnings = [] if warnings is None else warnings
    config = DEFAULTS if config is None else config
    _, job_items = load_items(manifest, whole=True)
    jobs = [o for o in job_items if isinstance(o, Mapping) and o.get("kind") in ("Job", "JobSet")]
    if not jobs:
        # Another kind sent to a Kueue queue: Kueue would hold it, and we do not model its
        # integration yet; answering kube-scheduler's part alone would hide that (--no-kueue does).
        queued = [o for o in job_items if isinstance(o, Mapping) and o.get("kind") not in (None, "PodGroup", "CompositePodGroup")
                  and QUEUE_LABEL in ((o.get("metadata") or {}).get("labels") or {})]
        if queued and any(str(o.get("apiVersion", "")).startswith(KUEUE_GROUP + "/") for o in items):
            o = queued[0]
            raise KueueNotModelled(f"{o.get('kind')} {(o.get('metadata') or {}).get('name', '?')}: Kueue's {o.get('apiVersion')} "
                                   f"{o.get('kind')} integration is not modelled yet (batch/v1 Job and {JOBSET_API} JobSet are); "
                                   "--no-kueue answers kube-scheduler's part alone")
        return None
    denied = [r for r in forbidden if r.endswith("." + KUEUE_GROUP)]
    if denied:
        raise UserError(f"cannot answer Kueue's admission stage: forbidden to list {', '.join(denied)} (kubectl-wap needs "
                        "get/list on them, see deploy/rbac-readonly.yaml); --no-kueue answers kube-scheduler's part alone")
    objs = kueue_objects(items, config)
    if objs is None:
        return None
    if len(jobs) > 1:
        raise UserError(f"the -f file holds {len(jobs)} Jobs/JobSets; the Kueue stage answers for one")
    job = jobs[0]
    # The new Workload is created now: after every Workload of the dump (queue order by creation).
    now = max((w.created for w in objs.workloads), default=0.0) + 1.0
    try:
        pcs, default = _priority_classes(items)
        priority = job_priority(job, workload_priority_classes(items), pcs, default)
        wl = workload_for_job(job, objs, priority=priority, created=now)
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        name = (job.get("metadata") or {}).get("name", "?") if isinstance(job.get("metadata"), Mapping) else "?"
        raise UserError(f"Job {name} (or a priority class it names): malformed for Kueue's stage ({e})") from None
    ns = str((job.get("metadata") or {}).get("namespace") or "default")
    stage = kueue_stage(objs, wl, now, namespace=ns)
    out = kueue_json(stage)
    out["line"] = kueue_line(stage)
    notes = []
    if stage.outcome == STAGE_NOT_ADMITTED:
        notes.append("The Job stays suspended: no pod is created. Below: what kube-scheduler would do if its pods existed.")
    elif stage.outcome in (STAGE_RESERVED, STAGE_RESERVED_AFTER_EVICTIONS):
        notes.append("The Job stays suspended until its admission checks are Ready (Kueue then admits it). Below: what "
                     "kube-scheduler would do with its pods then.")
        notes.extend(f"Admission check {r.name}: {check_note(r)}" for r in stage.checks)
    elif stage.outcome not in (STAGE_ADMITTED, STAGE_ADMITTED_AFTER_EVICTIONS, STAGE_NOT_MANAGED):
        notes.append("Below: what kube-scheduler would do once Kueue admits it.")
    if stage.workload is not None and stage.workload.pod_sets:
        total = sum(ps.count for ps in stage.workload.pod_sets)
        if job.get("kind") == "JobSet":
            each = ", ".join(f"{ps.name} {ps.count}" for ps in stage.workload.pod_sets)
            notes.append(f"Kueue's answer is for the whole JobSet ({total} pods: {each}; replicas x min(parallelism, completions)).")
        elif total > 1:
            notes.append(f"Kueue's answer is for the whole Job ({total} pods, min(parallelism, completions)).")
    wpc = ((job.get("metadata") or {}).get("labels") or {}).get(PRIORITY_CLASS_LABEL)
    if wpc:
        notes.append(f"Kueue orders and preempts by WorkloadPriorityClass {wpc} ({priority}); kube-scheduler uses the "
                     "pods' own priority (kubernetes-sigs/kueue#14413).")
    notes.extend(config_notes(config))
    if (warning := fair_sharing_warning(config, items)) is not None:
        warnings.append(warning)
    out["notes"] = notes
    return out


def kueue_objects(items: Sequence[Any], config: KueueConfig | None) -> KueueObjects | None:
    """objects_from_items under Kueue's Configuration (None: its defaults): fair sharing and its
    preemption strategies as the file says; blockAdmission refused here (config.not_modelled), only
    on a Kueue cluster."""
    config = DEFAULTS if config is None else config
    objs = objects_from_items(items, fair_sharing=config.fair_sharing, fair_strategies=config.fair_strategies)
    if objs is not None and (why := not_modelled(config)):
        raise KueueNotModelled(why)
    return objs


def config_notes(config: KueueConfig) -> list[str]:
    """What the answer assumes of Kueue's Configuration: its defaults when the file was not read;
    when it was, that fair sharing decided (and by which strategies), and that waitForPodsReady's
    timeout (evictions after admission) is not played."""
    if not config.read:
        return [defaults_note()]
    notes = []
    if config.fair_sharing:
        notes.append("Kueue's fair sharing is on: a cohort's entries are tried lowest dominant resource share first, and "
                     f"preemption across the cohort follows {' then '.join(config.fair_strategies)}.")
    if config.wait_for_pods_ready:
        notes.append("Kueue's waitForPodsReady is on: an admitted Workload whose pods are not ready in time is evicted and "
                     "requeued later; this answer is the admission cycle's only.")
    return notes


def fair_sharing_warning(config: KueueConfig | None, items: Sequence[Any]) -> str | None:
    """Without --kueue-config: a ClusterQueue or Cohort with a spec.fairSharing stanza (its weight)
    is a strong sign fair sharing is on (the stanza does nothing otherwise), so the classical
    answer may be wrong; None with the file read (it says whether fair sharing is on) or no stanza."""
    if config is not None and config.read:
        return None
    named = [f"{o.get('kind')} {(o.get('metadata') or {}).get('name', '?')}" for o in items
             if isinstance(o, Mapping) and o.get("kind") in ("ClusterQueue", "Cohort")
             and str(o.get("apiVersion", "")).startswith(KUEUE_GROUP + "/")
             and isinstance(o.get("spec"), Mapping) and o["spec"].get("fairSharing") is not None]
    if not named:
        return None
    more = f" and {len(named) - 3} more" if len(named) > 3 else ""
    return (f"{', '.join(named[:3])}{more} set spec.fairSharing, a sign Kueue's fair sharing is on: "
            "the Kueue answer assumes it off (Kueue's default); pass --kueue-config FILE to answer with it")


def apply_evictions(snap: Snapshot, section: dict[str, Any]) -> Snapshot:
    """The cluster kube-scheduler sees once Kueue's evictions are done: the pods of each evicted
    Workload's job removed (Kueue suspends the job; its controller deletes them), found as Kueue's
    job integrations find them (queueing/kueue/evicted.py). A note in the section says how many,
    and names evicted Workloads whose pods cannot be found (an owner kind without a selector)."""
    from ..queueing.kueue.evicted import matched_kind, owned_pods

    if section.get("outcome") not in EVICTS:
        return snap
    gone: set[int] = set()
    unmatched: list[str] = []
    for e in section["evictions"]:
        ns = e["workload"].split("/", 1)[0]
        owner = e.get("owner")
        if owner and matched_kind(owner["kind"]):
            gone.update(id(p) for p in owned_pods(snap.pods, ns, owner["kind"], owner["name"]))
        else:
            unmatched.append(e["workload"])
    kept = [p for p in snap.pods if id(p) not in gone]
    removed = len(snap.pods) - len(kept)
    section["notes"].insert(0, f"Below, kube-scheduler's part runs with the {removed} pod(s) of the evicted Workloads' jobs removed "
                               "(Kueue evicts them first).")
    if unmatched:
        section["notes"].insert(1, f"The pods of {', '.join(unmatched)} are not removed: no owner reference, or an owner kind "
                                   "whose pods the Workload alone does not name (RayJob, RayService, another kind).")
    return replace(snap, pods=kept)
