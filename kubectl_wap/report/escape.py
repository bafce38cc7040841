"""Text from the input, made safe for a terminal.

Names, labels, messages and warnings come from snapshots other people share. Printed raw, an ESC
sequence could clear the screen or recolour output, a CR or LF could forge table rows, and a
bidirectional override could reorder what is shown, a zero-width character could hide text.
This module is the one rule for every output but JSON and YAML (which escape these characters
themselves): :func:`inert` wraps every `render_*` of report/ (tables, prose, HTML), table cells
(layout.cell), prose lines (tables.say), `-o jsonpath` values (the document through
printable_doc), `-o custom-columns` headers and cells, `-o name` lines (report/formats.py), completion
candidates and error lines all go through :func:`printable`; the consoles print with Rich markup
off, so `[red]` in a name stays text.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

# Every character that is invisible or moves the text rather than showing as itself: the Unicode
# categories Cc (C0, DEL, C1: ESC starts CSI/OSC sequences, OSC 8 links, OSC 52 clipboard writes),
# Cf (bidirectional overrides and isolates, zero-width space/joiners, word joiner, BOM, soft hyphen,
# the invisible tag characters U+E0000-E007F), Zl/Zp (U+2028/2029 end a line in some renderers) and
# Cs (a lone surrogate cannot be encoded: printed raw it would crash the write). Listed as ranges
# (a scan of the Unicode database at import would cost ~0.2 s per run); tests/test_inert_output.py
# checks the list against the running Python's unicodedata.
_RANGES = (
    "\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_UNSAFE = re.compile(f"[{_RANGES}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str) -> str:
    """`text` with control and bidi-formatting characters shown as escapes (\\x1b, \\r, \\u202e)."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def printable_doc(doc: Any) -> Any:
    """A report document with every string (keys too) passed through printable(): the document
    itself when no string needs it (checked on its JSON text in one C pass; the copy below walks
    every string in Python: ~2.5 s for `explain` at 150k pods), else a copy."""
    try:
        clean = _SUSPECT.search(_json_bytes(doc).decode()) is None
    except (TypeError, ValueError, OverflowError, RecursionError, UnicodeError):  # not JSON-shaped: walk it
        clean = False
    return doc if clean else _escaped_copy(doc)


def inert(render: F, arg: int = 0) -> F:
    """A renderer for a terminal or a page: its document (positional argument `arg`) reaches it
    with every string passed through printable(). Every `render_*` of report/ carries it
    (tests/test_inert_output.py checks), so no command can print a document raw, whatever its
    caller did first (a clean document costs one JSON encoding and one regex pass)."""

    @functools.wraps(render)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if len(args) > arg:
            args = (*args[:arg], printable_doc(args[arg]), *args[arg + 1:])
        return render(*args, **kwargs)

    wrapper.__inert__ = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def printable_lines(items: Any) -> str:
    """One line per item (-o name, completion candidates), each through printable(): a newline in
    an item can never start a line of its own."""
    return "".join(printable(str(i)) + "\n" for i in items)


def _escaped_copy(doc: Any) -> Any:
    if isinstance(doc, str):
        return printable(doc)
    if isinstance(doc, dict):
        return {printable(k) if isinstance(k, str) else k: _escaped_copy(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_escaped_copy(v) for v in doc]
    if isinstance(doc, tuple):
        return tuple(_escaped_copy(v) for v in doc)
    return doc


# What every character _UNSAFE matches looks like in a document's JSON text (both encoders below
# keep non-ASCII as it is): C0 controls as JSON escapes (\n, \t, \u001b, ...; a backslash in the
# text matches too, harmlessly: the copy is then made), the others as themselves. A lone surrogate
# makes the encoder fail, and the copy is made.
_SUSPECT = re.compile(f"\\\\[bfnrtu]|[{_RANGES}]")

try:  # optional at run time, like the readers' orjson
    from orjson import OPT_NON_STR_KEYS, dumps as _orjson_dumps

    def _json_bytes(doc: Any) -> bytes:
        return _orjson_dumps(doc, option=OPT_NON_STR_KEYS)

except ImportError:
    import json as _json

    def _json_bytes(doc: Any) -> bytes:
        return _json.dumps(doc, ensure_ascii=False).encode()
