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


def test_v138_beta_nothing_is_preempted() -> None:
    """v1.38.0-beta.0's DynamicResources has no PreFilterExtensions either: the 1.38 default is 1.37's answer."""
    doc = _whatif("--scheduler-version", "1.38")
    assert doc["outcome"] == "Unschedulable" and not doc["victims"]


def test_dra_preemption_frees_the_batch_pods_gpus() -> None:
    doc = _whatif("--scheduler-version", "1.38", "--feature-gates", "DRAPreemption=true")
    assert doc["outcome"] == "Preempt"
    victims = {f"{v['namespace']}/{v['name']}" for v in doc["victims"]}
    # v1.38.0-beta.0's victim-aware choice (DefaultPreemption RankNodes/Reserve): the first gang pod
    # condemns every potential victim on h100-0 (3 batch pods and serve-0, 500 < the gang's
    # priority), so h100-0 costs nothing for the second pod (rank 0) and the gang packs two pods per
    # node on two nodes; reprieval cannot spare serve-0/1 there. (Spreading over four nodes and
    # sparing serving, the pre-1.38 reading, is what v1.37.2's plain Filter+Score would do.)
    assert victims == {"serving/serve-0", "serving/serve-1"} | {f"batch/batch-{n}{i}" for n in "01" for i in "012"}
    assert all(v["resourceClaims"] == ["gpus"] for v in doc["victims"])
    assert sorted(p["node"] for p in doc["placements"]) == ["h100-0", "h100-0", "h100-1", "h100-1"]


def test_unknown_bundled_name_suggests_the_closest() -> None:
    r = CliRunner().invoke(app, ["whatif", "podgroup", "train", "-n", "ml", "--snapshot", "@demo-drx"])
    assert r.exit_code == 2 and "did you mean @demo-dra?" in r.output
