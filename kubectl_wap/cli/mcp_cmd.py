"""`kubectl wap mcp`: the Model Context Protocol server (issue 36). The server is mcpserver.py; this
module wires the command and hands the server the computations the other commands call."""

from __future__ import annotations

import gc
from typing import Any

from .. import __version__
from .analysis import _analysis
from .app import _examples, _guard, app
from .diff import diff_report
from .flags import Color, DebugOpt
from .pending import pending_report
from .rank import rank_report
from .simulate import simulation_report
from .whatif import whatif_report
from .whypreempted import forensics_report


@app.command(epilog=_examples("  # Claude Code (other clients: docs/commands/mcp.md)\n  claude mcp add kubectl-wap -- kubectl-wap mcp",
                              "  # Any client's mcp.json / claude_desktop_config.json\n"
                              "  {\"mcpServers\": {\"kubectl-wap\": {\"command\": \"kubectl-wap\", \"args\": [\"mcp\"]}}}"))
def mcp(debug: DebugOpt = False) -> None:
    """Serve the analyses to AI assistants: a Model Context Protocol server over stdio (tools whatif, explain, pending,
    why_preempted, simulate, rank, diff; the demo and the report schemas as resources). Read-only. Needs the mcp extra:
    pip install '.[mcp]' in a clone."""

    def run() -> None:
        from .mcpserver import serve

        gc.enable()  # a long-lived server: the one-shot commands' collector switch (_main) does not fit it
        serve(mcp_answers(), __version__)

    _guard(debug, run)


def mcp_answers() -> Any:
    """The commands' computations, as the MCP server's tools call them (mcpserver.Answers)."""
    from .mcpserver import Answers

    return Answers(whatif=whatif_report, explain=lambda kind, name, src, hyp, cycles=None: _analysis(kind, name, src, hyp, Color.never, cycles=cycles),
                   pending=pending_report, why_preempted=forensics_report, simulate=simulation_report, rank=rank_report, diff=diff_report)
