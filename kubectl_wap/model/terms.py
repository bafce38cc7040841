"""The selector shapes below the model: a label/field selector requirement and a node selector
term. Their own module because the pod model (model/__init__.py), PersistentVolume node affinity
(storage.py) and DRA device pools (dra.py) all hold them, and __init__.py holds storage's
objects: kept in __init__.py, storage.py and __init__.py would import each other. __init__.py imports
them back, so `from kubectl_wap.model import NodeSelectorTerm, Requirement` stays the usual spelling."""

from __future__ import annotations

import re
from dataclasses import dataclass

_INT64_RE = re.compile(r"^[+-]?[0-9]+$")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def parse_int64(s: str) -> int | None:
    """strconv.ParseInt(s, 10, 64): optional sign and decimal digits only, within int64. How a
    Gt/Lt requirement reads a label value and its own value (labels.Requirement.Matches); here,
    below the model, because the selectors that match and the redaction that keeps such values
    comparable (snapshot/share/redact.py) must read them alike."""
    # More than a sign and 19 digits is out of int64 anyway; int() of a 5000-digit label value
    # would raise ValueError (Python's int_max_str_digits) instead of "does not parse".
    if len(s) > 20 or not _INT64_RE.match(s):
        return None
    v = int(s)
    if v < _INT64_MIN or v > _INT64_MAX:
        return None
    return v


_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def valid_label_key(key: str) -> bool:
    """validation.IsQualifiedName: [prefix/]name, name <= 63 chars, prefix a DNS-1123 subdomain.
    Here with parse_int64 for the same reason: redaction keeps an invalid key or value invalid."""
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN_RE.match(prefix):
            return False
    else:
        return False
    return 0 < len(name) <= 63 and bool(_NAME_RE.match(name))


def valid_label_value(value: str) -> bool:
    """validation.IsValidLabelValue: empty, or <= 63 chars of [-A-Za-z0-9_.] starting/ending alnum."""
    return value == "" or (len(value) <= 63 and bool(_NAME_RE.match(value)))


@dataclass(slots=True, frozen=True)
class Requirement:
    """A label/field selector requirement (metav1.LabelSelectorRequirement and
    v1.NodeSelectorRequirement share this shape; operators In/NotIn/Exists/DoesNotExist/Gt/Lt)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class NodeSelectorTerm:
    """A node selector term (core/v1 NodeSelectorTerm): its expressions and fields, ANDed."""

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()
