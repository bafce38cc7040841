"""The bundled DRA demo (`--snapshot @demo-dra`, tools/make_demo_dra.py; issue 15): a GPU gang
preempts DRA-allocated pods only with DRAPreemption, and the file is what the generator writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from kubectl_wap.cli import app

REPO = Path(__file__).resolve().parent.parent


def _whatif(*extra: str) -> dict:
    r = CliRunner().invoke(app, ["whatif", "podgroup", "train", "-n", "ml", "--snapshot", "@demo-dra", "-o", "json", *extra])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_bundled_file_is_up_to_date() -> None:
    r = subprocess.run([sys.executable, str(REPO / "tools" / "make_demo_dra.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_v137_nothing_is_preempted() -> None:
    doc = _whatif()
    assert doc["outcome"] == "Unschedulable" and not doc["victims"]
    # removing every lower-priority pod frees no device (v1.37.2 has no PreFilterExtensions)
    assert doc["unplaced"][0]["message"] == "0/4 nodes are available: 4 cannot allocate all claims."


def test_dra_preemption_frees_the_batch_pods_gpus() -> None:
    doc = _whatif("--scheduler-version", "1.38")
    assert doc["outcome"] == "Preempt"
    victims = {f"{v['namespace']}/{v['name']}" for v in doc["victims"]}
    # two of the three 2-GPU batch pods per node free the 4 GPUs each gang pod needs; serving (500) stays
    assert len(victims) == 8 and all(v.startswith("batch/") for v in victims)
    assert all(v["resourceClaims"] == ["gpus"] for v in doc["victims"])
    assert sorted(p["node"] for p in doc["placements"]) == ["h100-0", "h100-1", "h100-2", "h100-3"]


def test_unknown_bundled_name_suggests_the_closest() -> None:
    r = CliRunner().invoke(app, ["whatif", "podgroup", "train", "-n", "ml", "--snapshot", "@demo-drx"])
    assert r.exit_code == 2 and "did you mean @demo-dra?" in r.output
