"""A plain, per-node reference of the node-local Filter and Score plugins, written straight from
upstream's plugin code with ordinary Python (no numpy, no caches, no ClusterState): it reads only
the model objects. tests/test_vectorized_reference.py checks the vectorized framework against it.

Filter order (default profile): NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts,
NodeResourcesFit; the first failing plugin gives the node's status.
Score: NodeResourcesFit LeastAllocated x1, NodeResourcesBalancedAllocation x1,
TaintToleration x3, NodeAffinity x2; ties go to the smallest node name.
"""

from __future__ import annotations

from dataclasses import replace

from kubectl_wap.framework.plugins.selectors import match_node_selector_term, node_matches_pod_node_affinity, tolerates_taint
from kubectl_wap.model import Node, Pod, Taint

SUCCESS, UNSCHEDULABLE, UNRESOLVABLE = 0, 2, 3
MAX = 100

Verdict = tuple[int, tuple[str, ...], str]  # (code, reasons, plugin)
OK: Verdict = (SUCCESS, (), "")


def pods_on(node: Node, running: list[Pod]) -> list[Pod]:
    return [p for p in running if p.node_name == node.name and p.phase not in ("Succeeded", "Failed")]


def node_status(pod: Pod, node: Node, running: list[Pod]) -> Verdict:
    here = pods_on(node, running)
    # NodeUnschedulable
    if node.unschedulable and not tolerates_taint(pod.tolerations, Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")):
        return (UNRESOLVABLE, ("node(s) were unschedulable",), "NodeUnschedulable")
    # TaintToleration: the first untolerated NoSchedule / NoExecute taint
    for t in node.taints:
        if t.effect in ("NoSchedule", "NoExecute") and not tolerates_taint(pod.tolerations, t):
            return (UNRESOLVABLE, ("node(s) had untolerated taint(s)",), "TaintToleration")  # taint_toleration.go Filter
    # NodeAffinity: nodeSelector AND required terms
    if not node_matches_pod_node_affinity(pod, node):
        return (UNRESOLVABLE, ("node(s) didn't match Pod's node affinity/selector",), "NodeAffinity")
    # NodePorts: same port+protocol conflicts when either IP is 0.0.0.0 or the IPs are equal
    for want in pod.host_ports:
        for other in here:
            for have in other.host_ports:
                if want.port == have.port and want.protocol == have.protocol and (
                    "0.0.0.0" in (want.host_ip, have.host_ip) or want.host_ip == have.host_ip
                ):
                    return (UNSCHEDULABLE, ("node(s) didn't have free ports for the requested pod ports",), "NodePorts")
    # NodeResourcesFit (fitsRequest): pods first, then cpu, memory, ephemeral-storage, scalars
    reasons: list[str] = []
    unresolvable = False
    allowed = node.allocatable.get("pods", 0)
    if len(here) + 1 > allowed:
        reasons.append("Too many pods")
        unresolvable = unresolvable or allowed < 1
    fixed = ["cpu", "memory", "ephemeral-storage"]
    names = [r for r in fixed if r in pod.requests] + sorted(r for r in pod.requests if r not in fixed)
    for r in names:
        want = pod.requests[r]
        if want <= 0:
            continue
        alloc = node.allocatable.get(r, 0)
        used = sum(p.requests.get(r, 0) for p in here)
        if want > alloc - used:
            reasons.append(f"Insufficient {r}")
            unresolvable = unresolvable or want > alloc
    if reasons:
        return (UNRESOLVABLE if unresolvable else UNSCHEDULABLE, tuple(reasons), "NodeResourcesFit")
    return OK


def node_status_with_nominated(pod: Pod, node: Node, running: list[Pod], nominated: list[Pod]) -> Verdict:
    """RunFilterPluginsWithNominatedPods: the pending pods nominated to this node whose priority is
    >= the pod's (addGENominatedPods; the pod itself excluded) are added and Filter must pass,
    then Filter must also pass without them."""
    prio = pod.priority or 0
    ge = [replace(p, node_name=node.name) for p in nominated
          if p.nominated_node_name == node.name and p.uid != pod.uid and (p.priority or 0) >= prio]
    if ge:
        v = node_status(pod, node, running + ge)
        if v[0] != SUCCESS:
            return v
    return node_status(pod, node, running)


def filter_nodes(pod: Pod, nodes: list[Node], running: list[Pod]) -> dict[str, Verdict]:
    return {n.name: node_status(pod, n, running) for n in nodes}


# ---- scoring ----------------------------------------------------------------------------------

def least_allocated(pod: Pod, node: Node, running: list[Pod]) -> int:
    here = pods_on(node, running)
    total = weights = 0
    for k, r in enumerate(("cpu", "memory")):
        cap = node.allocatable.get(r, 0)
        if cap == 0:
            continue
        req = sum(p.nonzero_requests[k] for p in here) + pod.nonzero_requests[k]
        total += 0 if req > cap else (cap - req) * MAX // cap
        weights += 1
    return total // weights if weights else 0


def _balance(node: Node, here: list[Pod], extra: dict[str, int]) -> int:
    fractions = []
    for r in ("cpu", "memory"):
        cap = node.allocatable.get(r, 0)
        if cap == 0:
            continue
        req = sum(p.requests.get(r, 0) for p in here) + extra.get(r, 0)
        fractions.append(min(req / cap, 1.0))
    std = abs(fractions[0] - fractions[1]) / 2 if len(fractions) == 2 else 0.0
    return int((1 - std) * MAX)


def balanced_allocation(pod: Pod, node: Node, running: list[Pod]) -> int:
    """v1.37.2 balancedResourceScorer: the balance change, 50 + (50 + with_pod - without_pod) / 2."""
    if not pod.requests.get("cpu", 0) and not pod.requests.get("memory", 0):
        return 0  # upstream skips best-effort pods (resourceAllocationScorer.isBestEffortPod)
    here = pods_on(node, running)
    return MAX // 2 + (MAX // 2 + _balance(node, here, pod.requests) - _balance(node, here, {})) // 2


def _normalize(raw: dict[str, int], reverse: bool) -> dict[str, int]:
    mx = max(raw.values(), default=0)
    if mx == 0:
        return {k: (MAX if reverse else 0) for k in raw}
    return {k: (MAX - MAX * v // mx if reverse else MAX * v // mx) for k, v in raw.items()}


def taint_toleration(pod: Pod, nodes: list[Node]) -> dict[str, int]:
    tols = [t for t in pod.tolerations if t.effect in ("", "PreferNoSchedule")]
    raw = {n.name: sum(1 for t in n.taints if t.effect == "PreferNoSchedule" and not tolerates_taint(tols, t)) for n in nodes}
    return _normalize(raw, reverse=True)


def node_affinity(pod: Pod, nodes: list[Node]) -> dict[str, int]:
    terms = pod.affinity.node_preferred if pod.affinity is not None else ()
    if not terms:
        return {n.name: 0 for n in nodes}
    raw = {n.name: sum(t.weight for t in terms if t.weight and match_node_selector_term(t.preference, n)) for n in nodes}
    return _normalize(raw, reverse=False)


def scores(pod: Pod, feasible: list[Node], running: list[Pod]) -> dict[str, int]:
    tt = taint_toleration(pod, feasible)
    na = node_affinity(pod, feasible)
    return {
        n.name: least_allocated(pod, n, running) + balanced_allocation(pod, n, running) + 3 * tt[n.name] + 2 * na[n.name]
        for n in feasible
    }


def select_node(pod: Pod, nodes: list[Node], running: list[Pod]) -> str | None:
    """The node kube-scheduler picks (with ties to the smallest name), or None."""
    verdicts = filter_nodes(pod, nodes, running)
    feasible = sorted((n for n in nodes if verdicts[n.name][0] == SUCCESS), key=lambda n: n.name)
    if not feasible:
        return None
    if len(feasible) == 1:
        return feasible[0].name
    s = scores(pod, feasible, running)
    best = max(s.values())
    return min(name for name, v in s.items() if v == best)
