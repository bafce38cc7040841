"""The pending Workload Kueue's job integration creates for a submitted job, before it is admitted.

Mirrors sigs.k8s.io/kueue v0.17.0 pkg/controller/jobs/job/job_controller.go (Job.PodSets,
podsCount: one podset "main" of min(parallelism, completions) pods with the Job's pod template),
pkg/controller/jobframework/reconciler.go ExtractPriority (the kueue.x-k8s.io/priority-class
label's WorkloadPriorityClass, else the pod template's PriorityClass, else the global default
PriorityClass, else 0) and the queue name (the kueue.x-k8s.io/queue-name label; without it, a
LocalQueue named "default" in the namespace: LocalQueueDefaulting, GA and locked on in v0.17.0).

JobSets (jobset.x-k8s.io/v1alpha2) follow pkg/controller/jobs/jobset/jobset_controller.go: one
podset per replicatedJob, named after it, with its Job's pod template and replicas x
min(parallelism, completions) pods (PodSets, podsCount, PodsCountPerReplica); the priority, when
no WorkloadPriorityClass is named, is the first podset template's priorityClassName
(extractPriorityFromPodSets). Other kinds (RayJob, MPIJob, Pod groups, ...) are refused in one line.

Topology-aware scheduling annotations on a pod template (kueue.x-k8s.io/podset-*-topology, ...:
jobframework podSetTopologyRequestBuilder.Build) are refused, as a Workload's topologyRequest is.
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


JOBSET_API = "jobset.x-k8s.io/v1alpha2"
# jobframework podSetTopologyRequestBuilder.Build reads these pod template annotations (TAS).
_TAS_ANNOTATIONS = ("kueue.x-k8s.io/podset-required-topology", "kueue.x-k8s.io/podset-preferred-topology",
                    "kueue.x-k8s.io/podset-unconstrained-topology", "kueue.x-k8s.io/podset-slice-required-topology",
                    "kueue.x-k8s.io/podset-slice-size", "kueue.x-k8s.io/podset-slice-required-topology-constraints",
                    "kueue.x-k8s.io/podset-group-name")


def _podsets(job: Mapping[str, Any]) -> list[tuple[str, int, Mapping[str, Any]]]:
    """(name, count, pod template) per podset, as the job's integration builds them (PodSets)."""
    spec = job.get("spec") or {}
    if job.get("kind") == "JobSet":
        out = []
        for rj in spec.get("replicatedJobs") or ():
            jspec = (rj.get("template") or {}).get("spec") or {}
            parallelism = int(jspec.get("parallelism", 1))
            completions = int(jspec.get("completions", parallelism))
            out.append((str(rj["name"]), int(rj.get("replicas", 1)) * min(parallelism, completions), jspec.get("template") or {}))
        return out
    parallelism = int(spec.get("parallelism", 1))
    completions = spec.get("completions")
    count = min(parallelism, int(completions)) if completions is not None else parallelism
    return [("main", count, spec.get("template") or {})]


def job_priority(job: Mapping[str, Any], workload_priority_classes: Mapping[str, int],
                 priority_classes: Mapping[str, int], global_default: int | None) -> int:
    """jobframework.ExtractPriority (extractPriorityFromPodSets: the first podset template naming one)."""
    meta = job.get("metadata") or {}
    wpc = (meta.get("labels") or {}).get(PRIORITY_CLASS_LABEL)
    if wpc:
        if wpc not in workload_priority_classes:
            raise KueueInputError(f"WorkloadPriorityClass {wpc!r} (label {PRIORITY_CLASS_LABEL}) not found")
        return workload_priority_classes[wpc]
    pc = next((str(t.get("spec", {}).get("priorityClassName")) for _, _, t in _podsets(job)
               if (t.get("spec") or {}).get("priorityClassName")), None)
    if pc:
        if pc not in priority_classes:
            raise KueueInputError(f"PriorityClass {pc!r} not found")
        return priority_classes[pc]
    return global_default if global_default is not None else 0


def workload_for_job(job: Mapping[str, Any], objs: KueueObjects, *, priority: int, created: float) -> Workload | None:
    """The Workload Kueue creates for `job` (None: Kueue does not manage it)."""
    kind, api = job.get("kind"), job.get("apiVersion")
    meta = job.get("metadata") or {}
    if (kind, api) not in (("Job", "batch/v1"), ("JobSet", JOBSET_API)):
        raise KueueNotModelled(f"{kind} {meta.get('name', '?')}: Kueue's {api} {kind} integration is not modelled yet "
                               f"(batch/v1 Job and {JOBSET_API} JobSet are)")
    queue = queue_name(job, objs)
    if queue is None:
        return None
    if (meta.get("annotations") or {}).get("kueue.x-k8s.io/job-min-parallelism"):
        raise KueueNotModelled(f"{kind} {meta.get('name', '?')}: partial admission (job-min-parallelism) is not modelled yet")
    podsets = _podsets(job)
    for ps_name, _, template in podsets:
        tas = [a for a in _TAS_ANNOTATIONS if a in ((template.get("metadata") or {}).get("annotations") or {})]
        if tas:
            raise KueueNotModelled(f"{kind} {meta.get('name', '?')}: podset {ps_name}: topology-aware scheduling ({tas[0]}) "
                                   "is not modelled yet")
    name = str(meta.get("name") or meta.get("generateName") or "job")
    prefix = "job" if kind == "Job" else "jobset"
    wl = {
        "metadata": {"name": f"{prefix}-{name}", "namespace": str(meta.get("namespace") or "default"), "uid": f"{prefix}-{name}"},
        "spec": {"queueName": queue, "priority": priority, "active": True,
                 "podSets": [{"name": n, "count": c, "template": t} for n, c, t in podsets]},
    }
    # The new Workload is the newest of its queue (its creation time is `created`). Kueue names it
    # <kind>-<name>-<hash> (GetWorkloadNameForOwnerWithGVK); the hash is left out.
    return replace(read_workload(wl), created=created)
