"""Does the Kueue differential batch have teeth? Each mutant breaks one rule of our model
(kubectl_wap/queueing/kueue) the way a plausible misreading of Kueue would; the batch must
disagree with Kueue's real scheduler on some generated setup for every mutant.

    python -m tests.oracle_kueue mutants --cases 300 --seed 1

Kueue answers each case once; every mutant is then our model's answer alone."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from kubectl_wap.queueing.kueue import admissionchecks, cycle, fairpreempt, fairshare, flavors, preemption, quota

from . import driver
from .driver import model_answer, oracle_answer, run
from .generate import generate


@contextlib.contextmanager
def _patched(module: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def _ignore_borrowing_limit(node: quota.Node, fr: Any) -> int:
    if node.parent is None:
        return node.subtree_quota.get(fr, 0) - node.usage.get(fr, 0)
    return node.local_available(fr) + quota.available(node.parent, fr)


def _lending_ignored(self: quota.Node, fr: Any) -> int:
    return 0


def _less_without_drs(self: Any, a: str, b: str, parent: str, drs: Any) -> bool:
    wa, wb = self.wl_of(self.pending[a]), self.wl_of(self.pending[b])
    if wa.priority != wb.priority:
        return bool(wa.priority > wb.priority)
    return bool(wa.created < wb.created)


_real_is_preferred = flavors._is_preferred
_real_satisfies = preemption.satisfies_policy


_real_inactive = admissionchecks.inactive_reasons


MUTANTS: dict[str, Callable[[], contextlib.AbstractContextManager[None]]] = {
    # clusterqueue.go updateWithAdmissionChecks: a missing or inactive check read as harmless
    "inactive-checks-ignored": lambda: _patched(
        admissionchecks, "inactive_reasons", lambda cq, fl: _real_inactive(replace(cq, admission_checks=()), fl)),
    # Cache.Snapshot: an inactive ClusterQueue's Workloads kept as preemption candidates
    "inactive-cluster-queue-candidates-kept": lambda: _patched(quota, "active_cluster_queues", lambda objs: set(objs.cluster_queues)),
    # AdmissionChecksForWorkload: onFlavors ignored (every check applies)
    "on-flavors-ignored": lambda: _patched(driver, "checks_for_workload", lambda cq, flavors: cq.admission_checks),
    # Scheduler.nominate: a Retry/Rejected check does not keep the Workload from nomination
    "failed-checks-ignored": lambda: _patched(cycle, "failed_checks", lambda wl: []),
    # flavorassigner.go isPreferred: borrowing level before preemption mode by default
    "fungibility-default-prefers-less-borrowing": lambda: _patched(
        flavors, "_is_preferred", lambda a, b, p: _real_is_preferred(a, b, "PreemptionOverBorrowing")),
    # shouldTryNextFlavor: whenCanBorrow ignored
    "when-can-borrow-ignored": lambda: _patched(
        flavors, "_should_try_next", lambda mode, cq: mode[0] in (flavors.Possibility.NO_FIT, flavors.Possibility.NO_CANDIDATES)
        or (mode[0] in (flavors.Possibility.PREEMPT, flavors.Possibility.RECLAIM) and cq.fungibility.when_can_preempt == "TryNextFlavor")),
    # preemption.go fillBackWorkloads left out
    "no-fill-back": lambda: _patched(preemption, "_fill_back", lambda ctx, targets, allow: list(targets)),
    # LowerOrNewerEqualPriority read as LowerPriority
    "newer-equal-priority-not-preemptible": lambda: _patched(
        preemption, "satisfies_policy",
        lambda a, b, policy: _real_satisfies(a, b, "LowerPriority" if policy == "LowerOrNewerEqualPriority" else policy)),
    # resource_node.go available: the borrowing limit ignored
    "borrowing-limit-ignored": lambda: _patched(quota, "available", _ignore_borrowing_limit),
    # resource_node.go localQuota: the lending limit ignored (all quota lent)
    "lending-limit-ignored": lambda: _patched(quota.Node, "local_quota", _lending_ignored),
    # scheduler.go: a Preempt entry without targets never reserves (CanAlwaysReclaim always true)
    "never-reserve-for-no-candidates": lambda: _patched(cycle, "_to_reserve", lambda a, node: {}),
    # makeClassicalIterator: borrowing level not part of the entry order
    "entry-order-ignores-borrowing": lambda: _patched(cycle, "_entry_key", lambda e: (-e.wl.priority, e.wl.created)),
    # fair_sharing_iterator.go entryComparer.less: the tournament by priority and age alone
    "fair-tournament-ignores-drs": lambda: _patched(fairshare.FairSharingIterator, "_less", _less_without_drs),
    # preemption.go fairPreemptions: the second strategy (rule S2-b, LessThanInitialShare) left out
    "fair-second-strategy-skipped": lambda: _patched(fairpreempt, "_second_strategy", lambda ctx, retry, targets, key: (False, targets)),
    # FairSharingPreemptWithinNominal: a preemptor within nominal held to the shares like any other
    "fair-within-nominal-not-owed": lambda: _patched(fairpreempt, "_within_nominal", lambda ctx: False),
    # fair_sharing.go PreciseWeightedShare: spec.fairSharing.weight ignored (every node weight 1)
    "fair-weight-ignored": lambda: _patched(fairshare.DRS, "share", lambda self: self.ratio),
}


def main(cases: int, seed: int) -> int:
    batch = [generate(s) for s in range(seed, seed + cases)]
    theirs = [oracle_answer(a) for a in run(batch)]
    ours = [model_answer(c) for c in batch]
    base = sum(o != t for o, t in zip(ours, theirs, strict=True))
    print(f"unmutated: {base} of {cases} disagree")
    survived = 0
    for name, mutant in MUTANTS.items():
        with mutant():
            n = sum(model_answer(c) != t for c, t in zip(batch, theirs, strict=True))
        survived += n == 0
        print(f"{name}: {n} of {cases} disagree{'  (SURVIVED)' if n == 0 else ''}")
    return 1 if base or survived else 0
