"""Text tables that never cut a value, at any terminal width (issue 16).

Three layouts, chosen per table:

- **columns** (kubectl's look): every value at its full width, spaced as kubectl's printers space
  them (k8s.io/cli-runtime printers.GetNewTabWriter: text/tabwriter with minwidth 6 and padding 3,
  so a column is its longest value plus 3 spaces, at least 6; the last column is not padded; no
  leading space, no rule line). Used whenever it fits the terminal, and always when the output is
  not a terminal (width None: scripts see complete rows).
- **wrapped columns**: too wide, but the free-text columns (reasons, comma lists of names or nodes)
  can wrap at spaces/commas to fit; identifiers and numbers never wrap.
- **stacked**: still too wide (a narrow terminal): one block per row, titled with the object's
  namespace/name (the NAMESPACE and NAME columns, or the first UNIT/POD/OBJECT/... column), then
  `HEADER value` pairs. A value longer than the line is folded onto the next
  line, never cut.

With `no_headers` (scripts) each column has a fixed width, so a row's text depends only on its own
values: two runs over different clusters align, and `diff` shows only the rows that changed.
No layout leaves trailing spaces.
"""

from __future__ import annotations

import textwrap
from typing import Any, Sequence

from .escape import printable

# Columns whose values may wrap: free text at spaces, lists at ", " or ",".
WRAPPING = frozenset({"REASON", "WHY", "NAMES", "ACTION", "DISRUPTION", "NODES", "MESSAGE", "VICTIMS"})
_MIN_WRAP = 16

# --no-headers: fixed column widths (a longer value pushes the rest of its row, not the column).
STABLE_WIDTHS = {
    "#": 5, "UNIT": 44, "POD": 44, "KIND": 17, "MODE": 6, "PRIORITY": 10, "PODS": 5, "NODES": 24, "NODE": 24,
    "VIOLATES-PDB": 3, "PDB": 3, "AGE": 6, "STARTED": 20, "NAMES": 0, "VICTIM-PODS": 5, "PDB-VIOLATIONS": 3, "CHOSEN": 3,
    "CHANGE": 8, "BEFORE": 24, "AFTER": 24,
}
_STABLE_DEFAULT = 16

# kubectl's tabwriter (cli-runtime printers/tabwriter.go: tabwriterMinWidth 6, tabwriterPadding 3).
PAD = 3
MIN_CELL = 6
# The columns that name a row's object, in the order a stacked block's title looks for them.
KEY_COLUMNS = ("UNIT", "POD", "OBJECT", "NAME", "NODE", "PREEMPTOR", "OPTION", "CHANGE")


def cell(v: Any) -> str:
    """A table cell as text, through escape.printable: no value can end a row or move the cursor."""
    return "" if v is None else printable(str(v))


def render(title: str | None, headers: Sequence[str], rows: Sequence[Sequence[Any]], width: int | None,
           no_headers: bool = False) -> str:
    """The table as text (ends with a newline; empty string for no rows and no headers)."""
    cells = [[cell(c) for c in r] for r in rows]
    if no_headers:
        return "".join(stable_row(headers, r) + "\n" for r in cells)
    widths = natural_widths(headers, cells)
    if width is None or _total(widths) <= width:
        return _columns(title, headers, cells, widths)
    # Too wide: wrap free text, and only then give up columns for the stacked layout (kubectl's
    # spacing is kept: a table either looks like kubectl's or is clearly something else).
    narrowed = _narrow(headers, cells, widths, width)
    if narrowed is not None:
        return _columns(title, headers, cells, narrowed)
    return stacked(title, headers, cells, width)


def natural_widths(headers: Sequence[str], cells: list[list[str]]) -> list[int]:
    widths = [len(h) for h in headers]
    for r in cells:
        for i, c in enumerate(r):
            if len(c) > widths[i]:
                widths[i] = len(c)
    return widths


def stable_row(headers: Sequence[str], row: Sequence[str]) -> str:
    parts = []
    last = len(row) - 1
    for i, (h, c) in enumerate(zip(headers, row)):
        w = STABLE_WIDTHS.get(h, _STABLE_DEFAULT)
        parts.append(c if i == last else (c.ljust(w) if len(c) < w else c) + "  ")
    return "".join(parts).rstrip()


def _cells(widths: list[int]) -> list[int]:
    """What each column takes on the line: tabwriter pads every cell but the last."""
    return [max(w + PAD, MIN_CELL) for w in widths[:-1]] + widths[-1:]


def _total(widths: list[int]) -> int:
    return sum(_cells(widths))


def _narrow(headers: Sequence[str], cells: list[list[str]], widths: list[int], width: int) -> list[int] | None:
    """Shrink the wrapping columns (widest first) until the table fits; None if it cannot without
    breaking a word, an identifier or a number."""
    out = list(widths)
    floor = []
    for i, h in enumerate(headers):
        if h in WRAPPING:
            longest_word = max([len(h)] + [len(w) for r in cells for w in _tokens(r[i])])
            floor.append(max(_MIN_WRAP, longest_word))
        else:
            floor.append(out[i])
    excess = _total(out) - width
    for i in sorted(range(len(out)), key=lambda i: -out[i]):
        if excess <= 0:
            break
        give = min(out[i] - floor[i], excess)
        if give > 0:
            out[i] -= give
            excess -= give
    return out if excess <= 0 else None


def _tokens(text: str) -> list[str]:
    return text.replace(",", ", ").split()


def _wrap(text: str, width: int) -> list[str]:
    """Wrap at spaces (lists at commas: the comma stays on the first line); never cut a word."""
    if len(text) <= width:
        return [text]
    if " " not in text and "," in text:
        text = text.replace(",", ", ")
        lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)
        return [ln.replace(", ", ",") for ln in lines]
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]


def _columns(title: str | None, headers: Sequence[str], cells: list[list[str]], widths: list[int]) -> str:
    out = []
    if title:
        out.append(title)
        out.append("")
    # One format for every line (str.format pads in C: a 120k-row table is ~1 s less), and rows
    # whose wrapping cells fit their width (all of them at natural widths) skip the wrapping.
    line = "".join(f"{{:<{w}}}" for w in _cells(widths)).format
    out.append(line(*headers).rstrip())
    wrap_cols = [i for i, h in enumerate(headers) if h in WRAPPING]
    for r in cells:
        if len(r) == len(widths) and all(len(r[i]) <= widths[i] for i in wrap_cols):
            out.append(line(*r).rstrip())
            continue
        wrapped = [_wrap(c, w) if h in WRAPPING else [c] for h, c, w in zip(headers, r, widths)]
        for k in range(max(len(x) for x in wrapped)):
            out.append(line(*[x[k] if k < len(x) else "" for x in wrapped]).rstrip())
    out.append("")
    return "\n".join(out) + "\n"


def fold(text: str, width: int) -> list[str]:
    """Split `text` into pieces of at most `width` characters, at spaces where possible; a word
    longer than the line is folded (continued on the next line), never cut."""
    width = max(width, 8)
    return textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]


def fold_words(text: str, width: int, indent: str = "  ") -> list[str]:
    """Prose wrapped at spaces, continuation lines indented; words longer than a line folded."""
    width = max(width, 16)
    return textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=True, break_on_hyphens=False) or [""]


def key_columns(headers: Sequence[str]) -> list[int]:
    """The columns whose values title a stacked block: NAMESPACE and NAME joined as kubectl names
    an object (namespace/name), else the first column that names the row, else the first."""
    if "NAMESPACE" in headers and "NAME" in headers:
        return [headers.index("NAMESPACE"), headers.index("NAME")]
    for h in KEY_COLUMNS:
        if h in headers:
            return [headers.index(h)]
    return [0]


def stacked(title: str | None, headers: Sequence[str], cells: list[list[str]], width: int) -> str:
    """One block per row: the row's object (namespace/name) on its own line, then the other
    `HEADER value` pairs wrapped at pair boundaries (a pair longer than the line is folded)."""
    out = []
    if title:
        out.append(title)
        out.append("")
    keys = key_columns(headers)
    for r in cells:
        out.extend(fold("/".join(r[k] for k in keys), width))
        line = "   "
        for h, c in ((h, c) for i, (h, c) in enumerate(zip(headers, r)) if i not in keys):
            pair = f"{h} {c or '-'}"
            if len(line) + 2 + len(pair) <= width or line == "   ":
                line = (line + "  " + pair) if line != "   " else "    " + pair
            else:
                out.append(line)
                line = "    " + pair
            if len(line) > width:
                pieces = fold(line.strip(), width - 4)
                out.extend("    " + p for p in pieces[:-1])
                line = "    " + pieces[-1]
        out.append(line.rstrip())
    out.append("")
    return "\n".join(ln.rstrip() for ln in out) + "\n"
