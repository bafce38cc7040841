"""`python -m tests.oracle scale`: one cluster at the scale that matters, both engines, timed.

The cluster is the benchmark generator's size M (benchmarks/generate.py: 1,000 nodes, ~30,000
pods in full API shape, PodGroups, CompositePodGroups, PDBs, spread and anti-affinity, three
pending high-priority gangs). The question is the pending gang `bench-gangs/gang-256` (256 pods,
minCount 256, disruptionMode All); the other pending gangs are left out of the oracle's cluster as
for every oracle case (`driver.case_for`), and our whatif ignores other pending work too.

Printed: the time of our analysis (load + whatif, in-process), the oracle's time (objects created
through the API, the scheduler run until it settles), outcome and victim counts on both sides and
whether they agree (outcome, victim set; `compare` in differential.py). `--json` keeps the numbers.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from .differential import compare, ours, secondary
from .driver import DEFAULT_GATES, case_for, oracle_version, run


def main_scale(args: Any) -> int:
    from benchmarks.generate import DEFAULT_OUT, ensure

    from .__main__ import read_items

    t0 = time.monotonic()
    meta = ensure(args.size, out=args.out or DEFAULT_OUT)
    t_gen = time.monotonic() - t0
    items = read_items(meta["list_path"], False)
    kind, ns, name = "podgroup", "bench-gangs", args.gang
    print(f"scale: size {args.size}: {meta['counts'].get('nodes')} nodes, {meta['counts'].get('pods')} pods; "
          f"question: whatif {kind} {name} -n {ns} (cluster ready in {t_gen:.1f}s)", file=sys.stderr)

    t0 = time.monotonic()
    mine = ours(items, kind, ns, name, DEFAULT_GATES)
    t_ours = time.monotonic() - t0
    print(f"  ours: {mine['outcome']}, {len(mine['victims'])} victim pod(s) in {t_ours:.1f}s", file=sys.stderr)

    case = case_for(items, kind, ns, name, f"scale-{args.size}-{name}")
    n_objects = len(case["objects"])
    del items
    t0 = time.monotonic()
    (real,) = run([case], DEFAULT_GATES, timeout_per_case=args.timeout, parallel=1, settle=args.settle, quiet=False)
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
                    "ties": len(mine.get("ties") or [])},
           "real": {"outcome": real.get("outcome"), "victims": len(real.get("victims") or []), "seconds": round(t_oracle, 2),
                    "caseSeconds": (real.get("elapsedMs") or 0) / 1000, "error": real.get("error")}}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 0 if v.agree else 1
