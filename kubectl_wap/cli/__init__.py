"""`kubectl wap`: the command line. `kubectl_wap.cli:main` and `kubectl_wap.cli:complete_main` are
the console entry points (pyproject.toml, plugins/build.py); tests drive `from kubectl_wap.cli import app`."""

from .app import _pending_name_map, app, complete_main, main

__all__ = ["app", "complete_main", "main", "_pending_name_map"]
