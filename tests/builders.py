"""Fluent builders for test objects, in the manner of upstream's `st.MakePod().Name("p").Req(...).Obj()`
(k8s.io/kubernetes pkg/scheduler/testing/wrappers.go): each call sets one thing and returns the
builder; `.obj()` gives the plain Kubernetes object (a dict, as `kubectl get -o json` would), so the
same objects feed our snapshot converter, the fixtures and the real API server of the oracle.

    pod = make_pod("p", "team-a").priority(10).req(cpu="500m", memory="64Mi").on("node1", start=T).obj()
    node = make_node("node1").zone("z0").alloc(cpu="4", memory="16Gi").obj()
    pg = make_podgroup("job", "team-a").gang(4).priority(1000).mode("all").obj()
    pdb = make_pdb("pdb", "team-a").match_labels(app="web").allowed(1, matched=3).obj()
"""

from __future__ import annotations

import copy
import time
from typing import Any

PAUSE = "registry.k8s.io/pause:3.10"


def ts(sec: int) -> str:
    """An RFC 3339 UTC timestamp (what the API server writes) from epoch seconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(sec))


def cpu(milli: int) -> str:
    """A CPU quantity as a user writes it: whole cores without a suffix, else millicores."""
    return f"{milli}m" if milli % 1000 else str(milli // 1000)


class _Builder:
    _o: dict

    def obj(self) -> dict:
        return copy.deepcopy(self._o)

    def label(self, **kv: str) -> "_Builder":
        self._o["metadata"].setdefault("labels", {}).update(kv)
        return self

    def annotate(self, **kv: str) -> "_Builder":
        self._o["metadata"].setdefault("annotations", {}).update(kv)
        return self


class PodBuilder(_Builder):
    def __init__(self, name: str, namespace: str = "default"):
        self._o = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": namespace, "name": name},
                   "spec": {"containers": [], "terminationGracePeriodSeconds": 30}, "status": {"phase": "Pending"}}

    @property
    def spec(self) -> dict:
        return self._o["spec"]

    def priority(self, p: int) -> "PodBuilder":
        self.spec["priority"] = p
        return self

    def container(self, name: str = "c", requests: dict | None = None, limits: dict | None = None,
                  ports: list[int] | None = None) -> "PodBuilder":
        """An app container. `requests`/`limits` are resource maps ({"cpu": "500m"}); either may be
        absent (the API server defaults missing requests from limits: SetDefaults_Pod)."""
        self.spec["containers"].append(_container(name, requests, limits, ports))
        return self

    def req(self, **resources: str) -> "PodBuilder":
        """One container requesting exactly these resources (cpu=, memory=; other names as
        `**{"nvidia.com/gpu": "1"}`)."""
        return self.container(f"c{len(self.spec['containers'])}", requests=_res(resources))

    def limits_only(self, **resources: str) -> "PodBuilder":
        return self.container(f"c{len(self.spec['containers'])}", limits=_res(resources))

    def init_container(self, name: str, requests: dict | None = None, limits: dict | None = None,
                       sidecar: bool = False) -> "PodBuilder":
        """An init container; `sidecar` makes it a restartable one (restartPolicy: Always), whose
        requests add to the app containers' instead of being a maximum (KEP-753)."""
        c = _container(name, requests, limits, None)
        if sidecar:
            c["restartPolicy"] = "Always"
        self.spec.setdefault("initContainers", []).append(c)
        return self

    def on(self, node: str, start: int | None = None) -> "PodBuilder":
        """Bound to `node` and Running (started at epoch second `start`)."""
        self.spec["nodeName"] = node
        self._o["status"] = {"phase": "Running"}
        if start is not None:
            self._o["status"]["startTime"] = ts(start)
        return self

    def created(self, sec: int) -> "PodBuilder":
        self._o["metadata"]["creationTimestamp"] = ts(sec)
        return self

    def group(self, pod_group: str) -> "PodBuilder":
        self.spec["schedulingGroup"] = {"podGroupName": pod_group}
        return self

    def nominated(self, node: str) -> "PodBuilder":
        """Pending with status.nominatedNodeName (what a preemption left behind)."""
        self._o["status"]["nominatedNodeName"] = node
        return self

    def never(self) -> "PodBuilder":
        self.spec["preemptionPolicy"] = "Never"
        return self

    def gated(self, *names: str) -> "PodBuilder":
        self.spec["schedulingGates"] = [{"name": n} for n in names]
        return self

    def scheduler(self, name: str) -> "PodBuilder":
        self.spec["schedulerName"] = name
        return self

    def uid(self, uid: str) -> "PodBuilder":
        self._o["metadata"]["uid"] = uid
        return self

    def owned_by(self, kind: str, name: str, controller: bool = True, api_version: str = "apps/v1") -> "PodBuilder":
        """One more ownerReferences entry, as a controller writes it (uid and blockOwnerDeletion too)."""
        self._o["metadata"].setdefault("ownerReferences", []).append(
            {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"uid-{kind.lower()}-{name}",
             "controller": controller, "blockOwnerDeletion": True})
        return self

    def grace(self, seconds: int) -> "PodBuilder":
        self.spec["terminationGracePeriodSeconds"] = seconds
        return self

    def terminating(self, at: int, grace: int = 30) -> "PodBuilder":
        self._o["metadata"]["deletionTimestamp"] = ts(at)
        self._o["metadata"]["deletionGracePeriodSeconds"] = grace
        return self

    def toleration(self, key: str, operator: str = "Exists", value: str | None = None, effect: str | None = None) -> "PodBuilder":
        t: dict[str, Any] = {"key": key, "operator": operator}
        if value is not None:
            t["value"] = value
        if effect:
            t["effect"] = effect
        self.spec.setdefault("tolerations", []).append(t)
        return self

    def node_selector(self, **kv: str) -> "PodBuilder":
        self.spec.setdefault("nodeSelector", {}).update(kv)
        return self

    def node_affinity_in(self, key: str, values: list[str], required: bool = True, weight: int = 10) -> "PodBuilder":
        na = self.spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        expr = {"key": key, "operator": "In", "values": list(values)}
        if required:
            na.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []})[
                "nodeSelectorTerms"].append({"matchExpressions": [expr]})
        else:
            na.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "preference": {"matchExpressions": [expr]}})
        return self

    def pod_affinity(self, selector: dict, topology_key: str, anti: bool = False, required: bool = True,
                     weight: int = 50) -> "PodBuilder":
        kind = "podAntiAffinity" if anti else "podAffinity"
        a = self.spec.setdefault("affinity", {}).setdefault(kind, {})
        term = {"labelSelector": selector, "topologyKey": topology_key}
        if required:
            a.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            a.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append({"weight": weight, "podAffinityTerm": term})
        return self

    def spread(self, max_skew: int, topology_key: str, selector: dict, hard: bool = True) -> "PodBuilder":
        self.spec.setdefault("topologySpreadConstraints", []).append(
            {"maxSkew": max_skew, "topologyKey": topology_key,
             "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway", "labelSelector": selector})
        return self

    def host_port(self, port: int) -> "PodBuilder":
        self.spec["containers"][0].setdefault("ports", []).append({"containerPort": port, "hostPort": port, "protocol": "TCP"})
        return self

    def runtime_class(self, name: str) -> "PodBuilder":
        self.spec["runtimeClassName"] = name
        return self

    def overhead(self, **resources: str) -> "PodBuilder":
        self.spec["overhead"] = _res(resources)
        return self


class NodeBuilder(_Builder):
    def __init__(self, name: str):
        self._o = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                   "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
        self.alloc(cpu="4", memory="16Gi")

    def zone(self, z: str) -> "NodeBuilder":
        self._o["metadata"]["labels"]["topology.kubernetes.io/zone"] = z
        return self

    def alloc(self, pods: str = "110", **resources: str) -> "NodeBuilder":
        a = _res(resources) | {"pods": pods}
        self._o["status"]["allocatable"] = a
        self._o["status"]["capacity"] = dict(a)
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> "NodeBuilder":
        t = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        self._o["spec"].setdefault("taints", []).append(t)
        return self

    def unschedulable(self) -> "NodeBuilder":
        self._o["spec"]["unschedulable"] = True
        return self


class GroupBuilder(_Builder):
    """A PodGroup (scheduling.k8s.io/v1beta1) or a CompositePodGroup (v1alpha3)."""

    def __init__(self, kind: str, name: str, namespace: str):
        api = "scheduling.k8s.io/v1beta1" if kind == "PodGroup" else "scheduling.k8s.io/v1alpha3"
        self._o = {"apiVersion": api, "kind": kind, "metadata": {"namespace": namespace, "name": name},
                   "spec": {"schedulingPolicy": {"basic": {}}}}

    def gang(self, min_count: int) -> "GroupBuilder":
        key = "minCount" if self._o["kind"] == "PodGroup" else "minGroupCount"
        self._o["spec"]["schedulingPolicy"] = {"gang": {key: min_count}}
        return self

    def basic(self) -> "GroupBuilder":
        self._o["spec"]["schedulingPolicy"] = {"basic": {}}
        return self

    def priority(self, p: int) -> "GroupBuilder":
        self._o["spec"]["priority"] = p
        return self

    def mode(self, m: str | None) -> "GroupBuilder":
        """disruptionMode: "all", "single", or None (unset)."""
        if m:
            self._o["spec"]["disruptionMode"] = {m: {}}
        else:
            self._o["spec"].pop("disruptionMode", None)
        return self

    def parent(self, cpg: str | None) -> "GroupBuilder":
        if cpg:
            self._o["spec"]["parentCompositePodGroupName"] = cpg
        return self

    def preemption_policy(self, policy: str) -> "GroupBuilder":
        self._o["spec"]["preemptionPolicy"] = policy
        return self


class PdbBuilder(_Builder):
    def __init__(self, name: str, namespace: str):
        self._o = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"namespace": namespace, "name": name},
                   "spec": {"selector": {}}, "status": {"observedGeneration": 1}}

    def match_labels(self, **kv: str) -> "PdbBuilder":
        self._o["spec"]["selector"] = {"matchLabels": dict(kv)}
        return self

    def match_expressions(self, *exprs: dict) -> "PdbBuilder":
        self._o["spec"]["selector"] = {"matchExpressions": list(exprs)}
        return self

    def selector(self, sel: dict | None) -> "PdbBuilder":
        """None leaves the selector out (the PDB then selects nothing; {} selects every pod of the namespace)."""
        if sel is None:
            self._o["spec"].pop("selector", None)
        else:
            self._o["spec"]["selector"] = sel
        return self

    def allowed(self, allowed: int, matched: int) -> "PdbBuilder":
        """Status as the disruption controller would write it for `matched` healthy pods."""
        self._o["spec"]["minAvailable"] = max(0, matched - allowed)
        self._o["status"].update({"disruptionsAllowed": allowed, "currentHealthy": matched,
                                  "desiredHealthy": max(0, matched - allowed), "expectedPods": matched})
        return self

    def disrupted(self, pod: str, at: int) -> "PdbBuilder":
        """A pod the eviction API already admitted for deletion (status.disruptedPods)."""
        self._o["status"].setdefault("disruptedPods", {})[pod] = ts(at)
        return self


class RuntimeClassBuilder(_Builder):
    def __init__(self, name: str, handler: str = "runc"):
        self._o = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": handler}

    def overhead(self, **resources: str) -> "RuntimeClassBuilder":
        self._o["overhead"] = {"podFixed": _res(resources)}
        return self

    def node_selector(self, **kv: str) -> "RuntimeClassBuilder":
        self._o.setdefault("scheduling", {})["nodeSelector"] = dict(kv)
        return self

    def toleration(self, key: str, operator: str = "Exists", value: str | None = None,
                   effect: str | None = None) -> "RuntimeClassBuilder":
        t: dict[str, Any] = {"key": key, "operator": operator}
        if value is not None:
            t["value"] = value
        if effect:
            t["effect"] = effect
        self._o.setdefault("scheduling", {}).setdefault("tolerations", []).append(t)
        return self


class LimitRangeBuilder(_Builder):
    def __init__(self, name: str, namespace: str):
        self._o = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"namespace": namespace, "name": name},
                   "spec": {"limits": []}}

    def item(self, type_: str = "Container", *, default: dict | None = None, default_request: dict | None = None,
             max: dict | None = None, min: dict | None = None, ratio: dict | None = None) -> "LimitRangeBuilder":
        it: dict[str, Any] = {"type": type_}
        for k, v in (("default", default), ("defaultRequest", default_request), ("max", max), ("min", min),
                     ("maxLimitRequestRatio", ratio)):
            if v:
                it[k] = dict(v)
        self._o["spec"]["limits"].append(it)
        return self


def make_runtime_class(name: str, handler: str = "runc") -> RuntimeClassBuilder:
    return RuntimeClassBuilder(name, handler)


def make_limit_range(name: str, namespace: str = "default") -> LimitRangeBuilder:
    return LimitRangeBuilder(name, namespace)


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)


def make_podgroup(name: str, namespace: str = "default") -> GroupBuilder:
    return GroupBuilder("PodGroup", name, namespace)


def make_cpg(name: str, namespace: str = "default") -> GroupBuilder:
    return GroupBuilder("CompositePodGroup", name, namespace)


def make_pdb(name: str, namespace: str = "default") -> PdbBuilder:
    return PdbBuilder(name, namespace)


def _res(kv: dict[str, str]) -> dict[str, str]:
    return dict(kv)


def _container(name: str, requests: dict | None, limits: dict | None, ports: list[int] | None) -> dict:
    c: dict[str, Any] = {"name": name, "image": PAUSE, "resources": {}}
    if requests:
        c["resources"]["requests"] = dict(requests)
    if limits:
        c["resources"]["limits"] = dict(limits)
    if ports:
        c["ports"] = [{"containerPort": p, "hostPort": p, "protocol": "TCP"} for p in ports]
    return c
