"""Duplicate objects in an input: a few warning lines, then one summary line, not one line each."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.snapshot.decode.convert import build_snapshot

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "shop"},
            "spec": {"nodeName": "n1", "priority": 0, "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]},
            "status": {"phase": "Running"}}


def twice(n: int) -> list[dict]:
    pods = [pod(f"web-{i}") for i in range(n)]
    return [NODE, *pods, *copy.deepcopy(pods)]


def dup_lines(warnings: list[str]) -> list[str]:
    return [w for w in warnings if w.startswith("duplicate") or "more duplicate" in w]


@pytest.mark.parametrize("n", [1, 5])
def test_up_to_five_duplicates_are_each_named(n: int) -> None:
    snap = build_snapshot(twice(n))
    assert dup_lines(snap.warnings) == [f"duplicate Pod shop/web-{i}: the last definition is used" for i in range(n)]


def test_more_than_five_duplicates_name_three_and_count_the_rest() -> None:
    snap = build_snapshot(twice(14))
    assert dup_lines(snap.warnings) == [
        "duplicate Pod shop/web-0: the last definition is used",
        "duplicate Pod shop/web-1: the last definition is used",
        "duplicate Pod shop/web-2: the last definition is used",
        "... and 11 more duplicate objects",
    ]
    assert len(snap.pods) == 14 and len(snap.duplicates) == 14  # only the message is shortened


def test_cli_prints_the_shortened_list(tmp_path: Path) -> None:
    f = tmp_path / "dump.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": twice(9)}))
    r = CliRunner().invoke(app, ["whatif", "podgroup", "urgent", "-n", "shop", "--replicas", "1", "--requests", "cpu=1",
                                 "--snapshot", str(f), "--color", "never"])
    assert r.exit_code == 0, r.output
    err = r.stderr
    assert err.count("duplicate Pod") == 3 and "... and 6 more duplicate objects" in err
