"""`kubectl wap snapshot --redact`: replace identifying strings with stable keyed hashes.

Every object is first reduced by :func:`strip_object` (an allow-list: env, commands, probes,
annotations and managedFields never survive), then every identifying string is replaced by
``HMAC-SHA256(key, value)``, truncated to 75 bits and base32-encoded as ``r`` + 15 characters of
``[a-z2-7]``: a valid DNS label, label key and label value. ONE mapping serves every field, so each
relation the scheduler evaluates still holds after redaction: a pod's ``nodeName`` equals its node's
name and ``kubernetes.io/hostname`` label, ``schedulingGroup.podGroupName`` equals its PodGroup's
name, a namespace's ``kubernetes.io/metadata.name`` label equals the namespace, selectors match the
same labels, tolerations the same taints, images the node's image list.

Hashed: object names, namespaces, uids, owner references, label values, label keys (except
well-known ``*kubernetes.io/`` and ``*k8s.io/`` keys, which the scheduler and topology rely on),
selectors (matchLabels, matchExpressions keys/values, topologyKey, matchLabelKeys,
mismatchLabelKeys, namespaces), nodeSelector, node-affinity values (matchFields on metadata.name
map through the same node-name hash), taint and toleration keys/values, priority class names
(``system-*`` kept), PodGroup/CompositePodGroup names and references (podGroupName,
parentCompositePodGroupName, workloadRef), PDB selectors and disruptedPods, container names and
images, volume claim names, resource claim names, scheduling gates, non-default scheduler names.

Kept: kinds, API versions, resource names (``nvidia.com/gpu``) and quantities, priorities,
timestamps, operators, effects, phases, condition types/status/reason, port numbers, and label
values / requirement values that are plain integers (node-affinity ``Gt``/``Lt`` compare them as
numbers). With a random per-run key (the default) the hashes cannot be reversed by guessing names;
pass the same ``key`` to make two snapshots comparable.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from typing import Any

from .strip import strip_object

Obj = dict[str, Any]

_WELL_KNOWN_SUFFIXES = ("kubernetes.io", "k8s.io")
_KEEP_VALUES_OPS = ("Gt", "Lt")
DEFAULT_SCHEDULER = "default-scheduler"


def is_well_known_key(key: str) -> bool:
    """`topology.kubernetes.io/zone`, `kubernetes.io/hostname`, `node.k8s.io/x`: the key's DNS prefix
    is (a subdomain of) kubernetes.io or k8s.io."""
    prefix, sep, _ = key.rpartition("/")
    if not sep:
        return False
    return any(prefix == s or prefix.endswith("." + s) for s in _WELL_KNOWN_SUFFIXES)


_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"  # ascending in code-point order


def _b36(n: int, width: int) -> str:
    out = []
    for _ in range(width):
        n, r = divmod(n, 36)
        out.append(_B36[r])
    return "".join(reversed(out))


class Redactor:
    """`h` is the keyed hash. With `order` (a sorted list of every string that will be hashed),
    each hash is prefixed by the string's fixed-width base-36 rank, so redacted strings sort like
    the originals: kube-scheduler (and this engine) break ties by name (nodes in name order,
    pending pods by name, units by uid), so without it a redacted snapshot can pick different,
    equally valid victims."""

    def __init__(self, key: bytes | None = None, order: list[str] | None = None) -> None:
        self.key = key if key is not None else os.urandom(32)
        self._memo: dict[str, str] = {}
        self.collect: set[str] | None = None
        self._rank: dict[str, int] | None = None
        self._width = 0
        if order is not None:
            self._rank = {s: i for i, s in enumerate(order)}
            self._width = max(1, len(_b36(len(order), 13).lstrip("0")))

    # ------------------------------------------------------------------ primitives
    def h(self, s: Any) -> Any:
        """The keyed hash of one string (empty and non-strings are returned unchanged)."""
        if not isinstance(s, str) or not s:
            return s
        if self.collect is not None:
            self.collect.add(s)
            return s
        out = self._memo.get(s)
        if out is None:
            d = hmac.new(self.key, s.encode("utf-8"), hashlib.sha256).digest()
            digest = base64.b32encode(d[:10]).decode("ascii").lower()
            if self._rank is not None and s in self._rank:
                out = "r" + _b36(self._rank[s], self._width) + digest[:10]
            else:
                out = "r" + digest[:15]
            self._memo[s] = out
        return out

    def value(self, v: Any) -> Any:
        """A label / requirement value: integers stay (Gt/Lt), everything else is hashed."""
        if isinstance(v, str) and v.lstrip("-").isdigit():
            return v
        return self.h(v)

    def lkey(self, k: Any) -> Any:
        if not isinstance(k, str) or is_well_known_key(k):
            return k
        return self.h(k)

    def labels(self, m: Any) -> Any:
        if not isinstance(m, dict):
            return m
        return {self.lkey(k): self.value(v) for k, v in m.items()}

    def requirement(self, r: Any, node_field: bool = False) -> Any:
        if not isinstance(r, dict):
            return r
        out = dict(r)
        if node_field:
            # matchFields: only metadata.name exists; its values are node names.
            out["values"] = [self.h(v) for v in r.get("values") or []]
            return out
        out["key"] = self.lkey(r.get("key"))
        if isinstance(r.get("values"), list):
            out["values"] = list(r["values"]) if r.get("operator") in _KEEP_VALUES_OPS else [self.value(v) for v in r["values"]]
        return out

    def selector(self, s: Any) -> Any:
        if not isinstance(s, dict):
            return s
        out: Obj = {}
        if "matchLabels" in s:
            out["matchLabels"] = self.labels(s["matchLabels"])
        if "matchExpressions" in s:
            out["matchExpressions"] = [self.requirement(r) for r in s["matchExpressions"] or []]
        return out

    def node_term(self, t: Any) -> Any:
        if not isinstance(t, dict):
            return t
        out: Obj = {}
        if "matchExpressions" in t:
            out["matchExpressions"] = [self.requirement(r) for r in t["matchExpressions"] or []]
        if "matchFields" in t:
            out["matchFields"] = [self.requirement(r, node_field=True) for r in t["matchFields"] or []]
        return out

    def pod_term(self, t: Any) -> Any:
        if not isinstance(t, dict):
            return t
        out: Obj = {"topologyKey": self.lkey(t.get("topologyKey", ""))}
        if "labelSelector" in t:
            out["labelSelector"] = self.selector(t["labelSelector"])
        if "namespaceSelector" in t:
            out["namespaceSelector"] = self.selector(t["namespaceSelector"])
        if "namespaces" in t:
            out["namespaces"] = [self.h(n) for n in t["namespaces"] or []]
        for k in ("matchLabelKeys", "mismatchLabelKeys"):
            if k in t:
                out[k] = [self.lkey(x) for x in t[k] or []]
        return out

    def affinity(self, a: Any) -> Any:
        if not isinstance(a, dict):
            return a
        out: Obj = {}
        na = a.get("nodeAffinity")
        if isinstance(na, dict):
            o: Obj = {}
            req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
            if isinstance(req, dict):
                o["requiredDuringSchedulingIgnoredDuringExecution"] = {
                    "nodeSelectorTerms": [self.node_term(t) for t in req.get("nodeSelectorTerms") or []]
                }
            if "preferredDuringSchedulingIgnoredDuringExecution" in na:
                o["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": t.get("weight"), "preference": self.node_term(t.get("preference"))}
                    for t in na["preferredDuringSchedulingIgnoredDuringExecution"] or [] if isinstance(t, dict)
                ]
            out["nodeAffinity"] = o
        for kind in ("podAffinity", "podAntiAffinity"):
            pa = a.get(kind)
            if not isinstance(pa, dict):
                continue
            o = {}
            if "requiredDuringSchedulingIgnoredDuringExecution" in pa:
                o["requiredDuringSchedulingIgnoredDuringExecution"] = [
                    self.pod_term(t) for t in pa["requiredDuringSchedulingIgnoredDuringExecution"] or []
                ]
            if "preferredDuringSchedulingIgnoredDuringExecution" in pa:
                o["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": t.get("weight"), "podAffinityTerm": self.pod_term(t.get("podAffinityTerm"))}
                    for t in pa["preferredDuringSchedulingIgnoredDuringExecution"] or [] if isinstance(t, dict)
                ]
            out[kind] = o
        return out

    def priority_class(self, name: Any) -> Any:
        if isinstance(name, str) and name.startswith("system-"):
            return name
        return self.h(name)

    # ------------------------------------------------------------------ objects
    def metadata(self, md: Any) -> Obj:
        if not isinstance(md, dict):
            return {}
        out: Obj = {}
        for k in ("name", "namespace", "uid"):
            if k in md:
                out[k] = self.h(md[k])
        for k in ("creationTimestamp", "deletionTimestamp"):
            if k in md:
                out[k] = md[k]
        if "labels" in md:
            out["labels"] = self.labels(md["labels"])
        if isinstance(md.get("ownerReferences"), list):
            out["ownerReferences"] = [
                {k: (self.h(v) if k in ("name", "uid") else v) for k, v in o.items()} for o in md["ownerReferences"] if isinstance(o, dict)
            ]
        return out

    def container(self, c: Any) -> Any:
        if not isinstance(c, dict):
            return c
        out = dict(c)
        out["name"] = self.h(c.get("name", ""))
        if "image" in c:
            out["image"] = self.h(c["image"])
        if isinstance(c.get("ports"), list):
            out["ports"] = [{k: v for k, v in p.items() if k != "name"} for p in c["ports"] if isinstance(p, dict)]
        res = c.get("resources")
        if isinstance(res, dict) and isinstance(res.get("claims"), list):
            out["resources"] = dict(res, claims=[{k: self.h(v) for k, v in x.items()} for x in res["claims"] if isinstance(x, dict)])
        return out

    def pod(self, obj: Obj) -> Obj:
        out = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
        out["metadata"] = self.metadata(obj.get("metadata"))
        spec = obj.get("spec") or {}
        s: Obj = {}
        for k, v in spec.items():
            if k in ("containers", "initContainers"):
                s[k] = [self.container(c) for c in v or []]
            elif k == "nodeName":
                s[k] = self.h(v)
            elif k == "nodeSelector":
                s[k] = self.labels(v)
            elif k == "affinity":
                s[k] = self.affinity(v)
            elif k == "tolerations":
                s[k] = [self.toleration(t) for t in v or []]
            elif k == "topologySpreadConstraints":
                s[k] = [self.spread(t) for t in v or []]
            elif k == "priorityClassName":
                s[k] = self.priority_class(v)
            elif k == "schedulerName":
                s[k] = v if v == DEFAULT_SCHEDULER else self.h(v)
            elif k == "schedulingGroup":
                s[k] = {kk: self.h(vv) for kk, vv in v.items()} if isinstance(v, dict) else v
            elif k == "schedulingGates":
                s[k] = [{"name": self.h(g.get("name"))} for g in v or [] if isinstance(g, dict)]
            elif k == "volumes":
                s[k] = [self.volume(x) for x in v or []]
            elif k == "resourceClaims":
                s[k] = [{kk: self.h(vv) for kk, vv in c.items()} for c in v or [] if isinstance(c, dict)]
            else:  # overhead, resources, priority, preemptionPolicy, hostNetwork
                s[k] = v
        out["spec"] = s
        st = obj.get("status")
        if isinstance(st, dict):
            o = dict(st)
            if "nominatedNodeName" in st:
                o["nominatedNodeName"] = self.h(st["nominatedNodeName"])
            for key in ("containerStatuses", "initContainerStatuses"):
                if isinstance(st.get(key), list):
                    o[key] = [dict(c, name=self.h(c.get("name", ""))) for c in st[key] if isinstance(c, dict)]
            out["status"] = o
        return out

    def volume(self, v: Any) -> Any:
        if not isinstance(v, dict):
            return v
        out: Obj = {"name": self.h(v.get("name", ""))}
        if isinstance(v.get("persistentVolumeClaim"), dict):
            out["persistentVolumeClaim"] = {"claimName": self.h(v["persistentVolumeClaim"].get("claimName", ""))}
        if "ephemeral" in v:
            out["ephemeral"] = {}
        return out

    def toleration(self, t: Any) -> Any:
        if not isinstance(t, dict):
            return t
        out = dict(t)
        if "key" in t:
            out["key"] = self.lkey(t["key"])
        if "value" in t:
            out["value"] = self.value(t["value"])
        return out

    def spread(self, t: Any) -> Any:
        if not isinstance(t, dict):
            return t
        out = dict(t)
        out["topologyKey"] = self.lkey(t.get("topologyKey", ""))
        if "labelSelector" in t:
            out["labelSelector"] = self.selector(t["labelSelector"])
        if "matchLabelKeys" in t:
            out["matchLabelKeys"] = [self.lkey(k) for k in t["matchLabelKeys"] or []]
        return out

    def node(self, obj: Obj) -> Obj:
        out = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
        out["metadata"] = self.metadata(obj.get("metadata"))
        spec = obj.get("spec")
        if isinstance(spec, dict):
            s = dict(spec)
            if isinstance(spec.get("taints"), list):
                s["taints"] = [self.toleration(t) for t in spec["taints"]]  # same key/value rules
            out["spec"] = s
        st = obj.get("status")
        if isinstance(st, dict):
            o = dict(st)
            if isinstance(st.get("images"), list):
                o["images"] = [dict(i, names=[self.h(n) for n in i.get("names") or []]) for i in st["images"] if isinstance(i, dict)]
            out["status"] = o
        return out

    def group(self, obj: Obj) -> Obj:
        out = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
        out["metadata"] = self.metadata(obj.get("metadata"))
        spec = obj.get("spec")
        if isinstance(spec, dict):
            s: Obj = {}
            for k, v in spec.items():
                if k == "parentCompositePodGroupName":
                    s[k] = self.h(v)
                elif k == "workloadRef":
                    s[k] = {kk: self.h(vv) for kk, vv in v.items()} if isinstance(v, dict) else v
                elif k == "priorityClassName":
                    s[k] = self.priority_class(v)
                elif k == "schedulingConstraints" and isinstance(v, dict):
                    s[k] = dict(v, topology=[dict(t, key=self.lkey(t.get("key"))) for t in v.get("topology") or [] if isinstance(t, dict)])
                elif k == "resourceClaims":
                    s[k] = [{kk: self.h(vv) for kk, vv in c.items()} for c in v or [] if isinstance(c, dict)]
                elif k in ("schedulingPolicy", "disruptionMode", "priority", "preemptionPolicy"):
                    s[k] = v
                # anything else (future fields) is dropped: allow-list
            out["spec"] = s
        st = obj.get("status")
        if isinstance(st, dict) and isinstance(st.get("conditions"), list):
            out["status"] = {"conditions": [{k: c[k] for k in ("type", "status", "reason") if k in c} for c in st["conditions"] if isinstance(c, dict)]}
        return out

    def pdb(self, obj: Obj) -> Obj:
        out = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
        out["metadata"] = self.metadata(obj.get("metadata"))
        spec = obj.get("spec")
        if isinstance(spec, dict):
            s = {k: v for k, v in spec.items() if k in ("minAvailable", "maxUnavailable", "unhealthyPodEvictionPolicy")}
            if "selector" in spec:
                s["selector"] = self.selector(spec["selector"])
            out["spec"] = s
        st = obj.get("status")
        if isinstance(st, dict):
            o = dict(st)
            if isinstance(st.get("disruptedPods"), dict):
                o["disruptedPods"] = {self.h(k): v for k, v in st["disruptedPods"].items()}
            out["status"] = o
        return out

    def priority_class_obj(self, obj: Obj) -> Obj:
        out = dict(obj)
        out["metadata"] = self.metadata(obj.get("metadata"))
        name = (obj.get("metadata") or {}).get("name")
        if isinstance(name, str) and name.startswith("system-"):
            out["metadata"]["name"] = name
        return out

    def generic(self, obj: Obj) -> Obj:
        out = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
        out["metadata"] = self.metadata(obj.get("metadata"))
        if isinstance(obj.get("status"), dict) and "phase" in obj["status"]:
            out["status"] = {"phase": obj["status"]["phase"]}
        return out

    def event(self, obj: Obj) -> Obj:
        """A Preempted event (snapshot --events): references hashed like metadata; the message is
        rebuilt from its parts ("Preempted by <type> <uid> on node <node>") with uid and node
        hashed, and dropped when it has another shape."""
        out = self.generic(obj)
        for k in ("involvedObject", "regarding", "related"):
            if isinstance(obj.get(k), dict):
                out[k] = {kk: (self.h(v) if kk in ("name", "namespace", "uid") and isinstance(v, str) else v) for kk, v in obj[k].items()}
        for k in ("reason", "type", "lastTimestamp", "firstTimestamp", "eventTime", "count"):
            if k in obj:
                out[k] = obj[k]
        msg = obj.get("message") or obj.get("note") or ""
        parts = msg.split(" ") if isinstance(msg, str) else []
        if len(parts) == 7 and parts[:2] == ["Preempted", "by"] and parts[4:6] == ["on", "node"]:
            out["message"] = f"Preempted by {parts[2]} {self.h(parts[3])} on node {self.h(parts[6])}"
        return out

    def item(self, obj: Obj) -> Obj:
        stripped = strip_object(obj)
        kind = stripped.get("kind")
        fn = {
            "Pod": self.pod,
            "Node": self.node,
            "PodGroup": self.group,
            "CompositePodGroup": self.group,
            "PodDisruptionBudget": self.pdb,
            "PriorityClass": self.priority_class_obj,
            "Event": self.event,
        }.get(kind, self.generic)
        return fn(stripped)


def redactor_for(items: list[dict], key: bytes | None = None, preserve_order: bool = True) -> Redactor:
    """The Redactor `redact_items` uses for `items` (its `h` maps original strings to redacted ones)."""
    if not preserve_order:
        return Redactor(key)
    probe = Redactor(b"")
    probe.collect = set()
    for o in items:
        if isinstance(o, dict):
            probe.item(o)
    return Redactor(key, sorted(probe.collect))


def redact_items(items: list[dict], key: bytes | None = None, preserve_order: bool = True) -> list[dict]:
    """Stripped, redacted copies of `items` (the input is not modified). `key` defaults to a random
    per-run key; pass a fixed one to get the same hashes across runs of the same input.

    preserve_order (default): redacted strings sort like the originals (a rank prefix; see
    Redactor), which the scheduler's name tie-breaks need for an identical analysis. It reveals
    the relative order of identifiers, and hashes then depend on the whole input, not only on the
    key. Without it, hashes are pure HMACs, stable across snapshots, but ties may break differently.
    """
    r = redactor_for(items, key, preserve_order)
    return [r.item(o) if isinstance(o, dict) else o for o in items]


def hash_name(value: str, key: bytes, items: list[dict] | None = None) -> str:
    """The string `redact_items(items, key)` gives `value` (pure HMAC form when `items` is None)."""
    return redactor_for(items or [], key, items is not None).h(value)
