"""Kubeconfig files: check them before the kubernetes client loads them, register their
credentials, and read the defaults we need (contexts, the current context's namespace).

The kubernetes client's loader turns a malformed kubeconfig (a list, a scalar, a user that is a
string) into AttributeError/TypeError tracebacks, and some of its messages would carry credential
values. Here each file is read with the same bounds as any input (size, no YAML aliases), its shape
checked with one-line errors naming the file and the field, and every credential in it registered
with :func:`kubectl_wap.errors.register_secret`, so no message printed later can show one.

Auth providers (``users[].user.auth-provider``: oidc, gcp, azure) are refused: their token refresh
sends requests (a POST to the identity provider) through their own HTTP clients, outside the
read-only transport. An exec credential plugin (e.g. kubelogin) gives the same credentials and runs
as a separate process, bounded by --request-timeout (see :func:`bound_exec_plugins`).
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import types
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from ...errors import ClusterAccessError, register_secret

MAX_KUBECONFIG_BYTES = 16 << 20  # kubeconfigs are kilobytes; this only stops /dev/zero and friends

# user fields whose values are credentials (client-go's AuthInfo); *-data are base64 of PEM/tokens
_SECRET_FIELDS = ("token", "password", "client-key-data", "client-certificate-data")
_SECRET_FILES = ("tokenFile", "client-key")


def display_url(url: str) -> str:
    """`url` without a `user:password@` part: the form every message and snapshot header uses."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable server URL>"
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return parts._replace(netloc=host).geturl()


def _register_url(url: Any) -> None:
    if not isinstance(url, str):
        return
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    if parts.password:
        register_secret(parts.password)
        register_secret(unquote(parts.password))
        register_secret(parts.netloc.rsplit("@", 1)[0])


def _read_file_secret(path: Any, base: str) -> None:
    if not isinstance(path, str) or not path:
        return
    full = os.path.join(base, os.path.expanduser(path))
    try:
        if not os.path.isfile(full):
            return
        with open(full, "rb") as f:
            register_secret(f.read(MAX_KUBECONFIG_BYTES))
    except OSError:
        return


def load_document(path: str) -> Any:
    """The parsed kubeconfig at `path` (bounded size, YAML aliases budgeted)."""
    from .safeyaml import safe_yaml

    try:
        if not os.path.isfile(path):
            raise ClusterAccessError(f"kubeconfig {path}: not a regular file")
        with open(path, "rb") as f:
            raw = f.read(min(os.fstat(f.fileno()).st_size, MAX_KUBECONFIG_BYTES) + 1)
    except OSError as e:
        raise ClusterAccessError(f"kubeconfig {path}: cannot read: {e.strerror or e}") from None
    if len(raw) > MAX_KUBECONFIG_BYTES:
        raise ClusterAccessError(f"kubeconfig {path}: larger than {MAX_KUBECONFIG_BYTES >> 20} MiB")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ClusterAccessError(f"kubeconfig {path}: not UTF-8 text") from None
    return safe_yaml(text, f"kubeconfig {path}", ClusterAccessError)


def _named(doc: dict, key: str, inner: str, path: str) -> dict[str, dict]:
    """{name: entry[inner]} for a kubeconfig list (clusters/users/contexts), shape-checked."""
    v = doc.get(key)
    if v is None:
        return {}
    if not isinstance(v, list):
        raise ClusterAccessError(f"kubeconfig {path}: {key} must be a list, found {type(v).__name__}")
    out: dict[str, dict] = {}
    for i, e in enumerate(v):
        if not isinstance(e, dict) or not isinstance(e.get("name"), str):
            raise ClusterAccessError(f"kubeconfig {path}: {key}[{i}] must be a map with a string 'name'")
        body = e.get(inner)
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise ClusterAccessError(f"kubeconfig {path}: {key}[{i}] ({e['name']}): {inner} must be a map, found {type(body).__name__}")
        out.setdefault(e["name"], body)
    return out


@dataclass(frozen=True, slots=True)
class Overrides:
    """kubectl's global connection flags, client-go's clientcmd.ConfigOverrides: --cluster and --user
    pick kubeconfig entries (the context's own otherwise); the other fields replace the picked
    entry's values (mergo's overwrite of non-empty values in DirectClientConfig.getCluster and
    getAuthInfo)."""

    cluster: str | None = None
    user: str | None = None
    server: str | None = None
    token: str | None = None
    as_user: str | None = None
    as_groups: tuple[str, ...] = ()
    as_uid: str | None = None
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None
    certificate_authority: str | None = None

    def any_set(self) -> list[str]:
        """The kubectl flags given (for refusing them with --snapshot/--demo)."""
        names = {"cluster": "--cluster", "user": "--user", "server": "--server", "token": "--token",
                 "as_user": "--as", "as_groups": "--as-group", "as_uid": "--as-uid",
                 "insecure_skip_tls_verify": "--insecure-skip-tls-verify", "tls_server_name": "--tls-server-name",
                 "certificate_authority": "--certificate-authority"}
        return [flag for attr, flag in names.items() if getattr(self, attr)]


@dataclass(frozen=True, slots=True)
class Resolved:
    """The cluster and user entries kubectl would use, overrides applied, file paths absolute."""

    cluster_name: str
    user_name: str
    cluster: dict[str, Any]
    user: dict[str, Any]
    user_file: str | None = None  # the kubeconfig the user came from (exec plugins run there)
    impersonation: tuple[tuple[str, str], ...] = field(default=())

    def as_kubeconfig(self) -> dict[str, Any]:
        """A one-context kubeconfig of the resolved entries, for the kubernetes client's loader."""
        return {
            "current-context": "wap", "contexts": [{"name": "wap", "context": {"cluster": "c", "user": "u"}}],
            "clusters": [{"name": "c", "cluster": self.cluster}], "users": [{"name": "u", "user": self.user}],
        }


# client-go transport/round_trippers.go legalHeaderKeyBytes: net/http's token bytes (RFC 7230
# tchar). headerKeyEscape %-encodes every other byte of an Impersonate-Extra key, and '%' too.
_TOKEN_BYTES = frozenset(b"!#$&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _escape_extra_key(key: str) -> str:
    """client-go headerKeyEscape: %XX (upper-case hex) for each UTF-8 byte that is not a header
    token byte, and for '%'."""
    return "".join(chr(b) if b in _TOKEN_BYTES else f"%{b:02X}" for b in key.encode("utf-8"))


def _canonical_header(name: str) -> str:
    """Go's textproto.CanonicalMIMEHeaderKey, which http.Header.Add applies: upper-case the first
    letter and each letter after '-', lower-case the rest (so client-go's %2F goes out as %2f)."""
    out, upper = [], True
    for ch in name:
        out.append(ch.upper() if upper else ch.lower())
        upper = ch == "-"
    return "".join(out)


def impersonation_headers(user: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The Impersonate-* headers of a resolved kubeconfig user (client-go
    transport/round_trippers.go impersonatingRoundTripper.RoundTrip), in the order it adds them.
    None without `as`: DirectClientConfig.ClientConfig impersonates only when a user is named
    (validation refuses groups, uid or extra without one, see :func:`_check_impersonation`)."""
    name = user.get("as")
    if not isinstance(name, str) or not name:
        return ()
    out: list[tuple[str, str]] = [("Impersonate-User", name)]
    uid = user.get("as-uid")
    if isinstance(uid, str) and uid:
        out.append(("Impersonate-Uid", uid))
    out.extend(("Impersonate-Group", str(g)) for g in user.get("as-groups") or ())
    extra = user.get("as-user-extra") or {}
    for key, values in extra.items():
        header = _canonical_header("Impersonate-Extra-" + _escape_extra_key(str(key)))
        out.extend((header, str(v)) for v in (values if isinstance(values, list) else [values]))
    for _, value in out:
        if any(ord(ch) < 0x20 and ch != "\t" or ord(ch) == 0x7F for ch in value):
            raise ClusterAccessError("an impersonation value (--as, --as-group, --as-uid or the kubeconfig's as*) contains "
                                     "a line break or control character; it cannot be sent as an HTTP header")
    return tuple(out)


def _check_impersonation(name: str, user: dict[str, Any]) -> None:
    """client-go tools/clientcmd/validation.go validateAuthInfo: uid, groups or extra need a user."""
    if (user.get("as-uid") or user.get("as-groups") or user.get("as-user-extra")) and not user.get("as"):
        raise ClusterAccessError(f"error in configuration: requesting uid, groups or user-extra for {name} without impersonating "
                                 f"a user (give --as USER, or `as:` in the kubeconfig user)")
    extra = user.get("as-user-extra")
    if extra is not None and not (isinstance(extra, dict) and all(isinstance(v, (list, str)) for v in extra.values())):
        raise ClusterAccessError(f"kubeconfig user {name}: as-user-extra must be a map of lists of strings")
    groups = user.get("as-groups")
    if groups is not None and not isinstance(groups, list):
        raise ClusterAccessError(f"kubeconfig user {name}: as-groups must be a list of strings")


def _missing(what: str, name: str, known: dict[str, Any], flag: str) -> ClusterAccessError:
    """kubectl's words ("cluster "x" does not exist") plus the closest names the kubeconfig has."""
    from ...model.lookup import did_you_mean

    hint = did_you_mean(name, known) or (f" (the kubeconfig has: {', '.join(sorted(known)[:8])})" if known else " (the kubeconfig has none)")
    return ClusterAccessError(f"{what} {name!r} does not exist in the kubeconfig{hint}; check {flag}")


def _absolute(entry: dict[str, Any], fields: tuple[str, ...], base: str) -> dict[str, Any]:
    out = dict(entry)
    for f in fields:
        v = out.get(f)
        if isinstance(v, str) and v:
            out[f] = os.path.join(base, os.path.expanduser(v))
    return out


def _apply_cluster(cluster: dict[str, Any], o: Overrides) -> dict[str, Any]:
    """client-go DirectClientConfig.getCluster's overrides: --server replaces the server;
    --insecure-skip-tls-verify or --certificate-authority replace all three TLS-trust fields (so a
    kubeconfig CA does not clash with insecure); --tls-server-name, or --server alone, replaces
    tls-server-name (a new server clears the kubeconfig's name)."""
    c = dict(cluster)
    if o.server:
        c["server"] = o.server
    if o.insecure_skip_tls_verify or o.certificate_authority:
        c.pop("certificate-authority-data", None)
        c.pop("certificate-authority", None)
        c.pop("insecure-skip-tls-verify", None)
        if o.insecure_skip_tls_verify:
            c["insecure-skip-tls-verify"] = True
        if o.certificate_authority:
            c["certificate-authority"] = os.path.abspath(os.path.expanduser(o.certificate_authority))  # kubectl: relative to cwd
    if o.tls_server_name or o.server:
        c.pop("tls-server-name", None)
        if o.tls_server_name:
            c["tls-server-name"] = o.tls_server_name
    return c


def _apply_user(user: dict[str, Any], o: Overrides) -> dict[str, Any]:
    """client-go DirectClientConfig.getAuthInfo's overrides (mergo: a non-empty flag replaces the
    field; --as-group's list replaces the kubeconfig's as-groups)."""
    u = dict(user)
    if o.token:
        u["token"] = o.token
        register_secret(o.token)
    tf = u.get("tokenFile")
    if u.get("token") and isinstance(tf, str) and tf and os.path.isfile(tf):
        # client-go keeps both and its bearer round tripper (transport/round_trippers.go
        # bearerAuthRoundTripper.RoundTrip) sends the file's token whenever the file reads: so the
        # kubeconfig's tokenFile wins over `token:` and over --token (checked against kubectl 1.37).
        del u["token"]
    if o.as_user:
        u["as"] = o.as_user
    if o.as_groups:
        u["as-groups"] = list(o.as_groups)
    if o.as_uid:
        u["as-uid"] = o.as_uid
    return u


def check_kubeconfig(paths: list[str], context: str | None, overrides: Overrides | None = None) -> Resolved | None:
    """Validate the kubeconfig file(s) (KUBECONFIG merge order: first definition wins), register
    every credential, refuse an auth-provider on the user the chosen context selects, and resolve
    the cluster and user kubectl would use (client-go DirectClientConfig: --context, --cluster,
    --user pick entries and must exist when given; flags then override fields). None when no
    context is chosen and no flag names a cluster or server (the client's loader reports it)."""
    o = overrides or Overrides()
    clusters: dict[str, dict] = {}
    users: dict[str, dict] = {}
    bases: dict[tuple[str, str], tuple[str, str]] = {}  # (kind, name) -> (file, its directory)
    contexts: dict[str, dict] = {}
    current = None
    for path in paths:
        doc = load_document(path)
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise ClusterAccessError(f"kubeconfig {path}: expected a map (apiVersion: v1, kind: Config), found {type(doc).__name__}")
        base = os.path.dirname(os.path.abspath(path))
        for name, c in _named(doc, "clusters", "cluster", path).items():
            clusters.setdefault(name, c)
            bases.setdefault(("cluster", name), (path, base))
            _register_url(c.get("server"))
            _register_url(c.get("proxy-url"))
        for name, u in _named(doc, "users", "user", path).items():
            users.setdefault(name, u)
            bases.setdefault(("user", name), (path, base))
            for k in _SECRET_FIELDS:
                register_secret(u.get(k))
            for k in _SECRET_FILES:
                _read_file_secret(u.get(k), base)
            ap = u.get("auth-provider")
            if isinstance(ap, dict) and isinstance(ap.get("config"), dict):
                for v in ap["config"].values():
                    register_secret(v)
            ex = u.get("exec")
            if isinstance(ex, dict) and isinstance(ex.get("env"), list):
                for e in ex["env"]:
                    if isinstance(e, dict):
                        register_secret(e.get("value"))
        for name, c in _named(doc, "contexts", "context", path).items():
            contexts.setdefault(name, c)
        if current is None and isinstance(doc.get("current-context"), str):
            current = doc["current-context"]
    if context and context not in contexts:
        raise _missing("context", context, contexts, "--context")
    chosen = contexts.get(context or current or "")
    if chosen is None and not (o.cluster or o.server):
        return None  # the client's loader reports a missing context in its own words
    chosen = chosen or {}
    user_name = o.user or str(chosen.get("user") or "")
    cluster_name = o.cluster or str(chosen.get("cluster") or "")
    if o.user and o.user not in users:
        raise _missing("user", o.user, users, "--user")
    if o.cluster and o.cluster not in clusters:
        raise _missing("cluster", o.cluster, clusters, "--cluster")
    user = users.get(user_name)
    cluster = clusters.get(cluster_name)
    server = (o.server or (cluster.get("server") if cluster else None))
    if isinstance(server, str) and urlsplit(server.strip()).scheme == "https":
        # The files read for an https server (for http none is: readonly.connect drops the user,
        # and the CA is not used), checked before the client's loader opens them.
        if cluster:
            _check_files(cluster, ("certificate-authority",), "cluster", cluster_name, bases)
        if user:
            _check_files(user, ("tokenFile", "client-certificate", "client-key"), "user", user_name, bases)
    if user and user.get("auth-provider") is not None:
        ap = user["auth-provider"]
        name = ap.get("name") if isinstance(ap, dict) else None
        raise ClusterAccessError(
            f"the kubeconfig user {user_name} uses auth-provider {name or '?'!s}, which kubectl-wap does not "
            f"support: its token refresh sends requests outside the read-only transport. Use an exec credential "
            f"plugin instead (for OIDC: kubelogin, `kubectl oidc-login`)"
        )
    ufile, ubase = bases.get(("user", user_name), (None, ""))
    _, cbase = bases.get(("cluster", cluster_name), (None, ""))
    merged_user = _apply_user(_absolute(user or {}, ("tokenFile", "client-certificate", "client-key"), ubase), o)
    merged_cluster = _apply_cluster(_absolute(cluster or {}, ("certificate-authority",), cbase), o)
    _check_impersonation(user_name or "the user", merged_user)
    if merged_user.get("token") and (merged_user.get("username") or merged_user.get("password")):
        # client-go validateAuthInfo: a token (e.g. --token) with basic auth is refused, not chosen between
        raise ClusterAccessError(f"error in configuration: more than one authentication method found for {user_name}; "
                                 f"found [token basicAuth], only one is allowed")
    return Resolved(cluster_name, user_name, merged_cluster, merged_user, ufile, impersonation_headers(merged_user))


def _check_files(entry: dict, fields: tuple[str, ...], kind: str, name: str,
                 bases: dict[tuple[str, str], tuple[str, str]]) -> None:
    """Each file `entry` names must be a regular file of at most MAX_KUBECONFIG_BYTES: a FIFO
    would block the loader forever, /dev/zero would fill memory. A missing file is left to the
    loader's own message."""
    path, base = bases.get((kind, name), ("kubeconfig", ""))
    for field in fields:
        value = entry.get(field)
        if not isinstance(value, str) or not value:
            continue
        full = os.path.join(base, os.path.expanduser(value))
        try:
            st = os.stat(full)
        except OSError:
            continue
        where = f"kubeconfig {path}: {kind} {name}: {field} {value}"
        if not stat.S_ISREG(st.st_mode):
            what = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a directory" if stat.S_ISDIR(st.st_mode) else "a device or socket"
            raise ClusterAccessError(f"{where} is {what}, not a regular file")
        if st.st_size > MAX_KUBECONFIG_BYTES:
            raise ClusterAccessError(f"{where} is larger than {MAX_KUBECONFIG_BYTES >> 20} MiB; not a credential file")


def credential_failure(server: str, plugin: Any, problem: str) -> str:
    """One line for an exec credential plugin that failed, in client-go's words where it has them
    (plugin/pkg/client/auth/exec/exec.go wrapCmdRunErrorLocked): a command that is not there is
    "exec: executable CMD not found" followed by the kubeconfig's installHint (its lines joined)."""
    command = plugin.get("command") if isinstance(plugin, dict) else None
    if "[Errno 2]" in problem and isinstance(command, str):
        hint = plugin.get("installHint")  # type: ignore[union-attr]
        problem = f"exec: executable {command} not found"
        if isinstance(hint, str) and hint.strip():
            problem += "; " + " ".join(ln.strip() for ln in hint.splitlines() if ln.strip())
    return f"cannot get credentials for {server}: the kubeconfig's credential plugin failed: {problem}"


class _BoundedPopen(subprocess.Popen):  # type: ignore[type-arg]
    """Popen whose communicate() gives up (and kills the plugin) after the request timeout."""

    timeout: float = 30.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Its own process group (a new session): at the deadline the plugin and every process it
        # started go together. Killing the plugin alone left a child holding its stdout open, and
        # communicate() waited for that child (45 s past a 4 s timeout).
        kwargs["start_new_session"] = True
        super().__init__(*args, **kwargs)

    def communicate(self, input: Any = None, timeout: float | None = None) -> Any:  # noqa: A002
        try:
            return super().communicate(input, timeout=timeout if timeout is not None else self.timeout)
        except subprocess.TimeoutExpired:
            self._kill_group()
            try:
                super().communicate(timeout=5)
            except subprocess.TimeoutExpired:  # a process that left the group still holds a pipe
                for f in (self.stdout, self.stderr):
                    if f is not None:
                        f.close()
                self.wait()
            from kubernetes.config.config_exception import ConfigException

            raise ConfigException(
                f"exec: credential plugin {os.path.basename(str(self.args[0] if isinstance(self.args, list) else self.args))} "
                f"did not answer within {self.timeout:g}s and was stopped"
            ) from None


    def _kill_group(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)  # the group's id is the plugin's pid (new session)
        except OSError:
            self.kill()


def bound_exec_plugins(timeout: float) -> None:
    """Make the kubernetes client's exec credential plugins time out after `timeout` seconds.
    The client runs them with Popen.communicate() and no timeout: a hanging plugin would hang us."""
    from kubernetes.config import exec_provider

    _BoundedPopen.timeout = timeout
    shim = types.SimpleNamespace(**{k: getattr(subprocess, k) for k in ("PIPE", "DEVNULL", "STDOUT", "TimeoutExpired")})
    shim.Popen = _BoundedPopen
    exec_provider.subprocess = shim  # type: ignore[attr-defined]


# --- defaults (kubectl's loading rules: KUBECONFIG may list several files, the first that sets a
# value wins) ---

def _paths(kubeconfig: str | None) -> list[str]:
    if kubeconfig:
        return [os.path.expanduser(kubeconfig)]
    env = os.environ.get("KUBECONFIG", "")
    if env:
        return [os.path.expanduser(p) for p in env.split(os.pathsep) if p]
    return [os.path.expanduser("~/.kube/config")]


def merged(kubeconfig: str | None) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """(current-context, {context name: context}) merged over the files; unreadable files are
    skipped (this is for defaults and completion; the client reports real problems)."""
    current: str | None = None
    contexts: dict[str, dict[str, Any]] = {}
    for path in _paths(kubeconfig):
        try:
            cfg = load_document(path) or {}
        except Exception:  # noqa: BLE001 - unreadable files are skipped here; the client reports them
            continue
        if not isinstance(cfg, dict):
            continue
        current = current or cfg.get("current-context") or None
        for c in cfg.get("contexts") or []:
            if isinstance(c, dict) and isinstance(c.get("name"), str):
                contexts.setdefault(c["name"], c.get("context") or {})
    return current, contexts


def context_namespace(kubeconfig: str | None, context: str | None) -> str:
    current, contexts = merged(kubeconfig)
    ctx = contexts.get(context or current or "") or {}
    ns = ctx.get("namespace") if isinstance(ctx, dict) else None
    return ns if isinstance(ns, str) and ns else "default"
