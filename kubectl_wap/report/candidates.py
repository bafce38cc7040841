"""The WHY of default preemption's candidate-node table (issue 16): the criterion of upstream's
pickOneNodeForPreemption (pkg/scheduler/framework/preemption/preemption.go) that decided between
each candidate and the chosen node, in upstream's order:
1. fewest PDB violations, 2. lowest highest-victim priority, 3. smallest sum of victim priorities
(each + MaxInt32 + 1), 4. fewest victims, 5. latest earliest start time among the highest-priority
victims, 6. first in node order (ours: name order, see docs/fidelity.md's deterministic stand-ins)."""

from __future__ import annotations

from typing import Any

from ..model import Snapshot

_OFFSET = 2**31  # MaxInt32 + 1: upstream shifts priorities so negative ones do not win sums


def _criteria(c: dict, pods: dict[str, Any]) -> list[tuple[str, float, str]]:
    """(name, value where smaller wins, shown value) per criterion."""
    victims = [pods[k] for k in c["victims"] if k in pods]
    prios = [p.priority or 0 for p in victims]
    top = max(prios, default=-(2**31))
    starts = [p.start_time for p in victims if (p.priority or 0) == top and p.start_time is not None]
    earliest = min(starts) if starts else float("inf")
    return [
        ("PDB violations", c.get("pdbViolations", 0), str(c.get("pdbViolations", 0))),
        ("highest victim priority", top, str(top) if victims else "-"),
        ("sum of victim priorities", sum(x + _OFFSET for x in prios), str(sum(prios))),
        ("victims", len(victims), str(len(victims))),
        ("start time of the highest-priority victims (later wins)", -earliest, "" if earliest == float("inf") else f"{earliest:.0f}"),
    ]


def with_why(doc: dict, snap: Snapshot) -> list[dict]:
    """candidateNodes, each with `why`: for the chosen node the criterion that set it apart from
    the runner-up; for the others the first criterion on which they lost to it."""
    cands = doc.get("candidateNodes") or []
    chosen_name = doc.get("nominatedNode")
    pods = {f"{p.namespace}/{p.name}": p for p in snap.pods}
    real = [c for c in cands if c.get("victims") is not None]
    chosen = next((c for c in real if c["node"] == chosen_name), None)
    out = []
    for c in cands:
        c = dict(c)
        if c.get("victims") is None or chosen is None:
            c["why"] = c.get("status", "")
        elif c is chosen or c["node"] == chosen_name:
            others = [o for o in real if o["node"] != chosen_name]
            c["why"] = "chosen: " + (_decider(chosen, others, pods) if others else "the only candidate")
        else:
            c["why"] = _lost(c, chosen, pods)
        out.append(c)
    return out


_WORSE = {"PDB violations": "more PDB violations", "highest victim priority": "higher highest victim priority",
          "sum of victim priorities": "larger sum of victim priorities", "victims": "more victims",
          "start time of the highest-priority victims (later wins)": "earlier start of its highest-priority victims"}
_BEST = {"PDB violations": "fewest PDB violations", "highest victim priority": "lowest highest victim priority",
         "sum of victim priorities": "smallest sum of victim priorities", "victims": "fewest victims",
         "start time of the highest-priority victims (later wins)": "latest start of its highest-priority victims"}


def _lost(c: dict, chosen: dict, pods: dict) -> str:
    for (name, mine, shown), (_, theirs, shown_theirs) in zip(_criteria(c, pods), _criteria(chosen, pods)):
        if mine != theirs:
            return f"{_WORSE[name]}: {shown} vs {shown_theirs} on the chosen node"
    return "tie on every criterion: the chosen node comes first in node order"


def _decider(chosen: dict, others: list[dict], pods: dict) -> str:
    """The criterion at which the last competitor fell away."""
    mine = _criteria(chosen, pods)
    alive = list(others)
    for i, (name, v, shown) in enumerate(mine):
        alive = [o for o in alive if _criteria(o, pods)[i][1] == v]
        if not alive:
            return f"{_BEST[name]} ({shown})"
    return "tie on every criterion; first in node order"
