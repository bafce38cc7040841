"""Progress of long work (issue 33 item 6): the engine reports through a plain callable, the CLI
shows it on a terminal's stderr after a threshold (KUBECTL_WAP_PROGRESS_AFTER), erases it when the
step ends, and writes nothing when stderr is not a terminal. stdout is the same either way."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_wap.cli.progress import step
from kubectl_wap.diagnose.optimal import optimal_victims
from kubectl_wap.framework.buildstate import build_state
from kubectl_wap.preemption.analyze import analyze
from kubectl_wap.simulate import simulate
from kubectl_wap.snapshot.io.files import PROGRESS_EVERY, load_demo, stream_file, stream_snapshot
from ptyrun import run_in_pty

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks import generate  # noqa: E402

WAP = str(Path(sys.executable).parent / "kubectl-wap")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A generated cluster large enough for several progress reports (over 2 x PROGRESS_EVERY lines)."""
    return generate.generate("T", str(tmp_path_factory.mktemp("progress")), seed=3, nodes=40, pods=2600, gangs=(8,))


class Calls(list):
    def __call__(self, phase: str, done: int, total: int | None) -> None:
        self.append((phase, done, total))


# ---- the engine's callbacks ---------------------------------------------------------------------

def test_streamed_snapshot_reports_bytes_of_the_file_on_disk(cluster: dict) -> None:
    path = Path(cluster["snapshot_path"])
    calls = Calls()
    header, items = stream_snapshot(path, calls)
    n = sum(1 for _ in items.models())
    assert n > 2 * PROGRESS_EVERY
    assert calls and {c[0] for c in calls} == {"read"}
    size = path.stat().st_size  # gzip: compressed bytes, so the total is the file's size
    assert all(t == size for _, _, t in calls)
    done = [d for _, d, _ in calls]
    # one report per PROGRESS_EVERY lines (spec-template lines are read but not yielded as items)
    assert done == sorted(done) and 0 < done[-1] <= size and len(calls) >= n // PROGRESS_EVERY


def test_uncompressed_snapshot_reports_each_step_further(cluster: dict, tmp_path: Path) -> None:
    path = tmp_path / "plain.json"
    path.write_bytes(gzip.decompress(Path(cluster["snapshot_path"]).read_bytes()))
    calls = Calls()
    sum(1 for _ in stream_snapshot(path, calls)[1])
    done = [d for _, d, _ in calls]
    assert len(done) >= 2 and all(a < b for a, b in zip(done, done[1:])) and done[-1] < path.stat().st_size


def test_list_reports_objects_against_their_count(cluster: dict) -> None:
    calls = Calls()
    header, items = stream_file(Path(cluster["list_path"]), calls)
    n = sum(1 for _ in items)
    assert [c for c in calls] == [("items", k * PROGRESS_EVERY, n) for k in range(1, n // PROGRESS_EVERY + 1)]


def test_no_callback_no_reports(cluster: dict) -> None:
    header, items = stream_snapshot(Path(cluster["snapshot_path"]))  # the default: nobody listens, nothing breaks
    assert sum(1 for _ in items) > PROGRESS_EVERY


def test_state_build_reports_its_three_steps() -> None:
    calls = Calls()
    build_state(load_demo(), progress=calls)
    assert calls == [("state", 0, 3), ("state", 1, 3), ("state", 2, 3), ("state", 3, 3)]


def test_analysis_reports_the_state_then_the_analysis() -> None:
    calls = Calls()
    analyze(load_demo(), "podgroup", "ml", "job-1", progress=calls)
    assert calls[-1] == ("analysis", 0, None) and calls[0] == ("state", 0, 3)


def test_simulate_reports_cycles() -> None:
    calls = Calls()
    sim = simulate(load_demo(), progress=calls)
    cycles = [d for p, d, _ in calls if p == "cycle"]
    assert cycles and cycles[0] == 1 and cycles == sorted(cycles) and cycles[-1] <= len(sim.cycles)
    assert [c for c in calls if c[0] == "state"][-1] == ("state", 3, 3)


def test_optimal_reports_its_phases() -> None:
    s = load_demo()
    calls = Calls()
    optimal_victims(s, analyze(s, "podgroup", "ml", "job-1"), progress=calls)
    phases = [p for p, _, _ in calls]
    assert phases.index("model") < phases.index("solve") < phases.index("verify")


def test_pending_triage_reports_its_rows() -> None:
    from kubectl_wap.diagnose.pending import triage

    calls = Calls()
    t = triage(load_demo(), progress=calls)
    rows = [c for c in calls if c[0] == "rows"]
    assert rows == [("rows", i, len(t.rows)) for i in range(len(t.rows))] and len(t.rows) > 3


def test_step_is_a_no_op_when_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECTL_WAP_PROGRESS_AFTER", "0")
    monkeypatch.setattr(sys, "stderr", open(os.devnull, "w"))
    with step("x", "read") as progress:
        assert progress is None  # the engine is handed no callback: it does no reporting work


# ---- the command line ---------------------------------------------------------------------------

def _args(cluster: dict) -> list[str]:
    gang = cluster["gangs"][0]
    return ["whatif", "podgroup", gang["name"], "-n", gang["namespace"], "--snapshot", cluster["snapshot_path"], "-o", "wide"]


def test_progress_on_a_terminal_stderr_leaves_stdout_unchanged(cluster: dict, tmp_path: Path) -> None:
    plain = subprocess.run([WAP, *_args(cluster)], capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0 and plain.stderr == ""  # not a terminal: not a byte of progress
    out = tmp_path / "stdout"
    with open(out, "wb") as f:
        code, terminal = run_in_pty([WAP, *_args(cluster)], 120, env={"KUBECTL_WAP_PROGRESS_AFTER": "0"}, stdout=f)
    assert code == 0
    assert f"reading {Path(cluster['snapshot_path']).name}" in terminal  # the load step
    assert "analysing" in terminal or "building the cluster state" in terminal  # the analysis step
    assert "\x1b[2K" in terminal  # transient: each line is erased when its step ends
    assert out.read_text() == plain.stdout


def test_progress_waits_for_its_threshold(cluster: dict, tmp_path: Path) -> None:
    with open(tmp_path / "stdout", "wb") as f:
        code, terminal = run_in_pty([WAP, *_args(cluster)], 120, env={"KUBECTL_WAP_PROGRESS_AFTER": "60"}, stdout=f)
    assert code == 0 and terminal == ""  # under a minute: nothing shown


def test_no_progress_off_a_terminal_even_with_color_always(cluster: dict) -> None:
    env = dict(os.environ, KUBECTL_WAP_PROGRESS_AFTER="0")
    r = subprocess.run([WAP, *_args(cluster), "--color", "always"], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and r.stderr == ""


def test_a_file_name_reaches_the_terminal_as_text(cluster: dict, tmp_path: Path) -> None:
    """The file name is the user's: Rich markup in it is not read, control characters are escaped."""
    odd = tmp_path / "a[bold]b\x1b[31mc.json.gz"
    odd.write_bytes(Path(cluster["snapshot_path"]).read_bytes())
    gang = cluster["gangs"][0]
    with open(tmp_path / "stdout", "wb") as f:
        code, terminal = run_in_pty([WAP, "whatif", "podgroup", gang["name"], "-n", gang["namespace"], "--snapshot", str(odd)],
                                    200, env={"KUBECTL_WAP_PROGRESS_AFTER": "0"}, stdout=f)
    assert code == 0
    assert "reading a[bold]b\\x1b[31mc.json.gz" in terminal and "\x1b[31mc" not in terminal
