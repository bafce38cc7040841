"""Shell completion (issue 16). One protocol, Cobra's `__complete` (what kubectl >= 1.26 runs for
plugins as `kubectl_complete-wap __complete ARGS... PARTIAL`), and thin shell scripts for the
standalone `kubectl-wap` command (`kubectl wap completion bash|zsh|fish|powershell`) that call it.

Candidates are static (commands, kinds, flags, formats) or dynamic: contexts from the kubeconfig,
namespaces and object names from the `--snapshot FILE` / `--demo` given on the line, or else from the
cluster of the line's `--kubeconfig`/`--context` (one list call, 2 s at most, nothing on any
failure: snapshot/io/names.py). Names are of pending pods and PodGroups for whatif, explain and
diff, of running ones for why-preempted (issue 33). The flags may stand anywhere before the cursor
(shells pass only the words before it, as Cobra's scripts do), in any form pflag reads."""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..report.escape import printable
from ..report.formats import FORMATS, HTML, TEMPLATE_FORMATS
from .options import Hypothetical, Source, flag_names

COMMANDS = ["whatif", "explain", "rank", "diff", "simulate", "pending", "why-preempted", "snapshot", "metrics", "mcp", "demo", "completion", "version"]
KIND_WORDS = ["podgroup", "compositepodgroup", "pod"]
SHELLS = ["bash", "zsh", "fish", "powershell"]
FILE_FLAGS = {"-f", "--filename", "-s", "--snapshot", "--kubeconfig", "--node-templates", "--output-file",
              "--certificate-authority"}
OTHER_FLAGS = ["--output", "--autoscale", "--node-templates", "--overschedule-multiplier", "--exit-code", "--no-headers",
               "--color", "--debug", "--selector", "--victim-namespace", "--to", "--order", "--limit", "--for",
               "--all-namespaces", "--priority", "--redact", "--output-file",
               "--at", "--max-cycles", "--time-limit", "--recreate-victims", "--no-recreate-victims", "--grace", "--grace-seconds",
               "--job-backoff-limit", "--storm-limit",  # simulate
               "--fail-if",  # whatif
               "--serve", "--interval", "--scale-up", "--no-scale-up", "--no-autoscale", "--top-units",  # metrics, pending
               "--yes"]  # demo load
FLAGS = flag_names(Source) + flag_names(Hypothetical) + OTHER_FLAGS
# every -o value of the one output contract (report/formats.py); html where a command has a page
OUTPUTS = [f + "=" if f in TEMPLATE_FORMATS else f for f in FORMATS] + [HTML]
NO_FILES, FILES = ":4", ":0"  # ShellCompDirectiveNoFileComp / Default


def _value_of(words: list[str], *flags: str) -> str | None:
    """The value of the last of `flags` on the line, in any form pflag takes: `-n ml`, `-n=ml`,
    `--namespace=ml` and the short flag's attached `-nml`."""
    found = None
    for i, w in enumerate(words):
        for f in flags:
            if w == f and i + 1 < len(words):
                found = words[i + 1]
            elif w.startswith(f + "="):
                found = w.split("=", 1)[1]
            elif len(f) == 2 and w.startswith(f) and len(w) > 2 and not w.startswith("--"):
                found = w[2:]
    return found


def _all_values(words: list[str], flag: str) -> tuple[str, ...]:
    """Every value of a repeatable flag (`--as-group a --as-group=b`)."""
    out = [w.split("=", 1)[1] if w != flag else words[i + 1]
           for i, w in enumerate(words) if w.startswith(flag + "=") or (w == flag and i + 1 < len(words))]
    return tuple(out)


def _snapshot(words: list[str]):
    """The model of the --snapshot/--demo on the line, or None (errors are silent here)."""
    try:
        from ..snapshot.io.files import load_demo, load_snapshot, snapshot_path

        from .options import demo_args

        words = demo_args(words)  # --demo kueue: the bundled @demo-kueue
        if "--demo" in words:
            return load_demo()
        path = _value_of(words, "--snapshot", "-s")
        return load_snapshot(snapshot_path(path)) if path else None  # @demo-kueue, @demo-dra: the bundled files
    except Exception:  # noqa: BLE001 - completion never fails loudly
        return None


def _live(words: list[str]) -> bool:
    """No snapshot on the line: the command would read the cluster, so completion does too."""
    return "--demo" not in words and _value_of(words, "--snapshot", "-s") is None


def _line_namespace(words: list[str]) -> str:
    """The namespace the command on the line would use: -n, else the context's (kubectl's rule)."""
    ns = _value_of(words, "--namespace", "-n")
    if ns is not None:
        return ns
    from ..snapshot.io.kubeconfig import context_namespace

    try:
        return context_namespace(_value_of(words, "--kubeconfig"), _value_of(words, "--context"))
    except Exception:  # noqa: BLE001 - completion never fails loudly
        return "default"


def _overrides(words: list[str]) -> Any:
    """kubectl's connection flags on the line (--cluster, --user, --server, --as...), so names come
    from the cluster, as the identity, that the command itself would read."""
    from .options import Connection, from_words

    conn = from_words(Connection, functools.partial(_value_of, words), lambda f: list(_all_values(words, f)),
                      lambda f: f in words)
    return conn.overrides()


def _names(words: list[str], kind: str, bound: bool = False) -> list[str]:
    """Names of `kind` in the line's namespace: pending objects (whatif, explain, diff ask about
    them), or with `bound` the running ones (why-preempted's victims). A PodGroup is pending or
    running through its member pods (names.py group_wanted); CompositePodGroups are all offered."""
    k = kind.lower()
    if k in ("workload", "workloads", "wl"):
        return []  # Kueue's Workloads are not in the model; their names are not offered
    if _live(words):
        from ..snapshot.io.names import live_units

        return live_units(k, _line_namespace(words), _value_of(words, "--kubeconfig"), _value_of(words, "--context"), bound,
                          overrides=_overrides(words))
    snap = _snapshot(words)
    if snap is None:
        return []
    ns = _value_of(words, "--namespace", "-n") or "default"
    if k in ("compositepodgroup", "cpg", "compositepodgroups"):
        return [g.name for g in snap.composite_pod_groups if g.namespace == ns]
    pods = [p for p in snap.pods if p.namespace == ns]
    if k in ("podgroup", "pg", "podgroups"):
        from ..snapshot.io.names import group_wanted

        members: dict[str, list[bool]] = {}
        for p in pods:
            if p.pod_group_name:
                members.setdefault(p.pod_group_name, []).append(p.scheduled)
        return [g.name for g in snap.pod_groups if g.namespace == ns and group_wanted(members.get(g.name, []), bound)]
    return [p.name for p in pods if p.scheduled == bound]


def _namespaces(words: list[str]) -> list[str]:
    from ..model.lookup import namespaces

    if _live(words):
        from ..snapshot.io.names import live_names

        return live_names("namespaces", None, _value_of(words, "--kubeconfig"), _value_of(words, "--context"),
                          overrides=_overrides(words))
    snap = _snapshot(words)
    return sorted(namespaces(snap)) if snap is not None else []


def _contexts(words: list[str]) -> list[str]:
    from ..snapshot.io.kubeconfig import merged

    return sorted(merged(_value_of(words, "--kubeconfig"))[1])


_VALUES: dict[str, Callable[[list[str]], list[str]]] = {
    "--context": _contexts,
    "--namespace": _namespaces, "-n": _namespaces, "--victim-namespace": _namespaces,
    "--output": lambda w: OUTPUTS, "-o": lambda w: OUTPUTS,
    "--color": lambda w: ["auto", "always", "never"],
    "--order": lambda w: ["risk", "protection"],
    "--disruption-mode": lambda w: ["single", "all"],
    "--preemption-policy": lambda w: ["PreemptLowerPriority", "Never"],
}


# Flags that take no value (tests/test_completion_live.py checks every boolean flag of the app is here).
_BOOLEAN = {"--all-namespaces", "-A", "--autoscale", "--client", "--debug", "--demo", "--events", "--exit-code", "--grace",
            "--ignore-gates", "--insecure-skip-tls-verify", "--no-headers", "--no-kueue", "--no-recreate-victims", "--no-scale-up", "--optimal", "--pvcs",
            "--recreate-victims", "--redact", "--scale-up", "--no-autoscale", "--version", "--yes", "-h", "--help"}


def _takes_next(flag: str) -> bool:
    """A flag word whose value is the next word: not a boolean, no `=value`, no attached short value (`-nml`)."""
    return flag.startswith("-") and "=" not in flag and flag not in _BOOLEAN and (flag.startswith("--") or len(flag) == 2)


def _positional(words: list[str]) -> list[str]:
    """Words that are neither flags nor the values of flags that take one."""
    out = []
    for i, w in enumerate(words):
        if w.startswith("-"):
            continue
        if i and _takes_next(words[i - 1]):
            continue
        out.append(w)
    return out


def _object_words(words: list[str], partial: str) -> list[str]:
    """TYPE, then NAME (or TYPE/NAME in one word), wherever the flags stand on the line."""
    bound = words[0] == "why-preempted"  # a victim: it ran; the others ask about pending objects
    kinds = ["pod", "podgroup", "workload"] if bound else KIND_WORDS  # why-preempted answers for Kueue's Workloads too
    positional = _positional(words[1:])
    if not positional:
        if "/" in partial:
            kind = partial.split("/", 1)[0]
            return [f"{kind}/{n}" for n in _names(words, kind, bound)]
        return kinds
    if len(positional) == 1 and "/" not in positional[0]:
        return _names(words, positional[0], bound)
    return []


def candidates(args: list[str]) -> tuple[list[str], str]:
    """(candidates, directive) for `__complete ARGS... PARTIAL`."""
    partial = args[-1] if args else ""
    words = args[:-1]
    prev = words[-1] if words else ""
    if prev in FILE_FLAGS:
        return [], FILES
    if prev in _VALUES:
        cands = _VALUES[prev](words)
    elif not words:
        cands = COMMANDS
    elif partial.startswith("-"):
        cands = FLAGS
    elif words[0] == "completion" and len(words) == 1:
        cands = SHELLS
    elif words[0] == "demo" and len(words) == 1:
        cands = ["load"]
    elif words[0] in ("whatif", "explain", "diff", "why-preempted"):
        cands = _object_words(words, partial)
    else:
        cands = []
    # Names from a snapshot, a live cluster or a kubeconfig reach the shell one a line: escaped,
    # a newline or an escape sequence in one can neither add a candidate nor reach the terminal.
    return [printable(c) for c in cands if c.startswith(partial)], NO_FILES


# Scripts for the standalone command. Each passes the words after the command name plus the word
# being completed to `kubectl_complete-wap __complete` and drops the trailing `:<directive>` line;
# directive 0 with no candidates means "complete file names".
_BASH = r"""# kubectl-wap bash completion: source <(kubectl-wap completion bash)
_kubectl_wap() {
    local cur="${COMP_WORDS[COMP_CWORD]}" out directive
    out=$(kubectl_complete-wap __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
    directive="${out##*:}"
    out="$(printf '%s\n' "$out" | sed '$d')"
    if [ "$directive" = "0" ] && [ -z "$out" ]; then
        COMPREPLY=($(compgen -f -- "$cur"))
        return 0
    fi
    local IFS=$'\n'
    COMPREPLY=($(compgen -W "$out" -- "$cur"))
}
complete -F _kubectl_wap kubectl-wap
"""

_ZSH = r"""#compdef kubectl-wap
# kubectl-wap zsh completion: source <(kubectl-wap completion zsh)
_kubectl_wap() {
    local -a out
    out=("${(@f)$(kubectl_complete-wap __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    local directive="${out[-1]#:}"
    out=("${(@)out[1,-2]}")
    if [[ "$directive" == 0 && ${#out} -eq 0 ]]; then
        _files
        return
    fi
    compadd -- "${(@)out}"
}
compdef _kubectl_wap kubectl-wap
"""

_FISH = r"""# kubectl-wap fish completion: kubectl-wap completion fish | source
function __kubectl_wap_complete
    set -l args (commandline -opc)[2..-1] (commandline -ct)
    set -l out (kubectl_complete-wap __complete $args 2>/dev/null)
    set -e out[-1]
    printf '%s\n' $out
end
complete -c kubectl-wap -f -a '(__kubectl_wap_complete)'
"""

_POWERSHELL = r"""# kubectl-wap PowerShell completion: kubectl-wap completion powershell | Out-String | Invoke-Expression
Register-ArgumentCompleter -Native -CommandName kubectl-wap -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $words = @($commandAst.CommandElements | Select-Object -Skip 1 | ForEach-Object { $_.ToString() })
    if ($wordToComplete -eq '') { $words += '' }
    $out = & kubectl_complete-wap __complete @words 2>$null
    $out | Where-Object { $_ -notlike ':*' } | ForEach-Object {
        [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
    }
}
"""

SCRIPTS = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH, "powershell": _POWERSHELL}

KUBECTL_HINT = (
    "kubectl completes plugin arguments by running `kubectl_complete-wap` from your PATH.\n"
    "pip installs it next to kubectl-wap (`pip install .` in a clone). With Krew, link it once:\n"
    "  ln -s \"$(command -v kubectl-wap)\" \"$(dirname \"$(command -v kubectl-wap)\")/kubectl_complete-wap\"\n"
    "Then enable kubectl's own completion, e.g. `source <(kubectl completion bash)`.\n"
    "For the standalone kubectl-wap command: kubectl wap completion bash|zsh|fish|powershell"
)
