"""Issue 31 item 5: a bounded, seeded fuzz of the real command line. Small snapshots and Lists (our
snapshot format, a kubectl-style pretty List, a compact List, multi-document YAML, gzip of each)
are mutated in their bytes and in their JSON structure, and each input is given to one command
(rotating through whatif, explain, rank, diff, snapshot, snapshot --redact, pending,
why-preempted, simulate) in a subprocess of the installed console script under
`prlimit --as=1.5G` with a 20 s timeout.

Done when: 0 exits other than 0 and 2 (an exit 2 is one `error:` line, no traceback), 0 runs past
20 s, 0 runs out of memory (the CLI says "out of memory" and exits 2 on MemoryError: counted as a
failure here). Deterministic: the inputs come from one seed (WAP_FUZZ_SEED), so a failure
reproduces; WAP_FUZZ_N sets how many (default 240, ~1 min on two cores; the CI bound)."""

from __future__ import annotations

import copy
import gzip
import io
import json
import os
import random
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))
import typeconfusion as tc  # noqa: E402

N = int(os.environ.get("WAP_FUZZ_N", "240"))
SEED = int(os.environ.get("WAP_FUZZ_SEED", "31"))
TIMEOUT = 20.0
ADDRESS_SPACE = 1536 << 20  # prlimit --as: 1.5 GiB
EXE = str(Path(sys.executable).with_name("kubectl-wap"))

# Values that have broken readers before (issue 19, issue 31): wrong types, numbers past every
# bound, text that is not what it seems, nesting past the recursion limit.
JUNK: list[Any] = [
    None, True, False, 0, -1, 7, 1.5, -0.0, 2**63, -(2**63) - 1, 10**400, 1e308, "", "x", " 3", "1e999", "NaN",
    "-1", "100m", "9" * 5000, "a" * 70_000, "\x1b]52;c;AAAA\x07", "\u202e", "\ud800", "\x00", "n1\npod/x", [], {},
    ["x"], {"x": 1}, [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]], {"kind": "Pod"}, {"metadata": "x"},
    "Pod", "List", "Snapshot", "kubectl-wap/v1alpha1", "In", "Exists", "Never", "Always", "NoSchedule",
]
DEEP = "[" * 20_000 + "]" * 20_000


def _paths(o: Any, pre: tuple = ()) -> list[tuple]:
    return tc.paths(o, pre)


def _set(o: Any, path: tuple, v: Any) -> None:
    cur = o
    for s in path[:-1]:
        cur = cur[s]
    cur[path[-1]] = v


def _delete(o: Any, path: tuple) -> None:
    cur = o
    for s in path[:-1]:
        cur = cur[s]
    del cur[path[-1]]


def _mutate_structure(rng: random.Random, items: list[dict]) -> list[Any]:
    items = copy.deepcopy(items)
    for _ in range(rng.randint(1, 2)):
        op = rng.random()
        ps = _paths(items)
        if op < 0.55:
            _set(items, rng.choice(ps), copy.deepcopy(rng.choice(JUNK)))
        elif op < 0.7:
            _delete(items, rng.choice(ps))
        elif op < 0.8 and items:
            items.append(copy.deepcopy(rng.choice(items)))  # a duplicate object
        elif op < 0.9 and items:
            i = rng.randrange(len(items))
            if isinstance(items[i], dict):
                items[i]["kind"] = rng.choice(["Pod", "Node", "PodGroup", "PodDisruptionBudget", "PriorityClass",
                                               "Namespace", "Event", "PersistentVolumeClaim", "Secret", "PodList"])
        elif items:
            items.insert(rng.randrange(len(items) + 1), copy.deepcopy(rng.choice(JUNK)))
        if not items:
            break
    return items


def _snapshot_layout(items: list[Any]) -> bytes:
    from kubectl_wap.snapshot.io.save import _write_body

    out = io.StringIO()
    _write_body(out, {"formatVersion": 1, "capturedAt": "2026-12-01T00:00:00Z",
                      "server": {"url": "x", "version": "v1.37.1"}}, [o for o in items if isinstance(o, dict)])
    return out.getvalue().encode()


def _encode(rng: random.Random, items: list[Any]) -> tuple[bytes, str]:
    layout = rng.choice(["compact", "pretty", "snapshot", "snapshot-v1", "yaml"])
    if layout == "snapshot":
        try:
            return _snapshot_layout(items), ".json"
        except Exception:  # the writer refuses some junk (it expects stripped objects): another layout
            layout = "compact"
    if layout == "yaml":
        try:
            return yaml.safe_dump_all([o for o in items], sort_keys=False).encode("utf-8", "surrogatepass"), ".yaml"
        except (yaml.YAMLError, UnicodeEncodeError):
            layout = "compact"
    doc: Any = {"apiVersion": "v1", "kind": "List", "items": items}
    if layout == "snapshot-v1":
        doc = {"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot", "header": {"formatVersion": 1}, "items": items}
    if layout == "pretty":
        return json.dumps(doc, indent=4).encode("utf-8", "surrogatepass"), ".json"
    body = ",\n".join(json.dumps(o) for o in items)
    return (b'{"apiVersion":"v1","kind":"List","items":[\n' + body.encode("utf-8", "surrogatepass") + b"]}\n"), ".json"


def _mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        if not b:
            break
        op = rng.random()
        i = rng.randrange(len(b))
        if op < 0.3:
            b[i] = rng.randrange(256)
        elif op < 0.45:
            b[i:i] = bytes(rng.choice([b"{", b"}", b"[", b"]", b",", b":", b'"', b"\n", b"\\", b"\xff", b"\x00", b"-", b"&a ", b"*a"]))
        elif op < 0.6:
            del b[i:i + rng.randint(1, 64)]
        elif op < 0.7:
            j = min(len(b), i + rng.randint(1, 256))
            b[i:i] = b[i:j] * rng.randint(1, 8)
        elif op < 0.8:
            del b[rng.randrange(len(b)):]  # truncated
        elif op < 0.9:
            b[i:i] = rng.choice([b"\n" * 100_000, b" \t\r\n" * 10_000, DEEP.encode(), b"9" * 6000])
        else:
            b[i:i] = rng.choice(JUNK[:30]).__repr__().encode("utf-8", "surrogatepass")[:200]
    return bytes(b)


@dataclass(frozen=True, slots=True)
class Case:
    n: int
    data: bytes
    suffix: str
    argv: tuple[str, ...]
    how: str


def cases(n: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    base = tc.cluster()
    out = []
    for k in range(n):
        how = []
        items: list[Any] = base
        if rng.random() < 0.75:
            items = _mutate_structure(rng, base)
            how.append("structure")
        data, suffix = _encode(rng, items)
        if rng.random() < 0.35 or not how:
            data = _mutate_bytes(rng, data)
            how.append("bytes")
        if rng.random() < 0.2:
            data = gzip.compress(data, 1, mtime=0)  # no timestamp: the same bytes every run
            suffix += ".gz"
            how.append("gzip")
            if rng.random() < 0.3:
                data = _mutate_bytes(rng, data)  # corrupt or truncated compressed data
                how.append("gzip-bytes")
        out.append(Case(k, data, suffix, tuple(tc.COMMANDS[k % len(tc.COMMANDS)]), "+".join(how)))
    return out


def _run(case: Case, d: Path) -> str | None:
    f = d / f"in{case.n}{case.suffix}"
    f.write_bytes(case.data)
    cmd = ["prlimit", f"--as={ADDRESS_SPACE}", "--", EXE, *case.argv, "--snapshot", str(f), "--color", "never"]
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT, env={**os.environ, "NO_COLOR": "1"})
    except subprocess.TimeoutExpired:
        return f"hang: over {TIMEOUT:g}s"
    err = r.stderr.decode("utf-8", "replace")
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("Warning:")]
    if r.returncode not in (0, 2):
        return f"exit {r.returncode}: {err[-300:]!r}"
    if "out of memory" in err:
        return f"out of memory under --as {ADDRESS_SPACE >> 20} MiB"
    if r.returncode == 2 and (len(lines) != 1 or not lines[0].startswith("error: ") or "Traceback" in err):
        return f"not one error line: {err[-300:]!r}"
    f.unlink()
    return None


@pytest.mark.skipif(shutil.which("prlimit") is None or not Path(EXE).exists(), reason="needs prlimit and the installed console script")
def test_fuzzed_inputs_exit_0_or_2_within_bounds(tmp_path: Path) -> None:
    todo = cases(N, SEED)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda c: (c, _run(c, tmp_path)), todo))
    failures = [f"#{c.n} ({c.how}, {c.suffix}) {' '.join(c.argv)}: {why}" for c, why in results if why]
    assert not failures, (f"{len(failures)} of {len(todo)} (seed {SEED}; inputs kept in {tmp_path}):\n"
                          + "\n".join(failures[:30]))


def test_the_inputs_are_deterministic() -> None:
    a, b = cases(20, SEED), cases(20, SEED)
    assert [(c.data, c.argv) for c in a] == [(c.data, c.argv) for c in b]
    assert len({c.data for c in a}) == 20  # and all different


def test_the_fuzz_reaches_past_the_readers() -> None:
    """Mutated inputs that still load must be common, or the fuzz tests only the parsers."""
    from kubectl_wap.errors import UserError
    from kubectl_wap.snapshot.io.files import load_snapshot
    import tempfile

    loaded = 0
    with tempfile.TemporaryDirectory() as d:
        for c in cases(60, SEED):
            f = Path(d) / f"x{c.n}{c.suffix}"
            f.write_bytes(c.data)
            try:
                load_snapshot(f)
                loaded += 1
            except UserError:
                pass
    assert loaded >= 15, loaded  # 19 of 60 with seed 31

