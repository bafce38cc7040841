"""The output contract (issue 33): the one list of `-o` formats every command takes, what each means,
and the kubectl printers behind the formats kubectl has: `-o name`, `-o jsonpath=`/`jsonpath-file=`/
`jsonpath-as-json=` (report/jsonpath.py) and `-o custom-columns=`/`custom-columns-file=`.

A command supplies its document (what `-o json` prints), its table, the items its custom columns
run over and its `-o name` lines (cli/output.py); every other format is derived here, the same for
every command."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from ..errors import UserError
from .escape import printable, printable_doc, printable_lines

# report/jsonpath.py is imported where a template is run: every command's `--help` reads the
# formats above, and the engine's import (~7 ms) is for the few runs that print a template.

# Formats that take a template after `=` (kubectl's spelling), and those that read it from a file.
TEMPLATE_FORMATS = ("jsonpath", "jsonpath-file", "jsonpath-as-json", "custom-columns", "custom-columns-file")
FILE_FORMATS = ("jsonpath-file", "custom-columns-file")
# Every command takes these; `html` only where a page exists (whatif, diff, pending, simulate).
FORMATS = ("table", "wide", "json", "yaml", "name", *TEMPLATE_FORMATS)
HTML = "html"
# kubectl's Go-template printers. UPSTREAM-DIFF: refused. text/template is a language of its own
# (pipelines, functions, variables, if/with/range over any value); a subset would print something
# else than kubectl for the templates runbooks hold, silently. jsonpath reaches the same fields.
GO_TEMPLATES = ("go-template", "go-template-file", "template", "templatefile")


@dataclass(frozen=True, slots=True)
class OutputFormat:
    """A parsed `-o`: the format and its template (or template file) after `=`."""

    format: str
    arg: str = ""
    allow_missing: bool = True  # --allow-missing-template-keys (jsonpath only, as kubectl)


def allowed(html: bool) -> tuple[str, ...]:
    return FORMATS + ((HTML,) if html else ())


def shown(formats: Iterable[str], sep: str = "|") -> str:
    """The formats as errors (`a|b`) and `--help` (`a, b`: click wraps help at spaces, and cut
    `table|...|jso` / `npath=...` in the middle of a name) list them (`jsonpath=...`)."""
    return sep.join(f + ("=..." if f in TEMPLATE_FORMATS else "") for f in formats)


def pflag_value(value: str | None) -> str | None:
    """A short option's value as pflag reads it: `-o=json` is `-o json` (click hands over `=json`)."""
    return value[1:] if value and value.startswith("=") else value


def parse_bool(flag: str, text: str) -> bool:
    """A pflag bool value (strconv.ParseBool's spellings), kubectl's line for any other."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise UserError(f'invalid argument "{text}" for "{flag}" flag: strconv.ParseBool: parsing "{text}": invalid syntax')


def parse_output(text: str, html: bool = False) -> OutputFormat:
    """`-o` value -> OutputFormat, pflag's `-o=json` too (pflag_value). Format names are matched
    case-insensitively, as kubectl's printers match them; templates are kept as typed."""
    text = pflag_value(text) or ""
    name, sep, arg = text.partition("=")
    fmt = name.lower()
    formats = allowed(html)
    if fmt in TEMPLATE_FORMATS:
        if not arg:  # kubectl's words (PrintFlags' template and custom-columns printers)
            if fmt.startswith("custom-columns"):
                raise UserError("custom-columns format specified but no custom columns given")
            raise UserError("template format specified but no template given")
        return OutputFormat(fmt, arg)
    if fmt == HTML and not html:
        raise UserError(f"-o html: this command has no page (whatif, diff, pending and simulate have one); formats: {shown(formats)}")
    if fmt in GO_TEMPLATES:
        raise UserError(f"-o {fmt}: Go templates are not supported; use -o jsonpath=... (kubectl's JSONPath, the same "
                        f"fields); formats: {shown(formats)}")
    if fmt in formats and not sep:
        return OutputFormat(fmt)
    from ..model.lookup import did_you_mean

    raise UserError(f"unknown output format {text!r}{did_you_mean(fmt, formats)}: want one of {shown(formats)}")


# ---- -o jsonpath ---------------------------------------------------------------------------------

def jsonpath(template: str, data: Any, as_json: bool = False, allow_missing: bool = True) -> str:
    """What kubectl's `-o jsonpath=TEMPLATE` (as_json: `-o jsonpath-as-json=`) prints for `data`:
    missing keys print nothing, as with kubectl's default --allow-missing-template-keys=true; kubectl's
    error line (UserError) for a template that does not parse or fails on the document. The
    escaping rule (issue 31): the template runs over the document with every string made
    printable, so a value's control characters print as escapes while the template's own literals
    (`{"\\n"}`) end lines as the user wrote them."""
    from .jsonpath import execute

    return execute(template, printable_doc(data), as_json=as_json, allow_missing=allow_missing)


# ---- -o custom-columns ---------------------------------------------------------------------------

_RELAXED = re.compile(r"^\{\.?([^{}]+)\}$|^\.?([^{}]+)$")


def _relaxed(path: str) -> str:
    """kubectl's RelaxedJSONPathExpression: `name`, `.name`, `{name}` and `{.name}` all mean `{.name}`."""
    if not path:
        return path
    m = _RELAXED.match(path)
    if m is None:
        raise UserError("unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or "
                        "'{.name1.name2}'")
    return "{." + (m.group(1) or m.group(2)) + "}"


def column_spec(spec: str) -> list[tuple[str, str]]:
    """`HEADER:PATH,...` -> [(header, template)], as kubectl's NewCustomColumnsPrinterFromSpec."""
    if not spec:
        raise UserError("custom-columns format specified but no custom columns given")
    cols = []
    for part in spec.split(","):
        header, sep, path = part.partition(":")
        if not sep:
            raise UserError(f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>")
        cols.append((header, _relaxed(path)))
    return cols


def column_file(text: str) -> list[tuple[str, str]]:
    """A custom-columns file, kubectl's NewCustomColumnsPrinterFromTemplate: a line of headers and a
    line of paths, each split on white space."""
    lines = text.splitlines()
    if not lines:
        raise UserError("invalid template, missing header line. Expected format is one line of space separated headers, "
                        "one line of space separated column specs.")
    if len(lines) < 2:
        raise UserError("invalid template, missing spec line. Expected format is one line of space separated headers, "
                        "one line of space separated column specs.")
    headers, specs = lines[0].split(), lines[1].split()
    if len(headers) != len(specs):
        raise UserError(f"number of headers ({len(headers)}) and field specifications ({len(specs)}) don't match")
    return [(h, _relaxed(s)) for h, s in zip(headers, specs)]


def custom_columns(cols: list[tuple[str, str]], items: list[Any], no_headers: bool = False) -> str:
    """The table kubectl's CustomColumnsPrinter writes: a header line (unless no_headers), one line
    per item, each cell every value its path selects (fmt.Sprint, joined by commas; `<none>` when it
    selects nothing), aligned as kubectl's tabwriter aligns them (layout_columns)."""
    from .gofmt import go_text
    from .jsonpath import JSONPathError, find_results, parse

    parsed = []
    for _, template in cols:
        try:
            parsed.append(parse(template))
        except JSONPathError as e:
            raise UserError(e.message) from None
    rows = [] if no_headers else [[printable(h) for h, _ in cols]]
    for item in items:
        row = []
        for nodes in parsed:
            try:
                found = find_results(nodes, item, allow_missing=True)
            except JSONPathError as e:
                raise UserError(e.message) from None
            values = [printable(go_text(v)) for results in found for v in results]
            row.append(",".join(values) if found and found[0] else "<none>")
        rows.append(row)
    return layout_columns(rows)


# kubectl's printers.GetNewTabWriter: minimum cell width 6, padding 3, padded with spaces.
_MIN_WIDTH, _PADDING = 6, 3


def layout_columns(rows: list[list[str]]) -> str:
    """Go's text/tabwriter as kubectl sets it up: every cell but a line's last is padded to its
    column's width (the widest cell + 3, at least 6 characters); the last is written as it is."""
    if not rows:
        return ""
    ncols = max(len(r) for r in rows)
    widths = [max([_MIN_WIDTH] + [len(r[c]) + _PADDING for r in rows if c < len(r) - 1]) for c in range(ncols)]
    out = []
    for r in rows:
        out.append("".join(cell.ljust(widths[c]) if c < len(r) - 1 else cell for c, cell in enumerate(r)) + "\n")
    return "".join(out)


# ---- -o name ---------------------------------------------------------------------------------------

def name_lines(names: Iterable[str]) -> str:
    """`-o name`: one TYPE/NAME a line, as kubectl prints them, each through printable() (names are
    checked at load, snapshot/decode/fields.py checked_name, and escaped here all the same)."""
    return printable_lines(names)


def victim_names(doc: dict) -> list[str]:
    """whatif's and explain's objects: first the Workloads Kueue evicts to admit the job (its stage
    runs first; `workload.kueue.x-k8s.io/NAME`, kubectl's own name for them, as no command of ours
    takes a Workload back), then the pods kube-scheduler preempts (`pod/NAME`)."""
    queueing = doc.get("queueing") or {}
    evicted = [f"workload.kueue.x-k8s.io/{e['workload'].partition('/')[2]}" for e in queueing.get("evictions") or []]
    return evicted + [f"pod/{v['name']}" for v in doc.get("victims") or []]


def unit_names(doc: dict) -> list[str]:
    """rank's objects: each unit (`podgroup/NAME`, `pod/NAME`).
    UPSTREAM-DIFF: kubectl names a resource of an API group with its group
    (`podgroup.scheduling.k8s.io/NAME`); the short kind here is what our commands take back."""
    return [f"{u['kind'].lower()}/{u['name']}" for u in doc.get("units") or []]
