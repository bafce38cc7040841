"""How each kept leaf of a redacted snapshot is rewritten, by its leaf kind (allowlist.py's schema
says which kind each field is): the domain rule shared by DRA drivers, attribute values, resource
names and CEL literals; resource names; versions; CEL string literals; and :func:`typed`, the
one entry point, which hands the loader exactly what it would have read (a value it refuses stays
refused, issue 31: redaction never changes the analysis)."""

from __future__ import annotations

import re
from typing import Any, Callable

from ...model import DEFAULT_SCHEDULER
from ...model.dra import SEMVER, cel_literals, cel_string_value
from ...quantity import QuantityError, parse_quantity
from ..decode.fields import as_str, parse_time, whole_number

DROP = object()  # a leaf (or field) the allow-list leaves out


_INTSTR = re.compile(r"^\d{1,10}%?$")

# Domains kept as they are wherever a domain is (DRA drivers, the domain of a qualified resource or
# attribute name, string attribute values and CEL literals shaped like one): Kubernetes' own and
# the public device-plugin vendors'. They name hardware, not the cluster's owner; anything else
# (acme.com, gpu.corp.internal, an IP, a serial number) is hashed through the one mapping.
WELL_KNOWN_DOMAINS = ("kubernetes.io", "k8s.io", "nvidia.com", "amd.com", "intel.com", "xilinx.com", "habana.ai",
                      "google.com", "amazon.com", "amazonaws.com")
# A well-known prefix whose name part is a cluster's own: the implicit extended resource of a
# DeviceClass (DRAExtendedResource) names the class, which is hashed like every object name.
_NAMED_BY_CLUSTER = ("deviceclass.resource.kubernetes.io",)


# Resource names without a domain (v1 ResourceName constants, helper.IsStandardResourceName):
# kept; the code reads them by name.
_STANDARD = frozenset({"cpu", "memory", "ephemeral-storage", "storage", "pods", "services", "configmaps", "secrets",
                       "persistentvolumeclaims", "replicationcontrollers", "resourcequotas"})
_STANDARD_PREFIXES = ("hugepages-", "attachable-volumes-", "requests.", "limits.", "count/")


def is_well_known_domain(v: str) -> bool:
    return any(v == d or v.endswith("." + d) for d in WELL_KNOWN_DOMAINS)


def _domain(v: str, hash_id: Callable[[str], str]) -> str:
    """The domain rule: a well-known domain as it is, anything else hashed. One rule for drivers,
    attribute values and CEL literals, so whatever a selector compares still compares equal."""
    return v if not v or is_well_known_domain(v) else hash_id(v)


def _resource_name(v: str, hash_id: Callable[[str], str]) -> str:
    """A resource name (node allocatable, requests, quota, DeviceClass extendedResourceName: one
    rule, so all agree): cpu, memory, hugepages-2Mi and names under a well-known domain
    (nvidia.com/gpu) kept; under another domain both parts hashed (acme.com/fpga -> rXXX/rYYY:
    still a qualified extended resource name)."""
    prefix, sep, name = v.partition("/")
    if not sep:  # the API server stores no other bare name (validateResourceName)
        return v if v in _STANDARD or v.startswith(_STANDARD_PREFIXES) else hash_id(v)
    if prefix in _NAMED_BY_CLUSTER:
        return f"{prefix}/{hash_id(name)}"
    if is_well_known_domain(prefix):
        return v
    return f"{hash_id(prefix)}/{hash_id(name)}"


def _qualified_name(v: str, hash_id: Callable[[str], str]) -> str:
    """A DRA attribute or capacity name: its domain by the domain rule, the name kept (a selector
    spells it as a CEL identifier: device.attributes["<domain>"].<name>; bare names take the
    driver's domain, which the loader prefixes after redaction as before)."""
    prefix, sep, name = v.partition("/")
    return f"{_domain(prefix, hash_id)}/{name}" if sep else v


def _version(v: str, hash_id: Callable[[str], str]) -> str:
    """A version attribute or semver() argument: the major.minor.patch the CEL subset compares
    kept, a pre-release / build suffix hashed (it can name things: 1.2.3-acme.7); a string that is
    no version goes through the domain rule, as it is then compared as a string."""
    m = SEMVER.match(v)
    if m is None:
        return _domain(v, hash_id)
    core, rest = v[:m.end(3)], v[m.end(3):]
    return core + (rest[0] + hash_id(rest[1:]) if rest else "")


def _is_quantity(v: Any) -> bool:
    try:
        parse_quantity(v)
    except QuantityError:
        return False
    return True


# Where a CEL literal stands decides what it is compared with (see _cel).
_QTY_ARG = re.compile(r"\bquantity\s*\(\s*$")
_SEMVER_ARG = re.compile(r"\bsemver\s*\(\s*$")
_NAME_SUBSCRIPT = re.compile(r"\]\s*\[\s*$")  # device.attributes["<domain>"]["<name>"]
_NAME_IN = re.compile(r"\s*in\s+device\s*\.\s*(?:attributes|capacity)\s*\[")  # "<name>" in device.attributes["<domain>"]
_C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BAD_ESCAPE = "\\z"  # not a CEL escape: keeps a literal that did not unescape a syntax error


def _cel(expr: str, hash_id: Callable[[str], str]) -> str:
    """A CEL expression with each string literal (single, double, raw, triple-quoted, bytes) taken
    by its value (cel-go's unescaping, model/dra.py) and replaced by what the value it is compared
    with becomes: a quantity() argument kept, a semver() argument by the version rule, an attribute
    name (a second subscript, or before `in device.attributes[...]`) kept, anything else (driver
    names, domains, attribute values) by the domain rule. A literal that does not unescape, or a
    quote that never closes, is hashed and stays a syntax error."""
    out, last = [], 0
    for start, end, closed in cel_literals(expr):
        token = expr[start:end]
        out.append(expr[last:start])
        last = end
        i = 0
        while i < len(token) and token[i] in "bBrR":
            i += 1
        prefix, rest = token[:i], token[i:]
        q = rest[:3] if rest[:3] in ("'''", '"""') else rest[:1]
        if not closed:
            out.append(prefix + q + hash_id(rest[len(q):]))
            continue
        try:
            value = cel_string_value(token)
        except ValueError:
            out.append(prefix + q + hash_id(rest[len(q):len(rest) - len(q)]) + _BAD_ESCAPE + q)
            continue
        before, after = expr[max(0, start - 64):start], expr[end:end + 64]
        if _QTY_ARG.search(before):
            new = value if _is_quantity(value) else hash_id(value)
        elif _SEMVER_ARG.search(before):
            new = _version(value, hash_id)
        elif _NAME_SUBSCRIPT.search(before) or _NAME_IN.match(after):
            new = value if _C_IDENT.match(value) else hash_id(value)
        else:
            new = _domain(value, hash_id)
        out.append(token if new == value else prefix + q + new + q)
    out.append(expr[last:])
    return "".join(out)


def _refused(v: Any, hash_id: Callable[[str], str]) -> Any:
    """A value the loader refuses (or reads as unset) where a number, quantity or time belongs: one
    it refuses or ignores alike, identifying nothing. A string is hashed (never a number, quantity
    or time after that), a number or bool kept, a list or map emptied."""
    if isinstance(v, str):
        return hash_id(v) if v else v
    if isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, list):
        return []
    if isinstance(v, dict):
        return {}
    return DROP


def typed(kind: Any, v: Any, hash_id: Callable[[str], str], lkey: Callable[[Any], Any], lval: Callable[[Any], Any],
          pc: Callable[[Any], Any]) -> Any:
    """The --redact leaf: strings hashed unless they are enum values, resource names, quantities,
    numbers or timestamps of the right shape; values of the wrong type are dropped. Numbers,
    quantities and times are kept exactly when the loader reads them (fields.whole_number,
    parse_quantity, fields.parse_time: one validator for both), so redaction never turns a value
    the loader reads into a missing one."""
    # Strings where the loader reads strings with as_str (a YAML 7 is "7", a list ""): a number or
    # bool is hashed as its text (still no enum value), a list or map emptied.
    if isinstance(kind, frozenset):
        if isinstance(v, str):
            return v if v in kind else hash_id(v)
        return hash_id(as_str(v)) if isinstance(v, (bool, int, float)) else _refused(v, hash_id)
    if kind == "id":
        return hash_id(as_str(v)) if isinstance(v, (str, bool, int, float)) else _refused(v, hash_id)
    if kind == "name":  # metadata.name, podGroupName: read only when a string (meta(), convert.py)
        return hash_id(v) if isinstance(v, str) else _refused(v, hash_id)
    if kind == "lkey":
        return lkey(as_str(v))
    if kind == "lval":
        return lval(as_str(v))
    if kind == "pc":
        return pc(v) if isinstance(v, str) else _refused(v, hash_id)
    if kind == "scheduler":
        if isinstance(v, (str, bool, int, float)):
            return v if v == DEFAULT_SCHEDULER else hash_id(as_str(v))
        return _refused(v, hash_id)
    if kind == "ip":
        return v if v in ("", "0.0.0.0", "::") else hash_id(v) if isinstance(v, str) else DROP
    if kind == "resname":
        return _resource_name(v, hash_id) if isinstance(v, str) else DROP
    if kind == "qname":
        return _qualified_name(v, hash_id) if isinstance(v, str) else DROP
    if kind == "qty":
        return v if _is_quantity(v) else _refused(v, hash_id)
    if kind == "int":  # read by fields.as_int: " 3" and 1000.0 are 3 and 1000
        i = whole_number(v)
        return i if i is not None else _refused(v, hash_id)
    if kind == "rawint":  # read as it is (an int, or nothing)
        return v if isinstance(v, int) and not isinstance(v, bool) else _refused(v, hash_id)
    if kind == "intstr":
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        return v if isinstance(v, str) and _INTSTR.match(v) else DROP
    if kind == "bool":  # read as it is (controller is True, a bool attribute)
        return v if isinstance(v, bool) else _refused(v, hash_id)
    if kind == "truthy":  # read with bool() (unschedulable, allNodes, adminAccess, ...)
        return bool(v)
    if kind in ("domain", "attr"):
        # A DRA driver / API group, or a device's string attribute (selectors compare it with
        # driver names and string literals): the domain rule, as CEL literals.
        return _domain(v, hash_id) if isinstance(v, str) else _refused(v, hash_id)
    if kind == "version":
        return _version(v, hash_id) if isinstance(v, str) else _refused(v, hash_id)
    if kind == "cel":
        return _cel(v, hash_id) if isinstance(v, str) else DROP
    if kind == "time":
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        return v if parse_time(v) is not None else _refused(v, hash_id)
    raise AssertionError(f"unknown leaf kind {kind!r}")
