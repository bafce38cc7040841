"""`-l/--selector` and `--victim-namespace`: which victims and spared units are *shown* (issue 16).
The analysis is never changed: the summary keeps the cluster-wide counts, and the document says
what was filtered (`filter`)."""

from __future__ import annotations

import re
from typing import Callable, Mapping

from ..errors import UserError
from ..model import Snapshot
from ..model.lookup import namespace_near_miss

_SET = re.compile(r"^\s*([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQ = re.compile(r"^\s*([\w./-]+)\s*(==|!=|=)\s*([\w.-]*)\s*$")
_EXISTS = re.compile(r"^\s*(!?)\s*([\w./-]+)\s*$")

Predicate = Callable[[Mapping[str, str]], bool]


def _split(text: str) -> list[str]:
    """Split at commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    parts.append(cur)
    return [p for p in parts if p.strip()]


def parse_label_selector(text: str) -> Predicate:
    """kubectl's -l syntax: k=v, k==v, k!=v, k in (a,b), k notin (a,b), k, !k (all must hold)."""
    reqs: list[Predicate] = []
    for part in _split(text):
        if m := _SET.match(part):
            key, op, vals = m.group(1), m.group(2), {v.strip() for v in m.group(3).split(",") if v.strip()}
            reqs.append((lambda k, vs: lambda l: l.get(k) in vs)(key, vals) if op == "in"
                        else (lambda k, vs: lambda l: l.get(k) not in vs)(key, vals))
        elif m := _EQ.match(part):
            key, op, val = m.groups()
            reqs.append((lambda k, v: lambda l: l.get(k) != v)(key, val) if op == "!="
                        else (lambda k, v: lambda l: l.get(k) == v)(key, val))
        elif m := _EXISTS.match(part):
            neg, key = m.groups()
            reqs.append((lambda k: lambda l: k not in l)(key) if neg else (lambda k: lambda l: k in l)(key))
        else:
            raise UserError(f"invalid label selector {part.strip()!r} in -l {text!r}: want key=value, key!=value, key in (a,b), key or !key")
    return lambda labels: all(r(labels) for r in reqs)


def filter_shown(doc: dict, snap: Snapshot, selector: str | None, namespace: str | None) -> dict:
    """The document with only the victims/spared units that match (a unit is shown when any of
    its pods matches). Adds `filter` = {description, victimUnits, shownUnits}."""
    if not selector and not namespace:
        return doc
    pred = parse_label_selector(selector) if selector else (lambda _l: True)
    labels = {(p.namespace, p.name): p.labels for p in snap.pods}

    def keep(ns: str, name: str) -> bool:
        return (not namespace or ns == namespace) and pred(labels.get((ns, name), {}))

    def unit_kept(u: dict) -> bool:
        return any(keep(p["namespace"], p["name"]) for p in u["pods"])

    out = dict(doc)
    out["victimUnits"] = [u for u in doc["victimUnits"] if unit_kept(u)]
    out["victims"] = [v for v in doc["victims"] if keep(v["namespace"], v["name"])]
    out["reprieved"] = [u for u in doc["reprieved"] if unit_kept(u)]
    what = [f"namespace {namespace}"] if namespace else []
    if selector:
        what.append(f"labels {selector}")
    out["filter"] = {"description": " and ".join(what), "victimUnits": len(doc["victimUnits"]), "shownUnits": len(out["victimUnits"])}
    if namespace and (miss := namespace_near_miss(snap, namespace)):  # a typo shows nothing: say so, with the closest
        out["warnings"] = [*doc.get("warnings", []), f"--victim-namespace: {miss}"]
    return out
