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
well-known ``*kubernetes.io/`` and ``*k8s.io/`` keys, which the scheduler and topology rely on; under
``node-role.kubernetes.io/`` and the like the name is the cluster's and is hashed), selectors
(matchLabels, matchExpressions keys/values, topologyKey, matchLabelKeys, mismatchLabelKeys,
namespaces), nodeSelector, node-affinity values (matchFields on metadata.name map through the same
node-name hash), taint and toleration keys/values, priority class names (``system-*`` kept),
PodGroup/CompositePodGroup names and references (podGroupName, parentCompositePodGroupName,
workloadRef), PDB selectors and disruptedPods, container names and images, volume claim names,
resource claim names, scheduling gates, non-default scheduler names; extended resource names under a
domain that is not well-known (acme.com/fpga: both parts); DRA pools, devices, device classes, claims
and templates, drivers and attribute domains that are not well-known, string device attributes and
the string literals of CEL selectors (leaves.py: one domain rule for all of them, so what a
selector compares still compares equal).

Derived names are hashed from their parts (derived_names): a generic ephemeral volume's claim
``<pod>-<volume>`` becomes ``h(pod)-h(volume)``, a claim generated from a template
``h(pod)-h(claim)-h(suffix)``, so the loader's derivation still finds them.

Integer label values (and the values of requirements) are replaced by rank forms that keep their
order, sign and equality (number_forms): Gt/Lt and In decide as before, a 12-digit account id is gone.

Kueue's objects (kueue.x-k8s.io/v1beta2) are reduced to what its admission reads
(allowlist.py KUEUE_SCHEMAS): ClusterQueue, Cohort, ResourceFlavor, LocalQueue, queue, Workload and
WorkloadPriorityClass names are hashed through the same mapping (references still match); quotas,
policies, priorities, admissions (flavors per resource, usage) and condition types are kept.

Kept: kinds, API versions, standard and well-known resource names (cpu, ``nvidia.com/gpu``) and
quantities, DRA attribute and capacity names (CEL identifiers), the major.minor.patch of version
attributes, priorities, timestamps, operators, effects, phases, condition types/status/reason, port
numbers. Numbers, quantities and times are kept exactly when the loader reads them (one validator for
both: leaves.typed). With a random per-run key (the default) the hashes cannot be reversed by
guessing names; pass the same ``key`` to make two snapshots comparable. docs/security.md lists each
guarantee with the test that holds it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from typing import Any, Callable

from ...model.dra import SEMVER
from ...model.terms import parse_int64, valid_label_key, valid_label_value
from .allowlist import project, schema_for
from .leaves import DROP, typed
from .strip import strip_object

Obj = dict[str, Any]

# x-k8s.io: the API groups of Kubernetes SIG projects (kueue.x-k8s.io/queue-name on a pod names the
# LocalQueue that holds it: pending reads it); the value is hashed like every label value.
_WELL_KNOWN_SUFFIXES = ("kubernetes.io", "k8s.io", "x-k8s.io")
# Well-known prefixes under which the name is the cluster's own choice (node-role.kubernetes.io/
# payments-team): the prefix kept, the name hashed. Nothing reads these keys by name.
_OWN_NAME_PREFIXES = ("node-role.kubernetes.io", "node-restriction.kubernetes.io", "feature.node.kubernetes.io")
DEFAULT_SCHEDULER = "default-scheduler"


def is_well_known_key(key: str) -> bool:
    """`topology.kubernetes.io/zone`, `kubernetes.io/hostname`, `node.k8s.io/x`: the key's DNS prefix
    is (a subdomain of) kubernetes.io, k8s.io or x-k8s.io (SIG projects: Kueue)."""
    prefix, sep, _ = key.rpartition("/")
    if not sep:
        return False
    return any(prefix == s or prefix.endswith("." + s) for s in _WELL_KNOWN_SUFFIXES)


def _still_invalid(original: Any, hashed: Any, valid: Callable[[str], bool]) -> Any:
    """`hashed`, made invalid again when `original` is no valid label key / value (a selector
    naming it fails to parse, upstream and here: selectors.py): no key or value ends in "_"."""
    if not isinstance(original, str) or hashed == original or valid(original):
        return hashed
    return hashed + "_"


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

    def __init__(self, key: bytes | None = None, order: list[str] | None = None,
                 composites: dict[str, tuple[str, ...]] | None = None, numbers: dict[str, str] | None = None) -> None:
        self.key = key if key is not None else os.urandom(32)
        self._memo: dict[str, str] = {}
        self._stanzas: dict = {}  # projected stanzas replicas share (allowlist.project's memo)
        self.collect: set[str] | None = None
        self.collect_numbers: set[str] | None = None
        # Names upstream derives from others: the whole -> its parts (see derived_names)
        self.composites = composites or {}
        # Integer label values -> their rank form (see number_forms); None: hashed like names
        self._numbers = numbers
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
        parts = self.composites.get(s)
        if parts is not None:  # <pod>-<volume>: redacted(pod)-redacted(volume)
            hashed = [self.h(p) for p in parts]
            return s if self.collect is not None else "-".join(hashed)
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
        """A label / requirement value. An integer (as a Gt/Lt requirement reads it: parse_int64) is
        replaced by its rank form, which keeps every comparison and hides the number (a 12-digit
        account id); everything else, and an integer that is also a name, is hashed."""
        if isinstance(v, str) and parse_int64(v) is not None:
            if self.collect_numbers is not None:
                self.collect_numbers.add(v)
                return v
            if self._numbers is not None and v in self._numbers:
                return self._numbers[v]
        return _still_invalid(v, self.h(v), valid_label_value)

    def lkey(self, k: Any) -> Any:
        if not isinstance(k, str):
            return k
        if is_well_known_key(k):
            prefix, _, name = k.rpartition("/")
            return _still_invalid(k, f"{prefix}/{self.h(name)}", valid_label_key) if prefix in _OWN_NAME_PREFIXES and name else k
        return _still_invalid(k, self.h(k), valid_label_key)

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


def derived_names(items: list[Any]) -> dict[str, tuple[str, ...]]:
    """Names upstream derives from other names, each with its parts, so that the redacted name is
    built from the redacted parts and the derivation still holds after redaction:

    * a generic ephemeral volume's claim is `<pod>-<volume>` (component-helpers
      storage/ephemeral.VolumeClaimName); the loader derives it the same way (model/storage.py);
    * a claim generated from a ResourceClaimTemplate is `<pod>-<claim>-<random suffix>`
      (resourceclaim controller: GenerateName pod.Name + "-" + podClaim.Name + "-"); the pod's
      status.resourceClaimStatuses names it. A base cut short (over 57 characters) is hashed whole.

    A name met with two different splits (pod `a-b` volume `c`, pod `a` volume `b-c`) keeps the
    first: one string has one redacted form."""
    out: dict[str, tuple[str, ...]] = {}

    def listed(d: dict, key: str) -> list:
        v = d.get(key)
        return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []

    for o in items:
        if not isinstance(o, dict) or o.get("kind") != "Pod":
            continue
        md, spec, st = (o.get(k) if isinstance(o.get(k), dict) else {} for k in ("metadata", "spec", "status"))
        pod = md.get("name")
        if not isinstance(pod, str) or not pod:
            continue
        for v in listed(spec, "volumes"):
            if "ephemeral" in v and isinstance(v.get("name"), str) and v["name"]:
                out.setdefault(f"{pod}-{v['name']}", (pod, v["name"]))
        templated = {c.get("name") for c in listed(spec, "resourceClaims") if c.get("resourceClaimTemplateName")}
        for c in listed(st, "resourceClaimStatuses"):
            name, claim = c.get("name"), c.get("resourceClaimName")
            if isinstance(name, str) and name in templated and isinstance(claim, str) and claim.startswith(f"{pod}-{name}-"):
                suffix = claim[len(pod) + len(name) + 2:]
                if suffix:  # each part is shorter than the whole: expanding parts always ends
                    out.setdefault(claim, (pod, name, suffix))
    return out


def number_forms(numbers: set[str], names: set[str]) -> dict[str, str]:
    """Integer label values -> stand-ins with the same order, sign and equality: the i-th smallest
    positive integer becomes i, the i-th negative counting from zero -i, zero 0; the strings that
    read as one integer ("7", "07") get 0, 1, 2... leading zeros, and a sign stays where it was
    (so a value the API would refuse as a label value, "-5", stays refused). `Gt`/`Lt` (which parse
    both sides as integers) and `In` (which compares strings) decide as before, and the numbers
    themselves (a 12-digit account id) are gone. An integer that is also a name somewhere (a node
    called "123" and its hostname label) is left out: hashed like the name, that relation holds
    (a Gt/Lt on it would not)."""
    by_value: dict[int, list[str]] = {}
    for s in numbers - names:
        n = parse_int64(s)
        if n is not None:
            by_value.setdefault(n, []).append(s)
    positives = sorted(n for n in by_value if n > 0)
    negatives = sorted((n for n in by_value if n < 0), reverse=True)
    rank = {n: i for i, n in enumerate(positives, 1)} | {n: i for i, n in enumerate(negatives, 1)} | {0: 0}
    out: dict[str, str] = {}
    for n, strings in by_value.items():
        for zeros, s in enumerate(sorted(strings)):
            sign = s[0] if s[0] in "+-" else ""
            out[s] = sign + "0" * zeros + str(rank[n])
    return out


def redactor_for(items: list[dict], key: bytes | None = None, preserve_order: bool = True) -> Redactor:
    """The Redactor `redact_items` uses for `items` (its `h` maps original strings to redacted ones)."""
    composites = derived_names(items)
    if not preserve_order:
        return Redactor(key, composites=composites)
    probe = Redactor(b"", composites=composites)
    probe.collect = set()
    probe.collect_numbers = set()
    for o in items:
        if isinstance(o, dict):
            probe.item(o)
    return Redactor(key, sorted(probe.collect), composites, number_forms(probe.collect_numbers, probe.collect))


# The one warning a conversion of a file writes itself (snapfile.saved_items): refused kinds, counted.
OWN_FILE_WARNING = "left out (never kept in a snapshot): "


def redact_header(header: dict[str, Any], from_file: bool = False) -> dict[str, Any]:
    """A snapshot header fit to share: the input's path (`source`) and the server's URL gone, the
    server version cut to major.minor.patch (a vendor suffix, v1.37.1-acme.4, can name the owner;
    what the analysis reads of it is the minor version). `from_file`: the warnings an input file's
    header carried (free text anyone could have written) are left out, counted; the structured
    lists (listed, notServed, forbidden) stay."""
    out = dict(header, source="redacted", redacted=True)
    if from_file:
        warnings = [str(w) for w in header.get("warnings") or []]
        own = [w for w in warnings if w.startswith(OWN_FILE_WARNING)]
        dropped = len(warnings) - len(own)
        out["warnings"] = own + ([f"{dropped} warning(s) of the input snapshot left out (--redact)"] if dropped else [])
    server = dict(header.get("server") or {}, url="redacted")
    version = server.get("version")
    if isinstance(version, str):
        m = SEMVER.match(version)
        server["version"] = version[:m.end(3)] if m else "redacted"
    out["server"] = server
    return out


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
