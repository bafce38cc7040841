"""The `whatif --autoscale` table (report/tables.render_autoscale): one row per option, each branch
of the autoscale section rendered, warnings on stderr; and the CLI end to end on the demo."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from typer.testing import CliRunner

from kubectl_wap.report.tables import render_autoscale


def _render(section: dict, no_headers: bool = False) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    render_autoscale(section, Console(file=out, width=300, color_system=None), no_headers=no_headers,
                     err=Console(file=err, width=300, color_system=None))
    return out.getvalue(), err.getvalue()


def _rows(text: str) -> dict[str, str]:
    return {ln.split(")")[0].strip() + ")": ln for ln in text.splitlines() if ln.strip()[:2] in ("A)", "B)", "C)")}


def test_preempt_add_nodes_and_mixed():
    out, err = _render({
        "preempt": {"outcome": "Preempt", "victimPods": 5, "victimUnits": 2, "priorityClasses": ["batch", "dev"]},
        "addNodes": {"nodes": [{"count": 2, "template": "gpu-large"}, {"count": 1, "template": "cpu"}], "costPerHour": 12.5},
        "mixed": [{"added": [{"count": 1, "template": "gpu-large"}], "victimPods": 1, "victimUnits": 1}],
        "overschedule": {"multiplier": 1.5, "admitted": True},
        "warnings": ["templates inferred from node groups"],
    })
    rows = _rows(out)
    assert "5 pod(s) in 2 unit(s)" in rows["A)"] and "batch, dev" in rows["A)"]
    assert "2 x gpu-large, 1 x cpu" in rows["B)"] and "no preemption" in rows["B)"] and "12.5/h" in rows["B)"]
    assert "add 1 x gpu-large" in rows["C)"] and "1 pod(s) in 1 unit(s) still preempted" in rows["C)"]
    assert "Overscheduling check (x1.5): admitted" in out
    assert "Warning: templates inferred from node groups" in err and "Warning" not in out


@pytest.mark.parametrize("outcome, action", [
    ("NoPreemptionNeeded", "none needed: the group fits now"),
    ("NotEligible", "not allowed (NotEligible)"),
    ("Unschedulable", "does not help (Unschedulable)"),
])
def test_preempt_row_per_outcome(outcome, action):
    out, _ = _render({"preempt": {"outcome": outcome}, "addNodes": {"nodes": [], "costPerHour": None}})
    rows = _rows(out)
    assert action in rows["A)"]
    assert "none needed: the group fits now" in rows["B)"]  # addNodes present, nothing to add


def test_no_template_helps_warns_once():
    out, err = _render({"preempt": {"outcome": "Preempt", "victimPods": 1, "victimUnits": 1}, "addNodes": None,
                        "noScaleUpHelps": True, "overschedule": {"multiplier": 2, "admitted": False}})
    assert "no template combination within maxNodes avoids preemption" in _rows(out)["B)"]
    assert "Overscheduling check (x2): rejected" in out
    assert err.count("no scale-up helps: some pod fits no node template") == 1
    # A warning that already says so is not repeated.
    _, err = _render({"preempt": {}, "addNodes": None, "noScaleUpHelps": True, "warnings": ["No template fits pod x"]})
    assert "no scale-up helps" not in err and "No template fits pod x" in err


def test_cost_unknown_and_no_headers():
    out, _ = _render({"preempt": {"outcome": "Preempt"}, "addNodes": {"nodes": [{"count": 1, "template": "t"}]}}, no_headers=True)
    assert "OPTION" not in out and "1 x t" in _rows(out)["B)"] and _rows(out)["B)"].rstrip().endswith("-")


def test_cli_autoscale_table_on_the_demo():
    from kubectl_wap.cli import app

    r = CliRunner().invoke(app, ["whatif", "podgroup", "job-1", "-n", "ml", "--demo", "--autoscale"])
    assert r.exit_code == 0, r.output
    assert "Autoscaling what-if" in r.stdout
    assert {"A)", "B)"} <= set(_rows(r.stdout))
