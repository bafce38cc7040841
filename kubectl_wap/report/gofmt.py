"""Values printed as kubectl, a Go program, prints them: fmt.Sprint (`go_text`: custom-columns
cells, jsonpath scalars), encoding/json's Marshal (`go_json`: a jsonpath result that is a map or a
list) and strconv.Quote (`go_quote`: the template in kubectl's error line). A document's Python
values stand for kubectl's unstructured ones: dict, list, str, int, float, bool and None for
map[string]interface{}, []interface{}, string, int64, float64, bool and nil."""

from __future__ import annotations

import math
import re
from typing import Any


def go_text(v: Any, top: bool = False) -> str:
    """fmt.Sprint of an unstructured value (custom-columns cells; jsonpath's scalars, where a null
    prints `null`: `top`)."""
    if v is None:
        return "null" if top else "<nil>"
    if (text := _scalar(v, json=False)) is not None:
        return text
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{go_text(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(go_text(x) for x in v) + "]"
    return str(v)


def _scalar(v: Any, json: bool) -> str | None:
    """A bool or a number as fmt (or encoding/json) writes it; None for any other value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _go_float(v, json)
    return None


def _go_float(f: float, json: bool) -> str:
    """strconv's shortest form as fmt's %v (exponent from 1e+06 and below 1e-04) or encoding/json
    (exponent from 1e21 and below 1e-6, as `1e-7`) write it."""
    if math.isnan(f) or math.isinf(f):
        return "NaN" if math.isnan(f) else ("+Inf" if f > 0 else "-Inf")
    if f == 0:
        return "-0" if math.copysign(1, f) < 0 else "0"
    from decimal import Decimal  # here: one float in a template is rare, the import is not free

    sign, digits, exp = Decimal(repr(f)).normalize().as_tuple()
    ds = "".join(map(str, digits))
    x = len(ds) - 1 + int(exp)  # the decimal exponent of the first digit
    use_e = (x < -6 or x >= 21) if json else (x < -4 or x >= 6)  # strconv's %g: shortest => eprec 6
    if use_e:
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        e = f"{'-' if x < 0 else '+'}{abs(x):02d}" if not json else f"{'-' if x < 0 else '+'}{abs(x)}"
        return ("-" if sign else "") + mant + "e" + e
    if x < 0:
        body = "0." + "0" * (-x - 1) + ds
    elif x + 1 >= len(ds):
        body = ds + "0" * (x + 1 - len(ds))
    else:
        body = ds[:x + 1] + "." + ds[x + 1:]
    return ("-" if sign else "") + body


def go_json(v: Any, indent: str = "") -> str:
    """encoding/json's Marshal (indent: MarshalIndent): keys sorted, <, > and & escaped as \\u003c
    and friends, numbers as Go writes them."""
    return _json(v, indent, "")


def _json(v: Any, indent: str, pad: str) -> str:
    if v is None:
        return "null"
    if (text := _scalar(v, json=True)) is not None:
        return text
    if isinstance(v, str):
        return _json_string(v)
    inner = pad + indent
    sep, nl = ("," + ("\n" + inner if indent else ""), "\n" + inner if indent else "")
    end = "\n" + pad if indent else ""
    colon = ": " if indent else ":"
    if isinstance(v, dict):
        if not v:
            return "{}"
        return "{" + nl + sep.join(_json_string(str(k)) + colon + _json(v[k], indent, inner) for k in sorted(v, key=str)) + end + "}"
    if isinstance(v, (list, tuple)):
        if not v:
            return "[]"
        return "[" + nl + sep.join(_json(x, indent, inner) for x in v) + end + "]"
    return _json_string(str(v))


_JSON_ESC = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f",
             "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_JSON_SPECIAL = re.compile('["\\\\<>&\u2028\u2029\\x00-\\x1f\ud800-\udfff]')


def _json_string(s: str) -> str:
    def esc(m: re.Match[str]) -> str:
        c = m.group()
        if c in _JSON_ESC:
            return _JSON_ESC[c]
        if "\ud800" <= c <= "\udfff":
            return "\ufffd"  # Go writes invalid UTF-8 as the replacement character
        return f"\\u{ord(c):04x}"

    return '"' + _JSON_SPECIAL.sub(esc, s) + '"'


def go_type(v: Any) -> str:
    """The Go type kubectl's unstructured value of `v` has, as its errors name it."""
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "map[string]interface {}"
    return "[]interface {}"


def go_quote(s: str) -> str:
    """strconv.Quote (what %q writes): printable characters as they are, others escaped."""
    out = ['"']
    for c in s:
        if c in ('"', "\\"):
            out.append("\\" + c)
        elif c in "\a\b\f\n\r\t\v":
            out.append("\\" + "abfnrtv"["\a\b\f\n\r\t\v".index(c)])
        elif c.isprintable() or c == " ":
            out.append(c)
        elif ord(c) < 0x80:
            out.append(f"\\x{ord(c):02x}")
        elif ord(c) < 0x10000:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    out.append('"')
    return "".join(out)
