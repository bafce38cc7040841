"""kubectl-wap against a real kube-apiserver v1.38.0-beta.0 with alpha APIs off (issue 29): PodGroups
and CompositePodGroups exist only at scheduling.k8s.io/v1beta1 there, so a capture that asks for
CompositePodGroups at v1alpha3 (as ours did before discovery) would silently miss the tree.

Runs only with KUBECTL_WAP_E2E=1 (bash tests/e2e/run.sh). The cluster, made with the real kubectl as
admin and read by kubectl-wap as a user bound only to deploy/rbac-readonly.yaml:

    node  running pod (priority class, cpu)   free cpu
    n1    ml/v-0 (low 100, 3)                 1
    n2    ml/v-1 (mid 500, 3)                 1

and the pending CompositePodGroup ml/tree (gang, minGroupCount 2, class high 1000000) over the gang
PodGroups ml/tree-a and ml/tree-b (minCount 1), one 2-cpu pod each. Every object is created at
v1beta1 through the server's admission (Priority fills spec.priority and, from the classes'
PreemptLowerPriority, spec.preemptionPolicy of the groups).

Expected, by the v1.38.0-beta.0 rules (victim-aware node choice, DefaultPreemption RankNodes):
tree-a-0's cheapest node is n1 (its victim v-0 is less important than n2's v-1); choosing it condemns
v-0, so n1 has 4 free and tree-b-0 fits there with no further victim. Victims {ml/v-0}, both pods
nominated to n1. Under the v1.37.2 rules every potential victim is removed first and LeastAllocated
spreads the two pods over n1 and n2, so both v-0 and v-1 go. Both answers are checked against the real
kube-scheduler of each version (the oracle) on the snapshot kubectl-wap captured.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from real_apiserver import ENABLED, REPO, SKIP_REASON, Cluster, ready_nodes, tool  # noqa: E402

if not ENABLED:
    pytest.skip(SKIP_REASON, allow_module_level=True)

pytestmark = pytest.mark.e2e

CPG = "compositepodgroups.scheduling.k8s.io"
PG = "podgroups.scheduling.k8s.io"
ANSWER = {"1.38": {"ml/v-0"}, "1.37": {"ml/v-0", "ml/v-1"}}


def _pod(name: str, prio_class: str, cpu: str, group: str | None = None, node: str | None = None) -> dict:
    spec: dict = {"priorityClassName": prio_class,
                  "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml"}, "spec": spec}


def _group(kind: str, name: str, policy: dict, parent: str | None = None) -> dict:
    spec: dict = {"schedulingPolicy": policy, "priorityClassName": "high",
                  "workloadRef": {"workloadName": "tree", "templateName": name}}
    if parent:
        spec["parentCompositePodGroupName"] = parent
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": kind, "metadata": {"name": name, "namespace": "ml"}, "spec": spec}


@pytest.fixture(scope="module")
def populated138(cluster138: Cluster) -> Cluster:
    c = cluster138
    c.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}])
    c.apply([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
             for n, v in {"low": 100, "mid": 500, "high": 1000000}.items()])
    ready_nodes(c, ("n1", "n2"))
    c.apply([_pod("v-0", "low", "3", node="n1"), _pod("v-1", "mid", "3", node="n2")])
    for i, name in enumerate(("v-0", "v-1")):
        st = {"status": {"phase": "Running", "startTime": f"2026-11-30T0{i}:00:00Z", "conditions": [{"type": "Ready", "status": "True"}]}}
        c.kubectl("patch", "pod", name, "-n", "ml", "--subresource=status", "--type=merge", "-p", json.dumps(st))
    c.apply([_group("CompositePodGroup", "tree", {"gang": {"minGroupCount": 2}}),
             _group("PodGroup", "tree-a", {"gang": {"minCount": 1}}, "tree"),
             _group("PodGroup", "tree-b", {"gang": {"minCount": 1}}, "tree"),
             _pod("tree-a-0", "high", "2", "tree-a"), _pod("tree-b-0", "high", "2", "tree-b")])
    c.kubectl("apply", "-f", str(REPO / "deploy" / "rbac-readonly.yaml"))
    return c


def _wap(c: Cluster, *args: str, live: bool = True) -> subprocess.CompletedProcess:
    cmd = [tool("kubectl-wap"), *args, "--color", "never"] + (["--kubeconfig", str(c.kubeconfigs["reader"])] if live else [])
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=c.workdir)
    assert res.returncode == 0, f"exit {res.returncode}: {res.stderr.strip()}"
    return res


def _victims(doc: dict) -> set[str]:
    return {f"{v['namespace']}/{v['name']}" for v in doc["victims"]}


@pytest.fixture(scope="module")
def snapshot138(populated138: Cluster) -> Path:
    out = populated138.workdir / "s138.json.gz"
    _wap(populated138, "snapshot", "--output-file", str(out))
    return out


def test_server_serves_the_groups_at_v1beta1_only(populated138: Cluster) -> None:
    status, version = populated138.request("GET", "/version")
    assert status == 200 and version["gitVersion"] == "v1.38.0-beta.0", version
    assert populated138.request("GET", "/apis/scheduling.k8s.io/v1alpha3/compositepodgroups")[0] == 404
    status, doc = populated138.request("GET", "/apis/scheduling.k8s.io/v1beta1")
    assert status == 200 and {"podgroups", "compositepodgroups"} <= {r["name"] for r in doc["resources"]}


def test_snapshot_reads_the_cpg_at_v1beta1(snapshot138: Path) -> None:
    doc = json.loads(gzip.decompress(snapshot138.read_bytes()))
    header = doc["header"]
    assert header["server"]["version"] == "v1.38.0-beta.0"
    assert header["notServed"] == [] and CPG in header["listed"]
    assert header["apiVersions"][CPG] == header["apiVersions"][PG] == "scheduling.k8s.io/v1beta1"
    assert header["counts"][CPG] == 1 and header["counts"][PG] == 2


def _oracle(version: str, snapshot: Path) -> dict:
    for _attempt in range(3):  # the oracle's own apiserver has a 10 s start-up limit (real_apiserver.py)
        res = subprocess.run([sys.executable, "-m", "tests.oracle", "whatif", "cpg", "tree", "-n", "ml", "--snapshot", str(snapshot),
                              "--version", version, "-o", "json"], capture_output=True, text=True, timeout=600, cwd=REPO)
        if res.returncode == 0 or " after 0/1 case(s)" not in res.stderr:
            break
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def test_live_whatif_is_the_1_38_answer_and_the_real_scheduler_s(populated138: Cluster, snapshot138: Path) -> None:
    env = dict(os.environ, KUBECONFIG=str(populated138.kubeconfigs["reader"]),
               PATH=f"{Path(tool('kubectl-wap')).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    res = subprocess.run([tool("kubectl"), "wap", "whatif", "cpg", "tree", "-n", "ml", "-o", "json", "--color", "never"],
                         capture_output=True, text=True, timeout=120, cwd=populated138.workdir, env=env)
    assert res.returncode == 0, res.stderr
    live = json.loads(res.stdout)
    # a 1.38 server gets the 1.38 rules by default, measured against the build it names
    assert live["schedulerVersion"] == "1.38" and live["schedulerVersionBuild"] == "v1.38.0-beta.0"
    assert live["outcome"] == "Preempt" and _victims(live) == ANSWER["1.38"], live["message"]
    oracle = _oracle("1.38", snapshot138)
    assert oracle["oracle"]["kubernetes"] == "v1.38.0-beta.0" and not oracle["oracle"]["error"]
    assert (oracle["outcome"], _victims(oracle)) == (live["outcome"], _victims(live))
    assert sorted(oracle["nominated"].values()) == ["n1", "n1"]


def test_the_same_snapshot_under_1_37_rules_and_kube_scheduler_v1_37_2(populated138: Cluster, snapshot138: Path) -> None:
    """The upgrade what-if the other way: the 1.37 rules on the same cluster take both victims, and
    so does the real v1.37.2 scheduler."""
    ours = json.loads(_wap(populated138, "whatif", "cpg", "tree", "-n", "ml", "--snapshot", str(snapshot138),
                           "--scheduler-version", "1.37", "-o", "json", live=False).stdout)
    assert _victims(ours) == ANSWER["1.37"], ours["message"]
    oracle = _oracle("1.37", snapshot138)
    assert oracle["oracle"]["kubernetes"] == "v1.37.2" and _victims(oracle) == ANSWER["1.37"]
