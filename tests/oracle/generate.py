"""Seeded generator of small and medium clusters that are interesting for preemption.

Each case is a cluster near full (plain Kubernetes objects, as `kubectl get -o json` would give)
and one pending object: a gang or basic PodGroup, a CompositePodGroup tree, or a plain pod
(default preemption). Features are drawn at random per case and recorded in `features`, so the
differential runner can report agreement per feature: gang, basic, cpg, pod, pdb, pdb-empty,
pdb-expr, all-victims, single-victims, cpg-victims, equal-priority, never, taints, node-affinity,
anti-affinity, affinity-preferred, victim-anti-affinity, spread, host-ports, terminating,
partial-fit, running-members.

Everything the real scheduler reads is written explicitly (spec.priority on pods and groups:
the oracle's apiserver runs without the Priority admission plugin, as upstream's integration
tests do; PDB status as the disruption controller would have computed it; start times).
Same seed, same case.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

PAUSE = "registry.k8s.io/pause:3.10"
BASE = 1_790_000_000  # a fixed epoch second: start times are BASE + offsets
NAMESPACES = ("default", "team-a")


def _ts(sec: int) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(sec))


@dataclass
class GenCase:
    id: str
    seed: int
    items: list[dict]
    kind: str  # podgroup | compositepodgroup | pod
    namespace: str
    name: str
    features: set[str] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "seed": self.seed, "features": sorted(self.features),
                "whatif": {"kind": self.kind, "namespace": self.namespace, "name": self.name},
                "cluster": self.items}


def _cpu(m: int) -> str:
    return f"{m}m" if m % 1000 else str(m // 1000)


class Builder:
    def __init__(self, rng: random.Random, medium: bool):
        self.rng = rng
        self.items: list[dict] = []
        self.features: set[str] = set()
        self.nodes: list[dict] = []
        self.free: dict[str, int] = {}  # node -> free milli-cpu
        self.pod_count = 0
        self.medium = medium
        self.host_port_used: set[str] = set()

    # --- nodes ------------------------------------------------------------------------------
    def make_nodes(self) -> None:
        rng = self.rng
        n = rng.randint(6, 14) if self.medium else rng.randint(2, 5)
        taint_some = rng.random() < 0.15
        for i in range(n):
            # Varied shapes: identical empty nodes tie in every score (the batch pins how the real
            # scheduler breaks such ties, tiebreak_test.go; varied shapes keep ties the exception).
            cpu = rng.choice([2000, 3000, 4000, 5000, 6000, 8000]) if self.medium else rng.choice([2000, 3000, 4000, 5000])
            node = self.node(f"node{i + 1}", f"zone-{i % 2}", cpu, rng.choice(["16Gi", "24Gi", "32Gi", "48Gi"]))
            if taint_some and i % 3 == 2:
                node["spec"]["taints"] = [{"key": "dedicated", "value": "special", "effect": "NoSchedule"}]
                self.features.add("taints")

    def node(self, name: str, zone: str, cpu: int, memory: str) -> dict:
        """A Ready node with 110 pod slots, added to the cluster."""
        labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
        alloc = {"cpu": _cpu(cpu), "memory": memory, "pods": "110"}
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {},
                "status": {"allocatable": alloc, "capacity": alloc, "conditions": [{"type": "Ready", "status": "True"}]}}
        self.items.append(node)
        self.nodes.append(node)
        self.free[name] = cpu
        return node

    # --- pods -------------------------------------------------------------------------------
    def pod(self, ns: str, name: str, prio: int, cpu: int, node: str | None, labels: dict, start: int | None = None,
            group: str | None = None, extra_spec: dict | None = None) -> dict:
        spec: dict[str, Any] = {
            "priority": prio,
            "containers": [{"name": "c", "image": PAUSE, "resources": {"requests": {"cpu": _cpu(cpu), "memory": "64Mi"}}}],
            "terminationGracePeriodSeconds": 30,
        }
        if group:
            spec["schedulingGroup"] = {"podGroupName": group}
        if extra_spec:
            spec.update(extra_spec)
        status: dict[str, Any] = {"phase": "Pending"}
        if node:
            spec["nodeName"] = node
            status = {"phase": "Running", "startTime": _ts(start if start is not None else BASE)}
        self.pod_count += 1
        p = {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"namespace": ns, "name": name, "labels": dict(labels),
                          "creationTimestamp": _ts((start or BASE + 3600) - 1)},
             "spec": spec, "status": status}
        self.items.append(p)
        return p

    def fits(self, node: str, cpu: int) -> bool:
        return self.free[node] >= cpu

    def place(self, node: str, cpu: int) -> None:
        self.free[node] -= cpu


def _pdb(ns: str, name: str, selector: dict | None, allowed: int, matched: int) -> dict:
    spec: dict[str, Any] = {"minAvailable": max(0, matched - allowed)}
    if selector is not None:
        spec["selector"] = selector
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"namespace": ns, "name": name},
            "spec": spec,
            "status": {"disruptionsAllowed": allowed, "currentHealthy": matched, "desiredHealthy": max(0, matched - allowed),
                       "expectedPods": matched, "observedGeneration": 1}}


def _group(kind: str, ns: str, name: str, prio: int, policy: dict, mode: str | None, parent: str | None = None) -> dict:
    spec: dict[str, Any] = {"schedulingPolicy": policy, "priority": prio}
    if mode:
        spec["disruptionMode"] = {mode: {}}
    if parent:
        spec["parentCompositePodGroupName"] = parent
    api = "scheduling.k8s.io/v1beta1" if kind == "PodGroup" else "scheduling.k8s.io/v1alpha3"
    return {"apiVersion": api, "kind": kind, "metadata": {"namespace": ns, "name": name}, "spec": spec}


def generate(seed: int, index: int = 0, version: str = "1.37") -> GenCase:
    """One case from (seed, index): the same numbers give the same cluster. `version` "1.38" makes
    the cluster one a 1.38 API server stores (for1_38)."""
    case = _generate(seed, index)
    _add_storage(case, random.Random(seed * 7_919 + index + 17))
    if version != "1.37":
        for1_38(case.items)
    return case


def for1_38(items: list[dict]) -> None:
    """v1.38.0-beta.0's validation refuses `disruptionMode: all` on a PodGroup or CompositePodGroup
    whose scheduling policy is not gang ("cannot have \"all\" disruption mode when scheduling
    policy is other than \"gang\"", measured: 15 of 40 generated 1.37 clusters were refused).
    Such a group gets `single` instead, after the case is drawn, so the random draws (and every
    other object) stay those of the 1.37 case with the same numbers."""
    for o in items:
        if refused_by_1_38(o):
            o["spec"]["disruptionMode"] = {"single": {}}


def refused_by_1_38(o: dict) -> bool:
    """A PodGroup or CompositePodGroup with `disruptionMode: all` and a policy other than gang."""
    spec = o.get("spec") or {}
    return o.get("kind") in ("PodGroup", "CompositePodGroup") and "all" in (spec.get("disruptionMode") or {}) \
        and "gang" not in (spec.get("schedulingPolicy") or {})


def _add_storage(case: GenCase, rng: random.Random) -> None:
    """Sometimes (15 %) a ReadWriteOncePod claim that a running pod of the question's namespace
    holds and the question's pending pods also mount (VolumeRestrictions: only one pod may use it;
    the holder is a victim candidate for a single pod, and workload-aware preemption spares it in
    v1.37.2). Its own random stream, so that adding it changed no earlier case's cluster."""
    if rng.random() >= 0.15:
        return
    ns = case.namespace
    pods = [o for o in case.items if o["kind"] == "Pod" and o["metadata"]["namespace"] == ns]
    holders = [o for o in pods if o["spec"].get("nodeName") and not o["metadata"].get("deletionTimestamp")]
    wanted = [o for o in pods if not o["spec"].get("nodeName") and (
        o["metadata"]["name"] == case.name if case.kind == "pod" else bool(o["spec"].get("schedulingGroup")))]
    if not holders or not wanted:
        return
    holder = rng.choice(holders)
    users = [holder] + rng.sample(wanted, 1)
    pv, pvc = "pv-rwop", "claim-rwop"
    case.items.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv},
                       "spec": {"accessModes": ["ReadWriteOncePod"], "capacity": {"storage": "1Gi"},
                                "hostPath": {"path": "/mnt/rwop"}, "persistentVolumeReclaimPolicy": "Retain",
                                "claimRef": {"namespace": ns, "name": pvc}},
                       "status": {"phase": "Bound"}})
    case.items.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"namespace": ns, "name": pvc,
                       "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                       "spec": {"accessModes": ["ReadWriteOncePod"], "resources": {"requests": {"storage": "1Gi"}},
                                "volumeName": pv, "storageClassName": ""},
                       "status": {"phase": "Bound", "accessModes": ["ReadWriteOncePod"], "capacity": {"storage": "1Gi"}}})
    for o in users:
        o["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": pvc}}]
    case.features.add("rwop")


def _generate(seed: int, index: int) -> GenCase:
    rng = random.Random(seed * 1_000_003 + index)
    medium = rng.random() < 0.2
    b = Builder(rng, medium)
    b.make_nodes()
    node_names = [n["metadata"]["name"] for n in b.nodes]
    tainted = {n["metadata"]["name"] for n in b.nodes if n["spec"].get("taints")}
    for ns in NAMESPACES:
        b.items.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})

    prios = sorted(rng.sample([0, 5, 10, 20, 50, 100, 200], rng.randint(2, 4)))
    preemptor_prio = 1000
    if rng.random() < 0.1:
        preemptor_prio = prios[-1]  # equal to the most important victims: they cannot be preempted
        b.features.add("equal-priority")
    # Every running pod gets its own start time. Equal start times are a tie upstream breaks by
    # the order of pods in its node cache (default preemption: MoreImportantPod has no further
    # tie-break) or by UID (workload-aware preemption: random UIDs in the oracle), neither of which
    # a snapshot can reproduce: such cases cannot be compared, so the generator makes none.
    next_start = iter(range(BASE, BASE + 10**6, 61))

    def start_time() -> int:
        return next(next_start) + rng.randint(0, 40)
    apps = ["web", "batch", "ml"]
    tolerate_all = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]

    # Victim groups: PodGroups (and sometimes a CPG tree) of lower priority, members spread.
    n_groups = rng.choice([0, 0, 1, 1, 2]) if not medium else rng.randint(1, 3)
    for gi in range(n_groups):
        ns = rng.choice(NAMESPACES)
        prio = rng.choice(prios)
        mode = rng.choice(["all", "single", None])
        b.features.add("all-victims" if mode == "all" else "single-victims")
        size = rng.randint(2, 4)
        gname = f"victim-pg{gi}"
        parent = None
        if rng.random() < 0.25:
            parent = f"victim-cpg{gi}"
            b.items.append(_group("CompositePodGroup", ns, parent, prio, {"basic": {}}, rng.choice(["all", None])))
            b.features.add("cpg-victims")
        policy = {"gang": {"minCount": rng.randint(1, size)}} if rng.random() < 0.5 else {"basic": {}}
        b.items.append(_group("PodGroup", ns, gname, prio, policy, mode, parent))
        app = rng.choice(apps)
        for k in range(size):
            cpu = rng.choice([500, 1000])
            cands = [n for n in node_names if b.fits(n, cpu) and n not in tainted]
            if not cands:
                break
            node = rng.choice(cands)
            b.place(node, cpu)
            b.pod(ns, f"{gname}-{k}", prio, cpu, node, {"app": app, "group": gname}, start_time(), group=gname)

    # Standalone running pods until the cluster is near full.
    target_fill = rng.uniform(0.7, 1.0)
    i = 0
    for node in node_names:
        cap = b.free[node] + 0
        total = {n["metadata"]["name"]: int(float(n["status"]["allocatable"]["cpu"].rstrip("m")) * (1 if n["status"]["allocatable"]["cpu"].endswith("m") else 1000)) for n in b.nodes}[node]
        while b.free[node] > total * (1 - target_fill):
            cpu = rng.choice([250, 500, 500, 1000, 1000, 2000])
            if not b.fits(node, cpu):
                cpu = b.free[node] if b.free[node] >= 250 else 0
                if cpu == 0:
                    break
            ns = rng.choice(NAMESPACES)
            prio = rng.choice(prios)
            extra: dict[str, Any] = {}
            if node in tainted:
                extra["tolerations"] = tolerate_all
            labels = {"app": rng.choice(apps)}
            if rng.random() < 0.05:
                # a running pod whose required anti-affinity selects the preemptor's pods
                extra["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"role": "preemptor"}}, "topologyKey": "kubernetes.io/hostname"}]}}
                b.features.add("victim-anti-affinity")
            b.place(node, cpu)
            p = b.pod(ns, f"run-{i}", prio, cpu, node, labels, start_time(), extra_spec=extra)
            if rng.random() < 0.04:
                p["metadata"]["deletionTimestamp"] = _ts(BASE + 7200)
                p["metadata"]["deletionGracePeriodSeconds"] = 30
                b.features.add("terminating")
            i += 1
        del cap

    # PDBs over some app labels.
    if rng.random() < 0.4:
        b.features.add("pdb")
        for k in range(rng.randint(1, 2)):
            ns = rng.choice(NAMESPACES)
            r = rng.random()
            if r < 0.15:
                selector: dict | None = {}
                b.features.add("pdb-empty")
            elif r < 0.3:
                selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": rng.sample(apps, 2)}]}
                b.features.add("pdb-expr")
            else:
                selector = {"matchLabels": {"app": rng.choice(apps)}}
            matched = sum(1 for o in b.items if o["kind"] == "Pod" and o["metadata"]["namespace"] == ns
                          and o["spec"].get("nodeName"))
            b.items.append(_pdb(ns, f"pdb-{k}", selector, rng.randint(0, 2), matched))

    # The preemptor.
    r = rng.random()
    ns = rng.choice(NAMESPACES)
    pod_extra: dict[str, Any] = {}
    labels = {"role": "preemptor", "app": "new"}
    if rng.random() < 0.1:
        pod_extra["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": rng.choice(apps)}}, "topologyKey": "kubernetes.io/hostname"}]}}
        b.features.add("anti-affinity")
    elif rng.random() < 0.1:
        pod_extra["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": rng.choice(apps)}},
                                               "topologyKey": "topology.kubernetes.io/zone"}}]}}
        b.features.add("affinity-preferred")
    if rng.random() < 0.1:
        aff = pod_extra.setdefault("affinity", {})
        aff["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-0"]}]}]}}
        b.features.add("node-affinity")
    if rng.random() < 0.1:
        pod_extra["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                   "whenUnsatisfiable": "DoNotSchedule",
                                                   "labelSelector": {"matchLabels": {"role": "preemptor"}}}]
        b.features.add("spread")
    if rng.random() < 0.06:
        pod_extra["containers"] = None  # set below with a host port
        b.features.add("host-ports")
    if tainted and rng.random() < 0.5:
        pod_extra["tolerations"] = tolerate_all
    never = rng.random() < 0.06
    if never:
        b.features.add("never")

    def preemptor_pod(name: str, cpu: int, group: str | None) -> dict:
        extra = {k: v for k, v in pod_extra.items() if k != "containers"}
        if never:
            extra["preemptionPolicy"] = "Never"
        p = b.pod(ns, name, preemptor_prio, cpu, None, labels, group=group, extra_spec=extra)
        if "containers" in pod_extra:
            p["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
        return p

    big = max(int(n["status"]["allocatable"]["cpu"].rstrip("m")) * (1 if n["status"]["allocatable"]["cpu"].endswith("m") else 1000)
              for n in b.nodes)
    if "host-ports" in b.features:
        # some running pods hold the port
        running = [o for o in b.items if o["kind"] == "Pod" and o["spec"].get("nodeName")]
        for o in rng.sample(running, min(len(running), rng.randint(1, 3))):
            o["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
    if r < 0.3:
        b.features.add("pod")
        cpu = rng.choice([1000, 1500, 2000, min(3000, big)])
        preemptor_pod("preemptor", cpu, None)
        return GenCase(f"gen-{seed}-{index}", seed, b.items, "pod", ns, "preemptor", b.features)
    if r < 0.85:
        size = rng.randint(2, 6) if not medium else rng.choice([4, 8, 16, 32, 64])
        gang = rng.random() < 0.6
        policy: dict = {"gang": {"minCount": rng.choice([size, rng.randint(1, size)])}} if gang else {"basic": {}}
        b.features.add("gang" if gang else "basic")
        cpu = rng.choice([500, 1000, 1000, 2000]) if size <= 8 else rng.choice([250, 500])
        running_members = 0
        if rng.random() < 0.15:
            # a partly scheduled group: members already running
            running_members = rng.randint(1, 2)
            b.features.add("running-members")
        b.items.append(_group("PodGroup", ns, "job", preemptor_prio, policy, rng.choice([None, "all"])))
        for k in range(running_members):
            cands = [n for n in node_names if b.fits(n, cpu) and n not in tainted]
            if not cands:
                break
            node = rng.choice(cands)
            b.place(node, cpu)
            b.pod(ns, f"job-run-{k}", preemptor_prio, cpu, node, labels, start_time(), group="job",
                  extra_spec={"preemptionPolicy": "Never"} if never else None)
        for k in range(size):
            preemptor_pod(f"job-{k}", cpu, "job")
        if sum(b.free.values()) >= cpu:
            b.features.add("partial-fit")
        return GenCase(f"gen-{seed}-{index}", seed, b.items, "podgroup", ns, "job", b.features)
    b.features.add("cpg")
    gang = rng.random() < 0.6
    b.items.append(_group("CompositePodGroup", ns, "tree", preemptor_prio,
                          {"gang": {"minGroupCount": 2}} if gang else {"basic": {}}, None))
    for c in range(2):
        size = rng.randint(1, 3)
        cpu = rng.choice([500, 1000, 2000])
        b.items.append(_group("PodGroup", ns, f"tree-{c}", preemptor_prio, {"gang": {"minCount": size}}, None, parent="tree"))
        for k in range(size):
            preemptor_pod(f"tree-{c}-{k}", cpu, f"tree-{c}")
    return GenCase(f"gen-{seed}-{index}", seed, b.items, "compositepodgroup", ns, "tree", b.features)
