"""`kubectl wap version` (the root's `--version` flag is app.py's)."""

from __future__ import annotations

import typer

from .. import __version__
from .app import app


@app.command()
def version() -> None:
    """Print the kubectl-wap version."""
    typer.echo(f"kubectl-wap {__version__}")
