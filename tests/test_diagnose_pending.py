"""`pending`: one scenario per reason, the shared state, sorting, and the CLI on the demo."""

from __future__ import annotations

import json

from diagnose_builders import gang, node, pod, snap
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.diagnose.pending import ScaleUp, triage
from kubectl_wap.autoscale.templates import infer_templates
from kubectl_wap.snapshot.io.files import load_demo

NOW = 1796040000.0  # 2026-11-30T12:00:00Z


def rows(items, **kw):
    return {f"{r.namespace}/{r.name}": r for r in triage(snap(items), now=NOW, **kw).rows}


def full_node():
    return [node("n1", cpu="4"), pod("filler", cpu="3", node_name="n1", priority=0)]


def test_insufficient_resource_plain_and_upstream():
    r = rows(full_node() + [pod("big", cpu="2", priority=10)])["default/big"]
    assert r.reason == "needs 2 cpu on one node; largest free is 1 (1 node(s) it may use)"
    assert r.upstream == "0/1 nodes are available: 1 Insufficient cpu."
    # the filler has lower priority: default preemption finds it as the one victim
    assert (r.preemption, r.victim_pods, r.victim_units) == ("yes", 1, 1)


def test_request_above_any_node_says_so_and_preemption_does_not_help():
    r = rows(full_node() + [pod("huge", cpu="8", priority=10)])["default/huge"]
    assert r.reason.startswith("needs 8 cpu on one node; no node it may use has that much (largest allocatable 4)")
    assert r.preemption == "no"


def test_no_usable_node_names_the_static_filter():
    items = [node("n1", taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]), pod("p")]
    r = rows(items)["default/p"]
    # the static filter's reason in upstream's words (taint_toleration.go Filter: a fixed text since
    # it stopped naming the taint)
    assert r.reason == "no node it may run on: node(s) had untolerated taint(s) (1 node(s))"


def test_fits_now():
    r = rows([node("n1"), pod("p")])["default/p"]
    assert r.preemption == "not needed" and r.reason.startswith("fits now")


def test_kueue_gate_is_a_hold_not_a_scheduler_verdict():
    items = full_node() + [pod("w", gates=["kueue.x-k8s.io/admission"], labels={"kueue.x-k8s.io/queue-name": "team-a"})]
    r = rows(items)["default/w"]
    assert r.reason == "held by Kueue (queue team-a, gate kueue.x-k8s.io/admission on 1 pod(s))"
    assert r.preemption == "-" and r.upstream == ""


def test_other_gate_is_named():
    r = rows([node("n1"), pod("g", gates=["example.com/wait"])])["default/g"]
    assert r.reason == "1 pod(s) have schedulingGates: example.com/wait"


def test_kai_queue_label_with_kai_scheduler():
    items = [node("n1"), pod("k", labels={"kai.scheduler/queue": "research"}, scheduler="kai-scheduler")]
    r = rows(items)["default/k"]
    assert r.reason == "held by KAI Scheduler (queue research; schedulerName kai-scheduler)"


def test_other_scheduler_without_queue_label():
    r = rows([node("n1"), pod("v", scheduler="volcano")])["default/v"]
    assert r.reason == "schedulerName volcano: not scheduled by kube-scheduler"


def test_gang_below_min_count_because_pods_are_missing():
    items = [node("n1", cpu="16"), gang("job", 4)] + [pod(f"job-{i}", group="job", priority=1000) for i in range(2)]
    r = rows(items)["default/job"]
    assert r.kind == "PodGroup" and r.pending_pods == 2
    assert r.reason == "PodGroup default/job has 2 pod(s), minCount 4: 2 not created yet"


def test_missing_pod_group():
    r = rows([node("n1"), pod("orphan", group="nope")])["default/orphan"]
    assert r.reason == "PodGroup default/nope does not exist: the pod waits for it"


def test_nominated_and_waiting_for_victims():
    items = [node("n1", cpu="4"),
             pod("victim", cpu="3", node_name="n1", deleted="2026-11-30T11:59:00Z", preempted_at="2026-11-30T11:59:00Z"),
             pod("winner", cpu="3", priority=100, nominated="n1")]
    r = rows(items)["default/winner"]
    assert r.reason == "nominated to n1; waiting for 1 victim(s) to terminate (default/victim)"


def test_preemption_policy_never():
    r = rows(full_node() + [pod("meek", cpu="2", priority=10, policy="Never")])["default/meek"]
    assert r.preemption == "not allowed" and r.preemption_why.startswith("preemptionPolicy Never")


def test_gang_needs_all_at_once():
    items = [node("n1", cpu="4"), node("n2", cpu="4"), gang("job", 3)] + [pod(f"job-{i}", cpu="3", group="job", priority=1000) for i in range(3)]
    r = rows(items)["default/job"]
    assert r.reason == "gang needs 3 pod(s) at once (minCount): only 2 pod(s) fit at once (Insufficient cpu)"
    assert r.upstream == "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"


def test_pvc_is_noted_not_guessed():
    r = rows([node("n1"), pod("db", pvc="data-db")])["default/db"]
    assert any("PersistentVolumeClaims" in n for n in r.notes)


def test_sorted_by_priority_then_age_and_namespace_filter():
    items = [node("n1", cpu="1"),
             pod("old-low", cpu="2", priority=1, created="2026-11-30T10:00:00Z"),
             pod("new-high", cpu="2", priority=5, created="2026-11-30T11:50:00Z"),
             pod("old-high", cpu="2", priority=5, created="2026-11-30T09:00:00Z"),
             pod("other", cpu="2", priority=9, ns="x")]
    t = triage(snap(items), namespace="default", now=NOW)
    assert [r.name for r in t.rows] == ["old-high", "new-high", "old-low"]


def test_label_selector():
    items = [node("n1"), pod("a", cpu="9", labels={"team": "a"}), pod("b", cpu="9", labels={"team": "b"})]
    assert list(rows(items, selector={"team": "b"})) == ["default/b"]


def test_rows_do_not_see_each_other():
    """One shared state: each analysis rolls back, so the answer for a row is the same alone or with others."""
    base = full_node() + [pod("p1", cpu="2", priority=10), pod("p2", cpu="2", priority=10, created="2026-11-30T11:30:00Z")]
    together = rows(base)
    alone = rows(full_node() + [pod("p2", cpu="2", priority=10, created="2026-11-30T11:30:00Z")])
    assert together["default/p2"] == alone["default/p2"]


def test_scale_up_one_node():
    s = load_demo()
    t = triage(s, now=NOW, scale_up=ScaleUp(infer_templates(s)[0]))
    by = {f"{r.namespace}/{r.name}": r for r in t.rows}
    assert by["ml/finetune-nightly"].scale_up == "+1 p3dn.24xlarge"  # 4 pods x 2 GPUs fit one 8-GPU node
    assert by["ml/job-1"].scale_up == "no"  # 16 GPUs needed, 4 free: one 8-GPU node is not enough
    assert by["research/giant"].scale_up == "no"  # 16 GPUs per pod fit no template


def test_demo_cli_rows_match_whatif():
    out = CliRunner().invoke(app, ["pending", "-A", "--demo", "-o", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["kind"] == "PendingReport"
    by = {f"{r['namespace']}/{r['name']}": r for r in doc["items"]}
    assert [r["name"] for r in doc["items"]][:2] == ["finetune-nightly", "job-1"]
    # the same numbers as `whatif podgroup job-1` (docs/demo.md: 10 pods in 7 units)
    pre = dict(by["ml/job-1"]["preemption"])
    victims = pre.pop("victims")
    assert pre == {"helps": "yes", "victimPods": 10, "victimUnits": 7, "outcome": "Preempt", "why": None}
    w = json.loads(CliRunner().invoke(app, ["whatif", "podgroup", "job-1", "-n", "ml", "--demo", "-o", "json"]).stdout)
    assert victims == sorted(f"{v['namespace']}/{v['name']}" for v in w["victims"])
    assert by["ml/small-eval"]["preemption"]["helps"] == "not needed"
    assert by["batch/urgent-report"]["preemption"]["victimPods"] == 1
    assert by["ml/job-1"]["ageSeconds"] == 180


def test_cli_bad_selector_is_one_line():
    out = CliRunner().invoke(app, ["pending", "-A", "--demo", "-l", "team"])
    assert out.exit_code == 2


def test_composite_pod_group_tree_is_one_row_at_its_root():
    cpg = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup", "metadata": {"namespace": "default", "name": "ray"},
           "spec": {"priority": 100, "schedulingPolicy": {"gang": {"minGroupCount": 2}}}}
    items = [node("n1", cpu="2"), cpg]
    for child in ("head", "workers"):
        g = gang(child, 1, priority=100)
        g["spec"]["parentCompositePodGroupName"] = "ray"
        items += [g, pod(f"{child}-0", cpu="2", group=child, priority=100)]
    t = rows(items)
    assert list(t) == ["default/ray"]
    r = t["default/ray"]
    assert (r.kind, r.pending_pods, r.priority) == ("CompositePodGroup", 2, 100)
    # each pod fits the 2-cpu node alone, not both: the tree's gang (minGroupCount 2) fails
    assert r.reason.startswith("gang needs 2 child group(s) at once (minGroupCount)")
    assert r.preemption == "no"


def test_cli_yaml_outputs():
    import yaml

    out = CliRunner().invoke(app, ["pending", "-n", "ml", "--demo", "-o", "yaml", "--no-scale-up"])
    assert out.exit_code == 0, out.output
    doc = yaml.safe_load(out.output)
    assert {r["namespace"] for r in doc["items"]} == {"ml"} and doc["nodeTemplates"] == []


def _pvc(name, phase, ns="default"):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"namespace": ns, "name": name}, "status": {"phase": phase}}


def test_unbound_missing_and_bound_claims():
    from kubectl_wap.snapshot.decode.evidence import claim_blockers

    eph = pod("eph")
    eph["spec"]["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]
    items = [node("n1"), pod("a", pvc="data-a"), pod("b", pvc="data-b"), pod("c", pvc="data-c"), eph,
             _pvc("data-a", "Pending"), _pvc("data-c", "Bound"), _pvc("eph-scratch", "Lost")]
    claims = claim_blockers(items, listed=True)
    assert claims == {("default", "a"): ["PVC data-a is Pending (not bound)"], ("default", "b"): ["PVC data-b does not exist"],
                      ("default", "eph"): ["PVC eph-scratch is Lost (not bound)"]}
    r = rows(items, claims=claims)
    assert r["default/a"].reason == "PVC data-a is Pending (not bound)" and r["default/a"].preemption == "-"
    assert r["default/c"].reason.startswith("fits now") and not r["default/c"].notes  # bound: nothing to say
    # PVCs not read at all: unknown, a note instead of a guess
    assert claim_blockers([node("n1"), pod("a", pvc="data-a")], listed=False) is None
    assert any("not in the snapshot" in n for n in rows([node("n1"), pod("a", pvc="data-a")])["default/a"].notes)


def test_cli_reads_pvcs_from_the_example_file():
    from pathlib import Path

    example = Path(__file__).resolve().parent.parent / "docs" / "examples" / "pending-holds.yaml"
    out = CliRunner().invoke(app, ["pending", "-A", "--snapshot", str(example), "--no-scale-up", "-o", "json"])
    assert out.exit_code == 0, out.output
    by = {r["name"]: r for r in json.loads(out.output)["items"]}
    assert by["etl-load"]["reason"] == "PVC etl-scratch is Pending (not bound)"
    assert by["eval-7"]["reason"].startswith("held by Kueue") and by["sweep-3"]["reason"].startswith("held by KAI")
    assert by["train-2"]["reason"].startswith("nominated to n1; waiting for 1 victim(s)")


def test_cli_empty_namespace_says_so_on_stderr():
    out = CliRunner().invoke(app, ["pending", "--demo", "--no-scale-up"])  # no -A: the default namespace
    assert out.exit_code == 0
    assert "No pending pods or pod groups in namespace default; use -A for all namespaces." in out.output


def test_cli_empty_namespace_chosen_with_n_gets_no_hint():
    # -n names the namespace on purpose: kubectl's "No resources found in default namespace." carries no hint either.
    out = CliRunner().invoke(app, ["pending", "--demo", "--no-scale-up", "-n", "default"])
    assert out.exit_code == 0
    assert "No pending pods or pod groups in namespace default.\n" in out.output and "-A" not in out.output


def test_unbound_pod_being_deleted_is_not_pending():
    # schedule_one.go skipPodSchedule, "Case 1: pod is being deleted": the scheduler never tries
    # an unbound pod with a deletionTimestamp, so it is no pending row (it is waiting to go away).
    items = full_node() + [pod("going", cpu="2", priority=10, deleted="2026-11-30T11:30:00Z"), pod("stays", cpu="2", priority=10)]
    assert sorted(rows(items)) == ["default/stays"]


def test_cli_misspelt_namespace_gets_the_closest_in_a_warning():
    """A typo of -n finds nothing, as kubectl's "No resources found" (exit 0), and a warning names
    the closest namespace (it said only "none in researc"); a namespace with no near miss (default,
    empty and absent from a snapshot without Namespaces) gets no warning."""
    out = CliRunner().invoke(app, ["pending", "--demo", "--no-scale-up", "-n", "researc"])
    assert out.exit_code == 0 and not out.stdout
    assert out.stderr.splitlines() == ["No pending pods or pod groups in namespace researc.",
                                       "Warning: no object of the cluster is in namespace \"researc\" (did you mean 'research'?)"]
    quiet = CliRunner().invoke(app, ["pending", "--demo", "--no-scale-up", "-n", "default"])
    assert "Warning" not in quiet.stderr
