"""The reusable GitHub Action (action.yml, issue 36 item 2): actionlint (built from its Go module
into a temporary GOBIN) passes the example workflow, and checks the inputs it gives our action
against action.yml when the workflow uses it as a local action (a misspelt input fails it); the
action's gate script runs for real here, against the demo snapshot, as the runner would run it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
EXAMPLE = ROOT / "docs" / "examples" / "preemption-gate-workflow.yml"
ACTIONLINT = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"
DEMO = ROOT / "kubectl_wap" / "data" / "demo-snapshot.json"
PUBLISHED = "kubectl-wap/kubectl-wap@v0.1.0"


@pytest.fixture(scope="module")
def actionlint(tmp_path_factory: pytest.TempPathFactory) -> str:
    go = shutil.which("go")
    if go is None:
        pytest.skip("Go is not installed: actionlint is built from its module (go install " + ACTIONLINT + ")")
    gobin = tmp_path_factory.mktemp("gobin")
    r = subprocess.run([go, "install", ACTIONLINT], env=dict(os.environ, GOBIN=str(gobin), GOFLAGS="-mod=mod"),
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    return str(gobin / "actionlint")


def lint(actionlint: str, cwd: Path, *files: str) -> subprocess.CompletedProcess:
    return subprocess.run([actionlint, "-no-color", *files], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_example_workflow_passes_actionlint(actionlint: str):
    r = lint(actionlint, ROOT, str(EXAMPLE))
    assert r.returncode == 0, r.stdout + r.stderr


def _local_repo(tmp_path: Path, workflow: str) -> Path:
    """A repository holding our action at its root and the example using it as `./`."""
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(ACTION, tmp_path / "action.yml")
    (tmp_path / ".github" / "workflows" / "gate.yml").write_text(workflow)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=60)  # actionlint finds the project by its .git
    return tmp_path


def test_the_inputs_the_example_gives_are_the_actions(actionlint: str, tmp_path: Path):
    text = EXAMPLE.read_text()
    assert PUBLISHED in text
    repo = _local_repo(tmp_path, text.replace(PUBLISHED, "./"))
    r = lint(actionlint, repo)
    assert r.returncode == 0, r.stdout + r.stderr


def test_actionlint_would_catch_a_misspelt_input(actionlint: str, tmp_path: Path):
    repo = _local_repo(tmp_path, EXAMPLE.read_text().replace(PUBLISHED, "./").replace("fail-if:", "fail_if:"))
    r = lint(actionlint, repo)
    assert r.returncode == 1 and "fail_if" in r.stdout, r.stdout + r.stderr


def _gate_script() -> tuple[str, dict]:
    action = yaml.safe_load(ACTION.read_text())
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "whatif")
    return step["run"], step["env"]


def test_every_input_the_action_reads_is_declared():
    action = yaml.safe_load(ACTION.read_text())
    text = ACTION.read_text()

    used = set(re.findall(r"\$\{\{ inputs\.([a-z-]+) \}\}", text))
    assert used == set(action["inputs"]), used ^ set(action["inputs"])
    assert {name: o["value"] for name, o in action["outputs"].items()} == {
        name: f"${{{{ steps.whatif.outputs.{name} }}}}" for name in ("outcome", "victims", "fired", "report")}


def run_gate(tmp_path: Path, **inputs: str) -> tuple[subprocess.CompletedProcess, dict, str]:
    script, env_spec = _gate_script()
    values = {"snapshot": str(DEMO), "manifest": "", "target": "", "namespace": "default", "replicas": "",
              "fail-if": "victims > 0", "args": "", **inputs}
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", RUNNER_TEMP=str(tmp_path),
               GITHUB_OUTPUT=str(tmp_path / "output"), GITHUB_STEP_SUMMARY=str(tmp_path / "summary"), NO_COLOR="1")
    for var, expr in env_spec.items():
        env[var] = values[expr.removeprefix("${{ inputs.").removesuffix(" }}")]
    r = subprocess.run(["bash", "-e", "-c", script], env=env, capture_output=True, text=True, timeout=300)
    out = dict(line.split("=", 1) for line in (tmp_path / "output").read_text().splitlines()) if (tmp_path / "output").exists() else {}
    summary = (tmp_path / "summary").read_text() if (tmp_path / "summary").exists() else ""
    return r, out, summary


def test_the_gate_step_fails_the_job_when_the_predicate_fires(tmp_path: Path):
    r, out, summary = run_gate(tmp_path, target="podgroup/job-1", namespace="ml", **{"fail-if": "gpuPods > 4"})
    assert r.returncode == 20, r.stderr
    assert out == {"outcome": "Preempt", "victims": "10", "fired": "true", "report": str(tmp_path / "kubectl-wap-whatif.json")}
    assert "::error title=kubectl-wap gate::fail-if: gpuPods > 4 (gpuPods=10)" in r.stdout
    assert "Verdict: **Preempt**, 10 victim pod(s)" in summary and "**fired**" in summary


def test_the_gate_step_passes_when_it_holds(tmp_path: Path):
    r, out, summary = run_gate(tmp_path, target="podgroup/job-1", namespace="ml", **{"fail-if": "namespace in (prod) or pdbViolated"},
                               args="--scheduler-version 1.37")
    assert r.returncode == 0, r.stderr
    assert out["fired"] == "false" and out["outcome"] == "Preempt"
    assert "held" in summary


def test_the_gate_step_reports_a_usage_error_as_such(tmp_path: Path):
    r, out, _ = run_gate(tmp_path, target="podgroup/job-1", namespace="ml", **{"fail-if": "victms > 0"})
    assert r.returncode == 2 and out == {}
    assert "::error title=kubectl-wap::error: invalid --fail-if" in r.stdout


def test_the_actions_scripts_pass_shellcheck(tmp_path: Path):
    # actionlint runs shellcheck on a workflow's scripts, not on a composite action's: we do it here
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (Debian: apt-get install shellcheck)")
    action = yaml.safe_load(ACTION.read_text())
    for i, step in enumerate(s for s in action["runs"]["steps"] if "run" in s):
        f = tmp_path / f"step{i}.sh"
        f.write_text(step["run"])
        r = subprocess.run([shellcheck, "-s", "bash", str(f)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"{step.get('name')}: {r.stdout}"
