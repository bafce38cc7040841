#!/usr/bin/env python3
"""Generate the bundled demo cluster, kubectl_wap/data/demo-snapshot.json.

Deterministic: the only randomness (Deployment pod-name hashes) comes from a fixed seed, and all
timestamps are fixed offsets from the capture time. Run it again and the file is byte-identical.

    python tools/make_demo.py            # (re)write the bundled snapshot
    python tools/make_demo.py --check    # exit 1 if the bundled file is out of date
    python tools/make_demo.py -o FILE    # write elsewhere

The cluster is described, with the expected what-if answers and the reasoning behind them, in
docs/demo.md. The layout of the GPU pool is chosen so that the answer for `ml/job-1` can be worked
out by hand: every pod placed on a GPU node requests at least one GPU and at most 12 cpu and 96Gi
per GPU (the node's per-GPU share), so the GPU count is the only resource that can fail a Filter
there; and every pod that stays on a GPU node after the potential victims are removed has exactly
8Gi of memory per cpu, so cpu and memory fractions are equal and BalancedAllocation scores 100
everywhere. The asserts in `check_layout` keep those properties true when the data is edited.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

SEED = 20261130
CAPTURED_AT = datetime(2026, 11, 30, 12, 0, 0, tzinfo=timezone.utc)
REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "kubectl_wap" / "data" / "demo-snapshot.json"

GPU = "nvidia.com/gpu"
GI = 2**30

# --- priority classes -------------------------------------------------------------------------

PRIORITY_CLASSES = [
    # name, value, globalDefault, preemptionPolicy, description
    ("low-priority", 100, False, "PreemptLowerPriority", "Best-effort experiments; first to be preempted."),
    ("batch-default", 1000, True, "PreemptLowerPriority", "Default for pods without a priorityClassName."),
    ("inference-critical", 100000, False, "PreemptLowerPriority", "Online inference serving."),
    ("high-priority", 1000000, False, "PreemptLowerPriority", "Production training and evaluation."),
    ("training-never", 1000000, False, "Never", "High priority training that must not preempt running work."),
]
PRIO = {name: value for name, value, *_ in PRIORITY_CLASSES}
POLICY = {name: policy for name, _v, _g, policy, _d in PRIORITY_CLASSES}

NAMESPACES = {
    "ml": {"team": "ml-platform", "cost-center": "cc-4100"},
    "inference": {"team": "serving", "cost-center": "cc-4200", "tier": "production"},
    "batch": {"team": "data-eng", "cost-center": "cc-4300"},
    "research": {"team": "research", "cost-center": "cc-4400"},
}

# --- helpers ------------------------------------------------------------------------------------

_rng = random.Random(SEED)
_HASH_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet of k8s rand.SafeEncodeString


def rand_suffix(n: int) -> str:
    return "".join(_rng.choice(_HASH_CHARS) for _ in range(n))


def ts(minutes_ago: float) -> str:
    return (CAPTURED_AT - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def uid(kind: str, namespace: str, name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"https://kubectl-wap.demo/{kind}/{namespace}/{name}"))


def cpu_str(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def mem_str(nbytes: int) -> str:
    if nbytes % GI == 0:
        return f"{nbytes // GI}Gi"
    assert nbytes % 2**20 == 0
    return f"{nbytes // 2**20}Mi"


def resources(cpu_m: int, mem_b: int, gpu: int = 0) -> dict:
    r = {"cpu": cpu_str(cpu_m), "memory": mem_str(mem_b)}
    if gpu:
        r[GPU] = str(gpu)
    return {"requests": dict(r), "limits": dict(r)}


DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]
GPU_TOLERATION = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}
BATCH_TOLERATION = {"key": "pool", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}

# --- nodes ------------------------------------------------------------------------------------

# name, zone, pool, instance type, tainted pool, cordoned
GPU_NODES = ["gpu-a1", "gpu-a2", "gpu-a3", "gpu-a4", "gpu-b1", "gpu-b2", "gpu-b3", "gpu-b4"]
CPU_GENERAL = ["cpu-a1", "cpu-a2", "cpu-b1", "cpu-b2"]  # cpu-b2 is cordoned
CPU_BATCH = ["cpu-a3", "cpu-a4", "cpu-b3", "cpu-b4"]  # tainted pool=batch:NoSchedule
CORDONED = {"cpu-b2"}

ALLOCATABLE = {
    "gpu": {"cpu": 96000, "memory": 768 * GI, GPU: 8, "pods": 110},
    "cpu": {"cpu": 32000, "memory": 128 * GI, "pods": 110},
}


def make_node(name: str, index: int) -> dict:
    zone = "us-east-1a" if name.split("-")[1].startswith("a") else "us-east-1b"
    is_gpu = name.startswith("gpu-")
    pool = "gpu" if is_gpu else ("batch" if name in CPU_BATCH else "general")
    alloc = ALLOCATABLE["gpu" if is_gpu else "cpu"]
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "p3dn.24xlarge" if is_gpu else "m6i.8xlarge",
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": zone,
        "pool": pool,
    }
    if is_gpu:
        labels["nvidia.com/gpu.product"] = "Tesla-V100-SXM2-32GB"
        labels["nvidia.com/gpu.count"] = "8"
    taints = []
    if is_gpu:
        taints.append({"key": GPU, "value": "present", "effect": "NoSchedule"})
    if pool == "batch":
        taints.append({"key": "pool", "value": "batch", "effect": "NoSchedule"})
    spec: dict = {"providerID": f"aws:///{zone}/i-0{uid('Node', '', name).replace('-', '')[:16]}"}
    if name in CORDONED:
        spec["unschedulable"] = True
        taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": ts(95)})
    if taints:
        spec["taints"] = taints
    capacity = dict(alloc)
    capacity["memory"] = alloc["memory"] + (22 * GI if is_gpu else 2 * GI)  # kube/system reserved
    fmt = lambda r: {  # noqa: E731
        k: (cpu_str(v) if k == "cpu" else mem_str(v) if k == "memory" else str(v)) for k, v in r.items()
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": uid("Node", "", name),
            "creationTimestamp": ts(60 * 24 * 40 + index * 7),
            "labels": labels,
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": spec,
        "status": {
            "capacity": fmt(capacity),
            "allocatable": fmt(alloc),
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
                 "lastHeartbeatTime": ts(0.5), "lastTransitionTime": ts(60 * 24 * 40)},
            ],
            "addresses": [
                {"type": "InternalIP", "address": f"10.0.{1 if zone.endswith('a') else 2}.{10 + index}"},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://2.1.4",
                "kernelVersion": "6.12.40-amzn2023.x86_64",
                "kubeletVersion": "v1.37.1",
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023",
            },
        },
    }


# --- workloads ------------------------------------------------------------------------------------

ITEMS_PODS: list[dict] = []
ITEMS_GROUPS: list[dict] = []
ITEMS_PDBS: list[dict] = []


def add_pod(
    namespace: str,
    name: str,
    *,
    node: str | None,
    pclass: str,
    cpu: int,
    mem: int,
    gpu: int = 0,
    image: str,
    container: str = "main",
    labels: dict | None = None,
    owner: tuple[str, str, str] | None = None,  # (apiVersion, kind, name)
    group: str | None = None,
    started: float | None = None,  # minutes before capture; None for pending pods
    init: tuple[str, str, int, int] | None = None,  # (name, image, cpu, mem)
    node_selector: dict | None = None,
    tolerations: list | None = None,
    created_offset_s: int = 0,  # pending pods: seconds after the common creation time
) -> dict:
    assert (node is None) == (started is None)
    meta: dict = {"name": name, "namespace": namespace, "uid": uid("Pod", namespace, name)}
    created = (started + 0.5) if started is not None else 3.0 - created_offset_s / 60
    meta["creationTimestamp"] = ts(created)
    if labels:
        meta["labels"] = dict(labels)
    if owner:
        api, kind, oname = owner
        meta["ownerReferences"] = [{
            "apiVersion": api, "kind": kind, "name": oname, "uid": uid(kind, namespace, oname),
            "controller": True, "blockOwnerDeletion": True,
        }]
    spec: dict = {}
    if init:
        iname, iimage, icpu, imem = init
        spec["initContainers"] = [{"name": iname, "image": iimage, "resources": resources(icpu, imem)}]
    spec["containers"] = [{"name": container, "image": image, "resources": resources(cpu, mem, gpu)}]
    spec["restartPolicy"] = "Always" if owner and owner[1] in ("ReplicaSet", "StatefulSet") else "Never"
    spec["schedulerName"] = "default-scheduler"
    spec["serviceAccountName"] = "default"
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    spec["tolerations"] = list(tolerations or []) + DEFAULT_TOLERATIONS
    spec["priorityClassName"] = pclass
    spec["priority"] = PRIO[pclass]
    spec["preemptionPolicy"] = POLICY[pclass]  # admission copies the class's policy into the pod
    spec["enableServiceLinks"] = True
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if node:
        spec["nodeName"] = node
    qos = "Guaranteed"
    if node:
        conds = [
            {"type": t, "status": "True", "lastTransitionTime": ts(started - (0.2 if t != "PodScheduled" else 0))}
            for t in ("Ready", "PodScheduled")
        ]
        status = {"phase": "Running", "conditions": conds, "startTime": ts(started), "qosClass": qos}
    else:
        status = {"phase": "Pending", "qosClass": qos}
        if name.startswith(("job-1-", "giant-", "finetune-nightly-", "urgent-report")):
            status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                     "lastTransitionTime": ts(2.5)}]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}
    ITEMS_PODS.append(pod)
    return pod


def add_podgroup(
    namespace: str,
    name: str,
    *,
    pclass: str,
    mode: str,  # "single" | "all"
    gang: int | None,  # None = basic
    created: float,
    scheduled: bool,
    parent: str | None = None,
    workload: tuple[str, str] | None = None,
) -> None:
    spec: dict = {}
    if parent:
        spec["parentCompositePodGroupName"] = parent
    wl = workload or (name, "workers")
    spec["workloadRef"] = {"workloadName": wl[0], "templateName": wl[1]}
    spec["schedulingPolicy"] = {"gang": {"minCount": gang}} if gang else {"basic": {}}
    spec["disruptionMode"] = {mode: {}}
    spec["priorityClassName"] = pclass
    spec["priority"] = PRIO[pclass]
    ITEMS_GROUPS.append({
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace, "uid": uid("PodGroup", namespace, name),
                     "creationTimestamp": ts(created), "generation": 1},
        "spec": spec,
        "status": {"conditions": [_group_condition("PodGroupInitiallyScheduled", scheduled, created)]},
    })


def _group_condition(ctype: str, scheduled: bool, created: float) -> dict:
    if scheduled:
        return {"type": ctype, "status": "True", "reason": "Scheduled", "message": "",
                "lastTransitionTime": ts(created - 1), "observedGeneration": 1}
    return {"type": ctype, "status": "False", "reason": "Unschedulable",
            "message": "pod group is unschedulable", "lastTransitionTime": ts(2.5), "observedGeneration": 1}


def add_pdb(namespace: str, name: str, selector: dict, *, min_available: int | None = None,
            max_unavailable: int | None = None, expected: int, allowed: int) -> None:
    spec: dict = {"selector": {"matchLabels": selector}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    desired = min_available if min_available is not None else expected - (max_unavailable or 0)
    ITEMS_PDBS.append({
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace, "uid": uid("PodDisruptionBudget", namespace, name),
                     "creationTimestamp": ts(60 * 24 * 30), "generation": 1},
        "spec": spec,
        "status": {"currentHealthy": expected, "desiredHealthy": desired, "expectedPods": expected,
                   "disruptionsAllowed": allowed, "observedGeneration": 1,
                   "conditions": [{"type": "DisruptionAllowed", "status": "True" if allowed > 0 else "False",
                                   "reason": "SufficientPods" if allowed > 0 else "InsufficientPods",
                                   "message": "", "lastTransitionTime": ts(60), "observedGeneration": 1}]},
    })


class Deployment:
    """Pods of one Deployment's current ReplicaSet: name <deploy>-<hash>-<suffix>."""

    def __init__(self, namespace: str, name: str, labels: dict):
        self.namespace, self.name = namespace, name
        self.hash = rand_suffix(10)
        self.rs = f"{name}-{self.hash}"
        self.labels = dict(labels, **{"pod-template-hash": self.hash})

    def pod(self, **kw) -> dict:
        return add_pod(self.namespace, f"{self.rs}-{rand_suffix(5)}", labels=self.labels,
                       owner=("apps/v1", "ReplicaSet", self.rs), **kw)


# ----------------------------------------------------------------------------------------------
# GPU pool. Capacity per node: 8 GPUs, 96 cpu, 768Gi. "N" below = GPUs used.
#
#   gpu-a1  ml/train-llama 0-7 (high, All)                               8  -- equal priority to job-1
#   gpu-b1  ml/train-llama 8-15                                          8  -- equal priority to job-1
#   gpu-a2  ml/train-mistral x4 (high, Single)  4 + research/protein-fold 0,1 (low, All) 2
#           + batch/transcode-0 (batch-default) 2                        8
#   gpu-a3  llm-chat (PDB 0) 1, ray-tune head+worker-0 (CPG, batch-default) 2, hpo-trials-0 1,
#           batch/render-0 2, research/ablation-0 (low) 2                8
#   gpu-a4  llm-chat 1, research/notebook-alice-0 (low, PDB 0) 1, hpo-trials-1..4 4, render-1 2   8
#   gpu-b2  llm-chat 1, ray-tune worker-1 1, hpo-trials-5 1, render-2 2, ablation-1 2             7
#   gpu-b3  llm-chat 1, hpo-trials-6 1, render-3 2, transcode-1 1, protein-fold 2,3 2, ablation-2 1  8
#   gpu-b4  ray-tune worker-2 1, hpo-trials-7 1, render-4 2, ablation-3 1                         5
# Free now: 1 (b2) + 3 (b4) = 4 GPUs.
# ----------------------------------------------------------------------------------------------

GPU_SEL = {"pool": "gpu"}
GPU_TOL = [GPU_TOLERATION]


def build_gpu_pool() -> None:
    # ml/train-llama: 16-pod gang at high-priority, All mode, fills gpu-a1 and gpu-b1.
    add_podgroup("ml", "train-llama", pclass="high-priority", mode="all", gang=16, created=60 * 31, scheduled=True)
    for i in range(16):
        add_pod("ml", f"train-llama-{i}", node="gpu-a1" if i < 8 else "gpu-b1", pclass="high-priority",
                cpu=10000, mem=80 * GI, gpu=1, image="registry.example.com/ml/llama-train:4.2.0", container="trainer",
                labels={"app": "train-llama", "job-name": "train-llama", "batch.kubernetes.io/job-completion-index": str(i)},
                owner=("batch/v1", "Job", "train-llama"), group="train-llama", started=60 * 30 - i * 0.1,
                init=("stage-checkpoint", "registry.example.com/tools/s5cmd:2.2", 2000, 8 * GI),
                node_selector=GPU_SEL, tolerations=GPU_TOL)

    # ml/train-mistral: 4-pod gang at high-priority, Single mode, half of gpu-a2.
    add_podgroup("ml", "train-mistral", pclass="high-priority", mode="single", gang=4, created=60 * 9, scheduled=True)
    for i in range(4):
        add_pod("ml", f"train-mistral-{i}", node="gpu-a2", pclass="high-priority", cpu=10000, mem=80 * GI, gpu=1,
                image="registry.example.com/ml/mistral-train:1.7.3", container="trainer",
                labels={"app": "train-mistral", "job-name": "train-mistral"},
                owner=("batch/v1", "Job", "train-mistral"), group="train-mistral", started=60 * 8 + 40 - i * 0.1,
                node_selector=GPU_SEL, tolerations=GPU_TOL)

    # inference/llm-chat: Deployment at inference-critical, PDB with 0 disruptions allowed.
    llm = Deployment("inference", "llm-chat", {"app": "llm-chat", "tier": "online"})
    for i, node in enumerate(["gpu-a3", "gpu-a4", "gpu-b2", "gpu-b3"]):
        llm.pod(node=node, pclass="inference-critical", cpu=8000, mem=64 * GI, gpu=1,
                image="registry.example.com/serving/vllm:0.11.2", container="vllm",
                started=60 * 24 * 6 + 30 - i * 2,
                init=("fetch-weights", "registry.example.com/tools/s5cmd:2.2", 2000, 8 * GI),
                node_selector=GPU_SEL, tolerations=GPU_TOL)
    add_pdb("inference", "llm-chat", {"app": "llm-chat"}, min_available=4, expected=4, allowed=0)

    # research/ray-tune: CompositePodGroup (All) with two child PodGroups (All), batch-default.
    ITEMS_GROUPS.append({
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": {"name": "ray-tune", "namespace": "research", "uid": uid("CompositePodGroup", "research", "ray-tune"),
                     "creationTimestamp": ts(60 * 20), "generation": 1},
        "spec": {
            "workloadRef": {"workloadName": "ray-tune", "templateName": "cluster"},
            "schedulingPolicy": {"gang": {"minGroupCount": 2}},
            "disruptionMode": {"all": {}},
            "priorityClassName": "batch-default",
            "priority": PRIO["batch-default"],
        },
        "status": {"conditions": [_group_condition("CompositePodGroupInitiallyScheduled", True, 60 * 20)]},
    })
    add_podgroup("research", "ray-tune-head", pclass="batch-default", mode="all", gang=1, created=60 * 20,
                 scheduled=True, parent="ray-tune", workload=("ray-tune", "head"))
    add_podgroup("research", "ray-tune-workers", pclass="batch-default", mode="all", gang=3, created=60 * 20,
                 scheduled=True, parent="ray-tune", workload=("ray-tune", "workers"))
    ray_img = "registry.example.com/research/ray-ml:2.52.0-gpu"
    add_pod("research", "ray-tune-head-0", node="gpu-a3", pclass="batch-default", cpu=8000, mem=64 * GI, gpu=1,
            image=ray_img, container="ray-head", labels={"app": "ray-tune", "ray.io/node-type": "head"},
            group="ray-tune-head", started=60 * 19 + 50, node_selector=GPU_SEL, tolerations=GPU_TOL)
    for i, node in enumerate(["gpu-a3", "gpu-b2", "gpu-b4"]):
        add_pod("research", f"ray-tune-worker-{i}", node=node, pclass="batch-default", cpu=8000, mem=64 * GI, gpu=1,
                image=ray_img, container="ray-worker", labels={"app": "ray-tune", "ray.io/node-type": "worker"},
                group="ray-tune-workers", started=60 * 19 + 49 - i * 0.1, node_selector=GPU_SEL, tolerations=GPU_TOL)

    # ml/hpo-trials: basic PodGroup, Single mode (members are preempted one by one), batch-default.
    add_podgroup("ml", "hpo-trials", pclass="batch-default", mode="single", gang=None, created=60 * 5, scheduled=True)
    hpo_nodes = ["gpu-a3", "gpu-a4", "gpu-a4", "gpu-a4", "gpu-a4", "gpu-b2", "gpu-b3", "gpu-b4"]
    for i, node in enumerate(hpo_nodes):
        add_pod("ml", f"hpo-trials-{i}", node=node, pclass="batch-default", cpu=6000, mem=48 * GI, gpu=1,
                image="registry.example.com/ml/hpo-trial:0.9.1", container="trial",
                labels={"app": "hpo-trials", "trial": str(i)}, group="hpo-trials",
                started=60 * 4 + 50 - i * 3,  # trial 0 is the oldest, trial 7 the newest
                node_selector=GPU_SEL, tolerations=GPU_TOL)

    # batch/render-*: standalone GPU pods, batch-default, 2 GPUs each.
    for i, node in enumerate(["gpu-a3", "gpu-a4", "gpu-b2", "gpu-b3", "gpu-b4"]):
        add_pod("batch", f"render-{i}", node=node, pclass="batch-default", cpu=16000, mem=96 * GI, gpu=2,
                image="registry.example.com/batch/blender-cycles:4.5", container="render",
                labels={"app": "render", "shot": f"sq010-sh{i:03d}"}, started=60 * 3 - i * 4,
                node_selector=GPU_SEL, tolerations=GPU_TOL)
    # batch/transcode-*: standalone GPU pods, batch-default.
    add_pod("batch", "transcode-0", node="gpu-a2", pclass="batch-default", cpu=12000, mem=64 * GI, gpu=2,
            image="registry.example.com/batch/ffmpeg-nvenc:7.1", container="ffmpeg", labels={"app": "transcode"},
            started=95, node_selector=GPU_SEL, tolerations=GPU_TOL)
    add_pod("batch", "transcode-1", node="gpu-b3", pclass="batch-default", cpu=6000, mem=32 * GI, gpu=1,
            image="registry.example.com/batch/ffmpeg-nvenc:7.1", container="ffmpeg", labels={"app": "transcode"},
            started=88, node_selector=GPU_SEL, tolerations=GPU_TOL)

    # research/protein-fold: 4-pod gang, All mode, low-priority; spans gpu-a2 and gpu-b3.
    add_podgroup("research", "protein-fold", pclass="low-priority", mode="all", gang=4, created=60 * 7, scheduled=True)
    for i, node in enumerate(["gpu-a2", "gpu-a2", "gpu-b3", "gpu-b3"]):
        add_pod("research", f"protein-fold-{i}", node=node, pclass="low-priority", cpu=10000, mem=80 * GI, gpu=1,
                image="registry.example.com/research/openfold:2.1", container="fold",
                labels={"app": "protein-fold", "job-name": "protein-fold"}, owner=("batch/v1", "Job", "protein-fold"),
                group="protein-fold", started=60 * 6 + 50 - i * 0.1, node_selector=GPU_SEL, tolerations=GPU_TOL)

    # research/ablation-*: standalone low-priority experiments.
    for i, (node, g) in enumerate([("gpu-a3", 2), ("gpu-b2", 2), ("gpu-b3", 1), ("gpu-b4", 1)]):
        add_pod("research", f"ablation-{i}", node=node, pclass="low-priority", cpu=8000 * g, mem=64 * GI * g, gpu=g,
                image="registry.example.com/research/ablation:2026.11", container="run",
                labels={"app": "ablation", "owner": "bob"}, started=100 - i * 5,
                node_selector=GPU_SEL, tolerations=GPU_TOL)

    # research/notebook-alice-0: a low-priority GPU notebook protected by a PDB with 0 allowed.
    add_pod("research", "notebook-alice-0", node="gpu-a4", pclass="low-priority", cpu=4000, mem=32 * GI, gpu=1,
            image="registry.example.com/research/jupyter-pytorch:2026.10", container="notebook",
            labels={"app": "notebook", "user": "alice", "statefulset.kubernetes.io/pod-name": "notebook-alice-0"},
            owner=("apps/v1", "StatefulSet", "notebook-alice"), started=60 * 26,
            node_selector=GPU_SEL, tolerations=GPU_TOL)
    add_pdb("research", "notebook-alice", {"app": "notebook", "user": "alice"}, min_available=1, expected=1, allowed=0)


# ----------------------------------------------------------------------------------------------
# CPU pool: 32 cpu / 128Gi per node. General nodes cpu-a1, cpu-a2, cpu-b1 (cpu-b2 cordoned);
# batch nodes cpu-a3, cpu-a4, cpu-b3, cpu-b4 tainted pool=batch:NoSchedule.
# Free cpu on the schedulable general nodes: a1 3, a2 6, b1 4 (urgent-report needs 8).
# ----------------------------------------------------------------------------------------------


def build_cpu_pool() -> None:
    embedder = Deployment("inference", "embedder", {"app": "embedder", "tier": "online"})
    gateway = Deployment("inference", "api-gateway", {"app": "api-gateway", "tier": "online"})
    for i, node in enumerate(["cpu-a1", "cpu-a2", "cpu-b1"]):
        embedder.pod(node=node, pclass="inference-critical", cpu=4000, mem=16 * GI,
                     image="registry.example.com/serving/text-embedder:3.4.0", container="embedder",
                     started=60 * 24 * 3 + 12 - i)
        gateway.pod(node=node, pclass="inference-critical", cpu=2000, mem=4 * GI,
                    image="registry.example.com/serving/gateway:1.28.2", container="envoy",
                    started=60 * 24 * 9 + 5 - i)
    add_pdb("inference", "embedder", {"app": "embedder"}, max_unavailable=1, expected=3, allowed=1)
    add_pdb("inference", "api-gateway", {"app": "api-gateway"}, min_available=2, expected=3, allowed=1)

    # ml/data-prep: basic PodGroup, Single mode, batch-default, 2 members per general node.
    add_podgroup("ml", "data-prep", pclass="batch-default", mode="single", gang=None, created=60 * 2, scheduled=True)
    for i, node in enumerate(["cpu-a1", "cpu-a1", "cpu-a2", "cpu-a2", "cpu-b1", "cpu-b1"]):
        add_pod("ml", f"data-prep-{i}", node=node, pclass="batch-default", cpu=4000, mem=16 * GI,
                image="registry.example.com/ml/data-prep:5.0.2", container="prep",
                labels={"app": "data-prep"}, group="data-prep", started=60 + 55 - i)

    # Small standalone batch pods on the general nodes (batch-default).
    def reports(node: str, n: int, start: float) -> None:
        for k in range(n):
            add_pod("batch", f"report-daily-{node[-2:]}-{k}", node=node, pclass="batch-default", cpu=2000, mem=8 * GI,
                    image="registry.example.com/batch/reporting:2.14", container="report",
                    labels={"app": "report-daily"}, owner=("batch/v1", "Job", f"report-daily-{node[-2:]}-{k}"),
                    started=start - k * 1.5)

    def ingest(node: str, n: int, start: float) -> None:
        for k in range(n):
            add_pod("batch", f"ingest-{node[-2:]}-{k}", node=node, pclass="batch-default", cpu=1000, mem=4 * GI,
                    image="registry.example.com/batch/kafka-ingest:0.33", container="ingest",
                    labels={"app": "ingest"}, owner=("batch/v1", "Job", f"ingest-{node[-2:]}-{k}"),
                    started=start - k * 0.7)

    # cpu-a1: 6 (serving) + 8 (data-prep) + 6 (reports) + 5 (ingest) + 4 (feature-sync) = 29 -> 3 free
    reports("cpu-a1", 3, 70)
    ingest("cpu-a1", 5, 40)
    for k in range(2):
        add_pod("ml", f"feature-sync-{k}", node="cpu-a1", pclass="batch-default", cpu=2000, mem=8 * GI,
                image="registry.example.com/ml/feature-sync:1.3", container="sync", labels={"app": "feature-sync"},
                started=150 - k)
    # cpu-a2: 6 + 8 + 4 (reports) + 6 (ingest) + 2 (notebook-bob, low) = 26 -> 6 free
    reports("cpu-a2", 2, 66)
    ingest("cpu-a2", 6, 38)
    add_pod("research", "notebook-bob-0", node="cpu-a2", pclass="low-priority", cpu=2000, mem=8 * GI,
            image="registry.example.com/research/jupyter-scipy:2026.10", container="notebook",
            labels={"app": "notebook", "user": "bob", "statefulset.kubernetes.io/pod-name": "notebook-bob-0"},
            owner=("apps/v1", "StatefulSet", "notebook-bob"), started=60 * 22)
    # cpu-b1: 6 + 8 + 6 (reports) + 8 (ingest) = 28 -> 4 free
    reports("cpu-b1", 3, 64)
    ingest("cpu-b1", 8, 36)
    # cpu-b2 (cordoned for a kernel upgrade): the pods still running there
    reports("cpu-b2", 2, 120)
    ingest("cpu-b2", 2, 110)

    # Batch pool (tainted pool=batch): etl-nightly (gang 6, Single), spark-agg (gang 4, All, low),
    # plus standalone feature backfills (low) and batch reports.
    bsel, btol = {"pool": "batch"}, [BATCH_TOLERATION]
    add_podgroup("batch", "etl-nightly", pclass="batch-default", mode="single", gang=6, created=60 * 4, scheduled=True)
    for i, node in enumerate(["cpu-a3", "cpu-a3", "cpu-a4", "cpu-a4", "cpu-b3", "cpu-b4"]):
        add_pod("batch", f"etl-nightly-{i}", node=node, pclass="batch-default", cpu=4000, mem=16 * GI,
                image="registry.example.com/batch/etl:2026.11.29", container="etl",
                labels={"app": "etl-nightly", "job-name": "etl-nightly"}, owner=("batch/v1", "Job", "etl-nightly"),
                group="etl-nightly", started=60 * 3 + 55 - i * 0.1,
                init=("migrate-schema", "registry.example.com/batch/etl:2026.11.29", 500, 1 * GI),
                node_selector=bsel, tolerations=btol)
    add_pdb("batch", "etl-nightly", {"app": "etl-nightly"}, max_unavailable=2, expected=6, allowed=2)
    add_podgroup("batch", "spark-agg", pclass="low-priority", mode="all", gang=4, created=60 * 2 + 30, scheduled=True)
    for i, node in enumerate(CPU_BATCH):
        add_pod("batch", f"spark-agg-{i}", node=node, pclass="low-priority", cpu=6000, mem=24 * GI,
                image="registry.example.com/batch/spark:3.5.4", container="executor",
                labels={"app": "spark-agg", "spark-role": "executor"}, group="spark-agg",
                started=60 * 2 + 25 - i * 0.1, node_selector=bsel, tolerations=btol)
    # Per batch node: etl 4-8 cpu + spark 6 + backfill + reports; leave a few cpu free on each.
    fill = {"cpu-a3": (4, 3), "cpu-a4": (4, 2), "cpu-b3": (5, 3), "cpu-b4": (5, 2)}
    for node, (n_backfill, n_rep) in fill.items():
        for k in range(n_backfill):
            add_pod("ml", f"feature-backfill-{node[-2:]}-{k}", node=node, pclass="low-priority", cpu=2000, mem=8 * GI,
                    image="registry.example.com/ml/feature-backfill:1.3", container="backfill",
                    labels={"app": "feature-backfill"}, owner=("batch/v1", "Job", f"feature-backfill-{node[-2:]}-{k}"),
                    started=200 - k * 2, node_selector=bsel, tolerations=btol)
        for k in range(n_rep):
            add_pod("batch", f"report-weekly-{node[-2:]}-{k}", node=node, pclass="batch-default", cpu=1000, mem=4 * GI,
                    image="registry.example.com/batch/reporting:2.14", container="report",
                    labels={"app": "report-weekly"}, owner=("batch/v1", "Job", f"report-weekly-{node[-2:]}-{k}"),
                    started=50 - k, node_selector=bsel, tolerations=btol)


# ----------------------------------------------------------------------------------------------
# Pending work.
# ----------------------------------------------------------------------------------------------


def build_pending() -> None:
    # 1. ml/job-1: 16-pod gang at high-priority, 1 GPU each, confined to the GPU pool.
    add_podgroup("ml", "job-1", pclass="high-priority", mode="all", gang=16, created=3, scheduled=False)
    for i in range(16):
        add_pod("ml", f"job-1-{i}", node=None, pclass="high-priority", cpu=8000, mem=64 * GI, gpu=1,
                image="registry.example.com/ml/llama-train:4.3.0-rc1", container="trainer",
                labels={"app": "job-1", "job-name": "job-1", "batch.kubernetes.io/job-completion-index": str(i)},
                owner=("batch/v1", "Job", "job-1"), group="job-1", created_offset_s=i,
                init=("stage-data", "registry.example.com/tools/s5cmd:2.2", 2000, 8 * GI),
                node_selector=GPU_SEL, tolerations=GPU_TOL)

    # 2. ml/small-eval: gang of 2 small CPU pods; fits on free general-pool capacity.
    add_podgroup("ml", "small-eval", pclass="high-priority", mode="all", gang=2, created=1, scheduled=False)
    ITEMS_GROUPS[-1]["status"] = {}  # just created: the scheduler has not looked at it yet
    for i in range(2):
        add_pod("ml", f"small-eval-{i}", node=None, pclass="high-priority", cpu=2000, mem=8 * GI,
                image="registry.example.com/ml/eval-harness:0.4.2", container="eval",
                labels={"app": "small-eval", "job-name": "small-eval"}, owner=("batch/v1", "Job", "small-eval"),
                group="small-eval")

    # 3. research/giant: 16 GPUs per pod, more than any node has (8): unschedulable even after preemption.
    add_podgroup("research", "giant", pclass="high-priority", mode="all", gang=2, created=3, scheduled=False)
    for i in range(2):
        add_pod("research", f"giant-{i}", node=None, pclass="high-priority", cpu=64000, mem=512 * GI, gpu=16,
                image="registry.example.com/research/moe-train:0.1.0", container="trainer",
                labels={"app": "giant", "job-name": "giant"}, owner=("batch/v1", "Job", "giant"), group="giant",
                node_selector=GPU_SEL, tolerations=GPU_TOL)

    # 4. ml/finetune-nightly: training-never (preemptionPolicy Never); needs 8 GPUs in 2-GPU pods.
    #    The PodGroup carries no preemptionPolicy (gate PodGroupPreemptionPolicy is off by default).
    add_podgroup("ml", "finetune-nightly", pclass="training-never", mode="all", gang=4, created=3, scheduled=False)
    for i in range(4):
        add_pod("ml", f"finetune-nightly-{i}", node=None, pclass="training-never", cpu=16000, mem=128 * GI, gpu=2,
                image="registry.example.com/ml/finetune:2.0.5", container="trainer",
                labels={"app": "finetune-nightly", "job-name": "finetune-nightly"},
                owner=("batch/v1", "Job", "finetune-nightly"), group="finetune-nightly",
                node_selector=GPU_SEL, tolerations=GPU_TOL)

    # 5. batch/urgent-report: standalone pod at inference-critical; needs default per-pod preemption.
    add_pod("batch", "urgent-report", node=None, pclass="inference-critical", cpu=8000, mem=16 * GI,
            image="registry.example.com/batch/reporting:2.14", container="report",
            labels={"app": "urgent-report"})


# ----------------------------------------------------------------------------------------------


def _q(v: str, res: str) -> int:
    if res == "cpu":
        return int(v[:-1]) if v.endswith("m") else int(v) * 1000
    if v.endswith("Gi"):
        return int(v[:-2]) * GI
    if v.endswith("Mi"):
        return int(v[:-2]) * 2**20
    return int(v)


def pod_requests(pod: dict) -> dict[str, int]:
    total: dict[str, int] = {}
    for c in pod["spec"]["containers"]:
        for k, v in c["resources"]["requests"].items():
            total[k] = total.get(k, 0) + _q(v, k)
    for c in pod["spec"].get("initContainers", []):
        for k, v in c["resources"]["requests"].items():
            total[k] = max(total.get(k, 0), _q(v, k))
    total["pods"] = 1
    return total


def check_layout(nodes: list[dict]) -> None:
    """Guard the properties docs/demo.md relies on; fail loudly if an edit breaks them."""
    alloc = {n["metadata"]["name"]: {k: _q(v, k) for k, v in n["status"]["allocatable"].items()} for n in nodes}
    used = {name: {} for name in alloc}
    for p in ITEMS_PODS:
        node = p["spec"].get("nodeName")
        if not node:
            continue
        r = pod_requests(p)
        for k, v in r.items():
            used[node][k] = used[node].get(k, 0) + v
        if node.startswith("gpu-"):
            g = r.get(GPU, 0)
            assert g >= 1 and r["cpu"] <= 12000 * g and r["memory"] <= 96 * GI * g, p["metadata"]["name"]
            if p["spec"]["priority"] >= PRIO["high-priority"]:
                assert r["memory"] == r["cpu"] // 1000 * 8 * GI, p["metadata"]["name"]
    for name, u in used.items():
        for k, v in u.items():
            assert v <= alloc[name][k], (name, k, v, alloc[name][k])
    free_gpu = {n: alloc[n][GPU] - used[n].get(GPU, 0) for n in GPU_NODES}
    assert free_gpu == {"gpu-a1": 0, "gpu-a2": 0, "gpu-a3": 0, "gpu-a4": 0,
                        "gpu-b1": 0, "gpu-b2": 1, "gpu-b3": 0, "gpu-b4": 3}, free_gpu
    free_cpu = {n: alloc[n]["cpu"] - used[n].get("cpu", 0) for n in ("cpu-a1", "cpu-a2", "cpu-b1")}
    assert free_cpu == {"cpu-a1": 3000, "cpu-a2": 6000, "cpu-b1": 4000}, free_cpu


def build() -> dict:
    nodes = [make_node(n, i) for i, n in enumerate(GPU_NODES + CPU_GENERAL + CPU_BATCH)]
    build_gpu_pool()
    build_cpu_pool()
    build_pending()
    check_layout(nodes)
    namespaces = [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": ns, "uid": uid("Namespace", "", ns), "creationTimestamp": ts(60 * 24 * 60),
                      "labels": dict(labels, **{"kubernetes.io/metadata.name": ns})},
         "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
        for ns, labels in NAMESPACES.items()
    ]
    pcs = []
    for name, value, default, policy, desc in PRIORITY_CLASSES:
        pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
              "metadata": {"name": name, "uid": uid("PriorityClass", "", name), "creationTimestamp": ts(60 * 24 * 60)},
              "value": value, "preemptionPolicy": policy, "description": desc}
        if default:
            pc["globalDefault"] = True
        pcs.append(pc)
    pgs = [g for g in ITEMS_GROUPS if g["kind"] == "PodGroup"]
    cpgs = [g for g in ITEMS_GROUPS if g["kind"] == "CompositePodGroup"]
    sections = [
        ("nodes", nodes), ("pods", ITEMS_PODS), ("namespaces", namespaces),
        ("priorityclasses.scheduling.k8s.io", pcs), ("poddisruptionbudgets.policy", ITEMS_PDBS),
        ("podgroups.scheduling.k8s.io", pgs), ("compositepodgroups.scheduling.k8s.io", cpgs),
        # listed and empty: the demo cluster has no RuntimeClasses or LimitRanges, so a hypothetical
        # pod's create-time admission is known to add nothing (snapshot/decode/podadmission.py)
        ("runtimeclasses.node.k8s.io", []), ("limitranges", []),
    ]
    header = {
        "formatVersion": 1,
        "capturedAt": CAPTURED_AT.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "server": {"url": "demo", "version": "v1.37.1"},
        "listed": [name for name, _ in sections],
        "notServed": [],
        "forbidden": [],
        "resourceVersions": {},
        "counts": {name: len(objs) for name, objs in sections},
    }
    # Item order: cluster-scoped first, then groups, PDBs, pods (a natural reading order).
    items = namespaces + pcs + nodes + cpgs + pgs + ITEMS_PDBS + ITEMS_PODS
    return {"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot", "header": header, "items": items}


def render(doc: dict) -> str:
    dump = lambda o: json.dumps(o, separators=(",", ":"), ensure_ascii=False)  # noqa: E731
    head = {k: v for k, v in doc.items() if k != "items"}
    lines = [dump(head)[:-1] + ',"items":[']
    lines += [dump(it) + ("," if i < len(doc["items"]) - 1 else "") for i, it in enumerate(doc["items"])]
    lines.append("]}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default=str(DEFAULT_OUT), help="where to write (default: the bundled file)")
    ap.add_argument("--check", action="store_true", help="exit 1 if the output file differs from what would be written")
    args = ap.parse_args(argv)
    text = render(build())
    out = Path(args.output)
    if args.check:
        current = out.read_text(encoding="utf-8") if out.exists() else None
        if current != text:
            print(f"{out} is out of date; run tools/make_demo.py", file=sys.stderr)
            return 1
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
