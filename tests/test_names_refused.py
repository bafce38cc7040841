"""Names the API server never stores are refused at load (issue 31 item 1): a newline in a pod's
name would forge a second `pod/...` line in `-o name` output (which users pipe into `kubectl
delete`), and escape sequences (OSC 52 writes the clipboard) would reach the terminal. apimachinery
validation (object names DNS-1123 subdomains, namespaces DNS-1123 labels) stores only printable
ASCII without spaces; other invalid names (upper case, '_', which upstream's unit tables use) are
inert and read as they are (fields.py UPSTREAM-DIFF)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.errors import UserError
from kubectl_wap.snapshot.decode.convert import build_snapshot
from tests.builders import make_node, make_pod

EVIL = "ablation-0\npod/evil\x1b]52;c;aGk=\x07"


def _cluster(pod_name: str = "p", ns: str = "ml", node: str = "n1") -> list[dict]:
    return [make_node(node).alloc(cpu="4", memory="8Gi").obj(),
            make_pod(pod_name, ns).priority(1).req(cpu="1").on(node, start=1_700_000_000).obj()]


@pytest.mark.parametrize("kwargs,why", [
    ({"pod_name": EVIL}, "a newline and an OSC 52 sequence in a pod name"),
    ({"pod_name": "train 0"}, "a space"),
    ({"pod_name": "a" * 254}, "longer than 253"),
    ({"pod_name": "p\u202egnp"}, "a bidi override"),
    ({"pod_name": "p\u200bq"}, "a zero-width space"),
    ({"pod_name": "p\x9bq"}, "a C1 control (CSI)"),
    ({"pod_name": "p\u0430d"}, "a Cyrillic letter that passes for a Latin one"),
    ({"ns": "ml\x1b[2J"}, "an escape sequence in a namespace"),
    ({"ns": "n" * 64}, "a namespace is at most 63 characters"),
    ({"node": "n1\rn2"}, "a carriage return in a node name"),
])
def test_a_name_the_api_server_never_stores_is_one_line(kwargs: dict, why: str) -> None:
    with pytest.raises(UserError) as e:
        build_snapshot(_cluster(**kwargs))
    msg = str(e.value)
    assert "\n" not in msg and "\x1b" not in msg and "\u202e" not in msg, f"got {msg!r}, want one inert line ({why})"
    assert "not a name the API server stores" in msg or "not a namespace the API server stores" in msg, msg


@pytest.mark.parametrize("name", ["p", "train-0", "a.b-c", "r3f9c2a1b", "x" * 253, "nodeA", "p_with_preempt_never_policy"])
def test_valid_names_load(name: str) -> None:
    snap = build_snapshot(_cluster(pod_name=name))
    assert [p.name for p in snap.pods] == [name]


def test_o_name_cannot_be_forged_from_a_shared_snapshot(tmp_path: Path) -> None:
    """The demo with one victim renamed: the command refuses the file (exit 2, one line) instead of
    printing `pod/evil` on a line of its own."""
    demo = json.loads((Path(__file__).resolve().parent.parent / "kubectl_wap" / "data" / "demo-snapshot.json").read_text())
    for o in demo["items"]:
        if o["kind"] == "Pod" and o["metadata"]["name"] == "ablation-0":
            o["metadata"]["name"] = EVIL
    f = tmp_path / "shared.json"
    f.write_text(json.dumps(demo))
    r = CliRunner().invoke(app, ["whatif", "podgroup", "job-1", "-n", "ml", "--snapshot", str(f), "-o", "name"])
    assert r.exit_code == 2
    assert "pod/evil" not in r.stdout.splitlines() and "\x1b" not in r.output


def test_the_row_format_is_checked_too(tmp_path: Path) -> None:
    """Our own formatVersion 2 snapshot, its pod row edited by hand (the rows skip the object path)."""
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _cluster(pod_name="victim-0")}))
    snap = tmp_path / "snap.json"
    r = CliRunner().invoke(app, ["snapshot", "--snapshot", str(dump), "--output-file", str(snap)])
    assert r.exit_code == 0, r.output
    text = snap.read_text()
    assert '"victim-0"' in text
    snap.write_text(text.replace('"victim-0"', json.dumps("victim-0\npod/evil")))
    r = CliRunner().invoke(app, ["whatif", "pod", "victim-0", "-n", "ml", "--snapshot", str(snap), "-o", "name"])
    assert r.exit_code == 2 and "not a name the API server stores" in r.output
