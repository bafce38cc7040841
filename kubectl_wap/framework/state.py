"""Cluster state for simulation: upstream's scheduler snapshot + NodeInfo + assume/forget.

Requested resources live in a (nodes x resources) integer matrix beside the allocatable matrix so
that resource fit and resource scores are vector operations over all nodes. Every mutation goes
through `add_pod` / `remove_pod`, which append to an undo log; `checkpoint()` / `rollback()` make
each simulation step cheap and exact without copying the cluster.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any, Callable, Iterable, Iterator, TypeVar

import numpy as np

from ..model import HostPort, Node, Pod
from .volumes import EMPTY as EMPTY_VOLUMES, VolumeIndex

CPU, MEMORY, PODS = "cpu", "memory", "pods"
_TOKENS = itertools.count(1)
_CONTENTS = itertools.count(1)  # node content tokens (ClusterState.node_tokens), unique in the process
T = TypeVar("T")
_EMPTY = np.zeros(0, dtype=np.intp)
_MAX_TOUCHED = 1 << 20


class ClusterState:
    def __init__(self, nodes: Iterable[Node], pods: Iterable[Pod], namespace_labels: dict[str, dict] | None = None):
        # Stable node order: by name. It is the order filters run in and the final score tie-break
        # (smallest name wins), our deterministic stand-in for upstream's random choices.
        self.nodes: list[Node] = sorted(nodes, key=lambda n: n.name)
        self.node_index: dict[str, int] = {n.name: i for i, n in enumerate(self.nodes)}
        self.namespace_labels: dict[str, dict] = namespace_labels or {}
        pods = list(pods)
        names: dict[str, None] = {CPU: None, MEMORY: None}
        for n in self.nodes:
            for r in n.allocatable:
                if r != PODS:
                    names.setdefault(r, None)
        for p in pods:
            for r in p.requests:
                names.setdefault(r, None)
        self.resources: list[str] = list(names)
        self.res_index: dict[str, int] = {r: i for i, r in enumerate(self.resources)}
        n = len(self.nodes)
        self.alloc = np.zeros((n, len(self.resources)), dtype=np.int64)
        for i, node in enumerate(self.nodes):
            for r, v in node.allocatable.items():
                if r != PODS:
                    self.alloc[i, self.res_index[r]] = v
        self.alloc_pods = np.array([node.allocatable.get(PODS, 0) for node in self.nodes], dtype=np.int64)
        self.requested = np.zeros_like(self.alloc)
        self.nonzero = np.zeros((n, 2), dtype=np.int64)  # NonZeroRequested (cpu, memory)
        self.pod_count = np.zeros(n, dtype=np.int64)
        self.node_pods: list[dict[str, Pod]] = [{} for _ in range(n)]
        self.ports: list[Counter[HostPort]] = [Counter() for _ in range(n)]
        self.where: dict[str, int] = {}  # pod uid -> node index
        self._pairs: dict[int, list[Any]] = {}  # id(requests) -> [requests, pairs, arrays | None]
        self._tids: dict[int, tuple[int, tuple[int, int]]] = {}  # id(requests) -> (row, non-zero)
        self._tids_full: dict[tuple[int, int, int], int] = {}  # (id(requests), non-zero) -> row
        self._templates: list[tuple[Any, list[tuple[int, int]], tuple[int, int]]] = []
        self._tmatrix: np.ndarray | None = None
        self._label_index: dict[tuple[str, str], np.ndarray] | None = None
        # Undo log: (True, pod, node) add, (False, pod, node) remove, (None, saved state, -1) bulk removal.
        self._log: list[tuple[Any, Any, int]] = []
        self.version = 0  # bumped on every mutation; caches key on it
        # The change feed of framework/nodecache.py: the node of every single-pod change, in
        # order, and an epoch that moves on every change that may touch any node (bulk add and
        # remove, a bulk rollback). A new resource column changes no existing column.
        self.touched: list[int] = []
        self.epoch = 0
        # A token per node naming its pods (and their order): a new one on every change to the
        # node, the saved ones back on a bulk rollback (the same content again). `per_node`
        # caches per-node values on them, across analyses of the same state (simulate's cycles).
        self.node_tokens: list[int] = [next(_CONTENTS) for _ in range(n)]
        self._per_node: dict[str, tuple[list[int], list[Any]]] = {}
        self._asked: set[str] = set()
        self._kept: dict[str, Any] = {}
        self.token = next(_TOKENS)  # unique per state for the life of the process (cache keys)
        # Pods with required anti-affinity terms matter to every incoming pod (InterPodAffinity's
        # "existing pods' anti-affinity"); tracked so the plugin can be skipped when there are none.
        self.anti_affinity_pods: dict[str, int] = {}
        # Pods with any pod (anti-)affinity term: they score every incoming pod (InterPodAffinity
        # reads this instead of scanning all pods).
        self.affinity_pods: dict[str, int] = {}
        self.affinity_version = 0  # bumped whenever affinity_pods changes (score caches key on it)
        self.ignored_pods: list[Pod] = []
        # DRA objects indexed for the DynamicResources filter (plugins/dynamicresources.attach,
        # called by buildstate.build_state); None when the snapshot has none.
        self.dra: Any = None
        self.volumes: VolumeIndex = EMPTY_VOLUMES  # the storage objects (build_state sets them)
        self._bulk_add(pods)

    def _bulk_add(self, pods: list[Pod]) -> None:
        """Initial placement of every bound pod (no undo record: it is the baseline). Written as
        comprehensions: this runs over every pod of the cluster once per analysis."""
        placed = [p for p in pods if p.node_name and p.phase not in ("Succeeded", "Failed")]  # Pod.scheduled
        get = self.node_index.get
        nodes = [get(p.node_name) for p in placed]
        if None in nodes:  # bound to a node the snapshot does not have
            self.ignored_pods.extend(p for p, i in zip(placed, nodes) if i is None)
            placed = [p for p, i in zip(placed, nodes) if i is not None]
            nodes = [i for i in nodes if i is not None]
        self._place(placed, nodes)

    def _place(self, pods: list[Pod], nodes: list[int]) -> None:
        """Add pods on the given nodes without undo records: the maps per pod (the rare pods with
        host ports or pod affinity through _book), the sums through _add_sums."""
        node_pods, where = self.node_pods, self.where
        tget = self._tids.get
        tids: list[int] = []
        for p, idx in zip(pods, nodes):
            hit = tget(id(p.requests))
            tids.append(hit[0] if hit is not None and hit[1] == p.nonzero_requests else self._template_id(p))
            if p.host_ports or p.affinity is not None:
                self._book(p, idx, +1)
            else:
                node_pods[idx][p.uid] = p
                where[p.uid] = idx
        self._renew(nodes)
        self._add_sums(nodes, tids, +1)

    # ---- resource vectors -------------------------------------------------------------------
    def request_vector(self, pod: Pod) -> tuple[np.ndarray, np.ndarray]:
        """(column indices, amounts) of the pod's requests as arrays; unknown resources get a new
        column. Derived from, and cached beside, _pairs_of."""
        self._pairs_of(pod)
        entry = self._pairs[id(pod.requests)]
        if entry[2] is None:
            pairs = entry[1]
            entry[2] = (np.array([c for c, _ in pairs], dtype=np.intp), np.array([a for _, a in pairs], dtype=np.int64))
        return entry[2]

    def dense_request(self, pod: Pod) -> np.ndarray:
        cols, amts = self.request_vector(pod)
        out = np.zeros(len(self.resources), dtype=np.int64)
        out[cols] = amts
        return out

    def _add_resource(self, r: str) -> None:
        self.res_index[r] = len(self.resources)
        self.resources.append(r)
        n = len(self.nodes)
        self.alloc = np.hstack([self.alloc, np.zeros((n, 1), dtype=np.int64)])
        self.requested = np.hstack([self.requested, np.zeros((n, 1), dtype=np.int64)])
        self.version += 1  # vectors sized by the old column count are stale

    # ---- mutations --------------------------------------------------------------------------
    def _pairs_of(self, pod: Pod) -> list[tuple[int, int]]:
        """(column, amount) per requested resource, as plain ints (cheap scalar updates). Pods of
        one template share their requests mapping, so the pairs are cached per mapping (the
        entry holds the mapping, so its id cannot be reused while cached)."""
        req = pod.requests
        hit = self._pairs.get(id(req))
        if hit is not None and hit[0] is req:
            return hit[1]
        ri = self.res_index
        for r in req:
            if r not in ri:
                self._add_resource(r)
        pairs = [(ri[r], v) for r, v in req.items()]
        self._pairs[id(req)] = [req, pairs, None]  # [mapping, pairs, arrays (request_vector)]
        return pairs

    def _apply(self, pod: Pod, idx: int, sign: int) -> None:
        # Per-element updates: cheaper than fancy indexing for the handful of resources a pod
        # requests. Pairs first: a resource no pod or node had yet adds a column (a new array).
        pairs = self._pairs_of(pod)
        row = self.requested[idx]
        for c, a in pairs:
            row[c] += sign * a
        nz = self.nonzero[idx]
        nz[0] += sign * pod.nonzero_requests[0]
        nz[1] += sign * pod.nonzero_requests[1]
        self.pod_count[idx] += sign
        self._book(pod, idx, sign)
        self.node_tokens[idx] = next(_CONTENTS)
        self.version += 1
        touched = self.touched
        touched.append(idx)
        if len(touched) > _MAX_TOUCHED:  # a long simulation: start the feed over
            touched.clear()
            self.epoch += 1

    def _book(self, pod: Pod, idx: int, sign: int) -> None:
        """Everything but the resource sums: pod maps, host ports, affinity indexes."""
        a = pod.affinity
        if sign > 0:
            self.node_pods[idx][pod.uid] = pod
            self.where[pod.uid] = idx
            for hp in pod.host_ports:
                self.ports[idx][hp] += 1
            if a is not None:
                if a.pod_anti_affinity_required:
                    self.anti_affinity_pods[pod.uid] = idx
                if a.pod_affinity_required or a.pod_anti_affinity_required or a.pod_affinity_preferred or a.pod_anti_affinity_preferred:
                    self.affinity_pods[pod.uid] = idx
                    self.affinity_version += 1
        else:
            del self.node_pods[idx][pod.uid]
            del self.where[pod.uid]
            for hp in pod.host_ports:
                self.ports[idx][hp] -= 1
                if self.ports[idx][hp] <= 0:
                    del self.ports[idx][hp]
            if a is not None:
                self.anti_affinity_pods.pop(pod.uid, None)
                if self.affinity_pods.pop(pod.uid, None) is not None:
                    self.affinity_version += 1

    def add_pod(self, pod: Pod, node_idx: int) -> None:
        """Assume `pod` on a node (upstream: snapshot AddPod / AssumePod)."""
        if pod.uid in self.where:
            raise ValueError(f"pod {pod.key} is already on node {self.nodes[self.where[pod.uid]].name}")
        self._apply(pod, node_idx, +1)
        self._log.append((True, pod, node_idx))

    def remove_pod(self, pod: Pod) -> int:
        """Remove a pod from its node; returns the node index (upstream: snapshot RemovePod)."""
        idx = self.where[pod.uid]
        self._apply(pod, idx, -1)
        self._log.append((False, pod, idx))
        return idx

    def remove_pods(self, pods: list[Pod], keep: list[Pod] | None = None) -> dict[str, int]:
        """Remove many pods at once (preemption's "remove every potential victim").

        The undo record keeps the state as it was, so rolling it back swaps the old maps and
        arrays back in instead of replaying pod by pod. `keep`, when given, must be exactly the
        other pods in the state; when they are fewer than the removed ones (a high-priority
        preemptor: most of the cluster is a potential victim), the maps are rebuilt from them
        instead of copied and pruned. Returns where every pod was before (pod uid -> node index;
        the saved map itself: read it, never change it)."""
        arrays = (self.requested, self.nonzero, self.pod_count)
        if keep is not None and len(keep) < len(pods) and len(keep) + len(pods) == len(self.where):
            saved = (self.where, self.node_pods, self.ports, self.anti_affinity_pods, self.affinity_pods) + arrays + (self.node_tokens,)
            where = self.where
            nodes = [where[p.uid] for p in keep]
            self.where, self.node_pods = {}, [{} for _ in self.nodes]
            self.node_tokens = [next(_CONTENTS) for _ in self.nodes]  # every map is a new one
            self.ports = [Counter() for _ in self.nodes]
            self.anti_affinity_pods, self.affinity_pods = {}, {}
            self.affinity_version += 1
            self.requested = np.zeros_like(self.requested)
            self.nonzero = np.zeros_like(self.nonzero)
            self.pod_count = np.zeros_like(self.pod_count)
            self._place(keep, nodes)
        else:
            saved = (
                self.where.copy(), [d.copy() for d in self.node_pods], self.ports, self.anti_affinity_pods.copy(),
                self.affinity_pods.copy(), *(a.copy() for a in arrays), list(self.node_tokens),
            )
            self.ports = [c.copy() if c else c for c in self.ports]
            self._bulk_remove(pods)
        self._log.append((None, saved, -1))
        return saved[0]

    def _bulk_remove(self, pods: list[Pod]) -> None:
        """Remove many pods: the pod maps per pod in Python (the rare pods with host ports or pod
        affinity through _book), the resource sums through _add_sums."""
        node_pods, where = self.node_pods, self.where
        tget = self._tids.get
        nodes: list[int] = []
        tids: list[int] = []
        for pod in pods:
            uid = pod.uid
            idx = where[uid]
            nodes.append(idx)
            hit = tget(id(pod.requests))
            tids.append(hit[0] if hit is not None and hit[1] == pod.nonzero_requests else self._template_id(pod))
            if pod.host_ports or pod.affinity is not None:
                self._book(pod, idx, -1)
            else:
                del node_pods[idx][uid]
                del where[uid]
        self._renew(nodes)
        self._add_sums(nodes, tids, -1)

    def _renew(self, nodes: list[int]) -> None:
        tokens = self.node_tokens
        for idx in set(nodes):
            tokens[idx] = next(_CONTENTS)

    def _add_sums(self, nodes: list[int], tids: list[int], sign: int) -> None:
        """requested / non-zero / pod-count sums of pods given as (node, template row) pairs:
        one vectorized scatter-add."""
        if tids:
            rows = self._template_matrix()[np.array(tids, dtype=np.intp)]
            acc = np.zeros((len(self.nodes), rows.shape[1]), dtype=np.int64)
            np.add.at(acc, np.array(nodes, dtype=np.intp), rows)
            r = len(self.resources)
            if sign < 0:
                acc = -acc
            self.requested += acc[:, :r]
            self.nonzero += acc[:, r:r + 2]
            self.pod_count += acc[:, r + 2]
        self.version += 1
        self.epoch += 1

    def _template_id(self, pod: Pod) -> int:
        """Row of the pod's (requests, non-zero requests) in the template table. Pods of one
        template share their requests mapping (the converter caches it), so the table has one
        row per distinct template and the per-pod cost is one dict lookup by the mapping's id
        (_place, _bulk_remove); a mapping shared by pods with different non-zero requests falls
        back here."""
        nz = pod.nonzero_requests
        key = (id(pod.requests), nz[0], nz[1])
        t = self._tids_full.get(key)
        if t is None:
            pairs = self._pairs_of(pod)  # also adds unknown resource columns
            t = self._tids_full[key] = len(self._templates)
            self._templates.append((pod.requests, pairs, nz))  # holds the mapping: its id stays unique
            self._tmatrix = None
            self._tids.setdefault(id(pod.requests), (t, nz))
        return t

    def _template_matrix(self) -> np.ndarray:
        """(templates x (resources + 3)): requested amounts, non-zero cpu/memory, pod count 1."""
        r = len(self.resources)
        m = self._tmatrix
        if m is None or m.shape != (len(self._templates), r + 3):
            m = np.zeros((len(self._templates), r + 3), dtype=np.int64)
            for i, (_, pairs, nz) in enumerate(self._templates):
                for c, a in pairs:
                    m[i, c] = a
                m[i, r], m[i, r + 1], m[i, r + 2] = nz[0], nz[1], 1
            self._tmatrix = m
        return m

    def checkpoint(self) -> int:
        return len(self._log)

    def rollback(self, cp: int) -> None:
        while len(self._log) > cp:
            added, pod, idx = self._log.pop()
            if added is None:
                # A bulk removal: every later record has been undone already (LIFO), so the
                # saved state is exactly the state to return to. Versions move forward, never
                # back: caches keyed on them must not mistake the restored state for a later one.
                (self.where, self.node_pods, self.ports, self.anti_affinity_pods, self.affinity_pods,
                 self.requested, self.nonzero, self.pod_count, self.node_tokens) = pod
                missing = len(self.resources) - self.requested.shape[1]
                if missing:  # a resource column was added after the removal
                    self.requested = np.hstack([self.requested, np.zeros((len(self.nodes), missing), dtype=np.int64)])
                self.version += 1
                self.epoch += 1
                self.affinity_version += 1
            else:
                self._apply(pod, idx, -1 if added else +1)

    # ---- queries ----------------------------------------------------------------------------
    def has(self, pod: Pod) -> bool:
        return pod.uid in self.where

    def pods_on(self, idx: int) -> Iterator[Pod]:
        return iter(self.node_pods[idx].values())

    def per_node(self, name: str, compute: Callable[[list[Pod]], T]) -> list[T]:
        """compute(pods of node i, in node order) for every node i, kept under `name` and
        recomputed only for the nodes whose content token moved since the last call. `compute`
        must depend on nothing but the pods it is given. The list returned is the cache's own,
        refreshed in place by the next call: read it before changing the state."""
        tokens = self.node_tokens
        entry = self._per_node.get(name)
        if entry is None:
            values = [compute(list(d.values())) for d in self.node_pods]
            self._per_node[name] = (list(tokens), values)
            return values
        seen, values = entry
        if seen != tokens:
            node_pods = self.node_pods
            for i in [i for i, (a, b) in enumerate(zip(seen, tokens)) if a != b]:
                values[i] = compute(list(node_pods[i].values()))
            seen[:] = tokens
        return values

    def kept(self, name: str, factory: Callable[[], T]) -> T:
        """The object kept with this state under `name` (made by `factory` the first time): for what
        a `per_node` computation must share with its callers and that must live exactly as long as
        the cached values do (a process-wide table would hold every state's pods for ever)."""
        obj = self._kept.get(name)
        if obj is None:
            obj = self._kept[name] = factory()
        return obj

    def asked_before(self, name: str) -> bool:
        """Whether `name` was asked for on this state before (this call is recorded): values whose
        first computation costs what one pass without them costs pay only from the second call."""
        if name in self._asked:
            return True
        self._asked.add(name)
        return False

    def all_pods(self) -> Iterator[tuple[int, Pod]]:
        for idx, pods in enumerate(self.node_pods):
            for p in pods.values():
                yield idx, p

    def nodes_with_label(self, key: str, value: str) -> np.ndarray:
        """Indices of nodes whose label `key` equals `value` (built once; nodes never change)."""
        idx = self._label_index
        if idx is None:
            built: dict[tuple[str, str], list[int]] = {}
            for i, node in enumerate(self.nodes):
                for kv in node.labels.items():
                    built.setdefault(kv, []).append(i)
            idx = {kv: np.array(v, dtype=np.intp) for kv, v in built.items()}
            self._label_index = idx
        return idx.get((key, value), _EMPTY)

