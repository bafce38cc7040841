"""`kubectl wap demo load`: create the bundled demo in the cluster of the current (or given)
context, to try the live path. The one command that writes; the write path is
snapshot/io/demoload.py and nowhere else. Without --yes it only says what it would create."""

from __future__ import annotations

from collections import Counter
from typing import Annotated

import typer

from .app import _examples, _guard, app
from .flags import ContextOpt, DebugOpt, KubeconfigOpt, TimeoutOpt
from .options import Connection, options

demo_app = typer.Typer(help="The bundled demo cluster: `demo load` creates it in a cluster you point at (it writes).",
                       no_args_is_help=True, rich_markup_mode=None)
app.add_typer(demo_app, name="demo")


@demo_app.command("load", epilog=_examples("  # What it would create (nothing is sent)\n  kubectl wap demo load --context kind-demo",
                                            "  # Create it\n  kubectl wap demo load --context kind-demo --yes"))
@options(conn=Connection)
def demo_load(
    yes: Annotated[bool, typer.Option("--yes", help="Create the objects (without it, only print what would be created).")] = False,
    kubeconfig: KubeconfigOpt = None, context: ContextOpt = None, request_timeout: TimeoutOpt = None, debug: DebugOpt = False,
    conn: Connection = Connection(),
) -> None:
    """Create the demo (4 namespaces, their pods, PodGroups and PDBs, 5 PriorityClasses and 16 fake Nodes, all labelled
    kubectl-wap.io/demo=true) in the cluster of the current context: create only, never into a namespace someone else
    made. For a throwaway cluster (kind, with KWOK for the fake nodes)."""

    def run() -> None:
        from ..errors import UserError
        from ..snapshot.io.demoload import create, plan
        from ..snapshot.io.files import DEMO_PATH, load_items
        from ..snapshot.io.readonly import connect

        writes = plan(load_items(DEMO_PATH, whole=True)[1])
        client = connect(kubeconfig, context, request_timeout, conn.overrides())  # reads the kubeconfig; sends nothing yet
        try:
            if not yes:
                from ..report.tables import say
                from .app import _console
                from .flags import Color

                out = _console(Color.never)  # the lists wrapped at a terminal's width (tables.say), whole lines in a pipe
                counts = Counter(w.kind for w in writes)
                typer.echo(f"Would create in {client.server_url}:")
                for kind, n in counts.items():
                    names = sorted({w.name if w.namespace is None else f"{w.namespace}/{w.name}" for w in writes if w.kind == kind})
                    shown = ", ".join(names[:6]) + (f", ... ({n} in all)" if n > 6 else "")
                    plural = ("es" if kind.endswith("s") else "s") if n > 1 else ""  # PriorityClasses, not PriorityClasss
                    say(out, f"  {n} {kind}{plural}: {shown}", indent="      ")
                raise UserError("nothing created: pass --yes to create these objects")

            def said(o) -> None:  # kubectl's "pod/x created" / "... unchanged" lines
                w = o.write
                what = f"{w.kind.lower()}/{w.name}" + (f" -n {w.namespace}" if w.namespace else "")
                typer.echo(f"{what} {'created' if o.result == 'created' else 'unchanged (exists)' if o.result == 'exists' else 'skipped (not served)'}")

            done = create(client, writes, said)
            n = sum(1 for o in done if o.result == "created")
            typer.echo(f"{n} created, {len(done) - n} left as they were. Try: kubectl wap pending -A")
        finally:
            client.close()

    _guard(debug, run)
