"""Cases the v1.38.0-beta.0 oracle found (tests/oracle/v1.38/cases/*.json, recorded by
tests/oracle/v1.38/run138.py): our engine under the 1.38 profile must give the real scheduler's
outcome and victims, without Go."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_wap.preemption import gates
from kubectl_wap.profiles import V1_38
from tests.oracle.differential import compare, ours, terminating_at_start

CASES = sorted((Path(__file__).parent / "oracle" / "v1.38" / "cases").glob("*.json"))


def test_there_are_cases():
    assert CASES


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_ours_under_1_38_matches_the_recorded_answer(path: Path, monkeypatch: pytest.MonkeyPatch):
    doc = json.loads(path.read_text())
    w = doc["whatif"]
    real = gates.parse_gates
    # differential.ours parses the case's gate string with the default (1.37) profile; ask under 1.38
    monkeypatch.setattr(gates, "parse_gates", lambda text=None, profile=None, *a, **k: real(text, V1_38, *a, **k))
    mine = ours(doc["cluster"], w["kind"], w["namespace"], w["name"], doc["featureGates"])
    v = compare(w["kind"], mine, doc["kubeScheduler"], terminating_at_start(doc["cluster"]))
    assert v.agree, f"{path.name}: {doc['why']}\n" + "; ".join(v.reasons)
