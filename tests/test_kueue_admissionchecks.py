"""Kueue's admission checks (queueing/kueue/admissionchecks.py), against sigs.k8s.io/kueue v0.17.0:
a ClusterQueue with a missing or inactive check (or breaking MultiKueue's rules) is inactive, so
nothing is admitted from it and its Workloads are nobody's preemption candidates
(clusterqueue.go updateWithAdmissionChecks, Cache.Snapshot); with Active checks the quota is
reserved exactly as without them and the Workload is Admitted only once the checks that apply
(workload.AdmissionChecksForWorkload, onFlavors) are Ready; a Retry/Rejected check keeps a
pending Workload from nomination. The stage's words and JSON, the CLI on the demo dump, and, when
the Kueue oracle is built, the hand cases through the real scheduler."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.queueing.kueue.admissionchecks import active_cluster_queues, checks_for_workload, inactive_reasons
from kubectl_wap.queueing.kueue.answer import (
    STAGE_ADMITTED,
    STAGE_NO_QUEUE,
    STAGE_RESERVED,
    STAGE_RESERVED_AFTER_EVICTIONS,
    STAGE_WAITING_FOR_CHECKS,
    kueue_stage,
    pending_stages,
)
from kubectl_wap.queueing.kueue.cycle import ADMITTED, INADMISSIBLE, NO_CANDIDATES, PREEMPTING, schedule_cycle
from kubectl_wap.queueing.kueue.jobs import workload_for_job
from kubectl_wap.queueing.kueue.objects import KueueInputError, read_objects
from kubectl_wap.report.kueue import kueue_hold_line, kueue_json, kueue_line, kueue_steps
from kubectl_wap.snapshot.share.redact import redact_items
from tests.kueue_builders import CQ, WL, case, flavor, res, ts
from tests.oracle_kueue import driver

NOW = driver.NOW
PROV = "kueue.x-k8s.io/provisioning-request"
MK = "kueue.x-k8s.io/multikueue"
DEMO = Path(__file__).parent / "fixtures" / "kueue-demo"
CLUSTER, JOB = DEMO / "cluster.yaml", DEMO / "job.yaml"


def check(name: str, controller: str = PROV, active: bool | None = True) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": name}, "spec": {"controllerName": controller}}
    if active is not None:
        obj["status"] = {"conditions": [{"type": "Active", "status": "True" if active else "False", "reason": "x",
                                         "message": "", "lastTransitionTime": ts(0)}]}
    return obj


def with_checks(cq: CQ, *rules: str | tuple[str, list[str]]) -> CQ:
    """spec.admissionChecksStrategy: a name (every flavor) or (name, onFlavors)."""
    cq.obj["spec"]["admissionChecksStrategy"] = {"admissionChecks": [
        {"name": r} if isinstance(r, str) else {"name": r[0], "onFlavors": r[1]} for r in rules]}
    return cq


def _ml(checks: list[dict[str, Any]], a: CQ, workloads: list[WL]) -> dict[str, Any]:
    """ClusterQueue a (given), b (8 cpu on default, reclaim Any) in cohort ml."""
    b = CQ("b").cohort("ml").group(("default", [res("cpu", "8")])).preemption(within="LowerPriority", reclaim="Any")
    c = case([flavor("default"), flavor("spot")], [a.build(), b.build()], [w.build() for w in workloads])
    c["admissionChecks"] = checks
    return c


def _a(*rules: str | tuple[str, list[str]]) -> CQ:
    cq = CQ("a").cohort("ml").group(("default", [res("cpu", "4")]), ("spot", [res("cpu", "4")]))
    return with_checks(cq.preemption(within="LowerPriority", reclaim="Any"), *rules)


def _oracle_agrees(c: dict[str, Any]) -> None:
    """The real Kueue scheduler gives the same cycle (skipped unless the oracle is built)."""
    if not driver.BINARY.exists():
        pytest.skip("Kueue oracle not built (python -m tests.oracle_kueue build)")
    assert driver.model_answer(c) == driver.oracle_answer(driver.run([c])[0])


# ---- reading ---------------------------------------------------------------------------------------


def test_checks_are_read_and_on_flavors_resolved() -> None:
    """NewAdmissionChecks: onFlavors, or every flavor of the ClusterQueue when empty; the cache
    keeps an AdmissionCheck's controller and whether its Active condition is True."""
    c = _ml([check("prov"), check("gate", "example.com/approval", active=None)], _a("prov", ("gate", ["spot"])), [])
    objs = read_objects(c)
    rules = {r.name: r for r in objs.cluster_queues["a"].admission_checks}
    assert rules["prov"].flavors == {"default", "spot"} and rules["gate"].flavors == {"spot"}
    assert rules["prov"].check is not None and rules["prov"].check.controller == PROV and rules["prov"].check.active
    assert rules["gate"].check is not None and not rules["gate"].check.active  # no Active condition: not active


def test_v1beta1_admission_checks_list_is_one_line() -> None:
    c = _ml([], _a(), [])
    c["clusterQueues"][0]["spec"]["admissionChecks"] = ["prov"]
    with pytest.raises(KueueInputError, match="v1beta1's field.*admissionChecksStrategy"):
        read_objects(c)


# ---- inactive ClusterQueues ------------------------------------------------------------------------


@pytest.mark.parametrize("checks,rules,reason", [
    ([], ["prov"], "references missing AdmissionCheck(s): prov"),
    ([check("prov", active=False)], ["prov"], "references inactive AdmissionCheck(s): prov"),
    ([check("prov", active=None)], ["prov"], "references inactive AdmissionCheck(s): prov"),
    ([check("m1", MK), check("m2", MK)], ["m1", "m2"],
     "Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, found: m1,m2"),
    ([check("m1", MK)], [("m1", ["spot"])], "Cannot specify MultiKueue AdmissionCheck per flavor, found: m1"),
    ([check("m1", MK), check("prov")], ["m1", "prov"],
     "Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks together, found: m1, prov"),
])
def test_cluster_queue_inactive_as_kueues_cache_decides(checks, rules, reason) -> None:  # type: ignore[no-untyped-def]
    """clusterQueue.updateQueueStatus / inactiveReason: nothing from an inactive ClusterQueue is a
    head (Manager.heads), so a Workload that fits is not admitted."""
    c = _ml(checks, _a(*rules), [WL("w").queue("lq-a").request(cpu="1")])
    objs = read_objects(c)
    assert inactive_reasons(objs.cluster_queues["a"], objs.flavors) == [reason]
    assert "a" not in active_cluster_queues(objs)
    assert schedule_cycle(objs, NOW).decisions == ()
    (stage,) = pending_stages(objs, NOW)
    assert stage.outcome == STAGE_NO_QUEUE and stage.message == f"ClusterQueue a is inactive: Can't admit new workloads: {reason}."
    _oracle_agrees(c)


def test_active_checks_leave_the_cluster_queue_active() -> None:
    c = _ml([check("prov"), check("m1", MK)], _a("m1"), [WL("w").queue("lq-a").request(cpu="1")])
    objs = read_objects(c)
    assert inactive_reasons(objs.cluster_queues["a"], objs.flavors) == []
    assert [d.outcome for d in schedule_cycle(objs, NOW).decisions] == [ADMITTED]


def test_inactive_cluster_queues_workloads_are_no_preemption_candidates() -> None:
    """Cache.Snapshot leaves an inactive ClusterQueue out: b's Workload borrowing a's quota cannot
    be reclaimed while b's check is missing (its usage still counts in the cohort). With the check
    present, a reclaims it."""
    b_wl = WL("b1").queue("lq-b").request(cpu="12").admitted("b", {"cpu": "default"})
    a = CQ("a").cohort("ml").group(("default", [res("cpu", "8")])).preemption(within="LowerPriority", reclaim="Any")
    b = with_checks(CQ("b").cohort("ml").group(("default", [res("cpu", "4")])), "prov")
    pending = WL("a1").queue("lq-a").priority(10).request(cpu="6").created(10)
    for checks, outcome in (([], NO_CANDIDATES), ([check("prov")], PREEMPTING)):
        c = case([flavor("default")], [a.build(), b.build()], [b_wl.build(), pending.build()])
        c["admissionChecks"] = checks
        (d,) = schedule_cycle(read_objects(c), NOW).decisions
        assert d.outcome == outcome, checks
        assert [t.workload.key for t in d.targets] == ([] if outcome == NO_CANDIDATES else ["default/b1"])
        _oracle_agrees(c)


# ---- quota reserved, Admitted once the checks are Ready ---------------------------------------------


def test_active_checks_reserve_quota_as_without_them() -> None:
    """Checks change neither flavor assignment nor preemption: the same cycle with and without."""
    wls = [WL("a0").queue("lq-a").request(cpu="4").admitted("a", {"cpu": "default"}),
           WL("w").queue("lq-a").priority(5).request(cpu="3").created(5)]
    plain = schedule_cycle(read_objects(_ml([], _a(), wls)), NOW)
    c = _ml([check("prov")], _a("prov"), wls)
    checked = schedule_cycle(read_objects(c), NOW)
    assert [(d.outcome, d.assignment) for d in checked.decisions] == [(d.outcome, d.assignment) for d in plain.decisions]
    assert checked.decisions[0].outcome == ADMITTED
    _oracle_agrees(c)


@pytest.mark.parametrize("rules,assigned,applies", [
    (["prov"], "default", ["prov"]),
    ([("prov", ["spot"])], "default", []),  # onFlavors elsewhere: admitted at once
    ([("prov", ["spot"])], "spot", ["prov"]),
    ([("prov", ["default", "spot"]), ("gate", ["spot"])], "default", ["prov"]),
    ([("prov", ["default", "spot"]), "gate"], "default", ["prov", "gate"]),  # both on every flavor
])
def test_checks_that_apply_follow_the_assigned_flavor(rules, assigned, applies) -> None:  # type: ignore[no-untyped-def]
    """workload.AdmissionChecksForWorkload: every check when each covers all the ClusterQueue's
    flavors, else those whose onFlavors hold an assigned flavor; the scheduler sets Admitted with
    the reservation only when none applies (prepareWorkload: HasAllChecks of a new Workload)."""
    a = _a(*rules)
    if assigned == "spot":  # default full: flavor assignment goes on to spot
        w0 = [WL("a0").queue("lq-a").request(cpu="4").admitted("a", {"cpu": "default"})]
        a.obj["spec"]["preemption"] = {"withinClusterQueue": "Never", "reclaimWithinCohort": "Never",
                                       "borrowWithinCohort": {"policy": "Never"}}
        a.obj["spec"]["cohortName"] = "solo"
    else:
        w0 = []
    c = _ml([check("prov"), check("gate", "example.com/approval")], a, [*w0, WL("w").queue("lq-a").request(cpu="2").created(5)])
    objs = read_objects(c)
    (d,) = schedule_cycle(objs, NOW).decisions
    assert d.outcome == ADMITTED and d.assignment is not None
    assert {c.flavor for ps in d.assignment.pod_sets for c in ps.flavors.values()} == {assigned}
    assert [r.name for r in checks_for_workload(objs.cluster_queues["a"], [assigned])] == applies
    _oracle_agrees(c)


def _job(cpu: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "default",
                                                                   "labels": {"kueue.x-k8s.io/queue-name": "lq-a"}},
            "spec": {"parallelism": 1, "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}}}


def test_stage_says_quota_reserved_naming_the_checks() -> None:
    c = _ml([check("prov"), check("gate", "example.com/approval")], _a("prov", ("gate", ["default"])), [])
    objs = read_objects(c)
    stage = kueue_stage(objs, workload_for_job(_job("2"), objs, priority=0, created=NOW), NOW)
    assert stage.outcome == STAGE_RESERVED
    assert kueue_line(stage) == ("Kueue: quota reserved in ClusterQueue a on flavor default; admitted once its admission "
                                 f"checks are Ready: prov ({PROV}), gate (example.com/approval)")
    doc = kueue_json(stage)
    assert doc["outcome"] == "quota-reserved"
    assert doc["admissionChecks"] == [
        {"name": "prov", "controller": PROV, "onFlavors": ["default", "spot"], "state": "Pending"},
        {"name": "gate", "controller": "example.com/approval", "onFlavors": ["default"], "state": "Pending"}]
    steps = kueue_steps(stage)
    assert "Quota reserved in this cycle (QuotaReserved); not Admitted until its admission checks are Ready." in steps
    assert any(s.startswith("Admission check prov: Kueue's ProvisioningRequest controller asks the cluster autoscaler")
               and "answered on today's nodes" in s for s in steps)
    # a check on spot only, the Workload on default: no check applies, admitted with the reservation
    c2 = _ml([check("gate", "example.com/approval")], _a(("gate", ["spot"])), [])
    objs2 = read_objects(c2)
    s2 = kueue_stage(objs2, workload_for_job(_job("2"), objs2, priority=0, created=NOW), NOW)
    assert s2.outcome == STAGE_ADMITTED and kueue_json(s2)["admissionChecks"] == []


def test_quota_reserved_after_evictions() -> None:
    """Reclaiming b's borrowed quota: the evictions are the same; the reservation waits for prov."""
    b_wl = WL("b1").queue("lq-b").request(cpu="12").admitted("b", {"cpu": "default"})
    c = _ml([check("prov")], _a("prov"), [b_wl])
    c["clusterQueues"][0]["spec"]["resourceGroups"][0]["flavors"] = c["clusterQueues"][0]["spec"]["resourceGroups"][0]["flavors"][:1]
    c["resourceFlavors"] = c["resourceFlavors"][:1]
    c["clusterQueues"][0]["spec"]["admissionChecksStrategy"]["admissionChecks"] = [{"name": "prov"}]
    objs = read_objects(c)
    stage = kueue_stage(objs, workload_for_job(_job("4"), objs, priority=10, created=NOW), NOW)
    assert stage.outcome == STAGE_RESERVED_AFTER_EVICTIONS
    assert kueue_line(stage).startswith("Kueue: quota reserved in ClusterQueue a on flavor default once it has evicted "
                                        "Workloads default/b1 (priority 0, reclamation within the cohort); admitted once")


def test_ready_states_admit_with_the_reservation_and_failed_ones_block_nomination() -> None:
    """prepareWorkload: a Workload already carrying every applying check, all Ready, is Admitted
    with its reservation; Scheduler.nominate: one with a Retry or Rejected check is inadmissible."""
    def wl(state: str) -> WL:
        w = WL("w").queue("lq-a").request(cpu="1")
        w.obj["status"] = {"admissionChecks": [{"name": "prov", "state": state, "message": "", "lastTransitionTime": ts(1)}]}
        return w

    for state, outcome in (("Ready", ADMITTED), ("Pending", ADMITTED), ("Retry", INADMISSIBLE), ("Rejected", INADMISSIBLE)):
        c = _ml([check("prov")], _a("prov"), [wl(state)])
        (d,) = schedule_cycle(read_objects(c), NOW).decisions
        assert d.outcome == outcome, state
        if outcome == INADMISSIBLE:
            assert d.message == "The workload has failed admission checks"
        _oracle_agrees(c)
    objs = read_objects(_ml([check("prov")], _a("prov"), [wl("Ready")]))
    assert pending_stages(objs, NOW)[0].outcome == STAGE_ADMITTED
    objs = read_objects(_ml([check("prov")], _a("prov"), [wl("Pending")]))
    (stage,) = pending_stages(objs, NOW)
    assert stage.outcome == STAGE_RESERVED
    assert kueue_hold_line(stage) == ("Kueue: quota reserved in ClusterQueue a on flavor default in its next cycle (no quota "
                                      f"reserved yet when the cluster was read); admitted once its admission checks are Ready: prov ({PROV})")


def test_pending_names_the_checks_a_reserved_workload_waits_for() -> None:
    """A Workload with quota reserved and a check not Ready is not Admitted (SyncAdmittedCondition):
    its job is suspended, so `pending` lists it with the checks and their states; once every check
    that applies is Ready (or none applies) it is not listed."""
    def reserved(states: list[tuple[str, str]], flavor_name: str = "default") -> WL:
        w = WL("r").queue("lq-a").request(cpu="1").admitted("a", {"cpu": flavor_name})
        w.obj["status"]["conditions"] = [c for c in w.obj["status"]["conditions"] if c["type"] != "Admitted"]
        w.obj["status"]["admissionChecks"] = [{"name": n, "state": st, "message": "", "lastTransitionTime": ts(1)}
                                              for n, st in states]
        return w

    checks = [check("prov"), check("gate", "example.com/approval")]
    objs = read_objects(_ml(checks, _a("prov", ("gate", ["spot"])), [reserved([("prov", "Pending")])]))
    (stage,) = pending_stages(objs, NOW)
    assert stage.outcome == STAGE_WAITING_FOR_CHECKS
    assert kueue_hold_line(stage) == ("Kueue: quota reserved in ClusterQueue a; not admitted until its admission checks "
                                      f"are Ready: prov ({PROV}): Pending")
    assert kueue_json(stage)["admissionChecks"][0]["state"] == "Pending"
    assert pending_stages(read_objects(_ml(checks, _a("prov", ("gate", ["spot"])), [reserved([("prov", "Ready")])])), NOW) == []
    # gate applies on spot only: a Workload reserved on spot waits for it too
    objs = read_objects(_ml(checks, _a("prov", ("gate", ["spot"])), [reserved([("prov", "Ready")], "spot")]))
    (stage,) = pending_stages(objs, NOW)
    assert stage.message == "quota reserved, waiting for admission checks: prov Ready, gate Pending"


# ---- the command line on the demo dump ---------------------------------------------------------------


def _run(args: list[str], code: int = 0):  # type: ignore[no-untyped-def]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == code, f"{args}: exit {res.exit_code}\n{res.output}"
    return res


def _demo_with_check(tmp_path: Path, active: bool = True) -> Path:
    """The demo dump with a ProvisioningRequest check on team-a-cq (GKE's DWS setup)."""
    dump = copy.deepcopy(yaml.safe_load(CLUSTER.read_text()))
    cq = next(o for o in dump["items"] if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "team-a-cq")
    cq["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "dws-prov"}]}
    dump["items"].append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": "dws-prov"},
                          "spec": {"controllerName": PROV},
                          "status": {"conditions": [{"type": "Active", "status": "True" if active else "False"}]}})
    f = tmp_path / "dws.yaml"
    f.write_text(yaml.safe_dump(dump))
    return f


def test_whatif_on_a_provisioning_request_cluster(tmp_path: Path) -> None:
    """Refused before ("admission checks are not modelled yet"); now the quota is reserved after
    evicting train-7, as without the check, and the answer says the Job waits for dws-prov's nodes."""
    f = _demo_with_check(tmp_path)
    out = _run(["whatif", "-f", str(JOB), "--snapshot", str(f), "--replicas", "1"]).stdout
    lines = out.splitlines()
    assert lines[0] == ("Kueue: quota reserved in ClusterQueue team-a-cq on flavor h100 once it has evicted Workloads "
                        "team-b/train-7 (priority 100, reclamation within the cohort); admitted once its admission checks "
                        f"are Ready: dws-prov ({PROV})")
    assert any("The Job stays suspended until its admission checks are Ready" in line for line in lines)
    assert any("Admission check dws-prov: Kueue's ProvisioningRequest controller" in line and "today's nodes" in line
               for line in lines)
    doc = json.loads(_run(["whatif", "-f", str(JOB), "--snapshot", str(f), "--replicas", "1", "-o", "json"]).stdout)
    q = doc["queueing"]
    assert q["outcome"] == "quota-reserved-after-evictions"
    assert q["admissionChecks"] == [{"name": "dws-prov", "controller": PROV, "onFlavors": ["h100"], "state": "Pending"}]
    assert [e["workload"] for e in q["evictions"]] == ["team-b/train-7"]
    assert not any("admission checks" in n and "not modelled" in n for n in q["notModelled"])
    schema = json.loads(resources.files("kubectl_wap").joinpath("report/schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)


def test_whatif_with_an_inactive_check_says_the_cluster_queue_is_inactive(tmp_path: Path) -> None:
    f = _demo_with_check(tmp_path, active=False)
    doc = json.loads(_run(["whatif", "-f", str(JOB), "--snapshot", str(f), "--replicas", "1", "-o", "json"]).stdout)
    assert doc["queueing"]["outcome"] == "no-queue"
    assert doc["queueing"]["message"] == ("ClusterQueue team-a-cq is inactive: Can't admit new workloads: references "
                                          "inactive AdmissionCheck(s): dws-prov.")


def test_redaction_keeps_what_the_checks_need(tmp_path: Path) -> None:
    """--redact hashes names alike (the ClusterQueue's rule still finds its check) and keeps
    Kueue's own controller names and the states: the same answer on the redacted dump."""
    items = yaml.safe_load(_demo_with_check(tmp_path).read_text())["items"]
    items.append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": "acme"},
                  "spec": {"controllerName": "acme.example/approval", "parameters": {"name": "p"}}})
    red = redact_items(items)
    acs = {o["spec"]["controllerName"] for o in red if o["kind"] == "AdmissionCheck"}
    assert PROV in acs and "acme.example/approval" not in acs and len(acs) == 2
    objs = read_objects({"clusterQueues": [o for o in red if o["kind"] == "ClusterQueue"],
                         "admissionChecks": [o for o in red if o["kind"] == "AdmissionCheck"],
                         "resourceFlavors": [o for o in red if o["kind"] == "ResourceFlavor"]})
    (cq,) = [c for c in objs.cluster_queues.values() if c.admission_checks]
    assert cq.admission_checks[0].check is not None and cq.admission_checks[0].check.controller == PROV
    assert active_cluster_queues(objs) == set(objs.cluster_queues)


def test_pending_lists_a_job_waiting_for_its_provisioning_request(tmp_path: Path) -> None:
    """The demo's team-b/train-7 with its quota reserved on team-b-cq but its ProvisioningRequest
    check still Pending: its Job is suspended, so before it had no row at all."""
    dump = copy.deepcopy(yaml.safe_load(CLUSTER.read_text()))
    cq = next(o for o in dump["items"] if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "team-b-cq")
    cq["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "dws-prov"}]}
    dump["items"].append({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": "dws-prov"},
                          "spec": {"controllerName": PROV}, "status": {"conditions": [{"type": "Active", "status": "True"}]}})
    wl = next(o for o in dump["items"] if o["kind"] == "Workload" and o["metadata"]["name"] == "train-7")
    wl["status"]["conditions"] = [c for c in wl["status"]["conditions"] if c["type"] != "Admitted"]
    wl["status"]["admissionChecks"] = [{"name": "dws-prov", "state": "Pending", "lastTransitionTime": "2026-12-01T10:00:00Z"}]
    dump["items"] = [o for o in dump["items"] if not (o["kind"] == "Pod" and "train-7" in o["metadata"]["name"])]
    f = tmp_path / "dws.yaml"
    f.write_text(yaml.safe_dump(dump))
    res = _run(["pending", "-A", "--snapshot", str(f), "-o", "json", "--no-scale-up"])
    rows = {r["name"]: r for r in json.loads(res.stdout)["items"]}
    assert rows["train-7"]["stage"] == "kueue" and rows["train-7"]["queueing"]["outcome"] == "waiting-for-admission-checks"
    assert rows["train-7"]["reason"] == ("Kueue: quota reserved in ClusterQueue team-b-cq; not admitted until its admission "
                                        f"checks are Ready: dws-prov ({PROV}): Pending")
    schema = json.loads(resources.files("kubectl_wap").joinpath("report/schema.json").read_text())
    # pending's rows carry the section without whatif's "line" (the row's reason is it)
    jsonschema.Draft202012Validator(schema["properties"]["queueing"]).validate({**rows["train-7"]["queueing"], "line": ""})
    assert rows["train-7"]["queueing"]["steps"][-1] == "Quota reserved earlier; not Admitted until its admission checks are Ready."
