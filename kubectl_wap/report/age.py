"""Ages as kubectl prints them in its AGE columns: k8s.io/apimachinery pkg/util/duration
HumanDuration (v0.37.2), which kubectl's printers call on the time since creation
(translateTimestampSince). Our ages are relative to the snapshot's capture time, not the wall clock,
so a saved snapshot prints the same ages tomorrow."""

from __future__ import annotations

import datetime as _dt


def human_duration(seconds: float) -> str:
    """duration.HumanDuration: ~2-3 significant figures (45s, 3m20s, 12m, 2h5m, 30h, 3d4h, 40d,
    2y10d). Go's integer conversions truncate toward zero; for the non-negative values that reach
    them Python's floor division is the same."""
    if int(seconds) < -1:
        return "<invalid>"
    if int(seconds) < 0:
        return "0s"
    s = int(seconds)
    if s < 60 * 2:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def age(seconds: float | None) -> str:
    """An AGE cell: '-' when the time is unknown."""
    return "-" if seconds is None else human_duration(seconds)


def age_since(timestamp: str | None, now: float | None) -> str:
    """The AGE of an RFC 3339 timestamp (as our documents write them) at `now` (epoch seconds)."""
    if not timestamp or now is None:
        return "-"
    try:
        t = _dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return "-"
    return human_duration(now - t)
