"""`whatif --fail-if EXPR`: the CI gate's predicate language (issue 36), over a WhatIfReport.

A predicate names facts of the report, computed from its fields (FIELDS below), compares them, and
combines comparisons with `and`, `or`, `not` and parentheses:

    victims > 0
    pdbViolated
    namespace in (prod, payments)
    gpuPods > 4 or (outcome == Preempt and victimUnits >= 3)

Parsing is strict: an unknown field, an operator the field's type has no meaning for, or a value of
the wrong type is refused before anything is read (one line naming the valid fields, the closest
first). `evaluate` is a pure function of the document; the CLI maps a firing gate to its exit code.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any, Callable, Union

from ..errors import UserError
from ..model import Snapshot
from ..model.lookup import did_you_mean, namespace_near_miss

NUMBER, BOOL, TEXT, TEXTS = "number", "boolean", "text", "set of text"


def _gpu(resource: str) -> bool:
    # nvidia.com/gpu, amd.com/gpu, gpu.intel.com/i915, ...: the vendors' device-plugin names
    return "gpu" in resource.lower()


def _victims(doc: dict) -> list[dict]:
    return list(doc.get("victims") or [])


@dataclass(frozen=True, slots=True)
class Field:
    type: str
    help: str
    get: Callable[[dict], Any]


FIELDS: dict[str, Field] = {
    "victims": Field(NUMBER, "victim pods", lambda d: len(_victims(d))),
    "victimUnits": Field(NUMBER, "victim units (a pod, or a whole PodGroup/CompositePodGroup)", lambda d: len(d.get("victimUnits") or [])),
    "pdbViolations": Field(NUMBER, "victim pods whose eviction violates a PodDisruptionBudget",
                           lambda d: sum(1 for v in _victims(d) if v.get("violatesPDB"))),
    "pdbViolated": Field(BOOL, "some victim's eviction violates a PodDisruptionBudget",
                         lambda d: any(v.get("violatesPDB") for v in _victims(d))),
    "gpuPods": Field(NUMBER, "victim pods holding a GPU (an extended resource whose name contains 'gpu')",
                     lambda d: sum(1 for v in _victims(d) if any(_gpu(r) for r in v.get("extendedResources") or {}))),
    "extendedPods": Field(NUMBER, "victim pods holding any extended resource",
                          lambda d: sum(1 for v in _victims(d) if v.get("extendedResources"))),
    "maxVictimPriority": Field(NUMBER, "the highest effective priority among the victims (none: the field is absent, any comparison is false)",
                               lambda d: max((v["priority"] for v in _victims(d)), default=None)),
    "namespace": Field(TEXTS, "the victims' namespaces", lambda d: {v["namespace"] for v in _victims(d)}),
    "priorityClass": Field(TEXTS, "the victims' priorityClassName", lambda d: {v.get("priorityClassName") or "" for v in _victims(d)}),
    "node": Field(TEXTS, "the nodes victims are evicted from", lambda d: {v["node"] for v in _victims(d)}),
    "outcome": Field(TEXT, "the verdict: NoPreemptionNeeded, Preempt, Unschedulable, NotEligible or Invalid", lambda d: d.get("outcome")),
    "placedPods": Field(NUMBER, "preemptor pods placed", lambda d: len(d.get("placements") or [])),
    "unplacedPods": Field(NUMBER, "preemptor pods not placed", lambda d: len(d.get("unplaced") or [])),
}

_NUMERIC_OPS = {">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
                "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
_TOKEN = re.compile(r"\s*(?:(>=|<=|==|!=|>|<|\(|\)|,)|([A-Za-z0-9_.\-/:]+)|(\S))")


@dataclass(frozen=True, slots=True)
class Compare:
    field: str
    op: str  # '' (a boolean alone), > >= < <= == !=, in, not in
    value: Any = None

    def holds(self, doc: dict) -> bool:
        got = FIELDS[self.field].get(doc)
        if self.op == "":
            return bool(got)
        if self.op in ("in", "not in"):
            hit = bool(got & self.value) if isinstance(got, set) else got in self.value
            return hit if self.op == "in" else not hit
        if got is None:
            return False
        if isinstance(got, set):  # == / != on a set field: any / none of the victims
            return (self.value in got) if self.op == "==" else (self.value not in got)
        return _NUMERIC_OPS[self.op](got, self.value)

    def text(self) -> str:
        if self.op == "":
            return self.field
        if self.op in ("in", "not in"):
            return f"{self.field} {self.op} ({', '.join(sorted(self.value))})"
        return f"{self.field} {self.op} {self.value}"


@dataclass(frozen=True, slots=True)
class Not:
    term: "Expr"

    def holds(self, doc: dict) -> bool:
        return not self.term.holds(doc)


@dataclass(frozen=True, slots=True)
class Junction:
    op: str  # and | or
    terms: tuple["Expr", ...]

    def holds(self, doc: dict) -> bool:
        return all(t.holds(doc) for t in self.terms) if self.op == "and" else any(t.holds(doc) for t in self.terms)


Expr = Union[Compare, Not, Junction]


def _field_list(near: str) -> str:
    names = list(FIELDS)
    close = difflib.get_close_matches(near, names, n=len(names), cutoff=0.0) if near else names
    return ", ".join(close)


def _bad(text: str, why: str, near: str = "") -> UserError:
    return UserError(f"invalid --fail-if {text!r}: {why}; fields: {_field_list(near)}")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks: list[str] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:  # trailing blanks
                break
            if m.group(3):
                raise _bad(text, f"unexpected {m.group(3)!r}")
            self.toks.append(m.group(1) or m.group(2))
            pos = m.end()
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, near: str = "") -> str:
        t = self.peek()
        if t is None:
            raise _bad(self.text, "it ends too early", near)
        self.i += 1
        return t

    def value(self, near: str) -> str:
        t = self.take(near)
        if t in ("(", ")", ","):
            raise _bad(self.text, f"a value is missing before {t!r}", near)
        return t

    def parse(self) -> Expr:
        if not self.toks:
            raise _bad(self.text, "it is empty")
        e = self.junction("or")
        if self.peek() is not None:
            raise _bad(self.text, f"unexpected {self.peek()!r} (combine conditions with and/or)")
        return e

    def junction(self, op: str) -> Expr:
        sub = (lambda: self.junction("and")) if op == "or" else self.negation
        terms = [sub()]
        while self.peek() == op:
            self.take()
            terms.append(sub())
        return terms[0] if len(terms) == 1 else Junction(op, tuple(terms))

    def negation(self) -> Expr:
        if self.peek() == "not":
            self.take()
            return Not(self.negation())
        if self.peek() == "(":
            self.take()
            e = self.junction("or")
            if self.peek() != ")":
                raise _bad(self.text, "a '(' is not closed")
            self.take()
            return e
        return self.comparison()

    def comparison(self) -> Expr:
        name = self.take()
        f = FIELDS.get(name)
        if f is None:
            raise _bad(self.text, f"unknown field {name!r}", name)
        nxt = self.peek()
        if nxt in _NUMERIC_OPS:
            op = self.take()
            raw = self.value(name)
            if f.type == NUMBER:
                try:
                    value: Any = int(raw)
                except ValueError:
                    raise _bad(self.text, f"{name} is a number, not {raw!r}", name) from None
                return Compare(name, op, value)
            if f.type == BOOL:
                if op not in ("==", "!=") or raw not in ("true", "false"):
                    raise _bad(self.text, f"{name} is true or false: write '{name}' or 'not {name}'", name)
                return Compare(name, "", None) if (raw == "true") == (op == "==") else Not(Compare(name, "", None))
            if op not in ("==", "!="):
                raise _bad(self.text, f"{name} is {f.type}: compare it with ==, != or in (...)", name)
            return Compare(name, op, raw)
        if nxt in ("in", "not"):
            neg = self.take() == "not"
            if neg and self.take() != "in":
                raise _bad(self.text, f"after '{name} not' comes 'in (...)'", name)
            if f.type not in (TEXT, TEXTS):
                raise _bad(self.text, f"'in' applies to text fields; {name} is a {f.type}", name)
            if self.take() != "(":
                raise _bad(self.text, "'in' takes a list in parentheses: in (a, b)", name)
            values = {self.value(name)}
            while self.peek() == ",":
                self.take()
                values.add(self.value(name))
            if self.peek() != ")":
                raise _bad(self.text, "the list after 'in' is not closed", name)
            self.take()
            return Compare(name, "not in" if neg else "in", frozenset(values))
        if f.type != BOOL:
            raise _bad(self.text, f"{name} is a {f.type}: compare it (e.g. {name} > 0)" if f.type == NUMBER
                       else f"{name} is {f.type}: write {name} in (a, b)", name)
        return Compare(name, "", None)


def parse_predicate(text: str) -> Expr:
    """The predicate, or UserError (one line naming the valid fields, the closest first)."""
    return _Parser(text).parse()


def _firing(e: Expr, doc: dict) -> list[str]:
    """The comparisons that make a firing predicate true (for the one-line reason)."""
    if isinstance(e, Compare):
        return [e.text()] if e.holds(doc) else []
    if isinstance(e, Junction):
        parts = [_firing(t, doc) for t in e.terms]
        return [x for p in parts for x in p]
    return []


def gate_reason(e: Expr, doc: dict) -> str | None:
    """None when the predicate does not hold; otherwise what fired, with the facts it read."""
    if not e.holds(doc):
        return None
    facts = []
    for name in _fields_of(e):
        v = FIELDS[name].get(doc)
        shown = ",".join(sorted(v)) if isinstance(v, set) else str(v).lower() if isinstance(v, bool) else v
        facts.append(f"{name}={shown}")
    what = " and ".join(_firing(e, doc)) or "the predicate"
    return f"{what} ({'; '.join(facts)})"


def named_values(e: Expr, field: str) -> set[str]:
    """The values the predicate compares `field` with (`namespace in (a, b)`, `namespace == a`)."""
    if isinstance(e, Compare):
        if e.field != field or e.value is None:
            return set()
        return set(e.value) if isinstance(e.value, frozenset) else {str(e.value)}
    if isinstance(e, Not):
        return named_values(e.term, field)
    return {v for t in e.terms for v in named_values(t, field)}


def near_misses(e: Expr, snap: Snapshot) -> list[str]:
    """Warnings for the namespaces and PriorityClasses the predicate names that nothing in the
    cluster has, when one close to it exists: `namespace in (reseach)` would never fire, and a CI
    gate that never fires passes silently. (A name with no near miss may be a namespace still to
    come: no warning.)"""
    out = [f"--fail-if: {m}" for ns in sorted(named_values(e, "namespace")) if (m := namespace_near_miss(snap, ns))]
    classes = {c.name for c in snap.priority_classes}
    for pc in sorted(named_values(e, "priorityClass") - classes):
        if hint := did_you_mean(pc, classes):
            out.append(f'--fail-if: no PriorityClass "{pc}" in the cluster{hint}')
    return out


def _fields_of(e: Expr) -> list[str]:
    if isinstance(e, Compare):
        return [e.field]
    if isinstance(e, Not):
        return _fields_of(e.term)
    return list(dict.fromkeys(n for t in e.terms for n in _fields_of(t)))


def fields_doc() -> list[tuple[str, str, str]]:
    """(name, type, meaning) of every field, for help and docs."""
    return [(n, f.type, f.help) for n, f in FIELDS.items()]
