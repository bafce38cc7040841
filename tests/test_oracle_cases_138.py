"""Cases the v1.38.0-beta.0 oracle found (tests/oracle/v1.38/cases/*.json, recorded by
the first 1.38 batch): our engine under the 1.38 profile must give the real scheduler's
outcome and victims, without Go."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.oracle.differential import compare, ours, terminating_at_start

CASES = sorted((Path(__file__).parent / "oracle" / "v1.38" / "cases").glob("*.json"))


def test_there_are_cases():
    assert CASES


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_ours_under_1_38_matches_the_recorded_answer(path: Path):
    doc = json.loads(path.read_text())
    w = doc["whatif"]
    mine = ours(doc["cluster"], w["kind"], w["namespace"], w["name"], doc["featureGates"], version="1.38",
                hypothetical=doc.get("hypothetical", 0))
    v = compare(w["kind"], mine, doc["kubeScheduler"], terminating_at_start(doc["cluster"]))
    assert v.agree, f"{path.name}: {doc['why']}\n" + "; ".join(v.reasons)
