"""Cluster state for simulation: upstream's scheduler snapshot + NodeInfo + assume/forget.

Requested resources live in a (nodes x resources) integer matrix beside the allocatable matrix so
that resource fit and resource scores are vector operations over all nodes. Every mutation goes
through `add_pod` / `remove_pod`, which append to an undo log; `checkpoint()` / `rollback()` make
each simulation step cheap and exact without copying the cluster.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any, Iterable, Iterator

import numpy as np

from ..model import HostPort, Node, Pod, Snapshot

CPU, MEMORY, PODS = "cpu", "memory", "pods"
_TOKENS = itertools.count(1)
_EMPTY = np.zeros(0, dtype=np.intp)


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
        self._label_index: dict[tuple[str, str], np.ndarray] | None = None
        # Undo log: (True, pod, node) add, (False, pod, node) remove, (None, [(pod, node)], sign) bulk.
        self._log: list[tuple[Any, Any, int]] = []
        self.version = 0  # bumped on every mutation; caches key on it
        self.token = next(_TOKENS)  # unique per state for the life of the process (cache keys)
        # Pods with required anti-affinity terms matter to every incoming pod (InterPodAffinity's
        # "existing pods' anti-affinity"); tracked so the plugin can be skipped when there are none.
        self.anti_affinity_pods: dict[str, int] = {}
        # Pods with any pod (anti-)affinity term: they score every incoming pod (InterPodAffinity
        # reads this instead of scanning all pods).
        self.affinity_pods: dict[str, int] = {}
        self.affinity_version = 0  # bumped whenever affinity_pods changes (score caches key on it)
        self.ignored_pods: list[Pod] = []
        self._bulk_add(pods)

    def _bulk_add(self, pods: list[Pod]) -> None:
        """Initial placement of every bound pod (no undo record: it is the baseline)."""
        placed: list[tuple[Pod, int]] = []
        for p in pods:
            if not p.scheduled:
                continue
            idx = self.node_index.get(p.node_name)
            if idx is None:
                self.ignored_pods.append(p)
                continue
            placed.append((p, idx))
        self._bulk(placed, +1)

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
        # requests.
        row = self.requested[idx]
        for c, a in self._pairs_of(pod):
            row[c] += sign * a
        nz = self.nonzero[idx]
        nz[0] += sign * pod.nonzero_requests[0]
        nz[1] += sign * pod.nonzero_requests[1]
        self.pod_count[idx] += sign
        self._book(pod, idx, sign)
        self.version += 1

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

    def remove_pods(self, pods: list[Pod]) -> None:
        """Remove many pods at once (preemption's "remove every potential victim"): per-pod
        bookkeeping in Python, resource sums as one scatter-subtract, one undo record."""
        placed = [(p, self.where[p.uid]) for p in pods]
        self._bulk(placed, -1)
        self._log.append((None, placed, -1))

    def _bulk(self, placed: list[tuple[Pod, int]], sign: int) -> None:
        rows: list[int] = []
        cols: list[int] = []
        amts: list[int] = []
        nz_cpu = [0] * len(self.nodes)
        nz_mem = [0] * len(self.nodes)
        count = [0] * len(self.nodes)
        for pod, idx in placed:
            for c, a in self._pairs_of(pod):
                rows.append(idx)
                cols.append(c)
                amts.append(a)
            nz_cpu[idx] += pod.nonzero_requests[0]
            nz_mem[idx] += pod.nonzero_requests[1]
            count[idx] += 1
            self._book(pod, idx, sign)
        if rows:
            np.add.at(self.requested, (np.array(rows, dtype=np.intp), np.array(cols, dtype=np.intp)), sign * np.array(amts, dtype=np.int64))
        self.nonzero[:, 0] += sign * np.array(nz_cpu, dtype=np.int64)
        self.nonzero[:, 1] += sign * np.array(nz_mem, dtype=np.int64)
        self.pod_count += sign * np.array(count, dtype=np.int64)
        self.version += 1

    def checkpoint(self) -> int:
        return len(self._log)

    def rollback(self, cp: int) -> None:
        while len(self._log) > cp:
            added, pod, idx = self._log.pop()
            if added is None:
                self._bulk(pod, -idx)  # a bulk record: pod holds the (pod, node) list, idx the sign
            else:
                self._apply(pod, idx, -1 if added else +1)

    # ---- queries ----------------------------------------------------------------------------
    def has(self, pod: Pod) -> bool:
        return pod.uid in self.where

    def pods_on(self, idx: int) -> Iterator[Pod]:
        return iter(self.node_pods[idx].values())

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


def build_state(snap: Snapshot) -> ClusterState:
    return ClusterState(snap.nodes, snap.pods, {ns.name: dict(ns.labels) for ns in snap.namespaces})
