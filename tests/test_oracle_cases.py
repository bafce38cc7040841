"""Cases the differential batch found (tests/oracle/cases/*.json): each holds a cluster, the
question and the answer the real kube-scheduler v1.37.2 gave (the oracle's own output, recorded).
Our engine must give the same outcome and victims (tests/oracle/differential.py compare) without
Go or an API server, so a fix that regresses shows in the main suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.oracle.differential import compare, ours, terminating_at_start

CASES = sorted((Path(__file__).parent / "oracle" / "cases").glob("*.json"))


def test_there_are_cases():
    assert CASES


def _param(path: Path):
    # An "open" case is a difference found and not yet explained: it must keep failing (strict
    # xfail) until fixed, and then its "open" flag goes.
    if json.loads(path.read_text()).get("open"):
        return pytest.param(path, id=path.stem, marks=pytest.mark.xfail(strict=True, reason="open difference: see its 'why'"))
    return pytest.param(path, id=path.stem)


@pytest.mark.parametrize("path", [_param(p) for p in CASES])
def test_ours_matches_the_recorded_kube_scheduler_answer(path: Path):
    doc = json.loads(path.read_text())
    w = doc["whatif"]
    mine = ours(doc["cluster"], w["kind"], w["namespace"], w["name"], doc["featureGates"], hypothetical=doc.get("hypothetical", 0))
    v = compare(w["kind"], mine, doc["kubeScheduler"], terminating_at_start(doc["cluster"]))
    assert v.agree, f"{path.name}: {doc['why']}\n" + "; ".join(v.reasons)
