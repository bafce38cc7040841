"""Differential testing: our engine and the real kube-scheduler answer the same question.

A case is a cluster (plain Kubernetes objects) and a what-if question. `ours()` runs our engine
in-process; `tests.oracle.run()` runs the real scheduler. `compare()` decides agreement on what
the issue asks: the outcome (our outcome names; NoPreemptionNeeded / Preempt / no placement), the
victim set, and the nominated node of a single pod.

Upstream breaks some ties in ways a snapshot cannot reproduce (equal top node scores: the score
heap over a feasible-node list whose order depends on parallel filtering; the random offset of
default preemption's candidate search). The batch pins the first to our rule in the oracle
(tiebreak_test.go); for the rest, a disagreement counts as a tie, and so as agreement, only when
a rerun of the oracle on the same case produces our answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Outcome families: the real scheduler shows "no placement" as pods left pending with a message;
# Unschedulable / NotEligible / Invalid are told apart from that message where it is
# recognizable (tests/oracle/server_test.go classify), and reported as exact-outcome agreement
# separately.
FAMILY = {"Preempt": "Preempt", "NoPreemptionNeeded": "NoPreemptionNeeded",
          "Unschedulable": "NoPlacement", "NotEligible": "NoPlacement", "Invalid": "NoPlacement"}


def ours(items: list[dict], kind: str, namespace: str, name: str, gates: str, explore_seed: int | None = None,
         version: str = "1.37", hypothetical: int = 0) -> dict[str, Any]:
    """Our answer, in the same shape as the oracle's contract, under the `version` profile
    (`--scheduler-version`). With `explore_seed`, our engine breaks its ties at random
    (framework/ties.py explore) instead of by its fixed rule. The last `hypothetical` items are a
    `whatif -f` file's objects, read as the CLI reads them (source.build's extra: create-time
    admission of the new pods, podadmission.py)."""
    from kubectl_wap.errors import UserError
    from kubectl_wap.model import SnapshotHeader
    from kubectl_wap.preemption.analyze import analyze
    from kubectl_wap.preemption.gates import parse_gates
    from kubectl_wap.profiles import PROFILES
    from kubectl_wap.snapshot.decode.convert import build_snapshot

    from kubectl_wap.framework import ties

    try:
        with (ties.observe() if explore_seed is None else ties.explore(explore_seed)) as seen:
            if hypothetical:
                from kubectl_wap.snapshot.source import build

                snap = build(SnapshotHeader(source="differential"), [dict(o) for o in items[:-hypothetical]],
                             [dict(o) for o in items[-hypothetical:]])
            else:
                snap = build_snapshot([dict(o) for o in items], SnapshotHeader(source="differential"))
            res = analyze(snap, kind, namespace, name, parse_gates(gates, PROFILES[version]))
    except UserError as e:
        return {"outcome": "Error", "message": str(e), "victims": [], "nominatedNode": None, "nominated": {}, "placements": [],
                "ties": []}
    victims = [{"namespace": p.namespace, "name": p.name, "node": p.node_name} for v in res.victims for p in v.unit.pods]
    nominated: dict[str, str] = {}
    placements = []
    bound = {(p.namespace, p.name) for c in res.cycles if c.action == "bind" for p, _ in c.placed}
    for p, n in res.placements:
        if res.outcome == "Preempt" and (p.namespace, p.name) not in bound:
            nominated[f"{p.namespace}/{p.name}"] = n
        else:
            placements.append({"pod": {"namespace": p.namespace, "name": p.name}, "node": n})
    return {"outcome": res.outcome, "message": res.message, "victims": victims,
            "nominatedNode": res.nominated_node if kind.lower() in ("pod", "po") else None,
            "nominated": nominated, "placements": placements,
            # ties our engine broke on the way (framework/ties.py): the answer is one of several
            "ties": [f"{k}: {d}" for k, d in seen]}


def victim_set(ans: dict, skip: set[str] = frozenset()) -> set[str]:
    return {k for v in ans.get("victims") or [] if (k := f"{v['namespace']}/{v['name']}") not in skip}


def terminating_at_start(items: list[dict]) -> set[str]:
    """Pods that were already terminating. kube-scheduler counts such a pod among its victims
    (it is on the node and of lower priority) but sends no API call for it (executor.go: "Victim
    Pod is already being deleted"), so the oracle cannot see it chosen: both sides leave them out."""
    return {f"{(o.get('metadata') or {}).get('namespace')}/{(o.get('metadata') or {}).get('name')}"
            for o in items if o.get("kind") == "Pod" and (o.get("metadata") or {}).get("deletionTimestamp")}


@dataclass
class Verdict:
    agree: bool
    outcome_exact: bool
    reasons: list[str] = field(default_factory=list)


def compare(kind: str, mine: dict, real: dict, skip: set[str] = frozenset()) -> Verdict:
    reasons = []
    fm, fr = FAMILY.get(mine["outcome"], mine["outcome"]), FAMILY.get(real.get("outcome"), real.get("outcome"))
    if fm != fr:
        reasons.append(f"outcome: ours {mine['outcome']}, kube-scheduler {real.get('outcome')}")
    vm, vr = victim_set(mine, skip), victim_set(real, skip)
    if vm != vr:
        reasons.append(f"victims: only ours {sorted(vm - vr)}, only kube-scheduler {sorted(vr - vm)}")
    if kind.lower() in ("pod", "po") and fm == fr == "Preempt":
        if (mine.get("nominatedNode") or None) != (real.get("nominatedNode") or None):
            reasons.append(f"nominated node: ours {mine.get('nominatedNode')}, kube-scheduler {real.get('nominatedNode')}")
    return Verdict(not reasons, mine["outcome"] == real.get("outcome"), reasons)


def secondary(mine: dict, real: dict) -> bool:
    """Group nominations and bindings as multisets of nodes (which identical pod of a gang lands
    where is arbitrary; the nodes are not)."""
    def nodes(ans: dict) -> list[str]:
        return sorted(list((ans.get("nominated") or {}).values()) + [p["node"] for p in ans.get("placements") or []])

    return nodes(mine) == nodes(real)
