"""Deterministic synthetic clusters for kubectl-wap benchmarks.

`python -m benchmarks.generate --size S|M|L|all [--out DIR] [--seed N]` writes, per size:

- ``<size>-list.json.gz``: one ``kubectl get ... -o json`` style ``List`` holding every object in
  its full API shape (managedFields, env, probes, volumes, status conditions: ~4 KB per pod);
- ``<size>-snapshot.json.gz``: the same objects in our snapshot format, stripped with
  :func:`kubectl_wap.snapshot.strip.strip_object` and written by ``write_snapshot``;
- ``<size>-meta.json``: counts, the pending gangs and generation time.

Objects are produced one at a time and streamed to both files, so memory stays flat even for L.
The cluster: zones, node pools (system, general CPU, tainted high-memory, tainted GPU nodes with
``nvidia.com/gpu``), DaemonSet pods on every node, Deployments (some with PDBs, topology spread and
pod (anti-)affinity), PodGroups in Single and All mode (basic and gang), CompositePodGroup trees,
standalone pods, PriorityClasses, and pending high-priority gangs of 64, 256 and 1,024 pods that do
not fit without preemption.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import random
import time
import uuid
from dataclasses import dataclass
from typing import Iterator

from kubectl_wap.snapshot.save import write_snapshot
from kubectl_wap.snapshot.strip import strip_object

DEFAULT_OUT = "/tmp/kubectl-wap-bench"
SIZES = {"S": (100, 3_000), "M": (1_000, 30_000), "L": (5_000, 150_000)}
GANGS = (64, 256, 1024)
GANG_NAMESPACE = "bench-gangs"
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
BASE_TS = 1_795_000_000  # 2026-11-18
CAPTURED = "2026-11-30T12:00:00Z"

GI = 1024**3
MI = 1024**2

PRIORITY_CLASSES = [
    # name, value, globalDefault, preemptionPolicy
    ("low-priority", 100, False, "PreemptLowerPriority"),
    ("batch-default", 1000, True, "PreemptLowerPriority"),
    ("production", 100_000, False, "PreemptLowerPriority"),
    ("high-priority", 1_000_000, False, "PreemptLowerPriority"),
    ("training-never", 1_000_000, False, "Never"),
]
PRIO = {n: v for n, v, _, _ in PRIORITY_CLASSES} | {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}


@dataclass
class Pool:
    name: str
    cpu: int  # cores
    mem_gi: int
    gpu: int
    pods_cap: int
    taint: tuple[str, str] | None
    instance: str


POOLS = {
    "system": Pool("system", 8, 32, 0, 110, ("CriticalAddonsOnly", "true"), "m6i.2xlarge"),
    "general": Pool("general", 32, 128, 0, 110, None, "m6i.8xlarge"),
    "highmem": Pool("highmem", 64, 512, 0, 110, ("dedicated", "highmem"), "r6i.16xlarge"),
    "gpu": Pool("gpu", 96, 768, 8, 110, ("nvidia.com/gpu", "present"), "p4d.24xlarge"),
}
POOL_SHARE = {"system": 0.04, "general": 0.66, "highmem": 0.15, "gpu": 0.15}


def ts(offset: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(BASE_TS + offset))


class Gen:
    """All randomness flows through one seeded Random: same seed and size, same bytes."""

    def __init__(self, n_nodes: int, n_pods: int, seed: int, gangs: tuple[int, ...] = GANGS) -> None:
        self.rng = random.Random(seed)
        self.n_nodes, self.n_pods, self.gangs = n_nodes, n_pods, gangs
        self.n_ns = max(6, n_nodes // 20)
        self.namespaces = [f"team-{i:03d}" for i in range(self.n_ns)]
        self.counts: dict[str, int] = {}
        self.nodes: dict[str, list[dict]] = {}  # pool -> [{name, zone, cpu, mem, gpu, pods}] usage
        self.pending: list[dict] = []

    # ---------------------------------------------------------------- helpers
    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def hexs(self, n: int) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))

    def count(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def managed_fields(self, manager: str, t: str, spec_keys: list[str]) -> list[dict]:
        fields = {"f:metadata": {"f:labels": {".": {}}, "f:ownerReferences": {".": {}}},
                  "f:spec": {f"f:{k}": {} for k in spec_keys}}
        status = {"f:status": {"f:conditions": {'k:{"type":"Ready"}': {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}},
                                                'k:{"type":"ContainersReady"}': {".": {}, "f:status": {}, "f:type": {}},
                                                'k:{"type":"PodScheduled"}': {".": {}, "f:status": {}, "f:type": {}}},
                               "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:startTime": {}}}
        return [
            {"manager": manager, "operation": "Update", "apiVersion": "v1", "time": t, "fieldsType": "FieldsV1", "fieldsV1": fields},
            {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": t, "fieldsType": "FieldsV1", "fieldsV1": status, "subresource": "status"},
        ]

    # ---------------------------------------------------------------- cluster-scoped objects
    def priority_classes(self) -> Iterator[dict]:
        for name, value, default, policy in PRIORITY_CLASSES:
            self.count("priorityclasses.scheduling.k8s.io")
            pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                  "metadata": {"name": name, "uid": self.uid(), "resourceVersion": "1000", "creationTimestamp": ts(0)},
                  "value": value, "preemptionPolicy": policy, "description": f"benchmark class {name}"}
            if default:
                pc["globalDefault"] = True
            yield pc

    def namespace_objs(self) -> Iterator[dict]:
        for ns in self.namespaces + [GANG_NAMESPACE, "kube-system"]:
            self.count("namespaces")
            yield {"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": ns, "uid": self.uid(), "creationTimestamp": ts(0), "resourceVersion": "100",
                                "labels": {"kubernetes.io/metadata.name": ns, "team": ns.split("-")[-1]}},
                   "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}

    def node_objs(self) -> Iterator[dict]:
        counts = {p: max(1, round(self.n_nodes * s)) for p, s in POOL_SHARE.items()}
        counts["general"] += self.n_nodes - sum(counts.values())
        i = 0
        for pool, n in counts.items():
            P = POOLS[pool]
            self.nodes[pool] = []
            for j in range(n):
                zone = ZONES[j % len(ZONES)]
                name = f"ip-10-{i // 250}-{i % 250}-{j}.{pool}.ec2.internal"
                i += 1
                self.nodes[pool].append({"name": name, "zone": zone, "cpu": P.cpu * 1000 - 500, "mem": P.mem_gi * GI - 4 * GI,
                                         "gpu": P.gpu, "pods": P.pods_cap})
                labels = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                          "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": P.instance,
                          "topology.kubernetes.io/region": "us-east-1", "topology.kubernetes.io/zone": zone,
                          "node-pool": pool, "eks.amazonaws.com/nodegroup": f"{pool}-ng"}
                if P.gpu:
                    labels |= {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.count": str(P.gpu)}
                spec: dict = {"providerID": f"aws:///{zone}/i-0{self.hexs(16)}", "podCIDR": f"10.{i // 250}.{i % 250}.0/24"}
                if P.taint:
                    spec["taints"] = [{"key": P.taint[0], "value": P.taint[1], "effect": "NoSchedule"}]
                alloc = {"cpu": f"{P.cpu * 1000 - 500}m", "memory": f"{P.mem_gi - 4}Gi", "pods": str(P.pods_cap), "ephemeral-storage": "95Gi"}
                cap = {"cpu": str(P.cpu), "memory": f"{P.mem_gi}Gi", "pods": str(P.pods_cap), "ephemeral-storage": "100Gi"}
                if P.gpu:
                    alloc["nvidia.com/gpu"] = cap["nvidia.com/gpu"] = str(P.gpu)
                self.count("nodes")
                yield {
                    "apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name, "uid": self.uid(), "resourceVersion": str(10000 + i), "creationTimestamp": ts(-86400 * 10),
                                 "labels": labels,
                                 "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
                    "spec": spec,
                    "status": {
                        "capacity": cap, "allocatable": alloc,
                        "conditions": [{"type": t, "status": s, "reason": r, "message": m, "lastHeartbeatTime": ts(86000), "lastTransitionTime": ts(-86400)}
                                       for t, s, r, m in (("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                                                          ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                                                          ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                                                          ("Ready", "True", "KubeletReady", "kubelet is posting ready status"))],
                        "addresses": [{"type": "InternalIP", "address": f"10.{i // 250}.{i % 250}.10"}, {"type": "Hostname", "address": name}],
                        "nodeInfo": {"architecture": "amd64", "containerRuntimeVersion": "containerd://2.1.4", "kernelVersion": "6.12.40-amzn2023.x86_64",
                                     "kubeletVersion": "v1.37.1", "operatingSystem": "linux", "osImage": "Amazon Linux 2023",
                                     "machineID": self.hexs(32), "systemUUID": self.uid(), "bootID": self.uid()},
                        "images": [{"names": [f"registry.example.com/base/img-{k}@sha256:{self.hexs(64)}", f"registry.example.com/base/img-{k}:1.{k}"],
                                    "sizeBytes": 50_000_000 + k * 1_000_000} for k in range(4)],
                    },
                }

    # ---------------------------------------------------------------- pods
    def pod(self, *, ns: str, name: str, labels: dict, owner: tuple[str, str, str] | None, pc: str | None, cpu_m: int, mem: int, gpu: int,
            node: dict | None, pool: str, t: float, image: str, group: str | None = None, spread: bool = False,
            anti: str | None = None, affinity_pool: bool = False, tolerate_all: bool = False) -> dict:
        res = {"cpu": f"{cpu_m}m", "memory": f"{mem // MI}Mi"}
        if gpu:
            res["nvidia.com/gpu"] = str(gpu)
        env = [{"name": f"CONFIG_{k}", "value": f"value-{self.hexs(12)}"} for k in range(6)]
        env += [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": f"{ns}-db", "key": "password"}}}]
        probe = {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "initialDelaySeconds": 5, "timeoutSeconds": 1,
                 "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
        container = {
            "name": "main", "image": image, "imagePullPolicy": "IfNotPresent",
            "command": ["/bin/app"], "args": ["--config=/etc/app/config.yaml", "--log-level=info"],
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}, {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
            "env": env, "resources": {"requests": res, "limits": dict(res)},
            "livenessProbe": probe, "readinessProbe": dict(probe, initialDelaySeconds=1),
            "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}, {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}],
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}},
        }
        tolerations = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                       {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]
        P = POOLS[pool]
        if tolerate_all:
            tolerations.append({"operator": "Exists"})
        elif P.taint:
            tolerations.append({"key": P.taint[0], "operator": "Exists" if gpu else "Equal", **({} if gpu else {"value": P.taint[1]}), "effect": "NoSchedule"})
        spec: dict = {
            "containers": [container],
            "volumes": [{"name": "config", "configMap": {"name": f"{name.rsplit('-', 1)[0]}-config", "defaultMode": 420}},
                        {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}],
            "restartPolicy": "Always" if owner and owner[0] in ("ReplicaSet", "DaemonSet") else "Never",
            "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst", "serviceAccountName": "default", "serviceAccount": "default",
            "securityContext": {"fsGroup": 2000}, "schedulerName": "default-scheduler", "tolerations": tolerations,
            "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
        }
        if pool != "general" and not tolerate_all:
            spec["nodeSelector"] = {"node-pool": pool}
        if pc:
            spec["priorityClassName"] = pc
            spec["priority"] = PRIO[pc]
            if pc == "training-never":
                spec["preemptionPolicy"] = "Never"
        else:
            spec["priority"] = 0
        if group:
            spec["schedulingGroup"] = {"podGroupName": group}
        aff: dict = {}
        if affinity_pool:
            aff["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "node-pool", "operator": "In", "values": [pool]}]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "preference": {"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [ZONES[0]]}]}}]}
        if anti == "preferred":
            aff["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"app": labels["app"]}}, "topologyKey": "kubernetes.io/hostname"}}]}
        elif anti == "required":
            aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": labels["app"]}}, "topologyKey": "kubernetes.io/hostname"}]}
        if aff:
            spec["affinity"] = aff
        if spread:
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
                                                  "labelSelector": {"matchLabels": {"app": labels["app"]}}, "matchLabelKeys": ["pod-template-hash"]}]
        md: dict = {"name": name, "namespace": ns, "uid": self.uid(), "resourceVersion": str(self.rng.randint(10**6, 10**8)),
                    "creationTimestamp": ts(t), "labels": labels,
                    "annotations": {"kubectl.kubernetes.io/restartedAt": ts(t - 3600), "prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
                    "managedFields": self.managed_fields("kube-controller-manager" if owner else "kubectl-client-side-apply", ts(t), list(spec))}
        if owner:
            md["generateName"] = name.rsplit("-", 1)[0] + "-"
            md["ownerReferences"] = [{"apiVersion": "apps/v1" if owner[0] in ("ReplicaSet", "DaemonSet") else "batch/v1", "kind": owner[0], "name": owner[1],
                                      "uid": owner[2], "controller": True, "blockOwnerDeletion": True}]
        if node is None:
            status = {"phase": "Pending", "qosClass": "Guaranteed", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastProbeTime": None, "lastTransitionTime": ts(t + 5),
                 "message": f"0/{self.n_nodes} nodes are available: Insufficient cpu. preemption: not eligible due to the pod group."}]}
        else:
            spec["nodeName"] = node["name"]
            st = ts(t + 2)
            status = {
                "phase": "Running", "qosClass": "Guaranteed", "hostIP": f"10.0.{self.rng.randint(0, 250)}.10", "podIP": f"10.1{self.rng.randint(0, 99)}.{self.rng.randint(0, 250)}.{self.rng.randint(2, 250)}",
                "startTime": st,
                "conditions": [{"type": c, "status": "True", "lastProbeTime": None, "lastTransitionTime": st}
                               for c in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")],
                "containerStatuses": [{"name": "main", "ready": True, "restartCount": 0, "started": True, "image": image,
                                       "imageID": f"{image.split(':')[0]}@sha256:{self.hexs(64)}", "containerID": f"containerd://{self.hexs(64)}",
                                       "state": {"running": {"startedAt": st}}, "lastState": {}, "volumeMounts": [
                                           {"name": "config", "mountPath": "/etc/app"}]}],
            }
        self.count("pods")
        return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status}

    def place(self, pool: str, start: int, cpu_m: int, mem: int, gpu: int) -> dict | None:
        nodes = self.nodes[pool]
        n = len(nodes)
        for k in range(n):
            nd = nodes[(start + k) % n]
            if nd["cpu"] >= cpu_m and nd["mem"] >= mem and nd["gpu"] >= gpu and nd["pods"] >= 1:
                nd["cpu"] -= cpu_m
                nd["mem"] -= mem
                nd["gpu"] -= gpu
                nd["pods"] -= 1
                return nd
        return None

    def daemon_pods(self) -> Iterator[dict]:
        for ds, cpu_m, mem in (("kube-proxy", 100, 128 * MI), ("node-exporter", 50, 64 * MI)):
            ds_uid = self.uid()
            for pool, nodes in self.nodes.items():
                for nd in nodes:
                    nd["cpu"] -= cpu_m
                    nd["mem"] -= mem
                    nd["pods"] -= 1
                    yield self.pod(ns="kube-system", name=f"{ds}-{self.hexs(5)}", labels={"app": ds, "controller-revision-hash": "7d9f8b6c5"},
                                   owner=("DaemonSet", ds, ds_uid), pc="system-node-critical", cpu_m=cpu_m, mem=mem, gpu=0, node=nd, pool=pool,
                                   t=-86400 * 9, image=f"registry.k8s.io/{ds}:v1.37.1", tolerate_all=True)

    def workloads(self) -> Iterator[dict]:
        """Fill each pool with workloads until its share of the pod budget is used."""
        rng = self.rng
        remaining = self.n_pods - 2 * self.n_nodes - sum(self.gangs)
        gpu_nodes = len(self.nodes["gpu"])
        budget = {"gpu": gpu_nodes * 7, "system": len(self.nodes["system"]) * 12}
        rest = max(0, remaining - sum(budget.values()))
        budget["highmem"] = int(rest * 0.15)
        budget["general"] = rest - budget["highmem"]
        wl = 0
        carry = 0
        for pool in ("system", "gpu", "highmem", "general"):
            left = budget[pool] + carry
            stuck = 0
            P = POOLS[pool]
            nn = len(self.nodes[pool])
            per_node = max(1, left // nn) if nn else 1
            # average request so that the pool ends ~94% full on cpu, ~85% on memory
            avg_cpu = int((P.cpu * 1000 - 650) * 0.94 / per_node)
            avg_mem = int((P.mem_gi - 4.2) * GI * 0.85 / per_node)
            cursor = 0
            while left > 0:
                wl += 1
                ns = self.namespaces[rng.randrange(len(self.namespaces))] if pool != "system" else "kube-system"
                r = rng.random()
                if pool == "gpu":
                    kind = "gang-all" if r < 0.5 else ("gang-single" if r < 0.8 else "deploy")
                elif pool == "system":
                    kind = "deploy"
                else:
                    kind = ("deploy" if r < 0.40 else "basic-single" if r < 0.55 else "gang-all" if r < 0.70 else
                            "gang-single" if r < 0.78 else "cpg" if r < 0.86 else "standalone")
                size = {"deploy": rng.choice((2, 3, 3, 5, 8, 12, 20)), "basic-single": rng.choice((4, 8, 16, 32)),
                        "gang-all": rng.choice((2, 4, 8, 16)), "gang-single": rng.choice((4, 8, 16)),
                        "cpg": 0, "standalone": rng.choice((1, 1, 2, 5))}[kind]
                if pool == "gpu":
                    gpu = rng.choice((1, 1, 2, 4, 8)) if kind != "deploy" else 1
                    cpu_m, mem = gpu * 11_000, gpu * 90 * GI
                    size = max(1, min(size, 16 // gpu))
                else:
                    f = rng.choice((0.25, 0.5, 1.0, 1.0, 1.5, 2.0))
                    gpu, cpu_m, mem = 0, max(50, int(avg_cpu * f)), max(64 * MI, int(avg_mem * f) // MI * MI)
                pc = {"deploy": rng.choice(("production", "production", "batch-default")), "basic-single": "batch-default",
                      "gang-all": rng.choice(("low-priority", "batch-default")), "gang-single": rng.choice(("low-priority", "batch-default")),
                      "cpg": "batch-default", "standalone": rng.choice(("low-priority", None))}[kind]
                if pool == "system":
                    pc = "system-cluster-critical" if rng.random() < 0.3 else "production"
                t = -rng.randint(600, 86400 * 7)
                name = f"{ {'deploy': 'svc', 'standalone': 'adhoc'}.get(kind, 'job') }-{wl:06d}"
                emitted = yield from self.emit_workload(kind, pool, ns, name, size, pc, cpu_m, mem, gpu, t, cursor, left)
                cursor += emitted
                left -= emitted
                stuck = stuck + 1 if emitted == 0 else 0
                if stuck > 20:  # the pool is full: hand the rest of its budget to the next pool
                    break
            carry = max(0, left)

    def emit_workload(self, kind, pool, ns, name, size, pc, cpu_m, mem, gpu, t, cursor, left):
        rng = self.rng
        n_emitted = 0
        img = f"registry.example.com/{ns}/{name.split('-')[0]}:{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"

        def members(group: str | None, count: int, labels: dict, owner, **kw):
            nonlocal n_emitted, cursor
            for i in range(count):
                if n_emitted >= left:
                    return
                nd = self.place(pool, cursor, cpu_m, mem, gpu)
                cursor += 1
                if nd is None:
                    continue  # pool full: skip this member
                n_emitted += 1
                yield self.pod(ns=ns, name=f"{labels['app']}-{i if group else self.hexs(5)}", labels=dict(labels), owner=owner, pc=pc,
                               cpu_m=cpu_m, mem=mem, gpu=gpu, node=nd, pool=pool, t=t + i, image=img, group=group, **kw)

        if kind == "deploy":
            rs = f"{name}-{self.hexs(9)}"
            labels = {"app": name, "pod-template-hash": rs.rsplit("-", 1)[1], "app.kubernetes.io/part-of": ns, "env": "prod"}
            r = rng.random()
            kw = {"spread": r < 0.25, "anti": "preferred" if 0.25 <= r < 0.40 else ("required" if 0.40 <= r < 0.43 else None),
                  "affinity_pool": 0.43 <= r < 0.55 and pool != "general"}
            yield from members(None, size, labels, ("ReplicaSet", rs, self.uid()), **kw)
            if size >= 3 and rng.random() < 0.6:
                yield self.pdb(ns, name, {"app": name}, disruptions=rng.choice((0, 1, 1, 2)))
        elif kind == "standalone":
            for i in range(size):
                yield from members(None, 1, {"app": f"{name}-{i}", "run": f"{name}-{i}"}, None)
        elif kind in ("basic-single", "gang-all", "gang-single"):
            mode = "all" if kind == "gang-all" else "single"
            policy = {"basic": {}} if kind == "basic-single" else {"gang": {"minCount": size}}
            yield self.pod_group(ns, name, policy, mode, pc, t)
            yield from members(name, size, {"app": name, "job-name": name, "batch.kubernetes.io/controller-uid": self.uid()}, ("Job", name, self.uid()))
        else:  # cpg: a CompositePodGroup (gang of 2 groups, All) with a head and a workers PodGroup
            yield self.composite(ns, name, pc, t)
            for child, cnt in (("head", 1), ("workers", rng.choice((3, 4, 8)))):
                g = f"{name}-{child}"
                yield self.pod_group(ns, g, {"gang": {"minCount": cnt}}, "all", pc, t, parent=name)
                yield from members(g, cnt, {"app": g, "ray.io/cluster": name, "ray.io/node-type": child}, ("Job", g, self.uid()))
        return n_emitted

    def pod_group(self, ns, name, policy, mode, pc, t, parent=None, pending=False) -> dict:
        self.count("podgroups.scheduling.k8s.io")
        spec = {"workloadRef": {"workloadName": parent or name, "templateName": "workers"}, "schedulingPolicy": policy,
                "disruptionMode": {mode: {}}, "priorityClassName": pc, "priority": PRIO[pc]}
        if parent:
            spec["parentCompositePodGroupName"] = parent
        cond = {"type": "PodGroupInitiallyScheduled", "status": "False" if pending else "True", "reason": "Unschedulable" if pending else "Scheduled",
                "message": "pod group is unschedulable" if pending else "", "lastTransitionTime": ts(t + 60), "observedGeneration": 1}
        return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                "metadata": {"name": name, "namespace": ns, "uid": self.uid(), "creationTimestamp": ts(t), "generation": 1, "resourceVersion": "5000"},
                "spec": spec, "status": {"conditions": [cond]}}

    def composite(self, ns, name, pc, t) -> dict:
        self.count("compositepodgroups.scheduling.k8s.io")
        return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
                "metadata": {"name": name, "namespace": ns, "uid": self.uid(), "creationTimestamp": ts(t), "generation": 1},
                "spec": {"workloadRef": {"workloadName": name, "templateName": "cluster"}, "schedulingPolicy": {"gang": {"minGroupCount": 2}},
                         "disruptionMode": {"all": {}}, "priorityClassName": pc, "priority": PRIO[pc]},
                "status": {"conditions": [{"type": "CompositePodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled", "message": "",
                                           "lastTransitionTime": ts(t + 60), "observedGeneration": 1}]}}

    def pdb(self, ns, name, selector, disruptions) -> dict:
        self.count("poddisruptionbudgets.policy")
        return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": name, "namespace": ns, "uid": self.uid(), "creationTimestamp": ts(-86400), "generation": 1},
                "spec": {"selector": {"matchLabels": selector}, "maxUnavailable": max(1, disruptions)},
                "status": {"currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3, "disruptionsAllowed": disruptions, "observedGeneration": 1,
                           "conditions": [{"type": "DisruptionAllowed", "status": "True" if disruptions else "False", "reason": "SufficientPods" if disruptions else "InsufficientPods",
                                           "message": "", "lastTransitionTime": ts(-3600), "observedGeneration": 1}]}}

    def pending_gangs(self) -> Iterator[dict]:
        for n in self.gangs:
            name = f"gang-{n}"
            # 64: GPU training gang; 256 / 1024: CPU gangs on the general pool. Sized so the free
            # capacity (~6% of the pool) cannot hold them: preemption is required.
            if n <= 64:
                pool, gpu, cpu_m, mem = "gpu", 1, 10_000, 80 * GI
            else:
                gen = self.nodes["general"]
                pool_cpu = len(gen) * (POOLS["general"].cpu * 1000 - 500)
                gpu = 0
                cpu_m = max(200, int(pool_cpu * (0.15 if n <= 256 else 0.30) / n) // 50 * 50)
                mem = 2 * GI if n > 256 else 4 * GI
            self.pending.append({"name": name, "namespace": GANG_NAMESPACE, "pods": n, "pool": pool, "cpu_m": cpu_m, "gpu": gpu})
            yield self.pod_group(GANG_NAMESPACE, name, {"gang": {"minCount": n}}, "all", "high-priority", 86000, pending=True)
            img = "registry.example.com/ml/trainer:5.0.0"
            for i in range(n):
                yield self.pod(ns=GANG_NAMESPACE, name=f"{name}-{i}", labels={"app": name, "job-name": name, "batch.kubernetes.io/job-completion-index": str(i)},
                               owner=("Job", name, "job-" + name), pc="high-priority", cpu_m=cpu_m, mem=mem, gpu=gpu, node=None, pool=pool,
                               t=86000 + i * 0.01, image=img, group=name)

    def items(self) -> Iterator[dict]:
        yield from self.priority_classes()
        yield from self.namespace_objs()
        yield from self.node_objs()
        yield from self.daemon_pods()
        yield from self.workloads()
        yield from self.pending_gangs()


def generate(size: str, out: str = DEFAULT_OUT, seed: int = 42, nodes: int | None = None, pods: int | None = None,
             gangs: tuple[int, ...] = GANGS, level: int = 6) -> dict:
    """Write <out>/<size>-list.json.gz and <size>-snapshot.json.gz; return the meta dict."""
    n_nodes, n_pods = (nodes, pods) if nodes else SIZES[size]
    os.makedirs(out, exist_ok=True)
    list_path = os.path.join(out, f"{size}-list.json.gz")
    snap_path = os.path.join(out, f"{size}-snapshot.json.gz")
    t0 = time.perf_counter()
    g = Gen(n_nodes, n_pods, seed, gangs)
    tmp = list_path + ".tmp"
    raw_bytes = 0
    with open(tmp, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", compresslevel=level, mtime=0) as gz:
        w = io.BufferedWriter(gz, 1 << 20)
        w.write(b'{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[\n')
        first = True

        def tee() -> Iterator[dict]:
            nonlocal first, raw_bytes
            for obj in g.items():
                b = json.dumps(obj, separators=(",", ":")).encode()
                raw_bytes += len(b)
                if not first:
                    w.write(b",\n")
                w.write(b)
                first = False
                yield strip_object(obj)

        header = {"formatVersion": 1, "capturedAt": CAPTURED, "server": {"url": f"synthetic://{size}", "version": "v1.37.1"},
                  "listed": ["nodes", "pods", "namespaces", "priorityclasses.scheduling.k8s.io", "poddisruptionbudgets.policy",
                             "podgroups.scheduling.k8s.io", "compositepodgroups.scheduling.k8s.io"],
                  "notServed": [], "forbidden": [], "resourceVersions": {}, "counts": g.counts}  # filled while streaming
        write_snapshot(snap_path, header, tee())
        w.write(b"]}\n")
        w.flush()
        w.detach()
    os.replace(tmp, list_path)
    meta = {"size": size, "seed": seed, "nodes": n_nodes, "pods_target": n_pods, "counts": g.counts, "gangs": g.pending,
            "list_path": list_path, "snapshot_path": snap_path, "list_bytes_raw": raw_bytes,
            "list_bytes_gz": os.path.getsize(list_path), "snapshot_bytes_gz": os.path.getsize(snap_path),
            "bytes_per_pod": round(raw_bytes / max(1, g.counts.get("pods", 1))), "generate_s": round(time.perf_counter() - t0, 2)}
    with open(os.path.join(out, f"{size}-meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def ensure(size: str, out: str = DEFAULT_OUT, seed: int = 42, **kw) -> dict:
    """Generate unless a matching cached copy exists."""
    mp = os.path.join(out, f"{size}-meta.json")
    if os.path.exists(mp):
        with open(mp) as f:
            meta = json.load(f)
        if meta.get("seed") == seed and os.path.exists(meta["list_path"]) and os.path.exists(meta["snapshot_path"]) and not kw:
            return meta
    return generate(size, out, seed, **kw)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="S", choices=[*SIZES, "all"])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args(argv)
    for s in SIZES if a.size == "all" else [a.size]:
        m = generate(s, a.out, a.seed)
        print(json.dumps({k: v for k, v in m.items() if k != "gangs"}))


if __name__ == "__main__":
    main()
