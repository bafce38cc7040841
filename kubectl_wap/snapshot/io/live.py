"""Read a live cluster into a snapshot header plus stripped raw objects.

Speed and memory matter at 150k pods: pages of 500 are parsed with ``json.loads`` and stripped
before the next page is fetched (never deserialized into kubernetes model objects, ~40 s), and the
garbage collector is off during the load (millions of small dicts would otherwise trigger repeated
full collections that find nothing to free).
"""

from __future__ import annotations

import gc
import hashlib
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

from kubectl_wap.errors import ClusterAccessError
from kubectl_wap.snapshot.io.discovery import resolve
from kubectl_wap.snapshot.io.pages import NotAnObject, Pages, check_list
from kubectl_wap.snapshot.io.readonly import CaptureTimeout, ReadOnlyClient, Response, connect
from kubectl_wap.snapshot.share.strip import strip_object

try:
    from kubectl_wap.snapshot.decode import lean as _lean
except ImportError:  # optional (see files.py)
    _lean = None

PAGE_LIMIT = 500
# Bounds on one list, against a broken or hostile server: pages of 500 make 100k pages 50M
# objects (far beyond any cluster); a continue token seen before means the server loops.
MAX_PAGES = 100_000
# An apiserver continue token is base64 of a small JSON (resource version and an etcd key), a few
# hundred bytes. UPSTREAM-DIFF: client-go takes any length; a token past this is refused, and the
# tokens seen are remembered by SHA-256, so unique 1 MiB tokens cannot grow memory per page.
MAX_CONTINUE_BYTES = 64 << 10
MAX_RESTARTS = 3  # a list restarted more often than this after 410 Gone is given up
# One deadline for the whole capture (issue 31 item 4): discovery, every page of every list, the
# retries and their waits. UPSTREAM-DIFF: kubectl has only --request-timeout, which bounds each
# request (client-go rest.Config.Timeout), so `kubectl get` of a server that answers every page
# just in time, with endless continue tokens, never ends. Here the whole capture gets 20 times
# --request-timeout, and at least 10 minutes: 10 minutes at the default 30 s, far more than a
# 150k-pod cluster needs on a sound link (300 pages), and a slow link's user raises both at once.
CAPTURE_TIMEOUT_MIN = 600.0
CAPTURE_TIMEOUT_FACTOR = 20
FORMAT_VERSION = 1

Progress = Callable[[str, int], None]


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str  # resource.group, as kubectl names it; the header key
    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool
    required: bool  # without it there is no analysis: 403/404 is an error, not a warning
    # What the answer loses when the resource cannot be read (completes "...: <effect>").
    effect: str = ""
    # The versions whose object shape we read, most stable first: the resource is listed at the
    # first the server serves (discovery.py). Empty: only `version`, no discovery.
    versions: tuple[str, ...] = ()
    # Listed only when discovery says the server serves it (an add-on's API, e.g. Kueue's): a
    # cluster without the add-on gets no warning, one that serves it only at a version we do not
    # read gets one line for the group (discovery.resolve).
    if_served: bool = False

    def path(self, namespace: str | None) -> str:
        root = "/api/v1" if not self.group else f"/apis/{self.group}/{self.version}"
        if self.namespaced and namespace:
            return f"{root}/namespaces/{namespace}/{self.plural}"
        return f"{root}/{self.plural}"

    @property
    def api_version(self) -> str:
        return self.version if not self.group else f"{self.group}/{self.version}"


# PodGroup and CompositePodGroup: v1.37 serves them at v1beta1 / v1alpha3, v1.38 both at v1beta1
# (and v1alpha3 with alpha APIs on); the specs have the same fields at each (discovery.py).
_SCHEDULING_VERSIONS = ("v1", "v1beta1", "v1alpha3")
# DRA objects are read at v1 only (the beta shapes differ); discovery names a beta-only server.
_DRA_VERSIONS = ("v1",)

RESOURCES: tuple[ResourceSpec, ...] = (
    ResourceSpec("nodes", "", "v1", "nodes", "Node", False, True),
    ResourceSpec("pods", "", "v1", "pods", "Pod", True, True),
    ResourceSpec(
        "namespaces", "", "v1", "namespaces", "Namespace", False, False,
        "namespace labels are unknown, so affinity terms with a namespaceSelector may match differently",
    ),
    ResourceSpec(
        "priorityclasses.scheduling.k8s.io", "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass",
        False, False,
        "PriorityClass values are unknown; pods keep their admitted spec.priority, but PodGroups that only "
        "name a priorityClassName (or rely on the global default) may get a different priority",
    ),
    ResourceSpec(
        "poddisruptionbudgets.policy", "policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, False,
        "PDBs are ignored, so victims protected by a PDB may be reported as preemptible",
    ),
    ResourceSpec(
        "podgroups.scheduling.k8s.io", "scheduling.k8s.io", "v1beta1", "podgroups", "PodGroup", True, False,
        "PodGroups are unknown, so gang scheduling and workload-aware preemption are not simulated and "
        "pods are treated one by one",
        _SCHEDULING_VERSIONS,
    ),
    ResourceSpec(
        "compositepodgroups.scheduling.k8s.io", "scheduling.k8s.io", "v1alpha3", "compositepodgroups",
        "CompositePodGroup", True, False,
        "CompositePodGroups are unknown, so groups of PodGroups are neither scheduled nor preempted together",
        _SCHEDULING_VERSIONS,
    ),
    # Dynamic Resource Allocation (issue 15): what the DynamicResources filter reads.
    ResourceSpec(
        "deviceclasses.resource.k8s.io", "resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False, False,
        "DeviceClasses are unknown, so pods with DRA resource claims cannot be allocated devices", _DRA_VERSIONS,
    ),
    ResourceSpec(
        "resourceslices.resource.k8s.io", "resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False, False,
        "ResourceSlices are unknown, so no DRA devices are available to pods with resource claims", _DRA_VERSIONS,
    ),
    ResourceSpec(
        "resourceclaims.resource.k8s.io", "resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True, False,
        "ResourceClaims are unknown, so devices allocated to running pods look free", _DRA_VERSIONS,
    ),
    ResourceSpec(
        "resourceclaimtemplates.resource.k8s.io", "resource.k8s.io", "v1", "resourceclaimtemplates",
        "ResourceClaimTemplate", True, False,
        "ResourceClaimTemplates are unknown, so pending pods whose claims come from a template cannot be allocated devices",
        _DRA_VERSIONS,
    ),
)


# The storage objects the volume filters read (VolumeRestrictions, NodeVolumeLimits, VolumeBinding,
# VolumeZone; framework/volumes.py). PVCs were read only on request before (`snapshot --pvcs`).
PVCS = ResourceSpec(
    "persistentvolumeclaims", "", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, False,
    "PersistentVolumeClaims are unknown, so the volume filters are not applied and pending pods waiting for "
    "unbound claims are not named",
)
STORAGE_RESOURCES: tuple[ResourceSpec, ...] = (
    PVCS,
    ResourceSpec(
        "persistentvolumes", "", "v1", "persistentvolumes", "PersistentVolume", False, False,
        "PersistentVolumes are unknown, so bound volumes' node affinity and zones (VolumeBinding, VolumeZone) "
        "and CSI attach limits (NodeVolumeLimits) are not checked",
    ),
    ResourceSpec(
        "storageclasses.storage.k8s.io", "storage.k8s.io", "v1", "storageclasses", "StorageClass", False, False,
        "StorageClasses are unknown, so unbound claims' binding mode (VolumeBinding, VolumeZone) is not checked",
    ),
    ResourceSpec(
        "csinodes.storage.k8s.io", "storage.k8s.io", "v1", "csinodes", "CSINode", False, False,
        "CSINodes are unknown, so CSI attach limits (NodeVolumeLimits) are not checked",
    ),
)
# What the API server's admission gives a new pod (podadmission.py): a hypothetical pod gets its
# namespace's LimitRange defaults and its RuntimeClass's overhead and scheduling constraints.
ADMISSION_RESOURCES: tuple[ResourceSpec, ...] = (
    ResourceSpec(
        "runtimeclasses.node.k8s.io", "node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", False, False,
        "RuntimeClasses are unknown, so a hypothetical pod's runtimeClassName adds no overhead or scheduling constraints",
    ),
    ResourceSpec(
        "limitranges", "", "v1", "limitranges", "LimitRange", True, False,
        "LimitRanges are unknown, so hypothetical pods get no namespace resource defaults",
    ),
)
RESOURCES = RESOURCES + STORAGE_RESOURCES + ADMISSION_RESOURCES

# Kueue (issue 35): read when the kueue.x-k8s.io API is served, at v1beta2, the storage version of
# Kueue v0.17.0 (queueing/kueue/objects.py reads that shape; v1beta1 has other fields, e.g. a
# ClusterQueue's cohort). What admission needs: quotas, queues, Workloads with their admission and
# conditions, priorities; Topologies by name; AdmissionChecks by name, controller and Active state.
_KUEUE = "kueue.x-k8s.io"
_KUEUE_EFFECT = "Kueue's admission stage cannot be answered (whatif -f on this cluster refuses it; --no-kueue leaves it out)"
KUEUE_RESOURCES: tuple[ResourceSpec, ...] = tuple(
    ResourceSpec(f"{plural}.{_KUEUE}", _KUEUE, "v1beta2", plural, kind, namespaced, False,
                 f"{kind}s are unknown, so {_KUEUE_EFFECT}", ("v1beta2",), if_served=True)
    for plural, kind, namespaced in (
        ("resourceflavors", "ResourceFlavor", False), ("clusterqueues", "ClusterQueue", False),
        ("cohorts", "Cohort", False), ("localqueues", "LocalQueue", True), ("workloads", "Workload", True),
        ("workloadpriorityclasses", "WorkloadPriorityClass", False), ("topologies", "Topology", False),
        ("admissionchecks", "AdmissionCheck", False),
    )
)

# Read only on request (`snapshot --events`, `why-preempted` live): preemption events name the preemptor.
EVENTS = ResourceSpec("events", "", "v1", "events", "Event", True, False, "preemption events are not available")


class _Gone(Exception):
    """410 Gone during pagination: the continue token expired; restart the list."""


def new_header(server_url: str = "", server_version: str = "") -> dict[str, Any]:
    return {
        "formatVersion": FORMAT_VERSION,
        "capturedAt": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "server": {"url": server_url, "version": server_version},
        "listed": [],
        "notServed": [],
        "forbidden": [],
        "resourceVersions": {},
        "counts": {},
        "warnings": [],
    }


def capture_timeout_for(request_timeout: float | None) -> float | None:
    """The whole capture's deadline in seconds for a --request-timeout (see CAPTURE_TIMEOUT_MIN);
    None for no request timeout (kubectl's "0": the user asked to wait as long as it takes)."""
    if request_timeout is None:
        return None
    return max(CAPTURE_TIMEOUT_MIN, CAPTURE_TIMEOUT_FACTOR * request_timeout)


def load_live(
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float = 30.0,
    progress: Progress | None = None,
    events: bool = False,
    pvcs: bool = False,
    overrides: Any = None,
    capture_timeout: float | None = None,
    sink: Any = None,
) -> tuple[dict, list[dict]]:
    """List the cluster (GET only) and return (snapshot header, stripped raw items); with `sink`
    (a capture.StreamSink) the items go there page by page instead and the list is empty.

    `namespace` None lists namespaced resources in all namespaces; otherwise pods, PDBs, PodGroups
    and CompositePodGroups come from that namespace only (header["namespace"] records it) while
    nodes, namespaces and PriorityClasses are always cluster-wide. Header "listed" names the
    resources actually read; the others are in "notServed" or "forbidden" with a warning each.
    `overrides` are kubectl's global connection flags (kubeconfig.Overrides). Every request ends
    by `capture_timeout` seconds from the first (default :func:`capture_timeout_for`
    --request-timeout; none when --request-timeout is 0, kubectl's "wait forever"), else a one-line
    error names what was being read.
    """
    client = connect(kubeconfig, context, request_timeout, overrides)
    total = capture_timeout if capture_timeout is not None else capture_timeout_for(client.timeout)
    client.deadline = time.monotonic() + total if total is not None else None
    try:
        header, items = read_cluster(client, namespace, progress, sink)
        if events and sink is not None:
            sink.keep_preempted = True  # as below, page by page
            _list_resource(client, EVENTS, namespace, sink, header, progress, total or 0.0)
        elif events:
            start = len(items)
            _list_resource(client, EVENTS, namespace, _ListSink(items), header, progress, total or 0.0)
            # Only preemption events matter; the rest are noise (and may say more than we want to keep).
            items[start:] = [e for e in items[start:] if e.get("reason") == "Preempted"]
        # `pvcs` (snapshot --pvcs) is kept for compatibility: PVCs are always read now (RESOURCES).
        return header, items
    finally:
        client.close()


def read_cluster(
    client: ReadOnlyClient, namespace: str | None, progress: Progress | None = None, sink: Any = None
) -> tuple[dict, list[dict]]:
    """The body of :func:`load_live` for an already-connected client. With `sink` (a
    capture.StreamSink) each page goes there as it arrives and the list returned is empty."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    total = 0.0 if client.deadline is None else client.deadline - time.monotonic()
    try:
        try:
            header = new_header(client.server_url, _server_version(client))
            specs, warnings = resolve(RESOURCES + KUEUE_RESOURCES, client.get)
        except CaptureTimeout:
            raise CaptureTimeout(_capture_message(total, "reading the server's version and API discovery")) from None
        if namespace:
            header["namespace"] = namespace
        items: list[dict] = []
        header["warnings"].extend(warnings)
        into = sink if sink is not None else _ListSink(items)
        for spec in specs:
            _list_resource(client, spec, namespace, into, header, progress, total)
            if spec.name in header["listed"] and spec.versions:
                # the version each discovered resource was read at (discovery.py)
                header.setdefault("apiVersions", {})[spec.name] = spec.api_version
        return header, items
    finally:
        if gc_was_enabled:
            gc.enable()


def _server_version(client: ReadOnlyClient) -> str:
    # /version is informational: any failure other than bad credentials or an unreachable server
    # (both raised by client.get) leaves it empty.
    resp = client.get("/version")
    if resp.status != 200:
        return ""
    try:
        return str(resp.json().get("gitVersion", ""))
    except (ValueError, AttributeError):
        return ""


def _scope(spec: ResourceSpec, namespace: str | None) -> str:
    return f"in namespace {namespace!r}" if spec.namespaced and namespace else "at the cluster scope"


def _capture_message(total: float, doing: str) -> str:
    return (f"the live capture did not finish within {total:.0f}s: it was still {doing}; the API server or the "
            f"link is too slow for this cluster: raise --request-timeout (a capture may take "
            f"{CAPTURE_TIMEOUT_FACTOR} times it, and at least {CAPTURE_TIMEOUT_MIN:.0f}s)")


class _ListSink:
    """Where _paginate puts each page's objects for load_live: stripped dicts, in a list. (The
    snapshot command's capture.StreamSink writes them as they arrive instead.)"""

    def __init__(self, items: list[dict]) -> None:
        self.items = items
        self.read = 0  # items read of the current resource
        self._start = len(items)
        self._templates: Any = None

    def begin(self) -> None:
        self._start, self.read = len(self.items), 0
        self._templates = _lean.PageTemplates() if _lean is not None else None

    def restart(self) -> None:
        del self.items[self._start:]  # a restarted list must not leave the partial first attempt behind
        self.read = 0

    def page(self, api_version: str, kind: str, items: list[Any], structs: bool) -> None:
        if structs:
            items = _lean.as_dicts(items, kind, self._templates)
        append = self.items.append
        for raw in items:
            if not isinstance(raw, dict):
                raise NotAnObject()
            raw["apiVersion"] = api_version
            raw["kind"] = kind
            append(strip_object(raw))
        self.read += len(items)


def _list_resource(
    client: ReadOnlyClient,
    spec: ResourceSpec,
    namespace: str | None,
    sink: Any,
    header: dict,
    progress: Progress | None,
    total: float = 0.0,
) -> None:
    sink.begin()
    for _attempt in range(MAX_RESTARTS + 1):
        try:
            outcome = _paginate(client, spec, namespace, sink, header, progress)
        except _Gone:
            sink.restart()
            continue
        except CaptureTimeout:
            raise CaptureTimeout(_capture_message(
                total, f"listing {spec.name} {_scope(spec, namespace)} ({sink.read:,} read)")) from None
        if outcome is None:
            return  # not served / forbidden, already recorded
        header["listed"].append(spec.name)
        header["resourceVersions"][spec.name] = outcome
        header["counts"][spec.name] = sink.read
        return
    raise ClusterAccessError(
        f"listing {spec.name} {_scope(spec, namespace)} was restarted {MAX_RESTARTS} times after "
        f"410 Gone (the cluster changes faster than we can page); try again or use a smaller scope"
    )


def _paginate(
    client: ReadOnlyClient,
    spec: ResourceSpec,
    namespace: str | None,
    sink: Any,
    header: dict,
    progress: Progress | None,
) -> str | None:
    """Hand every object of one resource to `sink`, page by page; return the list's resourceVersion.

    Returns None when the resource is not served or forbidden (recorded in the header). A list of
    more than one page is read by two threads: this one fetches each page (every request stays in
    the main thread, under its deadline: timeouts.py) as soon as the one before names its
    continue token, another decodes and hands on the page before (pages.py), so the wait for the
    server and the TLS read overlap the decoding. Pages reach the sink in order; an error is the
    one the sequential reader meets first (an earlier page's before a later request's).
    """
    path = spec.path(namespace)
    token = ""
    resource_version = ""
    seen_tokens: set[bytes] = set()
    pages = Pages(client, spec, path, sink, progress)
    try:
        for _page in range(MAX_PAGES):
            pages.check()
            query = [("limit", str(PAGE_LIMIT))]
            if token:
                query.append(("continue", token))
            resp = client.get(path, query)
            if resp.status == 410:
                raise _Gone()
            if resp.status != 200:
                if not token:
                    return _unavailable(spec, namespace, resp, header)
                raise ClusterAccessError(
                    f"listing {spec.name} {_scope(spec, namespace)} failed mid-way: "
                    f"{resp.status} {resp.server_message()}"
                )
            head = _lean.decode_head(resp.body) if _lean is not None and token else None
            if head is None:  # the first page (most lists have one), or not an object msgspec reads
                pages.drain()
                meta = pages.take(resp.body)
            else:
                kind, meta, items = head
                check_list({"kind": kind, "items": items}, spec, client.server_url, path)
                pages.put(resp.body, meta)
            del resp  # drop the page's bytes before stripping: halves peak memory per page
            meta = meta if isinstance(meta, dict) else {}
            resource_version = resource_version or str(meta.get("resourceVersion") or "")
            token = str(meta.get("continue") or "")
            if not token:
                pages.drain()
                return resource_version
            if len(token) > MAX_CONTINUE_BYTES:
                raise ClusterAccessError(
                    f"the API server at {client.server_url} sent a continue token of {len(token):,} bytes while listing "
                    f"{spec.name} (more than {MAX_CONTINUE_BYTES:,}); refusing to send it back"
                )
            digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
            if digest in seen_tokens:
                raise ClusterAccessError(
                    f"the API server at {client.server_url} sent the same continue token twice while listing {spec.name} "
                    f"(page {_page + 1}); it would loop forever"
                )
            seen_tokens.add(digest)
        raise ClusterAccessError(
            f"listing {spec.name} {_scope(spec, namespace)} took more than {MAX_PAGES:,} pages of {PAGE_LIMIT}; giving up"
        )
    except BaseException:
        pages.drain()  # an earlier page's error comes first, as the sequential reader meets it
        raise
    finally:
        pages.stop()


def _unavailable(spec: ResourceSpec, namespace: str | None, resp: Response, header: dict) -> None:
    msg = resp.server_message()
    where = _scope(spec, namespace)
    if resp.status == 403:
        if spec.required:
            raise ClusterAccessError(
                f"cannot list {spec.name} {where}: forbidden ({msg}); kubectl-wap needs get/list on "
                f"nodes and pods (see deploy/rbac-readonly.yaml)"
            )
        header["forbidden"].append(spec.name)
        header["warnings"].append(f"forbidden to list {spec.name}: {spec.effect}")
        return None
    if resp.status == 404:
        if spec.required:
            raise ClusterAccessError(f"the API server does not serve {spec.name} (404 on GET {spec.path(namespace)})")
        header["notServed"].append(spec.name)
        header["warnings"].append(
            f"{spec.name} ({spec.api_version}) is not served by this cluster: {spec.effect}"
        )
        return None
    raise ClusterAccessError(f"cannot list {spec.name} {where}: {resp.status} {msg}")
