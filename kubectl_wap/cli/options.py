"""Option sets shared by the analysing commands (issue 16): one definition of the source options
(--snapshot/--demo/--kubeconfig/--context/-n/--feature-gates/--request-timeout, and kubectl's
connection flags --cluster/--user/--server/--token/--as*/TLS in Connection) and of the
hypothetical-work options (-f/--replicas/--requests/...), reused by `whatif`, `explain`, `rank
--for` and `diff`, so a flag means the same thing everywhere and no command silently lacks one.

`@options(source=Source, hyp=Hypothetical)` replaces the command's `source`/`hyp` parameters by
the group's flags in the signature typer reads, and hands the command the filled dataclasses."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Optional

import typer

from ..errors import UserError


def _opt(*names: str, help: str, callback: Callable[..., Any] | None = None, metavar: str | None = None) -> Any:
    return typer.Option(*names, help=help, callback=callback, metavar=metavar)


def _set_max_input(value: Optional[str]) -> Optional[str]:
    """--max-input-size: applies to every file the command reads (snapshot, -f, node templates)."""
    if value is None:
        return value
    from ..quantity import QuantityError, parse_quantity
    from ..snapshot.io.files import set_max_input_size

    try:
        n = parse_quantity(value)
    except QuantityError:
        raise typer.BadParameter(f"want a size such as 4Gi, 500M or 1000000, got {value!r}") from None
    if n < 1 or n != int(n):
        raise typer.BadParameter(f"want a whole number of bytes of at least 1, got {value!r}")
    set_max_input_size(int(n))
    return value



@dataclass(slots=True)
class Connection:
    """kubectl's global connection flags (cli-runtime's ConfigFlags: client-go ConfigOverrides), for
    every command that reads a live cluster. Source includes them; the commands that take Source's
    options one by one take this group whole (`@options(conn=Connection)`)."""

    cluster: Annotated[Optional[str], _opt("--cluster", metavar="NAME", help="The name of the kubeconfig cluster to use (live cluster only).")] = None
    user: Annotated[Optional[str], _opt("--user", metavar="NAME", help="The name of the kubeconfig user to use (live cluster only).")] = None
    server: Annotated[Optional[str], _opt("--server", metavar="URL", help="The address and port of the Kubernetes API server (replaces the cluster's server).")] = None
    token: Annotated[Optional[str], _opt("--token", metavar="TOKEN", help="Bearer token for authentication to the API server (a kubeconfig tokenFile still wins, as in kubectl).")] = None
    as_user: Annotated[Optional[str], _opt("--as", metavar="USER", help="Username to impersonate for the operation (Impersonate-User).")] = None
    as_group: Annotated[Optional[list[str]], _opt("--as-group", metavar="GROUP", help="Group to impersonate for the operation; repeat for several groups (needs --as or the kubeconfig's as).")] = None
    as_uid: Annotated[Optional[str], _opt("--as-uid", metavar="UID", help="UID to impersonate for the operation.")] = None
    insecure_skip_tls_verify: Annotated[bool, _opt("--insecure-skip-tls-verify", help="Do not check the server's certificate (insecure; says so once).")] = False
    tls_server_name: Annotated[Optional[str], _opt("--tls-server-name", metavar="NAME", help="Server name to use for certificate validation (default: the server's host name).")] = None
    certificate_authority: Annotated[Optional[str], _opt("--certificate-authority", metavar="FILE", help="Path to a cert file for the certificate authority.")] = None

    def overrides(self) -> Any:
        """The flags as client-go's ConfigOverrides (snapshot/io/kubeconfig.py Overrides)."""
        from ..snapshot.io.kubeconfig import Overrides

        return Overrides(cluster=self.cluster, user=self.user, server=self.server, token=self.token, as_user=self.as_user,
                         as_groups=tuple(self.as_group or ()), as_uid=self.as_uid,
                         insecure_skip_tls_verify=self.insecure_skip_tls_verify, tls_server_name=self.tls_server_name,
                         certificate_authority=self.certificate_authority)

    def connection(self) -> dict[str, Any]:
        """The group's values by field name (to build a Source from a Connection)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(Connection)}


@dataclass(slots=True)
class Source(Connection):
    """Where the cluster state comes from, and the object's namespace."""

    snapshot: Annotated[Optional[str], _opt("--snapshot", "-s", metavar="FILE", help="Read cluster state from this snapshot/manifest file or directory (.json, .yaml, .gz, `kubectl get -o yaml` dumps).")] = None
    demo: Annotated[bool, _opt("--demo", help="Use the bundled demo cluster. --demo kueue: the Kueue demo (whatif -f docs/examples/kueue-job.yaml); --demo dra: the DRA demo.")] = False
    kubeconfig: Annotated[Optional[str], _opt("--kubeconfig", metavar="FILE", help="Path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config).")] = None
    context: Annotated[Optional[str], _opt("--context", metavar="NAME", help="The kubeconfig context to use (live cluster only).")] = None
    namespace: Annotated[Optional[str], _opt("--namespace", "-n", metavar="NAME", help="Namespace of the object (default: the context's namespace, else 'default').")] = None
    feature_gates: Annotated[Optional[str], _opt("--feature-gates", metavar="GATES", help="kube-scheduler feature gates. Defaults: GenericWorkload=true, CompositePodGroup=true, PodGroupPreemptionPolicy=false, TopologyAwareWorkloadScheduling=true.")] = None
    scheduler_version: Annotated[Optional[str], _opt("--scheduler-version", metavar="VERSION", help="Kubernetes minor version whose kube-scheduler rules to follow: 1.37 or 1.38 (unreleased: rules read from v1.38.0-beta.0). Default: the server's version (live: /version; snapshot: its header), else the newest released (1.37).")] = None
    request_timeout: Annotated[Optional[str], _opt("--request-timeout", metavar="DURATION", help="How long to wait for each API request, as kubectl reads it: 30 (seconds), 5s, 1m; 0 waits forever. Default 30s.")] = None
    max_input_size: Annotated[Optional[str], _opt("--max-input-size", metavar="SIZE", callback=_set_max_input, help="Refuse input files larger than this after decompression (default 4Gi).")] = None

    def check(self) -> None:
        """kubectl refuses flags that cannot apply; so do we (rather than ignore them)."""
        offline = "--snapshot" if self.snapshot else "--demo" if self.demo else None
        if offline and self.context:
            raise UserError(f"--context applies to a live cluster; it cannot be combined with {offline} (the state comes from the file)")
        if offline and self.kubeconfig:
            raise UserError(f"--kubeconfig applies to a live cluster; it cannot be combined with {offline}")
        if offline and self.request_timeout is not None:  # as docs/live-clusters.md says; any value was taken and never read
            raise UserError(f"--request-timeout applies to a live cluster; it cannot be combined with {offline}")
        given = self.overrides().any_set() if offline else []
        if given:
            raise UserError(f"{given[0]} applies to a live cluster; it cannot be combined with {offline}")


@dataclass(slots=True)
class Hypothetical:
    """Work that does not exist yet: a flags-only PodGroup, or objects from a file."""

    file: Annotated[Optional[str], _opt("--filename", "-f", metavar="FILE", help="Hypothetical PodGroup/CompositePodGroup tree and pods (or one pod template with --replicas).")] = None
    replicas: Annotated[Optional[int], _opt("--replicas", metavar="N", help="Hypothetical: number of pods.")] = None
    requests: Annotated[Optional[str], _opt("--requests", metavar="RESOURCES", help="Hypothetical: per-pod requests, e.g. cpu=8,memory=64Gi,nvidia.com/gpu=1.")] = None
    priority_class: Annotated[Optional[str], _opt("--priority-class", metavar="NAME", help="Hypothetical: priorityClassName.")] = None
    min_count: Annotated[Optional[int], _opt("--min-count", metavar="N", help="Hypothetical: gang minCount (omit for a Basic group).")] = None
    disruption_mode: Annotated[Optional[str], _opt("--disruption-mode", metavar="MODE", help="Hypothetical: single or all.")] = None
    node_selector: Annotated[Optional[list[str]], _opt("--node-selector", metavar="KEY=VALUE", help="Hypothetical: key=value (repeatable).")] = None
    toleration: Annotated[Optional[list[str]], _opt("--toleration", metavar="KEY=VALUE:EFFECT", help="Hypothetical: key=value:Effect (repeatable).")] = None
    preemption_policy: Annotated[Optional[str], _opt("--preemption-policy", metavar="POLICY", help="Hypothetical: PreemptLowerPriority or Never.")] = None
    ignore_gates: Annotated[bool, _opt("--ignore-gates", help="Answer as if the pods' schedulingGates were removed (kube-scheduler does not try a gated pod).")] = False
    no_kueue: Annotated[bool, _opt("--no-kueue", help="On a Kueue cluster, leave out Kueue's admission stage: kube-scheduler's answer alone, as if the Job's pods existed.")] = False
    kueue_config: Annotated[Optional[str], _opt("--kueue-config", metavar="FILE", help="Kueue's Configuration (or the ConfigMap kueue-system/kueue-manager-config holding it); without it Kueue's defaults are assumed.")] = None


def _long_names(ann: Any) -> list[str]:
    info = ann.__metadata__[0]
    # In Annotated, typer.Option's first name lands in `default`, the others in param_decls.
    names = [info.default] + list(info.param_decls or ())
    return [n for n in names if isinstance(n, str) and n.startswith("--")]


def flag_names(group: type) -> list[str]:
    """The long flags of a group (for completion)."""
    return [n for _, ann, _ in _resolved_fields(group) for n in _long_names(ann)]


def from_words(group: type, value_of: Callable[[str], Optional[str]], values_of: Callable[[str], list[str]],
               present: Callable[[str], bool]) -> Any:
    """The group built from a command line's words (completion reads the flags typed so far):
    each field by its long flag, a list field from every occurrence, a boolean by presence."""
    kwargs: dict[str, Any] = {}
    for name, ann, default in _resolved_fields(group):
        flag = _long_names(ann)[0]
        if isinstance(default, bool):
            kwargs[name] = present(flag)
        elif list in (typing.get_origin(a) for a in typing.get_args(typing.get_args(ann)[0])):
            kwargs[name] = values_of(flag) or None
        else:
            kwargs[name] = value_of(flag)
    return group(**kwargs)


@functools.cache
def group_hints(group: type) -> dict[str, Any]:
    """The group's resolved annotations, once per process: get_type_hints evaluates every string
    annotation again on each call (eval + compile), and the CLI module asks ~20 times at import
    (issue 18: ~10 % of `kubectl wap --help`)."""
    return typing.get_type_hints(group, include_extras=True)


def _resolved_fields(group: type) -> list[tuple[str, Any, Any]]:
    """The group's fields, its own first and then those it inherits (Source's --snapshot leads
    --help, Connection's kubectl flags follow)."""
    hints = group_hints(group)
    own = set(vars(group).get("__annotations__", {}))
    fields = sorted(dataclasses.fields(group), key=lambda f: f.name not in own)
    return [(f.name, hints[f.name], f.default) for f in fields]


def options(**groups: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: each keyword names a parameter of the command that receives a filled group."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn)
        hints = typing.get_type_hints(fn, include_extras=True)  # real objects, not strings
        params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values() if p.name not in groups]
        owned: dict[str, list[str]] = {}
        seen = {p.name for p in params}
        for pname, group in groups.items():
            owned[pname] = []
            for fname, ann, default in _resolved_fields(group):
                if fname in seen:
                    raise TypeError(f"{fn.__name__}: option {fname} defined twice")
                seen.add(fname)
                owned[pname].append(fname)
                params.append(inspect.Parameter(fname, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=ann))

        @functools.wraps(fn)
        def command(**kwargs: Any) -> Any:
            for pname, group in groups.items():
                kwargs[pname] = group(**{f: kwargs.pop(f) for f in owned[pname]})
            return fn(**kwargs)

        command.__signature__ = sig.replace(parameters=_ordered(params), return_annotation=inspect.Signature.empty)  # type: ignore[attr-defined]
        command.__annotations__ = {}
        del command.__wrapped__  # typer must read __signature__, not the undecorated function
        return command

    return wrap


def _ordered(params: list[inspect.Parameter]) -> list[inspect.Parameter]:
    """Positional-or-keyword parameters first (inspect requires it); everything keyword-only
    after, in the order given."""
    pos = [p for p in params if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    kw = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
    return pos + kw


def _unknown_demo(name: str) -> str:
    import difflib

    from ..snapshot.io.files import DEMOS

    close = difflib.get_close_matches(name, list(DEMOS), n=1)
    return (f"no bundled demo {name!r}" + (f" (did you mean {close[0]}?)" if close else "")
            + f"; --demo alone is the default demo, --demo {' | --demo '.join(sorted(DEMOS))} the others")


def demo_typo(args: list[str], extra: str) -> str | None:
    """The error for click's "unexpected extra argument" when that argument is a misspelt demo
    name right after --demo (`--demo kuee`): demo_args left it alone, as it leaves a kind or a name
    there, and click then named only the stray word."""
    import difflib

    from ..snapshot.io.files import DEMOS

    for a, b in zip(args, args[1:]):
        if a == "--":
            break
        if a == "--demo" and b == extra and difflib.get_close_matches(b, list(DEMOS), n=1):
            return _unknown_demo(b)
    return None


def demo_args(args: list[str]) -> list[str]:
    """`--demo NAME` / `--demo=NAME` as `--snapshot @demo-NAME` (snapshot/io/files.py DEMOS). --demo
    stays a flag (`whatif --demo podgroup x` keeps working): only a bundled demo's name right after
    it is taken, and no object of the default demo is named like one. An unknown `--demo=NAME`
    is one line with the names there are. Nothing after `--` is touched."""
    from ..snapshot.io.files import DEMOS

    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out.extend(args[i:])
            break
        if a == "--demo" and i + 1 < len(args) and args[i + 1] in DEMOS:
            out += ["--snapshot", DEMOS[args[i + 1]]]
            i += 2
            continue
        if a.startswith("--demo="):
            name = a.split("=", 1)[1]
            if name not in DEMOS:
                raise UserError(_unknown_demo(name))
            out += ["--snapshot", DEMOS[name]]
            i += 1
            continue
        out.append(a)
        i += 1
    return out
