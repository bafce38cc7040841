"""`kubectl wap metrics` (issue 36): the metrics text to stdout, to a file (atomically, for
node-exporter's textfile collector), or served over HTTP (`--serve HOST:PORT`, 127.0.0.1 unless a
host is given) and refreshed every N seconds.

The refresh is bounded: one re-list (or re-read of the snapshot) and one analysis at a time, each
API request under --request-timeout, the next one `interval` seconds after the last ended (a slow
cluster stretches the period; refreshes never pile up), and a scrape never triggers a list: it
reads the last text computed. A failed refresh keeps the previous values and says so in
`wap_refresh_success` and `wap_refresh_errors_total`. SIGINT and SIGTERM stop the server cleanly.

The computation is handed in (`collect`, from cli.py), as for the MCP server: this module never
imports cli.py."""

from __future__ import annotations

import os
import signal
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, TextIO

from ..errors import UserError
from ..report.metrics import refresh_text

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 9108


def parse_bind(text: str) -> tuple[str, int]:
    """HOST:PORT, :PORT (127.0.0.1) or PORT; [v6]:PORT."""
    host, sep, port = text.strip().rpartition(":")
    if not sep:
        host, port = "", text.strip()
    host = host.strip("[]") or DEFAULT_HOST
    try:
        n = int(port)
    except ValueError:
        n = -1
    if not 0 <= n <= 65535:
        raise UserError(f"--serve wants HOST:PORT, :PORT or PORT (e.g. 127.0.0.1:{DEFAULT_PORT}), got {text!r}")
    return host, n


def write_atomic(path: str, text: str) -> None:
    """Write next to the target and rename over it: the textfile collector never reads half a file."""
    target = os.path.abspath(os.path.expanduser(path))
    directory = os.path.dirname(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".wap-metrics-", suffix=".tmp", dir=directory)
    except OSError as e:
        raise UserError(f"{path}: cannot write the metrics: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise UserError(f"{path}: cannot write the metrics: {e.strerror or e}") from None


@dataclass(slots=True)
class RefreshStats:
    refreshes: int = 0
    errors: int = 0
    ok: bool = False
    last_success: float = 0.0
    last_duration: float = 0.0


class MetricsServer:
    """The HTTP endpoint and the refresh loop. `collect()` returns the outlook's metrics text;
    `say(line)` reports on stderr."""

    def __init__(self, collect: Callable[[], str], host: str, port: int, interval: float, say: Callable[[str], None]) -> None:
        self.collect, self.interval, self.say = collect, interval, say
        self.stats = RefreshStats()
        self.text = ""
        self.body = b""
        self.lock = threading.Lock()
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if self.path.split("?")[0] not in ("/metrics", "/"):
                    self.send_error(404, "only /metrics")
                    return
                if self.path.startswith("/metrics"):
                    with server.lock:
                        body, ctype = server.body, CONTENT_TYPE
                else:
                    body, ctype = b"kubectl-wap preemption-risk metrics: /metrics\n", "text/plain; charset=utf-8"
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - scrapes are not news
                pass

        try:
            self.httpd = ThreadingHTTPServer((host, port), Handler)
        except OSError as e:
            raise UserError(f"--serve {host}:{port}: cannot listen: {e.strerror or e}") from None
        self.httpd.daemon_threads = True

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.httpd.server_address[:2]
        return str(host), int(port)

    def refresh(self) -> None:
        started = time.monotonic()
        self.stats.refreshes += 1
        try:
            text = self.collect()
            self.stats.ok = True
            self.stats.last_success = time.time()
        except Exception as e:  # noqa: BLE001 - a failed refresh keeps serving the last values
            self.stats.errors += 1
            self.stats.ok = False
            self.say(f"refresh failed (serving the previous values): {e}")
            text = None
        self.stats.last_duration = time.monotonic() - started
        with self.lock:
            if text is not None:
                self.text = text
            self.body = (self.text + refresh_text(self.stats)).encode()

    def run(self) -> None:
        """Refresh once (an error here is the user's: raised), serve, refresh every interval
        until SIGINT or SIGTERM."""
        self.text = self.collect()  # the first answer before the first scrape; a bad source fails now
        self.stats.refreshes, self.stats.ok, self.stats.last_success = 1, True, time.time()
        self.body = (self.text + refresh_text(self.stats)).encode()
        old = {s: signal.signal(s, lambda *_: self.stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
        thread = threading.Thread(target=self.httpd.serve_forever, name="wap-metrics-http", daemon=True)
        thread.start()
        host, port = self.address
        self.say(f"serving metrics on http://{host}:{port}/metrics, refreshing every {self.interval:g}s (SIGINT/SIGTERM stop)")
        try:
            while not self.stop.wait(self.interval):
                self.refresh()
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()
            for s, h in old.items():
                signal.signal(s, h)
            self.say("stopped")


def run_metrics(collect: Callable[[bool], tuple[str, list[str]]], output_file: str | None, serve: str | None, interval: float,
                say: Callable[[str], None], out: TextIO) -> None:
    """The metrics command after its options: `collect(quiet)` gives (text, warnings); quiet is
    True for the server's refreshes (no progress display)."""
    if serve and output_file:
        raise UserError("--serve and --output-file: give one of them")
    if not interval > 0:
        raise UserError(f"--interval must be a positive number of seconds, not {interval:g}")
    if serve:
        host, port = parse_bind(serve)
        MetricsServer(lambda: collect(True)[0], host, port, interval, say).run()
        return
    text, warnings = collect(False)
    if output_file:
        write_atomic(output_file, text)
    else:
        out.write(text)
    for w in warnings:
        say(f"Warning: {w}")
