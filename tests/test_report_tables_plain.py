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


def test_table_is_the_same_from_the_placement_only_document():
    """The CLI builds the table's document with only the spared units on the placement's nodes;
    the rendering must not change (the hidden count comes from the summary)."""
    from kubectl_wap.preemption.analyze import analyze
    from kubectl_wap.report.document import to_document
    from kubectl_wap.snapshot.files import load_demo

    res = analyze(load_demo(), "podgroup", "ml", "job-1")
    full, short = to_document(res), to_document(res, spared_on_placement_only=True)
    assert len(short["reprieved"]) < len(full["reprieved"])  # the demo spares units elsewhere too
    outs = []
    for doc in (full, short):
        f = io.StringIO()
        tables.render_whatif(doc, Console(file=f, width=200, color_system=None), err=Console(file=io.StringIO()))
        outs.append(f.getvalue())
    assert outs[0] == outs[1] and "more candidate unit(s) on other nodes were spared" in outs[0]
