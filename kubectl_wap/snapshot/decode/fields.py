"""Readers of raw Kubernetes JSON fields that every converter shares (convert.py, convert_storage.py,
dra.py): a mistyped field reads as unset, an integer is checked as the API server would check it,
an object's metadata gives (namespace, name, uid), and the selector terms storage and DRA objects
carry too. Their own module so the converters of each kind import them from below rather than from
convert.py, which registers those converters and so imports them."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any

from ...errors import UserError
from ...model import NodeSelectorTerm, Requirement

_intern = sys.intern


class ObjectError(UserError):
    pass


class Nameless(ObjectError):
    """An object without metadata.name: build_snapshot adds where it is (the item number)."""


def as_dict(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def as_list(v: Any) -> list:
    return v if isinstance(v, list) else []


def as_str(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, int, float)):
        return str(v)
    # None, and junk where a string belongs: a list or map is never stringified (a YAML alias
    # "billion laughs" would expand to gigabytes); like other mistyped fields, it reads as unset.
    return ""


def short_repr(v: Any) -> str:
    """A bounded repr for error messages (never walks a huge or alias-expanded structure)."""
    if isinstance(v, (dict, list)):
        return f"a {'map' if isinstance(v, dict) else 'list'}"
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def label_map(v: Any) -> dict[str, str]:
    return {_intern(str(k)): _intern(as_str(x)) for k, x in as_dict(v).items()}


INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


def whole_number(v: Any) -> int | None:
    """The integer in `v` as an integer field is read (as_int, bounds aside), or None when it holds
    none: a JSON/YAML integer, a float that is whole (1000.0), or a string Python's int() reads
    (" 3"). The one reading both the loader and the allow-list (snapshot/share/allowlist.py) use, so
    a value one keeps the other reads alike."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    if isinstance(v, float) and v.is_integer() is False:  # 1.9, inf, nan
        return None
    if isinstance(v, str) and len(v) > 40:  # int() of a 5000-digit string is slow and then refused
        return None
    try:
        return int(v)
    except (TypeError, ValueError, OverflowError):  # "abc", "1e3", 1.5e400 (inf), nan
        return None


def as_int(v: Any, what: str, default: int | None = None, bounds: tuple[int, int] = INT64) -> int | None:
    """An integer field as the API server would accept it: a whole number (1.9 is refused, not
    truncated), within the field's Go type (int64 unless `bounds` says int32 or narrower)."""
    if v is None:
        return default
    i = whole_number(v)
    if i is None:
        if isinstance(v, str) and len(v) > 40:
            raise ObjectError(f"{what}: integer out of range: {short_repr(v)}")
        raise ObjectError(f"{what}: expected an integer, got {short_repr(v)}")
    lo, hi = bounds
    if not lo <= i <= hi:
        raise ObjectError(f"{what}: integer out of range [{lo}, {hi}]: {short_repr(v)}")
    return i


_fromisoformat = datetime.fromisoformat


def parse_time(v: Any) -> float | None:
    """A timestamp (metav1.Time's RFC 3339, or any ISO 8601 form Python reads) as epoch seconds, or
    None: how the loader reads creation, start and deletion times, and what the allow-list keeps."""
    if not v or not isinstance(v, str):
        return None
    try:
        return _fromisoformat(v).timestamp()  # 3.11 reads the API's trailing "Z" itself
    except ValueError:
        pass
    try:
        return _fromisoformat(v.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def requirement(v: Any) -> Requirement:
    d = as_dict(v)
    return Requirement(
        key=_intern(as_str(d.get("key"))),
        operator=as_str(d.get("operator")),
        values=tuple(_intern(as_str(x)) for x in as_list(d.get("values"))),
    )


def node_term(v: Any) -> NodeSelectorTerm:
    d = as_dict(v)
    return NodeSelectorTerm(
        match_expressions=tuple(requirement(x) for x in as_list(d.get("matchExpressions"))),
        match_fields=tuple(requirement(x) for x in as_list(d.get("matchFields"))),
    )


# What a name may hold: printable ASCII but the space. apimachinery validation (IsDNS1123Subdomain
# for object names, IsDNS1123Label for namespaces) never stores anything else; in a name, a control
# character, a bidi or zero-width character, a space or any non-ASCII letter would forge lines or
# words in `-o name` output (which users pipe into `kubectl delete`, or through `xargs`), reach the
# terminal as escape sequences (OSC 52 writes the clipboard), or pass for another name.
# UPSTREAM-DIFF: other names the API server would refuse (upper case, '_': upstream's own unit test
# tables use them, and tests/scenarios transcribes those) are read as they are: they are inert.


def _inert(name: str) -> bool:
    return len(name) <= 253 and name.isascii() and name.isprintable() and " " not in name


def checked_name(name: str, kind: str, what: str = "metadata.name") -> str:
    """`name` when it is inert in any output, else one line (an ObjectError): a name the API server
    never stores could only come from an edited file."""
    if not _inert(name):
        raise ObjectError(f"{kind} {short_repr(name)}: {what} is not a name the API server stores (only printable ASCII "
                          "without spaces, at most 253 characters)")
    return name


_NAMESPACES: set[str] = set()  # checked once each: a cluster has few


def checked_namespace(ns: str, kind: str, name: str) -> str:
    """`ns` when it is inert in any output (a namespace is at most 63 characters), else one line."""
    if ns in _NAMESPACES:
        return ns
    if len(ns) > 63:
        raise ObjectError(f"{kind} {name}: metadata.namespace {short_repr(ns)} is not a namespace the API server stores "
                          "(over 63 characters)")
    checked_name(ns, kind, "metadata.namespace")
    if len(_NAMESPACES) < 100_000:
        _NAMESPACES.add(ns)
    return ns


def meta(obj: dict, kind: str, namespaced: bool) -> tuple[str, str, str]:
    md = as_dict(obj.get("metadata"))
    name = md.get("name")
    if not isinstance(name, str) or not name:
        raise Nameless(f"{kind} without metadata.name")
    checked_name(name, kind)
    ns = as_str(md.get("namespace")) if namespaced else ""
    if namespaced and not ns:
        ns = "default"
    if namespaced:
        checked_namespace(ns, kind, name)
    return _intern(ns), _intern(name), as_str(md.get("uid"))
