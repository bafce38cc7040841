"""The output contract, printed (issue 33): every command hands `emit` its document and its
`Printers` (its table, the items its custom columns and `-o name` run over, its HTML page if it has
one); what each `-o` format prints is decided here, once (report/formats.py defines the formats)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import UserError
from ..report.formats import OutputFormat, parse_output
from .app import _console, _emit
from .flags import Color


@dataclass(frozen=True, slots=True)
class Printers:
    """What one command supplies besides its document.

    table: renders `table`/`wide` (document, console, stderr console, wide, no_headers);
    items: the objects its rows are (custom-columns runs over them), from the document;
    names: their `-o name` lines (TYPE/NAME), from the document;
    html: its page, where it has one."""

    table: Callable[[dict, Any, Any, bool, bool], None]
    items: Callable[[dict], list[Any]]
    names: Callable[[dict], list[str]]
    html: Callable[[dict], str] | None = None


def output_format(text: str, html: bool = False, allow_missing: str = "true") -> OutputFormat:
    """The command's `-o` (and --allow-missing-template-keys), parsed before the cluster is read,
    with a template file read."""
    from dataclasses import replace

    from ..report.formats import parse_bool

    out = replace(parse_output(text, html), allow_missing=parse_bool("--allow-missing-template-keys", allow_missing))
    if out.format in ("jsonpath-file", "custom-columns-file"):
        from pathlib import Path

        from ..snapshot.io.files import read_text

        try:
            # kubectl reads the whole file as the template: a jsonpath file's last newline is printed
            return replace(out, arg=read_text(Path(out.arg)))
        except UserError as e:
            raise UserError(f"error reading template {e}") from None
    return out


def emit(doc: dict, out: OutputFormat, printers: Printers, color: Color = Color.auto, no_headers: bool = False) -> None:
    """Print `doc` in the format asked."""
    fmt = out.format
    if fmt in ("json", "yaml"):
        _emit(doc, fmt)
    elif fmt in ("jsonpath", "jsonpath-file", "jsonpath-as-json"):
        from ..report.formats import jsonpath

        sys.stdout.write(jsonpath(out.arg, doc, as_json=fmt == "jsonpath-as-json", allow_missing=out.allow_missing))  # the template says where lines end
    elif fmt in ("custom-columns", "custom-columns-file"):
        from ..report.formats import column_file, column_spec, custom_columns

        cols = column_spec(out.arg) if fmt == "custom-columns" else column_file(out.arg)
        sys.stdout.write(custom_columns(cols, printers.items(doc), no_headers))
    elif fmt == "name":
        from ..report.formats import name_lines

        sys.stdout.write(name_lines(printers.names(doc)))
    elif fmt == "html":
        if printers.html is None:  # parse_output(html=False) refused it already
            raise UserError("-o html: this command has no page")
        sys.stdout.write(printers.html(doc))
    else:
        printers.table(doc, _console(color), _console(color, stderr=True), fmt == "wide", no_headers)
    if fmt not in ("json", "yaml", "table", "wide"):
        # json and yaml carry the warnings in the document and the tables print them; the other
        # formats dropped them, where kubectl prints its warnings on stderr whatever -o says
        from ..report.tables import print_warnings

        print_warnings(_console(color, stderr=True), doc.get("warnings") or [])
