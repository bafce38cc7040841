"""`rank` views over the RankReport (issue 16): order (risk first by default), --limit, and
--for a preemptor (only units with a pod on a node where preemption might help it)."""

from __future__ import annotations

from ..model import Snapshot
from ..preemption.gates import Gates
from ..preemption.mighthelp import nodes_where_preemption_might_help


def preemptor_pods(snap: Snapshot, doc: dict) -> list:
    pre = doc["preemptor"]
    named = {(x["pod"]["namespace"], x["pod"]["name"]) for x in doc["placements"] + doc.get("unplaced", [])}
    pods = [p for p in snap.pods if (p.namespace, p.name) in named]
    if not pods:
        pods = [p for p in snap.pods if p.namespace == pre["namespace"] and not p.scheduled
                and (p.name == pre["name"] if pre["kind"] == "Pod" else p.pod_group_name == pre["name"])]
    return pods


def for_preemptor(snap: Snapshot, doc: dict, gates: Gates) -> set[str]:
    """The nodes where preemption might help this preemptor (a unit elsewhere cannot help it)."""
    return nodes_where_preemption_might_help(snap, preemptor_pods(snap, doc))


def ordered(doc: dict, order: str, limit: int | None, helps: set[str] | None, for_: str | None) -> dict:
    units = list(doc["units"])
    if helps is not None:
        units = [u for u in units if set(u["nodes"]) & helps]
    if order == "risk":
        units.reverse()
    total = len(units)
    if limit is not None:
        units = units[:limit]
    for i, u in enumerate(units, 1):
        u["position"] = i
    out = dict(doc, units=units, order=order, totalUnits=total)
    if for_:
        out["for"] = for_
        out["nodesWherePreemptionMightHelp"] = sorted(helps or ())
    return out
