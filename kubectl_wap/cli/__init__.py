"""`kubectl wap`: the command line (docs/architecture.md "Inside the command line").

app.py is the typer app, the error guard and stdout; each command is a module of its own that
registers on the app when imported. `kubectl_wap.cli:main` and `kubectl_wap.cli:complete_main` are
the console entry points (pyproject.toml, plugins/build.py); tests drive `from kubectl_wap.cli
import app`, which is the app with every command on it, in the order `kubectl wap --help` lists them.

`main` imports only the module of the command it runs (issue 34 item 4): typer builds a click
command, with every parameter, for each command on the app before it parses anything (23 ms for
all twelve on this project's machine, a tenth of a demo `whatif`), and the other commands' modules
are not needed either. Anything that is not exactly one command's name (`--help`, `--version`, a
typo, nothing) gets the whole app, so help, suggestions and errors stay the whole app's."""

from __future__ import annotations

import sys
from typing import Any

from . import app as _app_module

# `from . import app` bound the submodule `app` in this package's namespace; the name `app` is the
# typer app with every command (module __getattr__ below), so the submodule's binding goes.
del app  # noqa: F821

# The commands, in --help order, each with its module's import (test_no_dynamic_import: a plain
# import statement per module, so tools and readers see every edge).
COMMANDS = ("whatif", "explain", "rank", "diff", "snapshot", "simulate", "pending", "why-preempted", "metrics", "mcp",
            "demo", "completion", "version")


def _load(command: str | None) -> None:
    """Register `command` on the app (None: every command, in --help order)."""
    # One branch per command; the full load falls through all of them in order.
    everything = command is None
    if everything or command == "whatif":
        from . import whatif  # noqa: F401
    if everything or command == "explain":
        from . import explain  # noqa: F401
    if everything or command == "rank":
        from . import rank  # noqa: F401
    if everything or command == "diff":
        from . import diff  # noqa: F401
    if everything or command == "snapshot":
        from . import snapshot  # noqa: F401
    if everything or command == "simulate":
        from . import simulate  # noqa: F401
    if everything or command == "pending":
        from . import pending  # noqa: F401
    if everything or command == "why-preempted":
        from . import whypreempted  # noqa: F401
    if everything or command == "metrics":
        from . import metrics_cmd  # noqa: F401
    if everything or command == "mcp":
        from . import mcp_cmd  # noqa: F401
    if everything or command == "demo":
        from . import demo_cmd  # noqa: F401
    if everything or command == "completion":
        from . import completion_cmd  # noqa: F401
    if everything or command == "version":
        from . import version  # noqa: F401


def _full_app() -> Any:
    _load(None)
    app = _app_module.app
    # --help lists the commands in registration order; a command module imported on its own before
    # (a test importing kubectl_wap.cli.mcp_cmd, which imports five other commands) registered early.
    app.registered_commands.sort(key=lambda info: COMMANDS.index(info.name or info.callback.__name__.lower().replace("_", "-")))
    return app


def __getattr__(name: str) -> Any:
    """`kubectl_wap.cli.app`: the app with every command registered (PEP 562: first access only)."""
    if name == "app":
        full = _full_app()
        globals()["app"] = full
        return full
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def complete_main() -> None:
    """The `kubectl_complete-wap` entry point (completion_cmd.py): its candidates are static."""
    from .completion_cmd import complete_main as complete

    complete()


def main() -> None:
    """The console entry point: the one command named first on the command line, else all."""
    first = sys.argv[1] if len(sys.argv) > 1 else None
    _load(first if first in COMMANDS else None)
    _app_module.main()


__all__ = ["app", "complete_main", "main"]
