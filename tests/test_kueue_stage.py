"""The Kueue stage of a two-stage answer: a submitted batch/v1 Job's Workload
(queueing/kueue/jobs.py, after Kueue's job_controller.go PodSets and jobframework ExtractPriority),
what the next Kueue cycle does with it (queueing/kueue/answer.py) and its words and JSON
(report/kueue.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_wap.queueing.kueue.answer import (
    STAGE_ADMITTED,
    STAGE_ADMITTED_AFTER_EVICTIONS,
    STAGE_NOT_ADMITTED,
    STAGE_NOT_MANAGED,
    STAGE_QUEUED,
    kueue_stage,
)
from kubectl_wap.queueing.kueue.jobs import job_priority, workload_for_job
from kubectl_wap.queueing.kueue.objects import KueueInputError, KueueNotModelled, read_objects
from kubectl_wap.report.kueue import kueue_json, kueue_line
from tests.kueue_builders import CQ, WL, case, flavor, res
from tests.oracle_kueue import driver

GPU = "example.com/gpu"
NOW = 1767225600.0 + 3600


def _job(gpus: str, parallelism: int = 1, completions: int | None = None, queue: str | None = "lq-a",
         labels: dict[str, str] | None = None, kind: str = "Job") -> dict[str, Any]:
    lab = dict(labels or {})
    if queue:
        lab["kueue.x-k8s.io/queue-name"] = queue
    spec: dict[str, Any] = {"parallelism": parallelism, "template": {"spec": {
        "containers": [{"name": "c", "resources": {"requests": {GPU: gpus}}}]}}}
    if completions is not None:
        spec["completions"] = completions
    return {"apiVersion": "batch/v1", "kind": kind, "metadata": {"name": "train", "namespace": "default", "labels": lab},
            "spec": spec}


def _ml(admitted: list[WL] = (), pending: list[WL] = (), reclaim: str = "Any") -> dict[str, Any]:  # type: ignore[assignment]
    cqs = [CQ("a").cohort("ml").group(("h100", [res(GPU, "4")])).preemption(within="LowerPriority", reclaim=reclaim).build(),
           CQ("b").cohort("ml").group(("h100", [res(GPU, "8")])).preemption(within="LowerPriority", reclaim=reclaim).build()]
    return case([flavor("h100")], cqs, [w.build() for w in [*admitted, *pending]])


def _stage(c: dict[str, Any], job: dict[str, Any], priority: int = 0):  # type: ignore[no-untyped-def]
    objs = read_objects(c)
    wl = workload_for_job(job, objs, priority=priority, created=NOW)
    return kueue_stage(objs, wl, NOW)


def test_admitted_borrowing_from_the_cohort() -> None:
    """min(parallelism 2, completions 4) = 2 pods of 3 GPUs (job_controller.go podsCount): 6 of a's
    nominal 4, 2 borrowed from b's unused quota in cohort ml."""
    s = _stage(_ml(), _job("3", parallelism=2, completions=4))
    assert s.outcome == STAGE_ADMITTED
    assert kueue_line(s) == f"Kueue: admitted to ClusterQueue a on flavor h100 (borrowing 2 {GPU} from cohort ml)"
    j = kueue_json(s)
    assert j["podSets"] == [{"name": "main", "count": 2, "flavors": {GPU: "h100"}}]
    assert j["borrowing"] == [{"flavor": "h100", "resource": GPU, "amount": 2}] and j["evictions"] == []


def test_admitted_after_reclaiming_quota_lent_to_the_cohort() -> None:
    """b borrows 4 of a's GPUs; a's job (4, within a's nominal) reclaims them: b's Workload is
    evicted first (InCohortReclamation), the job admitted in a later cycle."""
    s = _stage(_ml([WL("b-train").priority(100).request(**{GPU: "12"}).admitted("b", {GPU: "h100"})]), _job("4"))
    assert s.outcome == STAGE_ADMITTED_AFTER_EVICTIONS
    assert kueue_line(s) == ("Kueue: admitted to ClusterQueue a on flavor h100 once it has evicted Workloads "
                             "default/b-train (priority 100, reclamation within the cohort)")
    assert kueue_json(s)["evictions"] == [{"workload": "default/b-train", "clusterQueue": "b", "priority": 100,
                                           "reason": "InCohortReclamation", "owner": None}]


def test_not_admitted_says_why_in_one_line() -> None:
    s = _stage(_ml(), _job("13"))
    assert s.outcome == STAGE_NOT_ADMITTED
    line = kueue_line(s)
    assert "\n" not in line
    assert line == (f"Kueue: not admitted: ClusterQueue a: couldn't assign flavors to pod set main: insufficient quota for "
                    f"{GPU} in flavor h100, previously considered podsets requests (0) + current podset request (13) > "
                    "maximum capacity (12)")


def test_not_admitted_without_preemption_candidates() -> None:
    s = _stage(_ml([WL("b-train").request(**{GPU: "12"}).admitted("b", {GPU: "h100"})], reclaim="Never"), _job("4"))
    assert s.outcome == STAGE_NOT_ADMITTED
    assert kueue_line(s).endswith("no preemption possible: no Workload may be preempted for it under its ClusterQueue's "
                                  "preemption policies")


def test_queued_behind_a_higher_priority_workload() -> None:
    s = _stage(_ml(pending=[WL("first").queue("lq-a").priority(10).request(**{GPU: "1"})]), _job("1"))
    assert s.outcome == STAGE_QUEUED and [w.key for w in s.ahead] == ["default/first"]
    assert kueue_line(s).startswith("Kueue: queued in ClusterQueue a behind 1 Workload(s) (default/first)")


def test_no_queue_name_is_not_managed_unless_a_default_local_queue_exists() -> None:
    objs = read_objects(_ml())
    assert workload_for_job(_job("1", queue=None), objs, priority=0, created=NOW) is None
    s = kueue_stage(objs, None, NOW)
    assert s.outcome == STAGE_NOT_MANAGED and kueue_line(s).startswith("Kueue: not managed")
    c = _ml()
    c["localQueues"].append({"metadata": {"name": "default", "namespace": "default"}, "spec": {"clusterQueue": "b"}})
    wl = workload_for_job(_job("1", queue=None), read_objects(c), priority=0, created=NOW)
    assert wl is not None and wl.queue_name == "default"  # LocalQueueDefaulting (GA in v0.17.0)


def test_priority_from_workload_priority_class_then_priority_class() -> None:
    """jobframework.ExtractPriority: the WorkloadPriorityClass label wins over the pod's class."""
    job = _job("1", labels={"kueue.x-k8s.io/priority-class": "urgent"})
    job["spec"]["template"]["spec"]["priorityClassName"] = "low"
    assert job_priority(job, {"urgent": 1000}, {"low": 5}, None) == 1000
    del job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"]
    assert job_priority(job, {}, {"low": 5}, None) == 5
    del job["spec"]["template"]["spec"]["priorityClassName"]
    assert job_priority(job, {}, {}, 7) == 7 and job_priority(job, {}, {}, None) == 0
    with pytest.raises(KueueInputError, match="WorkloadPriorityClass 'gone'"):
        job_priority(_job("1", labels={"kueue.x-k8s.io/priority-class": "gone"}), {}, {}, None)


def test_other_job_kinds_are_refused() -> None:
    with pytest.raises(KueueNotModelled, match="integration is not modelled yet"):
        workload_for_job(_job("1", kind="JobSet"), read_objects(_ml()), priority=0, created=NOW)


def test_a_jobs_inert_topology_request_is_accepted() -> None:
    """Kueue gives every Job's podset a topologyRequest with only podIndexLabel
    (jobframework.podSetTopologyRequestBuilder.Build); without required/preferred/... it does not
    request TAS (workload.IsExplicitlyRequestingTAS), so it is read, not refused."""
    w = WL("x").queue("lq-a").request(**{GPU: "1"}).build()
    w["spec"]["podSets"][0]["topologyRequest"] = {"podIndexLabel": "batch.kubernetes.io/job-completion-index"}
    c = _ml()
    c["workloads"].append(w)
    assert read_objects(c).workloads[0].pod_sets[0].count == 1
    w["spec"]["podSets"][0]["topologyRequest"]["required"] = "rack"
    with pytest.raises(KueueNotModelled, match="topology-aware"):
        read_objects(c)


@pytest.mark.skipif(not driver.BINARY.exists(), reason="Kueue oracle not built (python -m tests.oracle_kueue build)")
def test_the_stage_cases_agree_with_the_oracle() -> None:
    """The four setups above, with the job's Workload pending, through Kueue's real scheduler."""
    setups = [
        (_ml(), _job("3", parallelism=2, completions=4)),
        (_ml([WL("b-train").priority(100).request(**{GPU: "12"}).admitted("b", {GPU: "h100"})]), _job("4")),
        (_ml(), _job("13")),
        (_ml([WL("b-train").request(**{GPU: "12"}).admitted("b", {GPU: "h100"})], reclaim="Never"), _job("4")),
    ]
    cases = []
    for c, job in setups:
        wl = workload_for_job(job, read_objects(c), priority=0, created=NOW)
        assert wl is not None
        count = wl.pod_sets[0].count
        c["workloads"].append(WL(wl.name).queue(wl.queue_name).created(NOW - 1767225600.0)
                              .podset("main", count, **{GPU: job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"][GPU]})
                              .build())
        cases.append(c)
    answers = [driver.oracle_answer(a) for a in driver.run(cases)]
    assert [driver.model_answer(c) for c in cases] == answers
    assert list(answers[0]["admitted"]) == ["default/job-train"]
    assert answers[1]["preempted"] == {"default/b-train": "InCohortReclamation"}
    assert answers[2] == answers[3] == {"admitted": {}, "preempted": {}}
