"""A real kube-apiserver v1.37.2 (with embedded etcd) on a loopback port, for the e2e tier.

The server is the oracle's (tests/oracle/, `TestServe` in serve_test.go): kube-apiserver of
k8s.io/kubernetes v1.37.2 from the same Go module and binary (tests/oracle/bin/oracle.test, built by
`python -m tests.oracle build`, which this fixture also calls: a no-op when the binary is fresh),
run with `-test.run ^TestServe$ -oracle.serve DIR` and no scheduler. It serves PodGroups
(`scheduling.k8s.io/v1beta1`) and CompositePodGroups (`v1alpha3`) natively, with the gates our
CLI assumes (tests.oracle.driver.DEFAULT_GATES). The tier only runs with KUBECTL_WAP_E2E=1
(tests/e2e/run.sh sets it); then a binary that cannot be built or a server that does not come up is
a failure, never a skip.

Server set-up: static token users (--token-auth-file), authorization Node,RBAC (upstream's test
server default), admission as a real cluster has it but ServiceAccount (no controller-manager makes
the default ServiceAccount), so Priority admission resolves spec.priority of pods and groups. An
audit log (Metadata level, blocking) records every request so tests can check that kubectl-wap only
ever reads.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
ENABLED = os.environ.get("KUBECTL_WAP_E2E") == "1"

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
AUDIT_POLICY = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n"


def tool(name: str) -> str:
    """A console script of this virtualenv (kubectl-wap, kubectl), else one on PATH."""
    local = Path(sys.executable).parent / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if not found:
        pytest.fail(f"{name} not found next to {sys.executable} nor on PATH (pip install -e '.[test]')")
    return found


@dataclass
class Cluster:
    url: str
    workdir: Path
    ca_pem: bytes
    kubeconfigs: dict[str, Path]
    audit_log: Path
    version: str = ""
    proc: subprocess.Popen | None = None

    # -- talking to the server as admin ----------------------------------------------------------
    def kubectl(self, *args: str, user: str = "admin", stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        cmd = [tool("kubectl"), "--kubeconfig", str(self.kubeconfigs[user]), *args]
        res = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120)
        if check and res.returncode != 0:
            raise AssertionError(f"{' '.join(cmd[1:])} failed ({res.returncode}): {res.stderr.strip()}")
        return res

    def apply(self, objs: list[dict], *extra: str) -> None:
        doc = json.dumps({"apiVersion": "v1", "kind": "List", "items": objs})
        # Strict field validation against the v1.37 server's OpenAPI: a fixture typo fails here.
        self.kubectl("create", "--validate=strict", "-f", "-", *extra, stdin=doc)

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
        """Close the server's stdin (TestServe stops on EOF), then SIGTERM, then kill."""
        p, self.proc = self.proc, None
        if p is None or p.poll() is not None:
            return
        if p.stdin:
            p.stdin.close()
        for step in (lambda: None, p.terminate, p.kill):
            step()
            try:
                p.wait(timeout=20)
                return
            except subprocess.TimeoutExpired:
                continue


def ready_nodes(c: Cluster, names: tuple[str, ...], cpu: str = "4") -> None:
    """Create Ready nodes of `cpu` cpu, 16Gi, 110 pods, labelled with their hostname."""
    c.apply([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}}} for n in names])
    res = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    for n in names:
        # A Node's status is ignored on create; set it through the status subresource, as a kubelet would.
        status = {"status": {"capacity": res, "allocatable": res,
                             "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                             "lastHeartbeatTime": "2026-11-30T00:00:00Z",
                                             "lastTransitionTime": "2026-11-30T00:00:00Z"}]}}
        c.kubectl("patch", "node", n, "--subresource=status", "--type=merge", "-p", json.dumps(status))
    # The TaintNodesByCondition admission plugin taints every new Node not-ready:NoSchedule; without a
    # node lifecycle controller nobody lifts it once the node is Ready, so do what it would do.
    nodes = json.loads(c.kubectl("get", "nodes", "-o", "json").stdout)["items"]
    assert all({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"} in n["spec"].get("taints", []) for n in nodes)
    c.kubectl("taint", "nodes", "--all", "node.kubernetes.io/not-ready:NoSchedule-")


def _json(body: bytes) -> dict:
    try:
        doc = json.loads(body or b"{}")
    except ValueError:  # /readyz answers "ok"
        return {"text": body.decode(errors="replace")}
    return doc if isinstance(doc, dict) else {"value": doc}


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


def _start(binary: Path, gates: str, d: Path, attempt: int, deadline_s: float = 180.0,
           runtime_config: str = "") -> tuple[subprocess.Popen, dict] | str:
    """Start TestServe; its server.json (url, gitVersion) appears once the apiserver answers.
    Returns the process and server.json, or why it did not come up (the process is gone then)."""
    serve, log_path = d / f"serve-{attempt}", d / f"apiserver-{attempt}.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [str(binary), "-test.run", "^TestServe$", "-test.timeout", "0",
             f"-oracle.serve={serve}", f"-oracle.feature-gates={gates}",
             f"-oracle.token-auth-file={d / 'tokens.csv'}",
             f"-oracle.audit-policy-file={d / 'audit-policy.yaml'}", f"-oracle.audit-log={d / 'audit.log'}",
             f"-oracle.log={d / f'klog-{attempt}.log'}", f"-oracle.runtime-config={runtime_config}"],
            stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, cwd=d,
        )
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if (serve / "server.json").exists():
            return proc, json.loads((serve / "server.json").read_text())
        if proc.poll() is not None:
            return f"exited with {proc.returncode}; log tail: {_tail(log_path)}"
        time.sleep(0.2)
    proc.kill()
    proc.wait()
    return f"not serving after {deadline_s:g}s; log tail: {_tail(log_path)}"


def _tail(path: Path, n: int = 8) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    """kube-apiserver v1.37.2 (PodGroups at v1beta1, CompositePodGroups at v1alpha3)."""
    yield from _cluster(tmp_path_factory, "1.37")


@pytest.fixture(scope="session")
def cluster138(tmp_path_factory: pytest.TempPathFactory):
    """kube-apiserver v1.38.0-beta.0 with alpha APIs off (scheduling.k8s.io/v1alpha3=false):
    PodGroups and CompositePodGroups served at v1beta1 only, as a production 1.38 cluster has them."""
    yield from _cluster(tmp_path_factory, "1.38", "scheduling.k8s.io/v1alpha3=false")


def _cluster(tmp_path_factory: pytest.TempPathFactory, version: str, runtime_config: str = ""):
    if not ENABLED:
        pytest.skip(SKIP_REASON)
    sys.path.insert(0, str(REPO))
    from tests.oracle.driver import GATES_BY_VERSION, OracleError, build

    try:
        binary = build(quiet=False, version=version)  # nothing to do when tests/e2e/run.sh has just built it
    except OracleError as e:
        pytest.fail(f"could not build the {version} oracle binary that serves kube-apiserver: {e}")
    d = tmp_path_factory.mktemp(f"apiserver-{version}")
    (d / "tokens.csv").write_text(
        "".join(f'{tok},{user},{i},"{group}"\n' for i, (user, (tok, group)) in enumerate(TOKENS.items(), 1))
    )
    (d / "audit-policy.yaml").write_text(AUDIT_POLICY)
    # Upstream's StartTestServer gives the apiserver 10 s to become healthy (a hard-coded poll) and
    # fails the test otherwise; on a loaded 2-core machine start-up takes 7-10 s, so try again.
    failures = []
    for attempt in range(1, 4):
        started = _start(binary, GATES_BY_VERSION[version], d, attempt, runtime_config=runtime_config)
        if not isinstance(started, str):
            break
        failures.append(f"attempt {attempt}: {started}")
        print(f"e2e: kube-apiserver (oracle.test TestServe) {failures[-1]}; trying again", file=sys.__stderr__)  # not captured
    else:
        pytest.fail("kube-apiserver (oracle.test TestServe) did not come up: " + " || ".join(failures))
    proc, info = started
    c = Cluster(url=info["url"], workdir=d, ca_pem=(d / f"serve-{attempt}" / "ca.crt").read_bytes(), kubeconfigs={},
                audit_log=d / "audit.log", version=info["gitVersion"], proc=proc)
    try:
        c.kubeconfigs = {u: write_kubeconfig(d / f"kubeconfig-{u}", c.url, tok, c.ca_pem) for u, (tok, _) in TOKENS.items()}
        yield c
    finally:
        c.stop()
