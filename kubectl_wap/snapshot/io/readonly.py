"""The one door to the API server: GET only, bounded retries, one-line errors.

Every request kubectl-wap sends to a cluster goes through :meth:`ReadOnlyClient.request`. It refuses
any method but GET *before* anything is sent, and it also guards the underlying kubernetes REST
client, so a stray typed-API call (``CoreV1Api(...).delete_...``) through the same ApiClient is
refused too. The analyzer must never change a cluster, whatever a future change to this package does.

``kubernetes`` (and urllib3 through it) is imported lazily: importing it costs most of a second and
``kubectl wap --help`` must stay fast.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence
from urllib.parse import urlencode, urlsplit

from kubectl_wap.errors import ClusterAccessError, register_secret

from .timeouts import check_timeout, request_deadline, shown_timeout

MAX_TRIES = 5
BACKOFF_BASE = 0.25  # seconds; doubles per try: 0.25, 0.5, 1, 2
BACKOFF_MAX = 4.0
RETRY_AFTER_MAX = 10.0  # a server asking for longer still only gets this much patience per try
USER_AGENT = "kubectl-wap/0.1 (read-only)"
# One response body may hold at most this much (after gzip decoding): a page of 500 pods is a few
# MB; a hostile or broken server could otherwise send gigabytes (or a gzip bomb) into memory.
MAX_RESPONSE_BYTES = 512 << 20
_READ_CHUNK = 1 << 16

# Indirection so tests can observe/skip the waits without slowing the suite.
_sleep: Callable[[float], None] = time.sleep
# Where a connection's warning goes: the CLI sets a stderr printer (cli/app.py _guard; only cli/
# and report/ print); completion and the MCP server leave it None and stay silent.
say_warning: Callable[[str], None] | None = None
_warned: set[str] = set()  # each warning once per process (metrics --serve reconnects every interval)


class ReadOnlyViolation(RuntimeError):
    """A non-GET request was attempted. A programming error, never a user error."""


@dataclass(slots=True)
class Response:
    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def server_message(self) -> str:
        """The `message` of a metav1.Status body, else a short excerpt of the body."""
        try:
            doc = json.loads(self.body)
            if isinstance(doc, dict) and doc.get("message"):
                return str(doc["message"])
        except ValueError:
            pass
        text = self.body[:200].decode("utf-8", "replace").strip().replace("\n", " ")
        return text or f"HTTP {self.status}"


class _KubeLogCapture(logging.Handler):
    """Collects what the kubernetes config loader logs on the root logger (failed exec plugins)."""

    def __init__(self, sink: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage().strip()
        if "kubernetes" in record.pathname and text:
            self.sink.append(text.splitlines()[0][:300])


@contextlib.contextmanager
def _capture_kube_logs(sink: list[str]) -> Iterator[None]:
    # The loader reports a failing exec credential plugin with logging.error() on the root logger and
    # carries on without credentials; that would configure root logging as a side effect (stderr
    # noise) and turn into a baffling 401 later. Capture it and add it to the 401 message instead.
    handler = _KubeLogCapture(sink)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


def _guard(method: str, what: str) -> None:
    if method.upper() != "GET":
        raise ReadOnlyViolation(f"kubectl-wap is read-only: refused {method.upper()} {what}")


def _install_guard(api_client: Any = None) -> None:
    """Refuse every method but GET for the whole process, on the two layers every HTTP request in
    it goes through: the kubernetes REST client class (all ApiClient instances, present and
    future) and urllib3's connection pool (anything else built on urllib3, e.g. `requests`)."""
    from kubernetes.client import rest
    from urllib3 import connectionpool

    for cls, attr in ((rest.RESTClientObject, "request"), (connectionpool.HTTPConnectionPool, "urlopen")):
        inner = getattr(cls, attr)
        if getattr(inner, "_wap_guarded", False):
            continue

        def guarded(self: Any, method: str, url: str, *args: Any, _inner: Any = inner, **kwargs: Any) -> Any:
            _guard(method, url)
            return _inner(self, method, url, *args, **kwargs)

        guarded._wap_guarded = True  # type: ignore[attr-defined]
        setattr(cls, attr, guarded)


class CaptureTimeout(ClusterAccessError):
    """The whole capture's deadline (:attr:`ReadOnlyClient.deadline`) passed; live.py rewords it
    to name the resource it was reading."""


class ReadOnlyClient:
    """GET-only access to one API server through a configured kubernetes ApiClient."""

    def __init__(self, api_client: Any, request_timeout: Any = 30.0, credential_problems: Sequence[str] = (),
                 impersonation: Sequence[tuple[str, str]] = ()) -> None:
        self._api = api_client
        # Messages from credential plugins (exec) that failed; explain a later 401.
        self.credential_problems: list[str] = [m for m in credential_problems if m]
        self.timeout: float | None = check_timeout(request_timeout)  # None: no timeout (kubectl's "0")
        # Impersonate-* header lines, repeats kept (kubeconfig.impersonation_headers).
        self.impersonation: tuple[tuple[str, str], ...] = tuple(impersonation)
        # time.monotonic() by which every request must be answered (live.py: the whole capture's
        # deadline); None: each request has only its own --request-timeout.
        self.deadline: float | None = None
        from .kubeconfig import display_url

        self.server_url: str = display_url(str(api_client.configuration.host or ""))
        api_client.user_agent = USER_AGENT
        _install_guard()

    def close(self) -> None:
        try:
            self._api.close()
        except Exception:  # closing is best effort; never mask the real outcome
            pass

    def request(
        self, method: str, path: str, query: Sequence[tuple[str, str]] = ()
    ) -> Response:
        """Send exactly one request (GET only). Transport failures become ClusterAccessError."""
        _guard(method, path)
        from urllib3 import exceptions as u3

        from kubernetes.client.exceptions import ApiException
        from kubernetes.config.config_exception import ConfigException

        headers = {"Accept": "application/json", "Accept-Encoding": "gzip"}
        headers_read = False
        budget = self.timeout
        try:
            # param_serialize adds auth (incl. exec-plugin token refresh) and the server URL.
            problems: list[str] = []
            with _capture_kube_logs(problems):
                _, url, hdrs, _, _ = self._api.param_serialize(
                    "GET", path, header_params=headers, auth_settings=["BearerToken"]
                )
            if problems:
                # A token refresh ran the exec plugin again and it failed: client-go sends nothing
                # (exec.go roundTripper.RoundTrip returns "getting credentials: ...").
                raise ClusterAccessError(f"cannot get credentials for {self.server_url}: the kubeconfig's credential plugin "
                                         f"failed: {problems[-1]}")
            _clean_authorization(hdrs)
            if self.impersonation:
                hdrs = _with_impersonation(hdrs, self.impersonation)
            if query:
                url += "?" + urlencode(list(query))
            budget = self._budget(path)  # None: no timeout (kubectl's --request-timeout 0)
            deadline = time.monotonic() + (budget if budget is not None else math.inf)
            with request_deadline(budget):
                resp = self._api.call_api("GET", url, header_params=hdrs,
                                          _request_timeout=(budget, budget) if budget is not None else None)
                headers_read = True
                body = self._read_body(resp, deadline, path, budget)
            return Response(int(resp.status), dict(resp.headers or {}), body)
        except (ReadOnlyViolation, ClusterAccessError):
            raise
        except ConfigException as e:  # exec plugin / token file failures happen at request time
            raise ClusterAccessError(f"cannot get credentials for {self.server_url}: {e}") from None
        except ApiException as e:  # the REST client turns TLS errors into status-0 ApiExceptions
            detail = str(e.reason or e)
            if detail.startswith("SSLError"):
                raise ClusterAccessError(self._tls_message(detail)) from None
            raise ClusterAccessError(f"cannot talk to the API server at {self.server_url}: {_first_line(detail)}") from None
        except u3.NewConnectionError as e:  # before ConnectTimeoutError: it is a subclass of it
            raise ClusterAccessError(self._connect_message(e)) from None
        except (u3.ConnectTimeoutError, u3.ReadTimeoutError, TimeoutError):
            if self._cut_by_capture(budget):  # the capture's deadline came first, not this request's
                raise self._capture_over(path) from None
            if headers_read:
                raise ClusterAccessError(self._slow_body(path)) from None
            raise ClusterAccessError(
                f"timed out after {shown_timeout(self.timeout)} waiting for the API server at {self.server_url} "
                f"(GET {path}); raise --request-timeout or check the network"
            ) from None
        except u3.SSLError as e:
            raise ClusterAccessError(self._tls_message(str(e))) from None
        except (u3.ProtocolError, ConnectionError) as e:
            raise _Transient(f"connection to {self.server_url} broke during GET {path}: {_first_line(str(e))}") from None
        except u3.HTTPError as e:
            raise ClusterAccessError(f"cannot talk to the API server at {self.server_url}: {_first_line(str(e))}") from None

    def _budget(self, path: str) -> float | None:
        """This request's timeout: --request-timeout (None: none), or less when the capture's
        deadline is nearer."""
        if self.deadline is None:
            return self.timeout
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self._capture_over(path)
        return left if self.timeout is None else min(self.timeout, left)

    def _cut_by_capture(self, budget: float | None) -> bool:
        """Whether this request's timeout was the capture's deadline rather than --request-timeout."""
        return budget is not None and (self.timeout is None or budget < self.timeout)

    def _capture_over(self, path: str) -> CaptureTimeout:
        return CaptureTimeout(f"the capture's deadline passed during GET {path} from the API server at {self.server_url}")

    def _pause(self, seconds: float) -> float:
        """A retry's wait, cut at the capture's deadline (the next request then says it passed)."""
        if self.deadline is None:
            return seconds
        return max(0.0, min(seconds, self.deadline - time.monotonic()))

    def _read_body(self, resp: Any, deadline: float, path: str, budget: float | None = None) -> bytes:
        """The (gzip-decoded) body, read in chunks against a whole-request deadline and a size
        bound: a socket timeout alone lets a server trickle one byte a second forever."""
        raw = getattr(resp, "response", None)
        if raw is None or not hasattr(raw, "read1"):  # not urllib3 underneath (tests' doubles)
            return bytes(resp.read() or b"")
        parts: list[bytes] = []
        total = 0
        try:
            while True:
                chunk = raw.read1(_READ_CHUNK)
                if not chunk:
                    break
                total += len(chunk)
                if total > MAX_RESPONSE_BYTES:
                    raise ClusterAccessError(
                        f"the API server at {self.server_url} answered GET {path} with more than "
                        f"{MAX_RESPONSE_BYTES >> 20} MiB in one response; refusing to read on"
                    )
                parts.append(chunk)
                if time.monotonic() > deadline:
                    if self._cut_by_capture(budget):
                        raise self._capture_over(path)
                    raise ClusterAccessError(self._slow_body(path))
        finally:
            raw.release_conn()
        return b"".join(parts)

    def _slow_body(self, path: str) -> str:
        return (f"timed out after {shown_timeout(self.timeout)} reading the answer to GET {path} from the API server at "
                f"{self.server_url} (it sends too slowly); raise --request-timeout or check the network")

    def _tls_message(self, detail: str) -> str:
        # Prefer the line that says what is wrong with the certificate over the exception class name.
        lines = [ln.strip() for ln in detail.splitlines() if ln.strip() and ln.strip() != "SSLError"]
        best = next((ln for ln in lines if "certificate" in ln.lower()), lines[0] if lines else "handshake failed")
        return f"TLS verification failed talking to the API server at {self.server_url}: {best[:300]}"

    def _connect_message(self, exc: BaseException) -> str:
        from urllib3.exceptions import NameResolutionError

        url = self.server_url
        low = str(exc).lower()
        if isinstance(exc, NameResolutionError) or "name or service not known" in low:
            return f"cannot reach the API server at {url}: host name does not resolve (DNS)"
        if "refused" in low:
            return f"cannot reach the API server at {url}: connection refused (is the cluster running and the kubeconfig current?)"
        if "unreachable" in low or "no route" in low:
            return f"cannot reach the API server at {url}: network unreachable"
        return f"cannot reach the API server at {url}: {_first_line(str(exc))}"

    def get(self, path: str, query: Sequence[tuple[str, str]] = ()) -> Response:
        """GET with bounded retries on 429, 5xx and broken connections; returns the final response.

        Callers decide what non-2xx statuses mean; only 401 is turned into an error here because it
        means the same thing everywhere.
        """
        last: Response | None = None
        last_broken = ""
        for attempt in range(MAX_TRIES):
            try:
                resp = self.request("GET", path, query)
            except _Transient as e:
                last_broken = str(e)
                if attempt + 1 < MAX_TRIES:
                    _sleep(self._pause(_backoff(attempt)))
                continue
            if resp.status == 401:
                why = "the token or client certificate is missing, wrong or expired"
                if self.credential_problems:
                    why = f"the kubeconfig's credential plugin failed: {self.credential_problems[-1]}"
                raise ClusterAccessError(
                    f"the API server at {self.server_url} rejected our credentials (401 Unauthorized: "
                    f"{resp.server_message()}); {why}"
                )
            if resp.status == 429 or resp.status >= 500:
                last = resp
                if attempt + 1 < MAX_TRIES:
                    _sleep(self._pause(_retry_delay(resp, attempt)))
                continue
            return resp
        if last is None:
            raise ClusterAccessError(f"{last_broken} (gave up after {MAX_TRIES} tries)")
        raise ClusterAccessError(
            f"GET {path} failed {MAX_TRIES} times; last answer {last.status}: {last.server_message()}"
        )


def _with_impersonation(hdrs: Mapping[str, Any], lines: Sequence[tuple[str, str]]) -> Any:
    """The request's headers plus the Impersonate-* lines: a urllib3 HTTPHeaderDict, which sends
    a repeated name (Impersonate-Group) as separate header lines, as Go's http.Header.Add does."""
    from urllib3 import HTTPHeaderDict

    out = HTTPHeaderDict(dict(hdrs))
    for name, value in lines:
        out.add(name, value)
    return out


def _clean_authorization(hdrs: dict) -> None:
    """Trim the bearer token as client-go does (strings.TrimSpace on token files; a token written
    by `echo "$T" > token` ends in a newline) and register it so no message can show it."""
    for key in [k for k in hdrs if k.lower() == "authorization"]:
        value = str(hdrs[key])
        register_secret(value)
        scheme, _, cred = value.strip().partition(" ")
        cred = cred.strip()
        register_secret(cred)
        if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in cred):
            raise ClusterAccessError(
                "the kubeconfig's token (token or tokenFile) contains a line break or control character "
                "inside it; it cannot be sent as an HTTP header"
            )
        del hdrs[key]
        # Go's canonical spelling, as kubectl sends it (the kubernetes client writes it lower-case)
        hdrs["Authorization"] = f"{scheme} {cred}" if cred else scheme


class _Transient(Exception):
    """A broken connection worth retrying (reset, aborted); internal to this module."""


def _first_line(text: str) -> str:
    text = text.strip()
    return text.splitlines()[0][:300] if text else "unknown error"


def _backoff(attempt: int) -> float:
    return min(BACKOFF_MAX, BACKOFF_BASE * (2**attempt))


def _retry_delay(resp: Response, attempt: int) -> float:
    raw = {k.lower(): v for k, v in resp.headers.items()}.get("retry-after")
    if raw is not None:
        try:
            return max(0.0, min(RETRY_AFTER_MAX, float(raw)))
        except ValueError:
            pass  # an HTTP-date: not worth parsing, fall back to our own backoff
    return _backoff(attempt)


def connect(kubeconfig: str | None, context: str | None, request_timeout: Any = 30.0,
            overrides: Any = None) -> ReadOnlyClient:
    """Build a ReadOnlyClient from a kubeconfig (same rules as kubectl: KUBECONFIG, ~/.kube/config)
    and kubectl's global flags (`overrides`, a kubeconfig.Overrides: --cluster, --user, --server,
    --token, --as*, TLS flags), resolved as client-go's DirectClientConfig does.

    Falls back to in-cluster service-account config when no kubeconfig exists and we run in a pod.
    """
    from kubernetes import client as kclient
    from kubernetes.config.config_exception import ConfigException

    from .kubeconfig import Overrides, bound_exec_plugins, check_kubeconfig, credential_failure, display_url

    o: Overrides = overrides or Overrides()
    timeout = check_timeout(request_timeout)
    bound_exec_plugins(timeout)
    _install_guard()
    cfg = kclient.Configuration()
    problems: list[str] = []
    impersonation: tuple[tuple[str, str], ...] = ()
    try:
        if kubeconfig is None and not _default_kubeconfig_exists() and os.environ.get("KUBERNETES_SERVICE_HOST") and not o.server:
            impersonation = _in_cluster(cfg, o)
        else:
            path = kubeconfig if kubeconfig is not None else os.environ.get("KUBECONFIG") or "~/.kube/config"
            if kubeconfig is not None and not os.path.exists(os.path.expanduser(kubeconfig)):
                raise ClusterAccessError(f"kubeconfig file not found: {kubeconfig}")
            if kubeconfig is None and not _default_kubeconfig_exists() and not o.server:
                raise ClusterAccessError(
                    f"no kubeconfig found (looked at {path}); pass --kubeconfig or set KUBECONFIG (or give --server)"
                )
            env_paths = [os.path.expanduser(p) for p in (os.environ.get("KUBECONFIG") or "").split(os.pathsep) if p]
            paths = [os.path.expanduser(kubeconfig)] if kubeconfig is not None else env_paths or [os.path.expanduser(path)]
            resolved = check_kubeconfig([p for p in paths if os.path.exists(p)], context, o)
            # persist_config=False: refreshed tokens must never be written back (we are read-only).
            from kubernetes.config import kube_config

            with _capture_kube_logs(problems):
                if resolved is None:  # no context chosen: the client's loader says so in its words
                    loader = kube_config._get_kube_config_loader(filename=path, active_context=context, persist_config=False)
                else:
                    if not resolved.cluster.get("server"):
                        raise ClusterAccessError(
                            f"no server to talk to: the kubeconfig's cluster {resolved.cluster_name or '(none)'!r} has no "
                            f"server; give --server or fix the kubeconfig"
                        )
                    impersonation = resolved.impersonation
                    # The one context kubectl would use, overrides applied (kubeconfig.check_kubeconfig);
                    # exec plugins run in the user's kubeconfig directory, as before.
                    base = os.path.dirname(os.path.abspath(resolved.user_file)) if resolved.user_file else ""
                    loader = kube_config.KubeConfigLoader(config_dict=resolved.as_kubeconfig(), config_base_path=base)
                server = str(loader._cluster.safe_get("server") or "")
                if not _is_https(server):
                    # clientcmd reads the user's identification (token, tokenFile, basic auth, client
                    # certificate, exec plugin) only when the server is https (client-go
                    # tools/clientcmd/client_config.go DirectClientConfig.ClientConfig, "only try to
                    # read the auth information if we are secure"): nothing is read, run or sent.
                    # Impersonation is set before that test, so it is sent over http too.
                    loader._user = None
                plugin = loader._user.safe_get("exec") if loader._user else None
                loader.load_and_set(cfg)
            if plugin is not None and problems:
                # client-go fails the request before it is sent (exec.go roundTripper.RoundTrip);
                # the Python loader logs and carries on without credentials.
                raise ClusterAccessError(credential_failure(display_url(server), plugin, problems[-1]))
    except ClusterAccessError:
        raise
    except ConfigException as e:
        # Also covers exec credential plugins that fail while the kubeconfig is loaded.
        raise ClusterAccessError(f"cannot use kubeconfig{' ' + kubeconfig if kubeconfig else ''}: {e}") from None
    except (OSError, ValueError) as e:
        raise ClusterAccessError(f"cannot load kubeconfig: {_first_line(str(e))}") from None
    except Exception as e:  # noqa: BLE001 - the client's loader fails on odd shapes with any exception
        raise ClusterAccessError(
            f"cannot use kubeconfig{' ' + kubeconfig if kubeconfig else ''}: {type(e).__name__}: {_first_line(str(e))}"
        ) from None
    # We retry ourselves (bounded, status-aware); urllib3's own retries would hide connection errors
    # behind MaxRetryError and multiply the wait on an unreachable server.
    cfg.retries = False
    if not cfg.verify_ssl and _is_https(str(cfg.host or "")):
        _warn_once(_insecure_warning())
    return ReadOnlyClient(kclient.ApiClient(configuration=cfg), request_timeout, problems, impersonation)


def _in_cluster(cfg: Any, o: Any) -> tuple[tuple[str, str], ...]:
    """The pod's service account (kubernetes' load_incluster_config) with the flags client-go's
    inClusterClientConfig.ClientConfig takes there: --token replaces the account's token and
    --certificate-authority its CA (--server never gets here: with it the kubeconfig path is
    taken, as DeferredLoadingClientConfig does). Returns the Impersonate-* header lines.
    UPSTREAM-DIFF: kubectl drops --as/--as-group/--as-uid in a pod (inClusterClientConfig reads no
    impersonation) and ignores --cluster, --user and the TLS flags; here impersonation is honoured
    and the others are refused, rather than the user's request being silently dropped."""
    from kubernetes import config as kconfig

    from .kubeconfig import _apply_user, _check_impersonation, impersonation_headers

    ignored = [f for f, v in (("--cluster", o.cluster), ("--user", o.user), ("--insecure-skip-tls-verify", o.insecure_skip_tls_verify),
                              ("--tls-server-name", o.tls_server_name)) if v]
    if ignored:
        raise ClusterAccessError(f"{ignored[0]} needs a kubeconfig (or --server): in a pod without one, kubectl-wap uses the "
                                 f"service account, which has no kubeconfig clusters or users to pick")
    kconfig.load_incluster_config(client_configuration=cfg, try_refresh_token=not o.token)
    if o.token:
        register_secret(o.token)
        cfg.api_key["BearerToken"] = f"Bearer {o.token}"
        cfg.refresh_api_key_hook = None
    if o.certificate_authority:
        cfg.ssl_ca_cert = os.path.abspath(os.path.expanduser(o.certificate_authority))
    flags_user = _apply_user({}, o)
    _check_impersonation("the in-cluster service account", flags_user)
    return impersonation_headers(flags_user)


def _warn_once(text: str) -> None:
    if say_warning is not None and text not in _warned:
        _warned.add(text)
        say_warning(text)


def _insecure_warning() -> str:
    """The one line said when TLS verification is off, in place of urllib3's InsecureRequestWarning
    per request (silenced here: the same fact 30 times says nothing more)."""
    import warnings

    from urllib3.exceptions import InsecureRequestWarning

    warnings.filterwarnings("ignore", category=InsecureRequestWarning)
    return ("TLS verification is off (insecure-skip-tls-verify): the API server's certificate is not checked, "
            "so anyone on the path could answer in its place")


def _is_https(server: str) -> bool:
    """client-go rest/config.go IsConfigTransportTLS: the scheme is https (url.Parse lowercases it);
    a server without a scheme is http there (rest/url_utils.go DefaultServerURL, no CA known yet)."""
    try:
        return urlsplit(server.strip()).scheme == "https"
    except ValueError:
        return False


def _default_kubeconfig_exists() -> bool:
    env = os.environ.get("KUBECONFIG")
    paths = env.split(os.pathsep) if env else ["~/.kube/config"]
    return any(p and os.path.exists(os.path.expanduser(p)) for p in paths)
