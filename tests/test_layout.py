"""Tables never cut a value (issue 16): report/layout.py at any width, a property test over
random tables, and the CLI in a real pseudo-terminal at 60, 80 and 200 columns."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from kubectl_wap.report import layout, tables
from tests.ptyrun import run_in_pty

WAP = str(Path(sys.executable).parent / "kubectl-wap")
HEADERS = ["UNIT", "KIND", "PRIORITY", "NODES", "REASON"]


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_fits_natural_widths_no_trailing_spaces():
    out = layout.render("T", ["UNIT", "PODS"], [["a/b", 1], ["ccc/dddd", 12]], width=80)
    # kubectl's spacing (cli-runtime printers.GetNewTabWriter): longest value + 3, no leading space, no rule
    assert out == "T\n\nUNIT       PODS\na/b        1\nccc/dddd   12\n\n"


def test_free_text_wraps_identifiers_and_numbers_do_not():
    rows = [["research/protein-fold", "PodGroup", 100000, "gpu-a2,gpu-b3", "needed: with it back, preemptor pod ml/job-1-11 fails NodeResourcesFit on gpu-a4"]]
    out = layout.render(None, HEADERS, rows, width=80)
    lines = out.splitlines()
    assert all(len(ln) <= 80 for ln in lines)
    assert "research/protein-fold" in out and " 100000 " in out + " "
    assert "stacked" not in out and lines[0].split() == HEADERS  # still a table


def test_too_narrow_switches_to_stacked_and_folds_long_words():
    name = "inference/llm-chat-7gxcnpmd64-96428-with-a-very-long-suffix"
    out = layout.render("Victims", HEADERS, [[name, "Pod", 100000, "n1", "x"]], width=30)
    assert all(len(ln) <= 30 for ln in out.splitlines())
    assert name in _squash(out) and "PRIORITY100000" in _squash(out)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(st.lists(st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126) | st.just(" "), max_size=60), min_size=5, max_size=5), max_size=6),
    width=st.integers(min_value=20, max_value=220),
)
def test_property_nothing_is_cut(rows, width):
    out = layout.render("T", HEADERS, rows, width=width)
    squashed = _squash(out)
    for r in rows:
        for c in r:
            # words, not whole cells: two wrapping cells of one row interleave their lines; the
            # layout also breaks a word after a comma (node lists), so pieces end at commas
            for word in re.findall(r"[^\s,]+,?|,", c):
                assert word in squashed
    for ln in out.splitlines():
        assert ln == ln.rstrip()
        assert len(ln) <= width


def test_no_headers_rows_are_stable():
    """A row's text does not depend on the other rows (diffable across runs)."""
    a = [["ml/a", "Pod", 1000, "n1", "x"]]
    b = a + [["research/a-much-longer-unit-name-than-the-others", "CompositePodGroup", 100000, "n1,n2,n3", "y"]]
    first_alone = layout.render(None, HEADERS, a, None, no_headers=True).splitlines()[0]
    first_with = layout.render(None, HEADERS, b, None, no_headers=True).splitlines()[0]
    assert first_alone == first_with
    assert all(ln == ln.rstrip() for ln in layout.render(None, HEADERS, b, None, no_headers=True).splitlines())


def test_table_is_the_same_from_the_placement_only_document():
    """The CLI builds the table's document with only the spared units on the placement's nodes;
    the rendering must not change (the hidden count comes from the summary)."""
    from kubectl_wap.preemption.analyze import analyze
    from kubectl_wap.report.document import to_document
    from kubectl_wap.snapshot.io.files import load_demo

    res = analyze(load_demo(), "podgroup", "ml", "job-1")
    full, short = to_document(res), to_document(res, spared_on_placement_only=True)
    assert len(short["reprieved"]) < len(full["reprieved"])  # the demo spares units elsewhere too
    outs = []
    for doc in (full, short):
        f = io.StringIO()
        tables.render_whatif(doc, Console(file=f, width=200, color_system=None), err=Console(file=io.StringIO()))
        outs.append(f.getvalue())
    assert outs[0] == outs[1] and "more candidate unit(s) on other nodes were spared" in outs[0]


# ---- the documented examples in a real terminal---------------------------------------------------

EXAMPLES = [
    ["whatif", "podgroup", "job-1", "-n", "ml", "--demo"],
    ["whatif", "podgroup", "job-1", "-n", "ml", "--demo", "-o", "wide"],
    ["whatif", "pod", "urgent-report", "-n", "batch", "--demo"],
    ["whatif", "pod/urgent-report", "-n", "batch", "--demo", "-o", "wide"],
    ["explain", "podgroup", "job-1", "-n", "ml", "--demo"],
    ["rank", "--priority", "1000000", "--demo"],
    ["rank", "--for", "podgroup/job-1", "-n", "ml", "--demo", "-o", "wide"],
    ["whatif", "podgroup", "job-1", "-n", "ml", "--demo", "--autoscale"],
    ["diff", "podgroup", "job-1", "-n", "ml", "--demo", "--to", "--feature-gates PodGroupPreemptionPolicy=true"],
    ["whatif", "podgroup", "new-job", "-n", "ml", "--demo", "--replicas", "16", "--requests", "cpu=8,memory=64Gi,nvidia.com/gpu=1",
     "--priority-class", "high-priority", "--min-count", "16", "--disruption-mode", "all", "--toleration", "nvidia.com/gpu=present:NoSchedule"],
    # the two-stage answer on a Kueue cluster (docs/commands/whatif.md "On a Kueue cluster")
    ["whatif", "-f", str(Path(__file__).parent / "fixtures" / "kueue-demo" / "job.yaml"), "--snapshot",
     str(Path(__file__).parent / "fixtures" / "kueue-demo" / "cluster.yaml")],
]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(scope="module")
def piped():
    """Each example's complete output when piped (no width limit): the reference."""
    import subprocess

    return {tuple(a): subprocess.run([WAP, *a, "--color", "never"], capture_output=True, text=True, timeout=120).stdout for a in EXAMPLES}


@pytest.mark.parametrize("columns", [60, 80, 200])
@pytest.mark.parametrize("args", EXAMPLES, ids=[" ".join(a[:4]) for a in EXAMPLES])
def test_readme_examples_in_a_terminal_cut_nothing(args, columns, piped):
    code, out = run_in_pty([WAP, *args], columns)
    assert code in (0,), out
    out = ANSI.sub("", out)
    assert "…" not in out  # what a cutting table layout (rich's) puts in place of the cut
    for ln in out.splitlines():
        assert ln == ln.rstrip(), repr(ln)
        assert len(ln) <= columns, (columns, ln)
    # Every token of the complete (piped) output is in the terminal's output, as often (wrapped
    # columns interleave their lines, so order is not kept; folded words are joined back).
    from collections import Counter

    terminal = _squash(out)
    for token, n in Counter(piped[tuple(args)].split()).items():
        if token == "─" * len(token) or re.fullmatch(r"[A-Z#][A-Z-]*", token):
            continue  # rules and column headers (the stacked layout names fields differently)
        assert terminal.count(token) >= n, f"{token!r} missing at {columns} columns"
