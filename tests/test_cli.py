"""The command line, in-process (typer CliRunner) and as real subprocesses of the installed entry
points, on the bundled demo cluster: every command and output format, hypothetical groups, errors
(one clear line, exit 2), --exit-code verdicts, and a clean stdout for -o json."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubectl_wap import __version__
from kubectl_wap.cli import app

BIN = Path(sys.executable).parent
WAP = str(BIN / "kubectl-wap") if (BIN / "kubectl-wap").exists() else shutil.which("kubectl-wap")
COMPLETE = str(BIN / "kubectl_complete-wap") if (BIN / "kubectl_complete-wap").exists() else shutil.which("kubectl_complete-wap")
JOB1 = ["podgroup", "job-1", "-n", "ml", "--demo"]
ANSI = "\x1b["

runner = CliRunner()


def invoke(*args: str, env: dict | None = None):
    return runner.invoke(app, list(args), env=env)


def run(*args: str, env: dict | None = None, exe: str | None = None) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update(env or {})
    return subprocess.run([exe or WAP, *args], capture_output=True, text=True, env=e, timeout=60)


def one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, f"want exactly one error line, got:\n{stderr}"
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in stderr
    return lines[0]


# ---- whatif: every output format (in-process) ----------------------------------------------------

def test_whatif_table():
    r = invoke("whatif", *JOB1, "--color", "never")
    assert r.exit_code == 0, r.output
    assert "job-1" in r.stdout and "Preempt" in r.stdout
    assert ANSI not in r.stdout


def test_whatif_wide_has_more_than_table():
    table = invoke("whatif", *JOB1, "--color", "never")
    wide = invoke("whatif", *JOB1, "-o", "wide", "--color", "never")
    assert wide.exit_code == 0, wide.output
    assert len(wide.stdout) >= len(table.stdout)


def test_whatif_no_headers():
    with_h = invoke("whatif", *JOB1, "--color", "never")
    without = invoke("whatif", *JOB1, "--color", "never", "--no-headers")
    assert without.exit_code == 0, without.output

    def header_rows(text):
        return [ln for ln in text.splitlines() if re.search(r"\bUNIT\b.*\bPRIORITY\b", ln) or re.search(r"\bNODE\b\s+PODS\b", ln)]

    assert header_rows(with_h.stdout)
    assert not header_rows(without.stdout)
    # --no-headers is for scripts: only the victim rows, one unit per line, nodes comma-joined
    lines = [ln.split() for ln in without.stdout.splitlines() if ln.strip()]
    # the table's columns (UNIT KIND PRIORITY PODS NODES PDB; MODE is -o wide's since issue 33)
    assert lines and all(len(f) == 6 for f in lines)
    assert ["research/protein-fold", "PodGroup", "100", "4", "gpu-a2,gpu-b3", "-"] in lines
    wide = invoke("whatif", *JOB1, "--color", "never", "--no-headers", "-o", "wide")
    assert ["research/protein-fold", "PodGroup", "all", "100", "4", "gpu-a2,gpu-b3", "-"] == \
        [ln.split()[:7] for ln in wide.stdout.splitlines() if ln.startswith("research/protein-fold")][0]


def test_whatif_json_and_yaml_agree():
    j = invoke("whatif", *JOB1, "-o", "json")
    y = invoke("whatif", *JOB1, "-o", "yaml")
    assert j.exit_code == 0 and y.exit_code == 0
    dj, dy = json.loads(j.stdout), yaml.safe_load(y.stdout)
    assert dj == dy
    assert dj["kind"] == "WhatIfReport" and dj["outcome"] == "Preempt"
    assert dj["preemptor"] == {**dj["preemptor"], "kind": "PodGroup", "namespace": "ml", "name": "job-1"}
    assert dj["victims"] and dj["placements"]
    assert dj["summary"]["victimPods"] == len(dj["victims"])


def test_whatif_pod_default_preemption_json():
    r = invoke("whatif", "pod", "urgent-report", "-n", "batch", "--demo", "-o", "json")
    d = json.loads(r.stdout)
    assert d["algorithm"] == "default" and d["outcome"] == "Preempt"
    assert d["nominatedNode"] == d["placements"][0]["node"]


def test_color_always_and_never():
    always = invoke("whatif", *JOB1, "--color", "always")
    never = invoke("whatif", *JOB1, "--color", "never")
    assert ANSI in always.stdout
    assert ANSI not in never.stdout


# ---- explain, rank, completion, version --------------------------------------------------------------

def test_explain_table_and_json():
    r = invoke("explain", *JOB1, "--color", "never")
    assert r.exit_code == 0, r.output
    assert "Reprieve" in r.stdout or "reprieve" in r.stdout
    j = json.loads(invoke("explain", *JOB1, "-o", "json").stdout)
    assert j["explanation"] and any("Reprieve" in s for s in j["explanation"])


def test_rank_table_json_and_priority():
    r = invoke("rank", "--demo", "--color", "never")
    assert r.exit_code == 0, r.output
    assert "train-llama" in r.stdout
    full = json.loads(invoke("rank", "--demo", "-o", "json").stdout)
    assert full["kind"] == "RankReport" and full["units"]
    # Default order is risk (issue 16): the reverse of the reprieve order; `rank` keeps the
    # reprieve position, `position` numbers the rows shown.
    assert [u["rank"] for u in full["units"]] == list(range(len(full["units"]), 0, -1))
    assert [u["position"] for u in full["units"]] == list(range(1, len(full["units"]) + 1))
    prot = json.loads(invoke("rank", "--demo", "-o", "json", "--order", "protection").stdout)
    assert [u["rank"] for u in prot["units"]] == list(range(1, len(prot["units"]) + 1))
    assert full["order"] == "risk" and prot["order"] == "protection"
    low = json.loads(invoke("rank", "--demo", "-o", "json", "--priority", "1000").stdout)
    assert low["preemptorPriority"] == 1000
    assert low["units"] and all(u["priority"] < 1000 for u in low["units"])
    assert len(low["units"]) < len(full["units"])
    ns = json.loads(invoke("rank", "--demo", "-o", "json", "-n", "ml").stdout)
    assert ns["units"] and {u["namespace"] for u in ns["units"]} == {"ml"}


def test_rank_no_headers():
    a = invoke("rank", "--demo", "--color", "never")
    b = invoke("rank", "--demo", "--color", "never", "--no-headers")
    assert "UNIT" in a.stdout and "UNIT" not in b.stdout


def test_completion_and_version():
    c = invoke("completion")
    assert c.exit_code == 0 and "kubectl_complete-wap" in c.stdout
    v = invoke("version")
    assert v.exit_code == 0 and v.stdout.strip() == f"kubectl-wap {__version__}"


def test_version_client_and_output_as_kubectl_has_them():
    """`version --client` and `-o json|yaml` (issue 32): kubectl's clientVersion shape; --client is
    accepted (we never ask a server), an unknown -o is a usage error (exit 2)."""
    import yaml

    assert invoke("version", "--client").stdout.strip() == f"kubectl-wap {__version__}"
    j = invoke("version", "--client", "-o", "json")
    assert j.exit_code == 0
    cv = json.loads(j.stdout)["clientVersion"]
    assert cv["gitVersion"] == f"v{__version__}"
    assert [cv["major"], cv["minor"]] == __version__.split(".")[:2]
    assert cv["build"] == "python" and cv["platform"].count("/") == 1
    assert yaml.safe_load(invoke("version", "-o", "yaml").stdout) == {"clientVersion": cv}
    assert invoke("version", "-o", "xml").exit_code == 2


# ---- hypothetical preemptors ------------------------------------------------------------------------

def test_hypothetical_flags():
    r = invoke("whatif", "podgroup", "NEW", "--replicas", "4", "--requests", "cpu=1,memory=1Gi",
               "--priority-class", "high-priority", "--min-count", "4", "--demo", "-n", "ml", "-o", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["preemptor"]["name"] == "NEW" and d["preemptor"]["namespace"] == "ml"
    assert d["preemptor"]["pods"] == 4
    assert d["preemptor"]["priority"] > 0
    assert d["outcome"] in ("NoPreemptionNeeded", "Preempt")
    if d["outcome"] == "NoPreemptionNeeded":
        assert len(d["placements"]) == 4


MANIFEST = """\
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: hypo-train}
spec:
  schedulingPolicy:
    gang: {minCount: 3}
  priorityClassName: high-priority
---
apiVersion: v1
kind: Pod
metadata: {name: worker}
spec:
  priorityClassName: high-priority
  containers:
  - name: main
    image: trainer
    resources:
      requests: {cpu: "2", memory: 4Gi}
"""


def test_hypothetical_manifest(tmp_path):
    f = tmp_path / "job.yaml"
    f.write_text(MANIFEST)
    r = invoke("whatif", "-f", str(f), "--replicas", "3", "--demo", "-n", "ml", "-o", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["preemptor"]["kind"] == "PodGroup" and d["preemptor"]["name"] == "hypo-train"
    assert d["preemptor"]["pods"] == 3
    assert d["outcome"] in ("NoPreemptionNeeded", "Preempt")
    # Subprocess: same answer.
    p = run("whatif", "-f", str(f), "--replicas", "3", "--demo", "-n", "ml", "-o", "json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == d


# ---- errors: one line, exit 2 -----------------------------------------------------------------------

ERRORS = {
    "unknown group": (["whatif", "podgroup", "no-such-group", "-n", "ml", "--demo"], "not found"),
    "wrong namespace": (["whatif", "podgroup", "job-1", "-n", "default", "--demo"], "use -n"),
    "bad requests": (["whatif", "podgroup", "x", "-n", "ml", "--replicas", "2", "--requests", "cpu=abc", "--demo"], "--requests"),
    "bad gate name": (["whatif", *JOB1, "--feature-gates", "NoSuchGate=true"], "feature gate"),
    # an existing group's copy took any word as its mode (only a new group's was checked)
    "misspelt disruption mode": (["whatif", *JOB1, "--disruption-mode", "al"], "invalid --disruption-mode 'al' (did you mean 'all'?)"),
    "preemption policy case": (["whatif", *JOB1, "--preemption-policy", "never"], "(did you mean 'Never'?)"),
    "misspelt gate": (["whatif", *JOB1, "--feature-gates", "GenericWorkld=true"], "'GenericWorkld' (did you mean 'GenericWorkload'?)"),
    "bad gate value": (["whatif", *JOB1, "--feature-gates", "GenericWorkload=maybe"], "feature gate"),
    "missing snapshot": (["whatif", "podgroup", "job-1", "-n", "ml", "--snapshot", "/nonexistent/snap.json"], "/nonexistent/snap.json"),
    "snapshot and demo": (["whatif", *JOB1, "--snapshot", "x.json"], "--demo"),
    "nothing to analyze": (["whatif", "--demo"], "whatif"),
    "why-preempted of nothing": (["why-preempted", "--demo"], "say which object: why-preempted pod|podgroup|workload NAME"),  # was click's "Missing argument 'kind'."
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_in_process(case):
    args, needle = ERRORS[case]
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert needle in one_error_line(r.stderr)


@pytest.mark.parametrize("case", ["unknown group", "wrong namespace", "bad requests", "missing snapshot", "snapshot and demo"])
def test_errors_subprocess(case):
    args, needle = ERRORS[case]
    p = run(*args)
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""
    assert needle in one_error_line(p.stderr)


def test_bad_output_value_in_process():
    r = invoke("whatif", *JOB1, "-o", "xml")
    assert r.exit_code == 2
    assert "xml" in r.output


@pytest.mark.parametrize("args", [["whatif", *JOB1, "-o", "xml"], ["whatif", *JOB1, "--bogus-flag"], ["no-such-command"]],
                         ids=["bad -o", "unknown flag", "unknown command"])
def test_usage_errors_subprocess(args):
    # kubectl_wap.cli.main catches click.exceptions.UsageError, but typer >= 0.2x vendors click as
    # typer._click and `import click` fails there: every usage error became a traceback, exit 1.
    p = run(*args)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 2
    assert p.stdout == ""
    one_error_line(p.stderr)


# ---- exit codes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("target,code", [
    (["podgroup", "job-1", "-n", "ml"], 10),
    (["podgroup", "small-eval", "-n", "ml"], 0),
    (["podgroup", "giant", "-n", "research"], 11),
    (["podgroup", "finetune-nightly", "-n", "ml"], 12),
    # A file's unknown class is what admission rejects: Invalid (a flag typo is an input error).
    (["-f", str(Path(__file__).parent / "fixtures" / "unknown-class-podgroup.yaml"), "-n", "ml"], 13),
])
def test_exit_code_verdicts(target, code):
    r = invoke("whatif", *target, "--demo", "--exit-code", "-o", "json")
    assert r.exit_code == code, r.output
    assert json.loads(r.stdout)["outcome"]
    # Without --exit-code every verdict exits 0.
    assert invoke("whatif", *target, "--demo", "-o", "json").exit_code == 0



@pytest.mark.parametrize("to,changed", [("--replicas 4", True), ("-n ml", False)])
def test_diff_exit_code_is_1_only_when_the_sides_differ(to, changed):
    # docs/commands/diff.md: `diff --exit-code` exits 1 when the scenarios differ, 0 when they agree (as
    # `git diff --exit-code`); without the flag it exits 0 either way.
    args = ["diff", "podgroup", "job-1", "-n", "ml", "--demo", "--to", to, "-o", "json"]
    r = invoke(*args, "--exit-code")
    assert json.loads(r.stdout)["changed"] is changed
    assert r.exit_code == (1 if changed else 0), r.output
    assert invoke(*args).exit_code == 0

def test_exit_code_subprocess():
    p = run("whatif", *JOB1, "--exit-code", "-o", "json")
    assert p.returncode == 10
    assert json.loads(p.stdout)["outcome"] == "Preempt"


# ---- subprocess: formats, colors, clean stdout ---------------------------------------------------------

def test_subprocess_json_stdout_is_only_the_report():
    p = run("whatif", *JOB1, "-o", "json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)  # the whole of stdout parses
    assert doc["kind"] == "WhatIfReport"
    assert p.stdout.lstrip().startswith("{") and p.stdout.rstrip().endswith("}")
    assert ANSI not in p.stdout


@pytest.mark.parametrize("fmt", ["table", "wide", "yaml"])
def test_subprocess_formats(fmt):
    p = run("whatif", *JOB1, "-o", fmt)
    assert p.returncode == 0, p.stderr
    assert "job-1" in p.stdout
    assert ANSI not in p.stdout  # not a terminal: no color by default
    if fmt == "yaml":
        assert yaml.safe_load(p.stdout)["outcome"] == "Preempt"


def test_subprocess_color_and_no_color_env():
    assert ANSI in run("whatif", *JOB1, "--color", "always").stdout
    assert ANSI not in run("whatif", *JOB1, "--color", "never").stdout
    assert ANSI not in run("whatif", *JOB1, env={"NO_COLOR": "1"}).stdout


def test_subprocess_no_headers_explain_rank():
    p = run("whatif", *JOB1, "--no-headers", "--color", "never")
    assert p.returncode == 0 and "research/protein-fold" in p.stdout and "UNIT" not in p.stdout
    e = run("explain", *JOB1, "--color", "never")
    assert e.returncode == 0 and "job-1" in e.stdout
    k = run("rank", "--demo", "--priority", "1000", "-o", "json")
    assert k.returncode == 0
    assert json.loads(k.stdout)["kind"] == "RankReport"


def test_subprocess_version_completion_help():
    v = run("version")
    assert v.returncode == 0 and v.stdout.strip() == f"kubectl-wap {__version__}"
    c = run("completion")
    assert c.returncode == 0 and "kubectl_complete-wap" in c.stdout
    h = run("whatif", "--help")
    assert h.returncode == 0 and "--exit-code" in h.stdout


def test_kubectl_complete_entry_point():
    assert COMPLETE, "kubectl_complete-wap is not installed"
    p = run("__complete", "whatif", "", exe=COMPLETE)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split()
    assert lines[-1].startswith(":")  # Cobra directive
    assert {"podgroup", "compositepodgroup", "pod"} <= set(lines[:-1])
    top = run("__complete", "", exe=COMPLETE).stdout.split()
    assert {"whatif", "explain", "rank", "diff", "snapshot", "completion", "version"} <= set(top)
    flags = run("__complete", "whatif", "podgroup", "--de", exe=COMPLETE).stdout.split()
    assert "--demo" in flags and "--debug" in flags
