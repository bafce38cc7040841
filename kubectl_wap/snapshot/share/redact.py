"""`kubectl wap snapshot --redact`: replace identifying strings with stable keyed hashes.

Every object is first reduced by :func:`strip_object`, then projected onto its kind's schema in
allowlist.py: only fields the scheduler reads survive (an unknown key at any depth is dropped), and
every kept string that is not a known enum value, a resource name, a quantity, a number or a
timestamp is replaced by
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
images, volume claim names, resource claim names, scheduling gates, non-default scheduler names;
DRA pools, devices, device classes, claims and templates, string device attributes and the string
literals of CEL selectors (both kept when they are DNS-domain shaped, like the driver names they are
compared with, or quantities / versions, the arguments of quantity() and semver()).

Kueue's objects (kueue.x-k8s.io/v1beta2, issue 35) are reduced to what its admission reads
(allowlist.py KUEUE_SCHEMAS): ClusterQueue, Cohort, ResourceFlavor, LocalQueue, queue, Workload and
WorkloadPriorityClass names are hashed through the same mapping (references still match); quotas,
policies, priorities, admissions (flavors per resource, usage) and condition types are kept.

Kept: kinds, API versions, resource names (``nvidia.com/gpu``) and quantities, DRA driver, attribute and
capacity names, priorities,
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

from .allowlist import DROP, project, schema_for, typed
from .strip import strip_object

Obj = dict[str, Any]

# x-k8s.io: the API groups of Kubernetes SIG projects (kueue.x-k8s.io/queue-name on a pod names the
# LocalQueue that holds it: pending reads it); the value is hashed like every label value.
_WELL_KNOWN_SUFFIXES = ("kubernetes.io", "k8s.io", "x-k8s.io")
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
        self._stanzas: dict = {}  # projected stanzas replicas share (allowlist.project's memo)
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

    def priority_class(self, name: Any) -> Any:
        if isinstance(name, str) and name.startswith("system-"):
            return name
        return self.h(name)

    def _leaf(self, kind: Any, v: Any) -> Any:
        return typed(kind, v, self.h, self.lkey, self.value, self.priority_class)

    def event(self, obj: Obj) -> Obj:
        """A Preempted event (snapshot --events): references hashed like metadata; the message is
        rebuilt from its parts ("Preempted by <type> <uid> on node <node>") with uid and node
        hashed, and dropped when it has another shape."""
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        out: Obj = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
        out["metadata"] = {k: self.h(meta[k]) for k in ("name", "namespace") if isinstance(meta.get(k), str)}
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
        """`obj` stripped, then reduced to its kind's allow-list (allowlist.py) with every kept
        string hashed unless it is an enum value, a resource name, a quantity or a timestamp."""
        stripped = strip_object(obj)
        if stripped.get("kind") == "Event":
            return self.event(stripped)  # Preempted events (snapshot --events, issue 17): their own rules
        out = project(schema_for(stripped.get("kind"), stripped.get("apiVersion")), stripped, self._leaf, self._stanzas)
        return out if out is not DROP else {}


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
