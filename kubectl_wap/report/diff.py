"""`kubectl wap diff`: two WhatIfReports of one preemptor compared (issue 16). Pure data: the
verdicts, victim pods added/removed (by namespace/name), and pods placed on another node."""

from __future__ import annotations


def _victims(doc: dict) -> dict[tuple[str, str], dict]:
    return {(v["namespace"], v["name"]): v for v in doc["victims"]}


def _placements(doc: dict) -> dict[tuple[str, str], str]:
    return {(p["pod"]["namespace"], p["pod"]["name"]): p["node"] for p in doc["placements"]}


def _brief(doc: dict) -> dict:
    return {"outcome": doc["outcome"], "message": doc["message"], "victimPods": len(doc["victims"]),
            "victimUnits": len(doc["victimUnits"]), "placedPods": len(doc["placements"])}


def compare(a: dict, b: dict, label_a: str = "A", label_b: str = "B") -> dict:
    va, vb = _victims(a), _victims(b)
    pa, pb = _placements(a), _placements(b)
    added = [{"namespace": k[0], "name": k[1], "node": vb[k]["node"], "unit": vb[k]["unit"]} for k in sorted(vb.keys() - va.keys())]
    removed = [{"namespace": k[0], "name": k[1], "node": va[k]["node"], "unit": va[k]["unit"]} for k in sorted(va.keys() - vb.keys())]
    moved = [{"namespace": k[0], "name": k[1], "before": pa.get(k), "after": pb.get(k)}
             for k in sorted(pa.keys() | pb.keys()) if pa.get(k) != pb.get(k)]
    changed = bool(added or removed or moved or a["outcome"] != b["outcome"])
    wa, wb = list(a.get("warnings") or []), list(b.get("warnings") or [])
    # each side's warnings (what a hypothetical flag changed, a defaulted profile, ...), the shared ones once
    warnings = [w for w in wa if w in wb] + [f"{label_a}: {w}" for w in wa if w not in wb] + [f"{label_b}: {w}" for w in wb if w not in wa]
    return {"apiVersion": a["apiVersion"], "kind": "WhatIfDiff", "labels": [label_a, label_b],
            "a": _brief(a), "b": _brief(b), "changed": changed,
            "victimsAdded": added, "victimsRemoved": removed, "placementChanges": moved, "warnings": warnings}
