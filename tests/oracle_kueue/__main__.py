"""`python -m tests.oracle_kueue build` builds the Kueue oracle (tests/oracle-kueue/bin/).
`python -m tests.oracle_kueue run CASE.json` prints Kueue's answer for one case.
`python -m tests.oracle_kueue diff --cases 300 --seed 1 [--keep DIR]` compares our model
(kubectl_wap/queueing/kueue) with Kueue on generated setups and prints every disagreement.
`python -m tests.oracle_kueue mutants --cases 300` checks that the batch catches each mutant of
tests/oracle_kueue/mutants.py.
Run it from the repository root."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .driver import build, case_hash, diff, load_known, model_answer, oracle_answer, run
from .generate import generate


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.oracle_kueue")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build")
    r = sub.add_parser("run")
    r.add_argument("case")
    d = sub.add_parser("diff")
    d.add_argument("--cases", type=int, default=100)
    d.add_argument("--seed", type=int, default=1)
    d.add_argument("--keep", help="write each disagreement (case, ours, kueue) here as JSON")
    m = sub.add_parser("mutants", help="break one rule of our model at a time: the batch must catch each")
    m.add_argument("--cases", type=int, default=300)
    m.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    if a.cmd == "build":
        print(build(force=True))
        return 0
    if a.cmd == "mutants":
        from .mutants import main as mutants

        return mutants(a.cases, a.seed)
    if a.cmd == "run":
        case = json.loads(Path(a.case).read_text())
        answer = run([case])[0]
        print(json.dumps({"kueue": oracle_answer(answer), "ours": model_answer(case)}, indent=1, sort_keys=True))
        return 0
    start = time.monotonic()
    seeds = range(a.seed, a.seed + a.cases)
    cases = [generate(s) for s in seeds]
    for c, s in zip(cases, seeds, strict=True):
        c["seed"] = s
    bad = diff(cases)
    known = load_known()
    unknown = 0
    for b in bad:
        h = case_hash(b["case"])
        tag = f"known ({known[h]['reason'][:60]}...)" if h in known else "NEW"
        unknown += h not in known
        print(f"seed {b['case']['seed']} [{tag}] hash {h}: ours {json.dumps(b['ours'], sort_keys=True)}\n"
              f"   kueue {json.dumps(b['kueue'], sort_keys=True)}")
        if a.keep:
            Path(a.keep).mkdir(parents=True, exist_ok=True)
            (Path(a.keep) / f"seed-{b['case']['seed']}.json").write_text(json.dumps({"hash": h, **b}, indent=1, sort_keys=True) + "\n")
    n = len(cases)
    print(f"{n - len(bad)}/{n} agree ({100 * (n - len(bad)) / n:.1f} %), {len(bad) - unknown} known, {unknown} new; "
          f"{time.monotonic() - start:.1f}s")
    return 1 if unknown else 0


if __name__ == "__main__":
    sys.exit(main())
