"""Progress of long work on stderr (issue 33): loading a large input, building the cluster state,
simulate's cycles, the --optimal search.

The engine stays pure: a long step takes a plain callable `progress(phase, done, total)` (total None
when unknown) and calls it now and then; this module is the one that turns those calls into a rich
progress bar. A step shows nothing for its first second (KUBECTL_WAP_PROGRESS_AFTER seconds: quick
commands stay as quiet as kubectl), then a transient line on stderr that is erased when the step
ends, so the terminal keeps only the answer. Nothing at all is written when stderr is not a
terminal (a pipe, a file, CI logs, `2>err.txt`): kubectl prints no progress there either.

kubectl has no global --quiet flag (only a few commands have one), so there is none here;
KUBECTL_WAP_PROGRESS_AFTER=off turns the display off on a terminal."""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
from typing import Callable, Iterator

ProgressFn = Callable[[str, int, "int | None"], None]
AFTER_ENV = "KUBECTL_WAP_PROGRESS_AFTER"
DEFAULT_AFTER = 1.0  # seconds: "any step over ~1 s" (issue 33)

# How each phase the engine names is worded, and the unit of its counts.
_PHASES: dict[str, tuple[str, str]] = {
    "read": ("reading {what}", "bytes"),
    "items": ("reading {what}", "objects"),
    "state": ("building the cluster state", "steps"),
    "analysis": ("analysing", ""),
    "cycle": ("simulating", "cycles"),
    "model": ("building the fewest-victims model", "steps"),
    "solve": ("searching for the fewest victims", ""),
    "verify": ("checking the answer with kube-scheduler's cycle", ""),
    "rows": ("diagnosing pending objects", "objects"),
}


def _after() -> float | None:
    """Seconds a step runs before it shows; None: never show."""
    raw = os.environ.get(AFTER_ENV, "").strip().lower()
    if raw in ("off", "never", "no", "false"):
        return None
    try:
        value = float(raw) if raw else DEFAULT_AFTER
    except ValueError:
        return DEFAULT_AFTER
    return value if math.isfinite(value) and value >= 0 else None


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


class _Step:
    """One step's display: started by a timer after the threshold, updated by the callback."""

    def __init__(self, what: str, phase: str, after: float, no_color: bool) -> None:
        self.what = what
        self.after = after
        self.no_color = no_color
        self.lock = threading.Lock()
        self.state: tuple[str, int, int | None] = (phase, 0, None)
        self.bar = None  # rich.progress.Progress once shown
        self.task = None
        self.closed = False
        self.timer = threading.Timer(after, self._show)
        self.timer.daemon = True

    def _words(self) -> tuple[str, int, int | None, str]:
        phase, done, total = self.state
        text, unit = _PHASES.get(phase, (phase or "working", ""))
        if unit == "bytes":
            count = f"{_size(done)} of {_size(total)}" if total else _size(done)
        elif unit:
            count = f"{done:,} of {total:,} {unit}" if total else f"{done:,} {unit}"
        else:
            count = ""
        return text.format(what=self.what), done, total, count

    def _show(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        with self.lock:
            if self.closed:
                return
            console = Console(stderr=True, highlight=False, markup=False, no_color=self.no_color)
            # markup=False: a file name such as `a[/x].json` is text, not Rich markup
            self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(),
                                TextColumn("{task.fields[count]}", markup=False), TimeElapsedColumn(),
                                console=console, transient=True, refresh_per_second=8,
                                # stdout is the answer's: never wrapped or moved by the display
                                redirect_stdout=False, redirect_stderr=False)
            text, done, total, count = self._words()
            self.task = self.bar.add_task(text, total=total, completed=done, count=count)
            self.bar.start()

    def tick(self, phase: str, done: int, total: int | None) -> None:
        self.state = (phase, done, total)  # one tuple store: the common case costs nothing more
        if self.bar is not None:
            with self.lock:
                if self.bar is not None and not self.closed:
                    text, done, total, count = self._words()
                    self.bar.update(self.task, description=text, completed=done, total=total, count=count)

    def close(self) -> None:
        self.timer.cancel()
        with self.lock:
            self.closed = True
            if self.bar is not None:
                self.bar.stop()  # transient: the line is erased, the terminal keeps only the answer


@contextlib.contextmanager
def step(what: str = "", phase: str = "state", *, no_color: bool = False) -> Iterator[ProgressFn | None]:
    """`with step("prod.json.gz", "read") as progress:` hand `progress` to the engine; `phase` is
    what the line says until the engine first reports. None when stderr is not a terminal or the
    display is off: the engine then skips its reporting altogether (no counting wrapper around a
    List's items, no calls per step), as it does for every caller that passes no callback."""
    after = _after()
    if after is None or not _stderr_is_terminal():
        yield None
        return
    from ..report.escape import printable

    s = _Step(printable(what), phase, after, no_color or bool(os.environ.get("NO_COLOR")))
    if after == 0:
        s._show()  # at once, on this thread: a timer of 0 s can lose the race with a quick step
    else:
        s.timer.start()
    try:
        yield s.tick
    finally:
        s.close()

