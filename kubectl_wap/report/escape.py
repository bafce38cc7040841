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
    """A copy of a report document with every string (keys too) passed through printable()."""
    if isinstance(doc, str):
        return printable(doc)
    if isinstance(doc, dict):
        return {printable(k) if isinstance(k, str) else k: printable_doc(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [printable_doc(v) for v in doc]
    if isinstance(doc, tuple):
        return tuple(printable_doc(v) for v in doc)
    return doc
