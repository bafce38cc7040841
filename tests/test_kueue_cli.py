"""`kubectl wap whatif -f job.yaml --snapshot DUMP` on a Kueue cluster (tests/fixtures/kueue-demo):
the Kueue stage's line comes before kube-scheduler's part, the JSON gains a `queueing` section
that validates against report/schema.json, and a dump without Kueue objects answers as before."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from kubectl_wap.cli import app

DEMO = Path(__file__).parent / "fixtures" / "kueue-demo"
CLUSTER, JOB = DEMO / "cluster.yaml", DEMO / "job.yaml"


def _run(args: list[str], code: int = 0):  # type: ignore[no-untyped-def]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == code, f"{args}: exit {res.exit_code}\n{res.output}"
    return res


def _schema() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(resources.files("kubectl_wap").joinpath("report/schema.json").read_text()))


def test_two_stages_in_text() -> None:
    out = _run(["whatif", "-f", str(JOB), "--snapshot", str(CLUSTER), "--replicas", "1"]).stdout
    lines = out.splitlines()
    assert lines[0] == ("Kueue: admitted to ClusterQueue team-a-cq on flavor h100 once it has evicted Workloads "
                        "team-b/train-7 (priority 100, reclamation within the cohort)")
    # Kueue's eviction of train-7 is applied first: its 3 pods (12 GPUs) are gone, so the 8-GPU pod
    # fits without kube-scheduler preempting anything (with them it could only go by preemption).
    assert lines[1].strip() == ("Below, kube-scheduler's part runs with the 3 pod(s) of the evicted Workloads' jobs removed "
                                "(Kueue evicts them first).")
    assert "WorkloadPriorityClass urgent (1000)" in lines[2] and "pods' own priority" in lines[2]
    assert "NoPreemptionNeeded: fits without preemption (1 pod(s) placed)" in lines


def test_queueing_section_validates() -> None:
    doc = json.loads(_run(["whatif", "-f", str(JOB), "--snapshot", str(CLUSTER), "--replicas", "1", "-o", "json"]).stdout)
    errors = list(_schema().iter_errors(doc))
    assert not errors, errors[:3]
    q = doc["queueing"]
    assert q["outcome"] == "admitted-after-evictions" and q["clusterQueue"] == "team-a-cq"
    assert q["podSets"] == [{"name": "main", "count": 1, "flavors": {"cpu": "h100", "memory": "h100", "nvidia.com/gpu": "h100"}}]
    assert [(e["workload"], e["owner"]) for e in q["evictions"]] == [("team-b/train-7", {"kind": "Job", "name": "train-7"})]
    assert doc["outcome"] == "NoPreemptionNeeded"


def test_without_the_eviction_kube_scheduler_would_have_to_preempt(tmp_path: Path) -> None:
    """The same cluster with train-7's Workload not owned by its Job: its pods stay, a note says so,
    and the 8-GPU pod no longer fits without preemption (gpu-1 holds 8 GPUs of train-7's pods,
    gpu-2 4): the eviction above is what made room."""
    dump = yaml.safe_load(CLUSTER.read_text())
    for o in dump["items"]:
        if o["kind"] == "Workload":
            del o["metadata"]["ownerReferences"]
    f = tmp_path / "no-owner.yaml"
    f.write_text(yaml.safe_dump(dump))
    doc = json.loads(_run(["whatif", "-f", str(JOB), "--snapshot", str(f), "-o", "json"]).stdout)
    assert any("The pods of team-b/train-7 are not removed" in n for n in doc["queueing"]["notes"])
    assert doc["outcome"] != "NoPreemptionNeeded"


def test_not_admitted_job_says_why_and_that_it_stays_suspended(tmp_path: Path) -> None:
    job = yaml.safe_load(JOB.read_text())
    job["spec"]["parallelism"] = job["spec"]["completions"] = 3  # 24 GPUs: more than the cohort's 16
    f = tmp_path / "big.yaml"
    f.write_text(yaml.safe_dump(job))
    lines = _run(["whatif", "-f", str(f), "--snapshot", str(CLUSTER), "--replicas", "1"]).stdout.splitlines()
    assert lines[0].startswith("Kueue: not admitted: ClusterQueue team-a-cq: couldn't assign flavors to pod set main: "
                               "insufficient quota for nvidia.com/gpu in flavor h100")
    assert lines[1].strip().startswith("The Job stays suspended: no pod is created.")


def test_dump_without_kueue_objects_has_no_queueing_section(tmp_path: Path) -> None:
    dump = yaml.safe_load(CLUSTER.read_text())
    dump["items"] = [o for o in dump["items"] if not o["apiVersion"].startswith("kueue.x-k8s.io/")]
    f = tmp_path / "plain.yaml"
    f.write_text(yaml.safe_dump(dump))
    doc = json.loads(_run(["whatif", "-f", str(JOB), "--snapshot", str(f), "--replicas", "1", "-o", "json"]).stdout)
    assert "queueing" not in doc


@pytest.mark.parametrize("change,words", [
    (lambda d: d["items"][4].__setitem__("apiVersion", "kueue.x-k8s.io/v1beta1"), "kueue.x-k8s.io/v1beta1 is not read"),
    # v1beta1's spelling of the checks (admission checks themselves are modelled: test_kueue_admissionchecks.py)
    (lambda d: d["items"][5]["spec"].__setitem__("admissionChecks", ["prov"]), "spec.admissionChecks is v1beta1's field"),
])
def test_unreadable_kueue_input_is_one_line_exit_2(tmp_path: Path, change, words) -> None:  # type: ignore[no-untyped-def]
    dump = copy.deepcopy(yaml.safe_load(CLUSTER.read_text()))
    change(dump)
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(dump))
    res = _run(["whatif", "-f", str(JOB), "--snapshot", str(f), "--replicas", "1"], code=2)
    err = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(err) == 1 and words in err[0], res.stderr
    assert "Traceback" not in res.output


@pytest.mark.parametrize("change,words", [
    (lambda d: d["items"][5]["spec"]["resourceGroups"][0]["flavors"][0].pop("name"), "ClusterQueue team-a-cq: malformed (missing field 'name')"),
    (lambda d: d["items"][5]["spec"].__setitem__("resourceGroups", "oops"), "ClusterQueue team-a-cq: malformed"),
])
def test_malformed_kueue_objects_are_one_line_exit_2(tmp_path: Path, change, words) -> None:  # type: ignore[no-untyped-def]
    dump = copy.deepcopy(yaml.safe_load(CLUSTER.read_text()))
    change(dump)
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(dump))
    res = _run(["whatif", "-f", str(JOB), "--snapshot", str(f)], code=2)
    assert words in res.stderr and "Traceback" not in res.output


def test_malformed_job_is_one_line_exit_2(tmp_path: Path) -> None:
    job = yaml.safe_load(JOB.read_text())
    job["spec"]["parallelism"] = "many"
    f = tmp_path / "job.yaml"
    f.write_text(yaml.safe_dump(job))
    res = CliRunner().invoke(app, ["whatif", "-f", str(f), "--snapshot", str(CLUSTER)])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output


def test_no_kueue_answers_as_before() -> None:
    """--no-kueue: no Kueue stage, nothing evicted first: train-7's pods stay, so the 8-GPU pod no
    longer fits without preemption."""
    doc = json.loads(_run(["whatif", "-f", str(JOB), "--snapshot", str(CLUSTER), "--no-kueue", "-o", "json"]).stdout)
    assert "queueing" not in doc
    assert doc["outcome"] != "NoPreemptionNeeded"


def test_explain_lists_kueues_steps_first() -> None:
    lines = _run(["explain", "-f", str(JOB), "--snapshot", str(CLUSTER)]).stdout.splitlines()
    assert lines[0].startswith("Kueue: admitted to ClusterQueue team-a-cq")
    assert lines[1] == "  K1. Workload team-a/job-train (priority 1000) pending in LocalQueue team-a/lq -> ClusterQueue team-a-cq (cohort ml)."
    assert lines[2].startswith("  K2. Flavor assignment, podset main x1: cpu on h100 (fits), memory on h100 (fits), "
                               "nvidia.com/gpu on h100 (needs preemption); insufficient unused quota")
    assert lines[3] == "  K3. Preemption: evict team-b/train-7 in team-b-cq (priority 100, reclamation within the cohort)."
    assert lines[4] == "  K4. Admitted in a later cycle, once the evicted Workloads release their quota."
    assert any(line.startswith("Outcome: NoPreemptionNeeded") for line in lines)


def test_name_output_lists_kueues_evictions_first() -> None:
    """`-o name` names what the submission removes: the Workload Kueue evicts (its stage runs
    first, kubectl's resource name for it) and then kube-scheduler's victims (none here: the
    eviction made room). It printed nothing before, though Kueue evicts team-b/train-7."""
    out = _run(["whatif", "-f", str(JOB), "--snapshot", str(CLUSTER), "--replicas", "1", "-o", "name"]).stdout
    assert out.splitlines() == ["workload.kueue.x-k8s.io/train-7"]
