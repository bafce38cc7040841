"""`python -m tests.oracle scale`: one cluster at the scale that matters, both engines, timed.

The cluster is the benchmark generator's size M (benchmarks/generate.py: 1,000 nodes, ~30,000
pods in full API shape, PodGroups, CompositePodGroups, PDBs, spread and anti-affinity, three
pending high-priority gangs). The question is the pending gang `bench-gangs/gang-256` (256 pods,
minCount 256, disruptionMode All); the other pending gangs are left out of the oracle's cluster as
for every oracle case (`driver.case_for`), and our whatif ignores other pending work too.

Printed: the time of our analysis (load + whatif, in-process), the oracle's time (objects created
through the API, the scheduler run until it settles), outcome and victim counts on both sides and
whether they agree (outcome, victim set; `compare` in differential.py). `--json` keeps the numbers.

Start times are made distinct first (`distinct_starts`, off with `--keep-starts`): v1.37.2's
`MoreImportantVictim` (pkg/scheduler/framework/preemption/util.go) compares priority, kind, size and
start time and nothing after, and the victims are sorted with the unstable `sort.Slice`; the
benchmark generator gives many units the same priority and start second (653 such ties on M), so
the real scheduler's victims there are one draw of many and no engine can be compared with it.
With every running pod started in its own second, the victim order is total on both sides.

The gang's pods are then pinned, each to one node (`pin_gang`, off with `--no-pin`): with all
potential victims removed, hundreds of identical nodes score the same and `selectHost` takes one
by the order of the feasible-node list (v1.37.2 schedule_one.go prioritizeNodes and the score heap;
that order follows parallel filtering); the reprieval loop then
checks the victims against that placement, so the victims follow the draw. Our engine with random
tie-breaks (`ties.explore`) on the unpinned M cluster gave 179, 182, 183, 184 and 185 victims, five
different sets. A pinned placement leaves one right answer, and what is compared at scale is the
rest of the machinery: 30,000 pods' units, importance order, PDBs, the reprieval loop.
"""

from __future__ import annotations

import calendar
import json
import sys
import time
from collections import Counter
from typing import Any

from kubectl_wap.quantity import resource_amount

from .differential import compare, ours, secondary
from .driver import DEFAULT_GATES, case_for, oracle_version, run


def distinct_starts(items: list[dict]) -> int:
    """Give every running pod its own start second, keeping the generator's order (earlier stays
    earlier; pods of one second are ordered by namespace/name). Returns how many were moved."""
    running = [o for o in items if o.get("kind") == "Pod" and (o.get("status") or {}).get("startTime")]
    running.sort(key=lambda o: (o["status"]["startTime"], o["metadata"].get("namespace", ""), o["metadata"]["name"]))
    base = calendar.timegm((2026, 1, 1, 0, 0, 0))
    moved = 0
    for i, o in enumerate(running):
        st = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(base + i))
        moved += st != o["status"]["startTime"]
        o["status"]["startTime"] = st
    return moved


def pin_gang(items: list[dict], ns: str, group: str) -> int:
    """Pin each pod of the pending gang to a node (a `nodeSelector` on kubernetes.io/hostname)
    of the pool its own selector asks for, dealt out one per node per round in name order over the
    nodes where preemption can make room: CPU and memory left once every pod of the gang's
    priority or higher stays (pinning to a node full of those would make the case Unschedulable,
    not a test of preemption). Returns the count."""
    pods = sorted((o for o in items if o.get("kind") == "Pod" and o["metadata"].get("namespace") == ns
                   and ((o.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") == group),
                  key=lambda o: o["metadata"]["name"])
    need_cpu, need_mem = requests(pods[0])
    prio = pods[0]["spec"].get("priority", 0)
    want = dict(pods[0]["spec"].get("nodeSelector") or {})
    kept: dict[str, list[int]] = {}
    for o in items:
        node = (o.get("spec") or {}).get("nodeName") if o.get("kind") == "Pod" else None
        if node and o["spec"].get("priority", 0) >= prio:
            c, m = requests(o)
            k = kept.setdefault(node, [0, 0])
            k[0] += c
            k[1] += m
    room: dict[str, int] = {}
    for o in items:
        md = o["metadata"]
        labels = md.get("labels") or {}
        if o.get("kind") == "Node" and all(labels.get(k) == v for k, v in want.items()):
            alloc = o["status"]["allocatable"]
            c, m = kept.get(md["name"], [0, 0])
            n = min((resource_amount("cpu", alloc["cpu"]) - c) // need_cpu, (resource_amount("memory", alloc["memory"]) - m) // need_mem)
            if n > 0:
                room[md["name"]] = n
    order = sorted(room)
    placed = 0
    while placed < len(pods) and order:
        for node in list(order):
            if placed == len(pods):
                break
            spec = pods[placed]["spec"]  # a fresh dict: decoders may share one selector between pods
            spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), "kubernetes.io/hostname": node}
            placed += 1
            room[node] -= 1
            if not room[node]:
                order.remove(node)
    if placed < len(pods):
        raise SystemExit(f"scale: room for only {placed} of the {len(pods)} gang pods even with every lower-priority pod gone")
    return placed


def requests(pod: dict) -> tuple[int, int]:
    """CPU (millicores) and memory (bytes) requested by a pod's regular containers."""
    c = m = 0
    for ct in pod["spec"].get("containers") or []:
        r = (ct.get("resources") or {}).get("requests") or {}
        c += resource_amount("cpu", r.get("cpu", "0"))
        m += resource_amount("memory", r.get("memory", "0"))
    return c, m


def main_scale(args: Any) -> int:
    from benchmarks.generate import DEFAULT_OUT, ensure

    from .__main__ import read_items

    t0 = time.monotonic()
    meta = ensure(args.size, out=args.out or DEFAULT_OUT)
    t_gen = time.monotonic() - t0
    items = read_items(meta["list_path"], False)
    kind, ns, name = "podgroup", "bench-gangs", args.gang
    moved = 0 if args.keep_starts else distinct_starts(items)
    pinned = 0 if args.no_pin else pin_gang(items, ns, name)
    print(f"scale: size {args.size}: {meta['counts'].get('nodes')} nodes, {meta['counts'].get('pods')} pods; "
          f"question: whatif {kind} {name} -n {ns} (cluster ready in {t_gen:.1f}s; "
          f"{'start times as generated' if args.keep_starts else f'distinct start times: {moved} pod(s) moved'}; "
          f"{f'{pinned} gang pods pinned to a node each' if pinned else 'gang not pinned'})", file=sys.stderr)

    t0 = time.monotonic()
    mine = ours(items, kind, ns, name, DEFAULT_GATES)
    t_ours = time.monotonic() - t0
    print(f"  ours: {mine['outcome']}, {len(mine['victims'])} victim pod(s) in {t_ours:.1f}s", file=sys.stderr)

    case = case_for(items, kind, ns, name, f"scale-{args.size}-{name}")
    n_objects = len(case["objects"])
    del items
    t0 = time.monotonic()
    (real,) = run([case], DEFAULT_GATES, timeout_per_case=args.timeout, parallel=1, settle=args.settle, quiet=False,
                  tie_break=args.tie_break)
    t_oracle = time.monotonic() - t0
    if real.get("error"):
        print(f"  oracle error: {real['error'][:500]}", file=sys.stderr)
    v = compare(kind, mine, real)
    print(f"  kube-scheduler {oracle_version()}: {real.get('outcome')}, {len(real.get('victims') or [])} victim pod(s) "
          f"in {t_oracle:.1f}s ({n_objects} objects created through the API; case {real.get('elapsedMs', 0) / 1000:.1f}s)",
          file=sys.stderr)
    print("agree" if v.agree else "DIFFER: " + "; ".join(v.reasons))
    doc = {"size": args.size, "gang": name, "nodes": meta["counts"].get("nodes"), "pods": meta["counts"].get("pods"),
           "oracle": oracle_version(), "agree": v.agree, "reasons": v.reasons, "sameNodes": secondary(mine, real),
           "ours": {"outcome": mine["outcome"], "victims": len(mine["victims"]), "seconds": round(t_ours, 2),
                    "ties": len(mine.get("ties") or []),
                    "tieKinds": dict(Counter(str(t).split(":")[0] for t in mine.get("ties") or []))},
           "distinctStarts": not args.keep_starts, "pinned": pinned, "tieBreak": args.tie_break,
           "real": {"outcome": real.get("outcome"), "victims": len(real.get("victims") or []), "seconds": round(t_oracle, 2),
                    "caseSeconds": (real.get("elapsedMs") or 0) / 1000, "error": real.get("error")}}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 0 if v.agree else 1
