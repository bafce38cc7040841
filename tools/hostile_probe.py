"""The big hostile inputs of issue 19, run by hand (too slow and too large for CI).

    python tools/hostile_probe.py [--only NAME] [--mem 2G] [--cpu 120]

Every case runs the real console script under `prlimit` (address space and CPU seconds bounded,
so a regression fails the case instead of the machine) and must end as one `error:` line on
stderr with exit 2 well inside the limits. Prints one line per case: name, verdict, exit code,
seconds, and the error line. The small versions of the same cases are tests in
tests/test_security_files.py and tests/test_security_live.py.

Cases: a gzip that expands to 10 GB; a 10^9-node YAML alias bomb in a -f manifest and in node
templates; /dev/zero and a FIFO as --snapshot; a live server answering with a 2 GB body, with a
gzip bomb body, trickling one byte per second, and repeating the same continue token forever.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path
from typing import Callable

CLI = str(Path(sys.executable).with_name("kubectl-wap"))


def _gzip_bomb(path: Path, gigabytes: int) -> None:
    """`gigabytes` GB of zeros as gzip members of 1 GB each (one member compressed, then copied)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * (64 << 20)
    member = b"".join(comp.compress(block) for _ in range(16)) + comp.flush()
    with open(path, "wb") as f:
        for _ in range(gigabytes):
            f.write(member)


def _alias_bomb(levels: int = 10) -> str:
    lines = [f"l0: &l0 [{', '.join(['lol'] * 9)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


class _RawServer:
    """A loopback HTTP server whose every answer is written by `respond(conn, request_bytes)`."""

    def __init__(self, respond: Callable[[socket.socket, bytes], None]) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.respond = respond
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            while True:
                req = conn.recv(65536)
                if not req:
                    return
                self.respond(conn, req)
        except OSError:
            pass
        finally:
            conn.close()

    def kubeconfig(self, d: Path) -> Path:
        cfg = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
               "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{self.port}"}}],
               "users": [{"name": "c", "user": {"token": "probe-token-123"}}],
               "contexts": [{"name": "c", "context": {"cluster": "c", "user": "c"}}]}
        p = d / f"kc-{self.port}"
        p.write_text(json.dumps(cfg))
        return p


def _headers(length: int, extra: str = "") -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n{extra}\r\n".encode()


def _huge_body(conn: socket.socket, _req: bytes) -> None:
    size = 2 << 30
    conn.sendall(_headers(size))
    chunk = b" " * (1 << 20)
    for _ in range(size >> 20):
        conn.sendall(chunk)


_GZIP_BODY: list[bytes] = []


def _gzip_body(conn: socket.socket, _req: bytes) -> None:
    if not _GZIP_BODY:
        _GZIP_BODY.append(gzip.compress(b" " * (1 << 30), 9))
    body = _GZIP_BODY[0]
    conn.sendall(_headers(len(body), "Content-Encoding: gzip\r\n") + body)


def _trickle(conn: socket.socket, _req: bytes) -> None:
    conn.sendall(_headers(1 << 20))
    for _ in range(3600):
        conn.sendall(b" ")
        time.sleep(1)


def _loop(conn: socket.socket, req: bytes) -> None:
    path = req.split(b" ", 2)[1].decode()
    if path.startswith("/version"):
        body = json.dumps({"gitVersion": "v1.37.2"}).encode()
    else:
        body = json.dumps({"kind": "NodeList", "apiVersion": "v1", "metadata": {"continue": "again", "resourceVersion": "1"},
                           "items": []}).encode()
    conn.sendall(_headers(len(body)) + body)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only")
    ap.add_argument("--mem", default="2G", help="address-space limit for each run (prlimit --as)")
    ap.add_argument("--cpu", default="120", help="CPU-seconds limit for each run (prlimit --cpu)")
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args()
    if not shutil.which("prlimit"):
        print("prlimit (util-linux) is required", file=sys.stderr)
        return 2
    mem = args.mem.upper().replace("G", "*1024**3").replace("M", "*1024**2")
    limit = ["prlimit", f"--as={int(eval(mem))}", f"--cpu={args.cpu}"]  # noqa: S307 - our own flag text
    d = Path(tempfile.mkdtemp(prefix="wap-probe-"))
    cases: dict[str, Callable[[], list[str]]] = {}

    def case(name: str) -> Callable[[Callable[[], list[str]]], Callable[[], list[str]]]:
        def add(fn: Callable[[], list[str]]) -> Callable[[], list[str]]:
            cases[name] = fn
            return fn
        return add

    @case("gzip-10GB")
    def _() -> list[str]:
        p = d / "bomb.json.gz"
        _gzip_bomb(p, 10)
        return ["rank", "--snapshot", str(p), "--max-input-size", "512Mi"]

    @case("alias-bomb-manifest")
    def _() -> list[str]:
        p = d / "m.yaml"
        p.write_text(_alias_bomb() + "kind: Pod\nmetadata: {name: p}\nspec: {tolerations: *l9}\n")
        return ["whatif", "-f", str(p), "--demo"]

    @case("alias-bomb-templates")
    def _() -> list[str]:
        p = d / "t.yaml"
        p.write_text(_alias_bomb() + "templates: [{name: a, allocatable: {cpu: 1}, taints: *l9}]\n")
        return ["whatif", "podgroup", "train-llama", "-n", "ml", "--demo", "--node-templates", str(p)]

    @case("dev-zero")
    def _() -> list[str]:
        return ["rank", "--snapshot", "/dev/zero"]

    @case("fifo")
    def _() -> list[str]:
        p = d / "fifo"
        os.mkfifo(p)
        return ["rank", "--snapshot", str(p)]

    for name, respond in (("live-2GB-body", _huge_body), ("live-gzip-bomb", _gzip_body),
                          ("live-trickle", _trickle), ("live-continue-loop", _loop)):
        def make(respond: Callable[[socket.socket, bytes], None] = respond) -> list[str]:
            if respond is _gzip_body:
                _GZIP_BODY.append(gzip.compress(b" " * (1 << 30), 9))  # before the clock starts
            srv = _RawServer(respond)
            return ["rank", "--kubeconfig", str(srv.kubeconfig(d)), "--request-timeout", "10"]
        cases[name] = make

    failed = 0
    for name, build in cases.items():
        if args.only and args.only != name:
            continue
        cmd = limit + [CLI, *build()]
        t0 = time.monotonic()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, errors="replace")
            rc, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired:
            rc, err = -1, "TIMEOUT"
        secs = time.monotonic() - t0
        lines = err.splitlines()
        ok = rc == 2 and len(lines) == 1 and lines[0].startswith("error: ")
        failed += not ok
        print(f"{name:24} {'ok  ' if ok else 'FAIL'} rc={rc:<4} {secs:7.1f}s  {lines[0][:150] if lines else ''}", flush=True)
    shutil.rmtree(d, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
