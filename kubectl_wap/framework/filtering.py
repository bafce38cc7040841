"""The Filter phase over all nodes at once.

Plugin order is the default profile's (default_plugins.go): NodeUnschedulable, NodeName,
TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, PodTopologySpread, InterPodAffinity.
Like upstream's RunFilterPlugins, a node's status is the first failing plugin's status.

Node-local verdicts that depend only on the pod's shape (taints, selectors, cordon) are computed
once per *pod signature* and cached; resource fit is a vector operation over all nodes; the
cross-node plugins run per node only for pods that need them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import Node, Pod, Taint
from .nodecache import over_all_nodes
from .plugins.selectors import node_matches_pod_node_affinity, tolerates_taint
from .registry import cross_node_plugins
from .state import ClusterState
from .status import OK, SKIP, SUCCESS, UNRESOLVABLE, Status, unresolvable, unschedulable

# Reason strings exactly as upstream prints them.
ERR_UNSCHEDULABLE = "node(s) were unschedulable"  # nodeunschedulable.ErrReasonUnschedulable
ERR_TAINT = "node(s) had untolerated taint(s)"  # tainttoleration Filter (v1.37.2, v1.38.0-beta.0)
ERR_NODE_NAME = "node(s) didn't match the requested node name"  # nodename.ErrReason
ERR_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"  # nodeaffinity.ErrReasonPod
ERR_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"  # nodeports.ErrReason
TOO_MANY_PODS = "Too many pods"

UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


def _static_status(pod: Pod, node: Node) -> Status:
    # NodeUnschedulable.Filter: a cordoned node passes only if the pod tolerates the
    # node.kubernetes.io/unschedulable:NoSchedule taint.
    if node.unschedulable and not tolerates_taint(pod.tolerations, UNSCHEDULABLE_TAINT):
        return unresolvable("NodeUnschedulable", ERR_UNSCHEDULABLE)
    # TaintToleration.Filter: an untolerated NoSchedule/NoExecute taint
    # (v1helper.FindMatchingUntoleratedTaint). The reason is v1.37.2's and v1.38.0-beta.0's fixed
    # text (taint_toleration.go Filter): the taint is no longer named, so nodes with different
    # taints count as one reason in the FitError message.
    for taint in node.taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not tolerates_taint(pod.tolerations, taint):
            return unresolvable("TaintToleration", ERR_TAINT)
    # NodeAffinity.Filter: spec.nodeSelector AND required node affinity.
    if not node_matches_pod_node_affinity(pod, node):
        return unresolvable("NodeAffinity", ERR_NODE_AFFINITY)
    return OK


def static_signature(pod: Pod) -> tuple:
    """What the static verdicts depend on: pods with equal signatures share them."""
    aff = pod.affinity
    return (
        tuple(sorted(pod.node_selector.items())),
        aff.node_required if aff is not None else None,
        pod.tolerations,
    )


@dataclass(slots=True)
class StaticVerdicts:
    codes: np.ndarray  # per node: SUCCESS or UNRESOLVABLE
    statuses: list[Status]


class StaticCache:
    """Per-signature static verdicts for one ClusterState's node list (nodes never change)."""

    def __init__(self, state: ClusterState):
        self.state = state
        self._cache: dict[tuple, StaticVerdicts] = {}
        self._sigs: dict[str, tuple] = {}

    def get(self, pod: Pod) -> StaticVerdicts:
        sig = self._sigs.get(pod.uid)
        if sig is None:
            sig = self._sigs[pod.uid] = static_signature(pod)
        v = self._cache.get(sig)
        if v is None:
            statuses = [_static_status(pod, n) for n in self.state.nodes]
            codes = np.array([s.code for s in statuses], dtype=np.int8)
            v = StaticVerdicts(codes, statuses)
            self._cache[sig] = v
        return v


def resource_fit_node(state: ClusterState, pod: Pod, idx: int, extra: np.ndarray | None = None, extra_pods: int = 0) -> Status:
    """NodeResourcesFit.Filter (fitsRequest) for one node; `extra` is added to the node's
    requested vector (nominated pods). Reasons in upstream's order: pods, cpu, memory,
    ephemeral-storage, then scalar resources (by name: upstream iterates a Go map)."""
    cols, amts = state.request_vector(pod)
    allowed = int(state.alloc_pods[idx])
    # Fast path: everything fits (the common answer during reprieval replays).
    if int(state.pod_count[idx]) + extra_pods + 1 <= allowed:
        if not len(cols):
            return OK
        if extra is None:
            free = state.alloc[idx, cols] - state.requested[idx, cols]
        else:
            free = state.alloc[idx, cols] - state.requested[idx, cols] - extra[cols]
        if (amts <= free).all():
            return OK
    reasons: list[str] = []
    unres = False
    if int(state.pod_count[idx]) + extra_pods + 1 > allowed:
        reasons.append(TOO_MANY_PODS)
        # UPSTREAM-DIFF [unverified]: fitsRequest marks a request above the node's total
        # allocatable Unresolvable; we apply the same rule to the pod count (a node that allows
        # no pods at all), which the code we read does not show for "Too many pods".
        unres = unres or allowed < 1
    if len(cols):
        alloc = state.alloc[idx]
        used = state.requested[idx] if extra is None else state.requested[idx] + extra
        order = sorted(range(len(cols)), key=lambda i: _res_rank(state.resources[cols[i]]))
        for i in order:
            c, a = cols[i], int(amts[i])
            if a <= 0:
                continue
            if a > int(alloc[c]) - int(used[c]):
                reasons.append(f"Insufficient {state.resources[c]}")
                # UnschedulableAndUnresolvable when the request exceeds the node's total
                # allocatable: no victim removal can help (v1.36 InsufficientResource.Unresolvable).
                unres = unres or a > int(alloc[c])
    if reasons:
        return Status(UNRESOLVABLE if unres else 2, tuple(reasons), "NodeResourcesFit")
    return OK


def _res_rank(name: str) -> tuple[int, str]:
    return ({"cpu": 0, "memory": 1, "ephemeral-storage": 2}.get(name, 3), name)


def ports_fit(state: ClusterState, pod: Pod, idx: int, extra_ports: list | None = None) -> bool:
    """NodePorts.Filter (fitsPorts / HostPortInfo.CheckConflict): 0.0.0.0 conflicts with any IP."""
    used = state.ports[idx]
    if not pod.host_ports or (not used and not extra_ports):
        return True
    taken = list(used.keys()) + list(extra_ports or ())
    for want in pod.host_ports:
        for have in taken:
            if have.port != want.port or have.protocol != want.protocol:
                continue
            if want.host_ip == "0.0.0.0" or have.host_ip == "0.0.0.0" or want.host_ip == have.host_ip:
                return False
    return True


def resource_fit_mask(state: ClusterState, pod: Pod) -> np.ndarray:
    """Vectorized: True where NodeResourcesFit passes on each node (read-only). Node-local: kept
    over all nodes per request shape (framework/nodecache.py)."""
    cols, amts = state.request_vector(pod)  # first: it may add a resource column
    pos = amts > 0
    c, a = cols[pos], amts[pos]
    shape = (tuple(c.tolist()), tuple(a.tolist()))
    return over_all_nodes(state, "NodeResourcesFit", shape, lambda idx: _fit_rows(state, c, a, idx), lambda i: _fit_one(state, shape, i))


def _fit_one(state: ClusterState, shape: tuple[tuple[int, ...], tuple[int, ...]], i: int) -> bool:
    """_fit_rows for node i alone."""
    if int(state.pod_count[i]) + 1 > int(state.alloc_pods[i]):
        return False
    alloc, requested = state.alloc[i], state.requested[i]
    return all(int(alloc[c]) - int(requested[c]) >= a for c, a in zip(*shape))


def _fit_rows(state: ClusterState, cols: np.ndarray, amts: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    ok = state.pod_count[nodes] + 1 <= state.alloc_pods[nodes]
    if len(cols):
        free = state.alloc[np.ix_(nodes, cols)] - state.requested[np.ix_(nodes, cols)]
        ok &= (free >= amts).all(axis=1)
    return ok


@dataclass(slots=True)
class CycleData:
    """Per-pod cycle state of the cross-node plugins (plugin name -> plugin data)."""

    plugins: list[tuple[Any, Any]] = field(default_factory=list)  # (plugin, data)
    prefilter_status: Status = OK

    def clone(self) -> "CycleData":
        return CycleData([(p, p.clone(d)) for p, d in self.plugins], self.prefilter_status)

    @property
    def inert(self) -> bool:
        """No plugin's Filter/AddPod/RemovePod can do anything this cycle: each either sat out or
        (InterPodAffinity) answered PreFilter with Skip but stays listed, because its Score still
        runs. Adding pods to a clone of such a cycle is wasted work."""
        return all(getattr(d, "skip", False) for _, d in self.plugins)

    def add_pod(self, state: ClusterState, pod: Pod, added: Pod, idx: int) -> bool:
        changed = False
        for p, d in self.plugins:
            changed = bool(p.add_pod(state, d, pod, added, idx)) or changed
        return changed

    def remove_pod(self, state: ClusterState, pod: Pod, removed: Pod, idx: int) -> bool:
        changed = False
        for p, d in self.plugins:
            changed = bool(p.remove_pod(state, d, pod, removed, idx)) or changed
        return changed


def pre_filter(state: ClusterState, pod: Pod) -> CycleData:
    """Run PreFilter of the cross-node plugins that have anything to say about `pod`."""
    data = CycleData()
    for plugin in cross_node_plugins():
        if not plugin.relevant(state, pod):
            continue
        d, st = plugin.pre_filter(state, pod)
        if st.code == SKIP:
            continue  # PreFilter Skip: no Filter and no AddPod/RemovePod for this cycle
        data.plugins.append((plugin, d))
        if not st.ok and data.prefilter_status.ok:
            data.prefilter_status = st
    return data


def filter_node(
    state: ClusterState,
    static: StaticCache,
    pod: Pod,
    cycle: CycleData,
    idx: int,
    extra: np.ndarray | None = None,
    extra_pods: int = 0,
    extra_ports: list | None = None,
) -> Status:
    """All Filter plugins on one node, first failure wins (RunFilterPlugins)."""
    if not cycle.prefilter_status.ok:
        return cycle.prefilter_status
    st = static.get(pod).statuses[idx]
    if not st.ok:
        return st
    if pod.host_ports and not ports_fit(state, pod, idx, extra_ports):
        return unschedulable("NodePorts", ERR_NODE_PORTS)
    st = resource_fit_node(state, pod, idx, extra, extra_pods)
    if not st.ok:
        return st
    for plugin, d in cycle.plugins:
        st = plugin.filter(state, d, pod, idx)
        if not st.ok:
            return st
    return OK


def cross_node_filter(state: ClusterState, pod: Pod, cycle: CycleData, idx: int) -> Status:
    """Only the cross-node Filters (PodTopologySpread, InterPodAffinity) on one node."""
    if not cycle.prefilter_status.ok:
        return cycle.prefilter_status
    for plugin, d in cycle.plugins:
        st = plugin.filter(state, d, pod, idx)
        if not st.ok:
            return st
    return OK


def filter_all(
    state: ClusterState, static: StaticCache, pod: Pod, cycle: CycleData, with_statuses: bool = True
) -> tuple[np.ndarray, dict[int, Status]]:
    """Feasibility of every node: (bool mask, failing node -> status). Fast path: static verdicts
    and resource fit are vectors; per-node statuses are built only for failing nodes, and only
    when asked for (a pod that fits somewhere needs none)."""
    n = len(state.nodes)
    if not cycle.prefilter_status.ok:
        return np.zeros(n, dtype=bool), {i: cycle.prefilter_status for i in range(n)}
    sv = static.get(pod)
    ok = sv.codes == SUCCESS
    fit = resource_fit_mask(state, pod)
    candidates = ok & fit
    statuses: dict[int, Status] = {}
    if with_statuses:
        for i in np.flatnonzero(~ok):
            statuses[int(i)] = sv.statuses[i]
    if pod.host_ports:
        for i in np.flatnonzero(ok):
            i = int(i)
            if not ports_fit(state, pod, i):
                candidates[i] = False
                statuses[i] = unschedulable("NodePorts", ERR_NODE_PORTS)
    if with_statuses:
        for i in np.flatnonzero(ok & ~fit):
            i = int(i)
            if i not in statuses:
                statuses[i] = resource_fit_node(state, pod, i)
    active = [(p, d) for p, d in cycle.plugins if not p.passes_everywhere(d)]
    # The last Filter (InterPodAffinity) judges every node at once when it can; the per-node loop
    # then runs only the plugins before it, so a node still reports its first failure.
    last, passes = None, None
    if active and hasattr(active[-1][0], "filter_mask"):
        passes = active[-1][0].filter_mask(state, active[-1][1], pod)
        if passes is not None:
            last = active.pop()
    if active:
        for i in np.flatnonzero(candidates):
            i = int(i)
            for plugin, d in active:
                st = plugin.filter(state, d, pod, i)
                if not st.ok:
                    candidates[i] = False
                    statuses[i] = st
                    break
    if last is not None:
        plugin, d = last
        for i in np.flatnonzero(candidates & ~passes):
            i = int(i)
            candidates[i] = False
            statuses[i] = plugin.filter(state, d, pod, i)  # the exact status, for the few failures
    return candidates, statuses
