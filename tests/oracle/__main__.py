"""`python -m tests.oracle whatif KIND NAME -n NS --snapshot FILE [--version 1.38] [--feature-gates ...] [-o json|yaml]`
`python -m tests.oracle whatif -f MANIFEST --snapshot FILE ...` (the objects our `whatif -f` expands it to)

The same question as `kubectl wap whatif KIND NAME ...`, answered by the real kube-scheduler (the
Go oracle in this directory, built on first use) of a version: 1.37 (v1.37.2, the default) or 1.38
(v1.38.0-beta.0). Run it from the repository root.

  python -m tests.oracle build --version 1.38
  python -m tests.oracle diff --version 1.38 --cases 300 --seed 3 --scenarios
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .driver import DEFAULT_VERSION, GATES_BY_VERSION, VERSIONS, OracleError, case_for, contract, oracle_version, run


def read_items(path: str | None, demo: bool) -> list[dict]:
    """Plain Kubernetes objects from anything our --snapshot reads (our snapshot formats expand
    back to the items that were written)."""
    from kubectl_wap.snapshot.io.files import DEMO_PATH, load_items, stream_snapshot

    p = DEMO_PATH if demo else Path(path or "")
    # Not stream_file: for a List it decodes only the fields our engine reads (snapshot/decode/lean.py),
    # and the API server rejects such a pod (e.g. a projected token volume without its
    # serviceAccountName). The oracle needs every object whole.
    streamed = stream_snapshot(p) if p.is_file() else None
    _, items = streamed if streamed is not None else load_items(p, whole=True)
    return [dict(o) for o in items if isinstance(o, dict)]


def _tie_break_arg(parser: argparse.ArgumentParser, default: str, why: str) -> None:
    parser.add_argument("--tie-break", choices=["node-name", "random"], default=default,
                        help="equal top node scores in the oracle: random (upstream unchanged) or node-name (pinned to the "
                             f"smallest node name, our engine's rule; tiebreak_test.go). Default {default}: {why}")


def _version_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", choices=VERSIONS, default=DEFAULT_VERSION,
                        help=f"the Kubernetes version of the oracle, and of our engine's --scheduler-version (default {DEFAULT_VERSION}; "
                             + ", ".join(f"{v}: {oracle_version(v)}" for v in VERSIONS) + ")")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.oracle", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    w = sub.add_parser("whatif", help="what the real kube-scheduler does for a pending object")
    w.add_argument("kind", nargs="?", choices=["podgroup", "pg", "compositepodgroup", "cpg", "pod", "po"])
    w.add_argument("name", nargs="?")
    w.add_argument("-n", "--namespace", default=None, help="the object's namespace (default: default; with -f, for objects without one)")
    w.add_argument("-f", "--filename", help="a manifest as for `kubectl wap whatif -f` (a PodGroup or CPG tree and its pods, or a "
                   "workload: Job, JobSet, PyTorchJob, RayCluster, ...): its objects join the cluster as the CLI adds them")
    src = w.add_mutually_exclusive_group(required=True)
    src.add_argument("--snapshot", help="our snapshot, a kubectl get -o json|yaml dump, a directory, or .gz of any")
    src.add_argument("--demo", action="store_true", help="the bundled demo cluster")
    w.add_argument("--feature-gates", default="", help="overrides of the version's defaults: "
                   + "; ".join(f"{v}: {g}" for v, g in GATES_BY_VERSION.items()))
    _version_arg(w)
    w.add_argument("-o", "--output", choices=["json", "yaml"], default="json")
    w.add_argument("--log", help="write the apiserver/scheduler log here")
    w.add_argument("--percentage-of-nodes-to-score", type=int, default=100,
                   help="kube-scheduler percentageOfNodesToScore (default 100, as our engine models; 0 = upstream's adaptive default)")
    _tie_break_arg(w, "random", "the real scheduler as it is")
    b = sub.add_parser("build", help="compile the oracle (go test -c); prints how long it took")
    _version_arg(b)
    d = sub.add_parser("diff", help="differential batch: our engine vs the real scheduler on generated clusters")
    d.add_argument("--cases", type=int, default=300)
    d.add_argument("--seed", type=int, default=1)
    d.add_argument("--start", type=int, default=0, help="first case index")
    d.add_argument("--generator", type=int, choices=[1, 2], default=1,
                   help="1: generate.py (the batch's long-standing clusters); 2: generate2.py (the second, independent "
                        "generator: pod shapes, CPG trees, PDB selectors and constraints the first never draws)")
    d.add_argument("--scenarios", action="store_true", help="also run every tests/scenarios fixture the oracle can run")
    d.add_argument("--examples", action="store_true", help="also ask `whatif -f` of every docs/examples workload manifest on the "
                   "demo cluster (tests/oracle/manifest.py)")
    d.add_argument("--retries", type=int, default=12, help="reruns of a disagreeing case (the random choices the oracle does not pin)")
    d.add_argument("--out", default="", help="directory for disagreement case files (default: a temp dir)")
    d.add_argument("--json", default="", help="write the summary as JSON here")
    d.add_argument("--feature-gates", default="")
    _version_arg(d)
    d.add_argument("--batch", type=int, default=100, help="cases per oracle run")
    d.add_argument("--only", default="", help="comma-separated case indices to run (e.g. 4,12,21)")
    _tie_break_arg(d, "node-name", "a case has one answer (with random, reruns and --explore judge the ties)")
    d.add_argument("--explore", type=int, default=30,
                   help="tie-dependent cases: runs of our engine with random tie-breaks looking for the real answer")
    sc = sub.add_parser("scale", help="one cluster at scale (benchmark size M: 1,000 nodes, 30k pods, a 256-pod gang), both engines timed")
    sc.add_argument("--size", default="M", help="benchmark size (benchmarks/generate.py SIZES)")
    sc.add_argument("--gang", default="gang-256", help="the pending gang asked about (bench-gangs namespace)")
    sc.add_argument("--out", default="", help="benchmark cache directory (default: benchmarks' own)")
    sc.add_argument("--timeout", type=float, default=3600, help="longest time the oracle may take, seconds")
    sc.add_argument("--settle", default="2s", help="how long the cluster must stay unchanged before it is read off")
    sc.add_argument("--json", default="", help="write the numbers as JSON here")
    sc.add_argument("--keep-starts", action="store_true",
                    help="keep the generator's start times (many victims then tie in importance: see scale.py)")
    _tie_break_arg(sc, "random", "the gang is pinned instead (with node-name it need not be: try --no-pin)")
    sc.add_argument("--no-pin", action="store_true",
                    help="leave the gang's pods free to land anywhere (the placement is then a random draw: see scale.py)")
    args = ap.parse_args(argv)
    if args.command == "whatif" and bool(args.filename) == bool(args.kind and args.name):
        ap.error("whatif needs KIND NAME or -f FILE (one of them)")
    if args.command == "build":
        from .driver import build

        try:
            build(quiet=False, version=args.version)
        except OracleError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        return 0
    if args.command == "scale":
        from .scale import main_scale

        return main_scale(args)
    if args.command == "diff":
        from .batch import main_diff

        return main_diff(args)

    gates = dict(kv.split("=", 1) for kv in GATES_BY_VERSION[args.version].split(","))
    for kv in filter(None, (x.strip() for x in args.feature_gates.split(","))):
        k, _, v = kv.partition("=")
        gates[k] = v
    spelled = ",".join(f"{k}={v}" for k, v in gates.items())
    try:
        items = read_items(args.snapshot, args.demo)
        kind, ns, name = args.kind, args.namespace or "default", args.name
        if args.filename:
            from .manifest import manifest_items

            items, kind, ns, name = manifest_items(items, args.filename, args.namespace)
        case = case_for(items, kind, ns, name)
        (res,) = run([case], spelled, log=args.log, quiet=False,
                     percentage_of_nodes_to_score=args.percentage_of_nodes_to_score, tie_break=args.tie_break,
                     version=args.version)
    except (OracleError, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # input errors from our loaders are one line too
        if type(e).__name__ == "UserError":
            print(f"error: {e}", file=sys.stderr)
            return 2
        raise
    doc = contract(res, args.version)
    doc["featureGates"] = spelled
    if args.output == "yaml":
        import yaml

        print(yaml.safe_dump(doc, sort_keys=False), end="")
    else:
        print(json.dumps(doc, indent=2))
    return 1 if res.get("error") else 0


if __name__ == "__main__":
    sys.exit(main())
