"""Pod rows of snapshot formatVersion 2 and 3 (see docs/snapshot-format.md and spectemplates.py).

A pod of the usual shape is one JSON array instead of five nested objects:

    [template id, namespace, name, uid, labels, creationTimestamp, nodeName, phase, startTime]

and, since formatVersion 3, a pod with owner references one more field: the list itself the first
time it is seen (it gets the next owners id, 0, 1, ...), its id after that (a ReplicaSet's or a
Job's pods share one).
null stands for an absent field. `labels` is a map, or the id of a `LabelSet` item when the same
set was seen before (replicas share theirs). Timestamps of the API's form
(`2026-01-01T00:00:00Z`) are integer POSIX seconds, which need no parsing to load. Each encoding
is used only when decoding gives back exactly the written value; anything else keeps its object
form. Parsing an array builds no dicts, and the loader turns a row into a Pod directly.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

ROW_LEN = 9  # a row without owners (formatVersion 2 rows are all of this length)
OWNED_ROW_LEN = ROW_LEN + 1  # formatVersion 3: the owners (or their id) last
LABELSET_KIND = "LabelSet"
_TOP = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
_META = frozenset({"name", "namespace", "uid", "labels", "creationTimestamp", "ownerReferences"})
_STATUS = frozenset({"phase", "startTime"})
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def format_time(t: int) -> str:
    """The API string for POSIX seconds `t` (also how the writer checks an encoding is exact)."""
    return time.strftime(_TIME_FORMAT, time.gmtime(t))


_EPOCH = datetime(1970, 1, 1)
_SECOND = timedelta(seconds=1)


def _time(s: Any) -> Any:
    """POSIX seconds for an API timestamp when that round-trips exactly (format_time(t) == s),
    else `s` unchanged. Read field by field: datetime() rejects what gmtime could not give back
    (month 13, February 30, second 60), the separators and ASCII digits are checked here, and
    years below 1000 are left alone (strftime does not pad them to four digits). Equal to the
    round trip on every input (tests/test_snapshot_format_v2.py); ~3x cheaper, and a live capture
    converts two timestamps per pod."""
    if type(s) is not str or len(s) != 20 or s[19] != "Z" or s[4] != "-" or s[7] != "-" or s[10] != "T" \
            or s[13] != ":" or s[16] != ":":
        return s
    digits = s[0:4] + s[5:7] + s[8:10] + s[11:13] + s[14:16] + s[17:19]
    if not (digits.isascii() and digits.isdigit()) or s[0] == "0":
        return s
    # The date's first second, once per date (a cluster's pods were made on a few hundred days);
    # the time of day checked as datetime() checks it (no hour 24, no second 60).
    day = _DAYS.get(s[:10])
    if day is None:
        try:
            day = (datetime(int(s[0:4]), int(s[5:7]), int(s[8:10])) - _EPOCH) // _SECOND
        except ValueError:
            day = False
        if len(_DAYS) > 100_000:
            _DAYS.clear()
        _DAYS[s[:10]] = day
    hh, mm, ss = int(s[11:13]), int(s[14:16]), int(s[17:19])
    if day is False or hh > 23 or mm > 59 or ss > 59:
        return s
    return day + hh * 3600 + mm * 60 + ss


_DAYS: dict[str, Any] = {}  # "YYYY-MM-DD" -> POSIX seconds of its midnight, False for no such date


class LabelSet:
    """A label map shared by pods; `converted` is the loader's interned copy (filled on first use)."""

    __slots__ = ("labels", "converted")

    def __init__(self, labels: dict) -> None:
        self.labels = labels
        self.converted: Any = None


class RowWriter:
    """Encodes pod items as rows; remembers label sets so a repeated one becomes a reference, and
    owner references so each distinct list is written once and then referred to by id."""

    def __init__(self) -> None:
        self._seen: set[str] = set()  # label sets written inline once
        self._ids: dict[str, int] = {}  # label sets defined as LabelSet items
        self._owners: dict[str, int] = {}  # owner reference lists written (inline, once), by id

    def row(self, item: dict, spec: dict, tid: int, dump: Any) -> tuple[list, str | None] | None:
        """(row, LabelSet line to write first or None), or None when the pod needs its object form."""
        md, st = item.get("metadata"), item.get("status", {})
        if item.get("apiVersion") != "v1" or not _TOP.issuperset(item) or type(md) is not dict or type(st) is not dict:
            return None
        if not _META.issuperset(md) or not _STATUS.issuperset(st) or ("status" in item and not st):
            return None
        ns, name, uid, labels = md.get("namespace"), md.get("name"), md.get("uid"), md.get("labels")
        if type(ns) is not str or type(name) is not str or type(uid) is not str:
            return None
        if labels is not None and (type(labels) is not dict or not all(type(k) is str and type(v) is str for k, v in labels.items())):
            return None
        rest = (md.get("creationTimestamp"), spec.get("nodeName"), st.get("phase"), st.get("startTime"))
        if not all(v is None or type(v) is str for v in rest):
            return None
        owners = md.get("ownerReferences")
        if "ownerReferences" in md and (type(owners) is not list or not owners):
            return None  # anything but a non-empty list keeps the object form (null and [] come back as they are)
        if ("labels" in md and labels is None) or any(v is None and k in d for v, k, d in (
                (rest[0], "creationTimestamp", md), (rest[1], "nodeName", spec), (rest[2], "phase", st), (rest[3], "startTime", st))):
            return None  # an explicit null would come back as an absent field
        return self.make(tid, ns, name, uid, labels, rest[0], rest[1], rest[2], rest[3], owners, dump)

    def make(self, tid: int, ns: str, name: str, uid: str, labels: dict | None, created: str | None, node: str | None,
             phase: str | None, started: str | None, owners: list | None, dump: Any) -> tuple[list, str | None]:
        """The row of a pod whose fields `row` checked (or a caller checked the same way): labels
        a map of strings or None, the rest strings or None, owners a non-empty list or None."""
        define = None
        ref: Any = labels
        if labels:
            text = dump(labels)
            lid = self._ids.get(text)
            if lid is None and text in self._seen:
                lid = self._ids[text] = len(self._ids)
                define = f'{{"apiVersion":"kubectl-wap/v1alpha1","kind":"{LABELSET_KIND}","id":{lid},"labels":{text}}}'
            elif lid is None:
                self._seen.add(text)
            if lid is not None:
                ref = lid
        row = [tid, ns, name, uid, ref, _time(created), node, phase, _time(started)]
        if owners is not None:
            text = dump(owners)
            oid = self._owners.get(text)
            if oid is None:  # first sight: inline (an item of its own would cost ~85 bytes more, 3k times at M)
                self._owners[text] = len(self._owners)
                row.append(owners)
            else:
                row.append(oid)
        return row, define


def expand(row: list, spec: dict, labels: Any, owners: Any = None) -> dict:
    """The pod item a row stands for; `spec` is its (expanded) spec, `labels` the resolved map,
    `owners` the resolved ownerReferences (None: the row has none)."""
    ns, name, uid, created, phase, started = row[1], row[2], row[3], row[5], row[7], row[8]
    md = {"name": name, "namespace": ns, "uid": uid}
    if labels is not None:
        md["labels"] = labels
    if created is not None:
        md["creationTimestamp"] = format_time(created) if type(created) is int else created
    if owners is not None:
        md["ownerReferences"] = owners
    item = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
    if phase is not None or started is not None:
        st = item["status"] = {}
        if phase is not None:
            st["phase"] = phase
        if started is not None:
            st["startTime"] = format_time(started) if type(started) is int else started
    return item
