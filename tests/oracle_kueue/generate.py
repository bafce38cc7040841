"""Generated Kueue setups for the differential batch: a cohort of 2-4 ClusterQueues (sometimes one
outside it), 1-3 flavors, nominal quotas, borrowing and lending limits, preemption policies,
flavor fungibility, admitted Workloads that fit the quota when they were admitted, and 1-4
pending Workloads at a few priorities. Every field is written out (the oracle feeds the objects to
Kueue's cache directly, with no API server to apply the CRD defaults); distinct creation and
reservation times and UIDs leave no tie to the whim of Go's unstable sort.

About half the setups turn Kueue's fair sharing on (the case's fairSharing), with ClusterQueue and
Cohort weights 0-3 (0 included: a zero-weight borrower is last in every order) and now and then a
single preemption strategy instead of the default pair. Those choices draw from a random stream of
their own, so the rest of a seed's setup is what it was before fair sharing was generated."""

from __future__ import annotations

import random
from typing import Any

from kubectl_wap.queueing.kueue.objects import read_objects
from kubectl_wap.queueing.kueue.quota import Snapshot, cq_available

NS = "team"
GPU = "example.com/gpu"


def _ts(seconds: int) -> str:
    return f"2026-01-01T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}Z"


def _pod_spec(requests: dict[str, int], selector: dict[str, str] | None, tolerate: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {r: str(q) for r, q in requests.items()}}}]}
    if selector:
        spec["nodeSelector"] = selector
    if tolerate:
        spec["tolerations"] = [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]
    return spec


def generate(seed: int) -> dict[str, Any]:
    """Seeds with seed % 3 == 2 build a cohort tree (Cohort objects "co" and "co2" under "root",
    some with quota of their own) and more contention; the others a flat cohort. Seeds with
    seed % 3 == 1 may put the GPUs in a resource group of their own, with flavors g0, g1."""
    rng = random.Random(seed)
    # Fair sharing's choices draw from a stream of their own (see the module's docstring).
    frng = random.Random(f"fair-{seed}")
    fair = frng.random() < 0.5
    tree = seed % 3 == 2
    split = seed % 3 == 1 and rng.random() < 0.5
    n_flavors = rng.randint(1, 3)
    flavors = []
    for i in range(n_flavors):
        spec: dict[str, Any] = {"nodeLabels": {"pool": f"p{i}"}}
        if rng.random() < 0.15:
            spec["nodeTaints"] = [{"key": "spot", "value": "true", "effect": "NoSchedule"}]
        flavors.append({"metadata": {"name": f"f{i}"}, "spec": spec})
    with_gpu = split or rng.random() < 0.25
    resources = ["cpu", GPU] if with_gpu else ["cpu"]
    if split:
        flavors += [{"metadata": {"name": f"g{i}"}, "spec": {"nodeLabels": {"gpu": f"g{i}"}}} for i in range(2)]
    # (covered resources, flavor names) per resource group
    group_defs = ([(["cpu"], [f"f{i}" for i in range(n_flavors)]), ([GPU], ["g0", "g1"])] if split
                  else [(resources, [f"f{i}" for i in range(n_flavors)])])
    n_cqs = rng.randint(2, 4)
    cqs, lqs = [], []
    for i in range(n_cqs):
        cohort = "co" if (i < 2 or rng.random() < 0.85) else None
        if tree and i >= 2:
            cohort = rng.choice(["co2", "co2", "root", None])
        groups = []
        for covered, fnames in group_defs:
            group: dict[str, Any] = {"coveredResources": covered, "flavors": []}
            order = list(fnames)
            if rng.random() < 0.3:
                rng.shuffle(order)
            for fname in order:
                res = []
                for r in covered:
                    q: dict[str, Any] = {"name": r, "nominalQuota": str(rng.choice([0, 2, 4, 4, 6, 8, 10]))}
                    if cohort and rng.random() < 0.3:
                        q["borrowingLimit"] = str(rng.choice([0, 1, 2, 4]))
                    if cohort and rng.random() < 0.25:
                        q["lendingLimit"] = str(rng.choice([0, 1, 2, 4]))
                    res.append(q)
                group["flavors"].append({"name": fname, "resources": res})
            groups.append(group)
        preemption: dict[str, Any] = {
            "withinClusterQueue": rng.choice(["Never", "LowerPriority", "LowerOrNewerEqualPriority"]),
            "reclaimWithinCohort": rng.choice(["Never", "LowerPriority", "Any"]),
            "borrowWithinCohort": {"policy": rng.choice(["Never", "Never", "LowerPriority"])},
        }
        if preemption["borrowWithinCohort"]["policy"] != "Never" and rng.random() < 0.5:
            preemption["borrowWithinCohort"]["maxPriorityThreshold"] = rng.choice([0, 10])
        if fair and frng.random() < 0.5:
            # fair sharing preempts across the cohort only under reclaimWithinCohort: more often on
            preemption["reclaimWithinCohort"] = frng.choice(["LowerPriority", "Any"])
        fung: dict[str, Any] = {"whenCanBorrow": rng.choice(["MayStopSearch", "TryNextFlavor"]),
                                "whenCanPreempt": rng.choice(["MayStopSearch", "TryNextFlavor"])}
        if rng.random() < 0.3:
            fung["preference"] = rng.choice(["BorrowingOverPreemption", "PreemptionOverBorrowing"])
        spec = {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO", "resourceGroups": groups,
                "preemption": preemption, "flavorFungibility": fung, "stopPolicy": "None"}
        if cohort:
            spec["cohortName"] = cohort
        cqs.append({"metadata": {"name": f"cq{i}"}, "spec": spec})
        lqs.append({"metadata": {"name": f"lq{i}", "namespace": NS}, "spec": {"clusterQueue": f"cq{i}"}})
    case: dict[str, Any] = {"namespaces": [{"metadata": {"name": NS}}], "resourceFlavors": flavors,
                            "clusterQueues": cqs, "localQueues": lqs, "workloads": [], "cycles": 1}
    if tree:
        cohorts = []
        for name, parent in (("root", None), ("co", "root"), ("co2", "root")):
            spec: dict[str, Any] = {}
            if parent:
                spec["parentName"] = parent
            if rng.random() < 0.4:
                q: dict[str, Any] = {"name": "cpu", "nominalQuota": str(rng.choice([2, 4]))}
                if parent and rng.random() < 0.3:
                    q["lendingLimit"] = str(rng.choice([0, 2]))
                if parent and rng.random() < 0.3:
                    q["borrowingLimit"] = str(rng.choice([0, 2, 4]))
                res = [q] + [{"name": r, "nominalQuota": "0"} for r in resources[1:]]
                spec["resourceGroups"] = [{"coveredResources": resources,
                                           "flavors": [{"name": "f0", "resources": res}]}]
            cohorts.append({"metadata": {"name": name}, "spec": spec})
        case["cohorts"] = cohorts
    t = 0
    # Creation times: distinct, in random order between admitted and pending Workloads (a pending
    # one may be older than an admitted one: LowerOrNewerEqualPriority's "newer" then matters).
    created = rng.sample(range(1, 400), 30)
    # Admitted Workloads, each admitted where it fitted at its time (as Kueue would have); some
    # already evicted (Evicted=True, quota still reserved: preemption in flight).
    # With fair sharing, more admitted Workloads: more ClusterQueues borrow, and have shares.
    for j in range(rng.randint(0, 12 if tree else 7) + (frng.randint(0, 6) if fair else 0)):
        cq = rng.randrange(n_cqs)
        chosen: dict[str, str] = {}
        for covered, fnames in group_defs:
            fname = rng.choice(fnames)
            chosen.update({r: fname for r in covered})
        req = {r: rng.randint(1, 5) for r in resources}
        snap = Snapshot(read_objects(case))
        node = snap.cluster_queues[f"cq{cq}"]
        if any(cq_available(node, (chosen[r], r)) < q for r, q in req.items()):
            continue
        t += 1
        name = f"adm{j}"
        case["workloads"].append({
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "creationTimestamp": _ts(created[t])},
            "spec": {"queueName": f"lq{cq}", "priority": rng.choice([0, 5, 10, 20]), "active": True,
                     "podSets": [{"name": "main", "count": 1, "template": {"spec": _pod_spec(req, None, True)}}]},
            "status": {
                "admission": {"clusterQueue": f"cq{cq}", "podSetAssignments": [{
                    "name": "main", "flavors": dict(chosen),
                    "resourceUsage": {r: str(q) for r, q in req.items()}, "count": 1}]},
                "conditions": [
                    {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "",
                     "lastTransitionTime": _ts(1000 + created[t])},
                    {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "",
                     "lastTransitionTime": _ts(1000 + created[t])}]
                + ([{"type": "Evicted", "status": "True", "reason": "Preempted", "message": "",
                     "lastTransitionTime": _ts(2000 + created[t])}] if rng.random() < 0.08 else [])},
        })
    for j in range(rng.randint(1, 6 if tree else 4) + (frng.randint(0, 2) if fair else 0)):
        cq = rng.randrange(n_cqs)
        t += 1
        name = f"pend{j}"
        pod_sets = []
        for k in range(1 if rng.random() < 0.8 else 2):
            count = rng.choice([1, 1, 2]) + (frng.randint(0, 1) if fair else 0)
            req = {r: rng.randint(1, 5) for r in resources}
            selector = {"pool": f"p{rng.randrange(n_flavors)}"} if rng.random() < 0.15 else None
            pod_sets.append({"name": f"ps{k}", "count": count,
                             "template": {"spec": _pod_spec(req, selector, rng.random() < 0.7)}})
        case["workloads"].append({
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "creationTimestamp": _ts(created[t])},
            "spec": {"queueName": f"lq{cq}", "priority": rng.choice([0, 5, 10, 20]), "active": True, "podSets": pod_sets},
        })
    if fair:
        _fair_sharing(case, frng)
    _admission_checks(case, random.Random(f"checks-{seed}"))
    return case


CHECK_CONTROLLERS = ("kueue.x-k8s.io/provisioning-request", "kueue.x-k8s.io/provisioning-request", "example.com/approval",
                     "kueue.x-k8s.io/multikueue")
CHECK_STATES = ("Pending", "Ready", "Ready", "Retry", "Rejected")


def _admission_checks(case: dict[str, Any], rng: random.Random) -> None:
    """In about 40 % of the setups, AdmissionChecks (mostly Active, mostly ProvisioningRequest,
    now and then MultiKueue) named by some ClusterQueues' admissionChecksStrategy, on every flavor
    or onFlavors, now and then a check that does not exist; some pending Workloads carry check
    states (a Retry or Rejected one keeps them from nomination), some admitted ones are not yet
    Admitted. From a random stream of their own: the rest of a seed's setup is unchanged."""
    if rng.random() >= 0.4:
        return
    checks = []
    for i in range(rng.randint(1, 3)):
        obj: dict[str, Any] = {"metadata": {"name": f"ac{i}"}, "spec": {"controllerName": rng.choice(CHECK_CONTROLLERS)}}
        r = rng.random()
        if r < 0.85:
            obj["status"] = {"conditions": [{"type": "Active", "status": "True", "reason": "Active", "message": "",
                                             "lastTransitionTime": _ts(1)}]}
        elif r < 0.93:
            obj["status"] = {"conditions": [{"type": "Active", "status": "False", "reason": "Inactive", "message": "",
                                             "lastTransitionTime": _ts(1)}]}
        checks.append(obj)
    case["admissionChecks"] = checks
    names = [c["metadata"]["name"] for c in checks] + (["missing"] if rng.random() < 0.15 else [])
    rules_of: dict[str, list[str]] = {}
    for cq in case["clusterQueues"]:
        if rng.random() >= 0.6:
            continue
        flavors = [f["name"] for g in cq["spec"]["resourceGroups"] for f in g["flavors"]]
        rules = []
        for name in rng.sample(names, rng.randint(1, min(2, len(names)))):
            rule: dict[str, Any] = {"name": name}
            if rng.random() < 0.5:
                rule["onFlavors"] = sorted(rng.sample(flavors, rng.randint(1, len(flavors))))
            rules.append(rule)
        cq["spec"]["admissionChecksStrategy"] = {"admissionChecks": rules}
        rules_of[cq["metadata"]["name"]] = [r["name"] for r in rules]
    lq_cq = {lq["metadata"]["name"]: lq["spec"]["clusterQueue"] for lq in case["localQueues"]}
    for wl in case["workloads"]:
        cq_checks = rules_of.get(lq_cq[wl["spec"]["queueName"]], [])
        if not cq_checks:
            continue
        status = wl.setdefault("status", {})
        if status.get("admission"):
            if rng.random() < 0.5:  # quota reserved, checks not all Ready yet: not Admitted
                status["conditions"] = [c for c in status["conditions"] if c["type"] != "Admitted"]
        elif rng.random() < 0.3:
            status["admissionChecks"] = [{"name": n, "state": rng.choice(CHECK_STATES), "message": "",
                                          "lastTransitionTime": _ts(5)} for n in cq_checks if rng.random() < 0.8]


def _fair_sharing(case: dict[str, Any], rng: random.Random) -> None:
    """Fair sharing on, weights on some ClusterQueues and Cohorts, sometimes one strategy."""
    case["fairSharing"] = True
    r = rng.random()
    if r < 0.1:
        case["fairSharingStrategies"] = ["LessThanOrEqualToFinalShare"]
    elif r < 0.2:
        case["fairSharingStrategies"] = ["LessThanInitialShare"]
    for obj in [*case["clusterQueues"], *case.get("cohorts", [])]:
        if rng.random() < 0.5:
            obj.setdefault("spec", {})["fairSharing"] = {"weight": rng.choice(["0", "1", "2", "3", "500m"])}
