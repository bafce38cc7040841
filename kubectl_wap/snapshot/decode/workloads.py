"""Workload manifests read as the pods their controllers would create now (`whatif -f`, issue 30
item 3): batch/v1 Job, apps/v1 Deployment/ReplicaSet/StatefulSet, and the workload CRDs ML
platforms submit (JobSet, LeaderWorkerSet, Kubeflow PyTorchJob/TFJob, MPIJob v2beta1, KubeRay
RayCluster/RayJob). Each reader mirrors its controller's naming, defaults and counts (cited at the
reader); what a controller would create only later (a startup order, a launcher that waits for its
workers) is listed with no pods, so the question is what kube-scheduler sees first. Which PodGroups
the pods belong to is the pod templates' `spec.schedulingGroup` (workload_groups.py checks it)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable

from ...errors import UserError

# The creation time of every hypothetical object: newer than anything running, so a hypothetical
# pod or group is the latest (hypothetical.py re-exports it).
CREATED = "2099-01-01T00:00:00Z"

MAX_INT32 = 2_147_483_647


@dataclass
class Template:
    """One pod template of a workload and the pods its controller creates from it now."""

    label: str  # how notes and refusals name it: "replicatedJob workers", "Worker", "head"
    field: str  # where its PodTemplateSpec is, e.g. spec.replicatedJobs[1].template.spec.template
    template: dict[str, Any]
    names: list[str]  # the pods, in the controller's order; [] when none are created now
    how: str  # how the count was read, e.g. "replicas 2 x min(parallelism, completions) 4"
    later: str = ""  # why its pods come only later (then names is [])
    rename: Callable[[int], list[str]] | None = None  # names of N pods for --replicas; None: no single count


@dataclass
class Workload:
    kind: str
    namespace: str
    name: str
    templates: list[Template]
    # UPSTREAM-DIFF: where a controller names pods with generateName (Job, ReplicaSet, JobSet's
    # Indexed Jobs, the MPIJob launcher, KubeRay) the random suffix is replaced by the pod's index,
    # so two runs name the same pods; `naming` says so in the note ("" when the names are exact).
    naming: str = ""
    notes: list[str] = field(default_factory=list)  # more to say: suspended, a submitter Job left out

    @property
    def pods(self) -> int:
        return sum(len(t.names) for t in self.templates)


def _indexed(prefix: str) -> Callable[[int], list[str]]:
    return lambda n: [f"{prefix}-{i}" for i in range(n)]


# ---- shared field readers -------------------------------------------------------------------------

def _count(desc: str, obj: dict[str, Any], key: str, path: str, default: int) -> int:
    v = obj.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise UserError(f"the -f file: {desc}: {path}{key} must be a non-negative integer")
    return v


def _map(desc: str, v: Any, path: str, required: bool = True) -> dict[str, Any]:
    if v is None and not required:
        return {}
    if not isinstance(v, dict):
        raise UserError(f"the -f file: {desc}: {path} {'is required' if v is None else 'must be a map'}")
    return v


def _named_entries(desc: str, items: Any, path: str, key: str, required: bool) -> list[tuple[str, dict[str, Any], str]]:
    """(path, entry, name) of a list of maps each named by `key` (replicatedJobs, workerGroupSpecs)."""
    if items is None and not required:
        return []
    if not isinstance(items, list) or (required and not items):
        raise UserError(f"the -f file: {desc}: {path} must be a list" + (" (of at least one entry)" if required else ""))
    out = []
    for i, entry in enumerate(items):
        epath = f"{path}[{i}]"
        entry = _map(desc, entry, epath)
        name = entry.get(key)
        if not isinstance(name, str) or not name:
            raise UserError(f"the -f file: {desc}: {epath}.{key} is required")
        out.append((epath, entry, name))
    return out


def _pod_template(desc: str, tmpl: Any, path: str) -> dict[str, Any]:
    if not isinstance(tmpl, dict) or not isinstance(tmpl.get("spec"), dict):
        raise UserError(f"the -f file: {desc}: {path}.spec (the pod template) is required")
    return tmpl


def _job_pods(desc: str, spec: dict[str, Any], path: str) -> tuple[int, str]:
    """How many pods a batch/v1 Job creates at once: pkg/controller/job/job_controller.go manageJob
    keeps min(parallelism, completions left) active; SetDefaults_Job makes parallelism 1 when unset
    (completions unset: a work queue, parallelism pods)."""
    n = _count(desc, spec, "parallelism", path, 1)
    if spec.get("completions") is not None:
        n = min(n, _count(desc, spec, "completions", path, 1))
    return n, "min(parallelism, completions)"


def _suspended(spec: dict[str, Any], path: str) -> str:
    # UPSTREAM-DIFF: a suspended workload (Kueue admits it by resuming it) has no pods until it is
    # resumed; -f answers for the pods it creates then, and says so.
    return f"{path}suspend is true: its pods are created once it is resumed (e.g. admitted by Kueue); read as resumed" \
        if spec.get("suspend") is True else ""


def _refuse_field(desc: str, present: Any, what: str) -> None:
    if present:
        raise UserError(f"the -f file: {desc}: {what}")


# ---- built-in controllers -------------------------------------------------------------------------

def _job(o: dict[str, Any]) -> Workload:
    """batch/v1 Job (job_controller.go): min(parallelism, completions) pods, generateName NAME- (an
    Indexed Job's NAME-INDEX-), a random suffix after it."""
    md, spec = o["metadata"], o["spec"]
    desc = f"Job {md['name']}"
    tmpl = _pod_template(desc, spec.get("template"), "spec.template")
    n, how = _job_pods(desc, spec, "spec.")
    t = Template("pod", "spec.template", tmpl, _indexed(md["name"])(n), how, rename=_indexed(md["name"]))
    return Workload("Job", _ns(o), md["name"], [t], "their controller adds a random suffix instead",
                    [s for s in [_suspended(spec, "spec.")] if s])


def _replicas_controller(kind: str, exact: bool) -> Callable[[dict[str, Any]], Workload]:
    """Deployment / ReplicaSet (replica_set.go manageReplicas: spec.replicas pods, default 1,
    generateName NAME-) and StatefulSet (stateful_set_control.go: NAME-0..N-1 exactly)."""

    def read(o: dict[str, Any]) -> Workload:
        md, spec = o["metadata"], o["spec"]
        desc = f"{kind} {md['name']}"
        tmpl = _pod_template(desc, spec.get("template"), "spec.template")
        n = _count(desc, spec, "replicas", "spec.", 1)
        t = Template("pod", "spec.template", tmpl, _indexed(md["name"])(n), "replicas", rename=_indexed(md["name"]))
        return Workload(kind, _ns(o), md["name"], [t], "" if exact else "their controller adds a random suffix instead")

    return read


# ---- JobSet (kubernetes-sigs/jobset) --------------------------------------------------------------

_JOBSET_CONTROLLER = "jobset.sigs.k8s.io/jobset-controller"
_JOBSET_EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"


def _jobset(o: dict[str, Any]) -> Workload:
    """jobset.x-k8s.io JobSet. pkg/controllers/jobset_controller.go reconcileReplicatedJobs /
    constructJobsFromTemplate: per replicatedJob, `replicas` (default 1) child Jobs named
    placement.GenJobName = JOBSET-RJOB-JOBINDEX, each a batch/v1 Job of the template; the webhook
    (pkg/webhooks/jobset_webhook.go Default) makes them Indexed, so their pods are
    JOB-COMPLETIONINDEX-<random>. A replicatedJob with dependsOn is created once its dependency has
    reached the status named; startupPolicy InOrder creates one replicatedJob's Jobs at a time, the
    next once they are ready."""
    md, spec = o["metadata"], o["spec"]
    name, desc = md["name"], f"JobSet {md['name']}"
    # The controller makes the PodGroups itself from spec.scheduling (scheduling.go
    # reconcilePodGroups, workload_builder.go), named from its own rules; -f reads the PodGroups the
    # file gives and cannot stand for those.
    _refuse_field(desc, spec.get("scheduling") is not None, "spec.scheduling makes the JobSet controller create its own Workload and "
                  "PodGroups, which -f does not model: remove it and put the PodGroup(s) in the file")
    managed = spec.get("managedBy")
    _refuse_field(desc, managed not in (None, "", _JOBSET_CONTROLLER),
                  f"spec.managedBy {managed!r}: the JobSet controller leaves it to that manager and creates no Jobs")
    in_order = ((spec.get("startupPolicy") or {}).get("startupPolicyOrder") == "InOrder")
    templates: list[Template] = []
    for path, rj, rname in _named_entries(desc, spec.get("replicatedJobs"), "spec.replicatedJobs", "name", required=True):
        jt = _map(desc, rj.get("template"), f"{path}.template")
        jspec = _map(desc, jt.get("spec"), f"{path}.template.spec")
        # pod_webhook.go patchPod: exclusive placement adds affinities per Job and holds the
        # followers until the leader is scheduled, which -f does not model.
        for ann in (md.get("annotations") or {}, (jt.get("metadata") or {}).get("annotations") or {}):
            _refuse_field(desc, _JOBSET_EXCLUSIVE in ann, f"exclusive placement ({_JOBSET_EXCLUSIVE}) adds pod affinities "
                          "and holds each Job's pods until its leader is scheduled, which -f does not model")
        tmpl = _pod_template(desc, jspec.get("template"), f"{path}.template.spec.template")
        jobs = _count(desc, rj, "replicas", f"{path}.", 1)
        per_job, how = _job_pods(desc, jspec, f"{path}.template.spec.")
        later = ""
        deps = rj.get("dependsOn")
        if isinstance(deps, list) and deps and isinstance(deps[0], dict):
            later = f"dependsOn {deps[0].get('name')}: created once that replicatedJob is {deps[0].get('status', 'Ready')}"
        elif in_order and templates:
            later = f"startupPolicy InOrder: created once replicatedJob {templates[-1].label.split()[-1]}'s pods are ready"
        prefix = f"{name}-{rname}"
        names = [] if later else [f"{prefix}-{j}-{p}" for j in range(jobs) for p in range(per_job)]
        templates.append(Template(f"replicatedJob {rname}", f"{path}.template.spec.template", tmpl, names,
                                  f"replicas {jobs} x {how} {per_job}", later,
                                  _indexed(f"{prefix}-0") if jobs == 1 else None))
    return Workload("JobSet", _ns(o), name, templates, "Indexed Job pods are JOB-INDEX-<random>: the random part is left out",
                    [s for s in [_suspended(spec, "spec.")] if s])


# ---- LeaderWorkerSet (kubernetes-sigs/lws) --------------------------------------------------------

_LWS_EXCLUSIVE = ("leaderworkerset.sigs.k8s.io/exclusive-topology", "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology")


def _lws(o: dict[str, Any]) -> Workload:
    """leaderworkerset.x-k8s.io LeaderWorkerSet. pkg/controllers/leaderworkerset_controller.go
    constructLeaderStatefulSetApplyConfiguration: a StatefulSet NAME of spec.replicas (default 1)
    leaders NAME-0..R-1 from leaderTemplate (workerTemplate when unset); pod_controller.go
    constructWorkerStatefulSetApplyConfiguration: per leader pod, a StatefulSet named after it with
    size-1 replicas and ordinals from 1, so workers NAME-I-1..NAME-I-(size-1) (size default 1: no
    workers). startupPolicy LeaderReady creates a group's workers once its leader is ready."""
    md, spec = o["metadata"], o["spec"]
    name, desc = md["name"], f"LeaderWorkerSet {md['name']}"
    # schedulerprovider/kubernetes_provider.go: spec.scheduling makes the controller create the
    # Workload and PodGroups itself, named from a hash of the object's UID.
    _refuse_field(desc, spec.get("scheduling") is not None, "spec.scheduling makes the LWS controller create its own Workload and "
                  "PodGroups (named from the object's UID), which -f does not model: remove it and put the PodGroup(s) in the file")
    ann = md.get("annotations") or {}
    for key in _LWS_EXCLUSIVE:
        _refuse_field(desc, key in ann, f"exclusive placement ({key}) holds a group's workers until its leader is scheduled "
                      "and pins them to its topology domain, which -f does not model")
    lwt = _map(desc, spec.get("leaderWorkerTemplate"), "spec.leaderWorkerTemplate")
    groups = _count(desc, spec, "replicas", "spec.", 1)
    size = _count(desc, lwt, "size", "spec.leaderWorkerTemplate.", 1)
    if size < 1:
        raise UserError(f"the -f file: {desc}: spec.leaderWorkerTemplate.size must be at least 1")
    worker = _pod_template(desc, lwt.get("workerTemplate"), "spec.leaderWorkerTemplate.workerTemplate")
    if lwt.get("leaderTemplate") is not None:
        leader = _pod_template(desc, lwt.get("leaderTemplate"), "spec.leaderWorkerTemplate.leaderTemplate")
        leader_label, leader_field = "leaderTemplate", "spec.leaderWorkerTemplate.leaderTemplate"
    else:
        leader, leader_label, leader_field = worker, "leaders (workerTemplate)", "spec.leaderWorkerTemplate.workerTemplate"
    templates = [Template(leader_label, leader_field, leader, _indexed(name)(groups), "replicas",
                          rename=_indexed(name) if size == 1 else None)]
    if size > 1:
        later = "startupPolicy LeaderReady: created once its leader is ready" if spec.get("startupPolicy") == "LeaderReady" else ""
        names = [] if later else [f"{name}-{i}-{j}" for i in range(groups) for j in range(1, size)]
        templates.append(Template("workerTemplate", "spec.leaderWorkerTemplate.workerTemplate", worker, names,
                                  "replicas x (size - 1)", later))
    return Workload("LeaderWorkerSet", _ns(o), name, templates)


# ---- Kubeflow training-operator and mpi-operator --------------------------------------------------

# kind -> (replica specs field, replica types the operator knows, in the order we list them)
_KUBEFLOW = {"PyTorchJob": ("pytorchReplicaSpecs", ("Master", "Worker")),
             "TFJob": ("tfReplicaSpecs", ("Chief", "Master", "PS", "Worker", "Evaluator"))}


def _replica_specs(desc: str, spec: dict[str, Any], key: str, known: tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
    """(replica type, spec) in `known` order. The defaulters (pytorch_defaults.go
    setPytorchTypeNamesToCamelCase, tensorflow_defaults.go) accept a type in any case."""
    specs = _map(desc, spec.get(key), f"spec.{key}")
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for rtype, rspec in specs.items():
        canon = next((k for k in known if k.lower() == str(rtype).lower()), None)
        if canon is None:
            raise UserError(f"the -f file: {desc}: spec.{key}.{rtype} is not a replica type its operator knows "
                            f"({', '.join(known)})")
        out[canon] = (str(rtype), _map(desc, rspec, f"spec.{key}.{rtype}"))
    return [(k, out[k][1]) for k in known if k in out] if out else []


def _kubeflow(kind: str) -> Callable[[dict[str, Any]], Workload]:
    """kubeflow.org/v1 PyTorchJob / TFJob (kubeflow/training-operator). SetDefaults_PyTorchJob /
    SetDefaults_TFJob default each replica type's replicas to 1; pkg/controller.v1/common/pod.go
    ReconcilePods creates `replicas` pods per type, named by core.GenGeneralName
    JOB-<type lowercased>-INDEX exactly."""
    key, known = _KUBEFLOW[kind]

    def read(o: dict[str, Any]) -> Workload:
        md, spec = o["metadata"], o["spec"]
        name, desc = md["name"], f"{kind} {md['name']}"
        specs = _replica_specs(desc, spec, key, known)
        if not specs:
            raise UserError(f"the -f file: {desc}: spec.{key} names no replica type ({', '.join(known)})")
        templates = []
        for rtype, rspec in specs:
            prefix = f"{name}-{rtype.lower()}"
            n = _count(desc, rspec, "replicas", f"spec.{key}.{rtype}.", 1)
            tmpl = _pod_template(desc, rspec.get("template"), f"spec.{key}.{rtype}.template")
            templates.append(Template(rtype, f"spec.{key}.{rtype}.template", tmpl, _indexed(prefix)(n), "replicas",
                                      rename=_indexed(prefix)))
        run = spec.get("runPolicy") if isinstance(spec.get("runPolicy"), dict) else {}
        return Workload(kind, _ns(o), name, templates, notes=[s for s in [_suspended(run, "spec.runPolicy.")] if s])

    return read


def _mpijob(o: dict[str, Any]) -> Workload:
    """kubeflow.org/v2beta1 MPIJob (kubeflow/mpi-operator). default.go: Launcher replicas default 1,
    Worker replicas default 0. pkg/controller/mpi_job_controller.go: workers are Pods workerName =
    JOB-worker-INDEX; the launcher is a batch/v1 Job JOB-launcher (one pod, generateName
    JOB-launcher-), created with the workers unless launcherCreationPolicy WaitForWorkersReady
    holds it until every worker is ready."""
    md, spec = o["metadata"], o["spec"]
    name, desc = md["name"], f"MPIJob {md['name']}"
    version = str(o.get("apiVersion", "")).partition("/")[2]
    if version != "v2beta1":
        raise UserError(f"the -f file: {desc}: kubeflow.org/{version} MPIJob is not read (its controller differs); "
                        "-f reads kubeflow.org/v2beta1 MPIJob (mpi-operator)")
    specs = dict(_replica_specs(desc, spec, "mpiReplicaSpecs", ("Launcher", "Worker")))
    if "Launcher" not in specs:
        raise UserError(f"the -f file: {desc}: spec.mpiReplicaSpecs.Launcher is required")
    templates = []
    launcher = specs["Launcher"]
    if _count(desc, launcher, "replicas", "spec.mpiReplicaSpecs.Launcher.", 1) != 1:
        raise UserError(f"the -f file: {desc}: spec.mpiReplicaSpecs.Launcher.replicas must be 1 (the API refuses others)")
    ltmpl = _pod_template(desc, launcher.get("template"), "spec.mpiReplicaSpecs.Launcher.template")
    later = "launcherCreationPolicy WaitForWorkersReady: created once every worker is ready" \
        if spec.get("launcherCreationPolicy") == "WaitForWorkersReady" else ""
    templates.append(Template("Launcher", "spec.mpiReplicaSpecs.Launcher.template", ltmpl, [] if later else [f"{name}-launcher-0"],
                              "one launcher Job pod", later))
    if "Worker" in specs:
        w = specs["Worker"]
        n = _count(desc, w, "replicas", "spec.mpiReplicaSpecs.Worker.", 0)
        wtmpl = _pod_template(desc, w.get("template"), "spec.mpiReplicaSpecs.Worker.template")
        templates.append(Template("Worker", "spec.mpiReplicaSpecs.Worker.template", wtmpl, _indexed(f"{name}-worker")(n),
                                  "replicas"))
    run = spec.get("runPolicy") if isinstance(spec.get("runPolicy"), dict) else {}
    return Workload("MPIJob", _ns(o), name, templates, "the launcher Job's pod gets a random suffix instead of -0",
                    [s for s in [_suspended(run, "spec.runPolicy.")] if s])


# ---- KubeRay (ray-project/kuberay) ------------------------------------------------------------------

def _autoscaler_container(spec: dict[str, Any]) -> dict[str, Any]:
    """The autoscaler sidecar the operator adds to the head pod with enableInTreeAutoscaling
    (ray-operator/controllers/ray/common/pod.go BuildAutoscalerContainer; AutoscalerOptions:
    "Default values: 500m CPU request and limit. 512Mi memory request and limit")."""
    res = ((spec.get("autoscalerOptions") or {}).get("resources")) if isinstance(spec.get("autoscalerOptions"), dict) else None
    default = {"cpu": "500m", "memory": "512Mi"}
    resources = copy.deepcopy(res) if isinstance(res, dict) else {"requests": dict(default), "limits": dict(default)}
    return {"name": "autoscaler", "image": "autoscaler", "resources": resources}


def _worker_replicas(desc: str, g: dict[str, Any], path: str) -> tuple[int, str]:
    """ray-operator/controllers/ray/utils/util.go GetWorkerGroupDesiredReplicas: a suspended group
    has none; else replicas clamped to [minReplicas, maxReplicas] (maxReplicas when min > max;
    minReplicas when replicas is unset), times numOfHosts. CRD defaults: replicas 0, minReplicas 0,
    maxReplicas 2147483647, numOfHosts 1."""
    if g.get("suspend") is True:
        return 0, "suspend"
    lo = _count(desc, g, "minReplicas", path, 0)
    hi = _count(desc, g, "maxReplicas", path, MAX_INT32)
    hosts = _count(desc, g, "numOfHosts", path, 1)
    r = g.get("replicas")
    want = _count(desc, g, "replicas", path, 0) if r is not None else None
    if lo > hi:
        n, how = hi, "maxReplicas (minReplicas > maxReplicas)"
    elif want is None or want < lo:
        n, how = lo, "minReplicas"
    elif want > hi:
        n, how = hi, "maxReplicas"
    else:
        n, how = want, "replicas"
    return n * hosts, (f"{how} {n} x numOfHosts {hosts}" if hosts != 1 else how)


def _ray_templates(desc: str, cluster: str, spec: dict[str, Any], path: str) -> list[Template]:
    """A RayCluster's pods (raycluster_controller.go reconcilePods): one head pod, generateName
    utils.PodName(CLUSTER, head) = CLUSTER-head-; per worker group the desired replicas, generateName
    PodName(CLUSTER-GROUP, worker) = CLUSTER-GROUP-worker- (lowercased), a random suffix after each.
    UPSTREAM-DIFF: PodName also cuts a prefix longer than 50 characters; our names keep it whole."""
    head = _map(desc, spec.get("headGroupSpec"), f"{path}headGroupSpec")
    htmpl = copy.deepcopy(_pod_template(desc, head.get("template"), f"{path}headGroupSpec.template"))
    if spec.get("enableInTreeAutoscaling") is True:
        htmpl["spec"]["containers"] = list(htmpl["spec"].get("containers") or []) + [_autoscaler_container(spec)]
    templates = [Template("head", f"{path}headGroupSpec.template", htmpl, [f"{cluster}-head-0".lower()], "one head pod")]
    for gpath, g, gname in _named_entries(desc, spec.get("workerGroupSpecs"), f"{path}workerGroupSpecs", "groupName",
                                          required=False):
        n, how = _worker_replicas(desc, g, f"{gpath}.")
        tmpl = _pod_template(desc, g.get("template"), f"{gpath}.template")
        prefix = f"{cluster}-{gname}-worker".lower()
        templates.append(Template(f"workerGroup {gname}", f"{gpath}.template", tmpl, _indexed(prefix)(n), how))
    return templates


def _raycluster(o: dict[str, Any]) -> Workload:
    md, spec = o["metadata"], o["spec"]
    desc = f"RayCluster {md['name']}"
    return Workload("RayCluster", _ns(o), md["name"], _ray_templates(desc, md["name"], spec, "spec."),
                    "its controller adds a random suffix instead of the index",
                    [s for s in [_suspended(spec, "spec.")] if s])


def _rayjob(o: dict[str, Any]) -> Workload:
    """ray.io/v1 RayJob (ray-operator/controllers/ray/rayjob_controller.go): it creates a RayCluster
    from spec.rayClusterSpec, named utils.GenerateRayClusterName = RAYJOB-<random>, and once that is
    ready the submitter (a Job in K8sJobMode); with spec.clusterSelector it uses an existing
    cluster and creates none."""
    md, spec = o["metadata"], o["spec"]
    name, desc = md["name"], f"RayJob {md['name']}"
    _refuse_field(desc, spec.get("clusterSelector"), "spec.clusterSelector runs it on an existing RayCluster: it creates "
                  "no pods kube-scheduler must place but its submitter")
    # SidecarMode adds the submitter as a container of the head pod (rayjob_controller.go
    # getSubmitterContainer); -f does not model that container.
    _refuse_field(desc, spec.get("submissionMode") == "SidecarMode", "submissionMode SidecarMode adds the submitter as a "
                  "container of the head pod, which -f does not model")
    cspec = _map(desc, spec.get("rayClusterSpec"), "spec.rayClusterSpec")
    notes = [s for s in [_suspended(spec, "spec.")] if s]
    notes.append("its submitter Job is created once the cluster is ready and is not part of this question")
    return Workload("RayJob", _ns(o), name, _ray_templates(desc, name, cspec, "spec.rayClusterSpec."),
                    f"its RayCluster is {name}-<random> and its pods get a random suffix: both left out", notes)


# ---- recognising a workload -----------------------------------------------------------------------

READERS: dict[tuple[str, str], Callable[[dict[str, Any]], Workload]] = {
    ("batch", "Job"): _job,
    ("apps", "Deployment"): _replicas_controller("Deployment", exact=False),
    ("apps", "ReplicaSet"): _replicas_controller("ReplicaSet", exact=False),
    ("apps", "StatefulSet"): _replicas_controller("StatefulSet", exact=True),
    ("jobset.x-k8s.io", "JobSet"): _jobset,
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): _lws,
    ("kubeflow.org", "PyTorchJob"): _kubeflow("PyTorchJob"),
    ("kubeflow.org", "TFJob"): _kubeflow("TFJob"),
    ("kubeflow.org", "MPIJob"): _mpijob,
    ("ray.io", "RayCluster"): _raycluster,
    ("ray.io", "RayJob"): _rayjob,
}
KINDS = frozenset(k for _, k in READERS)
# The apiVersion each kind is written with (the versions the readers were checked against); any
# version of the group is read but MPIJob's, whose v1 is another controller's.
API = {"Job": "batch/v1", "Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1",
       "JobSet": "jobset.x-k8s.io/v1alpha2", "LeaderWorkerSet": "leaderworkerset.x-k8s.io/v1", "PyTorchJob": "kubeflow.org/v1",
       "TFJob": "kubeflow.org/v1", "MPIJob": "kubeflow.org/v2beta1", "RayCluster": "ray.io/v1", "RayJob": "ray.io/v1"}
READ = ", ".join(f"{k} ({API[k]})" for _, k in READERS)  # for refusals: the kinds -f reads


def is_workload(o: dict[str, Any]) -> bool:
    kind = o.get("kind")
    return isinstance(kind, str) and kind in KINDS


def read_workload(o: dict[str, Any]) -> Workload:
    """The workload `o` (its kind in KINDS) read as its controller creates pods. The API group
    decides (a kind alone is not enough: kubeflow.org/v1 MPIJob is another controller's)."""
    kind, name = o["kind"], o["metadata"]["name"]
    api = o.get("apiVersion")
    if not isinstance(api, str) or not api:
        raise UserError(f"the -f file: {kind} {name} has no apiVersion (-f reads {kind} as {API[kind]})")
    reader = READERS.get((api.rpartition("/")[0], kind))
    if reader is None:
        raise UserError(f"the -f file: {kind} {name} is {api}; -f reads {kind} as {API[kind]} (all it reads: {READ})")
    return reader(o)


def _ns(o: dict[str, Any]) -> str:
    return (o.get("metadata") or {}).get("namespace") or "default"


def with_replicas(w: Workload, replicas: int) -> Workload:
    """`--replicas N` on a workload: the count of its one pod template. A workload of several
    templates (or a count that is a product, like a JobSet's jobs x pods) is refused: the flag
    would not say which count it changes."""
    if len(w.templates) != 1:
        labels = ", ".join(t.label for t in w.templates)
        raise UserError(f"--replicas: {w.kind} {w.name} has {len(w.templates)} pod templates ({labels}): which count would it "
                        "change? Edit the counts in the file")
    t = w.templates[0]
    if t.rename is None:
        raise UserError(f"--replicas: {w.kind} {w.name}'s {t.label} count is {t.how}: which would it change? Edit the file")
    t.names, t.how, t.later = t.rename(replicas), "--replicas", ""
    return w


def make_pods(w: Workload) -> list[dict[str, Any]]:
    """The pods as the API server would hold them on creation: the template's labels and spec,
    pending, unbound, newer than anything running."""
    # UPSTREAM-DIFF: controllers add their own labels (job-name, jobset.sigs.k8s.io/*, ray.io/*,
    # ...) and annotations; only the template's labels are kept (workload_groups.py refuses a
    # template whose affinity or spread constraints select on such a label).
    out = []
    for t in w.templates:
        tmd = t.template.get("metadata") if isinstance(t.template.get("metadata"), dict) else {}
        for n in t.names:
            spec = copy.deepcopy(t.template["spec"])
            spec.pop("nodeName", None)
            md: dict[str, Any] = {"namespace": w.namespace, "name": n, "uid": f"hypothetical-{w.namespace}-{n}",
                                  "creationTimestamp": CREATED}
            if isinstance(tmd.get("labels"), dict):
                md["labels"] = dict(tmd["labels"])
            out.append({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": {"phase": "Pending"}})
    return out
