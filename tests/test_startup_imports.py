"""Start-up (issue 34 item 4): a command imports only what it needs. Module sets, not times: each
test runs the console entry point (`kubectl_wap.cli:main`) in a fresh interpreter and reads
sys.modules when it exits (main leaves through the atexit handlers, tests/test_cli_guards.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = ["whatif", "podgroup", "job-1", "-n", "ml", "--demo"]

_DUMP = ("import atexit, json, sys; out = sys.argv.pop(1); "
         "atexit.register(lambda: open(out, 'w').write(json.dumps(sorted(sys.modules)))); "
         "sys.argv[0] = 'kubectl-wap'; from kubectl_wap.cli import main; main()")


def _modules_after(tmp_path: Path, args: list[str]) -> set[str]:
    out = tmp_path / "modules.json"
    r = subprocess.run([sys.executable, "-c", _DUMP, str(out), *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return set(json.loads(out.read_text()))


# What the demo whatif (our own snapshot, JSON, no Kueue objects, no --optimal, not live) never needs:
# the solver, the live client, YAML, progress bars, the List decoder, simulate's pod extras, the
# snapshot writer's stripping, the Kueue stage, the other commands' engines and modules.
NOT_NEEDED = ("highspy", "kubernetes", "yaml", "rich.progress", "msgspec", "pydantic", "mcp", "kubectl_wap.queueing.kueue",
              "kubectl_wap.snapshot.decode.lean", "kubectl_wap.snapshot.io.live", "kubectl_wap.snapshot.decode.owners",
              "kubectl_wap.snapshot.share.strip", "kubectl_wap.diagnose",
              "kubectl_wap.autoscale", "kubectl_wap.simulate", "kubectl_wap.cli.explain", "kubectl_wap.cli.rank",
              "kubectl_wap.cli.diff", "kubectl_wap.cli.snapshot", "kubectl_wap.cli.simulate", "kubectl_wap.cli.pending",
              "kubectl_wap.cli.whypreempted", "kubectl_wap.cli.metrics_cmd", "kubectl_wap.cli.mcp_cmd",
              "kubectl_wap.cli.completion_cmd", "kubectl_wap.cli.version")


@pytest.mark.parametrize("fmt", [[], ["-o", "json"]], ids=["table", "json"])
def test_demo_whatif_imports_only_what_it_needs(tmp_path: Path, fmt: list[str]) -> None:
    loaded = _modules_after(tmp_path, DEMO + fmt)
    assert "kubectl_wap.preemption.analyze" in loaded and "numpy" in loaded  # it did run the analysis
    extra = sorted(m for m in loaded if any(m == n or m.startswith(n + ".") for n in NOT_NEEDED))
    assert not extra, f"the demo whatif imported modules it does not need: {extra}"


def test_whole_app_for_anything_but_one_command(tmp_path: Path) -> None:
    # --help lists every command: the full app, in its order
    loaded = _modules_after(tmp_path, ["--help"])
    assert {"kubectl_wap.cli.rank", "kubectl_wap.cli.version", "kubectl_wap.cli.mcp_cmd"} <= loaded


def test_commands_list_is_the_app_s() -> None:
    from kubectl_wap.cli import COMMANDS, app
    from kubectl_wap.cli.completion import COMMANDS as COMPLETED

    names = [info.name or info.callback.__name__.lower().replace("_", "-") for info in app.registered_commands]
    groups = [info.name for info in app.registered_groups]  # `demo load`: a command group (typer sub-app)
    assert names == [c for c in COMMANDS if c not in groups]
    assert set(names) | set(groups) == set(COMMANDS) == set(COMPLETED)


_ONE = ("import sys; from typer.testing import CliRunner; import kubectl_wap.cli as cli; "
        "cmd = sys.argv[1]; one = sys.modules['kubectl_wap.cli.app'].app; cli._load(cmd); "
        "a = CliRunner().invoke(one, [cmd, '--help'], prog_name='kubectl wap'); "
        "full = cli.app; b = CliRunner().invoke(full, [cmd, '--help'], prog_name='kubectl wap'); "
        "assert a.exit_code == 0 and a.output == b.output, (a.output, b.output); print(a.output.splitlines()[0])")


@pytest.mark.parametrize("cmd", ["whatif", "explain", "rank", "diff", "snapshot", "simulate", "pending", "why-preempted",
                                 "metrics", "mcp", "demo", "completion", "version"])
def test_one_command_alone_parses_as_in_the_whole_app(cmd: str) -> None:
    r = subprocess.run([sys.executable, "-c", _ONE, cmd], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"Usage: kubectl wap {cmd} ")
