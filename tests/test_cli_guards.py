"""Usage mistakes in hypothetical work end as one clear line (exit 2), never as a confident but
wrong verdict; a pod of a pod group is refused by per-pod preemption, as upstream does."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kubectl_wap.cli import app

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args))


@pytest.mark.parametrize(
    "args, text",
    [
        (["whatif", "pod", "job-1-0", "-n", "ml", "--priority-class", "low-priority", "--demo"], "--priority-class applies only to a PodGroup"),
        (["whatif", "podgroup", "new", "-n", "ml", "--requests", "cpu=1", "--demo"], "a new hypothetical group needs --replicas N"),
        (["whatif", "podgroup", "new", "-n", "ml", "--replicas", "0", "--demo"], "--replicas must be between 1 and 100,000"),
        (["whatif", "podgroup", "new", "-n", "ml", "--replicas", "2", "--min-count", "5", "--demo"], "could never be satisfied"),
        (["whatif", "podgroup", "new", "-n", "ml", "--replicas", "2", "--preemption-policy", "sometimes", "--demo"], "invalid --preemption-policy"),
    ],
)
def test_hypothetical_misuse_is_one_line(args: list[str], text: str) -> None:
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and text in lines[0], r.stderr


def test_flags_on_an_existing_group_modify_it_not_replace_it() -> None:
    # Issue 30: --replicas/--requests/--priority-class on job-1 change only what they name. job-1
    # keeps its gang minCount (16), its pods keep their template (GPU requests, tolerations), and
    # its 16 pending pods give way to the 2 asked about (never a mix of both).
    r = invoke("whatif", "podgroup", "job-1", "-n", "ml", "--replicas", "2", "--requests", "cpu=1",
               "--priority-class", "high-priority", "--demo", "-o", "json")
    doc = json.loads(r.stdout)
    assert doc["preemptor"]["pods"] == 2
    (note,) = [w for w in doc["warnings"] if w.startswith("hypothetical work:")]
    assert "PodGroup ml/job-1 as the cluster has it, with 2 pending pod(s) job-1-whatif-0..1 (16 pending now)" in note
    assert "changed by --requests, --priority-class" in note and "its minCount 16 is kept, which 2 pod(s) cannot meet" in note
    # minCount 16 kept: with 2 pods the gang never reaches its quorum, so GangScheduling's
    # PreEnqueue never lets them into a cycle (the real v1.37.2 and v1.38.0-beta.0 leave such a
    # gang pending: fixture wap-quorum-gang-short-of-pods)
    assert doc["outcome"] == "NotEligible" and "waiting for minCount pods" in doc["message"] and "2 of 16" in doc["message"]
    # without flags but --requests the count stays 16 and the GPU requests of the template stay
    g = json.loads(invoke("whatif", "podgroup", "job-1", "-n", "ml", "--requests", "cpu=1", "--demo", "-o", "json").stdout)
    assert g["preemptor"]["pods"] == 16 and g["outcome"] == "Preempt"


def test_pod_of_a_group_is_refused_by_per_pod_preemption() -> None:
    # DefaultPreemption.PostFilter refuses group pods with GenericWorkload on; their group is the
    # unit kube-scheduler schedules, whatever a lone placement of this pod would say.
    r = invoke("whatif", "pod", "job-1-5", "-n", "ml", "--demo", "-o", "json")
    doc = json.loads(r.stdout)
    assert doc["outcome"] == "NotEligible"
    assert "not eligible due to workload aware preemption enabled" in doc["message"]
    assert any("whatif podgroup job-1 -n ml" in w for w in doc["warnings"])


def test_warnings_go_to_stderr_in_table_mode() -> None:
    r = invoke("whatif", "pod", "job-1-5", "-n", "ml", "--demo", "--color", "never")
    assert "Warning:" in r.stderr and "Warning:" not in r.stdout


def test_completion_offers_files_after_file_flags_and_formats_after_o() -> None:
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "kubectl_complete-wap"
    out = subprocess.run([str(exe), "__complete", "whatif", "-f", ""], capture_output=True, text=True).stdout.split()
    assert out == [":0"]
    out = subprocess.run([str(exe), "__complete", "whatif", "-o", ""], capture_output=True, text=True).stdout.split()
    # every -o value of the one output contract (report/formats.py), html too (whatif has a page)
    assert out == ["table", "wide", "json", "yaml", "name", "jsonpath=", "jsonpath-file=", "jsonpath-as-json=",
                   "custom-columns=", "custom-columns-file=", "html", ":4"]


def test_redaction_map_finds_the_group_in_a_redacted_snapshot() -> None:
    # `snapshot --redact --redact-map`: the private map tells the sender which hashed names to
    # give the recipient; analyzing the redacted copy under those names gives the same answer.
    from kubectl_wap.cli.snapshot import _pending_name_map
    from kubectl_wap.preemption.analyze import analyze
    from kubectl_wap.snapshot.decode.convert import build_snapshot
    from kubectl_wap.snapshot.share.redact import redactor_for
    from kubectl_wap.snapshot.source import DEMO_PATH

    items = json.loads(DEMO_PATH.read_text())["items"]
    r = redactor_for(items, b"k" * 32)
    mapping = _pending_name_map(items, r.h)
    red = [r.item(o) for o in items]
    target = mapping["podgroup ml/job-1"]
    assert target["name"] != "job-1" and "pod ml/job-1-0" in mapping and "pod ml/job-1-0" in mapping
    original = analyze(build_snapshot(items), "podgroup", "ml", "job-1")
    redacted = analyze(build_snapshot(red), "podgroup", target["namespace"], target["name"])
    assert redacted.outcome == original.outcome == "Preempt"
    assert [len(v.unit.pods) for v in redacted.victims] == [len(v.unit.pods) for v in original.victims]
    assert "job-1" not in json.dumps(red)


def test_rank_and_autoscale_json_validate_against_shipped_schemas() -> None:
    from importlib import resources

    import jsonschema

    base = resources.files("kubectl_wap") / "report"
    rank_schema = json.loads((base / "rank-schema.json").read_text())
    report_schema = json.loads((base / "schema.json").read_text())
    r = invoke("rank", "--demo", "--priority", "1000000", "-o", "json")
    jsonschema.validate(json.loads(r.stdout), rank_schema)
    for group, ns in (("job-1", "ml"), ("giant", "research"), ("small-eval", "ml")):
        a = invoke("whatif", "podgroup", group, "-n", ns, "--demo", "--autoscale", "-o", "json")
        doc = json.loads(a.stdout)
        assert "autoscale" in doc
        jsonschema.validate(doc, report_schema)


def test_console_exit_runs_atexit_and_flushes(tmp_path) -> None:
    # main() leaves with os._exit (no interpreter teardown) after running the atexit handlers (the
    # kubernetes client's temporary certificate files and coverage's data depend on them) and
    # flushing stdout, with SystemExit's status.
    import subprocess
    import sys

    marker = tmp_path / "atexit-ran"
    out = tmp_path / "out.txt"
    code = ("import atexit, sys; marker = sys.argv.pop(1); atexit.register(lambda: open(marker, 'w').write('ran')); "
            "sys.argv[0] = 'kubectl-wap'; from kubectl_wap.cli import main; main(); print('not reached')")
    for args, status in ((["whatif", "podgroup", "job-1", "-n", "ml", "--demo"], 0),
                         (["whatif", "podgroup", "nope", "-n", "ml", "--demo"], 2),
                         (["whatif", "podgroup", "job-1", "-n", "ml", "--demo", "--exit-code"], 10)):
        marker.unlink(missing_ok=True)
        with open(out, "w") as f:
            r = subprocess.run([sys.executable, "-c", code, str(marker), *args], stdout=f, stderr=subprocess.PIPE, text=True, timeout=120)
        assert r.returncode == status, r.stderr
        assert marker.read_text() == "ran"
        text = out.read_text()
        assert "not reached" not in text
        if status != 2:
            assert text.startswith("Preempt: 10 pod(s) in 7 unit(s)") and text.endswith("\n")
        else:
            assert "not found" in r.stderr


def test_diff_says_what_the_hypothetical_side_changed() -> None:
    r = invoke("diff", "podgroup", "job-1", "-n", "ml", "--demo", "--to", "--replicas 4", "-o", "json")
    d = json.loads(r.stdout)
    assert any(w.startswith("B (--replicas 4): hypothetical work: PodGroup ml/job-1 as the cluster has it") for w in d["warnings"])
    table = invoke("diff", "podgroup", "job-1", "-n", "ml", "--demo", "--to", "--replicas 4")
    assert "Warning: B (--replicas 4): hypothetical work" in table.stderr


@pytest.mark.parametrize("args,text", [
    (["--autoscale", "--node-templates", "{tpl}"], "unknown key 'maxNode' (did you mean 'maxNodes'?)"),
    (["--replicas", "2", "--toleration", "=v:NoSchedule"], "an empty key (tolerate every taint) cannot have a value"),
])
def test_input_mistakes_that_were_ignored_are_one_line(tmp_path, args: list[str], text: str) -> None:
    # issue 30 item 5: a typo in a node-templates file and a toleration the API server would refuse
    tpl = tmp_path / "nt.yaml"
    tpl.write_text("templates:\n- name: a\n  allocatable: {cpu: 8}\n  maxNode: 3\n")
    r = invoke("whatif", "podgroup", "job-1", "-n", "ml", "--demo", *[a.replace("{tpl}", str(tpl)) for a in args])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and text in lines[0], r.stderr
