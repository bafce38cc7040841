"""kubectl-wap against a real kube-apiserver v1.37.2 (the oracle's, TestServe; see real_apiserver.py).

Runs only with KUBECTL_WAP_E2E=1 (bash tests/e2e/run.sh). The cluster is built with the real kubectl
(create, patch --subresource=status, taint) as an admin token user; kubectl-wap then reads it as a user bound
only to deploy/rbac-readonly.yaml, and as users whose role lacks one resource.

The cluster (cpu only matters; every node 4 cpu, 16Gi, 110 pods, Ready; n4 is tainted
dedicated=batch:NoSchedule, which only d-0 tolerates):

    node  pods (namespace/name, priority, cpu)                       free cpu
    n1    ml/train-0 (100, 2)   batch/a-0 (1000, 1)                    1
    n2    ml/train-1 (100, 2)   batch/b-0 (100, 1)                     1
    n3    batch/c-0 (2000000, 2)                                       2
    n4    batch/d-0 (1000, 4)                                          0

PriorityClasses: critical 2000000, high 1000000, batch 1000, low 100; every pod and group names one
and the server's Priority admission fills in spec.priority. PodGroups (scheduling.k8s.io/v1beta1,
served natively): ml/train (All disruption mode, pods train-0/1 via spec.schedulingGroup) and the
pending gang ml/job (minCount 2, priorityClassName high, pods job-0/1 each 3 cpu). A
CompositePodGroup ml/pipeline (v1alpha3) and a PodDisruptionBudget batch/b (policy/v1, minAvailable 1
over b-0; no disruption controller runs, so its status says 0 disruptions allowed) complete the set.

Expected what-if for ml/job, by hand: no node has 3 free cpu, so the gang needs preemption. Candidates
are the units below priority 1000000: the PodGroup ml/train (train-0 + train-1, All mode: one unit),
a-0, b-0, d-0 (c-0 at 2000000 is not one). With every candidate removed n1 and n2 have 4 free, n3
has 2 (c-0 stays) and n4 is tainted: job-0 goes to n1 and job-1 to n2 (LeastAllocated scores n1 and
n2 alike; our engine gives the tie to the smallest name, kube-scheduler's selectHost picks at random,
so the real scheduler may swap the two pods: the nodes, the victims and the reprieves are the same
either way). Without n4's taint, n4 would tie with n1 and n2 too, and a random pick of n4 makes d-0 a
victim: the oracle showed exactly that on the first version of this cluster. Reprieve: d-0 (n4) is
not on a placement node -> spared; a-0 back on n1 gives 3 + 1 = 4 <= 4 -> spared; b-0 back on n2 gives
3 + 1 -> spared; the train group back (2 cpu on n1 and on n2) does not fit -> needed. Victims: ml/train-0
and ml/train-1, one All-mode PodGroup unit. test_live_whatif_equals_the_real_scheduler checks the same
question against kube-scheduler v1.37.2 (the oracle) on the snapshot kubectl-wap captured.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))

from real_apiserver import ENABLED, REPO, SKIP_REASON, TOKENS, Cluster, ready_nodes, tool, write_kubeconfig  # noqa: E402

if not ENABLED:
    pytest.skip(SKIP_REASON, allow_module_level=True)

pytestmark = pytest.mark.e2e

NODES = ("n1", "n2", "n3", "n4")
PRIORITY_CLASSES = {"critical": 2000000, "high": 1000000, "batch": 1000, "low": 100}
# name: (namespace, node, priority class, cpu, podGroup)
RUNNING = {
    "train-0": ("ml", "n1", "low", "2", "train"),
    "a-0": ("batch", "n1", "batch", "1", None),
    "train-1": ("ml", "n2", "low", "2", "train"),
    "b-0": ("batch", "n2", "low", "1", None),
    "c-0": ("batch", "n3", "critical", "2", None),
    "d-0": ("batch", "n4", "batch", "4", None),
}
DEDICATED = {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}  # n4's taint, d-0 tolerates it
EXPECTED_VICTIMS = {"ml/train-0", "ml/train-1"}
EXPECTED_PLACEMENT = {"ml/job-0": "n1", "ml/job-1": "n2"}


def pod(name: str, ns: str, prio_class: str, cpu: str, group: str | None, node: str | None = None) -> dict:
    spec: dict = {
        "priorityClassName": prio_class,  # the server's Priority admission sets spec.priority from it
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
    }
    if node:
        spec["nodeName"] = node
    if node == "n4":
        spec["tolerations"] = [DEDICATED]
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": {"app": name.rsplit("-", 1)[0]}}, "spec": spec}


def job_manifest() -> list[dict]:
    pg = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "job", "namespace": "ml"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"all": {}}, "priorityClassName": "high"},
    }
    return [pg] + [pod(f"job-{i}", "ml", "high", "3", "job") for i in range(2)]


def reader_role(name: str, drop: str | None) -> list[dict]:
    """deploy/rbac-readonly.yaml's ClusterRole (renamed, minus one resource) bound to group `name`."""
    role, _binding = list(yaml.safe_load_all((REPO / "deploy" / "rbac-readonly.yaml").read_text()))
    role = json.loads(json.dumps(role))
    role["metadata"]["name"] = name
    rules = []
    for rule in role["rules"]:
        if drop and drop in rule.get("resources", []):
            rule["resources"] = [r for r in rule["resources"] if r != drop]
            if not rule["resources"]:
                continue
        rules.append(rule)
    role["rules"] = rules
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name}],
    }
    return [role, binding]


@pytest.fixture(scope="module")
def populated(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Cluster:
    c = cluster
    c.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"team": ns}}} for ns in ("ml", "batch")])
    c.apply([
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
        for n, v in PRIORITY_CLASSES.items()
    ])
    ready_nodes(c, NODES)
    c.kubectl("taint", "nodes", "n4", f"{DEDICATED['key']}={DEDICATED['value']}:{DEDICATED['effect']}")
    c.apply([
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "train", "namespace": "ml"},
         "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"all": {}}, "priorityClassName": "low"}},
        {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup", "metadata": {"name": "pipeline", "namespace": "ml"},
         "spec": {"workloadRef": {"workloadName": "pipeline", "templateName": "pipeline"}, "schedulingPolicy": {"basic": {}},
                  "disruptionMode": {"all": {}}, "priorityClassName": "low"}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "batch"},
         "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "b"}}}},
    ])
    c.apply([pod(name, ns, pc, cpu, g, node) for name, (ns, node, pc, cpu, g) in RUNNING.items()])
    for i, (name, (ns, *_)) in enumerate(RUNNING.items()):
        st = {"status": {"phase": "Running", "startTime": f"2026-11-30T0{i}:00:00Z",
                         "conditions": [{"type": "Ready", "status": "True"}]}}
        c.kubectl("patch", "pod", name, "-n", ns, "--subresource=status", "--type=merge", "-p", json.dumps(st))
    c.apply(job_manifest())  # pending: no nodeName, phase Pending
    # RBAC: the shipped read-only role for group kubectl-wap-users, and two cut-down copies.
    c.kubectl("apply", "-f", str(REPO / "deploy" / "rbac-readonly.yaml"))
    c.apply(reader_role("kubectl-wap-nopdb", "poddisruptionbudgets") + reader_role("kubectl-wap-nopods", "pods"))
    d = tmp_path_factory.mktemp("manifests")
    (d / "job.yaml").write_text(yaml.safe_dump_all(job_manifest(), sort_keys=False))
    c.job_yaml = d / "job.yaml"  # type: ignore[attr-defined]
    return c


def wap(c: Cluster, *args: str, user: str = "reader", live: bool = True) -> subprocess.CompletedProcess:
    cmd = [tool("kubectl-wap"), *args, "--color", "never"]
    if live:
        cmd += ["--kubeconfig", str(c.kubeconfigs[user])]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=c.workdir)


def ok(res: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert res.returncode == 0, f"exit {res.returncode}: {res.stderr.strip()}"
    return res


def victims(doc: dict) -> set[str]:
    return {f"{v['namespace']}/{v['name']}" for v in doc["victims"]}


def placements(doc: dict) -> dict[str, str]:
    return {f"{p['pod']['namespace']}/{p['pod']['name']}": p["node"] for p in doc["placements"]}


def stable(doc: dict) -> dict:
    """A report without its source field (file name vs cluster URL): what must not differ."""
    return {k: v for k, v in doc.items() if k != "source"}


# -- the server itself ---------------------------------------------------------------------------------

def test_server_is_kube_apiserver_v1_37_2_serving_the_scheduling_api_natively(populated: Cluster) -> None:
    status, version = populated.request("GET", "/version")
    assert status == 200 and version["gitVersion"] == "v1.37.2", version
    for path in ("/apis/scheduling.k8s.io/v1beta1/podgroups", "/apis/scheduling.k8s.io/v1alpha3/compositepodgroups",
                 "/apis/scheduling.k8s.io/v1/priorityclasses", "/apis/policy/v1/poddisruptionbudgets"):
        assert populated.request("GET", path)[0] == 200, path
    # Built-in types, not stand-ins: upstream's test server chains no apiextensions server, so no
    # CustomResourceDefinition can even exist.
    assert populated.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")[0] == 404


def test_server_keeps_scheduling_group_and_resolves_priority(populated: Cluster) -> None:
    """What a v1.37 server does that the old 1.20 stand-in did not: the pod keeps its PodGroup
    membership, and Priority admission resolved spec.priority of pods and PodGroups."""
    pod_json = json.loads(populated.kubectl("get", "pod", "train-0", "-n", "ml", "-o", "json").stdout)
    assert pod_json["spec"]["schedulingGroup"] == {"podGroupName": "train"}
    assert pod_json["spec"]["priority"] == 100 and pod_json["status"]["phase"] == "Running"
    pg = json.loads(populated.kubectl("get", "podgroups.v1beta1.scheduling.k8s.io", "job", "-n", "ml", "-o", "json").stdout)
    assert pg["spec"]["priority"] == 1000000


# -- snapshot, whatif, explain, rank as the read-only user ---------------------------------------------

@pytest.fixture(scope="module")
def snapshot_file(populated: Cluster) -> Path:
    out = populated.workdir / "s.json.gz"
    res = ok(wap(populated, "snapshot", "--output-file", str(out)))
    assert "not served" not in res.stderr, res.stderr
    return out


def test_snapshot_contents(snapshot_file: Path) -> None:
    doc = json.loads(gzip.decompress(snapshot_file.read_bytes()))
    header = doc.get("header", doc)
    text = json.dumps(doc)
    assert header["server"]["version"] == "v1.37.2"
    assert header["notServed"] == []
    assert header["forbidden"] == []
    assert set(header["listed"]) == {
        "nodes", "pods", "namespaces", "priorityclasses.scheduling.k8s.io", "poddisruptionbudgets.policy",
        "podgroups.scheduling.k8s.io", "compositepodgroups.scheduling.k8s.io",
        # the storage and DRA kinds (issue 15): all served by v1.37.2, none created here
        "persistentvolumeclaims", "persistentvolumes", "storageclasses.storage.k8s.io", "csinodes.storage.k8s.io",
        "deviceclasses.resource.k8s.io", "resourceslices.resource.k8s.io", "resourceclaims.resource.k8s.io",
        "resourceclaimtemplates.resource.k8s.io",
        # what create-time admission gives a hypothetical pod (issue 30): served, none created here
        "runtimeclasses.node.k8s.io", "limitranges",
    }
    counts = header["counts"]
    assert counts["nodes"] == 4 and counts["pods"] == 8  # 6 running + 2 pending
    assert counts["podgroups.scheduling.k8s.io"] == 2 and counts["compositepodgroups.scheduling.k8s.io"] == 1
    assert counts["poddisruptionbudgets.policy"] == 1
    # kube-apiserver creates default, kube-system, kube-public, kube-node-lease; we added ml, batch.
    assert counts["namespaces"] >= 6
    # ours, plus the two built-in system-* classes the v1.37 server creates
    assert counts["priorityclasses.scheduling.k8s.io"] == len(PRIORITY_CLASSES) + 2
    assert "pipeline" in text and "train" in text


def test_whatif_snapshot_matches_hand_derived_answer_and_live(populated: Cluster, snapshot_file: Path) -> None:
    job = str(populated.job_yaml)  # type: ignore[attr-defined]
    off = json.loads(ok(wap(populated, "whatif", "-f", job, "-n", "ml", "--snapshot", str(snapshot_file), "-o", "json", live=False)).stdout)
    assert off["outcome"] == "Preempt", off["message"]
    assert off["preemptor"]["priority"] == 1000000  # from the PriorityClass "high" read from the server
    assert victims(off) == EXPECTED_VICTIMS, off["explanation"]
    assert placements(off) == EXPECTED_PLACEMENT
    # One All-mode PodGroup unit: the server kept the pods' schedulingGroup.
    assert [(u["unit"]["kind"], u["unit"]["name"]) for u in off["victimUnits"]] == [("PodGroup", "train")]
    spared = {f"{u['unit']['namespace']}/{u['unit']['name']}" for u in off["reprieved"]}
    assert {"batch/a-0", "batch/b-0", "batch/d-0"} <= spared
    assert not any("c-0" in s for s in spared)  # higher priority than the preemptor: never a candidate

    live_res = ok(wap(populated, "whatif", "-f", job, "-n", "ml", "-o", "json"))
    live = json.loads(live_res.stdout)
    assert stable(live) == stable(off)


def test_whatif_podgroup_by_name_snapshot_equals_live(populated: Cluster, snapshot_file: Path) -> None:
    """`whatif podgroup job`: the gang as the server has it (group and members)."""
    off = json.loads(ok(wap(populated, "whatif", "podgroup", "job", "-n", "ml", "--snapshot", str(snapshot_file), "-o", "json", live=False)).stdout)
    live = json.loads(ok(wap(populated, "whatif", "podgroup", "job", "-n", "ml", "-o", "json")).stdout)
    assert stable(live) == stable(off)
    assert off["preemptor"]["kind"] == "PodGroup" and off["preemptor"]["name"] == "job"
    assert off["preemptor"]["pods"] == 2
    assert victims(off) == EXPECTED_VICTIMS and placements(off) == EXPECTED_PLACEMENT


def live_and_oracle(c: Cluster, kind: str, name: str, ns: str, snapshot: Path) -> tuple[dict, dict]:
    """`kubectl wap whatif KIND NAME` on the live path (the real kubectl finds the plugin on PATH;
    KUBECONFIG is the reader's) and `python -m tests.oracle whatif KIND NAME --snapshot SNAPSHOT`
    (the real kube-scheduler v1.37.2 on what kubectl-wap captured), both as report-contract JSON."""
    env = dict(os.environ, KUBECONFIG=str(c.kubeconfigs["reader"]),
               PATH=f"{Path(tool('kubectl-wap')).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    live_res = subprocess.run([tool("kubectl"), "wap", "whatif", kind, name, "-n", ns, "-o", "json", "--color", "never"],
                              capture_output=True, text=True, timeout=120, cwd=c.workdir, env=env)
    live = json.loads(ok(live_res).stdout)
    for attempt in range(3):
        oracle_res = subprocess.run([sys.executable, "-m", "tests.oracle", "whatif", kind, name, "-n", ns,
                                     "--snapshot", str(snapshot), "-o", "json"],
                                    capture_output=True, text=True, timeout=600, cwd=REPO)
        # The oracle's apiserver has the same 10 s start-up limit as the tier's (real_apiserver.py);
        # the test binary's own report of it goes to its stdout, which the driver drops, so what we
        # see is an oracle that exited before it answered any case.
        if oracle_res.returncode == 0 or " after 0/1 case(s)" not in oracle_res.stderr:
            break
        print(f"e2e: the oracle exited before its first case (attempt {attempt + 1}): {oracle_res.stderr.strip()[-300:]}; "
              "trying again", file=sys.__stderr__)
    oracle = json.loads(ok(oracle_res).stdout)
    assert oracle["oracle"]["kubernetes"] == "v1.37.2" and not oracle["oracle"]["error"], oracle["oracle"]
    (c.workdir / f"live-vs-oracle-{kind}-{name}.json").write_text(json.dumps({"live": live, "oracle": oracle}, indent=1))
    return live, oracle


def test_live_whatif_equals_the_real_scheduler(populated: Cluster, snapshot_file: Path) -> None:
    """Issue 13's check: on the same server, the live what-if for the gang and the real scheduler on
    the snapshot kubectl-wap captured give the same outcome, victims and nominated nodes."""
    live, oracle = live_and_oracle(populated, "podgroup", "job", "ml", snapshot_file)
    assert (live["outcome"], victims(live)) == (oracle["outcome"], victims(oracle))
    # A PodGroup's pods are nominated one by one (the report-contract nominatedNode is a single
    # pod's): the nodes the gang's pods are nominated to, as a multiset -- which of two identical
    # pods goes where is arbitrary upstream, the nodes are not.
    assert live.get("nominatedNode") == oracle["nominatedNode"] is None
    assert sorted(p["node"] for p in live["placements"]) == sorted(
        [*oracle["nominated"].values(), *(p["node"] for p in oracle["placements"])])
    assert victims(live) == EXPECTED_VICTIMS  # and both are the hand-derived answer


def test_live_whatif_pod_equals_the_real_scheduler(populated: Cluster) -> None:
    """The same for a plain pending pod (default preemption): batch/urgent, priority 1000 (class
    batch), 3 cpu, required to run on n2. Only units below 1000 on n2 can go: the All-mode PodGroup
    ml/train (train-1 is on n2) and b-0 (its PDB allows no disruption). Removing train-1 frees 3 cpu,
    so b-0 is spared; the group's All disruption mode takes train-0 on n1 with it (both engines say
    so). The pod exists only for this test (created, snapshotted, deleted)."""
    c = populated
    urgent = pod("urgent", "batch", "batch", "3", None)
    urgent["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n2"]}]}]}}}
    c.apply([urgent])
    try:
        snap = c.workdir / "s-urgent.json.gz"
        ok(wap(c, "snapshot", "--output-file", str(snap)))
        live, oracle = live_and_oracle(c, "pod", "urgent", "batch", snap)
    finally:
        c.kubectl("delete", "pod", "urgent", "-n", "batch", "--grace-period=0", "--wait=false")
    assert (live["outcome"], victims(live), live["nominatedNode"]) == (oracle["outcome"], victims(oracle), oracle["nominatedNode"])
    assert live["outcome"] == "Preempt" and live["nominatedNode"] == "n2"
    assert victims(live) == {"ml/train-0", "ml/train-1"}


def test_explain_and_rank_as_reader(populated: Cluster) -> None:
    job = str(populated.job_yaml)  # type: ignore[attr-defined]
    explain = json.loads(ok(wap(populated, "explain", "-f", job, "-n", "ml", "-o", "json")).stdout)
    assert victims(explain) == EXPECTED_VICTIMS
    table = ok(wap(populated, "explain", "-f", job, "-n", "ml")).stdout
    assert "Reprieve" in table and "PodGroup ml/train -> needed" in table

    ranked = json.loads(ok(wap(populated, "rank", "--priority", "1000000", "--order", "protection", "-o", "json")).stdout)
    names = [f"{u['namespace']}/{u['name']}" for u in ranked["units"]]
    # The reprieve order: units a PDB protects first (b-0: batch/b allows 0 disruptions, served at
    # policy/v1 now), then by priority, 1000 (a-0, d-0) before 100 (the PodGroup ml/train, one
    # unit); c-0 is above P.
    assert names[0] == "batch/b-0" and set(names[1:3]) == {"batch/a-0", "batch/d-0"} and names[3:] == ["ml/train"], names
    ok(wap(populated, "rank", "--priority", "1000000"))


def test_reader_only_ever_reads(populated: Cluster) -> None:
    """The audit log of the real server: every request of the read-only user was a get or list."""
    ok(wap(populated, "whatif", "-f", str(populated.job_yaml), "-n", "ml", "-o", "json"))  # type: ignore[attr-defined]
    events = [e for e in populated.audit_events() if e.get("user", {}).get("username") == "reader"]
    assert events, "no audit events for the reader user"
    assert {e["verb"] for e in events} <= {"get", "list"}, {e["verb"] for e in events}
    # v1.37 serves every kind kubectl-wap lists (the 1.20 stand-in answered 404 for policy/v1). The one
    # 404 expected is the discovery of Kueue's API group (kueue.x-k8s.io), which a cluster without
    # Kueue does not serve: asked once per read, and then nothing of Kueue is listed.
    kueue_probe = "/apis/kueue.x-k8s.io"
    assert all(e["responseStatus"]["code"] == 200 for e in events if e["requestURI"] != kueue_probe), [
        (e["requestURI"], e["responseStatus"]["code"]) for e in events
        if e["responseStatus"]["code"] != 200 and e["requestURI"] != kueue_probe
    ]
    assert not any(e["requestURI"].startswith(kueue_probe + "/") for e in events)
    paths = {e["requestURI"].split("?")[0] for e in events}
    assert {"/api/v1/pods", "/apis/scheduling.k8s.io/v1beta1/podgroups", "/apis/scheduling.k8s.io/v1alpha3/compositepodgroups",
            "/apis/policy/v1/poddisruptionbudgets"} <= paths, paths


# -- permissions ------------------------------------------------------------------------------------

def test_user_without_pdb_access_gets_a_warning(populated: Cluster) -> None:
    res = ok(wap(populated, "snapshot", "--output-file", str(populated.workdir / "nopdb.json.gz"), user="nopdb"))
    warn = [ln for ln in res.stderr.splitlines() if "poddisruptionbudgets" in ln]
    assert warn == ["Warning: forbidden to list poddisruptionbudgets.policy: PDBs are ignored, so victims "
                    "protected by a PDB may be reported as preemptible"], res.stderr
    doc = json.loads(ok(wap(populated, "whatif", "-f", str(populated.job_yaml), "-n", "ml", "-o", "json", user="nopdb")).stdout)  # type: ignore[attr-defined]
    assert victims(doc) == EXPECTED_VICTIMS
    assert any(w.startswith("forbidden to list poddisruptionbudgets.policy") for w in doc["warnings"]), doc["warnings"]


@pytest.mark.parametrize("args", [
    ("snapshot", "--output-file", "x.json.gz"),
    ("whatif", "podgroup", "job", "-n", "ml"),
    ("rank",),
])
def test_user_without_pods_access_fails_in_one_line(populated: Cluster, args: tuple[str, ...]) -> None:
    res = wap(populated, *args, user="nopods")
    assert res.returncode == 2, (res.returncode, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "cannot list pods" in lines[0] and "forbidden" in lines[0] and "deploy/rbac-readonly.yaml" in lines[0], lines[0]
    assert res.stdout == ""


def test_unknown_token_is_a_one_line_401(populated: Cluster) -> None:
    bad = write_kubeconfig(populated.workdir / "kubeconfig-bad", populated.url, "not-a-token", populated.ca_pem)
    res = subprocess.run([tool("kubectl-wap"), "snapshot", "--output-file", "y.json.gz", "--kubeconfig", str(bad)],
                         capture_output=True, text=True, timeout=60, cwd=populated.workdir)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "401" in lines[0], res.stderr

