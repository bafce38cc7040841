"""`kubectl wap metrics` (issue 36 item 3): the preemption outlook in the Prometheus text format,
parsed with prometheus-client's own parser; its numbers checked against the commands that answer the
same questions (pending, rank, whatif); the served endpoint scraped on loopback while it refreshes,
and stopped by SIGTERM and SIGINT."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

prom = pytest.importorskip("prometheus_client.parser", reason="prometheus-client is in the test extra")

from kubectl_wap.errors import UserError  # noqa: E402
from kubectl_wap.cli.metricsserve import MetricsServer, parse_bind  # noqa: E402
from kubectl_wap.report.metrics import COUNTER, METRIC_HELP  # noqa: E402

BIN = Path(sys.executable).parent
WAP = str(BIN / "kubectl-wap") if (BIN / "kubectl-wap").exists() else shutil.which("kubectl-wap")
ENV = dict(os.environ, NO_COLOR="1")


def wap(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([WAP, *args], capture_output=True, text=True, timeout=300, env=ENV)


def families(text: str) -> dict:
    return {f.name: f for f in prom.text_string_to_metric_families(text)}


def samples(fams: dict, name: str) -> dict[tuple, float]:
    """(kind, namespace, name[, extra label values]) -> value."""
    fam = fams[name[:-6] if name.endswith("_total") else name]
    out = {}
    for s in fam.samples:
        if s.name != name:
            continue
        lab = s.labels
        out[tuple(lab[k] for k in ("kind", "namespace", "name") if k in lab) +
            tuple(v for k, v in lab.items() if k.startswith("preemptor_"))] = s.value
    return out


@pytest.fixture(scope="module")
def demo_text() -> str:
    r = wap("metrics", "--demo")
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_names_follow_prometheus_conventions():
    for name, (kind, help_text) in METRIC_HELP.items():
        assert re.fullmatch(r"wap_[a-z_]+", name), name
        assert name.endswith("_total") == (kind == COUNTER), f"{name}: _total is for counters only"
        assert help_text and "\n" not in help_text


def test_the_text_parses_and_every_family_is_declared(demo_text: str):
    fams = families(demo_text)
    assert set(fams) <= {n[:-6] if n.endswith("_total") else n for n in METRIC_HELP}
    assert all(f.type == "gauge" for f in fams.values())  # the one-shot output has no counters
    assert samples(fams, "wap_pending_objects")[()] == 5


def test_pending_outlook_equals_the_pending_report(demo_text: str):
    fams = families(demo_text)
    doc = json.loads(wap("pending", "-A", "--demo", "--no-scale-up", "-o", "json").stdout)
    victims = samples(fams, "wap_pending_preemption_victim_pods")
    info = {k[:3]: s.labels for s in fams["wap_pending_info"].samples for k in [(s.labels["kind"], s.labels["namespace"], s.labels["name"])]}
    assert len(doc["items"]) == len(victims) == 5
    for item in doc["items"]:
        key = (item["kind"], item["namespace"], item["name"])
        assert victims[key] == item["preemption"]["victimPods"], key
        assert info[key]["preemption"] == item["preemption"]["helps"], key
        assert samples(fams, "wap_pending_pods")[key] == item["pendingPods"]
        assert samples(fams, "wap_pending_age_seconds")[key] == item["ageSeconds"]


def test_unit_risk_ranks_are_the_rank_commands_risk_order_for_the_highest_pending_priority(demo_text: str):
    fams = families(demo_text)
    prio = int(samples(fams, "wap_preemptor_priority")[()])
    assert prio == 1_000_000  # job-1, giant, ... : the highest pending priority on the demo
    doc = json.loads(wap("rank", "--demo", "--priority", str(prio), "-o", "json").stdout)
    want = {(u["kind"], u["namespace"], u["name"]): u["position"] for u in doc["units"]}
    assert samples(fams, "wap_unit_risk_rank") == want
    # every running unit is listed, ranked or not (those at or above the priority have no rank)
    everyone = json.loads(wap("rank", "--demo", "-o", "json").stdout)["units"]
    assert set(samples(fams, "wap_unit_pods")) == {(u["kind"], u["namespace"], u["name"]) for u in everyone}
    assert samples(fams, "wap_running_units")[()] == len(everyone)


def test_which_pending_object_would_take_a_unit_is_whatifs_answer(demo_text: str):
    fams = families(demo_text)
    by = samples(fams, "wap_unit_preempted_by")
    job1 = {k[:3] for k in by if k[3:] == ("PodGroup", "ml", "job-1")}
    doc = json.loads(wap("whatif", "podgroup", "job-1", "-n", "ml", "--demo", "-o", "json").stdout)
    assert job1 == {(v["unit"]["kind"], v["unit"]["namespace"], v["unit"]["name"]) for v in doc["victims"]}
    targeted = {k for k, v in samples(fams, "wap_unit_preemption_targeted").items() if v == 1}
    assert targeted == {k[:3] for k in by}


def test_output_file_is_the_same_text(tmp_path: Path, demo_text: str):
    out = tmp_path / "wap.prom"
    r = wap("metrics", "--demo", "--output-file", str(out))
    assert r.returncode == 0 and r.stdout == "", r.stderr
    assert out.read_text() == demo_text
    assert [p.name for p in tmp_path.iterdir()] == ["wap.prom"]  # no temporary file left behind


@pytest.mark.parametrize("text,want", [(":9108", ("127.0.0.1", 9108)), ("9108", ("127.0.0.1", 9108)),
                                       ("0.0.0.0:9000", ("0.0.0.0", 9000)), ("[::1]:9108", ("::1", 9108))])
def test_bind_addresses(text: str, want: tuple):
    assert parse_bind(text) == want


@pytest.mark.parametrize("bad", ["", "host:", ":http", ":70000", "1.2.3.4"])
def test_bad_bind_addresses_are_one_line(bad: str):
    with pytest.raises(UserError, match="--serve wants HOST:PORT"):
        parse_bind(bad)


def _start(*extra: str) -> tuple[subprocess.Popen, str]:
    p = subprocess.Popen([WAP, "metrics", "--demo", "--serve", "127.0.0.1:0", *extra], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=ENV)
    line = p.stderr.readline()  # the first line says where it listens, once the first refresh is done
    m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", line)
    assert m, line + p.stderr.read() if p.poll() is not None else line
    return p, f"http://127.0.0.1:{m.group(1)}/metrics"


def _scrape(url: str) -> tuple[str, str]:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode(), r.headers["Content-Type"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_served_endpoint_is_scraped_refreshes_and_stops_cleanly(sig: int, demo_text: str):
    p, url = _start("--interval", "0.2")
    try:
        text, ctype = _scrape(url)
        assert ctype.startswith("text/plain; version=0.0.4")
        fams = families(text)
        assert samples(fams, "wap_refresh_success")[()] == 1
        assert fams["wap_refreshes"].type == COUNTER
        assert text.startswith(demo_text)  # the outlook, then the server's own families
        first = samples(fams, "wap_refreshes_total")[()]
        for _ in range(200):  # refreshes go on without a scrape asking for them
            again = samples(families(_scrape(url)[0]), "wap_refreshes_total")[()]
            if again > first:
                break
            time.sleep(0.1)
        assert again > first
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url.replace("/metrics", "/other"), timeout=10)
        assert e.value.code == 404
    finally:
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert err.strip().endswith("stopped") and "Traceback" not in err


def test_a_failed_refresh_keeps_the_last_values_and_says_so():
    calls = []

    def collect() -> str:
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("the API server went away")
        return "# HELP wap_pending_objects x\n# TYPE wap_pending_objects gauge\nwap_pending_objects 3\n"

    said: list[str] = []
    server = MetricsServer(collect, "127.0.0.1", 0, 3600, said.append)
    try:
        server.text = collect()
        server.refresh()
        fams = families(server.body.decode())
    finally:
        server.httpd.server_close()
    assert samples(fams, "wap_pending_objects")[()] == 3
    assert samples(fams, "wap_refresh_success")[()] == 0
    assert samples(fams, "wap_refresh_errors_total")[()] == 1
    assert said == ["refresh failed (serving the previous values): the API server went away"]


def test_serve_errors_are_one_line_exit_2():
    r = wap("metrics", "--demo", "--serve", "nowhere")
    assert r.returncode == 2 and r.stderr.strip().startswith("error: --serve wants HOST:PORT"), r.stderr
    r = wap("metrics", "--demo", "--serve", ":9108", "--output-file", "x.prom")
    assert r.returncode == 2 and "give one of them" in r.stderr


def test_the_docs_document_every_metric():
    section = (Path(__file__).resolve().parent.parent / "docs" / "commands" / "metrics.md").read_text()
    for name, (kind, help_text) in METRIC_HELP.items():
        assert f"| `{name}` | {kind} | {help_text} |" in section, name


def test_top_units_keeps_the_most_at_risk_and_the_targeted(demo_text: str):
    r = wap("metrics", "--demo", "--top-units", "3")
    assert r.returncode == 0, r.stderr
    full, top = families(demo_text), families(r.stdout)
    ranks = samples(top, "wap_unit_risk_rank")
    targeted = {k for k, v in samples(full, "wap_unit_preemption_targeted").items() if v == 1}
    want = {k for k, v in samples(full, "wap_unit_risk_rank").items() if v <= 3} | targeted
    assert set(samples(top, "wap_unit_pods")) == want
    assert {1, 2, 3} <= set(ranks.values()) and all(v <= 3 for k, v in ranks.items() if k not in targeted)
    assert samples(top, "wap_running_units") == samples(full, "wap_running_units")  # the count stays whole
    assert samples(top, "wap_pending_info") == samples(full, "wap_pending_info")


def test_served_live_metrics_re_list_once_per_refresh_with_gets_only(tmp_path: Path):
    sys.path.insert(0, str(Path(__file__).parent))
    from fake_apiserver import FakeApiServer
    from test_diagnose_live import OBJECTS

    with FakeApiServer(OBJECTS) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        p = subprocess.Popen([WAP, "metrics", "--kubeconfig", str(kc), "--serve", "127.0.0.1:0", "--interval", "0.3"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        try:
            line = p.stderr.readline()
            url = re.search(r"(http://127\.0\.0\.1:\d+/metrics)", line)
            assert url, line
            for _ in range(300):
                fams = families(_scrape(url.group(1))[0])
                if samples(fams, "wap_refreshes_total")[()] >= 3:
                    break
                time.sleep(0.1)
        finally:
            p.send_signal(signal.SIGTERM)
            p.communicate(timeout=60)
        pod_lists = [x for x in srv.paths() if x == "/api/v1/pods"]
        methods = srv.methods()
    assert p.returncode == 0
    assert samples(fams, "wap_pending_info")[("Pod", "a", "winner")] == 1
    assert samples(fams, "wap_refresh_success")[()] == 1
    assert methods == {"GET"}
    # one pod list per refresh, however often the endpoint is scraped (the refresh may be one
    # ahead of the scrape that saw the count)
    assert samples(fams, "wap_refreshes_total")[()] <= len(pod_lists) <= samples(fams, "wap_refreshes_total")[()] + 1
