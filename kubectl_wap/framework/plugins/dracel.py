"""A documented subset of CEL for DRA device selectors (issue 15).

kube-scheduler evaluates DeviceClass and claim selectors with cel-go in the environment of
k8s.io/dynamic-resource-allocation/cel (compile.go): one variable ``device`` with ``driver``,
``allowMultipleAllocations``, ``attributes`` (domain -> name -> value) and ``capacity`` (domain ->
name -> Quantity); looking up an unknown *domain* gives an empty map (``mapper.Find``), an unknown
name inside a domain is a runtime error ("no such key").

We evaluate this subset, which covers the selectors drivers and users write in practice:

* literals: strings ("...", '...', raw r"...", triple-quoted, with CEL's escapes), integers, true/false, lists ``[a, b]``;
* ``device.driver``, ``device.allowMultipleAllocations``, ``device.attributes["domain"].name``,
  ``device.capacity["domain"].name`` (also ``["name"]`` for the last step);
* ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` on ints, strings and bools; ``in`` on lists and maps;
  ``&&``, ``||``, ``!``, parentheses; ``has(x.y)``;
* Kubernetes library functions: ``quantity("1Gi")``, ``semver("1.2.3")`` and their methods
  ``compareTo``, ``isGreaterThan``, ``isLessThan`` (and ``asInteger`` on quantities).

Anything else (macros such as ``all``/``exists``, arithmetic, ternaries, optional chaining,
string functions, ...) is :class:`CelUnsupported` at compile time; the plugin then names the claim
in a warning and treats the selector as matching no device, never as a silent pass. Not cel-python
or common-expression-language: neither knows the Kubernetes extensions (quantity, semver) nor the
default-empty-map domains, and cel-python would bring five native and pure dependencies
(google-re2, pendulum, lark, jmespath, tzdata) into a kubectl plugin for a dozen operators.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Mapping

from ...model.dra import CEL_STRING, SEMVER, cel_string_value
from ...quantity import QuantityError, parse_quantity


class CelUnsupported(ValueError):
    """The expression is outside the subset (or not valid CEL)."""


class CelRuntimeError(ValueError):
    """Evaluation failed as cel-go's would (no such key, no matching overload)."""


@dataclass(frozen=True, slots=True)
class Quantity:
    value: Fraction


@dataclass(frozen=True, slots=True)
class Semver:
    parts: tuple[int, int, int]


def semver(text: str) -> Semver:
    m = SEMVER.match(text)
    if not m:
        raise CelRuntimeError(f"could not parse {text!r} as semver")
    return Semver((int(m.group(1)), int(m.group(2)), int(m.group(3))))


_TOKEN = re.compile(r"""\s*(?:
    (?P<str>""" + CEL_STRING + r""")
  | (?P<num>\d+)
  | (?P<op>==|!=|<=|>=|&&|\|\||[<>!()\[\].,])
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<bad>\S)
)""", re.VERBOSE)


def _tokens(src: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    src = src.rstrip()
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if m is None:
            break
        pos = m.end()
        kind = m.lastgroup or "bad"
        text = m.group(kind)
        if kind == "bad":
            raise CelUnsupported(f"unsupported character {text!r}")
        if kind == "id" and text == "in":
            kind = "op"
        out.append((kind, text))
    return out


class _Parser:
    """Recursive descent over CEL's precedence: || < && < relations < unary < member/call."""

    def __init__(self, src: str):
        self.toks = _tokens(src)
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, text: str | None = None) -> tuple[str, str]:
        t = self.peek()
        if t is None or (text is not None and t[1] != text):
            raise CelUnsupported(f"expected {text or 'more'} at token {self.i + 1}")
        self.i += 1
        return t

    def parse(self) -> tuple:
        node = self.or_()
        if self.peek() is not None:
            raise CelUnsupported(f"unsupported syntax near {self.peek()[1]!r}")
        return node

    def or_(self) -> tuple:
        node = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            node = ("or", node, self.and_())
        return node

    def and_(self) -> tuple:
        node = self.rel()
        while self.peek() == ("op", "&&"):
            self.take()
            node = ("and", node, self.rel())
        return node

    def rel(self) -> tuple:
        node = self.unary()
        t = self.peek()
        if t is not None and t[0] == "op" and t[1] in ("==", "!=", "<", "<=", ">", ">=", "in"):
            self.take()
            node = ("cmp", t[1], node, self.unary())
            t = self.peek()
            if t is not None and t[0] == "op" and t[1] in ("==", "!=", "<", "<=", ">", ">=", "in"):
                raise CelUnsupported("chained comparison")
        return node

    def unary(self) -> tuple:
        if self.peek() == ("op", "!"):
            self.take()
            return ("not", self.unary())
        return self.member()

    def member(self) -> tuple:
        node = self.primary()
        while True:
            t = self.peek()
            if t == ("op", "."):
                self.take()
                kind, name = self.take()
                if kind != "id":
                    raise CelUnsupported(f"expected a name after '.', got {name!r}")
                if self.peek() == ("op", "("):
                    node = ("call", name, node, self.args())
                else:
                    node = ("field", node, name)
            elif t == ("op", "["):
                self.take()
                key = self.or_()
                self.take("]")
                node = ("index", node, key)
            else:
                return node

    def args(self) -> tuple:
        self.take("(")
        out = []
        if self.peek() != ("op", ")"):
            out.append(self.or_())
            while self.peek() == ("op", ","):
                self.take()
                out.append(self.or_())
        self.take(")")
        return tuple(out)

    def primary(self) -> tuple:
        kind, text = self.take()
        if kind == "str":
            return ("lit", _unquote(text))
        if kind == "num":
            return ("lit", int(text))
        if kind == "id":
            if text in ("true", "false"):
                return ("lit", text == "true")
            if self.peek() == ("op", "("):
                if text not in ("quantity", "semver", "has"):
                    raise CelUnsupported(f"function {text}() is not supported")
                args = self.args()
                if len(args) != 1:
                    raise CelUnsupported(f"{text}() takes one argument")
                if text == "has" and args[0][0] not in ("field", "index"):
                    raise CelUnsupported("has() needs a field selection")
                return ("fn", text, args[0])
            if text != "device":
                raise CelUnsupported(f"unknown variable {text!r} (only 'device')")
            return ("device",)
        if text == "(":
            node = self.or_()
            self.take(")")
            return node
        if text == "[":
            items = []
            if self.peek() != ("op", "]"):
                items.append(self.or_())
                while self.peek() == ("op", ","):
                    self.take()
                    items.append(self.or_())
            self.take("]")
            return ("list", tuple(items))
        raise CelUnsupported(f"unsupported syntax {text!r}")


def _unquote(text: str) -> str:
    # cel-go's unescaping (model/dra.py: redaction hashes the same values the selector compares)
    try:
        return cel_string_value(text)
    except ValueError as e:
        raise CelUnsupported(str(e)) from None


@lru_cache(maxsize=1024)
def compile_expr(src: str) -> tuple:
    """The AST of `src`; CelUnsupported when it is outside the subset."""
    return _Parser(src).parse()


@dataclass(frozen=True, slots=True)
class DeviceEnv:
    driver: str
    allow_multiple_allocations: bool
    attributes: Mapping[str, Mapping[str, Any]]  # domain -> name -> value
    capacity: Mapping[str, Mapping[str, Fraction]]


_EMPTY: Mapping[str, Any] = {}


def _lookup(container: Any, key: Any, what: str) -> Any:
    if isinstance(container, _Domains):
        return container.get(key)
    if isinstance(container, Mapping):
        if key not in container:
            raise CelRuntimeError(f"no such key: {key}")
        return container[key]
    raise CelRuntimeError(f"no such overload: {what} on {type(container).__name__}")


class _Domains(dict):
    """device.attributes / device.capacity: an unknown domain is an empty map (mapper.Find)."""

    def get(self, key: Any, default: Any = None) -> Any:  # type: ignore[override]
        return dict.get(self, key, _EMPTY)


def _compare(op: str, a: Any, b: Any) -> bool:
    if op == "in":
        if isinstance(b, (list, tuple)):
            return any(_compare("==", a, x) for x in b)
        if isinstance(b, Mapping):
            return a in b
        raise CelRuntimeError("no such overload: in")
    if type(a) is not type(b):
        if op in ("==", "!=") and not (isinstance(a, (Quantity, Semver)) or isinstance(b, (Quantity, Semver))):
            # cel-go: heterogeneous equality is false (different types are never equal)
            return (op == "!=")
        raise CelRuntimeError(f"no such overload: {type(a).__name__} {op} {type(b).__name__}")
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if isinstance(a, (Quantity, Semver)) or isinstance(a, bool) and op not in ("==", "!="):
        raise CelRuntimeError(f"no such overload: {op} on {type(a).__name__}")
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _cmp3(a: Any, b: Any) -> int:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        x, y = a.value, b.value
    elif isinstance(a, Semver) and isinstance(b, Semver):
        x, y = a.parts, b.parts  # type: ignore[assignment]
    else:
        raise CelRuntimeError("no such overload: compareTo")
    return (x > y) - (x < y)


def _eval(node: tuple, env: DeviceEnv) -> Any:
    op = node[0]
    if op == "lit":
        return node[1]
    if op == "and":  # cel-go's commutative && / ||: a decisive side wins over an error
        try:
            left = _eval(node[1], env)
        except CelRuntimeError:
            if _eval(node[2], env) is False:
                return False
            raise
        return False if left is False else _eval(node[2], env) if left is True else _bad_bool()
    if op == "or":
        try:
            left = _eval(node[1], env)
        except CelRuntimeError:
            if _eval(node[2], env) is True:
                return True
            raise
        return True if left is True else _eval(node[2], env) if left is False else _bad_bool()
    if op == "not":
        v = _eval(node[1], env)
        if not isinstance(v, bool):
            raise CelRuntimeError("no such overload: !")
        return not v
    if op == "cmp":
        return _compare(node[1], _eval(node[2], env), _eval(node[3], env))
    if op == "device":
        return env
    if op == "field":
        return _field(_eval(node[1], env), node[2])
    if op == "index":
        return _lookup(_eval(node[1], env), _eval(node[2], env), "[]")
    if op == "list":
        return [_eval(x, env) for x in node[1]]
    if op == "fn":
        name, arg = node[1], node[2]
        if name == "has":
            try:
                _eval(arg, env)
                return True
            except CelRuntimeError:
                return False
        v = _eval(arg, env)
        if not isinstance(v, str):
            raise CelRuntimeError(f"no such overload: {name}({type(v).__name__})")
        if name == "quantity":
            try:
                return Quantity(parse_quantity(v))
            except QuantityError as e:
                raise CelRuntimeError(str(e)) from None
        return semver(v)
    if op == "call":
        name, recv, args = node[1], _eval(node[2], env), [_eval(a, env) for a in node[3]]
        if name in ("compareTo", "isGreaterThan", "isLessThan") and len(args) == 1:
            c = _cmp3(recv, args[0])
            return c if name == "compareTo" else (c > 0 if name == "isGreaterThan" else c < 0)
        if name == "asInteger" and not args and isinstance(recv, Quantity):
            if recv.value.denominator != 1:
                raise CelRuntimeError("cannot convert value to integer")
            return int(recv.value)
        if name in ("major", "minor", "patch") and not args and isinstance(recv, Semver):
            return recv.parts[("major", "minor", "patch").index(name)]
        raise CelRuntimeError(f"no such overload: {name}")
    raise CelRuntimeError(f"cannot evaluate {op}")


def _bad_bool() -> bool:
    raise CelRuntimeError("no such overload: logical operator on a non-bool")


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, DeviceEnv):
        if name == "driver":
            return obj.driver
        if name == "allowMultipleAllocations":
            return obj.allow_multiple_allocations
        if name == "attributes":
            a = obj.attributes
            return a if isinstance(a, _Domains) else _attr_domains(a)
        if name == "capacity":
            c = obj.capacity
            return c if isinstance(c, _Domains) else _cap_domains(c)
        raise CelRuntimeError(f"no such key: {name}")
    return _lookup(obj, name, "." + name)


def _attr_domains(a: Mapping[str, Mapping[str, Any]]) -> "_Domains":
    return _Domains({d: {k: (_version(v[1]) if isinstance(v, tuple) else v) for k, v in m.items()} for d, m in a.items()})


def _cap_domains(c: Mapping[str, Mapping[str, Fraction]]) -> "_Domains":
    return _Domains({d: {k: Quantity(v) for k, v in m.items()} for d, m in c.items()})


def _version(text: str) -> Any:
    try:
        return semver(text)
    except CelRuntimeError:
        return text  # an unparsable version attribute: compared as the string it is


def device_env(driver: str, allow_multiple: bool, attributes: Mapping[str, Mapping[str, Any]],
               capacity: Mapping[str, Mapping[str, Fraction]]) -> DeviceEnv:
    """A DeviceEnv whose maps are converted once (a device is matched against many selectors)."""
    return DeviceEnv(driver, allow_multiple, _attr_domains(attributes), _cap_domains(capacity))


def matches(expr: str, env: DeviceEnv) -> bool:
    """Evaluate a selector; CelUnsupported / CelRuntimeError propagate to the caller."""
    v = _eval(compile_expr(expr), env)
    if not isinstance(v, bool):
        raise CelRuntimeError(f"CEL result of type {type(v).__name__} could not be converted to bool")
    return v
