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
    from .files import safe_yaml

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


def check_kubeconfig(paths: list[str], context: str | None) -> None:
    """Validate the kubeconfig file(s) (KUBECONFIG merge order: first definition wins), register
    every credential, and refuse an auth-provider on the user the chosen context selects."""
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
    chosen = contexts.get(context or current or "")
    if chosen is None:
        return  # the client's loader reports a missing context in its own words
    user = users.get(str(chosen.get("user") or ""))
    cluster_name = str(chosen.get("cluster") or "")
    cluster = clusters.get(cluster_name)
    server = cluster.get("server") if cluster else None
    if isinstance(server, str) and urlsplit(server.strip()).scheme == "https":
        # The files read for an https server (for http none is: readonly.connect drops the user,
        # and the CA is not used), checked before the client's loader opens them.
        _check_files(cluster, ("certificate-authority",), "cluster", cluster_name, bases)
        if user:
            _check_files(user, ("tokenFile", "client-certificate", "client-key"), "user", str(chosen.get("user")), bases)
    if user and user.get("auth-provider") is not None:
        ap = user["auth-provider"]
        name = ap.get("name") if isinstance(ap, dict) else None
        raise ClusterAccessError(
            f"the kubeconfig user {chosen.get('user')!s} uses auth-provider {name or '?'!s}, which kubectl-wap does not "
            f"support: its token refresh sends requests outside the read-only transport. Use an exec credential "
            f"plugin instead (for OIDC: kubelogin, `kubectl oidc-login`)"
        )


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
