"""Live-cluster read path against a loopback API server: pagination, faults, errors, read-only."""

from __future__ import annotations

import gc
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # import the helper whatever pytest's import mode

from fake_apiserver import FakeApiServer, free_port, tls_available, write_kubeconfig  # noqa: E402

from kubectl_wap.errors import ClusterAccessError  # noqa: E402
from kubectl_wap.snapshot.io import readonly  # noqa: E402
from kubectl_wap.snapshot.io.live import RESOURCES, load_live  # noqa: E402
from kubectl_wap.snapshot.io.readonly import ReadOnlyViolation, connect  # noqa: E402

N_PODS = 1201  # > 2 pages of 500, last page partial
PODS = "/api/v1/pods"
PDBS = "/apis/policy/v1/poddisruptionbudgets"
PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/podgroups"


def cluster_objects(n_pods: int = N_PODS) -> list[dict]:
    objs: list[dict] = []
    for i in range(4):
        objs.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i}", "labels": {"zone": f"z{i % 2}"}, "managedFields": [{"manager": "kubelet"}]},
            "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}] if i == 0 else []},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                       "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True", "message": "kubelet is posting"}]},
        })
    for ns in ("a", "b", "c"):
        objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"team": ns}}})
    for i in range(n_pods):
        objs.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": f"pod-{i}", "namespace": "abc"[i % 3], "labels": {"app": f"app-{i % 7}"},
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"secret\":1}"},
                "managedFields": [{"manager": "kubectl"}],
            },
            "spec": {
                "nodeName": f"node-{i % 4}", "priority": i % 5,
                "containers": [{"name": "c", "image": "img:1", "env": [{"name": "PASSWORD", "value": "hunter2"}],
                                "resources": {"requests": {"cpu": "100m"}}}],
            },
            "status": {"phase": "Running"},
        })
    objs.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                 "value": 1000, "description": "x"})
    objs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": "a"},
                 "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "app-1"}}},
                 "status": {"disruptionsAllowed": 0, "currentHealthy": 3}})
    objs.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg", "namespace": "b"},
                 "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})
    objs.append({"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
                 "metadata": {"name": "cpg", "namespace": "b"}, "spec": {}})
    return objs


OBJECTS = cluster_objects()


@pytest.fixture
def server() -> Iterator[FakeApiServer]:
    with FakeApiServer(OBJECTS) as srv:
        yield srv


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record retry waits instead of sleeping (keeps the suite fast, lets tests check Retry-After)."""
    slept: list[float] = []
    monkeypatch.setattr(readonly, "_sleep", slept.append)
    return slept


def _load(srv: FakeApiServer, tmp_path: Path, namespace: str | None = None, **kw: object) -> tuple[dict, list[dict]]:
    kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
    return load_live(str(kc), None, namespace, **kw)  # type: ignore[arg-type]


def _pod_list_requests(srv: FakeApiServer, path: str = PODS) -> list[dict[str, list[str]]]:
    return [r.query for r in srv.requests if r.path == path]


# -- the real kubectl against the fake server ------------------------------------------------------

def _kubectl() -> Path | None:
    candidate = Path(sys.executable).parent / "kubectl"
    if candidate.exists():
        return candidate
    import shutil

    found = shutil.which("kubectl")
    return Path(found) if found else None


def _run_kubectl(kc: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    kubectl = _kubectl()
    if kubectl is None:
        pytest.skip("kubectl binary not installed")
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["HOME"] = str(home)  # keep kubectl's discovery cache out of the real home
    return subprocess.run(
        [str(kubectl), "--kubeconfig", str(kc), "--cache-dir", str(home / "cache"), *args],
        capture_output=True, text=True, env=env, timeout=30,
    )


@pytest.mark.skipif(not tls_available(), reason="openssl needed for an HTTPS fake server")
def test_real_kubectl_get_nodes_https_token(server: FakeApiServer, tmp_path: Path) -> None:
    kc = server.write_kubeconfig(tmp_path / "kubeconfig")
    res = _run_kubectl(kc, tmp_path, "get", "nodes")
    assert res.returncode == 0, res.stderr
    for i in range(4):
        assert f"node-{i}" in res.stdout
    assert server.methods() == {"GET"}
    res = _run_kubectl(kc, tmp_path, "get", "pods", "-n", "a", "-o", "name")
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("pod/") == len([o for o in OBJECTS if o["kind"] == "Pod" and o["metadata"]["namespace"] == "a"])


def test_real_kubectl_get_nodes_plain_http(tmp_path: Path) -> None:
    # kubectl never sends a token over plain HTTP, so this server runs without auth.
    with FakeApiServer(OBJECTS[:4], token=None, tls=False) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        res = _run_kubectl(kc, tmp_path, "get", "nodes")
        assert res.returncode == 0, res.stderr
        assert "node-3" in res.stdout


def test_real_kubectl_rejected_with_wrong_token(server: FakeApiServer, tmp_path: Path) -> None:
    if not server.tls:
        pytest.skip("needs HTTPS")
    kc = server.write_kubeconfig(tmp_path / "kubeconfig", token="wrong")
    res = _run_kubectl(kc, tmp_path, "get", "nodes")
    assert res.returncode != 0
    assert "logged in" in res.stderr or "Unauthorized" in res.stderr


# -- load_live --------------------------------------------------------------------------------------

def test_pagination_returns_every_object_once(server: FakeApiServer, tmp_path: Path) -> None:
    seen: list[tuple[str, int]] = []
    header, items = _load(server, tmp_path, progress=lambda r, n: seen.append((r, n)))
    pods = [i for i in items if i["kind"] == "Pod"]
    keys = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods]
    assert len(keys) == N_PODS and len(set(keys)) == N_PODS
    reqs = _pod_list_requests(server)
    assert len(reqs) == 3  # 500 + 500 + 201
    assert all(q["limit"] == ["500"] for q in reqs)
    assert "continue" not in reqs[0] and all("continue" in q for q in reqs[1:])
    assert [n for r, n in seen if r == "pods"] == [500, 1000, N_PODS]
    assert header["listed"] == [r.name for r in RESOURCES]
    assert header["notServed"] == [] and header["forbidden"] == [] and header["warnings"] == []
    assert header["counts"] == {
        "nodes": 4, "pods": N_PODS, "namespaces": 3, "priorityclasses.scheduling.k8s.io": 1,
        "poddisruptionbudgets.policy": 1, "podgroups.scheduling.k8s.io": 1, "compositepodgroups.scheduling.k8s.io": 1,
        "deviceclasses.resource.k8s.io": 0, "resourceslices.resource.k8s.io": 0, "resourceclaims.resource.k8s.io": 0,
        "resourceclaimtemplates.resource.k8s.io": 0,
        # the storage objects the volume filters read (issue 15); this fake cluster has none
        "persistentvolumeclaims": 0, "persistentvolumes": 0, "storageclasses.storage.k8s.io": 0, "csinodes.storage.k8s.io": 0,
        # create-time admission of hypothetical pods (issue 30); none here either
        "runtimeclasses.node.k8s.io": 0, "limitranges": 0,
    }
    assert header["resourceVersions"]["pods"] == server.resource_version
    assert header["server"] == {"url": server.url, "version": "v1.37.1"}
    assert header["formatVersion"] == 1 and header["capturedAt"].endswith("Z")
    kinds = {(i["apiVersion"], i["kind"]) for i in items}
    assert kinds == {
        ("v1", "Node"), ("v1", "Pod"), ("v1", "Namespace"), ("scheduling.k8s.io/v1", "PriorityClass"),
        ("policy/v1", "PodDisruptionBudget"), ("scheduling.k8s.io/v1beta1", "PodGroup"),
        ("scheduling.k8s.io/v1alpha3", "CompositePodGroup"),
    }
    # Stripped on the way in.
    assert "managedFields" not in pods[0]["metadata"] and "annotations" not in pods[0]["metadata"]
    assert "env" not in pods[0]["spec"]["containers"][0]
    assert "hunter2" not in repr(items)
    assert server.methods() == {"GET"}
    assert gc.isenabled()


def test_namespace_scope(server: FakeApiServer, tmp_path: Path) -> None:
    header, items = _load(server, tmp_path, namespace="a")
    assert header["namespace"] == "a"
    pods = [i for i in items if i["kind"] == "Pod"]
    assert pods and {p["metadata"]["namespace"] for p in pods} == {"a"}
    paths = set(server.paths())
    assert {"/api/v1/namespaces/a/pods", "/apis/policy/v1/namespaces/a/poddisruptionbudgets",
            "/apis/scheduling.k8s.io/v1beta1/namespaces/a/podgroups", "/api/v1/nodes", "/api/v1/namespaces",
            "/apis/scheduling.k8s.io/v1/priorityclasses"} <= paths
    assert PODS not in paths
    assert header["counts"]["nodes"] == 4 and header["counts"]["podgroups.scheduling.k8s.io"] == 0


def test_podgroups_not_served_is_a_warning(tmp_path: Path) -> None:
    with FakeApiServer(OBJECTS, not_served={"podgroups", "compositepodgroups"}) as srv:
        header, items = _load(srv, tmp_path)
    assert header["notServed"] == ["podgroups.scheduling.k8s.io", "compositepodgroups.scheduling.k8s.io"]
    assert "podgroups.scheduling.k8s.io" not in header["listed"]
    assert any(w.startswith("podgroups.scheduling.k8s.io") and "not served" in w for w in header["warnings"])
    assert header["counts"]["pods"] == N_PODS


def test_pdbs_forbidden_is_a_warning(server: FakeApiServer, tmp_path: Path) -> None:
    server.fail(PDBS, 403, None)
    header, items = _load(server, tmp_path)
    assert header["forbidden"] == ["poddisruptionbudgets.policy"]
    assert not any(i["kind"] == "PodDisruptionBudget" for i in items)
    assert any(
        w.startswith("forbidden to list poddisruptionbudgets.policy") and "reported as preemptible" in w
        for w in header["warnings"]
    )


@pytest.mark.parametrize("path,resource", [(PODS, "pods"), ("/api/v1/nodes", "nodes")])
def test_core_list_forbidden_is_an_error(server: FakeApiServer, tmp_path: Path, path: str, resource: str) -> None:
    server.fail(path, 403, None)
    with pytest.raises(ClusterAccessError) as err:
        _load(server, tmp_path)
    msg = str(err.value)
    assert msg.startswith(f"cannot list {resource} at the cluster scope: forbidden (")
    assert f'User "tester" cannot list resource "{resource}"' in msg  # the server's own words
    assert "\n" not in msg
    assert gc.isenabled()


def test_pods_forbidden_in_namespace_names_the_namespace(server: FakeApiServer, tmp_path: Path) -> None:
    server.fail("/api/v1/namespaces/a/pods", 403, None)
    with pytest.raises(ClusterAccessError, match=r"cannot list pods in namespace 'a': forbidden"):
        _load(server, tmp_path, namespace="a")


def test_429_and_500_are_retried(server: FakeApiServer, tmp_path: Path, no_sleep: list[float]) -> None:
    server.fail(PODS, 429, 1, retry_after=3)
    server.fail(PDBS, 500, 2)
    server.fail("/api/v1/nodes", 429, 1, retry_after=60)  # capped
    header, items = _load(server, tmp_path)
    assert header["counts"]["pods"] == N_PODS and header["counts"]["poddisruptionbudgets.policy"] == 1
    assert 3.0 in no_sleep and readonly.RETRY_AFTER_MAX in no_sleep
    assert max(no_sleep) <= readonly.RETRY_AFTER_MAX
    assert len(no_sleep) == 4  # one 429 each for nodes and pods, two 500s for pdbs
    assert len([r for r in server.requests if r.path == PDBS]) == 3


def test_retries_are_bounded(server: FakeApiServer, tmp_path: Path, no_sleep: list[float]) -> None:
    server.fail(PODS, 503, None)
    with pytest.raises(ClusterAccessError, match=r"GET /api/v1/pods failed 5 times; last answer 503"):
        _load(server, tmp_path)
    assert len(_pod_list_requests(server)) == readonly.MAX_TRIES
    assert len(no_sleep) == readonly.MAX_TRIES - 1


def test_410_gone_restarts_the_list(server: FakeApiServer, tmp_path: Path) -> None:
    server.fail(PODS, 410, 1, only_continue=True)
    header, items = _load(server, tmp_path)
    pods = [i["metadata"]["name"] for i in items if i["kind"] == "Pod"]
    assert len(pods) == N_PODS == len(set(pods))  # the partial first attempt was discarded
    reqs = _pod_list_requests(server)
    assert sum("continue" not in q for q in reqs) == 2  # started twice
    assert header["counts"]["pods"] == N_PODS


def test_410_gone_forever_gives_up(server: FakeApiServer, tmp_path: Path) -> None:
    server.fail(PODS, 410, None, only_continue=True)
    with pytest.raises(ClusterAccessError, match=r"restarted 3 times after 410 Gone"):
        _load(server, tmp_path)
    assert sum("continue" not in q for q in _pod_list_requests(server)) == 4


def test_unreachable_server(tmp_path: Path) -> None:
    port = free_port()
    kc = write_kubeconfig(tmp_path / "kubeconfig", f"http://127.0.0.1:{port}", "t0ken")
    with pytest.raises(ClusterAccessError) as err:
        load_live(str(kc), None, None, request_timeout=5)
    assert str(err.value) == (
        f"cannot reach the API server at http://127.0.0.1:{port}: connection refused "
        "(is the cluster running and the kubeconfig current?)"
    )


def test_server_that_never_answers_times_out(tmp_path: Path) -> None:
    # A listening socket nobody accepts on: TCP connects (backlog), the HTTP answer never comes.
    with socket.socket() as lsock:
        lsock.bind(("127.0.0.1", 0))
        lsock.listen(8)
        port = lsock.getsockname()[1]
        kc = write_kubeconfig(tmp_path / "kubeconfig", f"http://127.0.0.1:{port}", "t0ken")
        with pytest.raises(ClusterAccessError, match=r"timed out after 0.3s waiting for the API server"):
            load_live(str(kc), None, None, request_timeout=0.3)


def test_wrong_token_is_a_clear_401(server: FakeApiServer, tmp_path: Path) -> None:
    kc = server.write_kubeconfig(tmp_path / "kubeconfig", token="wrong")
    with pytest.raises(ClusterAccessError) as err:
        load_live(str(kc), None, None)
    assert "rejected our credentials (401 Unauthorized" in str(err.value)
    assert server.url in str(err.value)


def test_untrusted_certificate(server: FakeApiServer, tmp_path: Path) -> None:
    if not server.tls:
        pytest.skip("needs HTTPS")
    kc = server.write_kubeconfig(tmp_path / "kubeconfig", trust_ca=False)
    with pytest.raises(ClusterAccessError, match=r"^TLS verification failed talking to the API server at https://"):
        load_live(str(kc), None, None, request_timeout=5)


def test_missing_kubeconfig_and_unknown_context(server: FakeApiServer, tmp_path: Path) -> None:
    with pytest.raises(ClusterAccessError, match=r"kubeconfig file not found: .*nope"):
        load_live(str(tmp_path / "nope"), None, None)
    kc = server.write_kubeconfig(tmp_path / "kubeconfig", context_name="fake")
    with pytest.raises(ClusterAccessError, match=r"context 'other' does not exist in the kubeconfig \(the kubeconfig has: fake\)"):
        load_live(str(kc), "other", None)
    header, _ = load_live(str(kc), "fake", None)
    assert header["counts"]["nodes"] == 4


def test_default_kubeconfig_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ClusterAccessError, match=r"no kubeconfig found .*set KUBECONFIG"):
        load_live(None, None, None)


def test_kubeconfig_from_env(server: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kc = server.write_kubeconfig(tmp_path / "kubeconfig")
    monkeypatch.setenv("KUBECONFIG", str(kc))
    header, _ = load_live(None, None, None)
    assert header["counts"]["pods"] == N_PODS


# -- read-only guarantee ----------------------------------------------------------------------------

def test_mutating_requests_are_refused_before_sending(server: FakeApiServer, tmp_path: Path) -> None:
    kc = server.write_kubeconfig(tmp_path / "kubeconfig")
    client = connect(str(kc), None)
    try:
        for method in ("POST", "PUT", "PATCH", "DELETE", "delete"):
            with pytest.raises(ReadOnlyViolation):
                client.request(method, "/api/v1/namespaces/a")
        # Even the typed client sharing the same ApiClient cannot get past the guard.
        from kubernetes import client as kclient

        core = kclient.CoreV1Api(client._api)
        with pytest.raises(ReadOnlyViolation):
            core.delete_namespace("a")
        with pytest.raises(ReadOnlyViolation):
            core.create_namespace({"metadata": {"name": "x"}})
        assert client.request("GET", "/version").status == 200
    finally:
        client.close()
    assert server.methods() == {"GET"}
    assert server.paths() == ["/version"]


def test_import_is_lazy() -> None:
    code = "import sys, kubectl_wap.snapshot.io.live, kubectl_wap.snapshot.io.save; print('kubernetes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30,
                         cwd=str(Path(__file__).parent.parent))
    assert out.stdout.strip() == "False", out.stderr


def test_transport_messages_are_one_line() -> None:
    from urllib3.exceptions import NameResolutionError

    client = readonly.ReadOnlyClient.__new__(readonly.ReadOnlyClient)
    client.server_url = "https://k8s.example:6443"
    dns = NameResolutionError("k8s.example", None, OSError("[Errno -2] Name or service not known"))  # type: ignore[arg-type]
    assert client._connect_message(dns) == (
        "cannot reach the API server at https://k8s.example:6443: host name does not resolve (DNS)"
    )
    msg = client._tls_message("SSLError\n[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed")
    assert msg == ("TLS verification failed talking to the API server at https://k8s.example:6443: "
                   "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed")


def test_concurrent_servers_do_not_interfere(tmp_path: Path) -> None:
    # Two loads at once against two servers: the loader keeps no module-level state.
    results: dict[int, int] = {}

    def run(i: int, n: int) -> None:
        with FakeApiServer(cluster_objects(n)) as srv:
            kc = srv.write_kubeconfig(tmp_path / f"kc{i}")
            results[i] = load_live(str(kc), None, None)[0]["counts"]["pods"]

    threads = [threading.Thread(target=run, args=(i, n)) for i, n in enumerate((10, 600))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert results == {0: 10, 1: 600}


def _exec_kubeconfig(srv: FakeApiServer, tmp_path: Path, token: str | None) -> Path:
    """A kubeconfig whose user is an exec credential plugin (like cloud CLIs); None = plugin fails."""
    plugin = tmp_path / "plugin.py"
    if token is None:
        plugin.write_text("import sys\nsys.stderr.write('login required\\n')\nsys.exit(1)\n")
    else:
        cred = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": token}}
        plugin.write_text(f"import json\nprint(json.dumps({cred!r}))\n")
    kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
    cfg = json.loads(kc.read_text())
    cfg["users"][0]["user"] = {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable, "args": [str(plugin)],
        "interactiveMode": "Never",
    }}
    kc.write_text(json.dumps(cfg))
    return kc


def test_exec_credential_plugin(server: FakeApiServer, tmp_path: Path) -> None:
    kc = _exec_kubeconfig(server, tmp_path, server.token)
    header, _ = load_live(str(kc), None, None)
    assert header["counts"]["nodes"] == 4


def test_failing_exec_credential_plugin(server: FakeApiServer, tmp_path: Path) -> None:
    kc = _exec_kubeconfig(server, tmp_path, None)
    with pytest.raises(ClusterAccessError) as err:
        load_live(str(kc), None, None)
    assert str(err.value).endswith("the kubeconfig's credential plugin failed: exec: process returned 1. login required")
    assert "\n" not in str(err.value)


def test_completion_reads_names_from_the_cluster(tmp_path: Path) -> None:
    """No --snapshot/--demo on the line: names and namespaces come from the cluster of the
    kubeconfig (one list call); pods offered are the pending ones; an unreachable server offers
    nothing and says nothing, fast."""
    import time

    objs = cluster_objects(6) + [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "waiting", "namespace": "b"},
                                  "spec": {"containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Pending"}}]

    def complete(*args: str) -> list[str]:
        exe = str(Path(sys.executable).parent / "kubectl_complete-wap")
        r = subprocess.run([exe, "__complete", *args], capture_output=True, text=True, timeout=60)
        assert r.stderr == ""
        return r.stdout.split()

    with FakeApiServer(objs) as srv:
        kc = str(srv.write_kubeconfig(tmp_path / "kubeconfig"))
        assert complete("whatif", "--kubeconfig", kc, "-n", "b", "podgroup", "") == ["pg", ":4"]
        assert complete("whatif", "--kubeconfig", kc, "-n", "b", "cpg", "") == ["cpg", ":4"]
        assert complete("whatif", "--kubeconfig", kc, "-n", "b", "pod", "") == ["waiting", ":4"]
        assert complete("whatif", "--kubeconfig", kc, "-n", "") == ["a", "b", "c", ":4"]
        assert any(r.path == PODS.replace("/pods", "/namespaces/b/pods") and r.query.get("fieldSelector") == ["spec.nodeName="]
                   for r in srv.requests)
    dead = write_kubeconfig(tmp_path / "dead", f"https://127.0.0.1:{free_port()}", token="t")
    t0 = time.monotonic()
    assert complete("whatif", "--kubeconfig", str(dead), "podgroup", "") == [":4"]
    assert time.monotonic() - t0 < 30  # bounded (the 2 s request timeout, not a retry loop)
