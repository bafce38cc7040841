"""Build the Kueue oracle (tests/oracle-kueue/), run cases through it, compare with our model."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kubectl_wap.queueing.kueue.admissionchecks import admitted_with_reservation, checks_for_workload
from kubectl_wap.queueing.kueue.cycle import ADMITTED, PREEMPTING, schedule_cycle
from kubectl_wap.queueing.kueue.fairpreempt import KueuePanics
from kubectl_wap.queueing.kueue.objects import read_objects

GO_DIR = Path(__file__).resolve().parent.parent / "oracle-kueue"
# Committed known differences: one JSON file per case ({hash, case, ours, kueue, reason}); a
# disagreement on a case listed here is reported as known, not as a failure.
KNOWN_DIR = GO_DIR / "known"
BINARY = GO_DIR / "bin" / "kueue-oracle"
# Kueue v0.17.0's go.mod asks for go 1.25.0; the machine's go (1.26) builds it as it is. A newer
# Kueue that asks for a newer Go names its toolchain here (GOTOOLCHAIN), as tests/oracle does.
TOOLCHAIN: str | None = None
NOW = 1767225600.0  # 2026-01-01T00:00:00Z: the cases' clock (only read for unset reservation times)


class OracleError(RuntimeError):
    pass


def _stale() -> bool:
    if not BINARY.exists():
        return True
    built = BINARY.stat().st_mtime
    return any(p.stat().st_mtime > built for p in [*GO_DIR.glob("*.go"), GO_DIR / "go.mod", GO_DIR / "go.sum"])


def build(force: bool = False) -> Path:
    """`go build` the oracle into tests/oracle-kueue/bin/ when a source is newer than it. One
    package at a time (-p 1): the machine's cores are shared."""
    if not force and not _stale():
        return BINARY
    env = dict(os.environ)
    if TOOLCHAIN:
        env["GOTOOLCHAIN"] = TOOLCHAIN
    BINARY.parent.mkdir(exist_ok=True)
    r = subprocess.run(["go", "build", "-p", "1", "-o", str(BINARY), "."], cwd=GO_DIR, env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise OracleError(f"building the Kueue oracle failed:\n{r.stderr[-4000:]}")
    return BINARY


def run(cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Kueue's answers for a batch of cases (one process)."""
    build()
    r = subprocess.run([str(BINARY)], input=json.dumps(list(cases)), capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise OracleError(f"the Kueue oracle failed: {r.stdout[-2000:]} {r.stderr[-2000:]}")
    out = json.loads(r.stdout)
    assert isinstance(out, list)
    return out


def oracle_answer(answer: Mapping[str, Any]) -> dict[str, Any]:
    """The comparable part of the oracle's first cycle."""
    if answer.get("error"):
        # main.go safeRun: a panic in Kueue's code, compared by kind (our model names it too)
        return {"error": "kueue panicked" if str(answer["error"]).startswith("kueue panicked") else answer["error"]}
    c = answer["cycles"][0]
    return {
        "admitted": {a["workload"]: {"clusterQueue": a["clusterQueue"],
                                     "podSets": {p["name"]: p["flavors"] for p in a["podSets"]},
                                     "checks": a["checks"], "admittedCondition": a["admittedCondition"]}
                     for a in c["admitted"]},
        "preempted": {p["workload"]: p["reason"] for p in c["preempted"]},
    }


def model_answer(case: Mapping[str, Any]) -> dict[str, Any]:
    """The same, from our model (kubectl_wap.queueing.kueue)."""
    try:
        result = schedule_cycle(read_objects(case), NOW)
    except KueuePanics:
        return {"error": "kueue panicked"}
    admitted: dict[str, Any] = {}
    preempted: dict[str, str] = {}
    for d in result.decisions:
        if d.outcome == ADMITTED and d.assignment is not None:
            # the admission checks that apply once quota is reserved, and whether Admitted comes with it
            checks = checks_for_workload(read_objects(case).cluster_queues[d.cluster_queue],
                                         (c.flavor for ps in d.assignment.pod_sets for c in ps.flavors.values()))
            admitted[d.workload.key] = {
                "clusterQueue": d.cluster_queue,
                "podSets": {ps.name: {r: c.flavor for r, c in ps.flavors.items()} for ps in d.assignment.pod_sets},
                "checks": sorted(r.name for r in checks),
                "admittedCondition": admitted_with_reservation(d.workload, checks),
            }
        if d.outcome == PREEMPTING:
            for t in d.targets:
                # A target already evicted is "preemption ongoing" (IssuePreemptions patches
                # nothing): the oracle sees no new eviction for it.
                if not t.workload.evicted:
                    preempted[t.workload.key] = t.reason
    return {"admitted": admitted, "preempted": preempted}


def case_hash(case: Mapping[str, Any]) -> str:
    """Identity of a case by content (its seed left out)."""
    body = {k: v for k, v in case.items() if k != "seed"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def load_known() -> dict[str, dict[str, Any]]:
    out = {}
    for f in sorted(KNOWN_DIR.glob("*.json")):
        k = json.loads(f.read_text())
        out[str(k["hash"])] = k
    return out


def diff(cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every case where our model and Kueue disagree: {case, ours, kueue}."""
    answers = run(cases)
    out = []
    for case, answer in zip(cases, answers, strict=True):
        theirs = oracle_answer(answer)
        ours = model_answer(case)
        if ours != theirs:
            out.append({"case": case, "ours": ours, "kueue": theirs})
    return out
