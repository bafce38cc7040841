"""`kubectl wap version` (the root's `--version` flag is app.py's)."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from .. import __version__
from ..report.formats import pflag_value
from .app import _emit, _examples, app


def _version_output(value: Optional[str]) -> Optional[str]:
    """json or yaml; pflag's `-o=json` too."""
    value = pflag_value(value)
    if value is not None and value not in ("json", "yaml"):
        raise typer.BadParameter(f"want json or yaml, got {value!r}")
    return value


@app.command(epilog=_examples("  kubectl wap version --client\n  kubectl wap version -o json"))
def version(
    client: Annotated[bool, typer.Option("--client", help="Accepted as kubectl has it: kubectl-wap never asks a server for its version.")] = False,
    output: Annotated[Optional[str], typer.Option("--output", "-o", callback=_version_output, metavar="json|yaml", help="json or yaml, shaped like kubectl's clientVersion.")] = None,
) -> None:
    """Print the kubectl-wap version (-o json|yaml: version, platform, Python and build kind)."""
    if output is None:
        typer.echo(f"kubectl-wap {__version__}")
        return
    import platform

    major, minor = (__version__.split(".") + ["0"])[:2]
    machine = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine().lower(), platform.machine().lower())
    _emit({"clientVersion": {
        "major": major, "minor": minor, "gitVersion": f"v{__version__}",
        "platform": f"{sys.platform.replace('win32', 'windows')}/{machine}",
        "pythonVersion": platform.python_version(),
        # PyInstaller sets sys.frozen: the Krew release archive (plugins/release.py) needs no Python
        "build": "standalone" if getattr(sys, "frozen", False) else "python",
    }}, output)
