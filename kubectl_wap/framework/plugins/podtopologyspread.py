"""PodTopologySpread (filter + score), re-implemented from upstream kube-scheduler.

Mirrors pkg/scheduler/framework/plugins/podtopologyspread/{common.go,filtering.go,scoring.go,
plugin.go} (v1.35+ main line, NodeInclusionPolicyInPodTopologySpread and
MatchLabelKeysInPodTopologySpread on, as by default):

  * `_constraints`          filterTopologySpreadConstraints (+ mergeLabelSetWithSelector)
  * `_node_qualifies`       nodeLabelsMatchSpreadConstraints + topologySpreadConstraint.matchNodeInclusionPolicies
  * `_count_matching`       countPodsMatchSelector
  * `pre_filter`            PreFilter / calPreFilterState
  * `add_pod`/`remove_pod`  AddPod/RemovePod -> updateWithPod (+ preFilterState.updateMin)
  * `filter`                Filter (+ preFilterState.minMatchNum)
  * `score`                 PreScore/initPreScoreState, Score, NormalizeScore, topologyNormalizingWeight, scoreForCount

UPSTREAM-DIFF: only the constraints written on the pod are used. The system default constraints
(zone/hostname spreading over the pod's Services/ReplicaSets/StatefulSets selectors, applied when a
pod has no constraints) are not: we do not list those controllers.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ...model import Pod
from ..status import ERROR, OK, Status, unresolvable, unschedulable
from .selectors import IN, Selector, SelectorError, compile_label_selector, find_untolerated_taint, node_matches_pod_node_affinity

if TYPE_CHECKING:
    from ...model import Node
    from ..state import ClusterState

NAME = "PodTopologySpread"

ERR_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_NODE_LABEL_NOT_MATCH = ERR_CONSTRAINTS_NOT_MATCH + " (missing required label)"

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
LABEL_HOSTNAME = "kubernetes.io/hostname"
MAX_NODE_SCORE = 100
_MAX_INT32 = 2**31 - 1


class _Constraint:
    """topologySpreadConstraint: the parsed form of v1.TopologySpreadConstraint."""

    __slots__ = ("max_skew", "topology_key", "selector", "min_domains", "honor_affinity", "honor_taints")

    def __init__(self, max_skew: int, topology_key: str, selector: Selector, min_domains: int, honor_affinity: bool, honor_taints: bool):
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.selector = selector
        self.min_domains = min_domains
        self.honor_affinity = honor_affinity
        self.honor_taints = honor_taints


def _constraints(pod: Pod, action: str) -> list[_Constraint]:
    """filterTopologySpreadConstraints: the pod's constraints with `whenUnsatisfiable == action`.
    matchLabelKeys values from the pod's labels are ANDed into the selector (a nil selector stays
    Nothing; an empty one becomes the key=value set). Raises SelectorError on a bad selector."""
    out = []
    for c in pod.topology_spread:
        if c.when_unsatisfiable != action:
            continue
        sel = compile_label_selector(c.label_selector)
        if c.match_label_keys:
            extra = [(k, IN, frozenset((pod.labels[k],))) for k in c.match_label_keys if k in pod.labels]
            if extra:
                # mergeLabelSetWithSelector: SelectorFromSet(matchLabels) + the selector's requirements
                sel = sel if sel.nothing else Selector(tuple(extra) + sel.reqs)
        out.append(
            _Constraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=sel,
                min_domains=c.min_domains if c.min_domains is not None else 1,
                honor_affinity=(c.node_affinity_policy or HONOR) == HONOR,
                honor_taints=c.node_taints_policy == HONOR,
            )
        )
    return out


def _labels_have_keys(labels, constraints: list[_Constraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints: ALL topology keys present on the node."""
    for c in constraints:
        if c.topology_key not in labels:
            return False
    return True


def _inclusion(c: _Constraint, pod: Pod, node: "Node", affinity_ok: bool) -> bool:
    """topologySpreadConstraint.matchNodeInclusionPolicies."""
    if c.honor_affinity and not affinity_ok:
        return False
    if c.honor_taints and find_untolerated_taint(node.taints, pod.tolerations) is not None:
        return False
    return True


def _count_matching(pods, selector: Selector, namespace: str) -> int:
    """countPodsMatchSelector: an empty (Everything) selector counts nothing; terminating pods and
    pods of other namespaces are skipped."""
    if selector.empty:
        return 0
    n = 0
    for p in pods:
        if p.deletion_timestamp is not None or p.namespace != namespace:
            continue
        if selector.matches(p.labels):
            n += 1
    return n


class PTSData:
    """preFilterState: per constraint, domain -> matching pods, a histogram of domain counts and
    the exact global minimum (upstream's MinMatchNum/DomainsAtCount)."""

    __slots__ = ("skip", "constraints", "tp_counts", "hist", "min_match", "eligible")

    def __init__(self):
        self.skip = False
        self.constraints: list[_Constraint] = []
        self.tp_counts: list[dict[str, int]] = []
        self.hist: list[dict[int, int]] = []
        self.min_match: list[int] = []
        # node index -> tuple of constraint indices whose policies the node passes (None: the node
        # lacks a topology key). Depends only on the preemptor and the nodes: shared by clones.
        self.eligible: dict[int, tuple[int, ...] | None] = {}

    def min_match_num(self, i: int) -> int:
        # preFilterState.minMatchNum: fewer eligible domains than minDomains -> global minimum 0.
        if len(self.tp_counts[i]) < self.constraints[i].min_domains:
            return 0
        return self.min_match[i]

    def update_min(self, i: int, old: int, cur: int) -> None:
        # preFilterState.updateMin (|cur - old| == 1)
        hist = self.hist[i]
        h = hist.get(old, 0) - 1
        if h <= 0:
            hist.pop(old, None)
        else:
            hist[old] = h
        hist[cur] = hist.get(cur, 0) + 1
        if cur < self.min_match[i]:
            self.min_match[i] = cur
        elif old == self.min_match[i] and old not in hist:
            self.min_match[i] = cur


class PodTopologySpread:
    name = NAME
    score_weight = 2

    def relevant(self, state: "ClusterState", pod: Pod) -> bool:
        # UPSTREAM-DIFF: no system default constraints, so a pod without constraints is a no-op.
        return bool(pod.topology_spread)

    # ---- helpers --------------------------------------------------------------------------
    def _eligible(self, state: "ClusterState", d: PTSData, pod: Pod, idx: int) -> tuple[int, ...] | None:
        e = d.eligible.get(idx, False)
        if e is not False:
            return e
        node = state.nodes[idx]
        if not _labels_have_keys(node.labels, d.constraints):
            e = None
        else:
            # Ignore parsing errors (match=false) for backwards compatibility, as upstream.
            affinity_ok = node_matches_pod_node_affinity(pod, node)
            e = tuple(i for i, c in enumerate(d.constraints) if _inclusion(c, pod, node, affinity_ok))
        d.eligible[idx] = e
        return e

    # ---- PreFilter ------------------------------------------------------------------------
    def pre_filter(self, state: "ClusterState", pod: Pod) -> tuple[PTSData, Status]:
        d = PTSData()
        try:
            cs = _constraints(pod, DO_NOT_SCHEDULE)
        except SelectorError as e:
            d.skip = True
            return d, Status(ERROR, (f"get constraints from pod: obtaining pod's hard topology spread constraints: {e}",), NAME)
        if not cs:
            d.skip = True  # upstream returns fwk.Skip
            return d, OK
        d.constraints = cs
        d.tp_counts = [{} for _ in cs]
        for idx in range(len(state.nodes)):
            elig = self._eligible(state, d, pod, idx)
            if not elig:
                continue
            labels = state.nodes[idx].labels
            pods = state.node_pods[idx].values()
            for i in elig:
                c = cs[i]
                tv = labels[c.topology_key]
                counts = d.tp_counts[i]
                counts[tv] = counts.get(tv, 0) + _count_matching(pods, c.selector, pod.namespace)
        for i in range(len(cs)):
            hist: dict[int, int] = {}
            m = _MAX_INT32
            for n in d.tp_counts[i].values():
                hist[n] = hist.get(n, 0) + 1
                if n < m:
                    m = n
            d.hist.append(hist)
            d.min_match.append(m)
        return d, OK

    def clone(self, data: PTSData) -> PTSData:
        c = PTSData()
        c.skip = data.skip
        c.constraints = data.constraints
        c.tp_counts = [dict(m) for m in data.tp_counts]
        c.hist = [dict(h) for h in data.hist]
        c.min_match = list(data.min_match)
        c.eligible = data.eligible
        return c

    # ---- PreFilterExtensions --------------------------------------------------------------
    def _update(self, state: "ClusterState", d: PTSData, pod: Pod, other: Pod, idx: int, delta: int) -> bool:
        """updateWithPod. Note that, as upstream, terminating pods and an Everything selector are
        not special-cased here although countPodsMatchSelector skips them in PreFilter. Returns
        whether any count changed."""
        if d.skip or other.namespace != pod.namespace:
            return False
        elig = self._eligible(state, d, pod, idx)
        if elig is None:
            return False
        changed = False
        labels = state.nodes[idx].labels
        for i in elig:
            c = d.constraints[i]
            if not c.selector.matches(other.labels):
                continue
            tv = labels[c.topology_key]
            counts = d.tp_counts[i]
            old = counts.get(tv, 0)
            cur = old + delta
            counts[tv] = cur
            d.update_min(i, old, cur)
            changed = True
        return changed

    def add_pod(self, state: "ClusterState", data: PTSData, pod: Pod, added: Pod, node_idx: int) -> bool:
        return self._update(state, data, pod, added, node_idx, 1)

    def remove_pod(self, state: "ClusterState", data: PTSData, pod: Pod, removed: Pod, node_idx: int) -> bool:
        return self._update(state, data, pod, removed, node_idx, -1)

    # ---- Filter ---------------------------------------------------------------------------
    @staticmethod
    def passes_everywhere(data: PTSData) -> bool:
        """True when Filter passes on every node: no DoNotSchedule constraint to check."""
        return data.skip or not data.constraints

    def filter(self, state: "ClusterState", data: PTSData, pod: Pod, node_idx: int) -> Status:
        d = data
        if d.skip or not d.constraints:
            return OK
        labels = state.nodes[node_idx].labels
        for i, c in enumerate(d.constraints):
            tv = labels.get(c.topology_key)
            if tv is None:
                return unresolvable(NAME, ERR_NODE_LABEL_NOT_MATCH)
            # 'existing matching num' + 'if self-match (1 or 0)' - 'global minimum' <= 'maxSkew'
            min_match = d.min_match_num(i)
            self_match = 1 if c.selector.matches(pod.labels) else 0
            match_num = d.tp_counts[i].get(tv, 0)
            if match_num + self_match - min_match > c.max_skew:
                return unschedulable(NAME, ERR_CONSTRAINTS_NOT_MATCH)
        return OK

    # ---- Score ----------------------------------------------------------------------------
    def score(self, state: "ClusterState", pod: Pod, feasible: list[int]) -> list[int]:
        if not feasible or not state.nodes:
            return [0] * len(feasible)
        try:
            cs = _constraints(pod, SCHEDULE_ANYWAY)
        except SelectorError:
            return [0] * len(feasible)  # PreScore error; PreFilter would have failed first
        if not cs:
            return [0] * len(feasible)  # PreScore Skip
        nodes = state.nodes
        # initPreScoreState (requireAllTopologies: the pod has its own constraints)
        ignored: set[int] = set()
        tp_counts: list[dict[str, int]] = [{} for _ in cs]
        for idx in feasible:
            labels = nodes[idx].labels
            if not _labels_have_keys(labels, cs):
                ignored.add(idx)
                continue
            for i, c in enumerate(cs):
                if c.topology_key == LABEL_HOSTNAME:
                    continue  # per-node counts are computed in Score
                tp_counts[i].setdefault(labels[c.topology_key], 0)
        weights = []
        for i, c in enumerate(cs):
            size = len(tp_counts[i])
            if c.topology_key == LABEL_HOSTNAME:
                size = len(feasible) - len(ignored)
            weights.append(math.log(size + 2))  # topologyNormalizingWeight

        # PreScore: count matching pods over all nodes, into the domains of the feasible nodes.
        for idx, node in enumerate(nodes):
            labels = node.labels
            if not _labels_have_keys(labels, cs):
                continue
            affinity_ok = None
            pods = None
            for i, c in enumerate(cs):
                counts = tp_counts[i]
                tv = labels[c.topology_key]
                if tv not in counts:
                    continue
                if affinity_ok is None:
                    affinity_ok = node_matches_pod_node_affinity(pod, node)
                if not _inclusion(c, pod, node, affinity_ok):
                    continue
                if pods is None:
                    pods = list(state.node_pods[idx].values())
                counts[tv] += _count_matching(pods, c.selector, pod.namespace)

        # Score
        raw: list[int | None] = []
        for idx in feasible:
            if idx in ignored:
                raw.append(None)
                continue
            labels = nodes[idx].labels
            s = 0.0
            for i, c in enumerate(cs):
                tv = labels.get(c.topology_key)
                if tv is None:
                    continue
                if c.topology_key == LABEL_HOSTNAME:
                    cnt = _count_matching(state.node_pods[idx].values(), c.selector, pod.namespace)
                else:
                    cnt = tp_counts[i][tv]
                s += float(cnt) * weights[i] + float(c.max_skew - 1)  # scoreForCount
            raw.append(_go_round(s))

        # NormalizeScore
        min_score = 2**63 - 1
        max_score = 0
        for s in raw:
            if s is None:
                continue
            if s < min_score:
                min_score = s
            if s > max_score:
                max_score = s
        out = []
        for s in raw:
            if s is None:
                out.append(0)
            elif max_score == 0:
                out.append(MAX_NODE_SCORE)
            else:
                out.append(MAX_NODE_SCORE * (max_score + min_score - s) // max_score)
        return out


def _go_round(x: float) -> int:
    """math.Round: half away from zero (scores here are never negative)."""
    f = math.floor(x)
    return int(f + 1 if x - f >= 0.5 else f)


PLUGIN = PodTopologySpread()
