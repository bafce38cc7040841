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

`explore(seed)` lets the differential tests go the other way: inside it, the engine picks among
tied options with a seeded random choice instead of its fixed rule, so the batch can ask whether
kube-scheduler's answer is one our engine also gives under another tie-break. Outside it, `pick`
always answers 0: the fixed rule (options come in our deterministic order).
"""

from __future__ import annotations

import random
from contextlib import contextmanager
from typing import Callable, Iterator

Observer = Callable[[str, str], None]
_observers: list[Observer] = []
_chooser: list[random.Random] = []  # at most one: the innermost explore()


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


def pick(n: int) -> int:
    """Which of n tied options (in our deterministic order) to take: 0, our rule, unless an
    explore() block is active."""
    return _chooser[-1].randrange(n) if _chooser and n > 1 else 0


def shuffle_runs(items: list, same: Callable[[object, object], bool]) -> list:
    """Inside explore(): each run of consecutive items that `same` calls equal, in a seeded random
    order (a tie upstream breaks by an order the snapshot does not have). Outside: items unchanged."""
    if not _chooser or len(items) < 2:
        return items
    out, start = list(items), 0
    for i in range(1, len(out) + 1):
        if i == len(out) or not same(out[start], out[i]):
            if i - start > 1:
                run = out[start:i]
                _chooser[-1].shuffle(run)
                out[start:i] = run
            start = i
    return out


@contextmanager
def explore(seed: int) -> Iterator[list[tuple[str, str]]]:
    """Break ties at random (seeded) inside the block; collects the ties as observe() does."""
    _chooser.append(random.Random(seed))
    try:
        with observe() as seen:
            yield seen
    finally:
        _chooser.pop()
