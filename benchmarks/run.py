"""Benchmark runner: `python -m benchmarks.run [--size S|M|L|all] [--repeat N]`.

Per size (generated on first use by :mod:`benchmarks.generate`, cached under --out), every
measurement runs in a fresh child process so peak RSS belongs to that step alone:

- ``bare``: ``gc.disable(); json.load(gzip.open(list))``, the floor any Python loader pays;
- ``snapshot``: ``load_snapshot`` of our snapshot format, then ``analyze`` (fast reprieval) for
  each pending gang; end-to-end from our format for gang g = load(snapshot) + analyze(g);
- ``e2e``: the same from the full ``kubectl get -o json`` List (victims asserted equal);
- ``e2e1``: the same from that List written on one line (``<size>-list1.json.gz``, issue 18);
- ``cli``: the installed ``kubectl-wap whatif ... -s snapshot`` per gang, wall time of the whole
  process (interpreter start, imports, load, analysis, table rendering);
- ``literal`` (once, not repeated: it is slow): ``analyze(..., fast=False)`` for each gang, under a
  per-gang time limit, asserting the same outcome and the same victims as the fast path.

Medians over --repeat runs are printed; ratio (a) = end-to-end / bare json.load of the same List,
ratio (b) = literal / fast analysis time. Raw numbers go to <out>/results-<size>.json. Every
timed step also records its CPU time (`time.process_time`, `*_cpu_s`): on a machine shared with
other work, wall time measures the neighbours too.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import time

from .generate import DEFAULT_OUT, SIZES, ensure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _child(mode: str, meta: dict, literal_timeout: float, analyze_timeout: float = 0) -> dict:
    if mode == "bare":
        t, c = time.perf_counter(), time.process_time()
        gc.disable()
        with gzip.open(meta["list_path"]) as f:
            doc = json.load(f)
        out = {"bare_s": time.perf_counter() - t, "bare_cpu_s": time.process_time() - c, "items": len(doc["items"])}
    elif mode == "cli":
        # The user's end-to-end: the installed console script, table output, one process per gang.
        out = {"cli_s": {}}
        exe = os.path.join(os.path.dirname(sys.executable), "kubectl-wap")
        cmd = [exe] if os.path.exists(exe) else [sys.executable, "-m", "kubectl_wap.cli"]
        out["cli_cpu_s"] = {}
        for g in meta["gangs"]:
            t, c = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(cmd + ["whatif", "podgroup", g["name"], "-n", g["namespace"], "-s", meta["snapshot_path"]],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            out["cli_s"][g["name"]] = time.perf_counter() - t
            d = resource.getrusage(resource.RUSAGE_CHILDREN)
            out["cli_cpu_s"][g["name"]] = d.ru_utime + d.ru_stime - c.ru_utime - c.ru_stime
        out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        return out
    else:
        from kubectl_wap.preemption.analyze import analyze
        from kubectl_wap.snapshot.io.files import load_snapshot

        # snapshot: our format (the literal comparison reads it too); e2e: the kubectl List.
        key, path = {"e2e": ("load_list_s", meta["list_path"]), "e2e1": ("load_list_s", meta.get("list1_path"))}.get(
            mode, ("load_snapshot_s", meta["snapshot_path"]))
        t, c = time.perf_counter(), time.process_time()
        snap = load_snapshot(path)
        out = {key: time.perf_counter() - t, key[:-2] + "_cpu_s": time.process_time() - c, "pods": len(snap.pods),
               "analyze_s": {}, "analyze_cpu_s": {}, "outcome": {}, "victims": {}}
        fast_victims = {}

        def alarm(*_):
            raise TimeoutError

        signal.signal(signal.SIGALRM, alarm)
        # The literal run's limit counts this process's CPU seconds (SIGVTALRM), not wall time: a
        # machine busy with other work must not cut a run off sooner (the CI smoke test uses 8 s).
        signal.signal(signal.SIGVTALRM, alarm)
        for g in meta["gangs"]:
            t, c = time.perf_counter(), time.process_time()
            if analyze_timeout:
                signal.setitimer(signal.ITIMER_REAL, analyze_timeout)
            try:
                r = analyze(snap, "podgroup", g["namespace"], g["name"], fast=True)
            except TimeoutError:
                out["analyze_s"][g["name"]] = None  # did not finish within analyze_timeout
                out["outcome"][g["name"]] = "timeout"
                out["victims"][g["name"]] = [None, None]
                continue
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            out["analyze_s"][g["name"]] = time.perf_counter() - t
            out["analyze_cpu_s"][g["name"]] = time.process_time() - c
            out["outcome"][g["name"]] = r.outcome
            out["victims"][g["name"]] = [len(r.victims), len(r.victim_pods)]
            fast_victims[g["name"]] = (r.outcome, [p.key for p in r.victim_pods])
            out.setdefault("victim_keys", {})[g["name"]] = [list(p.key) if isinstance(p.key, tuple) else p.key for p in r.victim_pods]
        out["maxrss_mb"] = _maxrss_mb()
        if mode == "literal":
            out["literal_s"], out["literal_same"] = {}, {}
            for g in meta["gangs"]:
                if g["name"] not in fast_victims:
                    continue
                signal.setitimer(signal.ITIMER_VIRTUAL, literal_timeout)
                t = time.perf_counter()
                try:
                    r = analyze(snap, "podgroup", g["namespace"], g["name"], fast=False)
                except TimeoutError:
                    out["literal_s"][g["name"]] = None  # did not finish within literal_timeout
                    continue
                finally:
                    signal.setitimer(signal.ITIMER_VIRTUAL, 0)
                out["literal_s"][g["name"]] = time.perf_counter() - t
                same = (r.outcome, [p.key for p in r.victim_pods]) == fast_victims[g["name"]]
                out["literal_same"][g["name"]] = same
                assert same, f"literal and fast reprieval disagree for {g['name']}"
    out.setdefault("maxrss_mb", _maxrss_mb())
    return out


def _spawn(mode: str, size: str, out_dir: str, literal_timeout: float, analyze_timeout: float = 0) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "benchmarks.run", "--child", mode, "--size", size, "--out", out_dir, "--literal-timeout", str(literal_timeout),
           "--analyze-timeout", str(analyze_timeout)]
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"benchmark child {mode} {size} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def bench(size: str, repeat: int = 3, out_dir: str = DEFAULT_OUT, literal: bool = True, literal_timeout: float = 300.0,
          gen_kw: dict | None = None, analyze_timeout: float = 0) -> dict:
    meta = ensure(size, out_dir, **(gen_kw or {}))
    runs: dict[str, list[dict]] = {"bare": [], "snapshot": [], "e2e": [], "e2e1": [], "cli": []}
    for _ in range(repeat):
        for mode in runs:
            runs[mode].append(_spawn(mode, size, out_dir, literal_timeout, analyze_timeout))
    lit = _spawn("literal", size, out_dir, literal_timeout, analyze_timeout) if literal else None
    med = statistics.median
    gangs = [g["name"] for g in meta["gangs"]]
    res = {
        "size": size, "nodes": meta["counts"].get("nodes"), "pods": meta["counts"].get("pods"), "repeat": repeat,
        "list_mb_gz": meta["list_bytes_gz"] / 2**20, "list_mb_raw": meta["list_bytes_raw"] / 2**20,
        "snapshot_mb_gz": meta["snapshot_bytes_gz"] / 2**20, "generate_s": meta["generate_s"],
        "bare_s": med(r["bare_s"] for r in runs["bare"]), "bare_rss_mb": max(r["maxrss_mb"] for r in runs["bare"]),
        "load_snapshot_s": med(r["load_snapshot_s"] for r in runs["snapshot"]),
        "snapshot_rss_mb": max(r["maxrss_mb"] for r in runs["snapshot"]),
        "load_list_s": med(r["load_list_s"] for r in runs["e2e"]), "e2e_rss_mb": max(r["maxrss_mb"] for r in runs["e2e"]),
        "load_list1_s": med(r["load_list_s"] for r in runs["e2e1"]), "e2e1_rss_mb": max(r["maxrss_mb"] for r in runs["e2e1"]),
        "bare_cpu_s": med(r["bare_cpu_s"] for r in runs["bare"]),
        "load_snapshot_cpu_s": med(r["load_snapshot_cpu_s"] for r in runs["snapshot"]),
        "load_list_cpu_s": med(r["load_list_cpu_s"] for r in runs["e2e"]),
        "load_list1_cpu_s": med(r["load_list_cpu_s"] for r in runs["e2e1"]),
        "cli_rss_mb": max(r["maxrss_mb"] for r in runs["cli"]),
        "gangs": {},
    }
    for g in gangs:
        done = [r for r in runs["snapshot"] if r["analyze_s"][g] is not None]
        done_list = [r for r in runs["e2e"] if r["analyze_s"][g] is not None]
        if not done or not done_list:
            res["gangs"][g] = {"outcome": f"timeout>{analyze_timeout:.0f}s", "victim_units": None, "victim_pods": None,
                               "analyze_s": None, "e2e_s": None, "ratio_a": None, "e2e_snapshot_s": None, "cli_s": None}
            continue
        a = med(r["analyze_s"][g] for r in done)
        e2e = med(r["load_list_s"] + r["analyze_s"][g] for r in done_list)
        row = {"outcome": runs["snapshot"][0]["outcome"][g], "victim_units": runs["snapshot"][0]["victims"][g][0],
               "victim_pods": runs["snapshot"][0]["victims"][g][1], "analyze_s": a, "e2e_s": e2e, "ratio_a": e2e / res["bare_s"],
               "e2e_snapshot_s": med(r["load_snapshot_s"] + r["analyze_s"][g] for r in done),
               "cli_s": med(r["cli_s"][g] for r in runs["cli"])}
        e2e1 = med(r["load_list_s"] + r["analyze_s"][g] for r in runs["e2e1"])
        row.update({
            "e2e1_s": e2e1, "ratio_a1": e2e1 / res["bare_s"],
            "analyze_cpu_s": med(r["analyze_cpu_s"][g] for r in done),
            "e2e_snapshot_cpu_s": med(r["load_snapshot_cpu_s"] + r["analyze_cpu_s"][g] for r in done),
            "e2e_cpu_s": med(r["load_list_cpu_s"] + r["analyze_cpu_s"][g] for r in done_list),
            "e2e1_cpu_s": med(r["load_list_cpu_s"] + r["analyze_cpu_s"][g] for r in runs["e2e1"]),
            "cli_cpu_s": med(r["cli_cpu_s"][g] for r in runs["cli"]),
        })
        row["ratio_a_cpu"] = row["e2e_cpu_s"] / res["bare_cpu_s"]
        row["ratio_a1_cpu"] = row["e2e1_cpu_s"] / res["bare_cpu_s"]
        for other in ("e2e", "e2e1"):
            assert runs[other][0]["victims"][g] == runs["snapshot"][0]["victims"][g], f"{other} and snapshot disagree for {g}"
            assert runs[other][0]["victim_keys"][g] == runs["snapshot"][0]["victim_keys"][g], f"{other} and snapshot victims differ for {g}"
        if lit is not None:
            ls = lit["literal_s"].get(g)
            row["literal_s"] = ls
            row["ratio_b"] = (ls / lit["analyze_s"][g]) if ls is not None and lit["analyze_s"][g] else None
            row["literal_same"] = lit["literal_same"].get(g)
        res["gangs"][g] = row
    with open(os.path.join(out_dir, f"results-{size}.json"), "w") as f:
        json.dump({"summary": res, "runs": runs, "literal": lit}, f, indent=1)
    return res


def _fmt(v, spec=".2f") -> str:
    return "-" if v is None else format(v, spec)


def print_table(results: list[dict], literal_timeout: float, file=None) -> None:
    file = file or sys.stdout
    print("\nLoad (median, seconds; RSS = peak of that child process, MB; snap RSS includes the three analyses)", file=file)
    print(f"{'size':4} {'nodes':>6} {'pods':>7} {'List gz/raw MB':>15} {'snap gz MB':>10} {'bare json':>9} {'bare RSS':>8} "
          f"{'load snap':>9} {'snap RSS':>8} {'load List':>9} {'List RSS':>8} {'CLI RSS':>8} {'gen s':>7}", file=file)
    for r in results:
        print(f"{r['size']:4} {r['nodes']:>6} {r['pods']:>7} {r['list_mb_gz']:>7.1f}/{r['list_mb_raw']:<7.0f} {r['snapshot_mb_gz']:>10.1f} "
              f"{r['bare_s']:>9.2f} {r['bare_rss_mb']:>8.0f} {r['load_snapshot_s']:>9.2f} {r['snapshot_rss_mb']:>8.0f} "
              f"{r['load_list_s']:>9.2f} {r['e2e_rss_mb']:>8.0f} {r.get('cli_rss_mb', 0):>8.0f} {r['generate_s']:>7.1f}", file=file)
    print(f"\nAnalysis per pending gang (median s). e2e snap = load snapshot + analyze; CLI = `kubectl-wap whatif -s snapshot` "
          f"wall time (process start to exit, table output); e2e List = load List + analyze; (a) = e2e List / bare json.load; "
          f"(b) = literal / fast (literal once, limit {literal_timeout:.0f}s)", file=file)
    print(f"{'size':4} {'gang':10} {'outcome':9} {'victims u/p':>11} {'analyze':>8} {'e2e snap':>8} {'CLI':>6} {'e2e List':>8} {'(a)':>5} "
          f"{'literal':>8} {'(b)':>6} same", file=file)
    for r in results:
        for g, x in r["gangs"].items():
            lit = x.get("literal_s")
            timed_out = lit is None and "literal_s" in x
            lit_s = _fmt(lit) if lit is not None else (f">{literal_timeout:.0f}" if timed_out else "-")
            ratio_b = _fmt(x.get("ratio_b"), ".1f")
            if timed_out and x.get("analyze_s"):
                ratio_b = f">{literal_timeout / x['analyze_s']:.0f}"  # a lower bound: the literal run was cut off
            same = x.get("literal_same")
            print(f"{r['size']:4} {g:10} {x['outcome']:9} {_fmt(x['victim_units'], 'd'):>5}/{_fmt(x['victim_pods'], 'd'):<5} "
                  f"{_fmt(x['analyze_s'], '.3f'):>8} {_fmt(x.get('e2e_snapshot_s')):>8} {_fmt(x.get('cli_s')):>6} {_fmt(x['e2e_s']):>8} "
                  f"{_fmt(x['ratio_a']):>5} {lit_s:>8} {ratio_b:>6} {'-' if same is None else same}", file=file)
    print("\nIssue 18: wall (CPU) seconds, medians; e2e 1-line = load the one-line List + analyze; (a1) = that / bare json.load "
          "of the per-line List (the same JSON text); ratios in wall and in CPU time", file=file)
    print(f"{'size':4} {'gang':10} {'analyze':>13} {'e2e snap':>13} {'CLI':>13} {'e2e List':>13} {'e2e 1-line':>13} "
          f"{'(a) wall/cpu':>12} {'(a1) wall/cpu':>13}", file=file)
    for r in results:
        for g, x in r["gangs"].items():
            if x.get("e2e1_s") is None:
                continue
            pair = lambda a, b: f"{_fmt(x.get(a))} ({_fmt(x.get(b))})"  # noqa: E731
            print(f"{r['size']:4} {g:10} {pair('analyze_s', 'analyze_cpu_s'):>13} {pair('e2e_snapshot_s', 'e2e_snapshot_cpu_s'):>13} "
                  f"{pair('cli_s', 'cli_cpu_s'):>13} {pair('e2e_s', 'e2e_cpu_s'):>13} {pair('e2e1_s', 'e2e1_cpu_s'):>13} "
                  f"{_fmt(x['ratio_a'])}/{_fmt(x.get('ratio_a_cpu')):>6} {_fmt(x['ratio_a1'])}/{_fmt(x.get('ratio_a1_cpu')):>6}", file=file)
    if len(results) > 1:
        print("\nScaling: microseconds per pod (a flat column means linear cost in pods for a fixed gang size)", file=file)
        gangs = list(results[0]["gangs"])
        print(f"{'size':4} {'pods':>7} {'load snap':>9} {'load List':>9} " + " ".join(f"{'an. ' + g:>14}" for g in gangs), file=file)
        for r in results:
            per = 1e6 / r["pods"]
            cells = " ".join(f"{_fmt(r['gangs'][g]['analyze_s'] * per if r['gangs'][g]['analyze_s'] else None, '.1f'):>14}" for g in gangs)
            print(f"{r['size']:4} {r['pods']:>7} {r['load_snapshot_s'] * per:>9.1f} {r['load_list_s'] * per:>9.1f} {cells}", file=file)


def show(sizes: list[str], out_dir: str = DEFAULT_OUT, literal_timeout: float = 300.0) -> None:
    """Print the tables of finished runs from <out>/results-<size>.json."""
    results = []
    for size in sizes:
        with open(os.path.join(out_dir, f"results-{size}.json")) as f:
            results.append(json.load(f)["summary"])
    print_table(results, literal_timeout)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="kubectl-wap load/analysis benchmarks")
    ap.add_argument("--size", default="S", help="S, M, L or all (any cached size name for --child)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--no-literal", action="store_true", help="skip the literal-reprieval comparison (ratio b)")
    ap.add_argument("--literal-timeout", type=float, default=300.0, help="seconds per gang for the literal run")
    ap.add_argument("--analyze-timeout", type=float, default=0, help="seconds per gang for the fast analysis (0: no limit)")
    ap.add_argument("--show", action="store_true", help="only print the tables of the cached results (<out>/results-<size>.json)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.show:
        show(list(SIZES) if a.size == "all" else [a.size], a.out, a.literal_timeout)
        return
    if a.child:
        meta = ensure(a.size, a.out)
        print(json.dumps(_child(a.child, meta, a.literal_timeout, a.analyze_timeout)))
        return
    if a.size not in SIZES and a.size != "all":
        ap.error(f"--size must be one of {', '.join(SIZES)} or all")
    results = []
    for s in SIZES if a.size == "all" else [a.size]:
        results.append(bench(s, a.repeat, a.out, not a.no_literal, a.literal_timeout, analyze_timeout=a.analyze_timeout))
        print_table(results[-1:], a.literal_timeout, file=sys.stderr)  # progress
    print_table(results, a.literal_timeout)


if __name__ == "__main__":
    main()
