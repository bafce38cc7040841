"""`kubectl wap`: the typer app. Thin: parse options, load the state, call the engine, render.

kubectl passes no global flags to plugins, so every command accepts the kubectl-style flags
(`-n`, `--context`, `--kubeconfig`) itself, after the subcommand.

This module holds what every command shares: the app and its root callback (`--version`), the
error guard (`_guard`: one line on stderr, exit 2), stdout (`_console`, `_emit`, a closed or
broken pipe) and the console entry point's exit without teardown (`main`). Each command is a
module of its own beside this one (cli/__init__.py imports them, in the order `--help` lists them)."""

from __future__ import annotations

import atexit
import errno
import gc
import json
import os
import sys
import traceback
from typing import Annotated, Any, Callable

import typer

from .. import __version__
from ..errors import UserError, scrub
from .flags import Color
from .pipes import QuietPipe


def _examples(*blocks: str) -> str:
    """An epilog click prints verbatim: each block is marked with \\b so it is not re-wrapped."""
    return "Examples:\n\n" + "\n\n".join("\b\n" + b.strip("\n") for b in blocks)


app = typer.Typer(
    name="kubectl-wap",
    help="What-if analysis of Kubernetes workload-aware preemption: which pods and PodGroups kube-scheduler would "
    "preempt for a pending or hypothetical PodGroup or Pod, and why. Read-only: it never writes to the cluster (but for `demo load --yes`).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _console(color: Color, stderr: bool = False):
    from rich.console import Console

    # markup=False: text from the input is never read as Rich markup (`a[/x]` in a name).
    if color == Color.never or (color == Color.auto and os.environ.get("NO_COLOR")):
        return Console(stderr=stderr, no_color=True, highlight=False, color_system=None, width=_width(), markup=False)
    if color == Color.always:
        return Console(stderr=stderr, force_terminal=True, highlight=False, width=_width(), markup=False)
    return Console(stderr=stderr, highlight=False, width=_width(), markup=False)


def _width() -> int | None:
    """The terminal's width on a terminal; otherwise no wrapping at all (output for grep/awk)."""
    try:
        return None if sys.stdout.isatty() else 10_000
    except (AttributeError, ValueError):
        return 10_000


def _say_error(text: str) -> None:
    """One line on stderr: credentials scrubbed, control characters escaped (issue 19)."""
    from ..report.escape import printable

    try:
        typer.echo(f"error: {printable(scrub(text))}", err=True)
    except (BrokenPipeError, OSError, ValueError):
        pass  # stderr is gone too: the exit code is all that is left to say it


def _say_warning(text: str) -> None:
    """One warning line on stderr (kubectl's "Warning: " prefix), scrubbed and escaped as errors are."""
    from ..report.escape import printable

    try:
        typer.echo(f"Warning: {printable(scrub(text))}", err=True)
    except (BrokenPipeError, OSError, ValueError):
        pass


def _print_traceback() -> None:
    """--debug: the traceback, with credentials scrubbed like every other line we print."""
    try:
        sys.stderr.write(scrub(traceback.format_exc()))
    except (OSError, ValueError):
        pass


def _guard(debug: bool, fn: Callable[[], Any]) -> Any:
    """User errors end as one line on stderr and exit 2; anything else as one line and exit 1."""
    from ..snapshot.io import readonly

    readonly.say_warning = _say_warning  # what the cluster connection warns of (disabled TLS checks)
    try:
        return fn()
    except typer.Exit:
        raise
    except UserError as e:
        if debug:
            _print_traceback()
        _say_error(str(e))
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        _say_error("interrupted")
        raise typer.Exit(130) from None
    except MemoryError:
        if debug:
            _print_traceback()
        _say_error("out of memory: the input is too large for this machine (see --max-input-size)")
        raise typer.Exit(2) from None
    except RecursionError:
        if debug:
            _print_traceback()
        _say_error("the input is nested too deeply to analyze")
        raise typer.Exit(2) from None
    except _ClosedStdout:
        _say_error("cannot write the output: stdout is closed")
        raise typer.Exit(2) from None
    except OSError as e:
        if e.errno == errno.EPIPE:  # the reader went away (`| head`): stop quietly, like kubectl
            _quiet_stdout()
            raise typer.Exit(141) from None
        if debug:
            _print_traceback()
        _say_error(f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}")
        raise typer.Exit(2) from None
    except Exception as e:  # noqa: BLE001 - the last line of defence against tracebacks
        if debug:
            _print_traceback()
        _say_error(f"{type(e).__name__}: {e} (run with --debug for details)")
        raise typer.Exit(1) from None


class _ClosedStdout(Exception):
    """Writing to a stdout that was closed (`kubectl wap ... >&-`)."""


class _ClosedStream:
    """Stands in for sys.stdout when the process started with it closed (Python sets it to None)."""

    def write(self, _text: str) -> int:
        raise _ClosedStdout()

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _quiet_stdout() -> None:
    """After EPIPE (`| head`): point stdout at /dev/null so the interpreter's final flush does
    not print a second error (the Python docs' recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _emit(doc: Any, fmt: str) -> None:
    """json or yaml to stdout (every other format: cli/output.py).
    UPSTREAM-DIFF: kubectl's -o json indents by 4 spaces and sorts keys; 2 spaces and the
    document's own order here (orjson writes 2 only, ~20x faster on a large report). The same JSON
    value either way."""
    if fmt == "json":
        sys.stdout.write(_json_text(doc) + "\n")
    elif fmt == "yaml":
        import yaml

        sys.stdout.write(yaml.safe_dump(doc, sort_keys=False, width=120))


def _json_text(doc: Any) -> str:
    """Indented JSON; orjson when installed (a 100k-candidate report is tens of MB: ~20x faster
    than the json module). Both write the same document; orjson keeps non-ASCII unescaped."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency, but optional at run time
        return json.dumps(doc, indent=2)
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # an integer beyond 64 bits, or a type orjson does not know
        return json.dumps(doc, indent=2)


def _command() -> str:
    """The running subcommand's name, for messages shared by the analysing commands."""
    ctx = _click().globals.get_current_context(silent=True)
    return ctx.info_name if ctx is not None and ctx.info_name else "whatif"


def _click() -> Any:
    """The click typer runs on: its vendored copy when it has one (typer 0.28 already vendors it as
    typer._click). A separately installed click (uvicorn pulls one in with the `mcp` extra) is
    another module with its own context stack: asking it for the current context failed (`diff
    --to` said 'There is no active click context')."""
    try:
        from typer import _click as click  # type: ignore[attr-defined]
    except ImportError:  # an older typer depends on click itself
        import click  # type: ignore[no-redef]
    return click


def _version_flag(value: bool) -> None:
    if value:
        typer.echo(f"kubectl-wap {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version_flag, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """What-if analysis of Kubernetes workload-aware preemption: which pods and PodGroups kube-scheduler would
    preempt for a pending or hypothetical PodGroup or Pod, and why. Read-only: it never writes to the cluster (but for `demo load --yes`)."""


def main() -> None:
    try:
        _main()
    except SystemExit as e:
        _exit_without_teardown(e.code)


def _exit_without_teardown(code: object) -> None:
    """Leave the way SystemExit(code) would, minus the interpreter's teardown, which frees every
    object one by one: 0.4 s after a whatif on a 150k-pod snapshot, for memory the OS takes back
    at once. What teardown does that matters is done first: atexit handlers run (the kubernetes
    client deletes its temporary certificate files there; coverage saves its data there) and the
    standard streams are flushed. Only the console entry point comes here (tests drive `app`)."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # SystemExit("message"): printed, status 1
        print(code, file=sys.stderr)
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass  # a reader that went away, or no stream: nothing left to say
    os._exit(status)


def _usage_message(e: Exception, args: list[str]) -> str:
    """click's usage error, or ours where click's misses the point: a misspelt `--demo NAME` is
    left to click as a stray argument ("Got unexpected extra argument(s) (kuee)"), and a choice
    (`--order protecton`) gets the closest value named, as our own errors name it."""
    import re

    from .options import demo_typo

    msg = e.format_message()  # type: ignore[attr-defined]
    m = re.fullmatch(r"Got unexpected extra argument(?:s|\(s\))? \((\S+)\)", msg)
    if m:
        return demo_typo(args, m.group(1)) or msg
    m = re.fullmatch(r"(Invalid value for '[^']+': '(.*)' is not one of ((?:'[^']*'(?:, )?)+))\.", msg, re.S)
    if m:
        from ..model.lookup import did_you_mean

        choices = re.findall(r"'([^']*)'", m.group(3))
        return f"{m.group(1)}{did_you_mean(m.group(2), choices, n=1)}."
    return msg


def _main() -> None:
    # One short-lived process over a large, acyclic object graph (a 150k-pod snapshot): a cyclic
    # garbage collection would rescan all of it again and again while reports are built, for
    # nothing to free. Memory is returned when the process exits.
    gc.disable()
    if sys.stdout is None:
        sys.stdout = _ClosedStream()  # type: ignore[assignment]
    if not isinstance(sys.stdout, QuietPipe):
        sys.stdout = QuietPipe(sys.stdout)  # type: ignore[assignment]
    try:
        from .options import demo_args

        given = sys.argv[1:]
        sys.argv[1:] = demo_args(given)
        rv = app(standalone_mode=False, prog_name="kubectl wap")
        sys.exit(rv if isinstance(rv, int) else 0)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except SystemExit:
        raise
    except Exception as e:  # click usage errors and anything that escaped
        exc = _click().exceptions
        if isinstance(e, UserError):  # demo_args: an unknown --demo=NAME
            _say_error(str(e))
            sys.exit(2)
        if type(e).__name__ == "NoArgsIsHelpError":
            typer.echo(e.format_message())  # bare `kubectl wap`: help on stdout, success
            sys.exit(0)
        if isinstance(e, exc.UsageError):
            _say_error(_usage_message(e, given))
            sys.exit(2)
        if isinstance(e, getattr(exc, "Abort", ())) or type(e).__name__ == "Abort":
            sys.exit(130)
        if isinstance(e, exc.ClickException):
            _say_error(e.format_message())
            sys.exit(e.exit_code)
        _say_error(f"{type(e).__name__}: {e}")
        sys.exit(1)
