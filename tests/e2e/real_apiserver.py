"""A real kube-apiserver (Debian's 1.20.2 build) plus etcd on loopback ports, for the e2e tier.

The binaries come from tests/e2e/build_apiserver.sh (cached under $KUBECTL_WAP_E2E_CACHE, default
/var/cache/kubectl-wap-e2e/bin). The tier only runs with KUBECTL_WAP_E2E=1 (tests/e2e/run.sh sets it);
then a missing binary or a server that does not come up is a failure, never a skip.

Server set-up follows shared/docs/real-apiserver.md: static tokens (--token-auth-file), RBAC,
scheduling.k8s.io/v1 and v1beta1 turned off so that PriorityClasses (v1), PodGroups (v1beta1) and
CompositePodGroups (v1alpha3) are served at their real paths by CRDs; Priority and ServiceAccount
admission off (fixtures set spec.priority themselves). An audit log records every request so tests
can check that kubectl-wap only ever reads.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
ENABLED = os.environ.get("KUBECTL_WAP_E2E") == "1"
CACHE = Path(os.environ.get("KUBECTL_WAP_E2E_CACHE", "/var/cache/kubectl-wap-e2e"))

# token,user,uid,"groups" -- users for the RBAC checks (see test_real_apiserver.py).
TOKENS = {
    "admin": ("e2e-admin-token", "system:masters"),
    "reader": ("e2e-reader-token", "kubectl-wap-users"),  # bound by deploy/rbac-readonly.yaml
    "nopdb": ("e2e-nopdb-token", "kubectl-wap-nopdb"),  # reader rules minus poddisruptionbudgets
    "nopods": ("e2e-nopods-token", "kubectl-wap-nopods"),  # reader rules minus pods
}

SKIP_REASON = (
    "real kube-apiserver e2e tier: set KUBECTL_WAP_E2E=1 (bash tests/e2e/run.sh builds the server "
    "and runs it); the default test command does not start servers"
)


def tool(name: str) -> str:
    """A console script of this virtualenv (kubectl-wap, kubectl), else one on PATH."""
    local = Path(sys.executable).parent / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if not found:
        pytest.fail(f"{name} not found next to {sys.executable} nor on PATH (pip install -e '.[test]')")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    url: str
    workdir: Path
    ca_pem: bytes
    kubeconfigs: dict[str, Path]
    audit_log: Path
    procs: list[subprocess.Popen] = field(default_factory=list)

    # -- talking to the server as admin ----------------------------------------------------------
    def kubectl(self, *args: str, user: str = "admin", stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        cmd = [tool("kubectl"), "--kubeconfig", str(self.kubeconfigs[user]), *args]
        res = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120)
        if check and res.returncode != 0:
            raise AssertionError(f"{' '.join(cmd[1:])} failed ({res.returncode}): {res.stderr.strip()}")
        return res

    def apply(self, objs: list[dict], *extra: str) -> None:
        doc = json.dumps({"apiVersion": "v1", "kind": "List", "items": objs})
        # --validate=false: kubectl 1.37 would check fields against the 1.20 server's OpenAPI
        # (spec.schedulingGroup is not in it) -- the server then drops what it does not know.
        self.kubectl("create", "--validate=false", "-f", "-", *extra, stdin=doc)

    def request(self, method: str, path: str, body: dict | None = None, user: str = "admin",
                content_type: str = "application/json") -> tuple[int, dict]:
        ctx = ssl.create_default_context(cadata=self.ca_pem.decode())
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {TOKENS[user][0]}")
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=30) as resp:
                return resp.status, _json(resp.read())
        except urllib.error.HTTPError as e:
            return e.code, _json(e.read())

    def audit_events(self) -> list[dict]:
        out = []
        for line in self.audit_log.read_text().splitlines():
            if line.strip():
                out.append(json.loads(line))
        return out

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
        self.procs.clear()


def _json(body: bytes) -> dict:
    try:
        doc = json.loads(body or b"{}")
    except ValueError:  # /readyz answers "ok"
        return {"text": body.decode(errors="replace")}
    return doc if isinstance(doc, dict) else {"value": doc}


def _run(cmd: list[str], **kw) -> None:
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)
    if res.returncode != 0:
        pytest.fail(f"{cmd[0]} failed: {res.stderr.strip()[:500]}")


def _certs(d: Path) -> None:
    """A self-signed serving certificate for 127.0.0.1 and a service-account key pair."""
    _run([
        "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", str(d / "serving.key"), "-out", str(d / "serving.crt"), "-days", "2",
        "-subj", "/CN=kube-apiserver-e2e", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,digitalSignature,keyCertSign",
    ])
    _run(["openssl", "genrsa", "-out", str(d / "sa.key"), "2048"])
    _run(["openssl", "rsa", "-in", str(d / "sa.key"), "-pubout", "-out", str(d / "sa.pub")])


def write_kubeconfig(path: Path, url: str, token: str, ca_pem: bytes) -> Path:
    import base64

    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": {"server": url, "certificate-authority-data": base64.b64encode(ca_pem).decode()}}],
        "users": [{"name": "e2e", "user": {"token": token}}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "e2e"}}],
        "current-context": "e2e",
    }
    path.write_text(json.dumps(cfg, indent=1))
    return path


def _wait_ready(cluster: Cluster, proc: subprocess.Popen, log: Path, deadline_s: float = 120.0) -> None:
    end = time.monotonic() + deadline_s
    last = ""
    while time.monotonic() < end:
        if proc.poll() is not None:
            pytest.fail(f"kube-apiserver exited with {proc.returncode}; log tail: {_tail(log)}")
        try:
            status, _ = cluster.request("GET", "/readyz")
            if status == 200:
                return
            last = f"HTTP {status}"
        except (OSError, ssl.SSLError) as e:
            last = str(e)
        time.sleep(0.3)
    pytest.fail(f"kube-apiserver not ready after {deadline_s:g}s ({last}); log tail: {_tail(log)}")


def _tail(path: Path, n: int = 8) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


CRDS = [
    # (group, version, plural, singular, kind, scope)
    ("scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", "Cluster"),
    ("scheduling.k8s.io", "v1beta1", "podgroups", "podgroup", "PodGroup", "Namespaced"),
    ("scheduling.k8s.io", "v1alpha3", "compositepodgroups", "compositepodgroup", "CompositePodGroup", "Namespaced"),
]


def crd(group: str, version: str, plural: str, singular: str, kind: str, scope: str) -> dict:
    # PriorityClass keeps value/globalDefault/preemptionPolicy at the top level, like the real type.
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"{plural}.{group}",
            # CRDs in *.k8s.io groups need this annotation (API approval) since 1.16.
            "annotations": {"api-approved.kubernetes.io": "https://github.com/kubernetes/enhancements/pull/1111"},
        },
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "singular": singular, "kind": kind, "listKind": f"{kind}List"},
            "versions": [{"name": version, "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    if not ENABLED:
        pytest.skip(SKIP_REASON)
    apiserver, etcd = CACHE / "bin" / "kube-apiserver", CACHE / "bin" / "etcd"
    for b in (apiserver, etcd):
        if not os.access(b, os.X_OK):
            pytest.fail(f"{b} missing: run bash tests/e2e/build_apiserver.sh first (tests/e2e/run.sh does)")
    if not shutil.which("openssl"):
        pytest.fail("openssl not found: the e2e tier needs it for the serving certificate")
    d = tmp_path_factory.mktemp("apiserver")
    _certs(d)
    (d / "tokens.csv").write_text(
        "".join(f'{tok},{user},{i},"{group}"\n' for i, (user, (tok, group)) in enumerate(TOKENS.items(), 1))
    )
    (d / "audit-policy.yaml").write_text(
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n"
    )
    etcd_port, etcd_peer, api_port = free_port(), free_port(), free_port()
    url = f"https://127.0.0.1:{api_port}"
    ca_pem = (d / "serving.crt").read_bytes()
    kubeconfigs = {u: write_kubeconfig(d / f"kubeconfig-{u}", url, tok, ca_pem) for u, (tok, _) in TOKENS.items()}
    c = Cluster(url=url, workdir=d, ca_pem=ca_pem, kubeconfigs=kubeconfigs, audit_log=d / "audit.log")
    etcd_log, api_log = open(d / "etcd.log", "w"), open(d / "apiserver.log", "w")
    try:
        c.procs.append(subprocess.Popen(
            [str(etcd), "--name", "e2e", "--data-dir", str(d / "etcd"),
             "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
             "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
             "--listen-peer-urls", f"http://127.0.0.1:{etcd_peer}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{etcd_peer}",
             "--initial-cluster", f"e2e=http://127.0.0.1:{etcd_peer}",
             "--listen-metrics-urls", "", "--log-level", "warn"],
            stdout=etcd_log, stderr=subprocess.STDOUT,
        ))
        c.procs.append(subprocess.Popen(
            [str(apiserver),
             f"--etcd-servers=http://127.0.0.1:{etcd_port}",
             "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
             f"--secure-port={api_port}", "--insecure-port=0",
             f"--tls-cert-file={d / 'serving.crt'}", f"--tls-private-key-file={d / 'serving.key'}",
             f"--cert-dir={d / 'certs'}",
             f"--token-auth-file={d / 'tokens.csv'}",
             "--authorization-mode=RBAC",
             f"--service-account-key-file={d / 'sa.pub'}",
             f"--service-account-signing-key-file={d / 'sa.key'}",
             "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
             "--service-cluster-ip-range=10.0.0.0/24",
             "--runtime-config=scheduling.k8s.io/v1=false,scheduling.k8s.io/v1beta1=false",
             "--disable-admission-plugins=ServiceAccount,Priority",
             f"--audit-policy-file={d / 'audit-policy.yaml'}", f"--audit-log-path={c.audit_log}",
             "--audit-log-mode=blocking",
             "--v=1"],
            stdout=api_log, stderr=subprocess.STDOUT,
        ))
        _wait_ready(c, c.procs[-1], d / "apiserver.log")
        c.apply([crd(*spec) for spec in CRDS])
        c.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                  *[f"crd/{plural}.{group}" for group, _, plural, *_ in CRDS])
        yield c
    finally:
        c.stop()
        etcd_log.close()
        api_log.close()
