"""`kubectl wap snapshot` from a live cluster written as the pages arrive (io/capture.py, issue 34
item 3): the same file, byte for byte, as the collecting reader plus write_snapshot gives, and memory
bounded by a page rather than by the cluster."""

from __future__ import annotations

import copy
import gzip
import io
import json
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

from fake_apiserver import FakeApiServer, tls_available  # noqa: E402

from kubectl_wap.snapshot.decode import lean  # noqa: E402
from kubectl_wap.snapshot.decode.spectemplates import encode  # noqa: E402
from kubectl_wap.snapshot.io import live  # noqa: E402
from kubectl_wap.snapshot.io.capture import StreamSink  # noqa: E402
from kubectl_wap.snapshot.io.readonly import Response  # noqa: E402
from kubectl_wap.snapshot.io.save import dump_snapshot, dump_spooled, write_snapshot, write_spooled  # noqa: E402
from kubectl_wap.snapshot.share.strip import for_sharing  # noqa: E402


def _pod(i: int, **kw: Any) -> dict:
    rs = f"web-{i % 7}"
    pod: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"{rs}-{i}", "namespace": f"ns{i % 3}", "uid": f"u{i}",
                     "labels": {"app": rs, "pod-template-hash": "abc"},
                     "creationTimestamp": f"2026-01-0{1 + i % 5}T10:0{i % 10}:00Z",
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": "x",
                                          "controller": True, "blockOwnerDeletion": True}],
                     "annotations": {"secret": "do not keep"}, "managedFields": [{"manager": "kubectl"}]},
        "spec": {"nodeName": f"n{i % 4}", "priority": (i % 3) * 1000,
                 "containers": [{"name": "c", "image": "nginx", "env": [{"name": "PASSWORD", "value": "hunter2"}],
                                 "resources": {"requests": {"cpu": f"{1 + i % 7 * 100}m", "memory": "64Mi"},
                                               "limits": {"cpu": "2"}},
                                 "ports": [{"containerPort": 80}, {"containerPort": 81, "hostPort": 8081}]}],
                 "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "junk": 1}],
                 "volumes": [{"name": "v", "configMap": {"name": "cm"}}]},
        "status": {"phase": "Running", "startTime": f"2026-01-0{1 + i % 5}T10:0{i % 10}:05Z",
                   "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0}]},
    }
    for path, value in kw.items():
        *parents, leaf = path.split("__")
        d = pod
        for p in parents:
            d = d.setdefault(p, {})
        if value is _DEL:
            d.pop(leaf, None)
        else:
            d[leaf] = value
    return pod


_DEL = object()

# Pods the row cannot hold, or holds only after a check: each takes the dict path, in its place.
_ODD: list[dict] = [
    _pod(1000, metadata__deletionTimestamp="2026-01-02T00:00:00Z"),
    _pod(1001, status__nominatedNodeName="n2", spec__nodeName=_DEL),
    _pod(1002, status__conditions=[{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                                    "message": "default-scheduler: preempting", "lastTransitionTime": "2026-01-02T00:00:00Z"}]),
    _pod(1003, status__containerStatuses=[{"name": "c", "allocatedResources": {"cpu": "1"}}]),
    _pod(1004, metadata__labels={"app": "x", "n": 5}),
    _pod(1005, metadata__ownerReferences=[{"kind": "Job", "name": "j", "controller": False}]),
    _pod(1006, metadata__ownerReferences=[{"kind": "Job", "name": 7, "controller": True}]),
    _pod(1007, metadata__creationTimestamp="2026-02-30T00:00:00Z", status__startTime="yesterday"),
    _pod(1008, spec__nodeName=_DEL, status=_DEL),
    _pod(1009, metadata__labels={}, metadata__ownerReferences=[]),
    _pod(1010, status__phase=None, metadata__name="p\u00e9-\u4e2d"),
    _pod(1011, status__resourceClaimStatuses=[{"name": "gpu", "resourceClaimName": "p-gpu-x"}]),
    _pod(1012, spec="not a spec"),
    _pod(1013, spec__containers=[{"name": "c", "resources": {"requests": {"cpu": [1]}}}]),
    _pod(1000 + 14, metadata__labels=None),
    _pod(1015, status__initContainerStatuses=[{"name": "i", "resources": {"requests": {"cpu": "1"}}}]),
]

_OTHERS: list[dict] = [
    *({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
       "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}, "conditions": [{"type": "Ready"}]}}
      for i in range(4)),
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns0"}, "status": {"phase": "Active"}},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": "ns0"},
     "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web-1"}}}},
    {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "ns0"}, "reason": "Preempted",
     "message": "Preempted by pod u9 on node n1", "involvedObject": {"kind": "Pod", "name": "web-1-1", "namespace": "ns0"}},
    {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e2", "namespace": "ns0"}, "reason": "Pulled",
     "message": "pulled"},
]


def _objects(n: int = 1200) -> list[dict]:
    pods = [_pod(i) for i in range(n)]
    for k, odd in enumerate(_ODD):  # spread over the pages
        pods.insert(k * (n // len(_ODD)), odd)
    return _OTHERS + pods


def _capture(kc: str, tmp: Path, name: str, stream: bool, **kw: Any) -> tuple[dict, Path, str]:
    """(header, the .json.gz written, the json printed) of one capture, collected or streamed."""
    path = tmp / f"{name}.json.gz"
    out = io.StringIO()
    if stream:
        sink = StreamSink()
        try:
            header, items = live.load_live(kc, None, None, sink=sink, **kw)
            assert items == []
            header["capturedAt"] = "2026-01-01T00:00:00Z"
            write_spooled(str(path), header, sink.spool.chunks)
            dump_spooled(out, header, sink.spool.chunks)
        finally:
            sink.close()
    else:
        header, items = live.load_live(kc, None, None, **kw)
        header["capturedAt"] = "2026-01-01T00:00:00Z"
        write_snapshot(str(path), header, items)
        dump_snapshot(out, header, [for_sharing(o) for o in items])
    return header, path, out.getvalue()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("stream")
    with FakeApiServer(_objects(), token="t", tls=tls_available()) as srv:
        yield srv, str(srv.write_kubeconfig(tmp / "kc")), tmp


@pytest.mark.parametrize("events", [False, True])
def test_the_streamed_capture_is_the_collected_one_byte_for_byte(served: Any, events: bool) -> None:
    srv, kc, tmp = served
    interval = sys.getswitchinterval()
    h1, ref, ref_json = _capture(kc, tmp, f"ref{events}", False, events=events)
    h2, new, new_json = _capture(kc, tmp, f"new{events}", True, events=events)
    assert sys.getswitchinterval() == interval  # set for the two threads' while only
    assert h1 == h2
    assert h1["counts"]["pods"] == 1200 + len(_ODD) > 2 * live.PAGE_LIMIT  # three pages
    assert new.read_bytes() == ref.read_bytes()
    assert new_json == ref_json
    text = gzip.decompress(new.read_bytes()).decode()
    assert "hunter2" not in text and "do not keep" not in text  # stripped as before
    assert ('"Preempted"' in text) is events and '"Pulled"' not in text


def test_a_list_restarted_after_410_is_written_once(served: Any) -> None:
    """410 Gone on the third pods page: the list starts again and the pages the first attempt
    wrote (templates, label sets and owners included) are not in the file."""
    srv, kc, tmp = served
    _, ref, _ = _capture(kc, tmp, "ref410", False)
    srv.fail("/api/v1/pods", 410, times=1, only_continue=True)
    _, new, _ = _capture(kc, tmp, "new410", True)
    pods = [r for r in srv.requests if r.path == "/api/v1/pods"]
    assert sum(1 for r in pods if "continue" not in r.query) >= 2  # restarted
    assert new.read_bytes() == ref.read_bytes()


def test_the_snapshot_command_streams_the_same_file(served: Any, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from kubectl_wap.cli import app

    srv, kc, tmp = served
    out = tmp_path / "cli.json.gz"
    r = CliRunner().invoke(app, ["snapshot", "--output-file", str(out), "--kubeconfig", kc, "--color", "never"])
    assert r.exit_code == 0, r.output
    doc = json.loads(gzip.decompress(out.read_bytes()))
    header = doc["header"]
    header["capturedAt"] = "2026-01-01T00:00:00Z"
    ref = tmp_path / "ref.json.gz"
    h, items = live.load_live(kc, None, None)
    write_snapshot(str(ref), header, items)
    assert out.read_bytes() != b"" and gzip.decompress(ref.read_bytes()) == gzip.decompress(_with_header(out, header))


def _with_header(path: Path, header: dict) -> bytes:
    """The file's bytes with its header line replaced by `header` (capturedAt is the clock's)."""
    text = gzip.decompress(path.read_bytes())
    first, rest = text.split(b'"items":[', 1)
    from kubectl_wap.snapshot.io.save import _head

    return gzip.compress(_head(dict(header)).encode() + rest)


# -- the row straight from the Struct, against the dict path, pod by pod ------------------------------

_text = st.sampled_from(["a", "web-1", "", "n1", "2026-01-01T00:00:00Z", "2026-13-01T00:00:00Z", "\u00e9"])
_value = st.one_of(st.none(), _text, st.integers(-2, 2), st.booleans(), st.lists(_text, max_size=2))


@st.composite
def _odd_pod(draw: Any) -> dict:
    pod = _pod(draw(st.integers(0, 30)))
    for path in draw(st.lists(st.sampled_from([
        "metadata__name", "metadata__namespace", "metadata__uid", "metadata__labels", "metadata__creationTimestamp",
        "metadata__deletionTimestamp", "metadata__ownerReferences", "spec__nodeName", "spec__priority", "status",
        "status__phase", "status__startTime", "status__nominatedNodeName", "status__conditions",
        "status__containerStatuses", "spec__containers", "spec__tolerations",
    ]), max_size=4)):
        *parents, leaf = path.split("__")
        d = pod
        for p in parents:
            d = d.get(p) if isinstance(d.get(p), dict) else d.setdefault(p, {})
            if not isinstance(d, dict):
                break
        else:
            d[leaf] = draw(st.one_of(_value, st.just(_DEL), st.dictionaries(_text, _value, max_size=2),
                                     st.lists(st.dictionaries(st.sampled_from(["type", "kind", "name", "controller", "resources"]),
                                                              _value, max_size=3), max_size=2)))
            if d[leaf] is _DEL:
                del d[leaf]
    pod.pop("apiVersion")
    pod.pop("kind")
    return pod


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_odd_pod(), min_size=1, max_size=6))
def test_each_pod_is_written_as_the_dict_path_writes_it(pods: list[dict]) -> None:
    body = json.dumps({"kind": "PodList", "metadata": {}, "items": pods}).encode()
    found = lean.decode_page_structs(body, "Pod")
    if found is None:
        return  # a page msgspec does not type: parsed whole, the same path for both
    ref_items: list[dict] = []
    collect = live._ListSink(ref_items)
    collect.begin()
    collect.page("v1", "Pod", lean.decode_page_structs(body, "Pod")[2], True)
    want = ",\n".join(encode(for_sharing(o) for o in ref_items)).encode()
    assert _streamed(body) == want


def _streamed(body: bytes) -> bytes:
    """The spool after one pods page, decoded as pages.py decodes it for the streaming sink (the
    specs' stanzas as text; the typed decode when the sink refuses that)."""
    sink = StreamSink()
    try:
        sink.begin()
        found = lean.decode_page_structs(body, "Pod", raw_specs=True)
        assert found is not None
        if sink.page("v1", "Pod", found[2], True) is False:
            typed = lean.decode_page_structs(body, "Pod")
            assert typed is not None
            assert sink.page("v1", "Pod", typed[2], True) is True
        return b"".join(sink.spool.chunks())
    finally:
        sink.close()


@pytest.mark.parametrize("bad", [b"1e999", b'"\xff"'])
def test_a_spec_the_typed_decode_refuses_sends_the_page_that_way(bad: bytes) -> None:
    """A spec stanza kept as text that msgspec would not decode (a number out of range, bytes that
    are not UTF-8): the sink takes nothing of the page and it is decoded as before (here: whole,
    by json), to the same lines as the collecting reader's."""
    pods = [_pod(i) for i in range(3)]
    for p in pods:
        p.pop("apiVersion"), p.pop("kind")
    body = json.dumps({"kind": "PodList", "metadata": {}, "items": pods}).encode()
    body = body.replace(b'"junk": 1', b'"junk": ' + bad, 1)  # the first pod's tolerations
    raw = lean.decode_page_structs(body, "Pod", raw_specs=True)
    assert raw is not None
    sink = StreamSink()
    try:
        sink.begin()
        assert sink.page("v1", "Pod", raw[2], True) is False and sink.read == 0
    finally:
        sink.close()
    ref_items: list[dict] = []
    collect = live._ListSink(ref_items)
    collect.begin()
    typed = lean.decode_page_structs(body, "Pod")
    if typed is None:
        collect.page("v1", "Pod", json.loads(body.decode("utf-8", "surrogateescape"))["items"], False)
        streamed = StreamSink()
        try:
            streamed.begin()
            streamed.page("v1", "Pod", json.loads(body.decode("utf-8", "surrogateescape"))["items"], False)
            got = b"".join(streamed.spool.chunks())
        finally:
            streamed.close()
    else:
        collect.page("v1", "Pod", typed[2], True)
        got = _streamed(body)
    assert got == ",\n".join(encode(for_sharing(o) for o in ref_items)).encode("utf-8", "surrogateescape")


# -- memory: a page, not the cluster ----------------------------------------------------------------

class _PagingClient:
    """A ReadOnlyClient stand-in that makes each pods page as it is asked for (so the pages do not
    count in the memory measured), `pages` pages of PAGE_LIMIT pods."""

    server_url = "https://test"
    deadline = None

    def __init__(self, pages: int) -> None:
        self.pages = pages

    def get(self, path: str, query: Any = ()) -> Response:
        q = dict(query)
        n = int(q.get("continue", "0"))
        pods = [_pod(n * live.PAGE_LIMIT + i) for i in range(live.PAGE_LIMIT)]
        for p in pods:
            del p["apiVersion"], p["kind"]
        meta = {"resourceVersion": "7"} | ({"continue": str(n + 1)} if n + 1 < self.pages else {})
        return Response(200, {}, json.dumps({"kind": "PodList", "metadata": meta, "items": pods}).encode())


def _peak(sink: Any, pages: int) -> int:
    pods = next(s for s in live.RESOURCES if s.name == "pods")
    tracemalloc.start()
    try:
        live._list_resource(_PagingClient(pages), pods, None, sink, live.new_header(), None)  # type: ignore[arg-type]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_is_bounded_by_a_page_not_by_the_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """Peak traced memory over 2 and 8 pages of pods: flat when written as they arrive (the
    spool is a file), growing with the pages when collected (the reader the snapshot command
    used). Pages are taken one at a time in this thread here (no head decoded: no second thread),
    so the peak does not depend on how far the fetching ran ahead (at most two pages wait)."""
    monkeypatch.setattr(lean, "decode_head", lambda raw: None)
    streamed = []
    for pages in (2, 8):
        sink = StreamSink()
        try:
            streamed.append(_peak(sink, pages))
            assert sink.read == pages * live.PAGE_LIMIT
        finally:
            sink.close()
    collected = [_peak(live._ListSink([]), pages) for pages in (2, 8)]
    print("streamed", streamed, "collected", collected)
    # Six pages more: what the collecting reader keeps of them grows its peak by ~4 MB; the
    # streaming one keeps only its tables (the template's and label sets' texts).
    assert streamed[1] - streamed[0] < 0.1 * (collected[1] - collected[0]), (streamed, collected)
    assert streamed[1] < collected[0]


# -- the second thread: pages in order, errors in the order the sequential reader meets them -------

class _BadPagesServer(FakeApiServer):
    """Page 2 of the pods holds an item that is not an object; page 3 is another kind's list."""

    def list_body(self, info, meta, page):  # type: ignore[no-untyped-def]
        body = super().list_body(info, meta, page)
        if info.plural == "pods" and page and page[0]["metadata"]["name"] == "p2":
            body["items"] = [*page[:-1], 5]
        if info.plural == "pods" and page and page[0]["metadata"]["name"] == "p4":
            body["kind"] = "SecretList"
        return body


def test_a_bad_page_is_reported_before_a_later_page_s_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Page 2 is decoded by the second thread while page 3 is fetched and refused by the first:
    the error is page 2's, as when pages were read one after another."""
    from kubectl_wap.errors import ClusterAccessError

    monkeypatch.setattr(live, "PAGE_LIMIT", 2)
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "a"},
             "spec": {"nodeName": "n0", "containers": [{"name": "c"}]}} for i in range(6)]
    with _BadPagesServer([_OTHERS[0], *pods], token="t", tls=tls_available()) as srv:
        kc = str(srv.write_kubeconfig(tmp_path / "kc"))
        for sink in (None, StreamSink()):
            interval = sys.getswitchinterval()
            with pytest.raises(ClusterAccessError, match="a list item that is not an object"):
                live.load_live(kc, None, None, sink=sink)
            assert sys.getswitchinterval() == interval
            seen: list[tuple[str, int]] = []
            monkeypatch.setattr(_BadPagesServer, "list_body", FakeApiServer.list_body)
            h, items = live.load_live(kc, None, None, sink=sink and StreamSink(), progress=lambda r, n: seen.append((r, n)))
            assert [n for r, n in seen if r == "pods"] == [2, 4, 6]  # progress per page, in order
            monkeypatch.undo()
            monkeypatch.setattr(live, "PAGE_LIMIT", 2)


def test_the_snapshot_command_prints_the_same_document(served: Any, tmp_path: Path) -> None:
    """`snapshot -o json` (stdout) streams too: the document the file holds."""
    from typer.testing import CliRunner

    from kubectl_wap.cli import app

    srv, kc, tmp = served
    r = CliRunner().invoke(app, ["snapshot", "-o", "json", "--kubeconfig", kc, "--color", "never"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    h, items = live.load_live(kc, None, None)
    buf = io.StringIO()
    dump_snapshot(buf, dict(doc["header"]), [for_sharing(o) for o in items])
    assert r.stdout == buf.getvalue()


def test_no_room_for_the_spool_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import tempfile

    from kubectl_wap.errors import UserError

    def full() -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", full)
    with pytest.raises(UserError, match=r"cannot keep the capture in the temporary directory .*No space left on device; set TMPDIR"):
        StreamSink()


# -- the head of a page: what the fetching thread reads to ask for the next -----------------------

_KEYS = st.sampled_from(["kind", "apiVersion", "metadata", "items"])


@st.composite
def _list_doc(draw: Any) -> bytes:
    values = {
        "kind": st.sampled_from(["PodList", "SecretList", 5]),
        "apiVersion": st.just("v1"),
        "metadata": st.one_of(st.none(), st.just(3), st.fixed_dictionaries(
            {"continue": st.sampled_from(["", "abc", '"items":[1]', 'x"items":'])},
            optional={"resourceVersion": st.just("7"), "items": st.just([1]), "nested": st.just({"items": []})})),
        "items": st.one_of(st.none(), st.just(5), st.just({"a": 1}), st.lists(st.just({"metadata": {"name": "p"}}), max_size=2)),
    }
    keys = draw(st.lists(_KEYS, unique=True, min_size=1))
    sep = draw(st.sampled_from([(",", ":"), (", ", ": "), (",\n  ", ": ")]))
    return json.dumps({k: draw(values[k]) for k in keys}, separators=sep).encode()


@settings(max_examples=400, deadline=None)
@given(_list_doc())
def test_the_head_read_before_the_items_is_the_page_s_own(raw: bytes) -> None:
    """Read from the text before `"items":` or from the whole page: the same kind, metadata and
    items' shape."""
    monkey = lean._ITEMS_KEY
    try:
        fast = lean.decode_head(raw)
        lean._ITEMS_KEY = b"\x00never"  # only the whole scan
        whole = lean.decode_head(raw)
    finally:
        lean._ITEMS_KEY = monkey
    assert fast == whole


class _TwiceServer(FakeApiServer):
    """Page 2 of the pods gives its metadata twice: first with a continue token, then without."""

    def list_body(self, info, meta, page):  # type: ignore[no-untyped-def]
        body = super().list_body(info, meta, page)
        if info.plural == "pods" and page and page[0]["metadata"]["name"] == "p2":
            return json.dumps(body).encode()[:-1] + b', "metadata": {"resourceVersion": "1"}}'
        return body


def test_a_page_whose_metadata_is_given_twice_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kubectl_wap.errors import ClusterAccessError

    monkeypatch.setattr(live, "PAGE_LIMIT", 2)
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "a"},
             "spec": {"nodeName": "n0", "containers": [{"name": "c"}]}} for i in range(6)]
    with _TwiceServer([_OTHERS[0], *pods], token="t", tls=tls_available()) as srv:
        kc = str(srv.write_kubeconfig(tmp_path / "kc"))
        with pytest.raises(ClusterAccessError, match="with a list whose metadata is given twice, differently"):
            live.load_live(kc, None, None, sink=StreamSink())


def test_the_spool_has_no_name_and_is_private() -> None:
    """The stripped capture waits in a file no other user can open and no path names (nothing is
    left behind when the process is killed)."""
    import os
    import stat

    sink = StreamSink()
    try:
        sink.spool.write(['{"kind":"Node"}'])
        st_ = os.fstat(sink.spool.file.fileno())
        assert st_.st_nlink == 0
        assert stat.S_IMODE(st_.st_mode) & 0o077 == 0
    finally:
        sink.close()


# ---- whatif/explain/pending from a live cluster: the read spooled in memory, read back as a snapshot ----

def _collected_model(kc: str, **kw: Any) -> Any:
    """The model as live reads built it before (and --redact/-o yaml captures still collect):
    load_live's stripped dicts, straight into build."""
    from kubectl_wap.model import SnapshotHeader
    from kubectl_wap.snapshot.io.files import _fill_header
    from kubectl_wap.snapshot.source import build

    header_dict, items = live.load_live(kc, None, None, **kw)
    header = SnapshotHeader(source=f"cluster {header_dict['server']['url']}")
    _fill_header(header, header_dict)
    return build(header, items), items


def _same_but_the_capture_time(a: Any, b: Any) -> None:
    import dataclasses

    assert dataclasses.replace(a.header, captured_at="") == dataclasses.replace(b.header, captured_at="")
    assert dataclasses.replace(a, header=None) == dataclasses.replace(b, header=None)
    assert a.pods == b.pods and a.nodes == b.nodes  # the dataclasses, field by field


# The odd pods the model refuses (a name the API server would not store, a request that is no
# quantity) make both reads fail alike (below); the others are read into a model.
_REFUSED = ("p\u00e9-\u4e2d", "web-5-1013")


@pytest.fixture(scope="module")
def buildable(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("buildable")
    objects = [o for o in _objects() if o.get("metadata", {}).get("name") not in _REFUSED]
    objects.append(_pod(2000, metadata__name="urgent", metadata__namespace="ns0", spec__nodeName=_DEL, status=_DEL,
                        spec__priority=5000, spec__containers=[{"name": "c", "resources": {"requests": {"cpu": "1"}}}]))
    with FakeApiServer(objects, token="t", tls=tls_available()) as srv:
        yield srv, str(srv.write_kubeconfig(tmp / "kc")), tmp


@pytest.mark.parametrize("events", [False, True])
def test_a_live_read_builds_the_model_the_collected_dicts_build(buildable: Any, events: bool) -> None:
    """raw_source reads a live cluster through the capture's sink into memory and back through the
    snapshot reader: the model (odd pods included: each takes the dict path in its place) and the
    raw items the diagnosis commands read are what the collected dicts gave."""
    from kubectl_wap.snapshot.io.capture import LineSpool
    from kubectl_wap.snapshot.source import build, raw_source

    srv, kc, tmp = buildable
    made: list[LineSpool] = []
    real = LineSpool.__init__

    def spy(self: LineSpool, in_memory: bool = False) -> None:
        real(self, in_memory)
        made.append(self)

    ref, collected = _collected_model(kc, events=events)
    mp = pytest.MonkeyPatch()
    mp.setattr(LineSpool, "__init__", spy)
    try:
        header, items = raw_source(None, False, kc, None, events=events)
    finally:
        mp.undo()
    assert [type(s.file) for s in made] == [io.BytesIO]  # nothing written to disk
    assert not isinstance(items, list)  # read lazily, once
    snap = build(header, items)
    _same_but_the_capture_time(snap, ref)
    served_pods = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in srv._store["pods"]}
    assert len(snap.pods) == len(served_pods) > 1000  # an odd pod named as a plain one replaces it in both
    # The diagnosis commands' raw items: the same objects, as a snapshot file of the read gives them.
    _, again = raw_source(None, False, kc, None, events=events)
    as_dicts = list(again)
    assert as_dicts == [for_sharing(o) for o in collected]
    assert any(o.get("reason") == "Preempted" for o in as_dicts) is events


def test_a_live_object_the_model_refuses_is_the_same_one_line(served: Any) -> None:
    from kubectl_wap.errors import UserError
    from kubectl_wap.snapshot.source import build, raw_source

    srv, kc, tmp = served
    with pytest.raises(UserError) as old:
        _collected_model(kc)
    header, items = raw_source(None, False, kc, None)
    with pytest.raises(UserError) as new:
        build(header, items)
    assert str(new.value) == str(old.value)
    assert "metadata.name is not a name the API server stores" in str(new.value)


def test_a_live_read_answers_as_its_snapshot_does(buildable: Any, tmp_path: Path) -> None:
    """`whatif` on the live cluster and on `kubectl wap snapshot` of it: the same JSON, the source
    line aside."""
    from typer.testing import CliRunner

    from kubectl_wap.cli import app

    srv, kc, tmp = buildable
    snap = tmp_path / "s.json.gz"
    runner = CliRunner()
    r = runner.invoke(app, ["snapshot", "--kubeconfig", kc, "--output-file", str(snap)])
    assert r.exit_code == 0, r.output
    args = ["whatif", "pod", "urgent", "-n", "ns0", "-o", "json"]
    live_out = runner.invoke(app, [*args, "--kubeconfig", kc])
    file_out = runner.invoke(app, [*args, "--snapshot", str(snap)])
    assert live_out.exit_code == file_out.exit_code == 0, (live_out.output, file_out.output)
    a, b = json.loads(live_out.stdout), json.loads(file_out.stdout)
    assert a["outcome"] == "Preempt" and a["victims"]
    for doc in (a, b):
        doc.pop("source", None)
        doc.get("snapshot", {}).pop("source", None)
    assert a == b
