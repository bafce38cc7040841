"""stdout for a command whose reader may go away (`kubectl wap ... | head -1`)."""

from __future__ import annotations

import os
from typing import Any


class QuietPipe:
    """stdout that stops writing, silently, once the reader has gone (`| head -1`): the command
    still finishes, so its exit code (--exit-code's verdict) is the one the shell sees."""

    def __init__(self, stream: Any):
        self._stream = stream
        self.closed_by_reader = False

    def write(self, text: str) -> int:
        if not self.closed_by_reader:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        if not self.closed_by_reader:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone()

    def _gone(self) -> None:
        self.closed_by_reader = True
        # Python flushes sys.__stdout__ at exit too: point the descriptor at /dev/null so that
        # flush cannot fail (the recipe in the signal module's documentation).
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
