"""Pod rows converted a run at a time, column by column (issue 34, the first step of the columnar
pod store): what `convert.pod_from_row` gives for each row of the run, in one batch.

The reader (snapshot/io/files.py) queues each plain pod row (spectemplates.Decoder.take) instead of
converting it, so a row costs a list append; a run of rows is transposed once (zip) and each field
is checked and converted over its whole column: namespaces per distinct value, names and uids as
one string test, timestamps by min/max, labels per distinct LabelSet, template fields per
distinct template, and the Pods made by one `map` of the positional constructor. Anything not of
the plain kind, and any error, gives None: the caller converts the run row by row with
pod_from_row, which is the reference (the same Pods, the same first error;
tests/test_pod_columns.py)."""

from __future__ import annotations

import sys
from itertools import repeat
from operator import itemgetter
from typing import Any

from ...model import new_pod_from_runs
from .convert import _LABELS_CACHE, _TIME_MAX, _TIME_MIN, PodBatch, _pod_labels, _spec_fields
from .fields import _NAMESPACES, _inert, checked_namespace, parse_time
from .podrows import ROW_LEN
from .spectemplates import SpecTemplate

_intern = sys.intern
_first, _second = itemgetter(0), itemgetter(1)


def _times(col: tuple) -> list | None:
    """pod_from_row's reading of a timestamp column: integer seconds (in years 1..9999) as floats,
    strings and None through parse_time; None when a value is of another kind or out of range."""
    if all(type(x) is int for x in col):
        if col and (min(col) < _TIME_MIN or max(col) > _TIME_MAX):
            return None
        return list(map(float, col))
    out: list = []
    for x in col:
        if type(x) is int:
            if not _TIME_MIN <= x <= _TIME_MAX:
                return None
            out.append(float(x))
        elif x is None or type(x) is str:
            out.append(parse_time(x))
        else:
            return None
    return out


def _labels(col: tuple, labelsets: dict) -> list | None:
    """pod_from_row's label maps: a LabelSet's converted map (converted once), a fresh {} for
    none, an inline map through the shared cache; None for a value of another kind."""
    cache = _LABELS_CACHE
    out: list = []
    add = out.append
    for x in col:
        tx = type(x)
        if tx is int:
            ls = labelsets[x]
            c = ls.converted
            if c is None:
                c = ls.converted = _pod_labels(ls.labels)
            add(c)
        elif x is None:
            add({})
        elif tx is dict:
            try:
                hit = cache.get(tuple(x.items()))
            except TypeError:
                hit = None
            add(hit if hit is not None else _pod_labels(x))
        else:
            return None
    return out


def pods_from_rows(rows: list[list], templates: dict[int, SpecTemplate], labelsets: dict) -> PodBatch | None:
    """The Pods of `rows` (plain rows whose template and LabelSet ids resolve: Decoder.take checked
    them), or None when the run must be converted row by row (a value of an odd kind, an error)."""
    try:
        return _convert(rows, templates, labelsets)
    except Exception:  # the row-by-row replay raises it again, at its row, after the rows before it
        return None


def _convert(rows: list[list], templates: dict[int, SpecTemplate], labelsets: dict) -> PodBatch | None:
    cols = list(zip(*rows))
    tids, nss, names, uids, labs, created, nodes, phases, started = cols[:ROW_LEN]
    # Names and uids: strings; a name non-empty and inert (fields.checked_name), tested on the
    # joined column ("/" is printable ASCII, so the join is inert exactly when every name is).
    if not all(type(x) is str for x in names) or not all(type(x) is str for x in uids):
        return None
    if min(map(len, names)) == 0 or max(map(len, names)) > 253:
        return None
    joined = "/".join(names)
    if not (joined.isascii() and joined.isprintable()) or " " in joined:
        return None
    # Namespaces: a cluster has few, each checked and interned once.
    distinct = dict.fromkeys(nss)
    for ns in distinct:
        if type(ns) is not str or not ns:
            return None
        if ns not in _NAMESPACES:
            checked_namespace(ns, "Pod", "-")  # raises: the replay words it with the pod's name
        distinct[ns] = _intern(ns)
    nss = list(map(distinct.__getitem__, nss))
    if not all(x is None or type(x) is str for x in nodes) or not all(x is None or type(x) is str for x in phases):
        return None
    c_times, s_times = _times(created), _times(started)
    if c_times is None or s_times is None:
        return None
    labels = _labels(labs, labelsets)
    if labels is None:
        return None
    # Template fields, per distinct template, converted (if not yet) as the first row using it
    # would (its name in an error): dict(zip(reversed ...)) keeps each id's first row.
    first = dict(zip(reversed(tids), range(len(tids) - 1, -1, -1)))
    fields: dict[int, Any] = {}
    for tid, i in sorted(first.items(), key=_second):
        t = templates[tid]
        f = t.fields
        if f is None:
            f = t.fields = _spec_fields(t.spec, f"pod {nss[i]}/{names[i]}")
        fields[tid] = f
    per_pod = list(map(fields.__getitem__, tids))
    node_ids = {x: _intern(x) for x in dict.fromkeys(nodes) if x}
    node_ids[None] = node_ids[""] = ""
    if not all(uids):
        uids = [u or f"{ns}/{name}" for u, ns, name in zip(uids, nss, names)]
    n = len(rows)
    return PodBatch(map(
        new_pod_from_runs,
        nss,
        names,
        uids,
        labels,
        map(node_ids.__getitem__, nodes),
        map(_first, per_pod),
        [p or "Pending" for p in phases],
        s_times,
        c_times,
        repeat(None, n),
        repeat(False, n),
        repeat("", n),
        map(_second, per_pod),
        repeat((), n),
    ))
