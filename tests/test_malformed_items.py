"""Issue 31 item 5 (first part): bytes the readers cannot decode are one line and exit 2 on every
command, never a Python error: an invalid UTF-8 byte inside a List item, a 5,000-digit number
(beyond Python's int-from-text limit)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BAD_UTF8 = b'{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n\xff"}}]}'
HUGE = ('{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",'
        '"metadata":{"name":"p"},"value":' + "9" * 5000 + "}]}").encode()


@pytest.mark.parametrize("content, says", [(BAD_UTF8, "not UTF-8 text (byte 0xff"), (HUGE, "value has 5000 digits")])
@pytest.mark.parametrize("cmd", [["rank"], ["pending", "-A"], ["snapshot", "-o", "json"], ["snapshot", "--redact", "-o", "json"],
                                 ["why-preempted", "pod", "p", "-n", "a"]])
def test_undecodable_item_is_one_line(tmp_path: Path, content: bytes, says: str, cmd: list[str]) -> None:
    f = tmp_path / "in.json"
    f.write_bytes(content)
    exe = str(Path(sys.executable).with_name("kubectl-wap"))
    r = subprocess.run([exe, *cmd, "--snapshot", str(f)], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "NO_COLOR": "1"})
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.splitlines()) == 1 and says in r.stderr, r.stderr
    if cmd[0] == "rank":  # the others read items before the snapshot is built (evidence, claims): no place yet
        assert "in.json: item 0: " in r.stderr, r.stderr


_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a"}, "spec": {"nodeName": "n"}}
SHAPES = {
    "status a string": {**_POD, "status": "Running"},
    "spec an int": {**_POD, "spec": 7},
    "metadata a string": {**_POD, "metadata": "x"},
    "kind a list": {**_POD, "kind": ["Pod"]},
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("cmd", [["rank"], ["pending", "-A"], ["snapshot", "-o", "json"], ["snapshot", "--redact", "-o", "json"],
                                 ["why-preempted", "pod", "p", "-n", "a"]])
def test_wrong_shapes_exit_0_or_2_never_a_python_error(tmp_path: Path, shape: str, cmd: list[str]) -> None:
    """Status or metadata a string, kind a list (under --redact too): before, exit 1 with an
    AttributeError or TypeError from the readers that run before the snapshot is built (evidence,
    claims, strip)."""
    import json

    f = tmp_path / "in.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [SHAPES[shape]]}))
    exe = str(Path(sys.executable).with_name("kubectl-wap"))
    r = subprocess.run([exe, *cmd, "--snapshot", str(f)], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "NO_COLOR": "1"})
    assert r.returncode in (0, 2), (r.returncode, r.stderr)
    if r.returncode == 2:
        assert len(r.stderr.splitlines()) == 1 and "Error" not in r.stderr, r.stderr


@pytest.mark.parametrize("events", [False, True])
def test_snapshot_of_a_dump_keeps_events_only_with_events_and_only_preempted(tmp_path: Path, events: bool) -> None:
    """Issue 31 item 6 (a leak): a plain `snapshot` of a dump kept every Event with its full
    message, --events or not."""
    import json

    def event(name: str, reason: str, message: str) -> dict:
        return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": "a"}, "reason": reason,
                "message": message, "involvedObject": {"kind": "Pod", "name": "p", "namespace": "a"}}

    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1"}}}
    items = [node, event("e1", "Preempted", "Preempted by pod u1 on node n"),
             event("e2", "Failed", "pull secret-registry.example.com/token=SECRET-DISTINCT failed")]
    f = tmp_path / "dump.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    exe = str(Path(sys.executable).with_name("kubectl-wap"))
    r = subprocess.run([exe, "snapshot", "--snapshot", str(f), "-o", "json", *(["--events"] if events else [])],
                       capture_output=True, text=True, timeout=60, env={**os.environ, "NO_COLOR": "1"})
    assert r.returncode == 0, r.stderr
    kept = [o for o in json.loads(r.stdout)["items"] if o.get("kind") == "Event"]
    assert "SECRET-DISTINCT" not in r.stdout
    assert [o["metadata"]["name"] for o in kept] == (["e1"] if events else [])
