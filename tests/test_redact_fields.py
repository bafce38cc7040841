"""Redaction of every field the scheduler reads (snapshot/share/redact.py), beyond the demo of test_redact.py:
node and pod affinity, selectors with expressions, topology spread, taints and tolerations, groups,
PDBs, volumes and claims. Two kinds of claims:

* privacy: no identifying string of the input survives, while the values the scheduler compares
  as numbers or well-known keys do;
* fidelity: every relation the scheduler evaluates still holds (end to end, over every fixture
  and a generated batch: tests/test_redact_equivalence.py).
"""

from __future__ import annotations

import pytest

from kubectl_wap.snapshot.share.redact import Redactor, hash_name, is_well_known_key, redact_items, redactor_for

KEY = b"fields-key"
HOST = "kubernetes.io/hostname"

SECRET = {  # every identifying string in ITEMS below
    "secret-node", "team-ns", "secret-pod", "secret-uid", "owner-rs", "owner-uid", "app", "payments", "tier", "gold",
    "rack", "r1", "disk", "ssd", "payments-ns", "dedicated", "secret-team", "secret-class", "my-scheduler", "secret-pg",
    "secret-cpg", "secret-wl", "secret-tpl", "gate.example/hold", "data", "secret-claim", "scratch", "gpu-claim",
    "gpu-template", "main", "registry.example/secret:1", "init", "sidecar", "secret-pdb", "victim-pod", "secret-pc",
    "team.example/cell", "cell-7", "env", "prod", "secret-ns-obj", "pg-uid", "mismatch", "match",
}

ITEMS = [
    {"apiVersion": "v1", "kind": "Node",
     "metadata": {"name": "secret-node", "uid": "node-uid-1", "labels": {HOST: "secret-node", "rack": "r1", "disk": "ssd",
                                                                          "topology.kubernetes.io/zone": "zone-a", "cores": "64"}},
     "spec": {"taints": [{"key": "dedicated", "value": "secret-team", "effect": "NoSchedule"},
                         {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]},
     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "images": [{"names": ["registry.example/secret:1"], "sizeBytes": 1000}]}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "secret-pod", "namespace": "team-ns", "uid": "secret-uid",
                  "labels": {"app": "payments", "tier": "gold", "team.example/cell": "cell-7"},
                  "annotations": {"note": "secret annotation"},
                  "ownerReferences": [{"kind": "ReplicaSet", "name": "owner-rs", "uid": "owner-uid", "controller": True}]},
     "spec": {
         "nodeName": "secret-node", "priority": 10, "priorityClassName": "secret-class", "schedulerName": "my-scheduler",
         "nodeSelector": {"disk": "ssd"},
         "schedulingGroup": {"podGroupName": "secret-pg"},
         "schedulingGates": [{"name": "gate.example/hold"}],
         "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "secret-team", "effect": "NoSchedule"},
                         {"operator": "Exists"}],
         "affinity": {
             "nodeAffinity": {
                 "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                     {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]},
                                           {"key": "cores", "operator": "Gt", "values": ["8"]}],
                      "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["secret-node"]}]}]},
                 "preferredDuringSchedulingIgnoredDuringExecution": [
                     {"weight": 7, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}}]},
             "podAffinity": {
                 "requiredDuringSchedulingIgnoredDuringExecution": [
                     {"labelSelector": {"matchLabels": {"app": "payments"}}, "topologyKey": "rack",
                      "namespaces": ["payments-ns"], "matchLabelKeys": ["match"]}],
                 "preferredDuringSchedulingIgnoredDuringExecution": [
                     {"weight": 3, "podAffinityTerm": {"labelSelector": {"matchExpressions": [
                         {"key": "tier", "operator": "NotIn", "values": ["gold"]}]},
                         "namespaceSelector": {"matchLabels": {"env": "prod"}}, "topologyKey": HOST}}]},
             "podAntiAffinity": {
                 "requiredDuringSchedulingIgnoredDuringExecution": [
                     {"labelSelector": {"matchLabels": {"app": "payments"}}, "topologyKey": HOST,
                      "mismatchLabelKeys": ["mismatch"]}]}},
         "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule",
                                        "labelSelector": {"matchLabels": {"app": "payments"}}, "matchLabelKeys": ["tier"]}],
         "initContainers": [{"name": "init", "image": "registry.example/secret:1"}],
         "containers": [{"name": "main", "image": "registry.example/secret:1",
                         "env": [{"name": "PASSWORD", "value": "hunter2"}], "command": ["/bin/secret"],
                         "ports": [{"name": "sidecar", "containerPort": 8080, "hostPort": 80, "protocol": "TCP"}],
                         "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu-claim"}]}}],
         "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "secret-claim"}},
                     {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                     {"name": "cfg", "configMap": {"name": "secret-config"}}],
         "resourceClaims": [{"name": "gpu-claim", "resourceClaimTemplateName": "gpu-template"}]},
     "status": {"phase": "Running", "nominatedNodeName": "secret-node",
                "containerStatuses": [{"name": "main", "ready": True}]}},
    {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
     "metadata": {"name": "secret-pg", "namespace": "team-ns", "uid": "pg-uid"},
     "spec": {"parentCompositePodGroupName": "secret-cpg", "workloadRef": {"workloadName": "secret-wl", "templateName": "secret-tpl"},
              "priorityClassName": "system-cluster-critical", "priority": 10, "preemptionPolicy": "Never",
              "schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"all": {}},
              "schedulingConstraints": {"topology": [{"key": "rack"}, {"key": "topology.kubernetes.io/zone"}]},
              "resourceClaims": [{"name": "gpu-claim", "resourceClaimName": "secret-claim"}],
              "futureField": "secret-future"},
     "status": {"conditions": [{"type": "PodGroupScheduled", "status": "False", "reason": "Unschedulable",
                                "message": "secret message"}]}},
    {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
     "metadata": {"name": "secret-cpg", "namespace": "team-ns"}, "spec": {"priorityClassName": "secret-class"}},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
     "metadata": {"name": "secret-pdb", "namespace": "team-ns"},
     "spec": {"minAvailable": 1, "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["payments"]}]}},
     "status": {"disruptionsAllowed": 0, "disruptedPods": {"victim-pod": "2026-01-01T00:00:00Z"}}},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "secret-pc"}, "value": 100},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "system-node-critical"}, "value": 2000001000},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "secret-ns-obj", "labels": {"env": "prod"}},
     "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}},
]


@pytest.fixture(scope="module")
def red() -> tuple[list[dict], Redactor]:
    return redact_items(ITEMS, KEY), redactor_for(ITEMS, KEY)


def _strings(doc) -> set[str]:
    if isinstance(doc, dict):
        return set().union(*(({k} | _strings(v)) for k, v in doc.items())) if doc else set()
    if isinstance(doc, list):
        return set().union(*(_strings(v) for v in doc)) if doc else set()
    return {doc} if isinstance(doc, str) else set()


def test_no_identifying_string_survives(red):
    items, _ = red
    left = _strings(items) & (SECRET | {"hunter2", "/bin/secret", "secret annotation", "secret message", "secret-future",
                                       "secret-config", "PASSWORD"})
    assert not left


def test_relations_the_scheduler_reads_still_hold(red):
    (node, pod, pg, cpg, pdb, pc, _, ns), r = red
    h = r.h
    name = node["metadata"]["name"]
    assert pod["spec"]["nodeName"] == name == node["metadata"]["labels"][HOST] == pod["status"]["nominatedNodeName"]
    aff = pod["spec"]["affinity"]
    term = aff["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term["matchFields"][0]["values"] == [name]
    rack, r1 = term["matchExpressions"][0]["key"], term["matchExpressions"][0]["values"][0]
    assert node["metadata"]["labels"][rack] == r1
    assert pod["spec"]["nodeSelector"] == {h("disk"): node["metadata"]["labels"][h("disk")]}
    assert aff["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["preference"]["matchExpressions"][0]["key"] == h("disk")
    labels = pod["metadata"]["labels"]
    assert aff["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"]["matchLabels"].items() <= labels.items()
    assert aff["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"] == rack
    assert aff["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["namespaces"] == [h("payments-ns")]
    assert aff["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["matchLabelKeys"] == [h("match")]
    pref = aff["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
    assert pref["weight"] == 3 and pref["podAffinityTerm"]["topologyKey"] == HOST
    assert pref["podAffinityTerm"]["labelSelector"]["matchExpressions"][0] == {"key": h("tier"), "operator": "NotIn",
                                                                              "values": [labels[h("tier")]]}
    assert pref["podAffinityTerm"]["namespaceSelector"]["matchLabels"].items() <= ns["metadata"]["labels"].items()
    assert aff["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["mismatchLabelKeys"] == [h("mismatch")]
    spread = pod["spec"]["topologySpreadConstraints"][0]
    assert (spread["topologyKey"], spread["matchLabelKeys"], spread["maxSkew"]) == (rack, [h("tier")], 1)
    taint, tol = node["spec"]["taints"][0], pod["spec"]["tolerations"][0]
    assert (taint["key"], taint["value"]) == (tol["key"], tol["value"]) and tol["effect"] == "NoSchedule"
    assert pod["spec"]["schedulingGroup"]["podGroupName"] == pg["metadata"]["name"]
    assert pg["spec"]["parentCompositePodGroupName"] == cpg["metadata"]["name"]
    assert pg["spec"]["schedulingConstraints"]["topology"][0]["key"] == rack
    assert pod["spec"]["priorityClassName"] == cpg["spec"]["priorityClassName"] == h("secret-class")
    assert pod["spec"]["schedulerName"] == h("my-scheduler")
    assert node["status"]["images"][0]["names"] == [pod["spec"]["containers"][0]["image"]] == [pod["spec"]["initContainers"][0]["image"]]
    claim = pod["spec"]["containers"][0]["resources"]["claims"][0]["name"]
    assert claim == pod["spec"]["resourceClaims"][0]["name"] == pg["spec"]["resourceClaims"][0]["name"]
    assert pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == pg["spec"]["resourceClaims"][0]["resourceClaimName"]
    assert "containerStatuses" not in pod["status"]  # strip_object drops them before redaction
    assert pdb["spec"]["selector"]["matchExpressions"][0] == {"key": h("app"), "operator": "In", "values": [labels[h("app")]]}
    assert list(pdb["status"]["disruptedPods"]) == [h("victim-pod")]
    # the controller's kind and name only (simulate recreates victims), the name through the one mapping
    assert pod["metadata"]["ownerReferences"] == [{"kind": "ReplicaSet", "name": h("owner-rs"), "controller": True}]



def test_numbers_compared_by_gt_lt_stay_numbers(red):
    # NodeSelectorRequirement Gt/Lt (labels.Requirement.Matches) parse the node's label value
    # and the requirement's value as integers: a hashed "64" would match nothing. Redaction
    # hashes the label key and gives integer values their rank among the integers of the input
    # (8 -> 1, 64 -> 2): `cores Gt 8` still selects the node, and the numbers are gone (issue 31).
    from kubectl_wap.framework.plugins.selectors import node_matches_pod_node_affinity
    from kubectl_wap.snapshot.decode.convert import build_snapshot

    (node, pod, *_), r = red
    key = r.lkey("cores")
    assert key != "cores" and node["metadata"]["labels"][key] == "2"
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert {"key": key, "operator": "Gt", "values": ["1"]} in terms[0]["matchExpressions"]
    snap = build_snapshot([node, pod])
    assert node_matches_pod_node_affinity(snap.pods[0], snap.nodes[0])

def test_default_scheduler_and_plain_hash_forms():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"schedulerName": "default-scheduler"}}
    [out] = redact_items([pod], KEY)
    assert out["spec"]["schedulerName"] == "default-scheduler"
    # Without order preservation the hash is a pure HMAC of the string: the same across inputs.
    assert hash_name("p", KEY) == hash_name("p", KEY, None) == redactor_for([], KEY, preserve_order=False).h("p")
    assert redact_items([pod], KEY, preserve_order=False)[0]["metadata"]["name"] == hash_name("p", KEY)
    assert hash_name("p", KEY, [pod]) == out["metadata"]["name"]
    assert not is_well_known_key("nodisk") and is_well_known_key("node.k8s.io/x") and not is_well_known_key("evil-kubernetes.io/x")


# Every scenario fixture analyzes the same after redaction: tests/test_redact_equivalence.py.
