"""Time limits of a live read: --request-timeout as kubectl reads it (a whole number of seconds or
a Go duration; 0 for none) and the one deadline per request that covers connect, TLS, headers and
body (a real-time timer, so a server trickling bytes cannot outwait it). readonly.py applies them."""

from __future__ import annotations

import contextlib
import math
import re
import signal
import threading
from typing import Any, Iterator

from ...errors import ClusterAccessError


class _DeadlinePassed(TimeoutError):
    """Raised in the request's own thread when its deadline passes (whatever it was waiting on)."""


@contextlib.contextmanager
def request_deadline(seconds: float | None) -> Iterator[None]:
    """One deadline for the whole request: DNS, connect, TLS handshake, status line, headers and
    body. urllib3's timeouts bound each socket operation, so a server that trickles its headers a
    byte at a time never meets them; a real-time timer (SIGALRM) interrupts whatever the request
    waits on and raises a TimeoutError there. Only in the main thread (signals are delivered
    there); elsewhere the per-operation timeouts and the body's deadline remain."""
    if seconds is None or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expired(_signum: int, _frame: object) -> None:
        raise _DeadlinePassed()

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


DEFAULT_TIMEOUT = 30.0
# Go's time.ParseDuration grammar: [-+]?([0-9]*(\.[0-9]*)?[a-z]+)+ with these units.
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")
_TIMEOUT_FORMS = ("Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit "
                  "(e.g. 1s | 2m | 3h)")


def _go_duration(text: str) -> float | None:
    """Seconds of a Go duration string ("1m30s", "1.5s", "500ms", "0"), or None if it is not one."""
    sign, body = (-1.0, text[1:]) if text[:1] == "-" else (1.0, text[1:] if text[:1] == "+" else text)
    if body == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(body):
        m = _DURATION_PART.match(body, pos)
        if m is None or m.group(1) in ("", "."):
            return None
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    return sign * total if body else None


def check_timeout(value: Any) -> float | None:
    """--request-timeout as kubectl reads it (client-go tools/clientcmd/helpers.go ParseTimeout): a
    whole number of seconds ("30"), or a Go duration ("5s", "1m", "1.5s", "500ms"); "0" means no
    timeout (returned as None). A bare fraction ("1.5") is refused as kubectl refuses it.
    UPSTREAM-DIFF: no flag is not kubectl's "0" but 30 s (None here); a negative duration ("-1s",
    no timeout for kubectl) is refused. Numbers (Python callers, the MCP server) are seconds."""
    if value is None:
        return DEFAULT_TIMEOUT
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        t = float(value)
        if not math.isfinite(t) or t < 0:
            raise ClusterAccessError(f"--request-timeout must be a finite number of seconds, at least 0, got {value!r}")
        return t or None
    text = str(value)
    t = float(int(text)) if re.fullmatch(r"[+-]?[0-9]+", text) and int(text) >= 0 else _go_duration(text)
    if t is None:
        raise ClusterAccessError(f"invalid --request-timeout {text!r}: {_TIMEOUT_FORMS}")
    if t < 0:
        raise ClusterAccessError(f"invalid --request-timeout {text!r}: a timeout cannot be negative (0 means none)")
    return t or None


def shown_timeout(timeout: float | None) -> str:
    return f"{timeout:g}s" if timeout is not None else "no timeout"
