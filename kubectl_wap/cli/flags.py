"""Single options several commands share, the output option and the color switch. The option sets
(the source and the hypothetical work) are options.py's: a flag that belongs to one of them is taken
from there (`_field`), so it is defined once."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Optional

import typer

from ..report.formats import allowed, shown
from .options import Source, group_hints


class Color(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


def _field(group: type, name: str) -> Any:
    """The Annotated type of one shared option (options.py is the one definition)."""
    return group_hints(group)[name]


# Single options kept under their names for commands that take only some of the shared set.
SnapshotOpt = _field(Source, "snapshot")
DemoOpt = _field(Source, "demo")
KubeconfigOpt = _field(Source, "kubeconfig")
ContextOpt = _field(Source, "context")
NamespaceOpt = _field(Source, "namespace")
GatesOpt = _field(Source, "feature_gates")
SchedVersionOpt = _field(Source, "scheduler_version")
TimeoutOpt = _field(Source, "request_timeout")


MaxInputOpt = _field(Source, "max_input_size")
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")]
ColorOpt = Annotated[Color, typer.Option("--color", help="Colorize output: auto, always or never (NO_COLOR is honoured).")]
NoHeadersOpt = Annotated[bool, typer.Option("--no-headers", help="Omit table headers; columns have fixed widths (stable across runs).")]
ExitCodeOpt = Annotated[bool, typer.Option("--exit-code", help="Exit with a verdict code: 0 NoPreemptionNeeded, 10 Preempt, 11 Unschedulable, 12 NotEligible, 13 Invalid.")]
SelectorOpt = Annotated[Optional[str], typer.Option("--selector", "-l", metavar="SELECTOR", help="Show only victims/spared units with a pod matching this label selector (the analysis is unchanged).")]
VictimNsOpt = Annotated[Optional[str], typer.Option("--victim-namespace", metavar="NAME", help="Show only victims/spared units in this namespace (the analysis is unchanged).")]

KindArg = Annotated[Optional[str], typer.Argument(help="podgroup, compositepodgroup or pod (or TYPE/NAME).")]
NameArg = Annotated[Optional[str], typer.Argument(help="Name of the pending (or hypothetical) object.")]


def _output_opt(html: bool) -> Any:
    """The one `-o/--output` option (issue 33): every command takes the same formats (html where it
    has a page), defined in report/formats.py; `-o=json` and `--output=json` both work."""
    return Annotated[str, typer.Option("--output", "-o", metavar="FORMAT", help=f"Output format, one of: {shown(allowed(html), ', ')}")]


OutputOpt = _output_opt(html=False)
HtmlOutputOpt = _output_opt(html=True)
# kubectl's PrintFlags flag of the same name. UPSTREAM-DIFF: it takes its value after `=` (or a space);
# pflag also takes the bare flag for true, which is the default anyway.
AllowMissingOpt = Annotated[str, typer.Option("--allow-missing-template-keys", metavar="BOOL", help=(
    "If true (the default), a -o jsonpath field missing from the document prints nothing; "
    "--allow-missing-template-keys=false makes it an error, as in kubectl."))]


CyclesOpt = Annotated[Optional[int], typer.Option("--cycles", metavar="N", help="Play at most this many pod-group scheduling cycles (default: until the group is placed or preemption runs; 1 = the first cycle only, where pods that fit bind and nothing is preempted).")]

