"""A loopback Kubernetes API server for tests: list/get/discovery over an in-memory object set.

Speaks enough of the real wire protocol that both kubectl-wap's live reader and the real ``kubectl``
binary work against it: legacy discovery (/api, /apis, resource lists), /version, paginated LIST
with opaque continue tokens and list resourceVersions, single-object GET, server-side Table output
for ``kubectl get``, bearer-token auth (401), and metav1.Status error bodies.

HTTPS by default when an ``openssl`` binary is available (a throwaway self-signed certificate for
127.0.0.1, generated once per process): kubectl, like client-go, never sends a bearer token over
plain HTTP. ``tls=False`` gives a plain-HTTP server (use ``token=None`` with it for kubectl).

Fault injection (see :meth:`FakeApiServer.fail`): per-path status codes for the first N requests
(or forever), with Retry-After, optionally only on requests carrying a continue token (to simulate
an expired token, 410). Every request is recorded (method, path, query, headers) so tests can
assert that only GETs were sent.

Usage::

    with FakeApiServer(objects, token="t0ken") as srv:
        kubeconfig = srv.write_kubeconfig(tmp_path / "kubeconfig")
        ...
        assert {r.method for r in srv.requests} == {"GET"}
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import copy
import dataclasses
import json
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import parse_qs, urlsplit

SERVER_VERSION = "v1.37.1"


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


RESOURCES: tuple[ResourceInfo, ...] = (
    ResourceInfo("", "v1", "nodes", "node", "Node", False, ("no",)),
    ResourceInfo("", "v1", "pods", "pod", "Pod", True, ("po",)),
    ResourceInfo("", "v1", "namespaces", "namespace", "Namespace", False, ("ns",)),
    ResourceInfo("scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", False, ("pc",)),
    ResourceInfo("policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", True, ("pdb",)),
    ResourceInfo("scheduling.k8s.io", "v1beta1", "podgroups", "podgroup", "PodGroup", True, ()),
    ResourceInfo(
        "scheduling.k8s.io", "v1alpha3", "compositepodgroups", "compositepodgroup", "CompositePodGroup", True, ()
    ),
    ResourceInfo("resource.k8s.io", "v1", "deviceclasses", "deviceclass", "DeviceClass", False, ()),
    ResourceInfo("resource.k8s.io", "v1", "resourceslices", "resourceslice", "ResourceSlice", False, ()),
    ResourceInfo("resource.k8s.io", "v1", "resourceclaims", "resourceclaim", "ResourceClaim", True, ()),
    ResourceInfo("resource.k8s.io", "v1", "resourceclaimtemplates", "resourceclaimtemplate", "ResourceClaimTemplate", True, ()),
    ResourceInfo("", "v1", "events", "event", "Event", True, ("ev",)),  # read only with --events (why-preempted)
    ResourceInfo("", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", True, ("pvc",)),
    ResourceInfo("", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", False, ("pv",)),
    ResourceInfo("storage.k8s.io", "v1", "storageclasses", "storageclass", "StorageClass", False, ("sc",)),
    ResourceInfo("storage.k8s.io", "v1", "csinodes", "csinode", "CSINode", False, ()),
    ResourceInfo("node.k8s.io", "v1", "runtimeclasses", "runtimeclass", "RuntimeClass", False, ()),
    ResourceInfo("", "v1", "limitranges", "limitrange", "LimitRange", True, ("limits",)),
)
# Kueue's API (kueue.x-k8s.io/v1beta2, Kueue v0.17.0's storage version): served only when the
# server is given Kueue objects (or kueue=True), as only a cluster with Kueue installed serves it.
KUEUE_RESOURCES: tuple[ResourceInfo, ...] = tuple(
    ResourceInfo("kueue.x-k8s.io", "v1beta2", plural, singular, kind, namespaced)
    for plural, singular, kind, namespaced in (
        ("resourceflavors", "resourceflavor", "ResourceFlavor", False),
        ("clusterqueues", "clusterqueue", "ClusterQueue", False),
        ("cohorts", "cohort", "Cohort", False),
        ("localqueues", "localqueue", "LocalQueue", True),
        ("workloads", "workload", "Workload", True),
        ("workloadpriorityclasses", "workloadpriorityclass", "WorkloadPriorityClass", False),
        ("topologies", "topology", "Topology", False),
        ("admissionchecks", "admissioncheck", "AdmissionCheck", False),
    )
)
_BY_KIND = {r.kind: r for r in RESOURCES}
_KUEUE_BY_KIND = {r.kind: r for r in KUEUE_RESOURCES}

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    410: "Expired",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
}


@dataclass(slots=True)
class Fault:
    path: str  # exact URL path, no query
    status: int
    times: int | None = 1  # None: every matching request
    retry_after: float | None = None
    message: str | None = None
    only_continue: bool = False  # match only requests carrying a continue token (expired token: 410)
    hits: int = 0


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str] = field(default_factory=dict)
    # Every header line in the order sent, repeats kept (Impersonate-Group, Impersonate-Extra-*
    # repeat; `headers` keeps only one value per name).
    header_lines: tuple[tuple[str, str], ...] = ()


class FakeApiServer:
    """Threaded HTTP API server on 127.0.0.1 (random port); a context manager that stops itself."""

    def __init__(
        self,
        objects: Iterable[dict],
        token: str | None = "t0ken",
        *,
        not_served: Iterable[str] = (),
        faults: Iterable[Fault] = (),
        version: str = SERVER_VERSION,
        user: str = "tester",
        tls: bool | None = None,
        versions: dict[str, tuple[str, ...]] | None = None,
        writable: bool = False,
        kueue: bool | None = None,
    ) -> None:
        """`versions` serves a resource (by plural) at these API versions instead of its one
        version in RESOURCES, e.g. {"compositepodgroups": ("v1beta1", "v1alpha3")} as 1.38 does.
        `writable` accepts POST (create: 201, or 409 when the name is taken) for `demo load`'s
        tests; every other server stays read-only (405)."""
        self.token = token
        self.writable = writable
        self.created: list[tuple[str, dict]] = []  # (path, body) of every accepted POST, in order
        self.versions = dict(versions or {})
        self.tls = tls_available() if tls is None else tls
        self.version = version
        self.user = user
        self.not_served = set(not_served)  # plurals, e.g. {"podgroups"}
        self.faults: list[Fault] = list(faults)
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._store: dict[str, list[dict]] = {r.plural: [] for r in RESOURCES + KUEUE_RESOURCES}
        objects = list(objects)
        # `kueue`: serve kueue.x-k8s.io (None: when some object is Kueue's)
        self.kueue = any(str(o.get("apiVersion", "")).startswith("kueue.x-k8s.io/") for o in objects) if kueue is None else kueue
        rv = 1000
        for obj in objects:
            is_kueue = str(obj.get("apiVersion", "")).startswith("kueue.x-k8s.io/")
            info = (_KUEUE_BY_KIND if is_kueue else _BY_KIND).get(obj.get("kind", ""))
            if info is None:
                raise ValueError(f"fake apiserver does not serve kind {obj.get('kind')!r}")
            rv += 1
            stored = copy.deepcopy(obj)
            stored.pop("apiVersion", None)
            stored.pop("kind", None)  # list items on the wire carry neither
            meta = stored.setdefault("metadata", {})
            meta.setdefault("resourceVersion", str(rv))
            meta.setdefault("uid", f"uid-{rv}")
            meta.setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
            self._store[info.plural].append(stored)
        self.resource_version = str(rv)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> "FakeApiServer":
        handler = type("Handler", (_Handler,), {"api": self})
        self._httpd = _TLSServer(("127.0.0.1", 0), handler) if self.tls else _QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "FakeApiServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def ca_pem(self) -> bytes:
        """The server certificate (its own CA) in PEM; empty for plain HTTP."""
        return Path(_tls_files()[0]).read_bytes() if self.tls else b""

    # -- test helpers ----------------------------------------------------------------------------
    def fail(
        self,
        path: str,
        status: int,
        times: int | None = 1,
        *,
        retry_after: float | None = None,
        message: str | None = None,
        only_continue: bool = False,
    ) -> Fault:
        """Answer `status` to the next `times` requests for `path` (None: always)."""
        fault = Fault(path, status, times, retry_after, message, only_continue)
        with self._lock:
            self.faults.append(fault)
        return fault

    def methods(self) -> set[str]:
        with self._lock:
            return {r.method for r in self.requests}

    def paths(self) -> list[str]:
        with self._lock:
            return [r.path for r in self.requests]

    def write_kubeconfig(
        self, path: str | Path, context_name: str = "fake", token: str | None = None, trust_ca: bool = True
    ) -> Path:
        """Write a kubeconfig pointing at this server; returns the path.

        `token` overrides the server's token (to test a wrong one); `trust_ca=False` leaves the
        certificate authority out, so TLS verification fails.
        """
        return write_kubeconfig(
            path, self.url, token if token is not None else self.token,
            self.ca_pem if trust_ca else b"", context_name,
        )

    # -- internals used by the handler -----------------------------------------------------------
    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def _take_fault(self, path: str, has_continue: bool) -> Fault | None:
        with self._lock:
            for f in self.faults:
                if f.path != path or (f.only_continue and not has_continue):
                    continue
                if f.times is not None and f.hits >= f.times:
                    continue
                f.hits += 1
                return f
        return None

    def _served(self) -> list[ResourceInfo]:
        out = []
        for r in RESOURCES + (KUEUE_RESOURCES if self.kueue else ()):
            if r.plural in self.not_served:
                continue
            out.extend(dataclasses.replace(r, version=v) for v in self.versions.get(r.plural, (r.version,)))
        return out

    def list_body(self, info: ResourceInfo, meta: dict, page: list[Any]) -> dict | bytes:
        """One LIST response. A subclass may store items pre-encoded and return bytes
        (benchmarks/live.py serves 150k pods without holding them as dicts)."""
        return {"kind": f"{info.kind}List", "apiVersion": info.group_version, "metadata": meta, "items": page}


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up (timeouts, failed handshakes) are expected in tests


class _TLSServer(_QuietServer):
    """TLS handshake in the worker thread, so a client that never completes it cannot stall accept()."""

    def __init__(self, address: tuple[str, int], handler: type) -> None:
        super().__init__(address, handler)
        cert, key = _tls_files()
        self.ssl_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ssl_context.load_cert_chain(cert, key)

    def finish_request(self, request: Any, client_address: Any) -> None:
        request.settimeout(10)
        try:
            tls_sock = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            super().finish_request(tls_sock, client_address)
        finally:
            try:
                tls_sock.close()
            except OSError:
                pass


_TLS_DIR: str | None = None
_TLS_LOCK = threading.Lock()


def tls_available() -> bool:
    return shutil.which("openssl") is not None


def _tls_files() -> tuple[str, str]:
    """(cert.pem, key.pem) for 127.0.0.1, self-signed, generated once per process."""
    global _TLS_DIR
    with _TLS_LOCK:
        if _TLS_DIR is None:
            d = tempfile.mkdtemp(prefix="fake-apiserver-tls-")
            atexit.register(shutil.rmtree, d, True)
            subprocess.run(
                [
                    "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", f"{d}/key.pem", "-out", f"{d}/cert.pem", "-days", "2",
                    "-subj", "/CN=fake-apiserver", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-addext", "basicConstraints=critical,CA:TRUE",
                    "-addext", "keyUsage=critical,digitalSignature,keyCertSign",
                ],
                check=True, capture_output=True, timeout=30,
            )
            _TLS_DIR = d
        return f"{_TLS_DIR}/cert.pem", f"{_TLS_DIR}/key.pem"


@contextlib.contextmanager
def trickling_server(head: bytes, then: bytes = b"", every: float = 0.2) -> Iterator[int]:
    """A loopback server that reads each request, then sends `head` one byte every `every`
    seconds if `then` is empty, else `head` at once and `then` forever a byte at a time: each
    read beats any socket timeout, so only a whole-request deadline ends it. Yields the port."""
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    stop = threading.Event()

    def drip(conn: socket.socket, data: bytes, forever: bool) -> None:
        while not stop.is_set():
            for b in data:
                if stop.is_set():
                    return
                conn.sendall(bytes([b]))
                stop.wait(every)
            if not forever:
                return

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = lsock.accept()
            except OSError:
                return
            try:
                conn.recv(65536)
                if then:
                    conn.sendall(head)
                    drip(conn, then, True)
                else:
                    drip(conn, head, False)
            except OSError:
                pass
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield int(lsock.getsockname()[1])
    finally:
        stop.set()
        lsock.close()


def free_port() -> int:
    """A loopback port nobody listens on (for connection-refused tests)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_kubeconfig(
    path: str | Path, server: str, token: str | None = None, ca_pem: bytes = b"", context_name: str = "fake"
) -> Path:
    """Write a one-context kubeconfig (JSON is valid YAML) for `server`; returns the path."""
    user: dict[str, Any] = {"token": token} if token else {}
    cluster: dict[str, Any] = {"server": server}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context_name, "cluster": cluster}],
        "users": [{"name": context_name, "user": user}],
        "contexts": [{"name": context_name, "context": {"cluster": context_name, "user": context_name}}],
        "current-context": context_name,
    }
    p = Path(path)
    p.write_text(json.dumps(cfg, indent=1))
    return p


def _status(code: int, message: str, reason: str | None = None) -> dict:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason or _REASONS.get(code, "Unknown"),
        "code": code,
    }


def _encode_token(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode()


def _decode_token(token: str) -> dict | None:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        return data if isinstance(data, dict) else None
    except (ValueError, TypeError):
        return None


class _Handler(BaseHTTPRequestHandler):
    api: FakeApiServer  # set on the per-server subclass
    protocol_version = "HTTP/1.1"
    timeout = 10  # an idle keep-alive connection never pins a thread for long

    def setup(self) -> None:
        # Headers and body go out in separate writes; without NODELAY, Nagle + delayed ACK add
        # ~40 ms to every response.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
        pass

    # Every method is recorded; only GET is served. Anything else is a test failure waiting to be seen.
    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    # -- plumbing --------------------------------------------------------------------------------
    def _send(self, code: int, body: Any, content_type: str = "application/json", extra: dict | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _handle(self, method: str) -> None:
        split = urlsplit(self.path)
        path = split.path.rstrip("/") or "/"
        query = parse_qs(split.query)
        self.api._record(RecordedRequest(method, path, query, {k: v for k, v in self.headers.items()},
                                          tuple(self.headers.items())))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""  # drained either way: keep-alive stays in sync
        api = self.api
        if api.token is not None and self.headers.get("Authorization") != f"Bearer {api.token}":
            self._send(401, _status(401, "Unauthorized"))
            return
        if method == "POST" and api.writable:
            try:
                self._create(path, body)
            except _HttpError as e:
                self._send(e.code, b"404 page not found\n", "text/plain; charset=utf-8")
            return
        if method != "GET":
            self._send(405, _status(405, f"fake apiserver is read-only: {method} not allowed"))
            return
        fault = api._take_fault(path, bool(query.get("continue")))
        if fault is not None:
            extra = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else None
            self._send(fault.status, _status(fault.status, fault.message or _fault_message(fault.status, path, api.user)), extra=extra)
            return
        try:
            self._route(path, query)
        except _HttpError as e:
            if e.plain:
                self._send(e.code, b"404 page not found\n", "text/plain; charset=utf-8")
            else:
                self._send(e.code, _status(e.code, e.message))

    def _route(self, path: str, query: dict[str, list[str]]) -> None:
        api = self.api
        served = api._served()
        if path == "/version":
            self._send(200, _version(api.version))
            return
        if path == "/api":
            self._send(200, {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": f"127.0.0.1:{api.port}"}],
            })
            return
        if path == "/apis":
            self._send(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": _groups(served)})
            return
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) >= 2 and parts[1] == "v1":
            group, version, rest = "", "v1", parts[2:]
        elif parts[0] == "apis" and len(parts) >= 2:
            if len(parts) == 2:
                grp = [g for g in _groups(served) if g["name"] == parts[1]]
                if not grp:
                    raise _HttpError(404, "", plain=True)
                self._send(200, {"kind": "APIGroup", "apiVersion": "v1", **grp[0]})
                return
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise _HttpError(404, "", plain=True)
        gv_resources = [r for r in served if r.group == group and r.version == version]
        if not gv_resources:
            raise _HttpError(404, "", plain=True)  # group/version not served: like a real server
        if not rest:
            self._send(200, _resource_list(group, version, gv_resources))
            return
        by_plural = {r.plural: r for r in gv_resources}
        ns: str | None = None
        if rest[0] == "namespaces" and len(rest) >= 3:  # /namespaces/<ns>/<plural>[/<name>]
            ns, rest = rest[1], rest[2:]
        info = by_plural.get(rest[0])
        if info is None or len(rest) > 2 or (ns is not None and not info.namespaced):
            raise _HttpError(404, "", plain=True)
        if len(rest) == 2:
            self._get_one(info, ns, rest[1])
        else:
            self._list(info, ns, query)

    def _create(self, path: str, body: bytes) -> None:
        """POST to a collection: store the object (201) unless its name is taken there (409)."""
        parts = path.strip("/").split("/")
        rest = parts[2:] if parts[0] == "api" else parts[3:]
        ns = rest[1] if len(rest) == 3 and rest[0] == "namespaces" else None
        plural = rest[-1] if rest else ""
        info = next((r for r in self.api._served() if r.plural == plural), None)
        if info is None or len(rest) not in (1, 3):
            raise _HttpError(404, "", plain=True)
        obj = json.loads(body)
        meta = obj.setdefault("metadata", {})
        if ns is not None:
            meta["namespace"] = ns
        with self.api._lock:
            if any(o["metadata"].get("name") == meta.get("name") for o in self._objects(info, ns)):
                self._send(409, _status(409, f'{plural} "{meta.get("name")}" already exists', "AlreadyExists"))
                return
            self.api.created.append((path, copy.deepcopy(obj)))
            stored = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
            self.api._store[info.plural].append(stored)
        self._send(201, obj)

    def _objects(self, info: ResourceInfo, ns: str | None) -> list[dict]:
        objs = self.api._store[info.plural]
        if ns is None:
            return objs
        return [o for o in objs if o.get("metadata", {}).get("namespace") == ns]

    def _get_one(self, info: ResourceInfo, ns: str | None, name: str) -> None:
        for o in self._objects(info, ns):
            if o["metadata"].get("name") == name:
                if self._wants_table():
                    self._send(200, _table(info, [o], {"resourceVersion": self.api.resource_version}))
                else:
                    self._send(200, {"apiVersion": info.group_version, "kind": info.kind, **o})
                return
        raise _HttpError(404, f'{info.plural}{"." + info.group if info.group else ""} "{name}" not found')

    def _list(self, info: ResourceInfo, ns: str | None, query: dict[str, list[str]]) -> None:
        objs = self._objects(info, ns)
        start = 0
        token = (query.get("continue") or [""])[0]
        if token:
            data = _decode_token(token)
            if data is None or data.get("plural") != info.plural or data.get("ns") != ns:
                raise _HttpError(400, "continue key is not valid")
            start = int(data.get("start", 0))
        try:
            limit = int((query.get("limit") or ["0"])[0])
        except ValueError:
            raise _HttpError(400, "invalid limit") from None
        end = len(objs) if limit <= 0 else min(len(objs), start + limit)
        meta: dict[str, Any] = {"resourceVersion": self.api.resource_version}
        if end < len(objs):
            meta["continue"] = _encode_token({"plural": info.plural, "ns": ns, "start": end, "rv": self.api.resource_version})
            meta["remainingItemCount"] = len(objs) - end
        page = objs[start:end]
        if self._wants_table():
            self._send(200, _table(info, page, meta))
        else:
            self._send(200, self.api.list_body(info, meta, page))

    def _wants_table(self) -> bool:
        return "as=Table" in (self.headers.get("Accept") or "")


class _HttpError(Exception):
    def __init__(self, code: int, message: str, plain: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.plain = plain


def _fault_message(status: int, path: str, user: str) -> str:
    parts = path.strip("/").split("/")
    resource = parts[-1] if parts else path
    group = parts[1] if parts and parts[0] == "apis" and len(parts) > 1 else ""
    scope = "at the cluster scope"
    if "namespaces" in parts[:-1]:
        scope = f'in the namespace "{parts[parts.index("namespaces") + 1]}"'
    if status == 403:
        return f'{resource} is forbidden: User "{user}" cannot list resource "{resource}" in API group "{group}" {scope}'
    if status == 410:
        return ("The provided continue parameter is too old to display a consistent list result. "
                "You can start a new list without the continue parameter.")
    if status == 429:
        return "Too many requests, please try again later."
    if status == 404:
        return "the server could not find the requested resource"
    return f"fake apiserver injected error {status}"


def _version(git_version: str) -> dict:
    major, minor = git_version.lstrip("v").split(".")[:2]
    return {
        "major": major, "minor": minor, "gitVersion": git_version, "gitCommit": "0" * 40,
        "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.25.0",
        "compiler": "gc", "platform": "linux/amd64",
    }


def _groups(served: list[ResourceInfo]) -> list[dict]:
    out: dict[str, list[str]] = {}
    for r in served:
        if r.group and r.version not in out.setdefault(r.group, []):
            out[r.group].append(r.version)
    groups = []
    for name, versions in out.items():
        # Preferred version: the most stable one served (v1 > v1beta1 > v1alpha3).
        pref = sorted(versions, key=lambda v: (0 if "alpha" not in v and "beta" not in v else 1 if "beta" in v else 2))[0]
        groups.append({
            "name": name,
            "versions": [{"groupVersion": f"{name}/{v}", "version": v} for v in versions],
            "preferredVersion": {"groupVersion": f"{name}/{pref}", "version": pref},
        })
    return groups


def _resource_list(group: str, version: str, resources: list[ResourceInfo]) -> dict:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": [
            {
                "name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
                "verbs": ["get", "list"], **({"shortNames": list(r.short_names)} if r.short_names else {}),
            }
            for r in resources
        ],
    }


def _table(info: ResourceInfo, objs: list[dict], meta: dict) -> dict:
    """A minimal meta.k8s.io/v1 Table: what `kubectl get` prints by default."""
    columns = [
        {"name": "Name", "type": "string", "format": "name", "description": "Name", "priority": 0},
        {"name": "Age", "type": "string", "format": "", "description": "Age", "priority": 0},
    ]
    rows = []
    for o in objs:
        m = o.get("metadata", {})
        rows.append({
            "cells": [m.get("name", ""), "<unknown>"],
            "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": m},
        })
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "columnDefinitions": columns, "rows": rows}
