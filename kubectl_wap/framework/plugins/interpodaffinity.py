"""InterPodAffinity (filter + score), re-implemented from upstream kube-scheduler.

Mirrors pkg/scheduler/framework/plugins/interpodaffinity/{filtering.go,scoring.go,plugin.go} and
the AffinityTerm / PodInfo parsing of pkg/scheduler/framework/types.go (v1.35+ main line):

  * `_pod_info`              framework.NewPodInfo / PodInfo.Update (GetAffinityTerms, getWeightedAffinityTerms)
  * `_Term`                  fwk.AffinityTerm and AffinityTerm.Matches
  * `_merge_namespaces`      InterPodAffinity.mergeAffinityTermNamespacesIfNotEmpty
  * `pre_filter`             PreFilter, getExistingAntiAffinityCounts, getIncomingAffinityAntiAffinityCounts
  * `add_pod`/`remove_pod`   AddPod/RemovePod -> preFilterState.updateWithPod
  * `filter`                 Filter, satisfyPodAffinity, satisfyPodAntiAffinity, satisfyExistingPodsAntiAffinity
  * `score`                  PreScore (processExistingPod/processTerm), Score, NormalizeScore

Topology-pair count maps are flat dicts keyed by (topologyKey, topologyValue); like upstream's
topologyToMatchedTermCount an entry is deleted when its count returns to zero (the affinity
"first pod of a series" rule reads `len(affinityCounts) == 0`).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Iterable, Mapping

from ...model import LabelSelector, Pod, PodAffinityTerm, Requirement
from ..status import OK, Status, unresolvable, unschedulable
from .selectors import NOTHING, Selector, SelectorError, affinity_label_keys, compile_label_selector

if TYPE_CHECKING:
    from ..state import ClusterState

NAME = "InterPodAffinity"

ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

# InterPodAffinityArgs defaults (config/v1 defaults.go).
HARD_POD_AFFINITY_WEIGHT = 1
IGNORE_PREFERRED_TERMS_OF_EXISTING_PODS = False
MAX_NODE_SCORE = 100


class _Term:
    """fwk.AffinityTerm: namespaces set, namespace selector, label selector, topology key."""

    __slots__ = ("namespaces", "ns_selector", "selector", "topology_key")

    def __init__(self, namespaces: frozenset, ns_selector: Selector, selector: Selector, topology_key: str):
        self.namespaces = namespaces
        self.ns_selector = ns_selector
        self.selector = selector
        self.topology_key = topology_key

    def matches(self, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
        # AffinityTerm.Matches: namespace listed or namespace labels selected, then the pod's labels.
        if pod.namespace in self.namespaces or self.ns_selector.matches(ns_labels):
            return self.selector.matches(pod.labels)
        return False


class _PodInfo:
    __slots__ = ("req_aff", "req_anti", "pref_aff", "pref_anti", "error")

    def __init__(self, req_aff, req_anti, pref_aff, pref_anti, error):
        self.req_aff: tuple[_Term, ...] = req_aff
        self.req_anti: tuple[_Term, ...] = req_anti
        self.pref_aff: tuple[tuple[int, _Term], ...] = pref_aff
        self.pref_anti: tuple[tuple[int, _Term], ...] = pref_anti
        self.error: str | None = error


_NO_INFO = _PodInfo((), (), (), (), None)


def _apply_label_keys(term: PodAffinityTerm, labels: Mapping[str, str]) -> LabelSelector | None:
    """kube-apiserver pod strategy applyMatchLabelKeysAndMismatchLabelKeys (MatchLabelKeysInPodAffinity,
    GA): for each matchLabelKeys key present in the pod's labels, AND `key In (value)` into the
    labelSelector; for mismatchLabelKeys, `key NotIn (value)`. A nil labelSelector is left nil.

    Pods read from a cluster were already rewritten by the apiserver at creation, so the merge only
    matters for hypothetical pods. UPSTREAM-DIFF: we merge at scheduling time, skipping keys the
    selector already constrains (apiserver validation forbids a matchLabelKeys key in the user's own
    labelSelector, so such an expression can only come from the creation-time merge). A key that was
    absent from the pod's labels at creation but added later is merged here and not upstream."""
    sel = term.label_selector
    if sel is None or (not term.match_label_keys and not term.mismatch_label_keys):
        return sel
    constrained = {r.key for r in sel.match_expressions}
    extra: list[Requirement] = []
    for key in term.match_label_keys:
        if key in labels and key not in constrained:
            extra.append(Requirement(key, "In", (labels[key],)))
    for key in term.mismatch_label_keys:
        if key in labels and key not in constrained:
            extra.append(Requirement(key, "NotIn", (labels[key],)))
    if not extra:
        return sel
    return LabelSelector(sel.match_labels, sel.match_expressions + tuple(extra), sel.invalid)


def _new_term(pod: Pod, term: PodAffinityTerm) -> _Term:
    """framework newAffinityTerm; raises SelectorError like LabelSelectorAsSelector."""
    selector = compile_label_selector(_apply_label_keys(term, pod.labels))
    # getNamespacesFromPodAffinityTerm: the pod's own namespace when both are unset.
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((pod.namespace,))
    else:
        namespaces = frozenset(term.namespaces)
    ns_selector = compile_label_selector(term.namespace_selector)
    return _Term(namespaces, ns_selector, selector, term.topology_key)


def _terms(pod: Pod, raw: Iterable[PodAffinityTerm], errs: list[str], what: str) -> tuple[_Term, ...]:
    # GetAffinityTerms: the first unparsable term makes the whole list nil (plus an error).
    try:
        return tuple(_new_term(pod, t) for t in raw)
    except SelectorError as e:
        errs.append(f"{what}: {e}")
        return ()


def _weighted(pod: Pod, raw, errs: list[str], what: str) -> tuple[tuple[int, _Term], ...]:
    try:
        return tuple((w.weight, _new_term(pod, w.term)) for w in raw)
    except SelectorError as e:
        errs.append(f"{what}: {e}")
        return ()


# Parsed terms per pod object. Pods are immutable but unhashable (label dicts), so the cache is
# keyed by id() and keeps the pod alive to make the id stable.
_info_cache: dict[int, tuple[Pod, _PodInfo]] = {}
_INFO_CACHE_MAX = 500_000


def _pod_info(pod: Pod) -> _PodInfo:
    """framework.NewPodInfo: the pod's (anti-)affinity terms, parsed once per pod object."""
    hit = _info_cache.get(id(pod))
    if hit is not None and hit[0] is pod:
        return hit[1]
    aff = pod.affinity
    if aff is None or not (
        aff.pod_affinity_required or aff.pod_anti_affinity_required or aff.pod_affinity_preferred or aff.pod_anti_affinity_preferred
    ):
        info = _NO_INFO
    else:
        errs: list[str] = []
        info = _PodInfo(
            _terms(pod, aff.pod_affinity_required, errs, "requiredAffinityTerms"),
            _terms(pod, aff.pod_anti_affinity_required, errs, "requiredAntiAffinityTerms"),
            _weighted(pod, aff.pod_affinity_preferred, errs, "preferredAffinityTerms"),
            _weighted(pod, aff.pod_anti_affinity_preferred, errs, "preferredAntiAffinityTerms"),
            "; ".join(errs) or None,
        )
    if len(_info_cache) >= _INFO_CACHE_MAX:
        _info_cache.clear()
    _info_cache[id(pod)] = (pod, info)
    return info


def _merge_namespaces(term: _Term, namespace_labels: Mapping[str, Mapping[str, str]]) -> _Term:
    """mergeAffinityTermNamespacesIfNotEmpty: a non-empty namespaceSelector of the *incoming* pod is
    resolved against the namespace lister into namespace names, then replaced by Nothing. An empty
    ({}) namespaceSelector (Everything) is kept and matches every namespace."""
    if term.ns_selector.empty:
        return term
    sel = term.ns_selector
    names = {ns for ns, labels in namespace_labels.items() if sel.matches(labels)}
    return _Term(term.namespaces | names, NOTHING, term.selector, term.topology_key)


def _matches_all(terms: tuple[_Term, ...], pod: Pod) -> bool:
    """podMatchesAllAffinityTerms (incoming pod's terms: namespaces already merged, nsLabels nil)."""
    if not terms:
        return False
    for t in terms:
        if not t.matches(pod, None):
            return False
    return True


def _bump(counts: dict, labels: Mapping[str, str], key: str, value: int) -> None:
    # topologyToMatchedTermCount.update: only nodes carrying the topology key; drop zero entries.
    tv = labels.get(key)
    if tv is None:
        return
    pair = (key, tv)
    n = counts.get(pair, 0) + value
    if n == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = n


def _has_pod_affinity(pod: Pod) -> bool:
    a = pod.affinity
    return a is not None and bool(
        a.pod_affinity_required or a.pod_anti_affinity_required or a.pod_affinity_preferred or a.pod_anti_affinity_preferred
    )


class IPAData:
    """preFilterState."""

    __slots__ = ("skip", "pod", "req_aff", "req_anti", "self_match", "ns_labels", "existing_anti", "affinity", "anti")

    def __init__(self):
        self.skip = False  # PreFilter returned Skip: Filter/AddPod/RemovePod are not run upstream
        self.pod: Pod | None = None
        self.req_aff: tuple[_Term, ...] = ()
        self.req_anti: tuple[_Term, ...] = ()
        self.self_match = False
        self.ns_labels: Mapping[str, str] | None = None
        self.existing_anti: dict[tuple[str, str], int] = {}
        self.affinity: dict[tuple[str, str], int] = {}
        self.anti: dict[tuple[str, str], int] = {}


# relevant(): "does any existing pod carry pod (anti-)affinity?" (NodeInfo.PodsWithAffinity),
# memoized per state version when ClusterState does not track it itself.
_affinity_pods_memo: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _cluster_has_affinity_pods(state: "ClusterState") -> bool:
    tracked = getattr(state, "affinity_pods", None)
    if tracked is not None:
        return bool(tracked)
    hit = _affinity_pods_memo.get(state)
    if hit is not None and hit[0] == state.version:
        return hit[1]
    found = any(_has_pod_affinity(p) for _, p in state.all_pods())
    _affinity_pods_memo[state] = (state.version, found)
    return found


_TOPO_CACHE: dict[tuple, tuple[dict, dict]] = {}
_KEYS_CACHE: dict[tuple[int, int], frozenset[str]] = {}


def _existing_term_keys(state: "ClusterState") -> frozenset[str]:
    """Label keys read by any (anti-)affinity term of the pods with affinity in `state`."""
    key = (state.token, state.affinity_version)
    hit = _KEYS_CACHE.get(key)
    if hit is None:
        keys: set[str] = set()
        for uid, idx in state.affinity_pods.items():
            keys |= affinity_label_keys(state.node_pods[idx][uid].affinity)
        if len(_KEYS_CACHE) > 1024:
            _KEYS_CACHE.clear()
        hit = _KEYS_CACHE[key] = frozenset(keys)
    return hit


def _template_key(state: "ClusterState", pod: Pod) -> tuple:
    """What the existing pods' terms can see of `pod`: its namespace and the labels they read,
    with the state's affinity pods. Pods of one gang share it (an Indexed Job's completion index
    must not split one gang into a thousand cache entries)."""
    read = _existing_term_keys(state)
    return (state.token, state.affinity_version, pod.namespace, tuple(sorted(kv for kv in pod.labels.items() if kv[0] in read)))


_ANTI_CACHE: dict[tuple, dict] = {}


def _existing_anti_counts(state: "ClusterState", pod: Pod, ns_labels: Mapping[str, str] | None) -> dict:
    """getExistingAntiAffinityCounts: (topologyKey, value) -> how many existing pods' required
    anti-affinity terms match `pod`. The answer depends only on the pod's namespace and the labels
    some existing term reads, and on the pods with affinity: every pod of a gang (an Indexed
    Job's completion index aside) gets the same map, so it is cached on those. Read-only: callers
    copy it."""
    key = _template_key(state, pod)
    hit = _ANTI_CACHE.get(key)
    if hit is not None:
        return hit
    existing: dict = {}
    nodes = state.nodes
    for uid, idx in state.anti_affinity_pods.items():
        other = state.node_pods[idx].get(uid)
        if other is None:
            continue
        terms = _pod_info(other).req_anti
        if not terms:
            continue
        labels = nodes[idx].labels
        for t in terms:
            if t.matches(pod, ns_labels):
                _bump(existing, labels, t.topology_key, 1)
    if len(_ANTI_CACHE) > 4096:
        _ANTI_CACHE.clear()
    _ANTI_CACHE[key] = existing
    return existing


class InterPodAffinity:
    name = NAME
    score_weight = 2

    # ---- relevance ------------------------------------------------------------------------
    def relevant(self, state: "ClusterState", pod: Pod) -> bool:
        if _has_pod_affinity(pod) or state.anti_affinity_pods:
            return True
        # Existing pods' preferred terms and required affinity terms (hard weight) score the pod.
        return _cluster_has_affinity_pods(state)

    # ---- PreFilter ------------------------------------------------------------------------
    def pre_filter(self, state: "ClusterState", pod: Pod) -> tuple[IPAData, Status]:
        d = IPAData()
        d.pod = pod
        info = _pod_info(pod)
        if info.error is not None:
            # NewPodInfo error -> UnschedulableAndUnresolvable "parsing pod: ..."
            d.skip = True
            return d, unresolvable(NAME, f"parsing pod: {info.error}")
        ns_map = state.namespace_labels
        d.req_aff = tuple(_merge_namespaces(t, ns_map) for t in info.req_aff)
        d.req_anti = tuple(_merge_namespaces(t, ns_map) for t in info.req_anti)
        # GetNamespaceLabelsSnapshot: nil when the namespace is unknown.
        d.ns_labels = ns_map.get(pod.namespace)

        # getExistingAntiAffinityCounts: existing pods' required anti-affinity terms matching `pod`.
        d.existing_anti = dict(_existing_anti_counts(state, pod, d.ns_labels))
        nodes = state.nodes

        # getIncomingAffinityAntiAffinityCounts: existing pods matching the incoming pod's terms.
        if d.req_aff or d.req_anti:
            aff, anti = d.affinity, d.anti
            req_aff, req_anti = d.req_aff, d.req_anti
            for idx, pods in enumerate(state.node_pods):
                if not pods:
                    continue
                labels = nodes[idx].labels
                for other in pods.values():
                    if req_aff and _matches_all(req_aff, other):
                        for t in req_aff:
                            _bump(aff, labels, t.topology_key, 1)
                    for t in req_anti:
                        if t.matches(other, None):
                            _bump(anti, labels, t.topology_key, 1)
        d.self_match = _matches_all(d.req_aff, pod)

        if not d.existing_anti and not d.req_aff and not d.req_anti:
            d.skip = True  # upstream returns fwk.Skip
        return d, OK

    def clone(self, data: IPAData) -> IPAData:
        c = IPAData()
        c.skip = data.skip
        c.pod = data.pod
        c.req_aff = data.req_aff
        c.req_anti = data.req_anti
        c.self_match = data.self_match
        c.ns_labels = data.ns_labels
        c.existing_anti = dict(data.existing_anti)
        c.affinity = dict(data.affinity)
        c.anti = dict(data.anti)
        return c

    # ---- PreFilterExtensions --------------------------------------------------------------
    def _update(self, state: "ClusterState", d: IPAData, other: Pod, node_idx: int, mult: int) -> bool:
        """preFilterState.updateWithPod. Returns whether any count was touched (a caller may
        skip re-running Filter against unchanged cycle data)."""
        if d.skip:
            return False  # the framework does not run AddPod/RemovePod of a plugin that Skipped PreFilter
        changed = False
        labels = state.nodes[node_idx].labels
        for t in _pod_info(other).req_anti:
            if t.matches(d.pod, d.ns_labels):
                _bump(d.existing_anti, labels, t.topology_key, mult)
                changed = True
        if d.req_aff and _matches_all(d.req_aff, other):
            for t in d.req_aff:
                _bump(d.affinity, labels, t.topology_key, mult)
            changed = True
        for t in d.req_anti:
            if t.matches(other, None):
                _bump(d.anti, labels, t.topology_key, mult)
                changed = True
        return changed

    def add_pod(self, state: "ClusterState", data: IPAData, pod: Pod, added: Pod, node_idx: int) -> bool:
        return self._update(state, data, added, node_idx, 1)

    def remove_pod(self, state: "ClusterState", data: IPAData, pod: Pod, removed: Pod, node_idx: int) -> bool:
        return self._update(state, data, removed, node_idx, -1)

    # ---- Filter ---------------------------------------------------------------------------
    @staticmethod
    def passes_everywhere(data: IPAData) -> bool:
        """True when Filter passes on every node with this cycle data: no required terms of the
        pod to satisfy and no existing pod's anti-affinity matching it (counts drop at zero)."""
        return data.skip or (not data.req_aff and not data.anti and not data.existing_anti)

    @staticmethod
    def filter_mask(state: "ClusterState", data: IPAData, pod: Pod) -> Any:
        """Vectorized Filter over all nodes when the pod has no required affinity (the common
        case): a boolean pass mask. None: use the per-node filter."""
        import numpy as np

        d = data
        if d.skip or d.req_aff:
            return None
        n = len(state.nodes)
        anti_fail = np.zeros(n, dtype=bool)
        if d.anti:
            for t in d.req_anti:
                for (k, v), c in d.anti.items():
                    if k == t.topology_key and c > 0:
                        anti_fail[state.nodes_with_label(k, v)] = True
        existing_fail = np.zeros(n, dtype=bool)
        for (k, v), c in d.existing_anti.items():
            if c > 0:
                existing_fail[state.nodes_with_label(k, v)] = True
        return ~(anti_fail | existing_fail)

    def filter(self, state: "ClusterState", data: IPAData, pod: Pod, node_idx: int) -> Status:
        d = data
        if d.skip:
            return OK
        labels = state.nodes[node_idx].labels
        # satisfyPodAffinity
        if d.req_aff:
            pods_exist = True
            aff = d.affinity
            for t in d.req_aff:
                tv = labels.get(t.topology_key)
                if tv is None:
                    # All topology labels must exist on the node.
                    return unresolvable(NAME, ERR_AFFINITY)
                if aff.get((t.topology_key, tv), 0) <= 0:
                    pods_exist = False
            if not pods_exist:
                # First pod of a series with affinity to itself: allowed when no pod in the cluster
                # matches the terms and the pod matches all of its own terms.
                if not (len(aff) == 0 and d.self_match):
                    return unresolvable(NAME, ERR_AFFINITY)
        # satisfyPodAntiAffinity
        if d.anti:
            anti = d.anti
            for t in d.req_anti:
                tv = labels.get(t.topology_key)
                if tv is not None and anti.get((t.topology_key, tv), 0) > 0:
                    return unschedulable(NAME, ERR_ANTI_AFFINITY)
        # satisfyExistingPodsAntiAffinity
        if d.existing_anti:
            ex = d.existing_anti
            for item in labels.items():
                if ex.get(item, 0) > 0:
                    return unschedulable(NAME, ERR_EXISTING_ANTI_AFFINITY)
        return OK

    # ---- Score ----------------------------------------------------------------------------
    def score(self, state: "ClusterState", pod: Pod, feasible: list[int]) -> list[int]:
        if not feasible:
            return []
        aff = pod.affinity
        has_constraints = aff is not None and bool(aff.pod_affinity_preferred or aff.pod_anti_affinity_preferred)
        if IGNORE_PREFERRED_TERMS_OF_EXISTING_PODS and not has_constraints:
            return [0] * len(feasible)
        info = _pod_info(pod)
        ns_map = state.namespace_labels
        pref_aff = tuple((w, _merge_namespaces(t, ns_map)) for w, t in info.pref_aff)
        pref_anti = tuple((w, _merge_namespaces(t, ns_map)) for w, t in info.pref_anti)
        ns_labels = ns_map.get(pod.namespace)

        # PreScore: topologyScore keyed by (topologyKey, value); an entry exists once any term
        # matched on a node carrying the key (even with weight 0), which decides Skip.
        # Without preferred terms of its own, the map depends only on the pod's namespace and
        # labels and on the pods with affinity: pods of one gang share it, so cache it.
        cache_key = None
        if not has_constraints and getattr(state, "affinity_version", None) is not None:
            # Only labels some existing pod's term reads can change the map.
            cache_key = _template_key(state, pod)
            hit = _TOPO_CACHE.get(cache_key)
            if hit is not None:
                return self._normalized(state, feasible, *hit)
        topo: dict[tuple[str, str], int] = {}
        keys: dict[str, None] = {}

        def process(t: _Term, weight: int, target: Pod, nsl, labels, mult: int) -> None:
            # scoreMap.processTerm
            if t.matches(target, nsl):
                tv = labels.get(t.topology_key)
                if tv is not None:
                    pair = (t.topology_key, tv)
                    topo[pair] = topo.get(pair, 0) + weight * mult
                    keys[t.topology_key] = None

        if has_constraints or getattr(state, "affinity_pods", None) is None:
            candidates = ((idx, other) for idx, pods in enumerate(state.node_pods) for other in pods.values())
        else:
            # Only NodeInfo.PodsWithAffinity are processed then: walk just those.
            candidates = ((idx, state.node_pods[idx][uid]) for uid, idx in state.affinity_pods.items())
        for idx, other in candidates:
            labels = state.nodes[idx].labels
            if not labels:
                continue  # processExistingPod returns early for a node without labels
            if not has_constraints and not _has_pod_affinity(other):
                continue
            # processExistingPod
            for w, t in pref_aff:
                process(t, w, other, None, labels, 1)
            for w, t in pref_anti:
                process(t, w, other, None, labels, -1)
            oi = _pod_info(other)
            if oi is _NO_INFO:
                continue
            if HARD_POD_AFFINITY_WEIGHT > 0:
                for t in oi.req_aff:
                    process(t, HARD_POD_AFFINITY_WEIGHT, pod, ns_labels, labels, 1)
            for w, t in oi.pref_aff:
                process(t, w, pod, ns_labels, labels, 1)
            for w, t in oi.pref_anti:
                process(t, w, pod, ns_labels, labels, -1)

        if cache_key is not None:
            if len(_TOPO_CACHE) > 1024:
                _TOPO_CACHE.clear()
            _TOPO_CACHE[cache_key] = (topo, keys)
        return self._normalized(state, feasible, topo, keys)

    @staticmethod
    def _normalized(state: "ClusterState", feasible: list[int], topo: dict, keys: dict) -> list[int]:
        if not topo:
            return [0] * len(feasible)  # PreScore Skip: the plugin does not score

        # Score: sum of the topology scores of the node's (key, value) pairs.
        raw = []
        for idx in feasible:
            labels = state.nodes[idx].labels
            s = 0
            for k in keys:
                tv = labels.get(k)
                if tv is not None:
                    s += topo.get((k, tv), 0)
            raw.append(s)
        # NormalizeScore: min-max to 0..MaxNodeScore (float, truncated).
        lo, hi = min(raw), max(raw)
        diff = hi - lo
        if diff <= 0:
            return [0] * len(raw)
        return [int(float(MAX_NODE_SCORE) * (float(s - lo) / float(diff))) for s in raw]


PLUGIN = InterPodAffinity()
