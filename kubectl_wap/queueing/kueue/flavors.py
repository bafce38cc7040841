"""Flavor assignment: which ResourceFlavor each podset's resources take in a ClusterQueue, and
whether that fits, needs preemption, or cannot fit. Mirrors sigs.k8s.io/kueue v0.17.0
pkg/scheduler/flavorassigner/flavorassigner.go (FlavorAssigner.assignFlavors,
findFlavorForPodSets, checkFlavorForPodSets, fitsResourceQuota, isPreferred, shouldTryNextFlavor)
with the default feature gates (FlavorFungibility on, TopologyAwareScheduling without topologies).

UPSTREAM-DIFF: the first attempt of a Workload only. Kueue remembers, across cycles, the last
flavor it tried per podset and resource (Workload.LastAssignment) and resumes after it; an answer
for a pending job is its first attempt after a change of the ClusterQueue, where that memory is
cleared (lastAssignmentOutdated), so we always start at the first flavor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import IntEnum

from kubectl_wap.quantity import format_amount
from kubectl_wap.queueing.kueue.objects import (
    NEVER,
    PREEMPTION_OVER_BORROWING,
    TRY_NEXT_FLAVOR,
    ClusterQueue,
    FlavorResource,
    PodSet,
    ResourceFlavor,
    ResourceGroup,
    Workload,
)
from kubectl_wap.queueing.kueue.quota import Node, cq_available, lowest_subtree_that_fits, potential_available

# FlavorAssignmentMode: the order matters (a podset's mode is its worst flavor's).
NO_FIT, PREEMPT, FIT = 0, 1, 2
MODE_NAMES = {NO_FIT: "NoFit", PREEMPT: "Preempt", FIT: "Fit"}


class Possibility(IntEnum):
    """flavorassigner.go preemptionMode (granular; higher is better)."""

    NO_FIT = 0
    NO_CANDIDATES = 1  # preemption could help by quota, but the simulation found no targets
    PREEMPT = 2  # targets include the ClusterQueue's own workloads
    RECLAIM = 3  # targets only in other ClusterQueues of the cohort
    FIT = 4

    def assignment_mode(self) -> int:
        return NO_FIT if self == Possibility.NO_FIT else FIT if self == Possibility.FIT else PREEMPT


# (fr, quantity) -> (possibility, borrowing level after the preemptions): preemption.NewOracle.
PreemptionOracle = Callable[[FlavorResource, int], tuple[Possibility, int]]


@dataclass(frozen=True, slots=True)
class FlavorChoice:
    flavor: str
    mode: int  # NO_FIT / PREEMPT / FIT
    borrow: int  # height of the lowest cohort subtree that holds it (0: the ClusterQueue's own quota)


@dataclass(frozen=True, slots=True)
class PodSetAssignment:
    name: str
    count: int
    requests: Mapping[str, int]  # the podset's total per resource
    flavors: Mapping[str, FlavorChoice]  # by resource
    reasons: tuple[str, ...]  # why a flavor does not fit now (sorted, as Status.Message sorts)
    error: str | None = None

    @property
    def mode(self) -> int:
        """PodSetAssignment.RepresentativeMode."""
        if not self.reasons and self.error is None:
            return FIT
        if self.error is not None or not self.flavors:
            return NO_FIT
        return min(c.mode for c in self.flavors.values())


@dataclass(frozen=True, slots=True)
class Assignment:
    pod_sets: tuple[PodSetAssignment, ...]
    borrowing: int  # Assignment.Borrowing: the highest borrow level of any flavor
    usage: Mapping[FlavorResource, int]  # Assignment.Usage.Quota

    @property
    def mode(self) -> int:
        """Assignment.RepresentativeMode: the worst podset's mode; no podset: NoFit."""
        if not self.pod_sets:
            return NO_FIT
        return min(ps.mode for ps in self.pod_sets)

    def message(self) -> str:
        """Assignment.Message."""
        parts = []
        for ps in self.pod_sets:
            if ps.mode == FIT and not ps.reasons and ps.error is None:
                continue
            if ps.error is not None:
                return f"failed to assign flavors to pod set {ps.name}: {ps.error}"
            parts.append(f"couldn't assign flavors to pod set {ps.name}: {', '.join(ps.reasons)}")
        return "; ".join(parts)

    def needs_preemption(self) -> set[FlavorResource]:
        """preemption.go flavorResourcesNeedPreemption."""
        return {(c.flavor, r) for ps in self.pod_sets for r, c in ps.flavors.items() if c.mode == PREEMPT}

    def total_requests(self) -> dict[FlavorResource, int]:
        """Assignment.TotalRequestsFor: what the workload would use, per flavor (zero requests,
        which may have no flavor, left out)."""
        out: dict[FlavorResource, int] = {}
        for ps in self.pod_sets:
            for r, q in ps.requests.items():
                if q == 0 or r not in ps.flavors:
                    continue
                fr = (ps.flavors[r].flavor, r)
                out[fr] = out.get(fr, 0) + q
        return out


def _check_flavor(flavor: ResourceFlavor | None, name: str, ps: PodSet, label_keys: frozenset[str]) -> str | None:
    """checkFlavorForPodSets: the flavor's taints tolerated (NoSchedule/NoExecute), the podset's
    node selector (on the keys the group's flavors label) matched by the flavor's node labels."""
    if flavor is None:
        return f"flavor {name} not found"
    tolerations = (*ps.tolerations, *flavor.tolerations)
    for taint in flavor.node_taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(t.tolerates(taint) for t in tolerations):  # model Toleration.tolerates (ToleratesTaint)
            shown = f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"
            return f"untolerated taint {shown} in flavor {name}"
    labels = dict(flavor.node_labels)
    for k, v in ps.node_selector:
        if k in label_keys and labels.get(k) != v:
            return f"flavor {name} doesn't match node affinity"
    return None


def _is_preferred(a: tuple[Possibility, int], b: tuple[Possibility, int], preference: str | None) -> bool:
    """flavorassigner.go isPreferred over (preemption mode, borrowing level)."""
    if a[0] == Possibility.NO_FIT:
        return False
    if b[0] == Possibility.NO_FIT:
        return True
    if preference == PREEMPTION_OVER_BORROWING:
        if a[1] != b[1]:
            return a[1] < b[1]
        return a[0] > b[0]
    # BorrowingOverPreemption, and the default (BORROWING_OVER_PREEMPTION or none)
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1]


def _should_try_next(mode: tuple[Possibility, int], cq: ClusterQueue) -> bool:
    """flavorassigner.go shouldTryNextFlavor."""
    if mode[0] in (Possibility.NO_FIT, Possibility.NO_CANDIDATES):
        return True
    if mode[0] in (Possibility.PREEMPT, Possibility.RECLAIM) and cq.fungibility.when_can_preempt == TRY_NEXT_FLAVOR:
        return True
    return mode[1] != 0 and cq.fungibility.when_can_borrow == TRY_NEXT_FLAVOR


def _fits_quota(node: Node, fr: FlavorResource, assumed: int, request: int,
                oracle: PreemptionOracle, fair_sharing: bool) -> tuple[Possibility, int, str | None]:
    """flavorassigner.go fitsResourceQuota."""
    cq = node.spec
    assert cq is not None
    val = assumed + request
    max_capacity = potential_available(node, fr)
    res, flavor = fr[1], fr[0]
    if val > max_capacity:
        return Possibility.NO_FIT, 0, (
            f"insufficient quota for {res} in flavor {flavor}, previously considered podsets requests "
            f"({format_amount(res, assumed)}) + current podset request ({format_amount(res, request)}) > "
            f"maximum capacity ({format_amount(res, max_capacity)})")
    borrow, may_reclaim = lowest_subtree_that_fits(node, fr, val)
    avail = cq_available(node, fr)
    if val <= avail:
        return Possibility.FIT, borrow, None
    reason = f"insufficient unused quota for {res} in flavor {flavor}, {format_amount(res, val - avail)} more needed"
    # canPreemptWhileBorrowing: borrowWithinCohort, or fair sharing with reclaimWithinCohort.
    can_preempt_while_borrowing = (cq.preemption.borrow_within_cohort != NEVER
                                   or (fair_sharing and cq.preemption.reclaim_within_cohort != NEVER))
    if val <= node.nominal(fr) or may_reclaim or can_preempt_while_borrowing:
        possibility, borrow_after = oracle(fr, val)
        return possibility, borrow_after, reason
    return Possibility.NO_FIT, borrow, reason


def assign_flavors(wl: Workload, node: Node, flavors: Mapping[str, ResourceFlavor],
                   oracle: PreemptionOracle, fair_sharing: bool = False) -> Assignment:
    """FlavorAssigner.assignFlavors for the whole Workload (no partial admission counts)."""
    cq = node.spec
    assert cq is not None
    group_of: dict[str, ResourceGroup] = {r: g for g in cq.resource_groups for r in g.covered}
    covers_pods = "pods" in group_of
    usage: dict[FlavorResource, int] = {}
    borrowing = 0
    out: list[PodSetAssignment] = []
    for ps in wl.pod_sets:
        requests = ps.total()
        if covers_pods:
            requests["pods"] = ps.count
        chosen: dict[str, FlavorChoice] = {}
        reasons: list[str] = []
        error = None
        failed = False
        for res, quantity in requests.items():
            if quantity == 0 and res not in group_of:
                continue  # zero-quantity requests of resources the ClusterQueue does not define (#8079)
            if res in chosen:
                continue  # assigned with its resource group
            rg = group_of.get(res)
            if rg is None:
                reasons = [f"resource {res} unavailable in ClusterQueue"]
                chosen, failed = {}, True
                break
            got, status = _find_flavor(ps, requests, rg, node, flavors, usage, oracle, fair_sharing)
            if not got:
                reasons = list(status)
                chosen, failed = {}, True
                break
            chosen.update(got)
            reasons.extend(status)
        psa = PodSetAssignment(ps.name, ps.count, requests, chosen, tuple(sorted(reasons)), error)
        out.append(psa)
        for res, c in chosen.items():  # Assignment.append
            borrowing = max(borrowing, c.borrow)
            usage[(c.flavor, res)] = usage.get((c.flavor, res), 0) + requests[res]
        if failed:
            break
    return Assignment(tuple(out), borrowing, usage)


def _find_flavor(ps: PodSet, requests: Mapping[str, int], rg: ResourceGroup, node: Node,
                 flavors: Mapping[str, ResourceFlavor], assignment_usage: Mapping[FlavorResource, int],
                 oracle: PreemptionOracle, fair_sharing: bool) -> tuple[dict[str, FlavorChoice], list[str]]:
    """findFlavorForPodSets for one podset and the resource group of one of its resources: the
    flavor for all the group's resources, and the reasons when it does not simply fit."""
    cq = node.spec
    assert cq is not None
    label_keys = frozenset(k for f in rg.flavors if f in flavors for k, _ in flavors[f].node_labels)
    group_requests = {r: q for r, q in requests.items() if r in rg.covered}
    status: list[str] = []
    best: dict[str, FlavorChoice] = {}
    best_mode: tuple[Possibility, int] = (Possibility.NO_FIT, 1 << 62)
    for fname in rg.flavors:
        why = _check_flavor(flavors.get(fname), fname, ps, label_keys)
        if why is not None:
            status.append(why)
            continue
        assignments: dict[str, FlavorChoice] = {}
        rep: tuple[Possibility, int] = (Possibility.FIT, 0)
        for res, val in group_requests.items():
            fr = (fname, res)
            possibility, borrow, reason = _fits_quota(node, fr, assignment_usage.get(fr, 0), val, oracle, fair_sharing)
            if reason is not None:
                status.append(reason)
            mode = (possibility, borrow)
            if _is_preferred(rep, mode, cq.fungibility.preference):
                rep = mode
            if rep[0] == Possibility.NO_FIT:
                break
            assignments[res] = FlavorChoice(fname, possibility.assignment_mode(), borrow)
        if not _should_try_next(rep, cq):
            best, best_mode = assignments, rep
            break
        if _is_preferred(rep, best_mode, cq.fungibility.preference):
            best, best_mode = assignments, rep
    if best_mode[0] == Possibility.FIT:
        return best, []
    return best, status
