"""Label-selector, node-selector and toleration matching with upstream semantics.

Mirrors:
  * k8s.io/apimachinery labels.Requirement.Matches / labels.internalSelector / labels.Nothing()
  * metav1.LabelSelectorAsSelector (nil selector -> Nothing, empty selector -> Everything)
  * component-helpers scheduling/corev1/nodeaffinity: nodeSelectorRequirementsAsSelector,
    nodeSelectorRequirementsAsFieldSelector, nodeSelectorTerm.match, LazyErrorNodeSelector.Match,
    GetRequiredNodeAffinity(pod).Match
  * core/v1 Toleration.ToleratesTaint, component-helpers v1helper.FindMatchingUntoleratedTaint

Selectors are compiled once (cached by the frozen model object) into `Selector` values whose
`matches` is a short loop over (key, op, values) triples.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Mapping

from ...model import Affinity, LabelSelector, Node, NodeSelectorTerm, Pod, PodAffinityTerm, Requirement, Taint, Toleration
from ...model.terms import parse_int64, valid_label_key, valid_label_value

IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT = "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"
_LABEL_OPS = frozenset({IN, NOT_IN, EXISTS, DOES_NOT_EXIST})
_NODE_OPS = frozenset({IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT})

_EMPTY: Mapping[str, str] = {}


class SelectorError(ValueError):
    """A selector upstream would fail to parse (LabelSelectorAsSelector / NewRequirement error)."""


class Selector:
    """A parsed labels.Selector: `nothing` (labels.Nothing()) or an AND of requirements
    (no requirements = labels.Everything())."""

    __slots__ = ("reqs", "nothing")

    def __init__(self, reqs: tuple = (), nothing: bool = False):
        self.reqs = reqs  # tuple of (key, op, values) with values a frozenset (In/NotIn) or int (Gt/Lt)
        self.nothing = nothing

    @property
    def empty(self) -> bool:
        """labels.Selector.Empty(): true only for Everything (Nothing is not empty)."""
        return not self.nothing and not self.reqs

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        if labels is None:
            labels = _EMPTY
        for key, op, vals in self.reqs:
            if op == IN:
                v = labels.get(key)
                if v is None or v not in vals:
                    return False
            elif op == NOT_IN:
                v = labels.get(key)
                if v is not None and v in vals:
                    return False
            elif op == EXISTS:
                if key not in labels:
                    return False
            elif op == DOES_NOT_EXIST:
                if key in labels:
                    return False
            else:  # Gt / Lt (labels.Requirement.Matches: label value must parse as int64)
                v = labels.get(key)
                if v is None:
                    return False
                n = parse_int64(v)
                if n is None:
                    return False
                if op == GT and not n > vals:
                    return False
                if op == LT and not n < vals:
                    return False
        return True

    def with_requirements(self, extra: Iterable[tuple]) -> "Selector":
        """selector.Add(reqs...): Nothing stays Nothing."""
        if self.nothing:
            return self
        return Selector(self.reqs + tuple(extra))

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return "Selector(Nothing)" if self.nothing else f"Selector({self.reqs!r})"


NOTHING = Selector(nothing=True)
EVERYTHING = Selector(())


def _compile_requirement(r: Requirement, ops: frozenset) -> tuple:
    # labels.NewRequirement validation: key syntax, operator, value count, value syntax.
    if not valid_label_key(r.key):
        raise SelectorError(f"key: Invalid value: {r.key!r}: not a valid label key")
    for v in r.values:
        if not valid_label_value(v):
            raise SelectorError(f"values[{r.key}]: Invalid value: {v!r}: not a valid label value")
    if r.operator not in ops:
        raise SelectorError(f"{r.operator!r} is not a valid label selector operator")
    if r.operator in (IN, NOT_IN):
        if not r.values:
            raise SelectorError(f"values: for 'in', 'notin' operators, values set can't be empty (key {r.key!r})")
        return (r.key, r.operator, frozenset(r.values))
    if r.operator in (EXISTS, DOES_NOT_EXIST):
        if r.values:
            raise SelectorError(f"values: values set must be empty for exists and does not exist (key {r.key!r})")
        return (r.key, r.operator, None)
    # Gt / Lt
    if len(r.values) != 1:
        raise SelectorError(f"values: for 'Gt', 'Lt' operators, exactly one value is required (key {r.key!r})")
    n = parse_int64(r.values[0])
    if n is None:
        raise SelectorError(f"values: for 'Gt', 'Lt' operators, the value must be an integer (key {r.key!r})")
    return (r.key, r.operator, n)


@lru_cache(maxsize=8192)
def _compile_label_selector(sel: LabelSelector) -> Selector:
    if sel.invalid:
        raise SelectorError("invalid label selector")
    for k, v in sel.match_labels:
        if not valid_label_key(k) or not valid_label_value(v):
            raise SelectorError(f"matchLabels: Invalid value: {k!r}: {v!r}")
    reqs = [(k, IN, frozenset((v,))) for k, v in sel.match_labels]
    reqs.extend(_compile_requirement(r, _LABEL_OPS) for r in sel.match_expressions)
    # labels.internalSelector sorts requirements by key; order does not change the result.
    return Selector(tuple(reqs))


def compile_label_selector(sel: LabelSelector | None) -> Selector:
    """metav1.LabelSelectorAsSelector: nil -> Nothing, empty -> Everything; raises SelectorError."""
    if sel is None:
        return NOTHING
    return _compile_label_selector(sel)


def label_selector_valid(sel: LabelSelector | None) -> bool:
    try:
        compile_label_selector(sel)
        return True
    except SelectorError:
        return False


def match_label_selector(sel: LabelSelector | None, labels: Mapping[str, str] | None) -> bool:
    """LabelSelectorAsSelector(sel).Matches(labels); nil selector matches nothing, empty selector
    matches everything, an unparsable selector matches nothing."""
    try:
        return compile_label_selector(sel).matches(labels)
    except SelectorError:
        return False


def selector_keys(sel: LabelSelector | None) -> set[str]:
    """The label keys a selector reads: a label with any other key cannot change its verdict."""
    if sel is None:
        return set()
    return {k for k, _ in sel.match_labels} | {r.key for r in sel.match_expressions}


def term_label_keys(term: PodAffinityTerm) -> set[str]:
    """The label keys a pod (anti-)affinity term reads of the pods it is matched against; its
    matchLabelKeys / mismatchLabelKeys become requirements on those keys."""
    return selector_keys(term.label_selector) | set(term.match_label_keys) | set(term.mismatch_label_keys)


def affinity_label_keys(aff: Affinity | None) -> set[str]:
    """The label keys every pod (anti-)affinity term of `aff` reads, required and preferred."""
    keys: set[str] = set()
    if aff is not None:
        for t in aff.pod_affinity_required + aff.pod_anti_affinity_required:
            keys |= term_label_keys(t)
        for w in aff.pod_affinity_preferred + aff.pod_anti_affinity_preferred:
            keys |= term_label_keys(w.term)
    return keys


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """labels.SelectorFromSet: key=value equality requirements (an empty set is Everything)."""
    return Selector(tuple((k, IN, frozenset((v,))) for k, v in labels.items()))


# ---- node selectors (component-helpers nodeaffinity) -----------------------------------------


class _NodeTerm:
    __slots__ = ("labels", "fields", "error")

    def __init__(self, labels: Selector | None, fields: tuple | None, error: bool):
        self.labels = labels
        self.fields = fields  # tuple of (key, equal: bool, value) ANDed; None when not set
        self.error = error


@lru_cache(maxsize=8192)
def _compile_node_term(term: NodeSelectorTerm) -> _NodeTerm:
    # newNodeSelectorTerm: parse matchExpressions (nodeSelectorRequirementsAsSelector) and
    # matchFields (nodeSelectorRequirementsAsFieldSelector); parse errors make the term fail.
    error = False
    labels = None
    fields = None
    if term.match_expressions:
        try:
            labels = Selector(tuple(_compile_requirement(r, _NODE_OPS) for r in term.match_expressions))
        except SelectorError:
            error = True
    if term.match_fields:
        fs = []
        for r in term.match_fields:
            if r.operator not in (IN, NOT_IN) or len(r.values) != 1:
                error = True
                break
            fs.append((r.key, r.operator == IN, r.values[0]))
        fields = tuple(fs)
    return _NodeTerm(labels, fields, error)


def match_node_selector_term(term: NodeSelectorTerm, node: Node) -> bool:
    """nodeSelectorTerm.match; a term with no expressions and no fields matches nothing
    (NewLazyErrorNodeSelector drops empty terms), and a term that fails to parse never matches."""
    if not term.match_expressions and not term.match_fields:
        return False
    t = _compile_node_term(term)
    if t.error:
        return False
    if t.labels is not None and not t.labels.matches(node.labels):
        return False
    # extractNodeFields: only metadata.name, and only when the name is non-empty; the field check
    # is skipped when the node has no fields (`len(nodeFields) > 0`).
    if t.fields is not None and node.name:
        for key, equal, value in t.fields:
            actual = node.name if key == "metadata.name" else ""  # fields.Set.Get: "" when absent
            if (actual == value) != equal:
                return False
    return True


def match_node_selector_terms(terms: Iterable[NodeSelectorTerm], node: Node) -> bool:
    """LazyErrorNodeSelector.Match: terms are ORed; no (non-empty) term -> no match."""
    for term in terms:
        if match_node_selector_term(term, node):
            return True
    return False


def node_matches_pod_node_affinity(pod: Pod, node: Node) -> bool:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): spec.nodeSelector (all key=value
    pairs present) AND requiredDuringSchedulingIgnoredDuringExecution node selector terms."""
    if pod.node_selector:
        nl = node.labels
        for k, v in pod.node_selector.items():
            if nl.get(k) != v:
                return False
    aff = pod.affinity
    if aff is not None and aff.node_required is not None:
        return match_node_selector_terms(aff.node_required, node)
    return True


# ---- taints and tolerations ------------------------------------------------------------------


def tolerates_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """v1helper.TolerationsTolerateTaint: any toleration tolerates the taint."""
    for tol in tolerations:
        if tol.tolerates(taint):  # model Toleration.tolerates: the rule Kueue's flavors share
            return True
    return False


DO_NOT_SCHEDULE_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


def find_untolerated_taint(
    taints: Iterable[Taint], tolerations: Iterable[Toleration], effects: frozenset = DO_NOT_SCHEDULE_EFFECTS
) -> Taint | None:
    """v1helper.FindMatchingUntoleratedTaint with a filter on taint effects (default
    helper.DoNotScheduleTaintsFilterFunc: NoSchedule and NoExecute)."""
    tols = tuple(tolerations)
    for taint in taints:
        if taint.effect not in effects:
            continue
        if not tolerates_taint(tols, taint):
            return taint
    return None
