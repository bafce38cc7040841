"""Fluent builders of kueue.x-k8s.io/v1beta2 objects (as JSON dicts) for the Kueue model's tests and
the transcriptions of Kueue's own test cases (tests/kueue_cases.py). Every field Kueue reads is
written out: the Kueue oracle feeds these objects to Kueue's cache with no API server to default
them."""

from __future__ import annotations

import copy
from typing import Any

NS = "default"
EPOCH = 1767225600  # 2026-01-01T00:00:00Z


def ts(seconds: float) -> str:
    """An RFC 3339 time `seconds` after EPOCH."""
    from datetime import datetime, timezone

    return datetime.fromtimestamp(EPOCH + seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def flavor(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"nodeLabels": dict(labels)} if labels else {}}


class CQ:
    """MakeClusterQueue: ResourceGroup(FlavorQuotas(...)) with Resource(name, nominal[, borrowing[, lending]])."""

    def __init__(self, name: str) -> None:
        self.obj: dict[str, Any] = {"metadata": {"name": name}, "spec": {
            "namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO", "stopPolicy": "None", "resourceGroups": [],
            "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
            "preemption": {"withinClusterQueue": "Never", "reclaimWithinCohort": "Never",
                           "borrowWithinCohort": {"policy": "Never"}}}}

    def selector_in(self, key: str, *values: str) -> CQ:
        """NamespaceSelector with one matchExpression key In values."""
        self.obj["spec"]["namespaceSelector"] = {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}
        return self

    def strict_fifo(self) -> CQ:
        self.obj["spec"]["queueingStrategy"] = "StrictFIFO"
        return self

    def cohort(self, name: str) -> CQ:
        self.obj["spec"]["cohortName"] = name
        return self

    def group(self, *flavors: tuple[str, list[tuple[str, str, str | None, str | None]]]) -> CQ:
        """A resource group: (flavor, [(resource, nominal, borrowingLimit, lendingLimit)]) each."""
        covered: list[str] = []
        fqs = []
        for fname, resources in flavors:
            res = []
            for r, nominal, borrowing, lending in resources:
                if r not in covered:
                    covered.append(r)
                q: dict[str, Any] = {"name": r, "nominalQuota": nominal}
                if borrowing:
                    q["borrowingLimit"] = borrowing
                if lending:
                    q["lendingLimit"] = lending
                res.append(q)
            fqs.append({"name": fname, "resources": res})
        self.obj["spec"]["resourceGroups"].append({"coveredResources": covered, "flavors": fqs})
        return self

    def preemption(self, within: str = "Never", reclaim: str = "Never", borrow: str = "Never",
                   threshold: int | None = None) -> CQ:
        p: dict[str, Any] = {"withinClusterQueue": within, "reclaimWithinCohort": reclaim, "borrowWithinCohort": {"policy": borrow}}
        if threshold is not None:
            p["borrowWithinCohort"]["maxPriorityThreshold"] = threshold
        self.obj["spec"]["preemption"] = p
        return self

    def fungibility(self, when_can_borrow: str, when_can_preempt: str, preference: str | None = None) -> CQ:
        f: dict[str, Any] = {"whenCanBorrow": when_can_borrow, "whenCanPreempt": when_can_preempt}
        if preference:
            f["preference"] = preference
        self.obj["spec"]["flavorFungibility"] = f
        return self

    def weight(self, w: str) -> CQ:
        """FairWeight: spec.fairSharing.weight."""
        self.obj["spec"]["fairSharing"] = {"weight": w}
        return self

    def build(self) -> dict[str, Any]:
        return copy.deepcopy(self.obj)


def res(name: str, nominal: str, borrowing: str | None = None, lending: str | None = None) -> tuple[str, str, str | None, str | None]:
    return (name, nominal, borrowing, lending)


def local_queue(name: str, cq: str, namespace: str = NS) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"clusterQueue": cq}}


class WL:
    """MakeWorkload: one podset "main" of count 1 unless podsets are given."""

    def __init__(self, name: str, namespace: str = NS) -> None:
        self.namespace = namespace
        self.obj: dict[str, Any] = {
            "metadata": {"name": name, "namespace": namespace, "uid": f"{namespace}-{name}", "creationTimestamp": ts(0)},
            "spec": {"queueName": "", "priority": 0, "active": True, "podSets": []}}

    def queue(self, lq: str) -> WL:
        self.obj["spec"]["queueName"] = lq
        return self

    def priority(self, p: int) -> WL:
        self.obj["spec"]["priority"] = p
        return self

    def created(self, seconds: float) -> WL:
        self.obj["metadata"]["creationTimestamp"] = ts(seconds)
        return self

    def podset(self, name: str, count: int, **requests: str) -> WL:
        reqs = {k.replace("__", "/").replace("_", "."): v for k, v in requests.items()}
        self.obj["spec"]["podSets"].append({"name": name, "count": count, "template": {"spec": {
            "containers": [{"name": "c", "resources": {"requests": reqs}}]}}})
        return self

    def request(self, **requests: str) -> WL:
        return self.podset("main", 1, **requests)

    def admitted(self, cq: str, flavors: dict[str, str], at: float = 0) -> WL:
        """ReserveQuotaAt: status.admission (usage = each podset's requests x count) and True
        QuotaReserved/Admitted conditions at `at`."""
        from kubectl_wap.quantity import parse_quantity

        psas = []
        for ps in self.obj["spec"]["podSets"]:
            reqs = ps["template"]["spec"]["containers"][0]["resources"]["requests"]
            usage = {r: _quantity(parse_quantity(q) * ps["count"]) for r, q in reqs.items()}
            psas.append({"name": ps["name"], "flavors": {r: flavors[r] for r in reqs}, "resourceUsage": usage,
                         "count": ps["count"]})
        self.obj["status"] = {"admission": {"clusterQueue": cq, "podSetAssignments": psas}, "conditions": [
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "", "lastTransitionTime": ts(at)},
            {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "", "lastTransitionTime": ts(at)}]}
        return self

    def build(self) -> dict[str, Any]:
        return copy.deepcopy(self.obj)


def _quantity(f: Any) -> str:
    return str(f.numerator) if f.denominator == 1 else f"{int(f * 1000)}m"


def case(flavors: list[dict[str, Any]], cqs: list[dict[str, Any]], workloads: list[dict[str, Any]],
         namespaces: tuple[str, ...] = (NS,)) -> dict[str, Any]:
    """One case: a LocalQueue "lq-<cq>" in `default` for every ClusterQueue."""
    return {"namespaces": [{"metadata": {"name": n}} for n in namespaces], "resourceFlavors": flavors,
            "clusterQueues": cqs, "localQueues": [local_queue(f"lq-{c['metadata']['name']}", c["metadata"]["name"]) for c in cqs],
            "workloads": workloads, "cycles": 1}


def cohort(name: str, parent: str | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"parentName": parent} if parent else {}}
