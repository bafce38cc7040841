"""kubectl's output formats beyond tables (issue 16): `-o name`, `-o jsonpath=TEMPLATE` and
`-o custom-columns=HEADER:PATH,...`, over the same document `-o json` prints.

The JSONPath dialect is kubectl's template subset: `{.a.b}`, `{.list[*].x}`, `{.list[0]}`,
`{.list[-1]}`, `{.list[?(@.k=="v")].x}`, `{range .list[*]}...{end}`, `{"\\n"}` literals and `{@}`."""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import UserError
from .escape import printable, printable_lines

_TABLE_FORMATS = ("table", "wide")


def parse_output(text: str, allowed: tuple[str, ...]) -> tuple[str, str]:
    """`-o` value -> (format, argument). Unknown formats are input errors listing the allowed ones."""
    fmt, sep, arg = text.partition("=")
    if fmt in ("jsonpath", "custom-columns") and fmt in allowed:
        if not sep or not arg:
            raise UserError(f"-o {fmt} needs a template: -o {fmt}=...")
        return fmt, arg
    if text in allowed and not sep:
        return text, ""
    shown = ", ".join(a + ("=..." if a in ("jsonpath", "custom-columns") else "") for a in allowed)
    from ..model.lookup import did_you_mean

    raise UserError(f"unknown output format {text!r}{did_you_mean(fmt, allowed)}: want one of {shown}")


# ---- JSONPath ------------------------------------------------------------------------------------

_SEGMENT = re.compile(r"""\.\.|\.([^.\[\]]+)|\[\*\]|\[(-?\d+)\]|\[\?\(@\.([\w.-]+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|(-?[\w.]+))\)\]""")


def _steps(path: str) -> list[tuple]:
    path = path.strip()
    if path.startswith("$"):
        path = path[1:]
    if path.startswith("@"):
        path = path[1:]
    out, pos = [], 0
    while pos < len(path):
        m = _SEGMENT.match(path, pos)
        if not m:
            raise UserError(f"invalid jsonpath {path!r} at {path[pos:]!r}")
        tok = m.group(0)
        if tok == "..":
            raise UserError("recursive descent (..) is not supported in -o jsonpath")
        if m.group(1) is not None:
            out.append(("key", m.group(1)))
        elif tok == "[*]":
            out.append(("all",))
        elif m.group(2) is not None:
            out.append(("index", int(m.group(2))))
        else:
            want = next(g for g in (m.group(5), m.group(6), m.group(7)) if g is not None)
            out.append(("filter", m.group(3), m.group(4), want))
        pos = m.end()
    return out


def evaluate(path: str, data: Any) -> list[Any]:
    """Every value the path selects (missing keys select nothing, as kubectl's allowMissingKeys)."""
    cur = [data]
    for st in _steps(path):
        nxt: list[Any] = []
        for v in cur:
            if st[0] == "key":
                if isinstance(v, dict) and st[1] in v:
                    nxt.append(v[st[1]])
            elif st[0] == "all":
                nxt.extend(v if isinstance(v, list) else v.values() if isinstance(v, dict) else [])
            elif st[0] == "index":
                if isinstance(v, list) and -len(v) <= st[1] < len(v):
                    nxt.append(v[st[1]])
            else:
                _, key, op, want = st
                for item in v if isinstance(v, list) else []:
                    got = _get(item, key)
                    if (_text(got) == want) == (op == "=="):
                        nxt.append(item)
        cur = nxt
    return cur


def _get(item: Any, dotted: str) -> Any:
    for k in dotted.split("."):
        if not isinstance(item, dict):
            return None
        item = item.get(k)
    return item


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


_BLOCK = re.compile(r"\{((?:[^{}\"]|\"(?:\\.|[^\"\\])*\")*)\}")


def _parse_template(template: str) -> list[tuple[str, str]]:
    parts, pos = [], 0
    for m in _BLOCK.finditer(template):
        if m.start() > pos:
            parts.append(("text", template[pos:m.start()]))
        parts.append(("expr", m.group(1).strip()))
        pos = m.end()
    if pos < len(template):
        parts.append(("text", template[pos:]))
    if any(p[0] == "text" and ("{" in p[1] or "}" in p[1]) for p in parts):
        raise UserError(f"invalid jsonpath template {template!r}: unbalanced braces")
    return parts


def jsonpath(template: str, data: Any) -> str:
    parts = _parse_template(template)
    out: list[str] = []
    _run(parts, 0, data, out, top=True)
    return "".join(out)


def _run(parts: list[tuple[str, str]], i: int, data: Any, out: list[str], top: bool = False) -> int:
    """Render parts from i until the matching {end} (returns the index after it)."""
    while i < len(parts):
        kind, body = parts[i]
        if kind == "text":
            out.append(body)
        elif body == "end":
            if top:
                raise UserError("jsonpath template: {end} without {range}")
            return i + 1
        elif body.startswith("range "):
            items = evaluate(body[6:], data)
            end = _skip(parts, i + 1)
            for item in items:
                _run(parts, i + 1, item, out)
            i = end
            continue
        elif body.startswith('"') and body.endswith('"'):
            out.append(_literal(body))  # the template's own text: written as the user typed it
        else:
            out.append(printable(" ".join(_text(v) for v in evaluate(body, data))))
        i += 1
    if not top:
        raise UserError("jsonpath template: {range} without {end}")
    return i


def _literal(body: str) -> str:
    """A `{"..."}` literal, JSON string escapes as kubectl reads them (`{"\\n"}`)."""
    try:
        text = json.loads(body)
    except ValueError as e:
        raise UserError(f"invalid jsonpath literal {body}: {e.args[0].split(':')[0]}") from None
    if not isinstance(text, str):
        raise UserError(f"invalid jsonpath literal {body}")
    return text


def _skip(parts: list[tuple[str, str]], i: int) -> int:
    depth = 1
    while i < len(parts):
        kind, body = parts[i]
        if kind == "expr" and body.startswith("range "):
            depth += 1
        elif kind == "expr" and body == "end":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise UserError("jsonpath template: {range} without {end}")


# ---- custom-columns ------------------------------------------------------------------------------

def custom_columns(spec: str, items: list[Any]) -> tuple[list[str], list[list[str]]]:
    """HEADER:PATH,... over each item (PATH relative to the item, kubectl style: `.name`)."""
    cols = []
    for part in spec.split(","):
        header, sep, path = part.partition(":")
        if not sep or not header or not path:
            raise UserError(f"invalid custom-columns entry {part!r}: want HEADER:.path")
        path = path.strip()
        if path.startswith("{") and path.endswith("}"):
            path = path[1:-1]
        _steps(path)  # validate before rendering
        cols.append((header.strip(), path))
    rows = [[",".join(_text(v) for v in evaluate(p, it)) or "<none>" for _, p in cols] for it in items]
    return [h for h, _ in cols], rows


# ---- -o name ---------------------------------------------------------------------------------------

def victim_names(doc: dict) -> str:
    """The victim pods as kubectl's `-o name` prints them (`pod/NAME`), one a line. Names are
    checked at load (snapshot/decode/fields.py checked_name), and escaped here all the same."""
    return printable_lines(f"pod/{v['name']}" for v in doc.get("victims") or [])


def unit_names(doc: dict) -> str:
    """rank's `-o name`: `kind/NAME` per unit, one a line, escaped like victim_names."""
    return printable_lines(f"{u['kind'].lower()}/{u['name']}" for u in doc.get("units") or [])
