"""Shell completion (issue 16). One protocol, Cobra's `__complete` (what kubectl >= 1.26 runs for
plugins as `kubectl_complete-wap __complete ARGS... PARTIAL`), and thin shell scripts for the
standalone `kubectl-wap` command (`kubectl wap completion bash|zsh|fish|powershell`) that call it.

Candidates are static (commands, kinds, flags, formats) or dynamic: contexts from the kubeconfig,
namespaces and object names from the `--snapshot FILE` / `--demo` given on the line, or else from the
cluster of the line's `--kubeconfig`/`--context` (one list call, 2 s at most, nothing on any
failure: snapshot/io/names.py)."""

from __future__ import annotations

from typing import Callable

from ..report.escape import printable
from .options import Hypothetical, Source, flag_names

COMMANDS = ["whatif", "explain", "rank", "diff", "simulate", "pending", "why-preempted", "snapshot", "metrics", "mcp", "completion", "version"]
KIND_WORDS = ["podgroup", "compositepodgroup", "pod"]
SHELLS = ["bash", "zsh", "fish", "powershell"]
FILE_FLAGS = {"-f", "--filename", "-s", "--snapshot", "--kubeconfig", "--node-templates", "--output-file"}
OTHER_FLAGS = ["--output", "--autoscale", "--node-templates", "--overschedule-multiplier", "--exit-code", "--no-headers",
               "--color", "--debug", "--selector", "--victim-namespace", "--to", "--order", "--limit", "--for",
               "--all-namespaces", "--priority", "--redact", "--output-file",
               "--at", "--max-cycles", "--time-limit", "--recreate-victims", "--no-recreate-victims", "--grace", "--grace-seconds",
               "--job-backoff-limit", "--storm-limit",  # simulate
               "--fail-if",  # whatif
               "--serve", "--interval", "--scale-up", "--no-scale-up", "--top-units"]  # metrics
FLAGS = flag_names(Source) + flag_names(Hypothetical) + OTHER_FLAGS
OUTPUTS = ["table", "wide", "json", "yaml", "name", "jsonpath=", "custom-columns=", "html"]
NO_FILES, FILES = ":4", ":0"  # ShellCompDirectiveNoFileComp / Default


def _value_of(words: list[str], *flags: str) -> str | None:
    for i, w in enumerate(words):
        for f in flags:
            if w == f and i + 1 < len(words):
                return words[i + 1]
            if w.startswith(f + "="):
                return w.split("=", 1)[1]
    return None


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


def _live_names(words: list[str], kind: str, namespace: str | None, pending_only: bool = False) -> list[str]:
    from ..snapshot.io.kubeconfig import context_namespace
    from ..snapshot.io.names import live_names

    kubeconfig, context = _value_of(words, "--kubeconfig"), _value_of(words, "--context")
    if namespace is None and kind not in ("namespace", "namespaces"):
        try:
            namespace = context_namespace(kubeconfig, context)
        except Exception:  # noqa: BLE001 - completion never fails loudly
            namespace = "default"
    return live_names(kind, namespace, kubeconfig, context, pending_only=pending_only)


def _names(words: list[str], kind: str) -> list[str]:
    if _live(words):
        return _live_names(words, kind, _value_of(words, "--namespace", "-n"), pending_only=True)
    snap = _snapshot(words)
    if snap is None:
        return []
    ns = _value_of(words, "--namespace", "-n") or "default"
    k = kind.lower()
    if k in ("podgroup", "pg", "podgroups"):
        return [g.name for g in snap.pod_groups if g.namespace == ns]
    if k in ("compositepodgroup", "cpg", "compositepodgroups"):
        return [g.name for g in snap.composite_pod_groups if g.namespace == ns]
    return [p.name for p in snap.pods if p.namespace == ns and not p.scheduled]


def _namespaces(words: list[str]) -> list[str]:
    from ..model.lookup import namespaces

    if _live(words):
        return _live_names(words, "namespaces", None)
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


_BOOLEAN = {"--demo", "--autoscale", "--exit-code", "--no-headers", "--debug", "--redact", "--all-namespaces", "-A", "-h", "--help"}


def _positional(words: list[str]) -> list[str]:
    """Words that are neither flags nor the values of flags that take one."""
    out = []
    for i, w in enumerate(words):
        if w.startswith("-"):
            continue
        before = words[i - 1] if i else ""
        if before.startswith("-") and "=" not in before and before not in _BOOLEAN:
            continue
        out.append(w)
    return out


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
    elif words[0] in ("whatif", "explain", "diff"):
        positional = _positional(words[1:])
        if not positional:
            cands = KIND_WORDS
        elif len(positional) == 1:
            cands = _names(words, positional[0])
        else:
            cands = []
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
    "It is installed next to kubectl-wap by `pip install kubectl-wap`. With Krew, link it once:\n"
    "  ln -s \"$(command -v kubectl-wap)\" \"$(dirname \"$(command -v kubectl-wap)\")/kubectl_complete-wap\"\n"
    "Then enable kubectl's own completion, e.g. `source <(kubectl completion bash)`.\n"
    "For the standalone kubectl-wap command: kubectl wap completion bash|zsh|fish|powershell"
)
