"""The pending Workload Kueue's job integration creates for a submitted job, before it is admitted.

Mirrors sigs.k8s.io/kueue v0.17.0 pkg/controller/jobs/job/job_controller.go (Job.PodSets,
podsCount: one podset "main" of min(parallelism, completions) pods with the Job's pod template),
pkg/controller/jobframework/reconciler.go ExtractPriority (the kueue.x-k8s.io/priority-class
label's WorkloadPriorityClass, else the pod template's PriorityClass, else the global default
PriorityClass, else 0) and the queue name (the kueue.x-k8s.io/queue-name label; without it, a
LocalQueue named "default" in the namespace: LocalQueueDefaulting, GA and locked on in v0.17.0).

Only batch/v1 Jobs for now; other kinds (JobSet, RayJob, Pod groups, ...) are refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kubectl_wap.queueing.kueue.objects import KueueInputError, KueueNotModelled, KueueObjects, Workload, read_workload

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
DEFAULT_LOCAL_QUEUE = "default"


def queue_name(job: Mapping[str, Any], objs: KueueObjects) -> str | None:
    """The LocalQueue a job is submitted to, or None when Kueue does not manage it (no label and
    no "default" LocalQueue in its namespace; manageJobsWithoutQueueName is not modelled)."""
    meta = job.get("metadata") or {}
    name = (meta.get("labels") or {}).get(QUEUE_LABEL)
    if name:
        return str(name)
    ns = str(meta.get("namespace") or "default")
    return DEFAULT_LOCAL_QUEUE if f"{ns}/{DEFAULT_LOCAL_QUEUE}" in objs.local_queues else None


def job_priority(job: Mapping[str, Any], workload_priority_classes: Mapping[str, int],
                 priority_classes: Mapping[str, int], global_default: int | None) -> int:
    """jobframework.ExtractPriority."""
    meta = job.get("metadata") or {}
    wpc = (meta.get("labels") or {}).get(PRIORITY_CLASS_LABEL)
    if wpc:
        if wpc not in workload_priority_classes:
            raise KueueInputError(f"WorkloadPriorityClass {wpc!r} (label {PRIORITY_CLASS_LABEL}) not found")
        return workload_priority_classes[wpc]
    pc = ((((job.get("spec") or {}).get("template") or {}).get("spec") or {}).get("priorityClassName"))
    if pc:
        if pc not in priority_classes:
            raise KueueInputError(f"PriorityClass {pc!r} not found")
        return priority_classes[pc]
    return global_default if global_default is not None else 0


def workload_for_job(job: Mapping[str, Any], objs: KueueObjects, *, priority: int, created: float) -> Workload | None:
    """The Workload Kueue creates for `job` (None: Kueue does not manage it)."""
    kind, api = job.get("kind"), job.get("apiVersion")
    meta = job.get("metadata") or {}
    if kind != "Job" or api != "batch/v1":
        raise KueueNotModelled(f"{kind} {meta.get('name', '?')}: Kueue's {api} {kind} integration is not modelled yet (batch/v1 Job is)")
    queue = queue_name(job, objs)
    if queue is None:
        return None
    spec = job.get("spec") or {}
    parallelism = int(spec.get("parallelism", 1))
    completions = spec.get("completions")
    count = min(parallelism, int(completions)) if completions is not None else parallelism
    if (meta.get("annotations") or {}).get("kueue.x-k8s.io/job-min-parallelism"):
        raise KueueNotModelled(f"Job {meta.get('name', '?')}: partial admission (job-min-parallelism) is not modelled yet")
    name = str(meta.get("name") or meta.get("generateName") or "job")
    wl = {
        "metadata": {"name": f"job-{name}", "namespace": str(meta.get("namespace") or "default"), "uid": f"job-{name}"},
        "spec": {"queueName": queue, "priority": priority, "active": True,
                 "podSets": [{"name": "main", "count": count, "template": spec.get("template") or {}}]},
    }
    # The new Workload is the newest of its queue (its creation time is `created`). Kueue names it
    # job-<name>-<hash> (GetWorkloadNameForOwnerWithGVK); the hash is left out.
    return replace(read_workload(wl), created=created)
