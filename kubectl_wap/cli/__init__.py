"""`kubectl wap`: the command line (docs/architecture.md "Inside the command line").

app.py is the typer app, the error guard and stdout; each command is a module of its own, imported
here so that it registers on the app. Their order below is the order `kubectl wap --help` lists
the commands in. `kubectl_wap.cli:main` and `kubectl_wap.cli:complete_main` are the console entry
points (pyproject.toml, plugins/build.py); tests drive `from kubectl_wap.cli import app`."""

from . import whatif  # noqa: F401  (each import registers its command on the app, in --help order)
from . import explain  # noqa: F401
from . import rank  # noqa: F401
from . import diff  # noqa: F401
from . import snapshot  # noqa: F401
from . import simulate  # noqa: F401
from . import pending  # noqa: F401
from . import whypreempted  # noqa: F401
from . import metrics_cmd  # noqa: F401
from . import mcp_cmd  # noqa: F401
from . import demo_cmd  # noqa: F401
from . import completion_cmd  # noqa: F401
from . import version  # noqa: F401
from .app import app, main
from .completion_cmd import complete_main

__all__ = ["app", "complete_main", "main"]
