"""kubectl's JSONPath: the template language of `-o jsonpath=` and of `-o custom-columns=` cells,
read and run the way kubectl reads and runs it, so a template a runbook uses with `kubectl get`
selects, prints and fails the same here.

Mirrors k8s.io/client-go/util/jsonpath (v0.37.2): parser.go (`Parse`, `parseInsideAction`,
`parseArray`, `parseFilter`, `parseQuote`, `parseField`, `parseNumber`, `parseIdentifier`,
`parseRecursive`, `UnquoteExtend`), jsonpath.go (`FindResults` with its range/end counters,
`evalField`, `evalArray`, `evalFilter`, `evalWildcard`, `evalRecursive`, `evalUnion`,
`evalIdentifier`, `PrintResults`, `evalToText`) and the comparisons of
client-go/third_party/forked/golang/template/funcs.go. Values are the JSON document's Python values
(dict, list, str, int, float, bool, None) standing for kubectl's unstructured ones (maps, slices,
string, int64, float64, bool, nil); they print as Go's fmt and encoding/json print those
(report/gofmt.py).

Error messages are client-go's words; kubectl wraps them (cli-runtime printers.JSONPathPrinter):
`error parsing jsonpath TEMPLATE, ERR` and `error executing jsonpath "TEMPLATE": Error executing
template: ERR.` (`parse_error`, `JSONPathError.executing`)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ..errors import UserError
from .gofmt import go_json, go_quote, go_text, go_type


class JSONPathError(UserError):
    """A template kubectl refuses too: `message` is client-go's text, without kubectl's wrapping."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def parse_error(template: str, e: JSONPathError) -> UserError:
    """kubectl's line for a template that does not parse (printers.NewJSONPathPrinter's error as
    get's PrintFlags report it)."""
    return UserError(f"error parsing jsonpath {template}, {e.message}")


def exec_error(template: str, e: JSONPathError) -> UserError:
    """kubectl's first line for a template that fails on the document.
    UPSTREAM-DIFF: kubectl goes on with "Printing more information for debugging the template:" and
    a Go dump of the whole object (hundreds of lines for a report); one line on stderr here."""
    return UserError(f"error executing jsonpath {go_quote(template)}: Error executing template: {e.message}.")


def _go_unicode(r: str) -> str:
    """fmt's %#U: `U+0023 '#'` (the character itself only when printable)."""
    return f"U+{ord(r):04X}" + (f" '{r}'" if r.isprintable() else "")


# ---- the parse tree (node.go) ----------------------------------------------------------------------
# Nodes are tuples: ("text", s) ("list", [nodes]) ("field", name) ("ident", name) ("array", params)
# ("filter", left_list, right_list, op) ("int", n) ("float", x) ("bool", b) ("wild",) ("rec",)
# ("union", [lists]). An array's params are three (value, known, derived) triples: start, end, step.

_SLICE = re.compile(r"^(-?\d*)(:-?\d*)?(:-?\d*)?$")
_DICT_KEY = re.compile(r"^'([^']*)'$")
_FILTER = re.compile(r"^([^!<>=]+)([!<>=]+)(.+?)$")
_INT = re.compile(r"^[+-]?[0-9]+$")
_EOF = ""


def _terminator(r: str) -> bool:
    return r in (" ", "\t", "\r", "\n", _EOF, ".", ",", "[", "]", "$", "@", "{", "}")


def _alnum(r: str) -> bool:
    return r == "_" or (r != _EOF and (r.isalpha() or unicodedata.category(r) == "Nd"))


class _Parser:
    """One template: `root` is the list of top-level nodes (texts and one list per `{...}`)."""

    def __init__(self, text: str) -> None:
        self.input, self.pos, self.start = text, 0, 0
        self.root: list[Any] = []
        self._parse()

    def _next(self) -> str:
        if self.pos >= len(self.input):
            return _EOF
        self.pos += 1
        return self.input[self.pos - 1]

    def _backup(self, r: str) -> None:
        if r != _EOF:
            self.pos -= 1

    def _peek(self) -> str:
        return self.input[self.pos] if self.pos < len(self.input) else _EOF

    def _consume(self) -> str:
        value = self.input[self.start:self.pos]
        self.start = self.pos
        return value

    def _parse(self) -> None:
        # parseText and parseInsideAction call each other in tail position upstream: one loop here.
        cur: list[Any] | None = None  # the open action's nodes, None between actions
        while True:
            if cur is None:
                at = self.input.find("{", self.pos)
                if at < 0:
                    self.pos = len(self.input)
                    if self.pos > self.start:
                        self.root.append(("text", self._consume()))
                    return
                self.pos = at
                if self.pos > self.start:
                    self.root.append(("text", self._consume()))
                self.pos += 1
                self._consume()
                cur = []
                self.root.append(("list", cur))
                continue
            rest = self.input[self.pos:]
            if rest.startswith("}"):
                self.pos += 1
                self._consume()
                cur = None
            elif rest.startswith("[?("):
                self._filter(cur)
            elif rest.startswith(".."):
                self._recursive(cur)
            else:
                self._action_char(cur)

    def _action_char(self, cur: list[Any]) -> None:
        r = self._next()
        if r == _EOF or r in "\r\n":
            raise JSONPathError("unclosed action")
        if r in " @$":  # a space, or the current object (@, $): nothing to add
            self._consume()
        elif r == "[":
            self._array(cur)
        elif r in "\"'":
            self._quote(cur, r)
        elif r == ".":
            self._field(cur)
        elif r in "+-" or unicodedata.category(r) == "Nd":
            self._backup(r)
            self._number(cur)
        elif _alnum(r):
            self._backup(r)
            self._identifier(cur)
        else:
            raise JSONPathError(f"unrecognized character in action: {_go_unicode(r)}")

    def _identifier(self, cur: list[Any]) -> None:
        while not _terminator(r := self._next()):
            pass
        self._backup(r)
        value = self._consume()
        cur.append(("bool", value == "true") if value in ("true", "false") else ("ident", value))

    def _recursive(self, cur: list[Any]) -> None:
        if cur and cur[-1][0] == "rec":
            raise JSONPathError("invalid multiple recursive descent")
        self.pos += 2
        self._consume()
        cur.append(("rec",))
        if _alnum(self._peek()):
            self._field(cur)

    def _number(self, cur: list[Any]) -> None:
        if self._peek() in ("+", "-"):
            self._next()
        while (r := self._next()) == "." or (r != _EOF and unicodedata.category(r) == "Nd"):
            pass
        self._backup(r)
        value = self._consume()
        if _INT.match(value):
            cur.append(("int", int(value)))
            return
        try:
            cur.append(("float", float(value)))
        except ValueError:
            raise JSONPathError(f"cannot parse number {value}") from None

    def _array(self, cur: list[Any]) -> None:
        while (r := self._next()) != "]":
            if r == _EOF or r == "\n":
                raise JSONPathError("unterminated array")
        text = self._consume()[1:-1]
        if text == "*":
            text = ":"
        parts = text.split(",")
        if len(parts) > 1:
            cur.append(("union", [_action(f"[{p.strip(' ')}]") for p in parts]))
            return
        if (key := _DICT_KEY.match(text)) is not None:
            cur.extend(_action(f".{key.group(1)}")[1])
            return
        m = _SLICE.match(text)
        if m is None:
            raise JSONPathError(f"invalid array index {text}")
        params: list[tuple[int, bool, bool]] = []
        for i, raw in enumerate(m.groups()):
            raw = raw or ""
            if raw:
                digits = raw[1:] if i > 0 else raw
                if i > 0 and digits == "":
                    params.append((0, False, False))
                else:
                    try:
                        params.append((int(digits), True, False))
                    except ValueError:
                        raise JSONPathError(f"array index {digits} is not a number") from None
            elif i == 1:  # [n]: one element, the end derived from the start
                params.append((params[0][0] + 1, True, True))
            else:
                params.append((0, False, False))
        cur.append(("array", tuple(params)))

    def _filter(self, cur: list[Any]) -> None:
        self.pos += 3
        self._consume()
        begin = end = False
        pair = ""
        while True:
            r = self._next()
            if r == _EOF or r == "\n":
                raise JSONPathError("unterminated filter")
            if r in "\"'":
                if not begin:
                    begin, pair = True, r
                    continue
                if self.input[self.pos - 2] != "\\" and r == pair:
                    end = True
            elif r == ")" and begin == end:
                break
        if self._next() != "]":
            raise JSONPathError("unclosed array expect ]")
        text = self._consume()[:-2]
        m = _FILTER.match(text)
        if m is None:
            cur.append(("filter", _action(text), ("list", []), "exists"))
        else:
            cur.append(("filter", _action(m.group(1)), _action(m.group(3)), m.group(2)))

    def _quote(self, cur: list[Any], end: str) -> None:
        while True:
            r = self._next()
            if r == _EOF or r == "\n":
                raise JSONPathError("unterminated quoted string")
            if r == end and self.input[self.pos - 2] != "\\":
                break
        value = self._consume()
        try:
            cur.append(("text", _unquote(value)))
        except ValueError:
            raise JSONPathError(f"unquote string {value} error invalid syntax") from None

    def _field(self, cur: list[Any]) -> None:
        self._consume()
        while True:
            r = self._next()
            if r == "\\":
                self._next()
            elif _terminator(r):
                self._backup(r)
                break
        value = self._consume()
        cur.append(("wild",) if value == "*" else ("field", value.replace("\\", "")))


def _action(text: str) -> tuple[str, list[Any]]:
    """parseAction: `text` read as the inside of one `{...}` (its first list)."""
    root = _Parser("{" + text + "}").root
    return root[0]


def parse(template: str) -> list[Any]:
    """The template's top-level nodes; JSONPathError as client-go's Parse."""
    return _Parser(template).root


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\"}


def _unquote(s: str) -> str:
    """UnquoteExtend: Go's strconv.Unquote, for single quotes too. ValueError: invalid syntax."""
    if len(s) < 2 or s[0] != s[-1] or s[0] not in "\"'":
        raise ValueError
    quote, body = s[0], s[1:-1]
    if "\\" not in body and quote not in body:
        return body
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == quote:
            raise ValueError
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(body):
            raise ValueError
        e = body[i + 1]
        i += 2
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
        elif e in "\"'":
            if e != quote:
                raise ValueError
            out.append(e)
        elif e in "xuU":
            n = {"x": 2, "u": 4, "U": 8}[e]
            digits = body[i:i + n]
            if len(digits) != n or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise ValueError
            v = int(digits, 16)
            if e != "x" and (v > 0x10FFFF or 0xD800 <= v <= 0xDFFF):
                raise ValueError
            out.append(chr(v))
            i += n
        elif e in "01234567":
            digits = body[i - 1:i + 2]
            if len(digits) != 3 or not all(d in "01234567" for d in digits) or int(digits, 8) > 255:
                raise ValueError
            out.append(chr(int(digits, 8)))
            i += 2
        else:
            raise ValueError
    return "".join(out)


# ---- running a template (jsonpath.go) --------------------------------------------------------------

class _Run:
    """One execution: the range/end counters FindResults keeps between its recursive calls."""

    def __init__(self, nodes: list[Any], allow_missing: bool) -> None:
        self.nodes = nodes
        self.allow_missing = allow_missing
        self.begin_range = self.in_range = self.end_range = 0
        self.last_end = -1  # index in self.nodes of the {end} that closed the last range

    def find_results(self, start: int, data: Any) -> list[list[Any]]:
        cur, full = [data], []
        i = start
        while i < len(self.nodes):
            results = self.walk(cur, self.nodes[i])
            if 0 < self.end_range <= self.in_range:  # an {end}: this range body is done
                self.end_range -= 1
                self.last_end = i
                break
            if self.begin_range > 0:  # a {range ...}: its body once per result, from the next node
                self.begin_range -= 1
                self.in_range += 1
                if results:
                    for value in results:
                        full.extend(self.find_results(i + 1, value))
                else:  # still walked, so the {end} is found and skipped
                    self.find_results(i + 1, None)
                self.in_range -= 1
                if self.last_end > i:  # resume after the {end} (upstream: when it is one of ours)
                    i = self.last_end
                i += 1
                continue
            full.append(results)
            i += 1
        return full

    def walk(self, values: list[Any], node: tuple) -> list[Any]:
        kind = node[0]
        if kind == "list":
            for n in node[1]:
                values = self.walk(values, n)
            return values
        if kind == "text":
            return [node[1]]
        if kind == "field":
            return self._field(values, node[1])
        if kind == "array":
            return self._array(values, node[1])
        if kind == "filter":
            return self._filter(values, node[1], node[2], node[3])
        if kind in ("int", "float", "bool"):
            return [node[1]] * len(values)
        if kind == "wild":
            return [c for v in values if v is not None for c in _children(v)]
        if kind == "rec":
            return _recursive(values)
        if kind == "union":
            return [r for lst in node[1] for r in self.walk(values, lst)]
        return self._identifier(values, node[1])

    def _identifier(self, values: list[Any], name: str) -> list[Any]:
        if name == "range":
            self.begin_range += 1
            return values
        if name == "end":
            if self.in_range > 0:
                self.end_range += 1
                return []
            raise JSONPathError("not in range, nothing to end")
        raise JSONPathError(f"unrecognized identifier {name}")

    def _field(self, values: list[Any], name: str) -> list[Any]:
        if not values:
            return []
        out = [v[name] for v in values if isinstance(v, dict) and name in v]
        if not out and not self.allow_missing:
            raise JSONPathError(f"{name} is not found")
        return out

    def _array(self, values: list[Any], params: tuple) -> list[Any]:
        out: list[Any] = []
        (p0, k0, _), (p1, k1, d1), (p2, k2, _) = params
        for v in values:
            if v is None:
                continue
            if not isinstance(v, list):
                raise JSONPathError(f"{go_type(v)} is not array or slice")
            n = len(v)
            start = p0 if k0 else 0
            if start < 0:
                start += n
            end = p1 if k1 else n
            if end < 0 or (end == 0 and d1):
                end += n
            if end == start:  # zero elements asked for: allowed, and the rest of the input dropped
                return out
            if start >= n or start < 0:
                raise JSONPathError(f"array index out of bounds: index {start}, length {n}")
            if end > n or end < 0:
                raise JSONPathError(f"array index out of bounds: index {end - 1}, length {n}")
            if start > end:
                raise JSONPathError(f"starting index {start} is greater than ending index {end}")
            step = 1
            if k2:
                if p2 <= 0:
                    raise JSONPathError("step must be > 0")
                step = p2
            out.extend(v[start:end:step])
        return out

    def _filter(self, values: list[Any], left: tuple, right: tuple, op: str) -> list[Any]:
        out: list[Any] = []
        for v in values:
            if not isinstance(v, list):
                raise JSONPathError(f"{go_text(v)} is not array or slice and cannot be filtered")
            for item in v:
                try:
                    lefts: list[Any] | None = self.walk([item], left)
                    err: JSONPathError | None = None
                except JSONPathError as e:
                    lefts, err = None, e
                if op == "exists":
                    if lefts:
                        out.append(item)
                    continue
                if err is not None:
                    raise err
                assert lefts is not None
                if not lefts:
                    continue
                if len(lefts) > 1:
                    raise JSONPathError("can only compare one element at a time")
                rights = self.walk([item], right)
                if not rights:
                    continue
                if len(rights) > 1:
                    raise JSONPathError("can only compare one element at a time")
                if _compare(lefts[0], rights[0], op):
                    out.append(item)
        return out


def _children(v: Any) -> list[Any]:
    """evalWildcard's values of one value. UPSTREAM-DIFF: a map's values in the document's key
    order (Go's map order is random: kubectl's `{.a.*}` order changes from run to run)."""
    if isinstance(v, dict):
        return list(v.values())
    if isinstance(v, list):
        return list(v)
    if isinstance(v, str):
        return list(v.encode())  # a Go string indexes to its bytes (uint8), which print as numbers
    return []


def _recursive(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if v is None:
            continue
        children = _children(v)
        if children:
            out.append(v)
            out.extend(_recursive(children))
    return out


def _basic(v: Any) -> str:
    """template's basicKind: only a bool, a number or a string compares."""
    kind = go_type(v)
    if kind not in ("bool", "int64", "float64", "string"):
        raise JSONPathError("invalid type for comparison")
    return kind


def _compare(a: Any, b: Any, op: str) -> bool:
    """template.Equal/Less and friends: same basic kinds only (an int is not a float)."""
    if op not in ("==", "!=", "<", ">", "<=", ">="):
        raise JSONPathError(f"unrecognized filter operator {op}")
    ka, kb = _basic(a), _basic(b)
    if ka != kb:
        raise JSONPathError("incompatible types for comparison")
    if op in ("==", "!="):
        return (a == b) == (op == "==")
    if ka == "bool":
        raise JSONPathError("invalid type for comparison")
    return {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]


def find_results(template_nodes: list[Any], data: Any, allow_missing: bool = True) -> list[list[Any]]:
    return _Run(template_nodes, allow_missing).find_results(0, data)


def execute(template: str, data: Any, *, allow_missing: bool = True, as_json: bool = False) -> str:
    """What `kubectl ... -o jsonpath=TEMPLATE` (as_json: `-o jsonpath-as-json=`) writes for `data`,
    or kubectl's error line (UserError)."""
    try:
        nodes = parse(template)
    except JSONPathError as e:
        raise parse_error(template, e) from None
    try:
        full = find_results(nodes, data, allow_missing)
    except JSONPathError as e:
        raise exec_error(template, e) from None
    out: list[str] = []
    for results in full:
        if as_json:
            out.append(go_json(results, indent="    ") + "\n")
            continue
        out.append(" ".join(go_json(r) if isinstance(r, (dict, list)) else go_text(r, top=True) for r in results))
    return "".join(out)
