"""Issue 16, a kubectl-native experience: one option set for the analysing commands, errors that
help, kubectl's conventions (TYPE/NAME, -o name|jsonpath|custom-columns, -l, --version,
completion, broken pipes), the headline, `diff`, `rank --order/--limit/--for`, the explanation's
numbers and the candidate-node WHY column."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubectl_wap import __version__
from kubectl_wap.cli import app

BIN = Path(sys.executable).parent
WAP = str(BIN / "kubectl-wap")
COMPLETE = str(BIN / "kubectl_complete-wap")
JOB1 = ["podgroup", "job-1", "-n", "ml", "--demo"]
runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args))


def error_line(r) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.exit_code == 2, (r.exit_code, r.stderr, r.stdout)
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


def run(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([WAP, *args], capture_output=True, text=True, timeout=120, **kw)


# ---- one option set ----------------------------------------------------------------------------

def _flags(command: str) -> set[str]:
    import typer.main

    cmd = typer.main.get_command(app).commands[command]
    return {o for p in cmd.params for o in getattr(p, "opts", [])}


def test_analysing_commands_share_source_and_hypothetical_flags():
    from kubectl_wap.cli.options import Hypothetical, Source, flag_names

    shared = set(flag_names(Source)) | set(flag_names(Hypothetical))
    assert {"--snapshot", "--demo", "--context", "--namespace", "--replicas", "--requests", "--priority-class",
            "--min-count", "--disruption-mode", "--toleration", "--node-selector", "--preemption-policy", "--filename"} <= shared
    for command in ("whatif", "explain", "rank", "diff"):
        assert shared <= _flags(command), command


def test_explain_takes_the_hypothetical_flags():
    r = invoke("explain", "podgroup", "big-train", "-n", "ml", "--demo", "--replicas", "40", "--requests", "nvidia.com/gpu=1",
               "--priority-class", "high-priority", "-o", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["preemptor"]["name"] == "big-train" and d["preemptor"]["pods"] == 40
    assert d["explanation"]


# ---- errors that help ----------------------------------------------------------------------------

@pytest.mark.parametrize("args,want", [
    (["whatif", "podgroup", "job1", "-n", "ml", "--demo"], "did you mean 'job-1'?"),
    (["whatif", "podgroup", "x", "-n", "mll", "--demo"], 'namespace "mll" not found (did you mean \'ml\'?)'),
    (["whatif", "podgroup", "new", "-n", "ml", "--demo", "--replicas", "2", "--requests", "cpu=1", "--priority-class", "high-prio"],
     "did you mean 'high-priority'?"),
    (["whatif", "podgroup", "new", "-n", "ml", "--demo", "--replicas", "2", "--requests", "gpu=1"],
     'no node offers resource "gpu" (did you mean \'nvidia.com/gpu\''),
    (["whatif", "podgroup", "new", "-n", "nosuch", "--demo", "--replicas", "2", "--requests", "cpu=1"], 'namespace "nosuch" not found'),
    (["whatif", "podgrop", "job-1", "-n", "ml", "--demo"], "did you mean 'podgroup'"),
    (["whatif", *JOB1, "--context", "prod"], "--context applies to a live cluster"),
    # refused like the other connection flags (docs/live-clusters.md); any value, `abc` too, was taken
    (["pending", "-A", "--demo", "--request-timeout", "abc"], "--request-timeout applies to a live cluster"),
    (["whatif", *JOB1, "-o", "jsn"], "unknown output format 'jsn' (did you mean 'json'?)"),
    # was "unknown kind 'job-1'" / "say what to analyze: rank podgroup|... NAME", a form rank does not take
    (["rank", "--for", "job-1", "-n", "ml", "--demo"], "--for wants TYPE/NAME, e.g. --for podgroup/job-1 (got 'job-1')"),
    (["rank", "--for", "podgroup", "-n", "ml", "--demo"], "--for wants TYPE/NAME"),
    (["explain", "podgroup/job-1", "extra", "-n", "ml", "--demo"], "TYPE/NAME"),
    (["whatif", "-n", "ml", "--demo"], "say what to analyze: whatif"),
    (["explain", "-n", "ml", "--demo"], "say what to analyze: explain"),
])
def test_input_errors_are_one_line_exit_2_with_suggestions(args, want):
    assert want in error_line(invoke(*args))


def test_unknown_context_suggests(tmp_path):
    cfg = tmp_path / "config"
    cfg.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "prod",
                                   "contexts": [{"name": "prod", "context": {"cluster": "c", "user": "u"}}],
                                   "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                                   "users": [{"name": "u", "user": {"token": "t"}}]}))
    line = error_line(invoke("whatif", "podgroup", "job-1", "--kubeconfig", str(cfg), "--context", "prd"))
    assert "prd" in line and "prod" in line


def _dump(tmp_path: Path, items: list[dict], header: dict | None = None) -> str:
    p = tmp_path / "dump.json"
    doc = {"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot", "header": header or {}, "items": items} if header is not None \
        else {"apiVersion": "v1", "kind": "List", "items": items}
    p.write_text(json.dumps(doc))
    return str(p)


NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, node: str = "n1", ns: str = "default") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]},
            "status": {"phase": "Running"}}


def test_unserved_api_group_is_named(tmp_path):
    path = _dump(tmp_path, [NODE, _pod("a")], header={"notServed": ["podgroups.scheduling.k8s.io"]})
    line = error_line(invoke("whatif", "podgroup", "job-1", "--snapshot", path))
    assert "does not serve podgroups.scheduling.k8s.io" in line


def test_dump_without_podgroups_says_so(tmp_path):
    line = error_line(invoke("whatif", "podgroup", "job-1", "--snapshot", _dump(tmp_path, [NODE, _pod("a")])))
    assert "holds no PodGroups" in line and "podgroups" in line


def test_dump_without_nodes_is_one_line_naming_the_resource(tmp_path):
    items = [_pod(f"p{i}", node=f"gone-{i}") for i in range(300)]
    r = invoke("whatif", "pod", "p1", "--snapshot", _dump(tmp_path, items))
    line = error_line(r)
    assert "holds no Nodes" in line and "kubectl get nodes" in line


def test_warnings_of_one_kind_are_counted(tmp_path):
    items = [NODE, _pod("pending", node="")] + [_pod(f"p{i}", node=f"gone-{i}") for i in range(40)]
    items[1]["spec"].pop("nodeName")
    r = invoke("whatif", "pod", "pending", "--snapshot", _dump(tmp_path, items), "--color", "never")
    assert r.exit_code == 0, r.output
    warnings = [ln for ln in r.stderr.splitlines() if ln.startswith("Warning:")]
    assert any("37 more warning(s) like the last one" in w for w in warnings), r.stderr
    assert len(warnings) <= 5


# ---- kubectl conventions -------------------------------------------------------------------------

def test_type_name_form_equals_two_words():
    a = json.loads(invoke("whatif", *JOB1, "-o", "json").stdout)
    b = json.loads(invoke("whatif", "podgroup/job-1", "-n", "ml", "--demo", "-o", "json").stdout)
    assert a == b


def test_output_name_jsonpath_custom_columns():
    doc = json.loads(invoke("whatif", *JOB1, "-o", "json").stdout)
    names = invoke("whatif", *JOB1, "-o", "name").stdout.split()
    assert names == [f"pod/{v['name']}" for v in doc["victims"]]
    jp = invoke("whatif", *JOB1, "-o", 'jsonpath={.outcome}{"\\n"}{range .victims[*]}{.namespace}/{.name}{"\\n"}{end}')
    assert jp.exit_code == 0, jp.output
    assert jp.stdout.splitlines() == ["Preempt"] + [f"{v['namespace']}/{v['name']}" for v in doc["victims"]]
    filt = invoke("whatif", *JOB1, "-o", 'jsonpath={.victims[?(@.namespace=="batch")].name}')
    assert filt.stdout.split() == [v["name"] for v in doc["victims"] if v["namespace"] == "batch"]
    cc = invoke("whatif", *JOB1, "-o", "custom-columns=POD:.name,NODE:.node", "--no-headers")
    assert [ln.split() for ln in cc.stdout.splitlines()] == [[v["name"], v["node"]] for v in doc["victims"]]


def test_jsonpath_subset():
    from kubectl_wap.report.formats import jsonpath

    data = {"a": [{"n": 1, "k": "x"}, {"n": 2, "k": "y"}], "b": {"c": True}}
    assert jsonpath("{.a[*].n}", data) == "1 2"
    assert jsonpath("{.a[-1].k}", data) == "y"
    assert jsonpath("{.b.c}", data) == "true"
    assert jsonpath("{range .a[*]}[{.k}]{end}", data) == "[x][y]"
    assert jsonpath("{.missing}", data) == ""


def test_selector_and_victim_namespace_filter_what_is_shown_only():
    full = json.loads(invoke("whatif", *JOB1, "-o", "json").stdout)
    ns = json.loads(invoke("whatif", *JOB1, "-o", "json", "--victim-namespace", "research").stdout)
    assert ns["summary"] == full["summary"]  # the analysis is unchanged
    assert ns["victims"] and {v["namespace"] for v in ns["victims"]} == {"research"}
    assert ns["filter"]["victimUnits"] == len(full["victimUnits"]) > ns["filter"]["shownUnits"]
    table = invoke("whatif", *JOB1, "--victim-namespace", "research", "--color", "never")
    assert "Shown: " in table.stdout and "batch/render-0" not in table.stdout
    assert "Warning" not in table.stderr and ns["warnings"] == full["warnings"]
    # a typo shows nothing: a warning names the closest namespace (it said only "Shown: 0 of 7")
    typo = invoke("whatif", *JOB1, "--victim-namespace", "researc", "--color", "never")
    assert typo.exit_code == 0 and "Shown: 0 of 7" in typo.stdout
    assert "Warning: --victim-namespace: no object of the cluster is in namespace \"researc\" (did you mean 'research'?)" in typo.stderr
    from kubectl_wap.report.victimfilter import parse_label_selector

    sel = parse_label_selector("app=web,tier in (a, b),!legacy,env!=prod")
    assert sel({"app": "web", "tier": "a", "env": "dev"})
    assert not sel({"app": "web", "tier": "c"}) and not sel({"app": "web", "tier": "a", "legacy": ""})
    none = json.loads(invoke("whatif", *JOB1, "-o", "json", "-l", "no-such-label=1").stdout)
    assert none["victims"] == [] and none["summary"] == full["summary"]


def test_version_flag_and_help_say_kubectl_wap():
    v = run("--version")
    assert v.returncode == 0 and v.stdout.strip() == f"kubectl-wap {__version__}"
    h = run("whatif", "--help")
    assert h.stdout.startswith("Usage: kubectl wap whatif")
    assert "kubectl-wap whatif" not in h.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "powershell"])
def test_completion_scripts(shell):
    r = run("completion", shell)
    assert r.returncode == 0 and "kubectl_complete-wap __complete" in r.stdout
    exe = shutil.which({"powershell": "pwsh"}.get(shell, shell))
    if shell in ("bash", "zsh") and exe:
        check = subprocess.run([exe, "-n"], input=r.stdout, capture_output=True, text=True)
        assert check.returncode == 0, check.stderr


def test_bash_completion_script_completes(tmp_path):
    if not shutil.which("bash"):
        pytest.skip("bash not installed")
    script = run("completion", "bash").stdout
    probe = script + '\nCOMP_WORDS=(kubectl-wap whatif --demo -n ml podgroup job); COMP_CWORD=6; _kubectl_wap; printf "%s\\n" "${COMPREPLY[@]}"\n'
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    assert "job-1" in out.stdout.split(), out.stderr


def test_dynamic_completion_of_names_namespaces_contexts(tmp_path):
    def complete(*args: str, env: dict | None = None) -> list[str]:
        e = dict(os.environ, **(env or {}))
        return subprocess.run([COMPLETE, "__complete", *args], capture_output=True, text=True, env=e, timeout=60).stdout.split()

    assert "job-1" in complete("whatif", "podgroup", "--demo", "-n", "ml", "j")
    assert {"ml", "research"} <= set(complete("whatif", "--demo", "-n", ""))
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text(yaml.safe_dump({"contexts": [{"name": "prod", "context": {}}]}))
    b.write_text(yaml.safe_dump({"contexts": [{"name": "staging", "context": {"namespace": "ml"}}]}))
    assert complete("whatif", "--context", "", env={"KUBECONFIG": f"{a}{os.pathsep}{b}"})[:2] == ["prod", "staging"]
    assert complete("completion", "") == ["bash", "zsh", "fish", "powershell", ":4"]


def test_namespace_from_second_kubeconfig_file(tmp_path, monkeypatch):
    from kubectl_wap.snapshot.io.kubeconfig import context_namespace

    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text(yaml.safe_dump({"current-context": "staging"}))
    b.write_text(yaml.safe_dump({"contexts": [{"name": "staging", "context": {"namespace": "ml"}}]}))
    monkeypatch.setenv("KUBECONFIG", f"{a}{os.pathsep}{b}")
    assert context_namespace(None, None) == "ml"


def test_broken_pipe_keeps_the_verdict_exit_code():
    p = subprocess.run(f"'{WAP}' whatif podgroup job-1 -n ml --demo -o wide --exit-code | head -1; exit ${{PIPESTATUS[0]}}",
                       shell=True, executable="bash", capture_output=True, text=True, timeout=120)
    assert p.returncode == 10, p.stderr
    assert p.stderr == ""
    # Large output, reader gone after one line.
    p = subprocess.run(f"'{WAP}' rank --demo -o wide | head -1; exit ${{PIPESTATUS[0]}}", shell=True, executable="bash",
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stderr == ""


def test_snapshot_output_is_a_format_and_reads_dumps(tmp_path):
    j = run("snapshot", "--demo", "-o", "json")
    assert j.returncode == 0, j.stderr
    doc = json.loads(j.stdout)
    assert doc["kind"] == "Snapshot" and doc["items"]
    y = run("snapshot", "--demo", "-o", "yaml")
    assert yaml.safe_load(y.stdout) == doc
    bad = run("snapshot", "--demo", "-o", "prod.json.gz")
    assert bad.returncode == 2 and "--output-file prod.json.gz" in bad.stderr
    assert not (Path.cwd() / "prod.json.gz").exists()
    out = tmp_path / "s.json.gz"
    w = run("snapshot", "--demo", "--output-file", str(out))
    assert w.returncode == 0 and json.loads(gzip.decompress(out.read_bytes())) == doc
    assert error_line(invoke("snapshot", "--demo", "--context", "prod"))


def test_snapshot_converts_and_redacts_a_raw_dump(tmp_path):
    pod = _pod("web-1", ns="shop")
    pod["spec"]["containers"][0]["env"] = [{"name": "PASSWORD", "value": "hunter2"}]
    pod["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": "{secret}"}
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "shop"}, "data": {"k": "aHVudGVyMg=="}}
    dump = _dump(tmp_path, [NODE, pod, secret])
    r = run("snapshot", "--snapshot", dump, "--redact", "-o", "json")
    assert r.returncode == 0, r.stderr
    assert "hunter2" not in r.stdout and "aHVudGVyMg" not in r.stdout and "last-applied" not in r.stdout
    assert "web-1" not in r.stdout and "shop" not in r.stdout
    assert "Secret" in r.stderr  # said, not kept
    shared = tmp_path / "shared.json"
    shared.write_text(r.stdout)
    rank = run("rank", "--snapshot", str(shared), "-o", "json")
    assert rank.returncode == 0 and len(json.loads(rank.stdout)["units"]) == 1


# ---- headline ------------------------------------------------------------------------------------

def test_headline_answers_the_first_question():
    r = invoke("whatif", *JOB1, "--color", "never")
    head = r.stdout.split("Placement")[0]
    assert "Victim pods by namespace:  research 7, batch 2, ml 1" in head
    assert "By priority class:" in head and "low-priority 7" in head and "batch-default 3" in head
    assert "PDBs violated:" in head and "none" in head
    assert "10 evicted pod(s) hold nvidia.com/gpu 14" in head
    assert "research/protein-fold also loses its pod(s) on gpu-a2" in head


def test_headline_names_violated_pdbs():
    from kubectl_wap.report.headline import headline

    v = {"namespace": "inference", "name": "a", "priority": 100000, "priorityClassName": "inference-critical",
         "pdbs": ["inference/api-gateway"], "extendedResources": {}}
    lines = dict(headline({"victims": [v, dict(v, name="b")]}))
    assert lines["PDBs violated"] == "inference/api-gateway (2 pod(s))"
    assert "no evicted pod holds" in lines["Extended resources"]


# ---- diff ----------------------------------------------------------------------------------------

def test_diff_two_flag_sets_and_exit_code():
    same = invoke("diff", *JOB1, "--to", "--feature-gates PodGroupPreemptionPolicy=true", "--exit-code")
    assert same.exit_code == 0, same.output
    base = ["podgroup", "new", "-n", "ml", "--demo", "--requests", "nvidia.com/gpu=1", "--priority-class", "high-priority",
            "--toleration", "nvidia.com/gpu=present:NoSchedule"]
    d = invoke("diff", *base, "--replicas", "8", "--min-count", "8", "--to", "--replicas 40 --min-count 40", "-o", "json", "--exit-code")
    assert d.exit_code == 1, d.output
    doc = json.loads(d.stdout)
    a = json.loads(invoke("whatif", *base, "--replicas", "8", "--min-count", "8", "-o", "json").stdout)
    b = json.loads(invoke("whatif", *base, "--replicas", "40", "--min-count", "40", "-o", "json").stdout)
    added = {(v["namespace"], v["name"]) for v in b["victims"]} - {(v["namespace"], v["name"]) for v in a["victims"]}
    assert {(v["namespace"], v["name"]) for v in doc["victimsAdded"]} == added
    assert doc["a"]["outcome"] == a["outcome"] and doc["b"]["outcome"] == b["outcome"]


def test_diff_two_snapshots(tmp_path):
    from kubectl_wap.snapshot.io.snapfile import saved_items

    _, items = saved_items(None, True)
    # Scenario B: the research namespace's pods are gone.
    items = [o for o in items if not (o.get("kind") == "Pod" and o["metadata"].get("namespace") == "research")]
    other = tmp_path / "b.json"
    other.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    # B's --snapshot replaces A's --demo (it was refused as "--snapshot and --demo together", and --to
    # has no way to drop A's --demo: the demo could not be compared with a file at all)
    from_demo = invoke("diff", *JOB1[:4], "--demo", "--to", f"--snapshot {other}", "-o", "json")
    assert from_demo.exit_code == 0, from_demo.output
    r = invoke("diff", *JOB1[:4], "--snapshot", str(tmp_path / "a.json"), "--to", f"--snapshot {other}")
    assert r.exit_code == 2  # A's file is missing: one line
    (tmp_path / "a.json").write_text(run("snapshot", "--demo", "-o", "json").stdout)
    r = invoke("diff", *JOB1[:4], "--snapshot", str(tmp_path / "a.json"), "--to", f"--snapshot {other}", "-o", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    a = json.loads(invoke("whatif", *JOB1, "-o", "json").stdout)
    assert d["changed"] and d["a"]["outcome"] == "Preempt" and d["b"]["outcome"] == "NoPreemptionNeeded"
    assert {(v["namespace"], v["name"]) for v in d["victimsRemoved"]} == {(v["namespace"], v["name"]) for v in a["victims"]}
    assert d["victimsAdded"] == [] and d["placementChanges"]
    assert {k: v for k, v in json.loads(from_demo.stdout).items() if k != "source"} == {k: v for k, v in d.items() if k != "source"}
    # and the other way round: B's --demo replaces A's --snapshot; `--demo kueue` is read as on A's line
    back = invoke("diff", *JOB1[:4], "--snapshot", str(other), "--to", "--demo", "-o", "json")
    assert back.exit_code == 0 and json.loads(back.stdout)["b"]["outcome"] == "Preempt", back.output
    kueue = invoke("diff", *JOB1[:4], "--demo", "--to", "--demo kueue")
    assert kueue.exit_code == 2 and "holds no PodGroups" in kueue.stderr, kueue.output  # not "unknown kind 'kueue'"


# ---- rank ----------------------------------------------------------------------------------------

def test_rank_order_limit_and_title():
    risk = json.loads(invoke("rank", "--demo", "-o", "json").stdout)
    prot = json.loads(invoke("rank", "--demo", "-o", "json", "--order", "protection").stdout)
    assert [u["name"] for u in risk["units"]] == [u["name"] for u in reversed(prot["units"])]
    lim = json.loads(invoke("rank", "--demo", "-o", "json", "--limit", "3").stdout)
    assert [u["name"] for u in lim["units"]] == [u["name"] for u in risk["units"][:3]] and lim["totalUnits"] == len(risk["units"])
    t = invoke("rank", "--demo", "--color", "never", "--limit", "3")
    assert "most at risk first" in t.stdout and "first 3 shown" in t.stdout
    assert "most protected first" in invoke("rank", "--demo", "--order", "protection", "--color", "never").stdout


def test_rank_for_keeps_units_on_nodes_where_preemption_might_help():
    doc = json.loads(invoke("rank", "--demo", "-o", "json", "--for", "podgroup/job-1", "-n", "ml").stdout)
    helps = set(doc["nodesWherePreemptionMightHelp"])
    assert helps and all(n.startswith("gpu-") for n in helps)  # the GPU gang cannot use CPU nodes
    assert doc["units"] and all(set(u["nodes"]) & helps for u in doc["units"])
    full = json.loads(invoke("rank", "--demo", "-o", "json", "--priority", str(doc["preemptorPriority"])).stdout)
    assert len(doc["units"]) < len(full["units"])
    cpu_only = [u for u in full["units"] if all(n.startswith("cpu-") for n in u["nodes"])]
    assert cpu_only and not {u["name"] for u in cpu_only} & {u["name"] for u in doc["units"]}
    hyp = invoke("rank", "--demo", "-o", "json", "--for", "podgroup/new", "-n", "ml", "--replicas", "2", "--requests", "cpu=1")
    assert hyp.exit_code == 0, hyp.output


# ---- the explanation's numbers -------------------------------------------------------------------

def test_explain_numbers_collateral_and_folding():
    r = invoke("explain", *JOB1, "--color", "never")
    assert "gpu-a4 nvidia.com/gpu: allocatable 8 = kept 5 (5 pod(s)) + preemptor 3 (3 pod(s)) + free 0" in r.stdout
    assert "Collateral: PodGroup research/protein-fold also loses its pod(s) on gpu-a2" in r.stdout
    assert "(10 listed by -o wide)" in r.stdout
    wide = invoke("explain", *JOB1, "--color", "never", "-o", "wide")
    assert "       - Pod inference/api-gateway-8njhdjjp8d-5mlxg (priority 100000, 1 pod(s))" in wide.stdout
    assert max(len(ln) for ln in wide.stdout.splitlines()) < max(len(ln) for ln in r.stdout.splitlines()) + 200


def test_node_arithmetic_adds_up():
    d = json.loads(invoke("whatif", *JOB1, "-o", "json").stdout)
    assert d["nodeArithmetic"]
    for a in d["nodeArithmetic"]:
        assert a["allocatable"] == a["kept"] + a["preemptor"] + a["free"] and a["free"] >= 0
    assert {a["node"] for a in d["nodeArithmetic"]} == {p["node"] for p in d["placements"]}
    # The per-unit amounts on a node: the victim units' add up to what the victims free there.
    victims = {f"{v['unit']['kind']} {v['unit']['namespace']}/{v['unit']['name']}" for v in d["victimUnits"]}
    assert any(a["evicted"] for a in d["nodeArithmetic"])
    for a in d["nodeArithmetic"]:
        assert sum(amounts[a["resource"]] for label, amounts in a["units"].items() if label in victims) == a["evicted"]


def test_candidate_why_column_is_filled():
    d = json.loads(invoke("whatif", "pod", "urgent-report", "-n", "batch", "--demo", "-o", "json").stdout)
    whys = {c["node"]: c["why"] for c in d["candidateNodes"] if c.get("victims") is not None}
    assert whys and all(whys.values())
    assert whys[d["nominatedNode"]].startswith("chosen: ")
    t = invoke("whatif", "pod", "urgent-report", "-n", "batch", "--demo", "--color", "never")
    assert "chosen: lowest highest victim priority (100)" in t.stdout


def test_pick_criteria_order():
    """The WHY follows upstream's order: PDB violations decide before priorities."""
    from kubectl_wap.model import Pod, Snapshot
    from kubectl_wap.report.candidates import with_why

    pods = [Pod("d", "lo", priority=1), Pod("d", "hi", priority=100)]
    doc = {"nominatedNode": "b", "candidateNodes": [
        {"node": "a", "victims": ["d/lo"], "pdbViolations": 1},
        {"node": "b", "victims": ["d/hi"], "pdbViolations": 0}]}
    why = {c["node"]: c["why"] for c in with_why(doc, Snapshot(pods=pods))}
    assert why["a"].startswith("more PDB violations: 1 vs 0")
    assert why["b"] == "chosen: fewest PDB violations (0)"


def test_each_reprieve_step_shows_its_arithmetic():
    out = invoke("explain", *JOB1, "--color", "never").stdout
    steps = {ln.split("->")[0].split(":", 1)[1].strip(): ln for ln in out.splitlines() if "Reprieve " in ln and "->" in ln and "-" not in ln.split(":")[0]}
    needed = steps["Pod ml/hpo-trials-4"]
    assert "[gpu-a4 nvidia.com/gpu: kept 5 + preemptor 3 + this unit 1 = 9 > allocatable 8]" in needed
    assert "[gpu-b4 nvidia.com/gpu: kept 5 (its 1 included) + preemptor 3 = 8 <= allocatable 8]" in steps["Pod research/ablation-3"]
    assert "[it runs on no node of the placement]" in steps["Pod batch/etl-nightly-2"]
    # Every single-unit verdict step carries numbers, and the numbers agree with the verdict.
    import re

    for ln in steps.values():
        m = re.search(r"= (\d+) (>|<=) allocatable (\d+)\]", ln)
        if "[it runs on no node" in ln:
            continue
        assert m, ln
        total, op, alloc = int(m.group(1)), m.group(2), int(m.group(3))
        assert (total > alloc) == (op == ">") == ("-> needed" in ln)


@pytest.mark.parametrize("args, want", [
    (["rank", "--demo", "--order", "protecton"], "error: Invalid value for '--order': 'protecton' is not one of 'risk', "
                                                 "'protection' (did you mean 'protection'?)."),
    (["rank", "--demo", "--color", "nevr"], "(did you mean 'never'?)."),
    (["rank", "--demo", "--order", "x"], "error: Invalid value for '--order': 'x' is not one of 'risk', 'protection'."),
])
def test_a_misspelt_choice_names_the_closest(args, want):
    """click's choice error (through the console entry point) gets the closest value, as our own
    errors name it; nothing close, click's line as it was."""
    r = run(*args)
    assert r.returncode == 2 and not r.stdout
    assert len(r.stderr.splitlines()) == 1 and want in r.stderr, r.stderr


JOB_GANG = str(Path(__file__).resolve().parent.parent / "docs" / "examples" / "job-gang.yaml")


@pytest.mark.parametrize("args", [
    ["whatif", "-f", JOB_GANG, "--demo"],
    ["rank", "--for", "pod/train-llm-0", "-n", "ml", "-f", JOB_GANG, "--demo", "--limit", "2"],
    ["simulate", "-f", JOB_GANG, "--demo"],
], ids=["whatif", "rank", "simulate"])
def test_every_command_reading_f_says_how_it_read_the_file(args: list[str]) -> None:
    """The -f note (16 pods from the Job's template, names made up) and the API server's defaulting
    of requests from limits are part of the answer's input: rank --for and simulate dropped both,
    whatif said them. Each says them once, in the table (stderr) and in -o json."""
    for out in (invoke(*args), invoke(*args, "-o", "json")):
        assert out.exit_code == 0, out.output
    warnings = json.loads(invoke(*args, "-o", "json").stdout)["warnings"]
    assert sum(w.startswith("-f: Job ml/train-llm: 16 pod(s)") for w in warnings) == 1, warnings
    assert sum(w.startswith("requests defaulted from limits for 16 pod(s)") for w in warnings) == 1, warnings
    assert "Warning: -f: Job ml/train-llm" in invoke(*args).stderr


def test_every_option_value_is_named_for_what_it_takes() -> None:
    """Help names each option's value (`--for TYPE/NAME`, `-n NAME`, `--limit N`), as kubectl's help
    does, not click's type placeholder (`<str>`, `<int>`, `<float>`: 31 options showed one)."""
    import re

    from kubectl_wap.cli import COMMANDS

    shown = []
    for name in COMMANDS:
        for args in ([name, "--help"], [name, "load", "--help"]) if name == "demo" else ([name, "--help"],):
            r = runner.invoke(app, args, terminal_width=200)
            assert r.exit_code == 0, (args, r.output)
            shown += [f"{name}: {m}" for m in re.findall(r"--[a-z-]+ <(?:str|int|float|text|integer)>", r.output)]
    assert not shown, shown


@pytest.mark.parametrize("on, off", [("--autoscale", "--scale-up"), ("--no-autoscale", "--no-scale-up")])
def test_pending_takes_the_products_autoscale_spelling(on: str, off: str) -> None:
    """whatif says --autoscale; pending's add-a-node column answered only to --scale-up, so
    `pending --autoscale` was an error. Both spellings give the same answer."""
    a, b = invoke("pending", "-A", "--demo", on, "-o", "json"), invoke("pending", "-A", "--demo", off, "-o", "json")
    assert a.exit_code == b.exit_code == 0, a.output
    assert json.loads(a.stdout) == json.loads(b.stdout)
