"""A/B of whole CLI commands between two commits: `python -m benchmarks.ab REV_A REV_B [--size L]`.

On a machine whose speed drifts during the day (this one: +-15 % run to run, ~2x between days),
numbers taken an hour apart do not compare; runs of the two commits alternated do. Each revision is
exported with `git worktree add --detach` into a temporary directory and run from there with
PYTHONPATH (same interpreter and installed dependencies for both: a dependency change between the
two is not measured). Commands per gang of the size's cached cluster (`benchmarks.generate`):
`whatif` and `explain` of the largest gang from our snapshot, and `rank`. Prints the medians and
every run; bytecode is written (PYTHONDONTWRITEBYTECODE unset) and one warm-up run per revision
is not counted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from .generate import DEFAULT_OUT, ensure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_RUN = "import sys; sys.argv[0] = 'kubectl-wap'; from kubectl_wap.cli import main; main()"


def commands(meta: dict) -> dict[str, list[str]]:
    gang = max(meta["gangs"], key=lambda g: g["pods"])
    snap = meta["snapshot_path"]
    target = ["podgroup", gang["name"], "-n", gang["namespace"], "-s", snap]
    return {"whatif": ["whatif", *target], "explain": ["explain", *target], "rank": ["rank", "-s", snap]}


def _once(tree: str, args: list[str]) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = tree
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", _RUN, *args], env=env, cwd=tempfile.gettempdir(),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def ab(revs: list[str], size: str, repeat: int, out: str = DEFAULT_OUT, gen_kw: dict | None = None) -> dict[tuple[str, str], list[float]]:
    cmds = commands(ensure(size, out, **(gen_kw or {})))
    with tempfile.TemporaryDirectory(prefix="kubectl-wap-ab-") as tmp:
        trees = []
        for i, rev in enumerate(revs):
            tree = os.path.join(tmp, f"{i}")
            subprocess.run(["git", "-C", ROOT, "worktree", "add", "-q", "--detach", tree, rev], check=True)
            trees.append(tree)
        try:
            for tree in trees:
                _once(tree, cmds["whatif"])  # warm-up: bytecode, page cache
            runs: dict[tuple[str, str], list[float]] = {}
            for _ in range(repeat):
                for name, args in cmds.items():
                    for rev, tree in zip(revs, trees):
                        runs.setdefault((name, rev), []).append(_once(tree, args))
            return runs
        finally:
            for tree in trees:
                subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", tree], check=False)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="alternate two commits' CLI commands on a generated cluster")
    ap.add_argument("revs", nargs=2, metavar="REV")
    ap.add_argument("--size", default="L")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=DEFAULT_OUT)
    a = ap.parse_args(argv)
    runs = ab(a.revs, a.size, a.repeat, a.out)
    for (name, rev), v in runs.items():
        print(f"{name:8} {rev:12} median {statistics.median(v):6.2f} s   runs {' '.join(f'{x:.2f}' for x in v)}")


if __name__ == "__main__":
    main()
