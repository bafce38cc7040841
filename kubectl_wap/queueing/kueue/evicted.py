"""Which pods go when Kueue evicts a Workload: the pods its job integration owns.

Kueue finds a job's pods with the integration's PodLabelSelector (sigs.k8s.io/kueue v0.17.0
pkg/controller/jobs/*/…_controller.go, one per kind); an evicted Workload's job is suspended and
its controller deletes exactly those pods. The table below holds those selectors by the kind of
the Workload's owner (its controller ownerReference):
- Job: batch.kubernetes.io/job-name (job_controller.go). The Job controller also sets the legacy
  `job-name` label on the same pods; either names them.
- JobSet and TrainJob: jobset.sigs.k8s.io/jobset-name (jobset_controller.go, trainjob_controller.go).
- RayCluster: ray.io/cluster (raycluster_controller.go).
- SparkApplication: sparkoperator.k8s.io/app-name (sparkapplication_controller.go).
- MPIJob: training.kubeflow.org/job-name plus operator-name mpi-operator (mpijob_controller.go).
- PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob: training.kubeflow.org/job-name plus
  operator-name `<kind>-controller` (kubeflow/jobs/*/…_controller.go).
- Pod (Kueue's plain-pod integration): the pod itself, or every pod of its group
  (kueue.x-k8s.io/pod-group-name, pod_controller.go) when it carries one.
RayJob and RayService select their RayCluster by a name kept in their status
(Status.RayClusterName), which a Workload does not carry: their pods are not matched (None).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")
POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
_KUBEFLOW_JOB, _KUBEFLOW_OPERATOR = "training.kubeflow.org/job-name", "training.kubeflow.org/operator-name"

# owner kind -> (label keys any of which carries the owner's name, other labels the pod must carry)
_SELECTORS: dict[str, tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = {
    "Job": (JOB_NAME_LABELS, ()),
    "JobSet": (("jobset.sigs.k8s.io/jobset-name",), ()),
    "TrainJob": (("jobset.sigs.k8s.io/jobset-name",), ()),
    "RayCluster": (("ray.io/cluster",), ()),
    "SparkApplication": (("sparkoperator.k8s.io/app-name",), ()),
    "MPIJob": ((_KUBEFLOW_JOB,), ((_KUBEFLOW_OPERATOR, "mpi-operator"),)),
    **{k: ((_KUBEFLOW_JOB,), ((_KUBEFLOW_OPERATOR, f"{k.lower()}-controller"),))
       for k in ("PyTorchJob", "TFJob", "XGBoostJob", "PaddleJob", "JAXJob")},
}


class _Pod(Protocol):
    @property
    def namespace(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def labels(self) -> Mapping[str, str]: ...


def matched_kind(kind: str) -> bool:
    """Whether the pods of a Workload owned by this kind can be found (see the module's table)."""
    return kind in _SELECTORS or kind == "Pod"


def owned_pods(pods: Iterable[_Pod], namespace: str, kind: str, name: str) -> list[_Pod]:
    """The pods of `namespace` that Kueue's integration for `kind` counts as the job `name`'s."""
    pods = [p for p in pods if p.namespace == namespace]
    if kind == "Pod":
        own = next((p for p in pods if p.name == name), None)
        group = own.labels.get(POD_GROUP_LABEL) if own is not None else None
        if group:
            return [p for p in pods if p.labels.get(POD_GROUP_LABEL) == group]
        return [own] if own is not None else []
    keys, extra = _SELECTORS.get(kind, ((), ()))
    return [p for p in pods if any(p.labels.get(k) == name for k in keys) and all(p.labels.get(k) == v for k, v in extra)]
