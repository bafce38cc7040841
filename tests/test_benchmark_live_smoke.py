"""Smoke test of benchmarks.live (loopback API server + live capture) at 20 nodes; no timing asserts."""

from __future__ import annotations

import gzip
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import generate, live  # noqa: E402

from kubectl_wap.snapshot.io.files import load_snapshot  # noqa: E402
from kubectl_wap.snapshot.io.live import PAGE_LIMIT, read_cluster  # noqa: E402
from kubectl_wap.snapshot.io.readonly import connect  # noqa: E402


@pytest.fixture(scope="module")
def meta(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("live-bench")
    # > PAGE_LIMIT pods, so the pods list takes more than one page.
    return generate.generate("T", str(out), seed=3, nodes=20, pods=700, gangs=(8, 16))


def test_encoded_items_are_the_list_items_without_apiversion_and_kind(meta):
    served = [(kind, json.loads(body)) for kind, body in live.encoded_items(meta["list_path"])]
    items = json.load(gzip.open(meta["list_path"]))["items"]
    want = []
    for o in items:
        kind = o.pop("kind")
        o.pop("apiVersion")
        want.append((kind, o))
    assert served == want


def test_encoded_server_pages_like_the_api_server(meta, tmp_path):
    with live.EncodedApiServer(meta["list_path"]) as srv:
        client = connect(str(srv.write_kubeconfig(tmp_path / "kc")), None)
        try:
            header, items = read_cluster(client, None)
        finally:
            client.close()
        pod_pages = [r for r in srv.requests if r.path == "/api/v1/pods"]
    assert header["counts"]["pods"] == meta["counts"]["pods"] > PAGE_LIMIT
    assert [r.query["limit"] for r in pod_pages] == [[str(PAGE_LIMIT)]] * 2
    assert "continue" not in pod_pages[0].query and pod_pages[1].query["continue"]
    assert sum(1 for o in items if o["kind"] == "Pod") == meta["counts"]["pods"]


def test_bench_captures_the_whole_cluster_in_child_processes(meta, capsys):
    out = os.path.dirname(meta["list_path"])
    res = live.bench(meta, out)
    live.print_table(res)
    runs = {r["mode"]: r for r in res["runs"]}
    assert set(runs) == {"snapshot", "load"}
    assert all(r["peak_rss_mb"] > 0 and r["wall_s"] > 0 for r in runs.values())
    assert runs["load"]["pods"] == meta["counts"]["pods"] and runs["load"]["nodes"] == 20
    captured = load_snapshot(os.path.join(out, "T-live-snapshot.json.gz"))
    generated = load_snapshot(meta["snapshot_path"])
    assert sorted(p.key for p in captured.pods) == sorted(p.key for p in generated.pods)
    assert json.load(open(os.path.join(out, "live-T.json")))["runs"] == res["runs"]
    assert "snapshot" in capsys.readouterr().out
