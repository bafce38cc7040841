"""Tables that look like kubectl's and fit 80 columns on the demo (issue 33 item 3): kubectl's
column spacing, ages as kubectl prints them, stacked blocks titled with the object's
namespace/name, and --help within 80 columns with file metavars named FILE."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_wap.report import layout
from kubectl_wap.report.age import age_since, human_duration
from tests.ptyrun import run_in_pty

WAP = str(Path(sys.executable).parent / "kubectl-wap")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
S, M, H, D = 1, 60, 3600, 86400
Y = 365 * D
MS = 0.001

# k8s.io/apimachinery v0.37.2 pkg/util/duration/duration_test.go, TestHumanDuration and
# TestHumanDurationBoundaries, in seconds.
HUMAN_DURATION = [
    (1, "1s"), (70, "70s"), (190, "3m10s"), (70 * M, "70m"), (47 * H, "47h"), (49 * H, "2d1h"),
    ((8 * 24 + 2) * H, "8d"), (367 * D, "367d"), (2 * Y + 25 * H, "2y1d"), (8 * Y + 2 * H, "8y"),
    (-2, "<invalid>"), (-2 + 1e-9, "0s"), (0, "0s"), (1 - MS, "0s"), (2 * M - MS, "119s"), (2 * M, "2m"),
    (2 * M + 1, "2m1s"), (10 * M - MS, "9m59s"), (10 * M, "10m"), (10 * M + 1, "10m"), (3 * H - MS, "179m"),
    (3 * H, "3h"), (3 * H + M, "3h1m"), (8 * H - MS, "7h59m"), (8 * H, "8h"), (8 * H + 59 * M, "8h"),
    (2 * D - MS, "47h"), (2 * D, "2d"), (2 * D + H, "2d1h"), (8 * D - MS, "7d23h"), (8 * D, "8d"),
    (8 * D + 23 * H, "8d"), (2 * Y - MS, "729d"), (2 * Y, "2y"), (2 * Y + 23 * H, "2y"),
    (2 * Y + 23 * H + 59 * M, "2y"), (2 * Y + D - MS, "2y"), (2 * Y + D, "2y1d"), (3 * Y, "3y"), (4 * Y, "4y"),
]


@pytest.mark.parametrize("seconds,want", HUMAN_DURATION)
def test_human_duration_is_apimachinerys(seconds, want):
    assert human_duration(seconds) == want


def test_age_since_is_relative_to_the_given_time():
    assert age_since("2026-11-30T10:35:00Z", 1_796_040_000.0) == "85m"  # demo capture 12:00Z
    assert age_since(None, 1.0) == "-" and age_since("2026-11-30T10:35:00Z", None) == "-"


def test_kubectl_spacing_min_width_6_and_unpadded_last_column():
    out = layout.render(None, ["#", "UNIT", "PDB"], [[1, "a/b", "-"], [10, "ccc/dddd", "yes"]], width=None)
    # tabwriter: a cell is its column's longest value + 3, at least 6; the last cell is not padded
    assert out.splitlines() == ["#     UNIT       PDB", "1     a/b        -", "10    ccc/dddd   yes", ""]


@pytest.mark.parametrize("headers,row,title", [
    (["KIND", "NAMESPACE", "NAME", "PRIORITY", "REASON"], ["PodGroup", "ml", "finetune-nightly", 1000000, "x"], "ml/finetune-nightly"),
    (["#", "UNIT", "KIND", "PDB"], [1, "research/ablation-3", "Pod", "-"], "research/ablation-3"),
    (["#", "KIND", "OBJECT", "ACTION"], [2, "PodGroup", "ml/job-1", "preempt"], "ml/job-1"),
])
def test_stacked_blocks_are_titled_with_namespace_and_name(headers, row, title):
    out = layout.render("T", headers, [row], width=20)
    lines = out.splitlines()
    assert lines[2] == title  # after the table's title and a blank line
    assert all(len(ln) <= 20 for ln in lines)
    # the title's columns are not repeated as pairs, the others are
    assert "NAME " not in out and "UNIT " not in out and "OBJECT " not in out
    assert re.sub(r"\s+", "", out).count(str(row[0])) >= 1


# ---- the demo in a real terminal of 80 columns ----------------------------------------------------

DEMO_TABLES = [
    (["whatif", "podgroup", "job-1", "-n", "ml", "--demo"], ["NODE", "UNIT", "UNIT"]),
    (["rank", "--priority", "1000000", "--demo", "--limit", "10"], ["#"]),
    (["simulate", "--demo"], ["#", "KIND"]),
    (["pending", "-A", "--demo"], ["NAMESPACE"]),
]


@pytest.mark.parametrize("args,starts", DEMO_TABLES, ids=[a[0] for a, _ in DEMO_TABLES])
def test_demo_tables_fit_80_columns_as_tables(args, starts):
    """In a pty of 80 columns the demo's tables keep kubectl's column layout (header lines start
    at column 0 with upper-case headers and no rule line) and every value of the piped output is
    there in full (never truncated)."""
    code, out = run_in_pty([WAP, *args], 80, rows=200)
    assert code == 0, out
    out = ANSI.sub("", out)
    lines = out.splitlines()
    assert all(len(ln) <= 80 for ln in lines), max(lines, key=len)
    assert "─" not in out and "…" not in out
    headers = [ln for ln in lines if re.fullmatch(r"[A-Z#][A-Z#-]*( {3,}[A-Z-]+)+", ln)]
    assert [h.split()[0] for h in headers] == starts, headers
    piped = subprocess.run([WAP, *args, "--color", "never"], capture_output=True, text=True, timeout=120).stdout
    squashed = re.sub(r"\s+", "", out)
    for token in piped.split():
        assert token in squashed, token


def test_demo_whatif_victims_row_is_one_kubectl_line():
    code, out = run_in_pty([WAP, "whatif", "podgroup", "job-1", "-n", "ml", "--demo"], 80, rows=200)
    out = ANSI.sub("", out)
    assert "UNIT                    KIND       PRIORITY   PODS   NODES           PDB" in out
    assert "research/protein-fold   PodGroup   100        4      gpu-a2,gpu-b3   -" in out


def test_rank_ages_are_kubectls_relative_to_the_capture():
    out = subprocess.run([WAP, "rank", "--priority", "1000000", "--demo", "--limit", "5"], capture_output=True, text=True, timeout=120).stdout
    # research/ablation-3 started 2026-11-30T10:35:00Z, the demo was captured at 12:00:00Z: 85 minutes
    assert re.search(r"^1 +research/ablation-3 +Pod +100 +1 +85m +-$", out, re.M), out
    wide = subprocess.run([WAP, "rank", "--priority", "1000000", "--demo", "--limit", "1", "-o", "wide"], capture_output=True, text=True, timeout=120).stdout
    header, row = [ln.split() for ln in wide.splitlines() if ln.startswith(("#", "1 "))]
    assert header == ["#", "UNIT", "KIND", "MODE", "PRIORITY", "PODS", "AGE", "PDB", "STARTED", "NODES"]
    assert row[:9] == ["1", "research/ablation-3", "Pod", "-", "100", "1", "85m", "-", "2026-11-30T10:35:00Z"]


def _command_paths() -> list[list[str]]:
    """Every command the app has, sub-commands of a group included (`demo load`), and the app
    itself: a command added later is checked without being listed here (metrics' help ran to 93
    columns with `<str>` file metavars while a hand-written list left it out)."""
    import typer

    from kubectl_wap.cli import app

    out: list[list[str]] = [[]]

    def walk(cmd, path: list[str]) -> None:
        for name, sub in getattr(cmd, "commands", {}).items():
            out.append([*path, name])
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return out


COMMANDS = _command_paths()


def test_every_command_is_checked():
    assert {" ".join(c) for c in COMMANDS} >= {"", "whatif", "explain", "rank", "diff", "snapshot", "pending", "why-preempted",
                                               "simulate", "completion", "metrics", "mcp", "version", "demo", "demo load"}


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "kubectl-wap")
def test_help_fits_80_columns_and_files_are_FILE(command):
    import os

    env = dict(os.environ, COLUMNS="80")
    out = subprocess.run([WAP, *command, "--help"], capture_output=True, text=True, timeout=60, env=env).stdout
    assert out and all(len(ln) <= 80 for ln in out.splitlines()), max(out.splitlines(), key=len)
    for flag in ("--snapshot", "--kubeconfig", "--filename", "--node-templates", "--output-file", "--redact-key-file"):
        m = re.search(rf"^ +(?:-\w, )?{flag} (\S+)", out, re.M)  # the option's own line
        if m:
            assert m.group(1) == "FILE", (flag, m.group(0))
    # -o's formats are wrapped between names, never inside one (`...|jso` / `npath=...`)
    if re.search(r"^ +-o, --output FORMAT", out, re.M):
        from kubectl_wap.report.formats import FORMATS, TEMPLATE_FORMATS

        words = {w.rstrip(",") for w in out.split()}
        assert {f + ("=..." if f in TEMPLATE_FORMATS else "") for f in FORMATS} <= words, out


def test_pending_index_and_its_reasons():
    """pending's default table is an index (who, pods, age, whether preemption or a node helps);
    each row's reasons follow as a paragraph, with preemption's and scale-up's details."""
    out = subprocess.run([WAP, "pending", "-A", "--demo"], capture_output=True, text=True, timeout=120).stdout
    lines = out.splitlines()
    assert lines[0].split() == ["NAMESPACE", "NAME", "KIND", "PODS", "AGE", "PREEMPTION", "ADD-NODE"]
    assert lines[1].split() == ["ml", "finetune-nightly", "PodGroup", "4", "3m", "not", "allowed", "yes"]
    assert ("  ml/finetune-nightly: gang needs 4 pod(s) at once (minCount): only 1 pod(s) fit at once (Insufficient nvidia.com/gpu)."
            " Preemption: not allowed: preemptionPolicy Never. Add a node: +1 p3dn.24xlarge.") in lines
    assert "  ml/job-1: gang needs 16 pod(s) at once (minCount): only 4 pod(s) fit at once (Insufficient nvidia.com/gpu). " \
           "Preemption: yes: 10 pod(s) in 7 unit(s). Add a node: no." in lines
    wide = subprocess.run([WAP, "pending", "-A", "--demo", "-o", "wide"], capture_output=True, text=True, timeout=120).stdout
    assert wide.splitlines()[0].split()[:9] == ["KIND", "NAMESPACE", "NAME", "PRIORITY", "PODS", "AGE", "REASON", "PREEMPTION", "ADD-NODE"]
    assert "Why pending" not in wide


PROSE = [
    ["pending", "-A", "--demo", "--compare-versions", "1.37,1.38"],  # Victim changes: a gang's names, 209 columns
    ["whatif", "podgroup", "job-1", "-n", "ml", "--demo", "--optimal"],  # the solver's lines
    ["why-preempted", "pod", "ablation-0", "-n", "research", "--snapshot", "docs/examples/demo-after-job-1.json.gz"],  # evidence
]


@pytest.mark.parametrize("args", PROSE, ids=["pending-compare-versions", "whatif-optimal", "why-preempted"])
def test_prose_is_wrapped_at_80_columns_without_trailing_spaces(args):
    """Lines of prose after a table are wrapped at the terminal's width at spaces (tables.say),
    never left past it, and no line ends with a space (rich's own wrap leaves one there)."""
    code, out = run_in_pty([WAP, *args], 80, rows=200, cwd=Path(__file__).parent.parent)
    assert code == 0, out
    lines = ANSI.sub("", out).splitlines()
    assert all(len(ln) <= 80 for ln in lines), max(lines, key=len)
    assert [ln for ln in lines if ln.endswith(" ")] == []
    # a wrapped line continues indented, never at column 0 (why-preempted's evidence and its
    # Uncertain: line continued there, as `2026-11-30T11:58:00Z: "default-scheduler: ...` and `UID, ...`)
    assert not any(re.match(r"(2026-|UID|before |v1\.)", ln) for ln in lines), lines
