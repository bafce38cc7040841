"""Text from the input, made safe for a terminal.

Names, labels, messages and warnings come from snapshots other people share. Printed raw, an ESC
sequence could clear the screen or recolour output, a CR or LF could forge table rows, and a
bidirectional override could reorder what is shown. Every string of a document rendered for a
terminal goes through :func:`printable` (JSON and YAML output escape these characters themselves),
and the consoles print with Rich markup off, so `[red]` in a name stays text.
"""

from __future__ import annotations

import re
from typing import Any

# C0 and C1 controls, DEL, and the Unicode bidirectional/isolate formatting characters.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with control and bidi-formatting characters shown as escapes (\\x1b, \\r, \\u202e)."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def printable_doc(doc: Any) -> Any:
    """A report document with every string (keys too) passed through printable(): the document
    itself when no string needs it (checked on its JSON text in one C pass; the copy below walks
    every string in Python: ~2.5 s for `explain` at 150k pods), else a copy."""
    try:
        clean = _SUSPECT.search(_json_bytes(doc)) is None
    except (TypeError, ValueError, OverflowError, RecursionError):  # not JSON-shaped: walk it
        clean = False
    return doc if clean else _escaped_copy(doc)


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
# keep non-ASCII as UTF-8): C0 controls as JSON escapes (\n, \t, \u001b, ...; a backslash in the
# text matches too, harmlessly: the copy is then made), DEL, C1 controls and the bidi formatting
# characters as their raw UTF-8 bytes (U+0080-009F: C2 80-9F; U+200E/F, U+202A-202E: E2 80 ..;
# U+2066-2069: E2 81 A6-A9).
_SUSPECT = re.compile(rb"\\[bfnrtu]|\x7f|\xc2[\x80-\x9f]|\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]")

try:  # optional at run time, like the readers' orjson
    from orjson import OPT_NON_STR_KEYS, dumps as _orjson_dumps

    def _json_bytes(doc: Any) -> bytes:
        return _orjson_dumps(doc, option=OPT_NON_STR_KEYS)

except ImportError:
    import json as _json

    def _json_bytes(doc: Any) -> bytes:
        return _json.dumps(doc, ensure_ascii=False).encode()
