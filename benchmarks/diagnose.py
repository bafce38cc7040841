"""Timings of the diagnosis commands (issue 17) on the generated clusters.

`python -m benchmarks.diagnose --size S|M|L [--backend highs|cpsat] [--time-limit S] [--no-scale-up]`
prints one JSON line: snapshot load, `pending -A` triage (rows, seconds), `whatif --optimal` per
pending gang (scheduler vs optimum, model size, solver seconds, proven or not), and `why-preempted`
for one victim after our answer for gang-64 is applied to the cluster (as tests/diagnose_builders.aftermath).
"""

from __future__ import annotations

import argparse
import json
import time

from .generate import DEFAULT_OUT, ensure


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="S")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--backend", default="highs", choices=["highs", "cpsat"])
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--no-scale-up", action="store_true")
    ap.add_argument("--skip", default="", help="comma list of parts to skip: pending,optimal,forensics")
    a = ap.parse_args(argv)
    skip = set(filter(None, a.skip.split(",")))

    from kubectl_wap.autoscale.templates import infer_templates
    from kubectl_wap.diagnose.forensics import why_preempted
    from kubectl_wap.diagnose.optimal import optimal_victims
    from kubectl_wap.diagnose.pending import ScaleUp, triage
    from kubectl_wap.preemption.analyze import analyze
    from kubectl_wap.snapshot.io.files import load_snapshot

    meta = ensure(a.size, a.out)
    out: dict = {"size": a.size, "backend": a.backend}
    t = time.perf_counter()
    snap = load_snapshot(meta["snapshot_path"])
    out["load_s"] = round(time.perf_counter() - t, 3)
    if "pending" not in skip:
        t = time.perf_counter()
        tr = triage(snap, None, None, None, None, None if a.no_scale_up else ScaleUp(infer_templates(snap)[0]))
        out["pending"] = {"rows": len(tr.rows), "s": round(time.perf_counter() - t, 3), "scale_up": not a.no_scale_up}
    if "optimal" not in skip:
        out["optimal"] = {}
        for g in meta["gangs"]:
            t = time.perf_counter()
            res = analyze(snap, "podgroup", g["namespace"], g["name"])
            t1 = time.perf_counter()
            ans = optimal_victims(snap, res, None, a.time_limit, a.backend)
            t2 = time.perf_counter()
            out["optimal"][g["name"]] = {
                "scheduler": [len(res.victims), len(res.victim_pods)], "optimum": [len(ans.victims), ans.victim_pods],
                "status": ans.status, "vars": ans.variables, "rows": ans.constraints,
                "solver_s": round(sum(s.seconds for s in ans.solution.stages), 3) if ans.solution else None,
                "analyze_s": round(t1 - t, 3), "optimal_s": round(t2 - t1, 3)}
    if "forensics" not in skip:
        import os
        import sys

        from kubectl_wap.report.document import to_document
        from kubectl_wap.snapshot.decode.convert import build_snapshot
        from kubectl_wap.snapshot.decode.evidence import collect_evidence
        from kubectl_wap.snapshot.io.files import load_items

        # The test suite's aftermath(): our answer applied to the cluster (victims terminating, nominations).
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
        from diagnose_builders import aftermath

        g = meta["gangs"][0]
        _, items = load_items(meta["snapshot_path"])
        items = list(items)
        doc = to_document(analyze(snap, "podgroup", g["namespace"], g["name"]))
        after = aftermath(items, doc)
        s2 = build_snapshot(after)
        c, e = collect_evidence(after)
        v = doc["victims"][0]
        t = time.perf_counter()
        f = why_preempted(s2, c, e, "pod", v["namespace"], v["name"])
        out["why_preempted"] = {"s": round(time.perf_counter() - t, 3), "suspect": f.suspects[0].name if f.suspects else None,
                                "replay": f.replay.split(":")[0]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
