"""`kubectl wap completion SHELL` (a script for the standalone command) and the
`kubectl_complete-wap` entry point kubectl runs to complete `kubectl wap` (`complete_main`). The
candidates and the scripts are completion.py's."""

from __future__ import annotations

import os
import sys
from enum import Enum
from typing import Annotated, Optional

import typer

from .app import _examples, app


class Shell(str, Enum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"
    powershell = "powershell"


@app.command(epilog=_examples("  source <(kubectl-wap completion bash)\n  kubectl-wap completion fish | source"))
def completion(shell: Annotated[Optional[Shell], typer.Argument(help="bash, zsh, fish or powershell.")] = None) -> None:
    """Print a completion script for the standalone kubectl-wap command; without a shell, how
    `kubectl wap` completion works (kubectl >= 1.26 runs kubectl_complete-wap)."""
    from .completion import KUBECTL_HINT, SCRIPTS

    typer.echo(SCRIPTS[shell.value] if shell else KUBECTL_HINT, nl=not shell)


def complete_main() -> None:
    """`kubectl_complete-wap __complete ARGS... PARTIAL`: Cobra-style completion for kubectl.
    Prints candidates, then `:<directive>` (4 = no file completion, 0 = default: files)."""
    from .completion import candidates

    args = sys.argv[1:]
    if args and args[0] in ("__complete", "__completeNoDesc"):
        args = args[1:]
    cands, directive = candidates(args)
    try:
        sys.stdout.write("".join(f"{c}\n" for c in cands) + f"{directive}\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the shell stopped reading (`| head`): nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
