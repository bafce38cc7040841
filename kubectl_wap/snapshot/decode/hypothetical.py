"""Hypothetical work: a PodGroup (or CompositePodGroup tree) and its pods from a manifest file,
or built from flags. Produces raw Kubernetes objects that go through priority admission like any
hand-written object (they usually carry priorityClassName, not spec.priority)."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ...errors import UserError
from ...quantity import QuantityError, parse_quantity
from . import workload_groups, workloads
from .workloads import CREATED  # the creation time of hypothetical objects (hypothetical.CREATED for importers)



@dataclass
class GroupSpec:
    name: str
    namespace: str
    replicas: int | None  # None: keep the existing group's pending count (an existing group only)
    requests: dict[str, str] = field(default_factory=dict)
    priority_class: str = ""
    min_count: int | None = None
    disruption_mode: str = "single"
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict[str, str]] = field(default_factory=list)
    preemption_policy: str | None = None


def parse_requests(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in filter(None, (x.strip() for x in (text or "").split(","))):
        if "=" not in part:
            raise UserError(f"invalid --requests entry {part!r}: want NAME=QUANTITY, e.g. cpu=8,memory=64Gi")
        k, v = (x.strip() for x in part.split("=", 1))
        try:
            if parse_quantity(v) < 0:
                raise UserError(f"invalid --requests {k}={v}: must not be negative")
        except QuantityError as e:
            raise UserError(f"invalid --requests {k}={v}: {e}") from None
        out[k] = v
    return out


def parse_selector(items: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for it in items:
        for part in filter(None, (x.strip() for x in it.split(","))):
            if "=" not in part:
                raise UserError(f"invalid --node-selector {part!r}: want key=value")
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def parse_toleration(text: str) -> dict[str, str]:
    """key=value:Effect, key:Effect, key=value, or key (Exists)."""
    effect = ""
    body = text
    if ":" in text:
        body, effect = text.rsplit(":", 1)
        if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute", ""):
            raise UserError(f"invalid --toleration {text!r}: effect must be NoSchedule, PreferNoSchedule or NoExecute")
    if "=" in body:
        k, v = body.split("=", 1)
        if not k:
            # core validation: an empty key tolerates every taint, and only with operator Exists
            raise UserError(f"invalid --toleration {text!r}: a toleration with a value needs a key (key=value:Effect); "
                            "an empty key (tolerate every taint) cannot have a value")
        tol = {"key": k, "operator": "Equal", "value": v}
    else:
        tol = {"key": body, "operator": "Exists"}
    if effect:
        tol["effect"] = effect
    return tol


def group_from_flags(spec: GroupSpec) -> list[dict[str, Any]]:
    if spec.replicas is None:
        raise UserError(f"PodGroup {spec.namespace}/{spec.name} is not in the cluster state: a new hypothetical group needs --replicas N")
    if spec.replicas < 1:
        raise UserError("--replicas must be at least 1")
    if spec.disruption_mode not in ("single", "all"):
        raise UserError("--disruption-mode must be single or all")
    if spec.min_count is not None and spec.min_count < 1:
        raise UserError("--min-count must be at least 1")
    pg_spec: dict[str, Any] = {
        "schedulingPolicy": {"gang": {"minCount": spec.min_count}} if spec.min_count else {"basic": {}},
        "disruptionMode": {spec.disruption_mode: {}},
    }
    if spec.priority_class:
        pg_spec["priorityClassName"] = spec.priority_class
    if spec.preemption_policy:
        pg_spec["preemptionPolicy"] = spec.preemption_policy
    pg = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"namespace": spec.namespace, "name": spec.name, "uid": f"hypothetical-{spec.namespace}-{spec.name}", "creationTimestamp": CREATED},
        "spec": pg_spec,
    }
    template = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": spec.namespace, "name": spec.name, "creationTimestamp": CREATED},
        "spec": {
            "schedulingGroup": {"podGroupName": spec.name},
            "containers": [{"name": "main", "image": "hypothetical", "resources": {"requests": dict(spec.requests)}}],
        },
        "status": {"phase": "Pending"},
    }
    if spec.priority_class:
        template["spec"]["priorityClassName"] = spec.priority_class
    if spec.preemption_policy:
        template["spec"]["preemptionPolicy"] = spec.preemption_policy
    if spec.node_selector:
        template["spec"]["nodeSelector"] = dict(spec.node_selector)
    if spec.tolerations:
        template["spec"]["tolerations"] = list(spec.tolerations)
    return [pg] + replicate(template, spec.replicas)


@dataclass
class FlagsWork:
    """Hypothetical work from flags, resolved against the cluster once it is read (`resolve`).
    A new name is a new group built from the flags alone (group_from_flags). An existing
    PodGroup is modified, not replaced: the flags change only what they name, and the rest of
    the group and of its pods' template (a pending member, else any member) is kept, so
    `whatif podgroup job-1 --replicas 4` asks about job-1 with 4 pending pods, not about a bare
    default group (issue 30). Iterating gives the resolved objects."""

    spec: GroupSpec
    given: tuple[str, ...]  # the flags given, as typed (--replicas, --requests, ...)
    objects: list[dict[str, Any]] | None = None
    note: str = ""  # one line: what was changed, for the report's warnings

    def __iter__(self):
        if self.objects is None:
            raise RuntimeError("FlagsWork used before resolve()")
        return iter(self.objects)

    def __bool__(self) -> bool:
        return True

    def resolve(self, items: list[Any]) -> list[dict[str, Any]]:
        spec = self.spec
        pg = next((o for o in items if isinstance(o, dict) and o.get("kind") == "PodGroup"
                   and _ns(o) == spec.namespace and (o.get("metadata") or {}).get("name") == spec.name), None)
        if pg is None:
            self.objects = group_from_flags(spec)
            return self.objects
        members = [o for o in items if isinstance(o, dict) and o.get("kind") == "Pod" and _ns(o) == spec.namespace
                   and ((o.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") == spec.name]
        pending = [o for o in members if not (o.get("spec") or {}).get("nodeName")]
        n = spec.replicas if spec.replicas is not None else len(pending)
        if n < 1:
            raise UserError(f"PodGroup {spec.namespace}/{spec.name} has no pending pods: pass --replicas N to ask about N more")
        new_pg = copy.deepcopy(pg)
        gspec = new_pg.setdefault("spec", {})
        if spec.min_count is not None:
            gspec["schedulingPolicy"] = {"gang": {"minCount": spec.min_count}}
        if "--disruption-mode" in self.given:
            gspec["disruptionMode"] = {spec.disruption_mode: {}}
        if spec.priority_class:
            gspec["priorityClassName"] = spec.priority_class
            gspec.pop("priority", None)  # priority admission resolves the new class
        if spec.preemption_policy:
            gspec["preemptionPolicy"] = spec.preemption_policy
        source = pending[0] if pending else (members[0] if members else None)
        if source is None:
            tmpl = group_from_flags(dataclasses.replace(spec, replicas=1))[1]
        else:
            tmpl = {"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"namespace": spec.namespace, "name": spec.name,
                                 **({"labels": dict(source["metadata"]["labels"])} if (source.get("metadata") or {}).get("labels") else {})},
                    "spec": copy.deepcopy(dict(source.get("spec") or {})), "status": {"phase": "Pending"}}
            self._apply_pod_flags(tmpl["spec"])
        tmpl["metadata"]["name"] = f"{spec.name}-whatif"
        self.objects = [new_pg] + replicate(tmpl, n)
        changed = [f for f in self.given if f != "--replicas"]
        gang = (gspec.get("schedulingPolicy") or {}).get("gang") or {}
        min_count = gang.get("minCount") if isinstance(gang, dict) else None
        short = (isinstance(min_count, int) and spec.min_count is None and n < min_count
                 and not [m for m in members if (m.get("spec") or {}).get("nodeName")])
        self.note = (f"hypothetical work: PodGroup {spec.namespace}/{spec.name} as the cluster has it, with {n} pending pod(s) "
                     f"{spec.name}-whatif-0..{n - 1}" + (f" ({len(pending)} pending now)" if spec.replicas is not None else "")
                     + (f"; changed by {', '.join(changed)}" if changed else "")
                     + (f"; the rest of the group and of its pods' template (from {source['metadata']['name']}) kept" if source else
                        "; it has no pods, so the pods are built from the flags alone")
                     + (f"; its minCount {min_count} is kept, which {n} pod(s) cannot meet (add --min-count to change it)" if short else ""))
        return self.objects

    def _apply_pod_flags(self, pspec: dict[str, Any]) -> None:
        spec = self.spec
        pspec.pop("nodeName", None)
        if spec.requests:
            cs = pspec.get("containers") or [{"name": "main", "image": "hypothetical"}]
            c0 = dict(cs[0])
            res = dict(c0.get("resources") or {})
            res["requests"] = {**(res.get("requests") or {}), **spec.requests}
            if isinstance(res.get("limits"), dict):  # a limit below the new request would be refused by the API server
                res["limits"] = {k: v for k, v in res["limits"].items() if k not in spec.requests}
            c0["resources"] = res
            pspec["containers"] = [c0] + list(cs[1:])
        if spec.priority_class:
            pspec["priorityClassName"] = spec.priority_class
            pspec.pop("priority", None)
        if spec.preemption_policy:
            pspec["preemptionPolicy"] = spec.preemption_policy
        if spec.node_selector:
            pspec["nodeSelector"] = {**(pspec.get("nodeSelector") or {}), **spec.node_selector}
        if spec.tolerations:
            pspec["tolerations"] = list(pspec.get("tolerations") or []) + list(spec.tolerations)


class FileWork(list):
    """The objects of a `-f` file, with a note of how a workload's pods were read ("" for none)."""

    def __init__(self, objects: list[dict[str, Any]], note: str = "") -> None:
        super().__init__(objects)
        self.note = note


def _ns(o: dict[str, Any]) -> str:
    return (o.get("metadata") or {}).get("namespace") or "default"


def replicate(template: dict[str, Any], n: int) -> list[dict[str, Any]]:
    base = template["metadata"]["name"]
    ns = template["metadata"].get("namespace", "default")
    out = []
    for i in range(n):
        p = copy.deepcopy(template)
        p["metadata"]["name"] = f"{base}-{i}"
        p["metadata"]["uid"] = f"hypothetical-{ns}-{base}-{i}"
        p["metadata"].setdefault("creationTimestamp", CREATED)
        p["spec"].pop("nodeName", None)
        status = p.get("status")
        p["status"] = {**(status if isinstance(status, dict) else {}), "phase": "Pending"}
        out.append(p)
    return out


ADMISSION_KINDS = ("RuntimeClass", "LimitRange")  # what create-time admission of the file's pods reads


def from_manifest(items: list[Any], replicas: int | None, namespace: str | None,
                  notes: list[str] | None = None) -> tuple[list[dict[str, Any]], str, str, str]:
    """Objects of a `whatif -f` file -> (raw objects, kind, namespace, name of the preemptor). A
    workload (workloads.py: a Job, Deployment, JobSet, PyTorchJob, RayCluster, ...) stands for the
    pods its controller would create now (`notes` gets a line saying how they were read)."""
    objs = [o for o in items if isinstance(o, dict)]
    if not objs:
        raise UserError("the -f file holds no Kubernetes objects")
    # RuntimeClasses and LimitRanges in the file exist when its pods are created (`kubectl apply -f`
    # creates them in file order, a namespace's LimitRange before the Job's pods): create-time
    # admission of the pods reads them (podadmission.py, via source.build), over the cluster's own.
    policy = [o for o in objs if o.get("kind") in ADMISSION_KINDS]
    objs = [o for o in objs if o.get("kind") not in ADMISSION_KINDS]
    for o in policy:
        md = o.get("metadata")
        if not isinstance(md, dict) or not isinstance(md.get("name"), str) or not md["name"]:
            raise UserError(f"the -f file: a {o['kind']} without metadata.name")
        if o["kind"] == "LimitRange" and namespace and not md.get("namespace"):
            md["namespace"] = namespace
    if policy and notes is not None:
        named = [f"{o['kind']} {(o['metadata'].get('namespace') + '/') if o['kind'] == 'LimitRange' else ''}{o['metadata']['name']}"
                 for o in policy]
        notes.append(f"the file's {', '.join(named[:-1]) + ' and ' if len(named) > 1 else ''}{named[-1]} are taken to exist when its "
                     "pods are created, as `kubectl apply -f` creates them first")
    if not objs:
        raise UserError("the -f file holds no pods, PodGroups or workloads to ask about")
    for o in objs:
        kind = o.get("kind")
        if kind not in ("Pod", "PodGroup", "CompositePodGroup") and not workloads.is_workload(o):
            shown = (repr(kind) if isinstance(kind, str) else "an object without kind" if kind is None
                     else f"a kind that is not a string ({type(kind).__name__})")
            raise UserError(f"the -f file may hold only PodGroups, CompositePodGroups, Pods and the workloads that create pods "
                            f"({workloads.READ}), and the RuntimeClasses and LimitRanges their pods are admitted with, found {shown}")
        # Shape checks before anything indexes into the object (junk must be one clear line).
        md = o.setdefault("metadata", {})
        if not isinstance(md, dict):
            raise UserError(f"the -f file: a {kind}'s metadata must be a map")
        name = md.get("name")
        if not isinstance(name, str) or not name:
            raise UserError(f"the -f file: a {kind} without metadata.name")
        if not isinstance(md.get("namespace", ""), str):
            raise UserError(f"the -f file: {kind} {name}: metadata.namespace must be a string")
        if not isinstance(o.setdefault("spec", {}), dict):
            raise UserError(f"the -f file: {kind} {name}: spec must be a map")
    for o in objs:
        md = o.setdefault("metadata", {})
        if namespace and not md.get("namespace"):
            md["namespace"] = namespace
        md.setdefault("creationTimestamp", CREATED)
        if o.get("kind") in ("Pod", "PodGroup", "CompositePodGroup"):
            md.setdefault("uid", f"hypothetical-{md.get('namespace', 'default')}-{md.get('name')}")
    controllers = [o for o in objs if workloads.is_workload(o)]
    if len(controllers) > 1:
        raise UserError(f"the -f file holds {len(controllers)} workloads: ask about one at a time")
    if controllers:
        if [o for o in objs if o.get("kind") == "Pod"]:
            raise UserError("the -f file holds a workload and Pods: give either the workload or the pods")
        workload = workloads.read_workload(controllers[0])
        if replicas is not None:
            workloads.with_replicas(workload, replicas)
        if workload.pods < 1:
            how = "; ".join(f"{t.label}: {t.later or t.how + ' is 0'}" for t in workload.templates)
            raise UserError(f"the -f file: {workload.kind} {workload.name} creates no pods now ({how})"
                            + (": pass --replicas N" if len(workload.templates) == 1 and workload.templates[0].rename else ""))
        workload_groups.check_labels(workload)
        rest = [o for o in objs if o is not controllers[0]]
        workload_groups.check_groups(workload, rest)
        if notes is not None:
            notes.append(workload_groups.describe(workload))
        objs = rest + workloads.make_pods(workload)
        replicas = None  # already applied to the workload's count
    pgs = [o for o in objs if o.get("kind") == "PodGroup"]
    cpgs = [o for o in objs if o.get("kind") == "CompositePodGroup"]
    pods = [o for o in objs if o.get("kind") == "Pod"]
    others = [o for o in objs if o.get("kind") not in ("Pod", "PodGroup", "CompositePodGroup")]
    if others:
        raise UserError(f"the -f file may hold only PodGroups, CompositePodGroups and Pods, found {others[0].get('kind')!r}")
    if replicas is not None:
        if len(pods) != 1:
            raise UserError("--replicas needs exactly one Pod template in the -f file")
        pods = replicate(pods[0], replicas)
    for p in pods:
        p.get("spec", {}).pop("nodeName", None)
    roots = [c for c in cpgs if not c.get("spec", {}).get("parentCompositePodGroupName")]
    if cpgs:
        if len(roots) != 1:
            raise UserError("the -f file must hold exactly one root CompositePodGroup")
        r = roots[0]
        kind = "compositepodgroup"
    elif pgs:
        if len(pgs) != 1:
            raise UserError("the -f file must hold exactly one PodGroup (or a CompositePodGroup tree)")
        r = pgs[0]
        kind = "podgroup"
        if replicas is not None:
            for p in pods:
                p["spec"]["schedulingGroup"] = {"podGroupName": r["metadata"]["name"]}
    else:
        if len(pods) != 1:
            raise UserError("without a PodGroup the -f file must hold exactly one Pod")
        r = pods[0]
        kind = "pod"
    md = r["metadata"]
    return pgs + cpgs + pods + policy, kind, md.get("namespace", "default"), md["name"]


class Replacement:
    """Hypothetical work replaces what it names: an existing PodGroup/CompositePodGroup of the
    same name, pods of the same name, and the pending (unbound) pods of a replaced PodGroup, so
    the analysis never mixes the hypothetical group with the real one. Bound pods of a replaced
    group stay: they are its running members."""

    def __init__(self, extra: list[dict[str, Any]]):
        self.groups: set[tuple[str, str, str]] = set()
        self.pods: set[tuple[str, str]] = set()
        for o in extra:
            md = o.get("metadata") or {}
            key = (md.get("namespace") or "default", md.get("name"))
            if o.get("kind") in ("PodGroup", "CompositePodGroup"):
                self.groups.add((o["kind"], *key))
            elif o.get("kind") == "Pod":
                self.pods.add(key)
        self.pod_groups = {(ns, n) for k, ns, n in self.groups if k == "PodGroup"}
        self.dropped: dict[str, int] = {}

    def keep(self, o: Any) -> bool:
        if not isinstance(o, dict):
            return True
        kind = o.get("kind")
        if kind not in ("PodGroup", "CompositePodGroup", "Pod"):
            return True
        md = o.get("metadata") if isinstance(o.get("metadata"), dict) else {}
        ns, name = md.get("namespace") or "default", md.get("name")
        drop = False
        if kind in ("PodGroup", "CompositePodGroup"):
            drop = (kind, ns, name) in self.groups
        else:
            spec = o.get("spec") if isinstance(o.get("spec"), dict) else {}
            sg = spec.get("schedulingGroup") if isinstance(spec.get("schedulingGroup"), dict) else {}
            drop = (ns, name) in self.pods or (not spec.get("nodeName") and (ns, sg.get("podGroupName")) in self.pod_groups)
        if drop:
            label = f"{kind} {ns}/{name}" if kind != "Pod" else "pending pod(s)"
            self.dropped[label] = self.dropped.get(label, 0) + 1
        return not drop

    def warnings(self) -> list[str]:
        out = []
        for what, n in self.dropped.items():
            if what == "pending pod(s)":
                out.append(f"the hypothetical work replaces {n} pending pod(s) of the cluster state")
            else:
                out.append(f"the hypothetical work replaces {what} of the cluster state")
        return out
