"""The plain layout used for long tables is the same as rich's for cells that need no wrapping."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from kubectl_wap.report import tables


def _rich(title, headers, rows, no_headers):
    f = io.StringIO()
    Console(file=f, width=400, color_system=None).print(tables._table(title, headers, rows, no_headers))
    return f.getvalue()


@pytest.mark.parametrize("no_headers", [False, True])
def test_plain_layout_equals_rich(no_headers):
    headers = ["UNIT", "KIND", "PODS", "REASON"]
    rows = [["a/b", "Pod", 1, "x y"], ["ccc/dddd", "PodGroup", 12, "needed: with it back, pod x fails on n1"], ["e/f", None, 3, ""]]
    assert tables._plain_table("Victims", headers, rows, no_headers) == _rich("Victims", headers, rows, no_headers)


def test_long_tables_use_the_plain_layout(monkeypatch):
    monkeypatch.setattr(tables, "_PLAIN_ROWS", 2)
    f = io.StringIO()
    console = Console(file=f, width=400, color_system=None)
    rows = [[f"ns/u{i}", "Pod"] for i in range(5)]
    tables._print_table(console, "T", ["UNIT", "KIND"], rows, False)
    assert f.getvalue() == tables._plain_table("T", ["UNIT", "KIND"], rows, False)
    assert f.getvalue() == _rich("T", ["UNIT", "KIND"], rows, False)
