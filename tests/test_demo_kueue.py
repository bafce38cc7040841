"""The bundled Kueue demo (`--demo kueue`, `--snapshot @demo-kueue`; tools/make_demo_kueue.py;
issue 35): the two-stage answer for docs/examples/kueue-job.yaml and pending's Workload row, and
`--demo NAME` read as the bundled snapshot without breaking `--demo` as a flag."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.cli.options import demo_args
from kubectl_wap.errors import UserError

REPO = Path(__file__).resolve().parent.parent
JOB = REPO / "docs" / "examples" / "kueue-job.yaml"
FIRST = ("Kueue: admitted to ClusterQueue team-a-cq on flavor h100 once it has evicted Workloads team-b/train-7 "
         "(priority 100, reclamation within the cohort)")


def test_bundled_file_and_example_job_are_up_to_date() -> None:
    r = subprocess.run([sys.executable, str(REPO / "tools" / "make_demo_kueue.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_whatif_on_the_kueue_demo_prints_both_stages() -> None:
    r = CliRunner().invoke(app, ["whatif", "-f", str(JOB), "--snapshot", "@demo-kueue"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == FIRST
    assert "NoPreemptionNeeded: fits without preemption (1 pod(s) placed)" in lines


def test_pending_on_the_kueue_demo_names_kueue_and_why() -> None:
    r = CliRunner().invoke(app, ["pending", "-A", "--snapshot", "@demo-kueue", "-o", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["items"]
    assert [(x["kind"], x["namespace"], x["name"], x["stage"]) for x in rows] == [("Workload", "team-b", "sweep", "kueue")]
    assert rows[0]["reason"] == ("Kueue: not admitted: ClusterQueue team-b-cq: couldn't assign flavors to pod set main: "
                                 "insufficient unused quota for nvidia.com/gpu in flavor h100, 4 more needed; no preemption "
                                 "possible: no Workload may be preempted for it under its ClusterQueue's preemption policies")


@pytest.mark.parametrize("args, want", [
    (["whatif", "--demo", "kueue", "-f", "j"], ["whatif", "--snapshot", "@demo-kueue", "-f", "j"]),
    (["pending", "--demo=dra"], ["pending", "--snapshot", "@demo-dra"]),
    # --demo stays a flag: a kind or name after it is not a demo's name
    (["whatif", "--demo", "podgroup", "x"], ["whatif", "--demo", "podgroup", "x"]),
    (["whatif", "--demo"], ["whatif", "--demo"]),
    (["whatif", "--", "--demo", "kueue"], ["whatif", "--", "--demo", "kueue"]),
])
def test_demo_args(args: list[str], want: list[str]) -> None:
    assert demo_args(args) == want


def test_unknown_demo_name_suggests_the_closest() -> None:
    with pytest.raises(UserError, match=r"no bundled demo 'kuee' \(did you mean kueue\?\)"):
        demo_args(["pending", "--demo=kuee"])


def test_demo_kueue_on_the_command_line() -> None:
    """Through the console entry point (demo_args runs there, before click parses)."""
    r = subprocess.run([sys.executable, "-m", "kubectl_wap.cli", "whatif", "-f", str(JOB), "--demo", "kueue"],
                       capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == FIRST
    bad = subprocess.run([sys.executable, "-m", "kubectl_wap.cli", "pending", "--demo=nope"], capture_output=True, text=True, cwd=REPO)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr


@pytest.mark.parametrize("args", [["pending", "-A", "--demo", "kuee"], ["whatif", "podgroup", "job-1", "-n", "ml", "--demo", "kuee"],
                                  ["pending", "--demo", "kuee", "-A"]])
def test_misspelt_demo_after_a_space_suggests_the_closest(args: list[str]) -> None:
    """`--demo kuee` (space form): demo_args leaves an unknown word after --demo (it may be a kind
    or a name), click then said only "Got unexpected extra argument(s) (kuee)"."""
    r = subprocess.run([sys.executable, "-m", "kubectl_wap.cli", *args], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 2 and not r.stdout
    assert r.stderr.splitlines() == ["error: no bundled demo 'kuee' (did you mean kueue?); --demo alone is the default demo, "
                                     "--demo dra | --demo kueue the others"]


def test_a_stray_word_far_from_a_demo_name_is_still_clicks_error() -> None:
    r = subprocess.run([sys.executable, "-m", "kubectl_wap.cli", "pending", "-A", "--demo", "zzz"], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 2 and r.stderr.strip() == "error: Got unexpected extra argument(s) (zzz)"


def test_completion_reads_the_named_demo() -> None:
    from kubectl_wap.cli.completion import candidates

    assert {"team-a", "team-b"} <= set(candidates(["pending", "--demo", "kueue", "-n", ""])[0])
    assert {"team-a", "team-b"} <= set(candidates(["pending", "--snapshot", "@demo-kueue", "-n", ""])[0])


def test_pending_prose_of_a_workload_row_has_no_kube_scheduler_preemption_cell() -> None:
    r = CliRunner().invoke(app, ["pending", "-A", "--snapshot", "@demo-kueue"])
    assert r.exit_code == 0 and "Preemption: -" not in r.stdout and "team-b/sweep: Kueue: not admitted" in r.stdout


def test_simulate_says_it_leaves_out_the_workloads_kueue_has_not_admitted() -> None:
    """simulate plays kube-scheduler's queue: the Kueue demo's pending Workload team-b/sweep has no
    pod, so it ran 0 cycles and said nothing of it; now a warning names it and points at pending."""
    r = CliRunner().invoke(app, ["simulate", "--snapshot", "@demo-kueue", "-o", "json"])
    assert r.exit_code == 0, r.output
    warnings = [w for w in json.loads(r.stdout)["warnings"] if "Kueue has not admitted" in w]
    assert len(warnings) == 1 and "(team-b/sweep)" in warnings[0] and "`pending -A`" in warnings[0], warnings
    plain = CliRunner().invoke(app, ["simulate", "--demo", "-o", "json"])
    assert not [w for w in json.loads(plain.stdout)["warnings"] if "Kueue" in w]  # no Kueue object: no word of it


def test_simulate_with_no_cycle_prints_no_empty_timeline() -> None:
    r = CliRunner().invoke(app, ["simulate", "--snapshot", "@demo-kueue"])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("Simulation: 0 cycle(s)") and "Timeline" not in r.stdout and "#     KIND" not in r.stdout, r.stdout


def test_the_kueue_demos_running_pods_have_started() -> None:
    """A running pod has a status.startTime (the kubelet sets it); the demo's train-7 pods had none,
    so rank showed AGE `-` and kube-scheduler's start-time tie-break had nothing to compare."""
    r = CliRunner().invoke(app, ["rank", "--snapshot", "@demo-kueue", "-o", "json"])
    assert r.exit_code == 0, r.output
    assert {u["earliestStart"] for u in json.loads(r.stdout)["units"]} == {"2026-12-01T10:00:05Z"}
