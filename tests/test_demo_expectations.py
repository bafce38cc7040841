"""The bundled demo cluster (kubectl_wap/data/demo-snapshot.json, made by tools/make_demo.py).

Three layers:
* structural checks on the raw JSON (run always);
* an independent, resources-only re-derivation of the WAP answer for ml/job-1 and the default
  preemption answer for batch/urgent-report, straight from the JSON (run always; it guards the
  hand-worked reasoning in docs/demo.md against edits of the generator);
* the answers through the CLI contract (skipped until kubectl_wap.cli exists).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "kubectl_wap" / "data" / "demo-snapshot.json"
GPU = "nvidia.com/gpu"

# ---------------------------------------------------------------------------------------------
# Expected answers (reasoning: docs/demo.md)
# ---------------------------------------------------------------------------------------------

JOB1_PLACEMENT = {"gpu-a3": 4, "gpu-a4": 3, "gpu-b2": 3, "gpu-b3": 3, "gpu-b4": 3}

# (namespace, name, node) of every pod job-1 preempts, grouped by unit in upstream output order
# (all victims are PDB-non-violating, so: most important unit first).
JOB1_VICTIM_UNITS = [
    # unit key, unit kind, disruption mode, pods
    (("ml", "hpo-trials-4"), "Pod|PodGroup", "single", [("ml", "hpo-trials-4", "gpu-a4")]),
    (("batch", "render-0"), "Pod", None, [("batch", "render-0", "gpu-a3")]),
    (("batch", "render-1"), "Pod", None, [("batch", "render-1", "gpu-a4")]),
    (("research", "protein-fold"), "PodGroup", "all", [
        ("research", "protein-fold-0", "gpu-a2"), ("research", "protein-fold-1", "gpu-a2"),
        ("research", "protein-fold-2", "gpu-b3"), ("research", "protein-fold-3", "gpu-b3"),
    ]),
    (("research", "ablation-0"), "Pod", None, [("research", "ablation-0", "gpu-a3")]),
    (("research", "ablation-1"), "Pod", None, [("research", "ablation-1", "gpu-b2")]),
    (("research", "ablation-2"), "Pod", None, [("research", "ablation-2", "gpu-b3")]),
]
JOB1_VICTIM_PODS = {(ns, n) for _k, _t, _m, pods in JOB1_VICTIM_UNITS for ns, n, _node in pods}

# Units on the GPU pool that job-1 could preempt but reprieves (pod names; deployment pods by prefix).
JOB1_REPRIEVED_GPU_PODS = {
    ("research", "notebook-alice-0"),  # PDB 0 allowed: reprieved first, before more important units
    ("research", "ray-tune-head-0"), ("research", "ray-tune-worker-0"),
    ("research", "ray-tune-worker-1"), ("research", "ray-tune-worker-2"),
    ("ml", "hpo-trials-0"), ("ml", "hpo-trials-1"), ("ml", "hpo-trials-2"), ("ml", "hpo-trials-3"),
    ("ml", "hpo-trials-5"), ("ml", "hpo-trials-6"), ("ml", "hpo-trials-7"),
    ("batch", "render-2"), ("batch", "render-3"), ("batch", "render-4"),
    ("batch", "transcode-0"), ("batch", "transcode-1"),
    ("research", "ablation-3"),
}

URGENT_NODE = "cpu-a2"
URGENT_VICTIMS = {("research", "notebook-bob-0")}


# ---------------------------------------------------------------------------------------------
# Raw-JSON helpers (self-contained on purpose: no dependency on the package under test)
# ---------------------------------------------------------------------------------------------

_BIN = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_DEC = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def qty(v: str, res: str) -> int:
    """Quantity as an int: milli-cores for cpu, plain units otherwise (the demo uses simple forms)."""
    v = str(v)
    mult = 1
    for suf, m in {**_BIN, **_DEC}.items():
        if v.endswith(suf):
            v, mult = v[: -len(suf)], m
            break
    if res == "cpu":
        return int(v[:-1]) if v.endswith("m") else int(float(v) * 1000)
    return int(float(v) * mult)


def requests(pod: dict) -> dict[str, int]:
    """Sum of container requests, max with each init container; plus one 'pods' slot."""
    total: dict[str, int] = {}
    for c in pod["spec"].get("containers", []):
        for k, v in c.get("resources", {}).get("requests", {}).items():
            total[k] = total.get(k, 0) + qty(v, k)
    for c in pod["spec"].get("initContainers", []):
        for k, v in c.get("resources", {}).get("requests", {}).items():
            total[k] = max(total.get(k, 0), qty(v, k))
    total["pods"] = 1
    return total


@pytest.fixture(scope="module")
def doc() -> dict:
    return json.loads(DEMO.read_text(encoding="utf-8"))


class Cluster:
    def __init__(self, doc: dict):
        items = doc["items"]
        by = lambda kind: [i for i in items if i["kind"] == kind]  # noqa: E731
        self.nodes = {n["metadata"]["name"]: n for n in by("Node")}
        self.alloc = {
            name: {k: qty(v, k) for k, v in n["status"]["allocatable"].items()} for name, n in self.nodes.items()
        }
        self.pods = by("Pod")
        self.pgs = {(g["metadata"]["namespace"], g["metadata"]["name"]): g for g in by("PodGroup")}
        self.cpgs = {(g["metadata"]["namespace"], g["metadata"]["name"]): g for g in by("CompositePodGroup")}
        self.pcs = {p["metadata"]["name"]: p for p in by("PriorityClass")}
        self.pdbs = by("PodDisruptionBudget")
        self.namespaces = by("Namespace")

    @staticmethod
    def key(obj: dict) -> tuple[str, str]:
        return obj["metadata"].get("namespace", ""), obj["metadata"]["name"]

    def chain(self, pod: dict) -> list[dict]:
        """Leaf PodGroup up to the root (CompositePodGroups), or [] for a standalone pod."""
        sg = pod["spec"].get("schedulingGroup")
        if not sg:
            return []
        return self.pg_chain(pod["metadata"]["namespace"], sg["podGroupName"])

    def pg_chain(self, ns: str, name: str) -> list[dict]:
        out = [self.pgs[(ns, name)]]
        while out[-1]["spec"].get("parentCompositePodGroupName"):
            out.append(self.cpgs[(ns, out[-1]["spec"]["parentCompositePodGroupName"])])
        return out

    def eff_priority(self, pod: dict) -> int:
        ch = self.chain(pod)
        return ch[-1]["spec"]["priority"] if ch else pod["spec"]["priority"]

    def scheduled(self) -> list[dict]:
        return [p for p in self.pods if p["spec"].get("nodeName")]


# ---------------------------------------------------------------------------------------------
# Structural checks
# ---------------------------------------------------------------------------------------------


def test_envelope_and_header(doc):
    assert doc["apiVersion"] == "kubectl-wap/v1alpha1" and doc["kind"] == "Snapshot"
    h = doc["header"]
    assert h["formatVersion"] == 1 and h["server"] == {"url": "demo", "version": "v1.37.1"}
    kinds = {"nodes": "Node", "pods": "Pod", "namespaces": "Namespace",
             "priorityclasses.scheduling.k8s.io": "PriorityClass", "poddisruptionbudgets.policy": "PodDisruptionBudget",
             "podgroups.scheduling.k8s.io": "PodGroup", "compositepodgroups.scheduling.k8s.io": "CompositePodGroup",
             "runtimeclasses.node.k8s.io": "RuntimeClass", "limitranges": "LimitRange"}
    assert set(h["listed"]) == set(kinds)
    for res, kind in kinds.items():
        assert h["counts"][res] == sum(1 for i in doc["items"] if i["kind"] == kind), res
    for it in doc["items"]:
        assert it.get("apiVersion") and it.get("kind")
        assert "managedFields" not in it["metadata"]
    names = [(i["kind"], i["metadata"].get("namespace", ""), i["metadata"]["name"]) for i in doc["items"]]
    assert len(names) == len(set(names)), "duplicate objects"
    uids = [i["metadata"]["uid"] for i in doc["items"]]
    assert len(uids) == len(set(uids))


def test_generator_is_deterministic_and_up_to_date(tmp_path):
    out = tmp_path / "demo.json"
    subprocess.run([sys.executable, str(REPO / "tools" / "make_demo.py"), "-o", str(out)], check=True)
    assert out.read_text(encoding="utf-8") == DEMO.read_text(encoding="utf-8"), "run tools/make_demo.py"


def test_sizes(doc):
    c = Cluster(doc)
    assert 12 <= len(c.nodes) <= 16
    running = [p for p in c.pods if p["status"]["phase"] == "Running"]
    assert 100 <= len(running) <= 200
    assert {n["metadata"]["name"] for n in c.namespaces} == {"ml", "inference", "batch", "research"}


def test_priorities_consistent_with_admission(doc):
    c = Cluster(doc)
    assert not any(n in c.pcs for n in ("system-node-critical", "system-cluster-critical"))
    assert [n for n, p in c.pcs.items() if p.get("globalDefault")] == ["batch-default"]
    for p in c.pods:
        pc = c.pcs[p["spec"]["priorityClassName"]]
        assert p["spec"]["priority"] == pc["value"], c.key(p)
        assert p["spec"]["preemptionPolicy"] == pc.get("preemptionPolicy", "PreemptLowerPriority"), c.key(p)
    for g in list(c.pgs.values()) + list(c.cpgs.values()):
        assert g["spec"]["priority"] == c.pcs[g["spec"]["priorityClassName"]]["value"], c.key(g)
        # PodGroupPreemptionPolicy is off by default: the field must not be set
        assert "preemptionPolicy" not in g["spec"], c.key(g)


def test_group_pods_match_root_priority(doc):
    c = Cluster(doc)
    group_pods = [p for p in c.pods if p["spec"].get("schedulingGroup")]
    assert group_pods
    for p in group_pods:
        ch = c.chain(p)
        assert p["spec"]["priority"] == ch[-1]["spec"]["priority"], c.key(p)
        for g in ch:  # v1.37 does not validate non-root groups, but keep the demo clean
            assert g["spec"]["priority"] == ch[-1]["spec"]["priority"], c.key(g)
        pols = {q["spec"]["preemptionPolicy"] for q in c.pods if c.chain(q) and c.chain(q)[-1] is ch[-1]}
        assert len(pols) == 1, c.key(ch[-1])


def test_group_shapes(doc):
    c = Cluster(doc)
    for (ns, name), g in c.pgs.items():
        spec = g["spec"]
        assert len(spec["schedulingPolicy"]) == 1 and len(spec["disruptionMode"]) == 1
        assert g["apiVersion"] == "scheduling.k8s.io/v1beta1"
        if spec.get("parentCompositePodGroupName"):
            assert (ns, spec["parentCompositePodGroupName"]) in c.cpgs and spec.get("workloadRef")
        members = [p for p in c.pods if p["metadata"]["namespace"] == ns
                   and p["spec"].get("schedulingGroup", {}).get("podGroupName") == name]
        assert members, name
        gang = spec["schedulingPolicy"].get("gang")
        if gang:
            assert len(members) >= gang["minCount"], name
    modes = {next(iter(g["spec"]["disruptionMode"])) for g in c.pgs.values()}
    assert modes == {"single", "all"}
    (cpg,) = c.cpgs.values()
    assert cpg["apiVersion"] == "scheduling.k8s.io/v1alpha3" and "all" in cpg["spec"]["disruptionMode"]
    assert sum(1 for g in c.pgs.values() if g["spec"].get("parentCompositePodGroupName")) == 2


def test_pods_placed_on_existing_nodes_within_allocatable(doc):
    c = Cluster(doc)
    used: dict[str, dict[str, int]] = {n: {} for n in c.nodes}
    for p in c.pods:
        node = p["spec"].get("nodeName")
        if not node:
            assert p["status"]["phase"] == "Pending" and "startTime" not in p["status"], c.key(p)
            continue
        assert node in c.nodes, (c.key(p), node)
        assert p["status"]["phase"] == "Running" and p["status"].get("startTime"), c.key(p)
        for k, v in requests(p).items():
            used[node][k] = used[node].get(k, 0) + v
    for node, u in used.items():
        for k, v in u.items():
            assert v <= c.alloc[node].get(k, 0), (node, k, v, c.alloc[node].get(k, 0))


def test_scheduled_pods_tolerate_their_nodes(doc):
    c = Cluster(doc)
    for p in c.scheduled():
        node = c.nodes[p["spec"]["nodeName"]]
        if p["spec"].get("nodeSelector"):
            assert all(node["metadata"]["labels"].get(k) == v for k, v in p["spec"]["nodeSelector"].items())
        for t in node["spec"].get("taints", []):
            if t["key"] == "node.kubernetes.io/unschedulable":
                continue  # cordoned after the pods were bound
            assert _tolerates(p, t), (c.key(p), t)


def test_pdbs(doc):
    c = Cluster(doc)
    zero = [b for b in c.pdbs if b["status"]["disruptionsAllowed"] == 0]
    assert {c.key(b) for b in zero} >= {("research", "notebook-alice"), ("inference", "llm-chat")}
    for b in c.pdbs:
        sel = b["spec"]["selector"]["matchLabels"]
        matched = [p for p in c.scheduled() if p["metadata"]["namespace"] == b["metadata"]["namespace"]
                   and all(p["metadata"].get("labels", {}).get(k) == v for k, v in sel.items())]
        assert len(matched) == b["status"]["expectedPods"], c.key(b)


def test_loads_with_package_loader():
    files = pytest.importorskip("kubectl_wap.snapshot.io.files")
    snap = files.load_demo()
    assert len(snap.nodes) == 16 and not snap.warnings
    assert not getattr(snap, "admission_errors", {})


# ---------------------------------------------------------------------------------------------
# Independent resources-only model (what docs/demo.md works through by hand)
# ---------------------------------------------------------------------------------------------

RANK = {"Pod": 1, "PodGroup": 2, "CompositePodGroup": 3}


def _tolerates(pod: dict, taint: dict) -> bool:
    for t in pod["spec"].get("tolerations", []):
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator", "Equal") == "Exists":
            if not t.get("key") or t["key"] == taint["key"]:
                return True
        elif t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def _static_ok(c: Cluster, pod: dict, node: str) -> bool:
    n = c.nodes[node]
    if n["spec"].get("unschedulable"):
        return False
    labels = n["metadata"]["labels"]
    if any(labels.get(k) != v for k, v in pod["spec"].get("nodeSelector", {}).items()):
        return False
    return all(_tolerates(pod, t) for t in n["spec"].get("taints", []) if t["effect"] in ("NoSchedule", "NoExecute"))


class State:
    def __init__(self, c: Cluster):
        self.c = c
        self.used = {n: {} for n in c.nodes}
        for p in c.scheduled():
            self.add(p, p["spec"]["nodeName"])

    def add(self, pod, node, sign=1):
        for k, v in requests(pod).items():
            self.used[node][k] = self.used[node].get(k, 0) + sign * v

    def fits(self, pod, node) -> bool:
        return all(self.used[node].get(k, 0) + v <= self.c.alloc[node].get(k, 0) for k, v in requests(pod).items())

    def score(self, pod, node) -> int:
        r, a, u = requests(pod), self.c.alloc[node], self.used[node]
        least, fr = 0, []
        for res in ("cpu", "memory"):
            req = u.get(res, 0) + r.get(res, 0)
            least += (a[res] - req) * 100 // a[res]
            fr.append(min(req / a[res], 1.0))
        balanced = int((1 - abs(fr[0] - fr[1]) / 2) * 100)
        return least // 2 + balanced  # the other default score plugins are uniform in the demo

    def place(self, pod) -> str | None:
        best = None
        for node in sorted(self.c.nodes):
            if _static_ok(self.c, pod, node) and self.fits(pod, node):
                s = self.score(pod, node)
                if best is None or s > best[0]:
                    best = (s, node)
        return best and best[1]


def _units(c: Cluster, below: int) -> list[dict]:
    """Victim units with effective priority < below (types.go getCrossNodesVictims, cluster-wide)."""
    units, seen = [], set()
    for node in sorted(c.nodes):
        for p in c.scheduled():
            if p["spec"]["nodeName"] != node or c.eff_priority(p) >= below:
                continue
            ch = c.chain(p)
            alls = [g for g in ch if "all" in g["spec"].get("disruptionMode", {"single": {}})]
            if alls:
                top = alls[-1]
                key = (top["kind"], *c.key(top))
                if key in seen:
                    continue
                seen.add(key)
                leaves = [g for (gns, gname), g in c.pgs.items() if top in c.pg_chain(gns, gname)]
                pods = [q for q in c.scheduled() if c.chain(q) and c.chain(q)[0] in leaves]
                units.append({"key": key, "kind": top["kind"], "pods": pods, "prio": c.eff_priority(p)})
            else:
                units.append({"key": ("Pod", *c.key(p)), "kind": "PodGroup" if ch else "Pod", "pods": [p],
                              "prio": c.eff_priority(p)})
    return units


def _start(p) -> str:
    return p["status"]["startTime"]  # ISO-8601 Z strings sort chronologically


def _importance_sorted(units: list[dict]) -> list[dict]:
    # MoreImportantVictim: priority, rank, size, earlier start, smaller first-pod UID.
    return sorted(units, key=lambda u: (-u["prio"], -RANK[u["kind"]], -len(u["pods"]),
                                        min(_start(p) for p in u["pods"]), u["pods"][0]["metadata"]["uid"]))


def _split_pdb(c: Cluster, units: list[dict]) -> tuple[list[dict], list[dict]]:
    allowed = [b["status"]["disruptionsAllowed"] for b in c.pdbs]
    violating, non = [], []
    for u in units:
        cnt = 0
        for p in u["pods"]:
            labels, bad = p["metadata"].get("labels", {}), False
            for i, b in enumerate(c.pdbs):
                if b["metadata"]["namespace"] != p["metadata"]["namespace"]:
                    continue
                if all(labels.get(k) == v for k, v in b["spec"]["selector"]["matchLabels"].items()):
                    allowed[i] -= 1
                    bad |= allowed[i] < 0
            cnt += bad
        (violating if cnt else non).append(u)
    return violating, non


def wap(c: Cluster, ns: str, group: str):
    pg = c.pgs[(ns, group)]
    prio = pg["spec"]["priority"]
    pending = sorted((p for p in c.pods if not p["spec"].get("nodeName") and p["metadata"]["namespace"] == ns
                      and p["spec"].get("schedulingGroup", {}).get("podGroupName") == group),
                     key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["name"]))
    state = State(c)
    units = _importance_sorted(_units(c, prio))
    for u in units:
        for p in u["pods"]:
            state.add(p, p["spec"]["nodeName"], -1)
    assignments = []
    for p in pending:
        node = state.place(p)
        assert node, f"{p['metadata']['name']} does not fit even after removing all victims"
        state.add(p, node)
        assignments.append((p, node))
    for p, node in assignments:
        state.add(p, node, -1)
    violating, non = _split_pdb(c, units)
    victims, reprieved = [], []
    for u in violating + non:
        for p in u["pods"]:
            state.add(p, p["spec"]["nodeName"])
        ok, assumed = True, []
        for p, node in assignments:
            if not state.fits(p, node):
                ok = False
                break
            state.add(p, node)
            assumed.append((p, node))
        for p, node in assumed:
            state.add(p, node, -1)
        if ok:
            reprieved.append(u)
        else:
            for p in u["pods"]:
                state.add(p, p["spec"]["nodeName"], -1)
            victims.append(u)
    return assignments, victims, reprieved, violating


def test_model_job1(doc):
    c = Cluster(doc)
    assignments, victims, reprieved, violating = wap(c, "ml", "job-1")
    counts: dict[str, int] = {}
    for _p, node in assignments:
        counts[node] = counts.get(node, 0) + 1
    assert counts == JOB1_PLACEMENT
    got = [(u["key"][1:], [(p["metadata"]["namespace"], p["metadata"]["name"], p["spec"]["nodeName"]) for p in u["pods"]])
           for u in victims]
    want = [(k, pods) for k, _t, _m, pods in JOB1_VICTIM_UNITS]
    assert [g[0] for g in got] == [w[0] for w in want]
    assert [sorted(g[1]) for g in got] == [sorted(w[1]) for w in want]
    rep = {c.key(p) for u in reprieved for p in u["pods"] if p["spec"]["nodeName"].startswith("gpu-")}
    assert {k for k in rep if not k[1].startswith("llm-chat-")} == JOB1_REPRIEVED_GPU_PODS
    assert sum(1 for k in rep if k[1].startswith("llm-chat-")) == 4
    # The showcase: notebook-alice-0 violates its PDB, so it is tried before (and instead of) hpo-trials-4.
    assert ("research", "notebook-alice-0") in {c.key(u["pods"][0]) for u in violating}
    # Every unit left on the GPU pool plus job-1 exactly fills the five nodes job-1 uses.
    state = State(c)
    for u in victims:
        for p in u["pods"]:
            state.add(p, p["spec"]["nodeName"], -1)
    for p, node in assignments:
        state.add(p, node)
    for node in JOB1_PLACEMENT:
        assert state.used[node][GPU] == 8


def test_model_job1_without_pdb_first_order_would_evict_notebook(doc):
    """Counterfactual behind the showcase: in plain importance order the notebook would lose."""
    c = Cluster(doc)
    units = _importance_sorted(_units(c, 1000000))
    on_a4 = [u for u in units if any(p["spec"]["nodeName"] == "gpu-a4" for p in u["pods"])]
    room, kept = 8 - JOB1_PLACEMENT["gpu-a4"], []
    for u in on_a4:
        g = sum(requests(p).get(GPU, 0) for p in u["pods"])
        if g <= room:
            room -= g
            kept.append(c.key(u["pods"][0]))
    assert ("research", "notebook-alice-0") not in kept and ("ml", "hpo-trials-4") in kept


def test_model_other_groups_need_no_or_no_possible_preemption(doc):
    c = Cluster(doc)
    # small-eval fits as the cluster is
    state = State(c)
    for p in [p for p in c.pods if p["spec"].get("schedulingGroup", {}).get("podGroupName") == "small-eval"]:
        node = state.place(p)
        assert node and node.startswith("cpu-")
        state.add(p, node)
    # giant: 16 GPUs per pod, no node has more than 8
    giant = [p for p in c.pods if p["metadata"]["name"].startswith("giant-")]
    assert all(requests(p)[GPU] > max(a.get(GPU, 0) for a in c.alloc.values()) for p in giant)
    # finetune-nightly: as the cluster is, fewer than 4 pods fit (so it would need preemption) ...
    state = State(c)
    placed = 0
    for p in [p for p in c.pods if p["metadata"]["name"].startswith("finetune-nightly-")]:
        node = state.place(p)
        if node:
            state.add(p, node)
            placed += 1
        assert p["spec"]["preemptionPolicy"] == "Never"
    assert placed < 4
    # ... and it would fit after preemption, so NotEligible is the only reason it is not preempting
    assignments, _v, _r, _viol = wap(c, "ml", "finetune-nightly")
    assert len(assignments) == 4
    # job-1 does not fit as the cluster is
    state = State(c)
    free = sum(c.alloc[n].get(GPU, 0) - state.used[n].get(GPU, 0) for n in c.nodes)
    assert free < 16


def test_model_urgent_report_default_preemption(doc):
    c = Cluster(doc)
    (pod,) = [p for p in c.pods if p["metadata"]["name"] == "urgent-report"]
    prio = pod["spec"]["priority"]
    state = State(c)
    assert all(not (_static_ok(c, pod, n) and state.fits(pod, n)) for n in c.nodes)
    candidates = {}
    for node in sorted(c.nodes):
        if not _static_ok(c, pod, node):
            continue  # UnschedulableAndUnresolvable: not a candidate
        units = _importance_sorted([u for u in _units(c, prio) if any(p["spec"]["nodeName"] == node for p in u["pods"])])
        assert all(len(u["pods"]) == 1 for u in units)  # no All-mode groups on the general pool
        for u in units:
            state.add(u["pods"][0], node, -1)
        assert state.fits(pod, node)
        violating, non = _split_pdb(c, units)
        victims = []
        for u in violating + non:
            state.add(u["pods"][0], node)
            if not state.fits(pod, node):
                state.add(u["pods"][0], node, -1)
                victims.append(u)
        for u in victims:
            state.add(u["pods"][0], node)
        candidates[node] = (sum(1 for u in victims if u in violating), victims)
    assert set(candidates) == {"cpu-a1", "cpu-a2", "cpu-b1"}
    # pickOneNodeForPreemption: fewest PDB violations, then lowest highest-victim priority, ...
    best = min(candidates, key=lambda n: (candidates[n][0], max(u["prio"] for u in candidates[n][1]),
                                          sum(u["prio"] for u in candidates[n][1]), len(candidates[n][1]), n))
    assert best == URGENT_NODE
    assert {c.key(u["pods"][0]) for u in candidates[best][1]} == URGENT_VICTIMS
    assert all(max(u["prio"] for u in v) == 1000 for n, (_x, v) in candidates.items() if n != best)


# ---------------------------------------------------------------------------------------------
# Through the CLI (the lead's engine); skipped until it exists
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run():
    cli = pytest.importorskip("kubectl_wap.cli")
    from typer.testing import CliRunner

    runner = CliRunner()

    def _run(*args: str) -> dict:
        res = runner.invoke(cli.app, [*args, "--demo", "-o", "json"])
        out = getattr(res, "stdout", None) or res.output
        if "No such command" in (res.output or ""):
            pytest.skip(f"CLI has no command {args[:2]}")
        try:
            return json.loads(out)
        except json.JSONDecodeError:
            raise AssertionError(f"exit {res.exit_code}, not JSON:\n{res.output}\n{res.exception!r}") from None

    return _run


def _pod_ref(x) -> tuple[str | None, str]:
    if isinstance(x, str):
        return (x.split("/", 1)[0], x.split("/", 1)[1]) if "/" in x else (None, x)
    return x.get("namespace"), x["name"]


def test_cli_job1_preempts_mix_and_spares_pdb_protected_notebook(run):
    r = run("whatif", "podgroup", "job-1", "-n", "ml")
    assert r["outcome"] == "Preempt"
    victims = r["victims"]
    assert {(v["namespace"], v["name"]) for v in victims} == JOB1_VICTIM_PODS
    nodes = {(ns, n): node for _k, _t, _m, pods in JOB1_VICTIM_UNITS for ns, n, node in pods}
    for v in victims:
        assert v["node"] == nodes[(v["namespace"], v["name"])], v
        assert v["violatesPDB"] is False, v
    by_pod = {(v["namespace"], v["name"]): v for v in victims}
    for (uns, uname), kind, mode, pods in JOB1_VICTIM_UNITS:
        for ns, n, _node in pods:
            unit = by_pod[(ns, n)]["unit"]
            assert unit["kind"] in kind.split("|"), unit
            assert unit["namespace"] == uns
            if unit["kind"] == "PodGroup" and kind == "PodGroup":
                assert unit["name"] == uname
            if mode:
                assert str(unit.get("disruptionMode", "")).lower() == mode, unit
    # victims come out unit by unit, most important unit first
    order = []
    for v in victims:
        u = v["unit"]
        k = (u["kind"], u["namespace"], u["name"])
        if not order or order[-1] != k:
            order.append(k)
    assert len(order) == len(JOB1_VICTIM_UNITS), order
    for (kind, ns, name), ((uns, uname), _t, _m, _p) in zip(order, JOB1_VICTIM_UNITS):
        # a Single-mode member may be reported as its own Pod unit or under its PodGroup's name
        assert ns == uns and name in ({uname, "hpo-trials"} if uname == "hpo-trials-4" else {uname}), order
    # reprieved: the notebook (PDB), the llm-chat pods (PDB), the CompositePodGroup, ...
    rep_pods = {_pod_ref(p)[1] for u in r["reprieved"] for p in u["pods"]}
    assert {n for _ns, n in JOB1_REPRIEVED_GPU_PODS} <= rep_pods
    assert sum(1 for n in rep_pods if n.startswith("llm-chat-")) == 4
    cpg = [u for u in r["reprieved"] if u["unit"]["kind"] == "CompositePodGroup"]
    assert [(u["unit"]["namespace"], u["unit"]["name"]) for u in cpg] == [("research", "ray-tune")]
    assert len(cpg[0]["pods"]) == 4
    # equal priority is never a victim
    assert not any(n.startswith(("train-llama-", "train-mistral-")) for n in rep_pods)


def test_cli_small_eval_fits_without_preemption(run):
    r = run("whatif", "podgroup", "small-eval", "-n", "ml")
    assert r["outcome"] == "NoPreemptionNeeded"
    assert not r.get("victims")


def test_cli_giant_is_unschedulable(run):
    r = run("whatif", "podgroup", "giant", "-n", "research")
    assert r["outcome"] == "Unschedulable"
    assert not r.get("victims")


def test_cli_finetune_nightly_not_eligible(run):
    r = run("whatif", "podgroup", "finetune-nightly", "-n", "ml")
    assert r["outcome"] == "NotEligible"
    assert not r.get("victims")


def test_cli_urgent_report_default_preemption(run):
    r = run("whatif", "pod", "urgent-report", "-n", "batch")
    assert r["outcome"] == "Preempt"
    assert {(v["namespace"], v["name"]) for v in r["victims"]} == URGENT_VICTIMS
    assert {v["node"] for v in r["victims"]} == {URGENT_NODE}
