"""`kubectl wap demo load` (issue 33 item 6): the one command that writes. Refuses without --yes
(and sends nothing), creates only the demo's objects and only in the demo's namespaces, never
into a namespace someone else made, leaves existing objects alone; and no other module of
kubectl_wap can write."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fake_apiserver import FakeApiServer
from kubectl_wap.errors import UserError
from kubectl_wap.snapshot.io.demoload import DEMO_LABEL, Write, check_scope, plan
from kubectl_wap.snapshot.io.files import DEMO_PATH

ROOT = Path(__file__).resolve().parent.parent
WAP = str(Path(sys.executable).parent / "kubectl-wap")
DEMO_NS = {"batch", "inference", "ml", "research"}


def _demo_items() -> list[dict]:
    return json.loads(DEMO_PATH.read_text())["items"]


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([WAP, *args], capture_output=True, text=True, timeout=timeout)


def test_without_yes_it_says_what_it_would_create_and_sends_nothing(tmp_path: Path) -> None:
    with FakeApiServer([], writable=True) as srv:
        r = _run("demo", "load", "--kubeconfig", str(srv.write_kubeconfig(tmp_path / "kc")))
        assert srv.requests == []  # not even a GET
        url = srv.url
    assert r.returncode == 2
    assert r.stderr.strip() == "error: nothing created: pass --yes to create these objects"
    assert f"Would create in {url}:" in r.stdout
    assert "  161 Pods: " in r.stdout and "  4 Namespaces: batch, inference, ml, research" in r.stdout
    assert "  5 PriorityClasses: batch-default, high-priority, inference-critical, low-priority, training-never" in r.stdout  # was PriorityClasss


def test_yes_creates_the_demo_in_its_namespaces_only(tmp_path: Path) -> None:
    with FakeApiServer([], writable=True) as srv:
        r = _run("demo", "load", "--yes", "--kubeconfig", str(srv.write_kubeconfig(tmp_path / "kc")))
        created = list(srv.created)
        methods = srv.methods()
    assert r.returncode == 0, r.stderr
    assert methods == {"GET", "POST"}
    items = _demo_items()
    assert len(created) == len(items) == 205
    for path, body in created:
        m = re.fullmatch(r"/apis?(?:/[^/]+)+?(?:/namespaces/([^/]+))?/([a-z]+)", path)
        assert m, path
        ns, plural = m.groups()
        if plural in ("namespaces", "nodes", "priorityclasses"):
            assert ns is None
            if plural == "namespaces":
                assert body["metadata"]["name"] in DEMO_NS
        else:
            assert ns in DEMO_NS, path
        assert body["metadata"]["labels"][DEMO_LABEL] == "true"
        assert not {"uid", "resourceVersion", "creationTimestamp", "ownerReferences"} & set(body["metadata"])
    # namespaces first, pods last: what an object needs exists before it
    kinds = [b["kind"] for _, b in created]
    assert kinds[:4] == ["Namespace"] * 4 and kinds[-161:] == ["Pod"] * 161
    pods = [b for _, b in created if b["kind"] == "Pod"]
    assert all("status" not in p and "priority" not in p["spec"] for p in pods)
    assert sum(1 for p in pods if p["spec"].get("nodeName")) == 136  # bound as in the snapshot
    assert "pod/job-1-0 -n ml created" in r.stdout and r.stdout.rstrip().endswith("Try: kubectl wap pending -A")
    # the cluster now holds the demo: the live path answers as the demo does
    assert "205 created, 0 left as they were." in r.stdout


def test_second_run_leaves_everything_as_it_is(tmp_path: Path) -> None:
    with FakeApiServer([], writable=True) as srv:
        kc = str(srv.write_kubeconfig(tmp_path / "kc"))
        assert _run("demo", "load", "--yes", "--kubeconfig", kc).returncode == 0
        n = len(srv.created)
        again = _run("demo", "load", "--yes", "--kubeconfig", kc)
        assert len(srv.created) == n  # create only: nothing replaced or patched
    assert again.returncode == 0, again.stderr
    assert "0 created, 205 left as they were." in again.stdout and "pod/job-1-0 -n ml unchanged (exists)" in again.stdout


def test_a_namespace_someone_else_made_is_never_written_into(tmp_path: Path) -> None:
    theirs = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    with FakeApiServer([theirs], writable=True) as srv:
        r = _run("demo", "load", "--yes", "--kubeconfig", str(srv.write_kubeconfig(tmp_path / "kc")))
        assert srv.created == [] and srv.methods() == {"GET"}
    assert r.returncode == 2
    assert "namespace ml already exists and was not made by `kubectl wap demo load`" in r.stderr


def test_the_live_path_reads_the_loaded_demo(tmp_path: Path) -> None:
    with FakeApiServer([], writable=True) as srv:
        kc = str(srv.write_kubeconfig(tmp_path / "kc"))
        assert _run("demo", "load", "--yes", "--kubeconfig", kc).returncode == 0
        live = _run("pending", "-A", "--no-scale-up", "--kubeconfig", kc, "-o", "json")
    demo = _run("pending", "-A", "--no-scale-up", "--demo", "-o", "json")
    assert live.returncode == 0, live.stderr
    names = lambda r: sorted((i["kind"], i["namespace"], i["name"]) for i in json.loads(r.stdout)["items"])  # noqa: E731
    assert names(live) == names(demo)


@pytest.mark.parametrize("write, why", [
    (Write("Pod", "kube-system", "x", "v1", {}), "outside the demo's namespaces"),
    (Write("Namespace", None, "kube-system", "v1", {}), "not one of the demo's"),
    (Write("Secret", "ml", "x", "v1", {}), "creates only"),
    (Write("Node", "ml", "x", "v1", {}), "has no namespace"),
])
def test_writes_outside_the_demo_are_refused(write: Write, why: str) -> None:
    with pytest.raises(UserError, match=why):
        check_scope([write], DEMO_NS)


def test_plan_covers_every_demo_object_in_create_order() -> None:
    writes = plan(_demo_items())
    order = ["Namespace", "PriorityClass", "Node", "PodDisruptionBudget", "CompositePodGroup", "PodGroup", "Pod"]
    assert [order.index(w.kind) for w in writes] == sorted(order.index(w.kind) for w in writes)
    assert {w.namespace for w in writes} - {None} == DEMO_NS


_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
_TYPED = ("create_namespace", "create_node", "create_priority", "delete_", "patch_", "replace_")  # the typed clients' writers


def _writes(source: str) -> list[str]:
    """What in a module's code (not its docstrings) could write: a mutating method as a string,
    a connection of its own (http.client, socket), a typed client's mutating call."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and node.value in _METHODS:
            out.append(node.value)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            out += [n for n in names if n in ("http.client", "socket", "urllib.request", "requests", "httpx")
                    or n == "client" and getattr(node, "module", "") == "http"]
        elif isinstance(node, ast.Attribute) and node.attr.startswith(_TYPED):
            out.append(node.attr)
    return out


def test_no_other_module_can_write() -> None:
    """The read-only promise: one module of kubectl_wap can send a write (readonly.py's guard
    refuses it everywhere else, tests/test_live.py); demoload.py is that module."""
    writers = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "kubectl_wap").rglob("*.py") if _writes(p.read_text()))
    assert writers == ["kubectl_wap/snapshot/io/demoload.py"]


def test_writes_are_made_as_the_identity_the_reads_are(tmp_path: Path) -> None:
    """kubectl's --as/--as-group reach the POSTs too (Impersonate-* lines, a repeated group as
    repeated lines, as client-go's ImpersonatingRoundTripper sends them), not only the GETs."""
    with FakeApiServer([], writable=True) as srv:
        r = _run("demo", "load", "--yes", "--kubeconfig", str(srv.write_kubeconfig(tmp_path / "kc")),
                 "--as", "alice", "--as-group", "devs", "--as-group", "ops")
        recorded = list(srv.requests)
    assert r.returncode == 0, r.stderr
    posts = [q for q in recorded if q.method == "POST"]
    assert len(posts) == 205
    for q in recorded:
        imp = [(k.lower(), v) for k, v in q.header_lines if k.lower().startswith("impersonate-")]
        assert imp == [("impersonate-user", "alice"), ("impersonate-group", "devs"), ("impersonate-group", "ops")], (q.method, q.path)


def test_without_yes_the_lists_fit_an_80_column_terminal(tmp_path: Path) -> None:
    """What it would create, wrapped at the terminal's width (its lines ran to 154 columns); a pipe
    keeps each kind on one line (test above)."""
    from tests.ptyrun import run_in_pty

    with FakeApiServer([], writable=True) as srv:
        code, out = run_in_pty([WAP, "demo", "load", "--kubeconfig", str(srv.write_kubeconfig(tmp_path / "kc"))], 80)
        assert srv.requests == []
    lines = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out).splitlines()
    assert code == 2 and all(len(ln) <= 80 for ln in lines), max(lines, key=len)
    assert "  5 PriorityClasses: batch-default, high-priority, inference-critical," in lines
