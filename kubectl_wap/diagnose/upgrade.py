"""`kubectl wap pending --compare-versions 1.37,1.38`: what changes for us when we upgrade.

Two triages of the same snapshot (diagnose/pending.py), each under one version's scheduler rules
(profiles.py) with the same feature gates, compared object by object. A row changes when its
outcome, whether preemption helps, its victims or its reason differ; the records say which. Pure
data: report/diagnose.py words them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .pending import PendingRow, Triage


@dataclass(frozen=True, slots=True)
class VersionChange:
    kind: str
    namespace: str
    name: str
    priority: int
    before: PendingRow | None  # None: not pending under the first version's rules (never, today)
    after: PendingRow | None
    changed: tuple[str, ...]  # which of outcome, preemption, victims, reason differ
    victims_added: tuple[str, ...] = ()
    victims_removed: tuple[str, ...] = ()


_FIELDS = (("outcome", "outcome"), ("preemption", "preemption"), ("victims", "victims"), ("reason", "reason"))


def compare_triages(a: Triage, b: Triage) -> tuple[list[VersionChange], int]:
    """(the rows whose answer differs, in the second triage's order, then rows only in the first;
    how many objects were compared)."""
    key = lambda r: (r.kind, r.namespace, r.name)  # noqa: E731
    by_a = {key(r): r for r in a.rows}
    out: list[VersionChange] = []
    seen = set()
    for r in b.rows:
        k = key(r)
        seen.add(k)
        old = by_a.get(k)
        if old is None:
            out.append(VersionChange(r.kind, r.namespace, r.name, r.priority, None, r, ("pending",)))
            continue
        diff = tuple(name for name, attr in _FIELDS if getattr(old, attr) != getattr(r, attr))
        if diff:
            out.append(VersionChange(r.kind, r.namespace, r.name, r.priority, old, r, diff,
                                     tuple(sorted(set(r.victims) - set(old.victims))),
                                     tuple(sorted(set(old.victims) - set(r.victims)))))
    for k, old in by_a.items():
        if k not in seen:
            out.append(VersionChange(old.kind, old.namespace, old.name, old.priority, old, None, ("pending",)))
    return out, len(by_a.keys() | seen)
