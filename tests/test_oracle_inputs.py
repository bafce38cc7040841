"""The oracle's Python side: what it sends to the API server and how the scale case is made
deterministic (tests/oracle/__main__.py read_items, tests/oracle/scale.py)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tests.oracle.__main__ import read_items
from tests.oracle.scale import distinct_starts, pin_gang


def _pod(name: str, ns: str = "default", node: str | None = None, start: str | None = None, prio: int = 0,
         cpu: str = "1", group: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
                  "serviceAccountName": "default", "priority": prio,
                  "volumes": [{"name": "tok", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}]}
    if node:
        spec["nodeName"] = node
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    status = {"phase": "Running", "startTime": start} if node else {"phase": "Pending"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "uid": name}, "spec": spec, "status": status}


def _node(name: str, cpu: str = "4", pool: str = "general") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"node-pool": pool, "kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def test_read_items_keeps_every_field_of_a_list(tmp_path: Path) -> None:
    # The lean decoder drops fields our engine never reads (serviceAccountName); the API server
    # then rejects the pod's projected token volume. The oracle must send whole objects.
    f = tmp_path / "list.json.gz"
    f.write_bytes(gzip.compress(json.dumps({"apiVersion": "v1", "kind": "List", "items": [_node("n1"), _pod("p", node="n1")]},
                                           separators=(",", ":")).encode()))
    items = read_items(str(f), False)
    pod = next(o for o in items if o["kind"] == "Pod")
    assert pod["spec"]["serviceAccountName"] == "default"
    assert pod["spec"]["volumes"][0]["projected"]["sources"][0]["serviceAccountToken"] == {"path": "token"}


def test_distinct_starts_keeps_order_and_leaves_no_tie() -> None:
    items = [_pod("b", node="n", start="2026-11-01T00:00:00Z"), _pod("a", node="n", start="2026-11-01T00:00:00Z"),
             _pod("c", node="n", start="2026-10-01T00:00:00Z"), _pod("pending")]
    distinct_starts(items)
    starts = {o["metadata"]["name"]: o["status"].get("startTime") for o in items}
    assert starts["pending"] is None
    assert starts["c"] < starts["a"] < starts["b"]  # earlier stays earlier; a tie goes by name
    assert len({starts["a"], starts["b"], starts["c"]}) == 3


def test_pin_gang_deals_pods_over_nodes_with_room_and_copies_selectors() -> None:
    shared = {"node-pool": "general"}
    items = [_node("n1"), _node("n2"), _node("n3"), _node("other", pool="gpu"),
             _pod("keep", node="n2", prio=100, cpu="4", start="2026-11-01T00:00:00Z")]  # n2: full of an equal-priority pod
    for i in range(3):
        p = _pod(f"g-{i}", ns="gangs", prio=100, cpu="2", group="g")
        p["spec"]["nodeSelector"] = shared  # one dict shared by all pods, as a decoder may give
        items.append(p)
    assert pin_gang(items, "gangs", "g") == 3
    pins = [o["spec"]["nodeSelector"]["kubernetes.io/hostname"] for o in items if o["metadata"]["name"].startswith("g-")]
    assert pins == ["n1", "n3", "n1"]  # one per node per round, n2 has no room, gpu pool not asked for
    assert shared == {"node-pool": "general"}


def test_manifest_case_is_the_clis_objects_with_admitted_priorities(tmp_path: Path) -> None:
    """`whatif -f` through the oracle (tests/oracle/manifest.py): the file's workload expanded by
    our from_manifest, what it replaces dropped from the cluster, and the priorities that Priority
    admission (off in the oracle's API server) would give: the class's value and, for a pod, its
    preemptionPolicy; no class: the globalDefault's."""
    from tests.oracle.driver import case_for
    from tests.oracle.manifest import manifest_items

    never = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"}, "value": 500,
             "preemptionPolicy": "Never"}
    default = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "base"}, "value": 7,
               "globalDefault": True}
    old = _pod("job-worker-0", "ml", group="g")  # pending, of the PodGroup the file replaces
    cluster = [_node("n1"), never, default, old, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                                                  "metadata": {"name": "g", "namespace": "ml"}, "spec": {}}]
    tmpl = {"spec": {"priorityClassName": "urgent", "schedulingGroup": {"podGroupName": "g"},
                     "containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1"}}}]}}
    f = tmp_path / "job.yaml"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "ml"},
         "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}},
        {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "job", "namespace": "ml"},
         "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 2, "template": tmpl}}}}]}))
    items, kind, ns, name = manifest_items(cluster, f)
    assert (kind, ns, name) == ("podgroup", "ml", "g")
    pods = [o for o in items if o["kind"] == "Pod"]
    assert [p["metadata"]["name"] for p in pods] == ["job-worker-0", "job-worker-1"] and old not in items
    assert all(p["spec"]["priority"] == 500 and p["spec"]["preemptionPolicy"] == "Never" for p in pods)
    [pg] = [o for o in items if o["kind"] == "PodGroup"]
    assert pg["spec"]["priority"] == 7 and "preemptionPolicy" not in pg["spec"]
    case = case_for(items, kind, ns, name)
    assert sorted(o["metadata"]["name"] for o in case["objects"] if o["kind"] == "Pod") == ["job-worker-0", "job-worker-1"]
