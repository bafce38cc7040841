"""Issue 31 item 2: credentials go only where client-go sends them.

clientcmd (client-go tools/clientcmd/client_config.go DirectClientConfig.ClientConfig) reads the
user's identification (token, tokenFile, basic auth, client certificate, exec plugin) only
`if restclient.IsConfigTransportTLS(*clientConfig)`, i.e. when the server URL's scheme is https
(rest/config.go IsConfigTransportTLS; a server without a scheme is http there, rest/url_utils.go
DefaultServerURL with no CA yet). And an exec plugin that fails fails the request before it is sent
(plugin/pkg/client/auth/exec/exec.go roundTripper.RoundTrip: "getting credentials: ..."), with the
installHint when the executable is not found (wrapCmdRunErrorLocked)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_apiserver import FakeApiServer, tls_available  # noqa: E402

from kubectl_wap.errors import ClusterAccessError  # noqa: E402
from kubectl_wap.snapshot.io.live import load_live  # noqa: E402

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
TOKEN = "tok-Qm4rT8-DISTINCT"

needs_tls = pytest.mark.skipif(not tls_available(), reason="openssl is needed for the TLS server")


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    exe = str(Path(sys.executable).with_name("kubectl-wap"))
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout, errors="replace",
                          env={**os.environ, "NO_COLOR": "1"})


def _user(kc: Path, user: dict) -> Path:
    cfg = json.loads(kc.read_text())
    cfg["users"][0]["user"] = user
    kc.write_text(json.dumps(cfg))
    return kc


def _exec(tmp_path: Path, script: str, **extra: object) -> dict:
    plugin = tmp_path / "plugin.py"
    plugin.write_text(script)
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable, "args": [str(plugin)],
                     "interactiveMode": "Never", **extra}}


@pytest.fixture
def plain() -> Iterator[FakeApiServer]:
    with FakeApiServer([NODE], token=None, tls=False) as srv:  # anonymous reads allowed
        yield srv


@pytest.fixture
def secure() -> Iterator[FakeApiServer]:
    if not tls_available():
        pytest.skip("openssl is needed for the TLS server")
    with FakeApiServer([NODE], token=TOKEN, tls=True) as srv:
        yield srv


def _authorized(srv: FakeApiServer) -> list[str]:
    return [r.path for r in srv.requests if any(k.lower() == "authorization" for k in r.headers)]


def test_no_token_over_plain_http(plain: FakeApiServer, tmp_path: Path) -> None:
    kc = plain.write_kubeconfig(tmp_path / "kc", token=TOKEN)
    header, _ = load_live(str(kc), None, None)
    assert header["counts"]["nodes"] == 1
    assert plain.requests and _authorized(plain) == [], "a bearer token went over plain http"


@pytest.mark.parametrize("user", ["tokenFile", "basic", "exec"])
def test_no_credential_of_any_kind_is_read_or_sent_for_plain_http(plain: FakeApiServer, tmp_path: Path, user: str) -> None:
    kc = plain.write_kubeconfig(tmp_path / "kc")
    marker = tmp_path / "plugin-ran"
    if user == "tokenFile":
        fifo = tmp_path / "token"
        os.mkfifo(fifo)  # read, it would block forever: client-go never opens it for http
        _user(kc, {"tokenFile": str(fifo)})
    elif user == "basic":
        _user(kc, {"username": "admin", "password": "pw-DISTINCT"})
    else:
        _user(kc, _exec(tmp_path, f"open({str(marker)!r}, 'w').close()\nimport sys\nsys.exit(1)\n"))
    r = _run("rank", "--kubeconfig", str(kc), "--request-timeout", "10", timeout=40)
    assert r.returncode == 0, r.stderr
    assert _authorized(plain) == []
    assert not marker.exists(), "the credential plugin ran for a plain-http server"


def test_server_without_scheme_is_plain_http_too(plain: FakeApiServer, tmp_path: Path) -> None:
    kc = plain.write_kubeconfig(tmp_path / "kc", token=TOKEN)
    cfg = json.loads(kc.read_text())
    cfg["clusters"][0]["cluster"]["server"] = f"127.0.0.1:{plain.port}"
    kc.write_text(json.dumps(cfg))
    try:
        load_live(str(kc), None, None, request_timeout=5)
    except ClusterAccessError:
        pass  # whether the client can reach a scheme-less URL at all is not the point here
    assert _authorized(plain) == []


@needs_tls
def test_token_goes_over_https(secure: FakeApiServer, tmp_path: Path) -> None:
    header, _ = load_live(str(secure.write_kubeconfig(tmp_path / "kc")), None, None)
    assert header["counts"]["nodes"] == 1 and _authorized(secure)


@needs_tls
def test_failing_plugin_fails_before_any_request_with_its_message(secure: FakeApiServer, tmp_path: Path) -> None:
    kc = _user(secure.write_kubeconfig(tmp_path / "kc"),
               _exec(tmp_path, "import sys\nsys.stderr.write('login required: run sso-login\\n')\nsys.exit(3)\n"))
    r = _run("rank", "--kubeconfig", str(kc), "--request-timeout", "10", timeout=40)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.splitlines()) == 1 and "login required: run sso-login" in r.stderr, r.stderr
    assert secure.requests == [], "requests went out without the plugin's credentials"


@needs_tls
def test_missing_plugin_says_its_install_hint(secure: FakeApiServer, tmp_path: Path) -> None:
    kc = _user(secure.write_kubeconfig(tmp_path / "kc"), {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": "kubelogin-not-installed-DISTINCT",
        "installHint": "Install kubelogin:\n  brew install int128/kubelogin/kubelogin", "interactiveMode": "Never"}})
    r = _run("rank", "--kubeconfig", str(kc), "--request-timeout", "10", timeout=40)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert "executable kubelogin-not-installed-DISTINCT not found" in r.stderr, r.stderr
    assert "Install kubelogin:" in r.stderr and "brew install int128/kubelogin/kubelogin" in r.stderr, r.stderr
    assert secure.requests == []
