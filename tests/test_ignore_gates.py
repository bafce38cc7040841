"""--ignore-gates (issue 30 item 2): kube-scheduler never tries a gated pod (SchedulingGates
PreEnqueue), so whatif answers NotEligible; with the flag it answers as if the gates of the
question's pods were removed, says so in one warning, and changes nothing else."""

from __future__ import annotations

import json

from builders import make_node, make_pod, make_podgroup
from typer.testing import CliRunner

from kubectl_wap.cli import app

runner = CliRunner()
T = 1_795_000_000


def _cluster(tmp_path, group: bool):
    items = [make_node("n1").alloc(cpu="4", memory="8Gi").obj(),
             make_pod("low").priority(0).req(cpu="4", memory="1Gi").on("n1", start=T).obj(),
             make_pod("other-gated").priority(5000).req(cpu="1").gated("x/hold").obj()]
    if group:
        items.append(make_podgroup("job").gang(2).priority(100).obj())
        items += [make_pod(f"job-{i}").priority(100).req(cpu="1", memory="64Mi").group("job").gated("kueue.x-k8s.io/admission").obj()
                  for i in range(2)]
    else:
        items.append(make_pod("hi").priority(100).req(cpu="2", memory="64Mi").gated("example.com/quota").obj())
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(p)


def _doc(*args):
    r = runner.invoke(app, [*args, "-o", "json", "--scheduler-version", "1.37"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_a_gated_pod_is_not_eligible_and_the_message_names_the_flag(tmp_path):
    d = _doc("whatif", "pod", "hi", "--snapshot", _cluster(tmp_path, False))
    assert d["outcome"] == "NotEligible" and "example.com/quota" in d["message"] and "--ignore-gates" in d["message"]


def test_ignore_gates_answers_as_if_the_pods_gates_were_removed(tmp_path):
    d = _doc("whatif", "pod", "hi", "--snapshot", _cluster(tmp_path, False), "--ignore-gates")
    assert d["outcome"] == "Preempt" and [v["name"] for v in d["victims"]] == ["low"]
    notes = [w for w in d["warnings"] if w.startswith("--ignore-gates:")]
    assert len(notes) == 1 and "1 pod(s) of pod default/hi" in notes[0]  # other-gated keeps its gate


def test_a_group_whose_pods_are_all_gated_is_not_eligible(tmp_path):
    c = _cluster(tmp_path, True)
    d = _doc("whatif", "podgroup", "job", "--snapshot", c)
    assert d["outcome"] == "NotEligible" and "kueue.x-k8s.io/admission" in d["message"]
    d = _doc("whatif", "podgroup", "job", "--snapshot", c, "--ignore-gates")
    assert d["outcome"] == "Preempt" and "2 pod(s) of podgroup default/job" in " ".join(d["warnings"])


def test_diff_to_ignore_gates(tmp_path):
    r = runner.invoke(app, ["diff", "pod", "hi", "--snapshot", _cluster(tmp_path, False), "--to", "--ignore-gates", "-o", "json",
                            "--scheduler-version", "1.37"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["changed"] and [v for v in d["victimsAdded"]]
