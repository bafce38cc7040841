"""Smoke test of the benchmark code path: the generator at a tiny size, the runner at size S; no timing asserts."""

from __future__ import annotations

import gzip
import json
import os
import sys


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import generate, run  # noqa: E402


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
    from kubectl_wap.snapshot.io.files import load_snapshot

    for path in (a["list_path"], a["snapshot_path"]):
        snap = load_snapshot(path)
        assert len(snap.pods) == a["counts"]["pods"]
    r = analyze(snap, "podgroup", generate.GANG_NAMESPACE, "gang-8")
    assert r.outcome == "Preempt"


def test_runner_end_to_end_at_size_s(tmp_path, capsys):
    """Issue 8: CI runs the benchmark at size S (100 nodes, 3,000 pods), as a smoke test of the
    whole path (every child mode, the real CLI, the literal comparison); nothing is timed."""
    res = run.bench("S", repeat=1, out_dir=str(tmp_path), literal=True, literal_timeout=8)
    run.print_table([res], 8)
    out = capsys.readouterr().out
    assert all(g in out for g in ("gang-64", "gang-256", "gang-1024"))
    assert res["gangs"]["gang-64"]["literal_same"] is True  # ~1 s literal: never cut off
    assert res["bare_s"] > 0 and res["e2e_rss_mb"] > 0
    g = res["gangs"]["gang-64"]
    assert g["outcome"] == "Preempt" and g["cli_s"] > 0 and g["e2e_snapshot_s"] >= g["analyze_s"] > 0
    run.print_table([res, res], 8)
    assert "Scaling: microseconds per pod" in capsys.readouterr().out
    run.main(["--show", "--size", "S", "--out", str(tmp_path), "--literal-timeout", "8"])  # reprint from the cached results
    assert "gang-1024" in capsys.readouterr().out


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


def test_ab_alternates_two_revisions(tmp_path):
    # benchmarks.ab: both revisions checked out as worktrees and run (no timing asserts).
    from benchmarks import ab

    runs = ab.ab(["HEAD", "HEAD~0"], "T", 1, out=str(tmp_path), gen_kw={"nodes": 20, "pods": 300, "gangs": (8,)})
    assert sorted(runs) == sorted((c, r) for c in ("whatif", "explain", "rank") for r in ("HEAD", "HEAD~0"))
    assert all(len(v) == 1 and v[0] > 0 for v in runs.values())


def test_simulate_benchmark_adds_gangs_up_to_the_count(tmp_path):
    """benchmarks.simulate's set-up: the gangs already pending are found in one pass over the pods
    (the same set as asking of each group whether some pod of it is unbound), and copies of the
    template are added until there are `want`."""
    from benchmarks.simulate import add_gangs
    from kubectl_wap.snapshot.io.files import load_snapshot

    meta = generate.generate("T", str(tmp_path), seed=7, nodes=20, pods=600, gangs=(8, 16))
    snap = load_snapshot(meta["snapshot_path"])
    pending = {(g.namespace, g.name) for g in snap.pod_groups
               if any(p.pod_group_name == g.name and p.namespace == g.namespace and not p.node_name for p in snap.pods)}
    assert {n for _, n in pending} == {"gang-8", "gang-16"}
    groups = len(snap.pod_groups)
    assert add_gangs(snap, 5, template="gang-8") == 3
    assert len(snap.pod_groups) == groups + 3
    assert sum(1 for p in snap.pods if p.pod_group_name == "sim-gang-3") == 8
