"""Issue 19, live side: credentials never printed, tokens trimmed like client-go, kubeconfig shapes,
timeouts and bounds against hostile servers, one process-wide GET-only transport."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_apiserver import FakeApiServer, free_port, trickling_server, write_kubeconfig  # noqa: E402

from kubectl_wap.errors import ClusterAccessError  # noqa: E402
from kubectl_wap.snapshot.io import readonly  # noqa: E402
from kubectl_wap.snapshot.io.live import load_live  # noqa: E402
from kubectl_wap.snapshot.io.readonly import ReadOnlyViolation, connect  # noqa: E402

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
TOKEN = "tok-Zq8vN3kXw1-DISTINCT"
PASSWORD = "pw-Hx7Lm2-DISTINCT"
KEY_MARK = "KEYMATERIALrT5uY8iO0pDISTINCT"


def _cli() -> str:
    return str(Path(sys.executable).with_name("kubectl-wap"))


def _run(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_cli(), *args], capture_output=True, text=True, timeout=timeout, errors="replace",
                          env={**os.environ, "NO_COLOR": "1", **(env or {})})


@pytest.fixture
def server() -> Iterator[FakeApiServer]:
    with FakeApiServer([NODE], token=TOKEN, tls=True) as srv:
        yield srv


# -- 1. tokens trimmed as client-go does ---------------------------------------------------------

def test_token_with_trailing_newline_is_trimmed(server: FakeApiServer, tmp_path: Path) -> None:
    # `echo "$T" > token` leaves a newline: kubectl accepts it; before, the header was refused and
    # the message printed the token.
    kc = server.write_kubeconfig(tmp_path / "kc", token=TOKEN + "\n")
    header, _ = load_live(str(kc), None, None)
    assert header["counts"]["nodes"] == 1


def test_token_file_with_trailing_newline_is_trimmed(server: FakeApiServer, tmp_path: Path) -> None:
    kc = server.write_kubeconfig(tmp_path / "kc")
    cfg = json.loads(kc.read_text())
    (tmp_path / "token").write_text(TOKEN + "\n")
    cfg["users"][0]["user"] = {"tokenFile": str(tmp_path / "token")}
    kc.write_text(json.dumps(cfg))
    header, _ = load_live(str(kc), None, None)
    assert header["counts"]["nodes"] == 1


# -- 1. no credential in any message, --debug included ----------------------------------------------

def _hostile_kubeconfig(tmp_path: Path, server: str, token: str, *, key: bool = True) -> Path:
    user: dict = {"token": token}
    if key:
        pem = f"-----BEGIN PRIVATE KEY-----\n{KEY_MARK}{'A' * 40}\n-----END PRIVATE KEY-----\n"
        user["client-key-data"] = base64.b64encode(pem.encode()).decode()
        user["client-certificate-data"] = base64.b64encode(b"not a certificate").decode()
    cfg = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
           "clusters": [{"name": "c", "cluster": {"server": server}}],
           "users": [{"name": "c", "user": user}],
           "contexts": [{"name": "c", "context": {"cluster": "c", "user": "c"}}]}
    p = tmp_path / "kc"
    p.write_text(json.dumps(cfg))
    return p


def _assert_no_secret(r: subprocess.CompletedProcess[str], *secrets: str) -> None:
    out = r.stdout + r.stderr
    for s in secrets:
        assert s not in out, (s, out)
    encoded = base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
    assert encoded not in out


@pytest.mark.parametrize("debug", [False, True])
def test_error_paths_never_print_credentials(server: FakeApiServer, tmp_path: Path, debug: bool) -> None:
    dbg = ["--debug"] if debug else []
    cases: list[tuple[str, Path]] = []
    # a token with a line break inside (cannot be a header value: the old message printed it)
    d = tmp_path / "a"; d.mkdir()
    cases.append(("newline-inside", _hostile_kubeconfig(d, f"http://admin:{PASSWORD}@127.0.0.1:{server.port}", TOKEN[:8] + "\n" + TOKEN[8:], key=False)))
    # connection refused, URL with a password
    d = tmp_path / "b"; d.mkdir()
    cases.append(("refused", _hostile_kubeconfig(d, f"https://admin:{PASSWORD}@127.0.0.1:{free_port()}", TOKEN)))
    # wrong token: 401 (the message quotes the server's answer)
    d = tmp_path / "c"; d.mkdir()
    cases.append(("401", _hostile_kubeconfig(d, f"http://admin:{PASSWORD}@127.0.0.1:{server.port}", TOKEN + "x", key=False)))
    # a malformed kubeconfig whose junk sits next to the credentials
    d = tmp_path / "e"; d.mkdir()
    bad = _hostile_kubeconfig(d, f"https://admin:{PASSWORD}@h:1", TOKEN)
    cfg = json.loads(bad.read_text())
    cfg["users"][0]["user"]["exec"] = TOKEN  # not a map: the client's loader raises on it
    bad.write_text(json.dumps(cfg))
    cases.append(("malformed", bad))
    for name, kc in cases:
        for cmd in (["rank"], ["snapshot", "--output-file", str(tmp_path / "s.json")]):
            r = _run(*cmd, "--kubeconfig", str(kc), "--request-timeout", "5", *dbg)
            assert r.returncode == 2, (name, cmd, r.returncode, r.stderr)
            assert "error: " in r.stderr, (name, r.stderr)
            if not debug:
                assert len(r.stderr.splitlines()) == 1, (name, r.stderr)
            _assert_no_secret(r, TOKEN, TOKEN[:8] + "\n", TOKEN[8:], PASSWORD, KEY_MARK)


def test_snapshot_header_never_keeps_the_url_password(tmp_path: Path) -> None:
    # plain http and anonymous: client-go sends no credential to an http server (issue 31)
    with FakeApiServer([NODE], token=None, tls=False) as plain:
        kc = _hostile_kubeconfig(tmp_path, f"http://admin:{PASSWORD}@127.0.0.1:{plain.port}", TOKEN, key=False)
        header, _ = load_live(str(kc), None, None)
        assert header["server"]["url"] == f"http://127.0.0.1:{plain.port}"


# -- 3. kubeconfig shapes and --request-timeout -------------------------------------------------------

@pytest.mark.parametrize("text, match", [
    ("- a\n- b\n", "expected a map"),
    ("just a string\n", "expected a map"),
    ('{"users": "x"}', "users must be a list"),
    ('{"users": [{"name": "u", "user": "x"}]}', r"users\[0\] \(u\): user must be a map"),
    ('{"clusters": [{"cluster": {}}]}', r"clusters\[0\] must be a map with a string 'name'"),
    ("a: &x [*x]\n", "a YAML alias refers to a node that contains it"),
])
def test_malformed_kubeconfig_is_one_line(tmp_path: Path, text: str, match: str) -> None:
    kc = tmp_path / "kc"
    kc.write_text(text)
    with pytest.raises(ClusterAccessError, match=match):
        connect(str(kc), None)
    r = _run("rank", "--kubeconfig", str(kc))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "-inf", "1.5", "5x", "s", ""])
def test_request_timeout_must_be_kubectls_form(tmp_path: Path, value: str) -> None:
    # kubectl (client-go clientcmd ParseTimeout) refuses these with the same words; "0" is its
    # "no timeout" and is accepted (test_kubectl_flags.py)
    kc = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{free_port()}", "t")
    r = _run("rank", "--kubeconfig", str(kc), "--request-timeout", value)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"error: invalid --request-timeout {value!r}: Timeout must be a single integer in seconds"), r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_negative_request_timeout_is_refused(tmp_path: Path) -> None:
    # UPSTREAM-DIFF: kubectl takes "-1s" (a negative http.Client timeout means none); here it is refused
    kc = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{free_port()}", "t")
    r = _run("rank", "--kubeconfig", str(kc), "--request-timeout", "-1s")
    assert r.returncode == 2 and "cannot be negative" in r.stderr, r.stderr


# -- 4. bounds against hostile servers and plugins -------------------------------------------------------

def test_response_size_is_bounded(server: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readonly, "MAX_RESPONSE_BYTES", 64)
    kc = server.write_kubeconfig(tmp_path / "kc")
    with pytest.raises(ClusterAccessError, match=r"with more than 0 MiB in one response; refusing to read on"):
        load_live(str(kc), None, None)


def test_a_trickling_body_meets_the_whole_request_deadline(tmp_path: Path) -> None:
    """Headers at once, then one byte every 0.2 s: each read beats the socket timeout, the whole
    request must not."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
    with trickling_server(head, then=b" ") as port:
        kc = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}", "t")
        with pytest.raises(ClusterAccessError, match=r"timed out after 1s reading the answer to GET /version .* \(it sends too slowly\)"):
            load_live(str(kc), None, None, request_timeout=1)


def test_hanging_exec_plugin_is_stopped_at_the_deadline(server: FakeApiServer, tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_text("import time\ntime.sleep(60)\n")
    kc = server.write_kubeconfig(tmp_path / "kc")
    cfg = json.loads(kc.read_text())
    cfg["users"][0]["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                                        "args": [str(plugin)], "interactiveMode": "Never"}}
    kc.write_text(json.dumps(cfg))
    r = _run("rank", "--kubeconfig", str(kc), "--request-timeout", "1", timeout=40)
    assert r.returncode == 2, r.stderr
    assert "did not answer within 1s and was stopped" in r.stderr, r.stderr


# -- 7. one guarded transport; auth providers refused ------------------------------------------------------

def test_auth_provider_is_refused(server: FakeApiServer, tmp_path: Path) -> None:
    kc = server.write_kubeconfig(tmp_path / "kc")
    cfg = json.loads(kc.read_text())
    cfg["users"][0]["user"] = {"auth-provider": {"name": "oidc", "config": {
        "idp-issuer-url": f"http://127.0.0.1:{server.port}", "client-id": "x", "client-secret": PASSWORD,
        "refresh-token": TOKEN, "id-token": "a.b.c"}}}
    kc.write_text(json.dumps(cfg))
    with pytest.raises(ClusterAccessError, match=r"uses auth-provider oidc, which kubectl-wap does not support"):
        connect(str(kc), None)
    assert server.requests == []  # refused before anything is sent
    r = _run("rank", "--kubeconfig", str(kc), "--debug")
    _assert_no_secret(r, TOKEN, PASSWORD)


def test_every_client_in_the_process_is_get_only(server: FakeApiServer, tmp_path: Path) -> None:
    """Not only the ApiClient connect() built: a second ApiClient on a fresh Configuration, and
    plain urllib3, are refused too once kubectl-wap has connected."""
    from kubernetes import client as kclient
    import urllib3

    connect(str(server.write_kubeconfig(tmp_path / "kc")), None).close()
    cfg = kclient.Configuration()
    cfg.host = server.url
    cfg.verify_ssl = False
    other = kclient.ApiClient(configuration=cfg)
    with pytest.raises(ReadOnlyViolation):
        kclient.CoreV1Api(other).delete_namespace("a")
    with pytest.raises(ReadOnlyViolation):
        urllib3.PoolManager(cert_reqs="CERT_NONE").request("POST", server.url + "/api/v1/namespaces")
    assert server.methods() <= {"GET"}


# -- 4. live list bounds ----------------------------------------------------------------------------

class _LoopingServer(FakeApiServer):
    """Answers every node list with the same continue token."""

    def list_body(self, info, meta, page):  # type: ignore[no-untyped-def]
        body = super().list_body(info, meta, page)
        if info.plural == "nodes":
            from fake_apiserver import _encode_token

            body["metadata"]["continue"] = _encode_token({"plural": "nodes", "ns": None, "start": 0, "rv": self.resource_version})
        return body


class _WrongKindServer(FakeApiServer):
    def list_body(self, info, meta, page):  # type: ignore[no-untyped-def]
        body = super().list_body(info, meta, page)
        if info.plural == "pods":
            body = {"apiVersion": "v1", "kind": "SecretList", "metadata": {},
                    "items": [{"metadata": {"name": "s"}, "data": {"k": "c2VjcmV0"}}]}
        return body


def test_repeated_continue_token_is_detected(tmp_path: Path) -> None:
    with _LoopingServer([NODE], token=TOKEN, tls=True) as srv:
        with pytest.raises(ClusterAccessError, match=r"sent the same continue token twice while listing nodes \(page 2\)"):
            load_live(str(srv.write_kubeconfig(tmp_path / "kc")), None, None)
        assert len([r for r in srv.requests if r.path == "/api/v1/nodes"]) == 2


class _LongTokenServer(FakeApiServer):
    """Answers the node list with a 100 KiB continue token (issue 31: unique 1 MiB tokens grew memory)."""

    def list_body(self, info, meta, page):  # type: ignore[no-untyped-def]
        body = super().list_body(info, meta, page)
        if info.plural == "nodes":
            body["metadata"]["continue"] = "x" * (100 << 10)
        return body


def test_continue_token_length_is_bounded(tmp_path: Path) -> None:
    with _LongTokenServer([NODE], token=TOKEN, tls=True) as srv:
        with pytest.raises(ClusterAccessError, match=r"sent a continue token of 102,400 bytes while listing nodes \(more than 65,536\)"):
            load_live(str(srv.write_kubeconfig(tmp_path / "kc")), None, None)
        assert len([r for r in srv.requests if r.path == "/api/v1/nodes"]) == 1  # never sent back


def test_page_count_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kubectl_wap.snapshot.io import live

    monkeypatch.setattr(live, "PAGE_LIMIT", 1)
    monkeypatch.setattr(live, "MAX_PAGES", 2)
    nodes = [dict(NODE, metadata={"name": f"n{i}"}) for i in range(3)]
    with FakeApiServer(nodes, token=TOKEN, tls=True) as srv:
        with pytest.raises(ClusterAccessError, match=r"listing nodes at the cluster scope took more than 2 pages of 1"):
            load_live(str(srv.write_kubeconfig(tmp_path / "kc")), None, None)


def test_a_200_that_is_not_the_list_asked_for_is_refused(tmp_path: Path) -> None:
    with _WrongKindServer([NODE], token=TOKEN, tls=True) as srv:
        with pytest.raises(ClusterAccessError, match=r"answered GET /api/v1/pods with a SecretList, not a PodList"):
            load_live(str(srv.write_kubeconfig(tmp_path / "kc")), None, None)


def test_redact_key_file_must_be_a_regular_file(server: FakeApiServer, tmp_path: Path) -> None:
    kc = server.write_kubeconfig(tmp_path / "kc")
    r = _run("snapshot", "--output-file", str(tmp_path / "s.json"), "--redact", "--redact-key-file", "/dev/zero",
             "--kubeconfig", str(kc), timeout=30)
    assert r.returncode == 2 and "/dev/zero: is a device; give a regular file" in r.stderr, r.stderr
