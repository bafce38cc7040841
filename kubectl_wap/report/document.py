"""The WhatIfReport document: the stable JSON/YAML contract (schema: report/schema.json).

Field names are a contract with scripts and with independent checkers: add fields freely, never
rename or remove one."""

from __future__ import annotations

from typing import Any

from ..model import Pod
from ..preemption.result import Result, UnitVerdict, spared_on
from ..preemption.units import VictimUnit

API_VERSION = "kubectl-wap/v1alpha1"


def unit_ref(u: VictimUnit) -> dict[str, Any]:
    ref: dict[str, Any] = {
        "kind": u.kind,
        "namespace": u.namespace,
        "name": u.name,
        "disruptionMode": u.disruption_mode or None,
        "priority": u.priority,
        "pods": len(u.pods),
    }
    if u.group:
        ref["podGroup"] = u.group
    return ref


def _pod_ref(p: Pod, node: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"namespace": p.namespace, "name": p.name}
    if node is not None:
        d["node"] = node
    return d


def _victims(res: Result) -> list[dict[str, Any]]:
    out = []
    for v in res.victims:
        for p in v.unit.pods:
            out.append(
                {
                    "namespace": p.namespace,
                    "name": p.name,
                    "node": p.node_name,
                    "priority": v.unit.priority,
                    "podPriority": p.priority or 0,
                    "priorityClassName": p.priority_class_name or None,
                    "unit": unit_ref(v.unit),
                    "violatesPDB": v.violates_pdb,
                    "pdbs": v.pdbs,
                    "reason": v.reason,
                    "extendedResources": extended_resources(p),
                    # spec.resourceClaims names (DRA, issue 15): devices the eviction frees
                    "resourceClaims": [c.name for c in p.resource_claims],
                }
            )
    return out


_NATIVE = frozenset({"cpu", "memory", "ephemeral-storage", "pods"})


def extended_resources(p: Pod) -> dict[str, int]:
    """The pod's requests of extended resources (GPUs and the like: names outside the native
    set, e.g. nvidia.com/gpu), for the headline's "GPU pods evicted" (issue 16)."""
    return {k: v for k, v in p.requests.items() if v and k not in _NATIVE and not k.startswith("hugepages-")}


def _reprieved(verdicts: list[UnitVerdict]) -> list[dict[str, Any]]:
    return [
        {"unit": unit_ref(v.unit), "pods": [_pod_ref(p, p.node_name) for p in v.unit.pods], "violatesPDB": v.violates_pdb, "reason": v.reason}
        for v in verdicts
    ]


def to_document(res: Result, source: str = "", gates: str = "", spared_on_placement_only: bool = False) -> dict[str, Any]:
    """The report. `spared_on_placement_only` lists only the spared units that share a node with
    the placement (what the default table shows; summary.reprievedUnits still counts all): an
    internal shortcut for rendering, never for -o json/yaml."""
    pre = res.preemptor
    spared = res.reprieved
    if spared_on_placement_only:
        placed = {n for _, n in res.placements}
        spared = spared_on(spared, placed)
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "WhatIfReport",
        "preemptor": {
            "kind": pre.kind,
            "namespace": pre.namespace,
            "name": pre.name,
            "priority": pre.priority,
            "prioritySource": pre.priority_source,
            "preemptionPolicy": pre.preemption_policy,
            "preemptionPolicySource": pre.policy_source,
            "pods": len(pre.pods),
            "runningPods": len(pre.running),
        },
        "algorithm": res.algorithm,
        "outcome": res.outcome,
        "message": res.message,
        "placements": [{"pod": _pod_ref(p), "node": n} for p, n in res.placements],
        "unplaced": [{"pod": _pod_ref(p), "message": m} for p, m in res.unplaced],
        "victims": _victims(res),
        "victimUnits": [
            {"unit": unit_ref(v.unit), "pods": [_pod_ref(p, p.node_name) for p in v.unit.pods], "violatesPDB": v.violates_pdb, "reason": v.reason}
            for v in res.victims
        ],
        "reprieved": _reprieved(spared),
        "summary": {
            "victimPods": sum(len(v.unit.pods) for v in res.victims),
            "victimUnits": len(res.victims),
            "reprievedUnits": len(res.reprieved),
            "pdbViolations": res.num_pdb_violations,
            "placedPods": len(res.placements),
            "candidateUnits": res.num_potential,
        },
        "explanation": list(res.steps),
        "warnings": list(res.warnings),
        "source": source,
        "featureGates": gates,
    }
    if res.defaulted:
        # what the reading defaulted as the API server would (snapshot/decode/defaulting.py), per pod
        doc["defaulted"] = [{"pod": {"namespace": ns, "name": n}, "requestsFromLimits": list(r)}
                            for (ns, n), r in sorted(res.defaulted.items())]
    if res.admitted:
        # what create-time admission gave the hypothetical pods (snapshot/decode/podadmission.py), per pod
        doc["admitted"] = [{"pod": {"namespace": ns, "name": n}, "changes": list(c)}
                           for (ns, n), c in sorted(res.admitted.items())]
    if res.cycles:
        # Pod-group cycles until the group is placed or preemption ran (the fields above
        # summarize them: placements of every cycle, the victims of the post-filter cycle).
        doc["cycles"] = [
            {
                "n": c.n,
                "action": c.action,
                "outcome": c.outcome or None,
                "placed": [{"pod": _pod_ref(p), "node": n} for p, n in c.placed],
                "victims": [_pod_ref(p, p.node_name) for v in c.victims for p in v.unit.pods],
                "nominated": (
                    [{"pod": _pod_ref(p), "node": n} for p, n in c.placed] if c.action == "post-filter" and c.victims else []
                ),
            }
            for c in res.cycles
        ]
    if res.algorithm == "default":
        doc["nominatedNode"] = res.nominated_node
        doc["candidateNodes"] = res.node_candidates
    elif res.nominated_node:
        doc["nominatedNode"] = res.nominated_node
    return doc


def rank_document(ranked: tuple[int, list], priority_arg: int | None, namespace: str | None) -> dict[str, Any]:
    from datetime import datetime, timezone

    priority, rows = ranked
    units = []
    for i, r in enumerate(rows, 1):
        u = r.unit
        if namespace and u.namespace != namespace:
            continue
        start = u.earliest_start
        units.append(
            {
                "rank": i,
                "kind": u.kind,
                "namespace": u.namespace,
                "name": u.name,
                "disruptionMode": u.disruption_mode or None,
                "priority": u.priority,
                "prioritySource": u.priority_source,
                "pods": len(u.pods),
                "earliestStart": None if start == float("inf") else datetime.fromtimestamp(start, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "violatesPDB": r.violating,
                "pdbs": r.pdbs,
                "nodes": r.nodes,
            }
        )
    return {"apiVersion": API_VERSION, "kind": "RankReport", "preemptorPriority": priority, "units": units}
