"""Issue 31 item 4: deadlines that hold, against loopback servers and hostile kubeconfigs.

- one deadline per request covering connect, TLS, headers and body (a server that trickles its
  response headers one byte at a time beat the per-read socket timeout before);
- a credential plugin runs in its own process group, killed as a group at the deadline (a child
  that kept stdout open held the command long after the timeout);
- every file the kubeconfig names for the chosen context (tokenFile, certificate-authority,
  client-certificate, client-key) must be a regular file of bounded size before anything reads it
  (a FIFO hung forever, /dev/zero read until memory ran out)."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_apiserver import FakeApiServer, tls_available, trickling_server, write_kubeconfig  # noqa: E402

from kubectl_wap.errors import ClusterAccessError  # noqa: E402
from kubectl_wap.snapshot.io.live import load_live  # noqa: E402

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _run(*args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], float]:
    exe = str(Path(sys.executable).with_name("kubectl-wap"))
    t0 = time.monotonic()
    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout, errors="replace",
                       env={**os.environ, "NO_COLOR": "1"})
    return r, time.monotonic() - t0


@pytest.fixture
def trickling_headers() -> Iterator[int]:
    """The status line and headers one byte every 0.2 s: they never end within 60 s."""
    with trickling_server(b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000) as port:
        yield port


def test_trickling_headers_meet_the_request_deadline(trickling_headers: int, tmp_path: Path) -> None:
    kc = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{trickling_headers}")
    t0 = time.monotonic()
    with pytest.raises(ClusterAccessError, match=r"timed out after 2s"):
        load_live(str(kc), None, None, request_timeout=2)
    assert time.monotonic() - t0 < 15  # one request's deadline (retries are not taken for a timeout)


def test_plugin_whose_child_keeps_stdout_open_is_killed_as_a_group(tmp_path: Path) -> None:
    if not tls_available():
        pytest.skip("openssl is needed for the TLS server")
    plugin = tmp_path / "plugin.py"
    pidfile = tmp_path / "child.pid"
    # The plugin starts a child that inherits stdout and sleeps; the plugin itself then hangs too.
    plugin.write_text(
        "import subprocess, sys, time\n"
        f"c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(c.pid))\n"
        "time.sleep(60)\n")
    with FakeApiServer([NODE], token="t", tls=True) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kc")
        cfg = json.loads(kc.read_text())
        cfg["users"][0]["user"] = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                                            "args": [str(plugin)], "interactiveMode": "Never"}}
        kc.write_text(json.dumps(cfg))
        r, took = _run("rank", "--kubeconfig", str(kc), "--request-timeout", "2", timeout=90)
    assert r.returncode == 2 and "did not answer within 2s and was stopped" in r.stderr, r.stderr
    assert took < 15, f"the command took {took:.1f}s for a 2s plugin deadline"
    child = int(pidfile.read_text())
    time.sleep(0.2)
    assert _gone(child), "the plugin's child outlived its group"


def _gone(pid: int) -> bool:
    """No such process, or a zombie (killed; reaping it is its new parent's business)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


@pytest.mark.parametrize("field, where", [
    ("tokenFile", "user"), ("client-key", "user"), ("client-certificate", "user"), ("certificate-authority", "cluster"),
])
@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_kubeconfig_files_must_be_regular_and_bounded(tmp_path: Path, field: str, where: str, special: str) -> None:
    if special == "fifo":
        path = tmp_path / "special"
        os.mkfifo(path)
    else:
        path = Path(special)
    kc = write_kubeconfig(tmp_path / "kc", "https://127.0.0.1:1")
    cfg = json.loads(kc.read_text())
    entry = cfg["users"][0]["user"] if where == "user" else cfg["clusters"][0]["cluster"]
    entry[field] = str(path)
    if field == "client-key":
        cfg["users"][0]["user"]["client-certificate-data"] = "eA=="
    kc.write_text(json.dumps(cfg))
    r, took = _run("rank", "--kubeconfig", str(kc), "--request-timeout", "2", timeout=60)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert field in r.stderr and "regular file" in r.stderr, r.stderr
    assert took < 20


def test_kubeconfig_file_size_is_bounded(tmp_path: Path) -> None:
    big = tmp_path / "token"
    with open(big, "wb") as f:
        f.truncate(64 << 20)  # sparse: 64 MiB the loader would read whole
    kc = write_kubeconfig(tmp_path / "kc", "https://127.0.0.1:1")
    cfg = json.loads(kc.read_text())
    cfg["users"][0]["user"] = {"tokenFile": str(big)}
    kc.write_text(json.dumps(cfg))
    r, _ = _run("rank", "--kubeconfig", str(kc), "--request-timeout", "2")
    assert r.returncode == 2 and "tokenFile" in r.stderr and "larger than" in r.stderr, r.stderr


# -- one deadline for the whole capture ------------------------------------------------------------

class _SlowPagesServer(FakeApiServer):
    """Answers every page of the pod list in time for --request-timeout (0.3 s each), one pod a
    page: each request meets its own deadline, so only a bound on the whole capture ends it."""

    def list_body(self, info, meta, page):  # type: ignore[no-untyped-def]
        if info.plural == "pods":
            time.sleep(0.3)
        return super().list_body(info, meta, page)


def test_the_whole_capture_has_one_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """40 pages of 0.3 s each take 12 s; a capture bound of 2 s stops the list part-way, with one
    line naming the resource being read (before: every page was read, however long it took)."""
    from kubectl_wap.snapshot.io import live

    monkeypatch.setattr(live, "PAGE_LIMIT", 1)
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "a"},
             "spec": {"nodeName": "n1", "containers": [{"name": "c"}]}} for i in range(40)]
    with _SlowPagesServer([NODE, *pods], token="t", tls=tls_available()) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kc")
        with pytest.raises(ClusterAccessError) as err:
            load_live(str(kc), None, None, request_timeout=5, capture_timeout=2)
        pages = len([r for r in srv.requests if r.path == "/api/v1/pods"])
    msg = str(err.value)
    assert "\n" not in msg
    assert re.search(r"the live capture did not finish within 2s: it was still listing pods at the cluster scope "
                     r"\(\d+ read\)", msg), msg
    assert "raise --request-timeout" in msg
    assert pages < 40, pages


def test_the_capture_deadline_cuts_a_request_short(tmp_path: Path) -> None:
    """A request that would meet --request-timeout (20 s) only after the capture's bound (2 s) is
    cut at the bound, and the error is the capture's (it names what was being read)."""
    with trickling_server(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", then=b" ") as port:
        kc = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")
        with pytest.raises(ClusterAccessError, match=r"did not finish within 2s: it was still reading the server's "
                                                     r"version and API discovery"):
            load_live(str(kc), None, None, request_timeout=20, capture_timeout=2)


@pytest.mark.parametrize("request_timeout, total", [(30, 600), (2, 600), (60, 1200), (0.5, 600)])
def test_capture_timeout_is_derived_from_the_request_timeout(request_timeout: float, total: float) -> None:
    from kubectl_wap.snapshot.io.live import capture_timeout_for

    assert capture_timeout_for(request_timeout) == total


def test_request_timeout_zero_waits_as_long_as_it_takes(tmp_path: Path) -> None:
    """kubectl's `--request-timeout 0` is no timeout: no per-request bound and, since the user asked
    to wait, no whole-capture bound either (the two rules met in one merge: a float compared with
    None raised TypeError on every timed-out request)."""
    from kubectl_wap.snapshot.io.live import capture_timeout_for
    from kubectl_wap.snapshot.io.readonly import ReadOnlyClient

    assert capture_timeout_for(None) is None

    class _Cfg:
        host = "https://127.0.0.1:1"

    class _Api:
        configuration = _Cfg()

    client = ReadOnlyClient(_Api(), "0")
    assert client.timeout is None and client._budget("/api/v1/pods") is None
    client.deadline = time.monotonic() + 5.0
    left = client._budget("/api/v1/pods")
    assert left is not None and 0 < left <= 5.0 and client._cut_by_capture(left)
    with FakeApiServer([]) as srv:
        header, _ = load_live(str(srv.write_kubeconfig(tmp_path / "kc")), None, None, "0")
    assert "nodes" in header["listed"]
