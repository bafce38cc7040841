"""A live list's pages decoded and handed to a sink in order, by the thread that fetched them or
by a second one while the next is fetched (live.py _paginate; issue 34 item 3)."""

from __future__ import annotations

import json
import queue
import sys
import threading
from typing import Any, Callable

from kubectl_wap.errors import ClusterAccessError

try:
    from kubectl_wap.snapshot.decode import lean as _lean
except ImportError:  # optional (see files.py)
    _lean = None

SWITCH_INTERVAL = 0.001  # the GIL's switch interval while a list is read by two threads (Pages)


class NotAnObject(Exception):
    """A list item that is not a JSON object (raised by a sink; _paginate names the server and path)."""


def _list_meta(meta: Any) -> tuple[str, str]:
    """What _paginate reads of a list's metadata: (continue, resourceVersion)."""
    meta = meta if isinstance(meta, dict) else {}
    return str(meta.get("continue") or ""), str(meta.get("resourceVersion") or "")


class Pages:
    """The pages of one list, decoded and handed to the sink in order: by the calling thread
    (`take`), or by a second thread while the caller fetches the next page (`put`). The second
    thread starts with the first page that comes after a continue token, so a list of one page
    never starts it; at most two pages wait for it (memory stays a few pages)."""

    def __init__(self, client: Any, spec: Any, path: str, sink: Any, progress: Callable[[str, int], None] | None) -> None:
        self.client, self.spec, self.path, self.sink, self.progress = client, spec, path, sink, progress
        self.count = 0
        self.error: BaseException | None = None
        self._queue: queue.Queue[tuple[bytes, Any] | None] | None = None
        self._thread: threading.Thread | None = None
        self._interval = 0.0

    def take(self, body: bytes) -> Any:
        """Decode one page and hand its items to the sink; return its metadata."""
        spec, server, path = self.spec, self.client.server_url, self.path
        raw_specs = getattr(self.sink, "raw_specs", False)
        while True:
            try:
                doc, structs = _decode_page(body, spec.kind, raw_specs)
            except ValueError:
                raise ClusterAccessError(f"the API server at {server} answered GET {path} with something that is not JSON") from None
            page = check_list(doc, spec, server, path)
            try:
                if self.sink.page(spec.api_version, spec.kind, page, structs) is not False or not raw_specs:
                    break
            except NotAnObject:
                raise ClusterAccessError(f"the API server at {server} answered GET {path} with a list item that is not an object") from None
            raw_specs = False  # a spec's text the typed decode refuses: the page decoded the usual way
        del body
        self.count += len(page)
        if self.progress is not None:
            self.progress(spec.name, self.count)
        return doc.get("metadata")

    def put(self, body: bytes, meta: Any) -> None:
        """Hand a page to the second thread; `meta` is what the caller read of its metadata (the
        whole page must say the same: _run)."""
        if self._thread is None:
            # The fetching thread needs the GIL between TLS records (16 KB each, ~175 a page) while
            # the decoding thread holds it; at the default 5 ms switch interval it waits behind
            # the decoder. 1 ms for the while: M's pods list 2.35-2.58 s -> 1.85-2.29 s wall.
            self._interval = sys.getswitchinterval()
            sys.setswitchinterval(min(self._interval, SWITCH_INTERVAL))
            self._queue = queue.Queue(maxsize=2)
            self._thread = threading.Thread(target=self._run, name=f"wap-pages-{self.spec.plural}", daemon=True)
            self._thread.start()
        assert self._queue is not None
        self._queue.put((body, meta))

    def _run(self) -> None:
        assert self._queue is not None
        while True:
            got = self._queue.get()
            if got is None:
                return
            if self.error is None:  # after an error, only empty the queue (the caller stops)
                try:
                    if _list_meta(self.take(got[0])) != _list_meta(got[1]):
                        # metadata given twice, differently (json keeps the last): the caller
                        # went on with what it read first
                        raise ClusterAccessError(f"the API server at {self.client.server_url} answered GET {self.path} "
                                                 f"with a list whose metadata is given twice, differently")
                except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread (check, drain)
                    self.error = e
            del got

    def check(self) -> None:
        """Raise the error the second thread met (a page the sequential reader would have refused
        before asking for the next)."""
        if self.error is not None:
            self.drain()

    def drain(self) -> None:
        """Wait until every page put has been taken; raise the error the second thread met."""
        if self._thread is not None:
            assert self._queue is not None
            self._queue.put(None)
            self._thread.join()
            self._thread = None
            sys.setswitchinterval(self._interval)
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def stop(self) -> None:
        try:
            self.drain()
        except BaseException:  # noqa: BLE001 - already raised once, or the caller is raising its own
            pass


def _decode_page(body: bytes, kind: str, raw_specs: bool = False) -> tuple[Any, bool]:
    """(the page as a dict, whether its items are lean.py's Structs): decoded by lean.py into only
    the fields we read when msgspec is there and the page has the usual shape (issue 18), else
    parsed whole (json.loads); the sink makes the Structs dicts, or rows (capture.py)."""
    if _lean is not None:
        found = _lean.decode_page_structs(body, kind, raw_specs)
        if found is not None:
            list_kind, meta, items = found
            return {"kind": list_kind, "metadata": meta, "items": items}, True
    return json.loads(body), False


def check_list(doc: Any, spec: Any, server: str, path: str) -> list:
    """The items of a 200 answer to a list GET, which must be the list we asked for: a Status, a
    single object or another kind's list (a SecretList from a misrouting proxy) is refused rather
    than read as this resource."""
    want = spec.kind + "List"
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if kind != want or not isinstance(doc.get("items", []), (list, type(None))):
        got = f"a {kind}" if isinstance(kind, str) and kind else f"a JSON {type(doc).__name__}"
        raise ClusterAccessError(f"the API server at {server} answered GET {path} with {got[:80]}, not a {want}")
    return doc.get("items") or []
