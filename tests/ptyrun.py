"""Run a command in a real pseudo-terminal of a given size and return what the terminal got."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
from typing import IO, Any


def run_in_pty(argv: list[str], columns: int, rows: int = 50, env: dict | None = None, timeout: float = 60,
               stderr: int | IO | None = None, cwd: str | os.PathLike | None = None, stdout: Any = None) -> tuple[int, str]:
    """(exit code, output with \\r\\n turned into \\n). stdin, stdout and stderr are the terminal,
    unless `stderr` names another file (tests/test_docs_drift.py keeps stderr's warnings apart) or
    `stdout` does (a file: the terminal then holds only stderr, tests/test_progress.py)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    e = dict(os.environ)
    for k in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        e.pop(k, None)
    e["TERM"] = "xterm"
    e.update(env or {})
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave if stdout is None else stdout,
                            stderr=slave if stderr is None else stderr, env=e, close_fds=True, cwd=cwd)
    os.close(slave)
    chunks = []
    while True:
        r, _, _ = select.select([master], [], [], timeout)
        if not r:
            proc.kill()
            raise TimeoutError(" ".join(argv))
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    code = proc.wait(timeout)
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
