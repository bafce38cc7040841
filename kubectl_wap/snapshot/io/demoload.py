"""`kubectl wap demo load`: THE ONE PLACE kubectl-wap writes to a cluster (issue 33 item 6).

Everything else talks to an API server through readonly.py, which refuses any method but GET for
the whole process (the kubernetes REST client and urllib3 alike). This module does not lift that
guard: it sends its POSTs over its own stdlib `http.client` connection, with the credentials and
TLS settings of the same kubeconfig (readonly.connect builds them; nothing is sent until the user
passed --yes). tests/test_demo_load.py checks that no other module of kubectl_wap names a
mutating HTTP method or opens a connection of its own.

What it writes, and nowhere else:
- the demo's own Namespaces (4), and only when each is absent or was created by this command (it
  carries DEMO_LABEL): a namespace of the same name that someone else made is never written into;
- namespaced objects (pods, PodGroups, CompositePodGroups, PDBs) only in those namespaces;
- the demo's cluster-scoped PriorityClasses and Nodes, labelled too (the pods need the classes to
  be admitted; the Nodes are fake, as in the snapshot: for a throwaway cluster, kind + KWOK).
Create only (POST): an object that already exists is left as it is (409 AlreadyExists), never
replaced or patched. What the API server or a controller owns is not sent: uids, resourceVersions,
timestamps, status (a Node's capacity excepted: it is what the scheduler reads), owner references
(the owners are not in the demo: the garbage collector would delete the pods) and a pod's
priority integers (priority admission computes them from the class and refuses a copy)."""

from __future__ import annotations

import copy
import http.client
import json
import ssl
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable
from urllib.parse import urlsplit

from ...errors import ClusterAccessError, UserError

DEMO_LABEL = "kubectl-wap.io/demo"
# Create order: what an object needs exists before it (namespace, class, node, then the pods).
_ORDER = ("Namespace", "PriorityClass", "Node", "PodDisruptionBudget", "CompositePodGroup", "PodGroup", "Pod")
_PLURALS = {"Namespace": "namespaces", "PriorityClass": "priorityclasses", "Node": "nodes",
            "PodDisruptionBudget": "poddisruptionbudgets", "CompositePodGroup": "compositepodgroups",
            "PodGroup": "podgroups", "Pod": "pods"}
_CLUSTER_SCOPED = {"Namespace", "PriorityClass", "Node"}
_KEEP_META = ("name", "namespace", "labels", "annotations")
# The ServiceAccount admission plugin refuses a pod until the new namespace's "default"
# ServiceAccount exists (the controller makes it within a second or so): retry that, briefly.
_SA_RETRIES, _SA_WAIT = 10, 0.5


@dataclass(frozen=True, slots=True)
class Write:
    kind: str
    namespace: str | None
    name: str
    api_version: str
    body: dict[str, Any]

    @property
    def path(self) -> str:
        """The collection the object is POSTed to."""
        group_version = self.api_version
        root = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
        ns = f"/namespaces/{self.namespace}" if self.namespace else ""
        return f"{root}{ns}/{_PLURALS[self.kind]}"

    @property
    def ref(self) -> str:
        return f"{self.kind.lower()}/{self.name}" + (f" -n {self.namespace}" if self.namespace else "")


def plan(items: Iterable[dict]) -> list[Write]:
    """The objects to create for the demo's raw items, in create order, each checked by check_scope."""
    items = list(items)
    namespaces = {o["metadata"]["name"] for o in items if o.get("kind") == "Namespace"}
    out = [_write(o) for o in items if o.get("kind") in _PLURALS]
    out.sort(key=lambda w: _ORDER.index(w.kind))
    check_scope(out, namespaces)
    return out


def check_scope(writes: Iterable[Write], namespaces: set[str]) -> None:
    """Refuse any write outside the demo: a namespaced object outside its namespaces, a kind
    this command does not create, a Namespace that is not the demo's."""
    for w in writes:
        if w.kind not in _PLURALS:
            raise UserError(f"demo load creates only {', '.join(_ORDER)}: refusing {w.ref}")
        if w.kind in _CLUSTER_SCOPED:
            if w.namespace:
                raise UserError(f"refusing {w.ref}: a {w.kind} has no namespace")
            if w.kind == "Namespace" and w.name not in namespaces:
                raise UserError(f"refusing namespace {w.name}: not one of the demo's ({', '.join(sorted(namespaces))})")
        elif w.namespace not in namespaces:
            raise UserError(f"refusing {w.ref}: outside the demo's namespaces ({', '.join(sorted(namespaces))})")


def _write(o: dict) -> Write:
    kind = o["kind"]
    meta = o.get("metadata") or {}
    body = {k: copy.deepcopy(v) for k, v in o.items() if k not in ("metadata", "status")}
    body["metadata"] = {k: copy.deepcopy(meta[k]) for k in _KEEP_META if k in meta}
    body["metadata"].setdefault("labels", {})[DEMO_LABEL] = "true"
    if kind == "Node":
        body["status"] = {k: v for k, v in (o.get("status") or {}).items() if k in ("capacity", "allocatable")}
        body.get("spec", {}).pop("providerID", None)  # a cloud's node controller deletes nodes it cannot find
    if kind == "Pod":
        for f in ("priority", "preemptionPolicy"):  # priority admission computes them from the class
            body.get("spec", {}).pop(f, None)
    namespace = None if kind in _CLUSTER_SCOPED else (meta.get("namespace") or "default")
    return Write(kind, namespace, str(meta.get("name")), str(o.get("apiVersion") or "v1"), body)


@dataclass(slots=True)
class Outcome:
    write: Write
    result: str  # created | exists | not served


def namespace_owners(client: Any, writes: list[Write]) -> list[str]:
    """Demo namespaces that exist and were not made by this command (GET through the read-only client)."""
    foreign = []
    for w in writes:
        if w.kind != "Namespace":
            continue
        resp = client.get(f"/api/v1/namespaces/{w.name}")
        if resp.status == 200:
            labels = ((resp.json().get("metadata") or {}).get("labels")) or {}
            if labels.get(DEMO_LABEL) != "true":
                foreign.append(w.name)
        elif resp.status != 404:
            raise ClusterAccessError(f"GET namespace {w.name}: {resp.status} {resp.server_message()}")
    return foreign


def create(client: Any, writes: list[Write], said: Callable[[Outcome], None] = lambda o: None) -> list[Outcome]:
    """POST each object (create only) through one connection of our own; `client` is the
    ReadOnlyClient of the same kubeconfig (its credentials and TLS settings are reused)."""
    namespaces = {w.name for w in writes if w.kind == "Namespace"}
    check_scope(writes, namespaces)
    foreign = namespace_owners(client, writes)
    if foreign:
        raise UserError(f"namespace {', '.join(foreign)} already exists and was not made by `kubectl wap demo load` "
                        f"(no {DEMO_LABEL}=true label): refusing to write into it")
    conn = _Writer(client)
    out = []
    try:
        for w in writes:
            status, message = conn.post(w)
            tries = 0
            while status == 403 and "serviceaccount" in message.lower() and tries < _SA_RETRIES:
                tries += 1
                time.sleep(_SA_WAIT)
                status, message = conn.post(w)
            if status in (200, 201, 202):
                o = Outcome(w, "created")
            elif status == 409:
                o = Outcome(w, "exists")
            elif status == 404:
                o = Outcome(w, "not served")  # e.g. CompositePodGroups with alpha APIs off
            else:
                raise ClusterAccessError(f"creating {w.ref} failed: {status} {message}")
            out.append(o)
            said(o)
    finally:
        conn.close()
    return out


class _Writer:
    """One HTTP(S) connection to the API server for POSTs, configured like the read-only client."""

    def __init__(self, client: Any) -> None:
        self.api = client._api
        self.timeout = client.timeout
        # Impersonate-* lines (kubeconfig as/as-groups/as-uid/as-user-extra, --as...), repeats kept:
        # the writes are made as the same identity the reads are.
        self.impersonation: tuple[tuple[str, str], ...] = tuple(getattr(client, "impersonation", ()))
        cfg = self.api.configuration
        url = urlsplit(str(cfg.host))
        self.base = url.path.rstrip("/")
        if url.scheme == "https":
            ctx = ssl.create_default_context(cafile=cfg.ssl_ca_cert) if cfg.verify_ssl else ssl._create_unverified_context()  # noqa: S323 - the kubeconfig said insecure-skip-tls-verify
            if cfg.cert_file:
                ctx.load_cert_chain(cfg.cert_file, cfg.key_file)
            server_name = getattr(cfg, "tls_server_name", None)  # --tls-server-name / tls-server-name
            if server_name:
                ctx.check_hostname = cfg.verify_ssl
            self.conn: http.client.HTTPConnection = _HTTPSConnection(
                url.hostname or "", url.port, timeout=self.timeout, context=ctx, server_name=server_name)
        else:
            self.conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=self.timeout)

    def post(self, w: Write) -> tuple[int, str]:
        # param_serialize adds the kubeconfig's auth (a bearer token, an exec plugin's) to the headers.
        _, _, headers, _, _ = self.api.param_serialize("POST", w.path, header_params={"Accept": "application/json"},
                                                       auth_settings=["BearerToken"])
        headers = {**headers, "Content-Type": "application/json", "User-Agent": "kubectl-wap/0.1 (demo load)"}
        try:
            body = json.dumps(w.body).encode()
            self.conn.putrequest("POST", self.base + w.path, skip_accept_encoding=True)
            for k, v in [*headers.items(), *self.impersonation, ("Content-Length", str(len(body)))]:
                self.conn.putheader(k, v)
            self.conn.endheaders(body)
            resp = self.conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise ClusterAccessError(f"creating {w.ref}: {e}") from None
        try:
            message = str(json.loads(data).get("message") or "")
        except (ValueError, AttributeError):
            message = data[:200].decode("utf-8", "replace")
        return resp.status, message

    def close(self) -> None:
        self.conn.close()


class _HTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection that checks the certificate against `server_name` (kubectl's
    --tls-server-name) instead of the URL's host, as client-go's TLSClientConfig.ServerName does."""

    def __init__(self, host: str, port: int | None, *, timeout: float | None, context: ssl.SSLContext,
                 server_name: str | None) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._ctx, self._server_name = context, server_name

    def connect(self) -> None:
        if not self._server_name:
            super().connect()
            return
        http.client.HTTPConnection.connect(self)
        self.sock = self._ctx.wrap_socket(self.sock, server_hostname=self._server_name)
