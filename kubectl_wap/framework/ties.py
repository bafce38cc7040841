"""Ties kube-scheduler breaks in a way a snapshot cannot reproduce.

Upstream breaks some ties at random or by an order no snapshot records: equal node scores
(selectHost: a heap over the feasible nodes in the order parallel filtering found them), equal
default-preemption candidates (the first of a Go map), victims of equal importance (v1.37's
MoreImportantVictim has no UID tie-break: sort order then depends on the input order). Our engine
breaks each of them deterministically (smallest node name, smallest UID), marked UPSTREAM-DIFF where
it does. An answer that went through such a tie is one of several the real scheduler may give.

The engine reports each tie it breaks to the observers registered here, so that the differential
tests (tests/oracle) can tell "the real scheduler chose the other tied option" from a real
disagreement. With no observer registered, reporting costs one truth test.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

Observer = Callable[[str, str], None]
_observers: list[Observer] = []


def observed() -> bool:
    return bool(_observers)


def tie(kind: str, detail: str) -> None:
    """The engine broke a tie of this kind (select-host, preemption-candidate, victim-order, ...)."""
    for o in _observers:
        o(kind, detail)


@contextmanager
def observe() -> Iterator[list[tuple[str, str]]]:
    """Collect the ties broken inside the block: `with observe() as ties: ...`."""
    seen: list[tuple[str, str]] = []
    obs: Observer = lambda kind, detail: seen.append((kind, detail))  # noqa: E731
    _observers.append(obs)
    try:
        yield seen
    finally:
        _observers.remove(obs)
