"""Node templates: the node shapes an autoscaler can add.

Read from a YAML file (``templates: [{name, allocatable, labels, taints, maxNodes, costPerHour}]``)
or inferred from the snapshot's nodes, grouped by instance type (else a node-pool label) plus
identical allocatable and taints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..errors import UserError
from ..model import Node, Snapshot, Taint
from ..quantity import QuantityError, parse_quantity, scheduler_amount

DEFAULT_MAX_NODES = 10
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
POOL_LABELS = (
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "kubernetes.azure.com/agentpool",
    "karpenter.sh/nodepool",
    "pool",
)
# Labels that identify one node, never a template.
NODE_SPECIFIC = {"kubernetes.io/hostname"}
CORDON_TAINTS = {"node.kubernetes.io/unschedulable", "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


@dataclass(slots=True, frozen=True)
class Template:
    name: str
    allocatable: Mapping[str, int]  # scheduler integers: cpu milli, memory bytes, counts
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    max_nodes: int = DEFAULT_MAX_NODES
    cost_per_hour: float | None = None
    source: str = "file"  # file | inferred
    nodes: tuple[str, ...] = ()  # inferred: the snapshot nodes it was built from

    def node(self, i: int) -> Node:
        """The i-th (1-based) synthetic node of this template."""
        name = synthetic_name(self.name, i)
        labels = dict(self.labels)
        labels["kubernetes.io/hostname"] = name
        return Node(name=name, uid=f"autoscale-{name}", labels=labels, taints=self.taints, allocatable=dict(self.allocatable))

    def describe(self) -> dict:
        return {
            "name": self.name,
            "allocatable": dict(self.allocatable),
            "maxNodes": self.max_nodes,
            "costPerHour": self.cost_per_hour,
            "source": self.source,
        }


def synthetic_name(template: str, i: int) -> str:
    safe = "".join(c if (c.isalnum() or c in "-.") else "-" for c in template.lower()).strip("-.") or "node"
    return f"template-{safe}-{i}"


# ---- file ------------------------------------------------------------------------------------
def _amount(res: str, q: Any, where: str) -> int:
    try:
        v = parse_quantity(q)
    except QuantityError as e:
        raise UserError(f"{where}: invalid quantity for {res}: {e}") from None
    if v < 0:
        raise UserError(f"{where}: {res} must be >= 0, got {q!r}")
    amount = scheduler_amount(res, v)
    if amount > 2**63 - 1:  # upstream keeps these in int64; `cpu: 1e1000` would make a node of any size
        raise UserError(f"{where}: {res}: value out of range (the scheduler's int64 {'milli-units' if res == 'cpu' else 'units'} overflow)")
    return amount


def _str_map(v: Any, where: str) -> dict[str, str]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise UserError(f"{where}: want a mapping of strings")
    out = {}
    for k, val in v.items():
        if isinstance(val, (dict, list)) or val is None:
            raise UserError(f"{where}.{k}: want a string value")
        out[str(k)] = str(val).lower() if isinstance(val, bool) else str(val)
    return out


# The keys a node template may have (a typo would otherwise be silently ignored: issue 30).
_TEMPLATE_KEYS = ("name", "allocatable", "labels", "taints", "maxNodes", "costPerHour")


def _template_from(i: int, raw: Any, path: str) -> Template:
    where = f"{path}: templates[{i}]"
    if not isinstance(raw, dict):
        raise UserError(f"{where}: want a mapping with name and allocatable")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"{where}: name is required (a non-empty string)")
    where = f"{path}: template {name!r}"
    unknown = sorted(set(map(str, raw)) - set(_TEMPLATE_KEYS))
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], _TEMPLATE_KEYS, n=1)
        raise UserError(f"{where}: unknown key {unknown[0]!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
                        + f"; known: {', '.join(_TEMPLATE_KEYS)}")
    alloc_raw = raw.get("allocatable")
    if not isinstance(alloc_raw, dict) or not alloc_raw:
        raise UserError(f"{where}: allocatable is required (a mapping like {{cpu: 8, memory: 32Gi}})")
    alloc = {str(k): _amount(str(k), q, where) for k, q in alloc_raw.items()}
    alloc.setdefault("pods", 110)
    labels = _str_map(raw.get("labels"), f"{where}: labels")
    taints = []
    tr = raw.get("taints") or []
    if not isinstance(tr, list):
        raise UserError(f"{where}: taints must be a list of {{key, value, effect}}")
    for j, t in enumerate(tr):
        if not isinstance(t, dict) or not t.get("key"):
            raise UserError(f"{where}: taints[{j}] needs a key")
        eff = t.get("effect", "NoSchedule")
        if eff not in EFFECTS:
            raise UserError(f"{where}: taints[{j}].effect must be one of {', '.join(EFFECTS)}, got {eff!r}")
        taints.append(Taint(str(t["key"]), "" if t.get("value") is None else str(t.get("value")), eff))
    mx = raw.get("maxNodes", DEFAULT_MAX_NODES)
    if isinstance(mx, bool) or not isinstance(mx, int) or mx < 0:
        raise UserError(f"{where}: maxNodes must be a non-negative integer, got {mx!r}")
    cost = raw.get("costPerHour")
    if cost is not None:
        if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost < 0:
            raise UserError(f"{where}: costPerHour must be a non-negative number, got {cost!r}")
        cost = float(cost)
    return Template(name.strip(), alloc, labels, tuple(taints), mx, cost, "file")


def load_templates(path: str) -> list[Template]:
    from ..snapshot.io.files import read_text
    from ..snapshot.io.safeyaml import safe_yaml

    try:
        text = read_text(Path(path))
    except UserError as e:
        raise UserError(f"cannot read node templates {e}") from None
    doc = safe_yaml(text, path)
    if isinstance(doc, list):
        items = doc
    elif isinstance(doc, dict) and isinstance(doc.get("templates"), list):
        items = doc["templates"]
    else:
        raise UserError(f"{path}: want a mapping with a `templates:` list of node templates")
    if not items:
        raise UserError(f"{path}: `templates:` is empty")
    out = [_template_from(i, raw, path) for i, raw in enumerate(items)]
    seen: set[str] = set()
    for t in out:
        if t.name in seen:
            raise UserError(f"{path}: duplicate template name {t.name!r}")
        seen.add(t.name)
    return out


# ---- inferred --------------------------------------------------------------------------------
def _group_key(node: Node) -> tuple[str, str] | None:
    if node.labels.get(INSTANCE_TYPE):
        return INSTANCE_TYPE, node.labels[INSTANCE_TYPE]
    for k in POOL_LABELS:
        if node.labels.get(k):
            return k, node.labels[k]
    return None


def infer_templates(snap: Snapshot, max_nodes: int = DEFAULT_MAX_NODES) -> tuple[list[Template], list[str]]:
    """Templates from the snapshot's nodes, and the label keys used to group them."""
    groups: dict[tuple, list[Node]] = {}
    used: list[str] = []
    for n in snap.nodes:
        gk = _group_key(n)
        if gk is None:
            continue
        taints = tuple(sorted((t for t in n.taints if t.key not in CORDON_TAINTS), key=lambda t: (t.key, t.value, t.effect)))
        key = (gk, tuple(sorted(n.allocatable.items())), taints)
        groups.setdefault(key, []).append(n)
        if gk[0] not in used:
            used.append(gk[0])
    base_count: dict[str, int] = {}
    for (gk, _, _) in groups:
        base_count[gk[1]] = base_count.get(gk[1], 0) + 1
    out: list[Template] = []
    seen: dict[str, int] = {}
    for (gk, alloc, taints), nodes in groups.items():
        common = dict(nodes[0].labels)
        for n in nodes[1:]:
            common = {k: v for k, v in common.items() if n.labels.get(k) == v}
        for k in NODE_SPECIFIC:
            common.pop(k, None)
        name = gk[1]
        if base_count[name] > 1:
            pool = next((common[k] for k in POOL_LABELS if k != gk[0] and common.get(k)), None)
            if pool:
                name = f"{name}-{pool}"
        if name in seen:
            seen[name] += 1
            name = f"{name}-{seen[name]}"
        else:
            seen[name] = 1
        out.append(Template(name, dict(alloc), common, taints, max_nodes, None, "inferred", tuple(n.name for n in nodes)))
    return out, used
