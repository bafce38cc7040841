"""Smoke test of the benchmark code path (generator + runner) at a tiny size; no timing asserts."""

from __future__ import annotations

import gzip
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import generate, run  # noqa: E402


@pytest.fixture()
def tiny(monkeypatch, tmp_path):
    monkeypatch.setitem(generate.SIZES, "T", (20, 600))
    monkeypatch.setattr(generate, "GANGS", (8, 16))
    return tmp_path


def test_generate_is_deterministic_and_loads(tmp_path):
    a = generate.generate("T", str(tmp_path / "a"), seed=7, nodes=20, pods=600, gangs=(8, 16))
    b = generate.generate("T", str(tmp_path / "b"), seed=7, nodes=20, pods=600, gangs=(8, 16))
    assert open(a["list_path"], "rb").read() == open(b["list_path"], "rb").read()
    assert open(a["snapshot_path"], "rb").read() == open(b["snapshot_path"], "rb").read()
    assert 0.9 * 600 <= a["counts"]["pods"] <= 600 and a["counts"]["nodes"] == 20
    doc = json.load(gzip.open(a["list_path"]))
    kinds = {o["kind"] for o in doc["items"]}
    assert {"Node", "Pod", "PodGroup", "CompositePodGroup", "PodDisruptionBudget", "PriorityClass", "Namespace"} <= kinds
    pod = next(o for o in doc["items"] if o["kind"] == "Pod" and o["metadata"]["namespace"] != "kube-system")
    assert pod["metadata"]["managedFields"] and pod["spec"]["containers"][0]["env"]

    from kubectl_wap.preemption.analyze import analyze
    from kubectl_wap.snapshot.files import load_snapshot

    for path in (a["list_path"], a["snapshot_path"]):
        snap = load_snapshot(path)
        assert len(snap.pods) == a["counts"]["pods"]
    r = analyze(snap, "podgroup", generate.GANG_NAMESPACE, "gang-8")
    assert r.outcome == "Preempt"


def test_runner_end_to_end(tiny, capsys):
    # ensure() in the children regenerates from SIZES, which the monkeypatch does not reach:
    # generate the tiny cluster first so the children find it cached under the same name.
    generate.generate("T", str(tiny), nodes=20, pods=600, gangs=(8, 16))
    res = run.bench("T", repeat=1, out_dir=str(tiny), literal=True, literal_timeout=60)
    run.print_table([res], 60)
    out = capsys.readouterr().out
    assert "gang-8" in out and "gang-16" in out
    assert res["gangs"]["gang-8"]["literal_same"] is True
    assert res["bare_s"] > 0 and res["e2e_rss_mb"] > 0
    g8 = res["gangs"]["gang-8"]
    assert g8["cli_s"] > 0 and g8["e2e_snapshot_s"] >= g8["analyze_s"] > 0  # the CLI ran once per gang
    run.print_table([res, res], 60)
    assert "Scaling: microseconds per pod" in capsys.readouterr().out


def _duplicate_keys(g: generate.Gen) -> list[tuple[str, str, str]]:
    seen: set[tuple[str, str, str]] = set()
    dups = []
    for o in g.items():
        key = (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])
        if key in seen:
            dups.append(key)
        seen.add(key)
    return dups


def test_generated_names_are_unique_per_kind():
    g = generate.Gen(20, 600, seed=7, gangs=(8, 16))
    assert _duplicate_keys(g) == []
    assert g.counts["pods"] > 500  # the check saw a real cluster


def test_generated_names_stay_unique_when_suffixes_collide(monkeypatch):
    # L drew 10,000 DaemonSet suffixes from 16**5 and collided ~14 times; a two-letter alphabet
    # (32 suffixes for 20 DaemonSet pods each) makes this tiny cluster collide for certain.
    def narrow_hexs(self: generate.Gen, n: int) -> str:
        return "".join(self.rng.choice("ab") for _ in range(n))

    monkeypatch.setattr(generate.Gen, "hexs", narrow_hexs)
    g = generate.Gen(20, 600, seed=7, gangs=(8, 16))
    assert _duplicate_keys(g) == []
    proxies = [o["metadata"]["name"] for o in generate.Gen(20, 600, seed=7, gangs=(8, 16)).items()
               if o["metadata"]["name"].startswith("kube-proxy-")]
    assert len(proxies) == 20 and all(len(n) == len("kube-proxy-") + 5 for n in proxies)  # still the realistic shape
