"""Live-capture benchmark: `python -m benchmarks.live --size S|M|L [--out DIR] [--mode snapshot,load]`.

Serves a generated cluster's List (:mod:`benchmarks.generate`, full API-shaped pods) through the
loopback API server the tests use (``tests/fake_apiserver.py``: HTTPS, bearer token, paginated
LIST with continue tokens), and runs our live read path against it in a fresh child process:

- ``snapshot``: ``kubectl wap snapshot -o <out>/<size>-live-snapshot.json.gz`` (issue 8's target:
  peak RSS <= 1.5 GiB at L);
- ``load``: what ``whatif`` without ``--snapshot`` pays before analyzing: ``raw_source`` (the live
  read, spooled in memory as the snapshot's lines since issue 34) then ``build`` (the model, read
  back as a snapshot file is), in one process.

Peak RSS is ``ru_maxrss`` of that child alone (``os.wait4``). The server runs in another process
and holds each item as its encoded bytes (~0.9 GB at L), so neither its memory nor its JSON
encoding lands in the capturing process; it still competes for the CPU (2 cores here), so times
are indicative. Results go to ``<out>/live-<size>.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import subprocess
import sys
import time
from typing import Any, Iterator

from .generate import DEFAULT_OUT, SIZES, ensure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the loopback API server lives with the tests

from fake_apiserver import RESOURCES as API_RESOURCES  # noqa: E402
from fake_apiserver import FakeApiServer, ResourceInfo  # noqa: E402

TOKEN = "bench-t0ken"
GIB = 1024**3
TARGET_RSS_MB = 1.5 * 1024  # issue 8: live capture of L within 1.5 GiB
# The generator writes `{"apiVersion":"…","kind":"…",` first in every item (json.dumps keeps key order).
_PREFIX = re.compile(rb'\{"apiVersion":"([^"]*)","kind":"([^"]*)",')


def encoded_items(list_path: str) -> Iterator[tuple[str, bytes]]:
    """(kind, item JSON without apiVersion/kind) for each item of a benchmarks.generate List.

    Streams the file line by line (the generator writes one item per line) so the server never
    holds the parsed List; list items on the wire carry neither apiVersion nor kind."""
    with gzip.open(list_path, "rb") as f:
        if not f.readline().startswith(b'{"apiVersion":"v1","kind":"List"'):
            raise ValueError(f"{list_path}: not a benchmarks.generate List")
        prev: bytes | None = None
        for line in f:
            if prev is not None:
                yield _split(list_path, prev.rstrip(b"\n").removesuffix(b","))
            prev = line
        # The List's closing `]}` follows the last item on its line.
        last = (prev or b"").rstrip(b"\n")
        if not last.endswith(b"]}"):
            raise ValueError(f"{list_path}: truncated List")
        if last != b"]}":
            yield _split(list_path, last[:-2])


def _split(list_path: str, line: bytes) -> tuple[str, bytes]:
    m = _PREFIX.match(line)
    if m is None:
        raise ValueError(f"{list_path}: an item does not start with apiVersion and kind")
    return m.group(2).decode(), b"{" + line[m.end():]


class EncodedApiServer(FakeApiServer):
    """The test API server over pre-encoded items: a LIST page is a join of stored bytes."""

    def __init__(self, list_path: str, token: str = TOKEN) -> None:
        super().__init__((), token)
        plural = {r.kind: r.plural for r in API_RESOURCES}
        for kind, body in encoded_items(list_path):
            self._store[plural[kind]].append(body)  # cluster-wide lists only: no namespace filter needed

    def list_body(self, info: ResourceInfo, meta: dict, page: list[Any]) -> bytes:
        head = json.dumps({"kind": f"{info.kind}List", "apiVersion": info.group_version, "metadata": meta})
        return head[:-1].encode() + b',"items":[' + b",".join(page) + b"]}"


def serve(list_path: str, kubeconfig: str) -> None:
    """Server child: serve until stdin closes. Prints one JSON line once it accepts requests."""
    t = time.perf_counter()
    srv = EncodedApiServer(list_path)
    with srv:
        srv.write_kubeconfig(kubeconfig)
        counts = {k: len(v) for k, v in srv._store.items()}
        print(json.dumps({"url": srv.url, "counts": counts, "load_s": round(time.perf_counter() - t, 2),
                          "rss_mb": round(_maxrss_mb(resource.RUSAGE_SELF))}), flush=True)
        sys.stdin.read()  # the parent closes our stdin when it is done


def load_child(kubeconfig: str) -> None:
    """Capture child for mode `load`: the live read and the model build, as `whatif` runs them."""
    from kubectl_wap.snapshot.source import build, raw_source

    t = time.perf_counter()
    header, items = raw_source(None, False, kubeconfig, None)
    t_read = time.perf_counter() - t
    snap = build(header, items)
    print(json.dumps({"read_s": round(t_read, 2), "build_s": round(time.perf_counter() - t - t_read, 2),
                      "pods": len(snap.pods), "nodes": len(snap.nodes)}))


def _maxrss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux: KiB


def _run_measured(cmd: list[str]) -> tuple[float, float, str]:
    """Run `cmd`; return (wall seconds, peak RSS MB of that process alone, stdout). Its CPU
    seconds (user + system, all threads) are in `_cpu_s` after: on a shared machine the wall
    time says as much about the neighbours as about the code."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    out, err = p.communicate()  # reaps the child
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {err.decode()[-2000:]}")
    # The measuring process has no other child, so RUSAGE_CHILDREN is this command's own peak.
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    global _cpu_s
    _cpu_s = round(ru.ru_utime + ru.ru_stime, 2)
    return wall, _maxrss_mb(resource.RUSAGE_CHILDREN), out.decode()


_cpu_s = 0.0


def measure(mode: str, kubeconfig: str, out: str, size: str) -> dict:
    """One capture in a fresh child. Called in a process of its own (see `bench`)."""
    py = sys.executable
    if mode == "snapshot":
        path = os.path.join(out, f"{size}-live-snapshot.json.gz")
        cmd = [py, "-c", "import sys; sys.argv[0] = 'kubectl-wap'; from kubectl_wap.cli import main; main()",
               "snapshot", "--output-file", path, "--kubeconfig", kubeconfig, "--color", "never"]
        wall, rss, _ = _run_measured(cmd)
        return {"mode": mode, "wall_s": round(wall, 2), "peak_rss_mb": round(rss), "cpu_s": _cpu_s,
                "snapshot_bytes_gz": os.path.getsize(path)}
    if mode == "load":
        wall, rss, stdout = _run_measured([py, "-m", "benchmarks.live", "--load-child", kubeconfig])
        return {"mode": mode, "wall_s": round(wall, 2), "peak_rss_mb": round(rss), "cpu_s": _cpu_s,
                **json.loads(stdout.splitlines()[-1])}
    raise ValueError(f"unknown mode {mode!r}")


def bench(meta: dict, out: str, modes: tuple[str, ...] = ("snapshot", "load")) -> dict:
    """Start the server child, measure each mode in a fresh measuring process, stop the server."""
    size = meta["size"]
    kubeconfig = os.path.join(out, f"{size}-live-kubeconfig")
    srv = subprocess.Popen([sys.executable, "-m", "benchmarks.live", "--serve", meta["list_path"], kubeconfig],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert srv.stdout is not None and srv.stdin is not None
        line = srv.stdout.readline()
        if not line:
            raise RuntimeError("the API server child exited before it was ready")
        server = json.loads(line)
        res: dict[str, Any] = {"size": size, "pods": meta["counts"].get("pods"), "nodes": meta["counts"].get("nodes"),
                               "list_bytes_raw": meta.get("list_bytes_raw"), "server": server, "runs": []}
        for mode in modes:
            # A separate measuring process per mode: RUSAGE_CHILDREN in it sees only that capture.
            p = subprocess.run([sys.executable, "-m", "benchmarks.live", "--measure", mode, kubeconfig, out, size],
                               capture_output=True, text=True, cwd=ROOT)
            if p.returncode != 0:
                raise RuntimeError(f"measuring {mode} failed: {p.stderr[-2000:]}")
            res["runs"].append(json.loads(p.stdout.splitlines()[-1]))
    finally:
        if srv.stdin is not None:
            srv.stdin.close()
        try:
            srv.wait(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()
    with open(os.path.join(out, f"live-{size}.json"), "w") as f:
        json.dump(res, f, indent=1)
    return res


def print_table(res: dict) -> None:
    mb = (res.get("list_bytes_raw") or 0) / 1e6
    print(f"\nsize {res['size']}: {res['nodes']} nodes, {res['pods']} pods, List {mb:.0f} MB raw, pages of 500 over HTTPS "
          f"(server ready in {res['server']['load_s']} s, server RSS {res['server']['rss_mb']} MB, not counted)")
    print(f"{'mode':<10} {'wall s':>8} {'peak RSS MB':>12} {'target MB':>10}  details")
    for r in res["runs"]:
        extra = {k: v for k, v in r.items() if k not in ("mode", "wall_s", "peak_rss_mb")}
        target = f"{TARGET_RSS_MB:.0f}" if r["mode"] == "snapshot" else "-"
        print(f"{r['mode']:<10} {r['wall_s']:>8} {r['peak_rss_mb']:>12} {target:>10}  {json.dumps(extra)}")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    # Internal child entry points (not for users): server, measuring process, load capture.
    if args[:1] == ["--serve"]:
        return serve(args[1], args[2])
    if args[:1] == ["--measure"]:
        print(json.dumps(measure(args[1], args[2], args[3], args[4])))
        return None
    if args[:1] == ["--load-child"]:
        return load_child(args[1])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="S", choices=list(SIZES))
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--mode", default="snapshot,load", help="comma-separated: snapshot, load")
    a = ap.parse_args(args)
    meta = ensure(a.size, a.out, a.seed)
    res = bench(meta, a.out, tuple(m for m in a.mode.split(",") if m))
    print_table(res)
    return None


if __name__ == "__main__":
    main()
