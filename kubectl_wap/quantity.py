"""Kubernetes resource quantities with exact arithmetic.

Mirrors apimachinery `resource.ParseQuantity` grammar and the two readings the scheduler uses:
`MilliValue()` for cpu and `Value()` for everything else, both rounding up (ceil), as upstream's
`Quantity.Value`/`MilliValue` do for fractional amounts.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_RE = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?))$"
)
# apimachinery refuses absurd exponents; so do we (keeps Fraction arithmetic bounded).
_MAX_EXP = 1000


class QuantityError(ValueError):
    pass


# Parsed strings, shared: a cluster repeats a few hundred request strings ("500m", "2Gi") across
# 100k+ containers, and Fractions are immutable. Bounded like convert.py's caches.
_PARSED: dict[str, Fraction] = {}


def parse_quantity(text: object) -> Fraction:
    """Parse a quantity string (or a JSON number) into an exact Fraction."""
    if type(text) is str:
        hit = _PARSED.get(text)
        if hit is None:
            hit = _parse(text)
            if len(_PARSED) > 100_000:
                _PARSED.clear()
            _PARSED[text] = hit
        return hit
    return _parse(text)


def _parse(text: object) -> Fraction:
    if isinstance(text, bool):
        raise QuantityError(f"quantities must match the regular expression, got {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        # JSON `1e999` / YAML `.inf` load as inf; nan is no quantity either.
        if not math.isfinite(text):
            raise QuantityError(f"quantity must be a finite number, got {text!r}")
        return Fraction(str(text))
    if not isinstance(text, str):
        raise QuantityError(f"quantity must be a string, got {type(text).__name__}")
    s = text.strip()
    m = _RE.match(s)
    if not m:
        raise QuantityError(f"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {text!r}")
    try:
        value = Fraction(m.group("num"))
    except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
        raise QuantityError(f"quantity has too many digits: {s[:40]}...") from None
    if m.group("exp"):
        e = int(m.group("exp")[1:])
        if abs(e) > _MAX_EXP:
            raise QuantityError(f"quantity exponent out of range: {text!r}")
        value *= Fraction(10) ** e
    else:
        suffix = m.group("suffix") or ""
        value *= _BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix]
    if m.group("sign") == "-":
        value = -value
    return value


def _ceil(f: Fraction) -> int:
    return -((-f.numerator) // f.denominator)


def value(text: object) -> int:
    """Quantity.Value(): integer units, rounded up."""
    return _ceil(parse_quantity(text))


def milli_value(text: object) -> int:
    """Quantity.MilliValue(): integer thousandths, rounded up."""
    return _ceil(parse_quantity(text) * 1000)


def scheduler_amount(name: str, amount: Fraction) -> int:
    """The integer the scheduler keeps for resource `name` of an exact amount: milli-cores for
    cpu (MilliValue), else Value(); both round up."""
    if amount.denominator == 1:  # whole units (most memory amounts): no Fraction arithmetic
        return amount.numerator * 1000 if name == "cpu" else amount.numerator
    return _ceil(amount * 1000 if name == "cpu" else amount)


def resource_amount(name: str, text: object) -> int:
    """scheduler_amount of a quantity string."""
    return scheduler_amount(name, parse_quantity(text))


def format_amount(name: str, amount: int) -> str:
    """Human form for reports: cpu in cores/millicores, memory-like in Gi/Mi, counts plain."""
    if name == "cpu":
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    if name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        for suf, mul in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount and amount % mul == 0:
                return f"{amount // mul}{suf}"
        return str(amount)
    return str(amount)
