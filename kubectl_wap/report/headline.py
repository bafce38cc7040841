"""The lines under the verdict that answer the first question (issue 16): who loses pods (by
namespace and priority class), which PodDisruptionBudgets are violated, and how many pods holding
GPUs or other extended resources are evicted. Pure functions over the report document."""

from __future__ import annotations

from collections import Counter


def _counts(c: Counter) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def headline(doc: dict) -> list[tuple[str, str]]:
    """(label, text) pairs; empty when nothing is preempted."""
    victims = doc.get("victims") or []
    if not victims:
        return []
    by_ns = Counter(v["namespace"] for v in victims)
    by_class = Counter(v.get("priorityClassName") or f"(no class, priority {v.get('podPriority', v['priority'])})" for v in victims)
    pdbs: Counter = Counter()
    for v in victims:
        for p in v.get("pdbs") or []:
            pdbs[p] += 1
    ext: Counter = Counter()
    ext_pods = 0
    for v in victims:
        er = v.get("extendedResources") or {}
        if er:
            ext_pods += 1
            ext.update(er)
    out = [
        ("Victim pods by namespace", _counts(by_ns)),
        ("By priority class", _counts(by_class)),
        ("PDBs violated", (", ".join(f"{k} ({n} pod(s))" for k, n in sorted(pdbs.items())) if pdbs else "none")),
    ]
    dra_pods = sum(1 for v in victims if v.get("resourceClaims"))
    if ext_pods:
        out.append(("Extended resources", f"{ext_pods} evicted pod(s) hold {', '.join(f'{k} {n:g}' for k, n in sorted(ext.items()))}"))
    elif not dra_pods:
        out.append(("Extended resources", "no evicted pod holds a GPU or other extended resource"))
    if dra_pods:
        out.append(("DRA claims", f"{dra_pods} evicted pod(s) hold DRA resource claims (their devices are freed)"))
    return out


def collateral(doc: dict) -> list[str]:
    """Victims evicted from nodes the preemptor does not use: pods of a disruptionMode-all group
    go with their group wherever they run (upstream: the whole unit is one victim)."""
    placed = {p["node"] for p in doc["placements"]}
    if not placed:
        return []
    out = []
    for v in doc["victimUnits"]:
        away = sorted({p["node"] for p in v["pods"]} - placed)
        if away:
            u = v["unit"]
            mode = f"disruptionMode {u['disruptionMode']}" if u.get("disruptionMode") else "its unit"
            out.append(f"{u['kind']} {u['namespace']}/{u['name']} also loses its pod(s) on {', '.join(away)}, "
                       f"node(s) the preemptor does not use: collateral of {mode} (the whole unit is one victim)")
    return out
