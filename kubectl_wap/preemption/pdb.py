"""PDB classification: preemption/util.go `FilterVictimsWithPDBViolation` (v1.37.2).

Budgets are consumed in the order given (importance-descending), so more important victims use
the budget first. For each pod, the PDBs of its namespace are walked in list order: a PDB whose
selector does not match is skipped, as is one whose status.disruptedPods names the pod (already
counted: it consumes nothing); a matching one is decremented, and the pod is violating as soon as
one budget goes below zero (`podIsViolating` returns there: the PDBs after it are not
decremented for this pod). A unit is violating when any of its pods is; its violate count is how
many are.
PDBs are walked in snapshot order (a live snapshot lists them by namespace/name).
UPSTREAM-DIFF: upstream walks them in its informer's list order, which is unspecified; it only
matters for a pod under two PDBs where the first one walked is violated.

Selector rules differ by version (profiles.py): v1.37 skips unlabeled pods entirely and treats
nil and `{}` selectors as matching nothing (checked in the v1.37.2 source and by the oracle);
upstream's development branch after PR #141785 has `{}` match every pod of the namespace,
unlabeled pods included (the 1.38 profile). An invalid selector never matches."""

from __future__ import annotations

from ..framework.plugins.selectors import match_label_selector
from ..model import Pod, PodDisruptionBudget
from ..profiles import DEFAULT, Profile
from .units import VictimUnit


def pdb_matches(pdb: PodDisruptionBudget, pod: Pod, profile: Profile = DEFAULT) -> bool:
    if pdb.namespace != pod.namespace:
        return False
    sel = pdb.selector
    if sel is None or sel.invalid:
        return False
    if not pod.labels and not profile.pdb_unlabeled_pods_can_violate:
        return False  # v1.37: `if len(pod.Labels) == 0 { return false }`
    if sel.empty:
        # LabelSelectorAsSelector(&{}) is labels.Everything(), whose Empty() is true: v1.37
        # skips the PDB ("A PDB with a nil or empty selector matches nothing"); PR #141785 matches.
        return profile.pdb_empty_selector_matches_all
    if not sel.match_expressions:
        labels = pod.labels  # common case, checked inline: matchLabels only
        return all(labels.get(k) == v for k, v in sel.match_labels)
    return match_label_selector(sel, pod.labels)


class _PdbIndex:
    """Candidate PDBs for a pod without testing every PDB of its namespace: matchLabels-only
    selectors are indexed by their first (key, value) pair; other selectors are always tried."""

    def __init__(self, pdbs: list[PodDisruptionBudget]):
        # namespace -> (key, value) -> PDB indices; namespace -> PDBs tried for every pod
        self.by_pair: dict[str, dict[tuple[str, str], list[int]]] = {}
        self.others: dict[str, list[int]] = {}
        for i, p in enumerate(pdbs):
            sel = p.selector
            if sel is not None and not sel.invalid and not sel.empty and not sel.match_expressions:
                self.by_pair.setdefault(p.namespace, {}).setdefault(sel.match_labels[0], []).append(i)
            else:
                self.others.setdefault(p.namespace, []).append(i)

    def candidates(self, pod: Pod) -> list[int]:
        ns = pod.namespace
        out = list(self.others.get(ns, ()))
        pairs = self.by_pair.get(ns)
        if pairs:
            for kv in pod.labels.items():
                hit = pairs.get(kv)
                if hit:
                    out.extend(hit)
        if len(out) > 1:
            out.sort()  # PDB list order, as upstream iterates
        return out


# The matches of the last PDB list classified, for the next classification of a list with the
# same selectors in the same order (simulate's cycles: only the budgets change): (signature, the
# selectors, index, matching). Each matching entry holds its labels mapping, so the mapping's id
# is not reused while the entry keys on it.
_LAST: list = [None, None, None, None]


class Budgets:
    """The PDB budgets of one classification, consumed pod by pod (FilterVictimsWithPDBViolation's
    loop body). Matching PDBs are kept per (namespace, labels mapping): pods of one template share
    their labels mapping (the converter interns label sets), so each distinct set is matched once.
    Matches depend on the selectors, namespaces and profile alone, so they carry over to the next
    classification of the same PDB list (the budgets never do)."""

    def __init__(self, pdbs: list[PodDisruptionBudget], profile: Profile = DEFAULT):
        self.pdbs = pdbs
        self.profile = profile
        self.allowed = [p.disruptions_allowed for p in pdbs]
        sig = (profile, tuple((p.namespace, id(p.selector)) for p in pdbs))
        if _LAST[0] != sig:
            _LAST[:] = [sig, [p.selector for p in pdbs], _PdbIndex(pdbs), {}]
        self.index: _PdbIndex = _LAST[2]
        self.matching: dict[tuple[str, int], tuple[dict, list[int]]] = _LAST[3]

    def matches(self, pod: Pod) -> list[int]:
        """Indices of the PDBs that select the pod, in list order."""
        key = (pod.namespace, id(pod.labels))
        hit = self.matching.get(key)
        if hit is None:
            pdbs, profile = self.pdbs, self.profile
            hit = self.matching[key] = (pod.labels, [i for i in self.index.candidates(pod) if pdb_matches(pdbs[i], pod, profile)])
        return hit[1]

    def consume(self, pods: list[Pod]) -> tuple[int, list[str] | None]:
        """Take the unit's pods out of the budgets: (how many of them violate a PDB, the names of
        the PDBs they violate, None when none)."""
        count = 0
        names: list[str] | None = None
        pdbs, allowed = self.pdbs, self.allowed
        for pod in pods:
            cands = self.matches(pod)
            if not cands:
                continue
            violated = False
            for i in cands:
                pdb = pdbs[i]
                if pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    # podIsViolating returns here: later PDBs of the pod are not decremented.
                    violated = True
                    if names is None:
                        names = []
                    name = f"{pdb.namespace}/{pdb.name}"
                    if name not in names:
                        names.append(name)
                    break  # podIsViolating returns at the first violated budget
            if violated:
                count += 1
        return count, names


def classify(
    units: list[VictimUnit], pdbs: list[PodDisruptionBudget], profile: Profile = DEFAULT,
) -> tuple[list[VictimUnit], list[VictimUnit], dict[str, list[str]]]:
    """(violating, non_violating, unit key -> names of PDBs it violates). Sets violate_count."""
    budgets = Budgets(pdbs, profile)
    violating: list[VictimUnit] = []
    non_violating: list[VictimUnit] = []
    which: dict[str, list[str]] = {}
    for u in units:
        count, names = budgets.consume(u.pods)
        u.violate_count = count
        if not count:
            non_violating.append(u)
            continue
        violating.append(u)
        which[u.key] = names or []
    return violating, non_violating, which
