"""Create-time admission of hypothetical pods (issue 30 item 1): LimitRanger, DefaultTolerationSeconds
and RuntimeClass as kube-apiserver v1.37.2 runs them (kubectl_wap/snapshot/decode/podadmission.py). Each
expectation cites the upstream function or test it comes from; the messages are upstream's."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.snapshot.decode.podadmission import ClusterPolicy, admit_pod, merge_tolerations, policy_from
from tests.builders import make_limit_range, make_node, make_pod, make_runtime_class

KNOWN_NONE = ClusterPolicy(runtime_classes={}, limit_ranges={})


def _policy(*objs: dict) -> ClusterPolicy:
    return policy_from(list(objs), ["runtimeclasses.node.k8s.io", "limitranges"])


def _res(pod: dict, i: int = 0, key: str = "containers") -> dict:
    return pod["spec"][key][i]["resources"]


# --- LimitRanger (plugin/pkg/admission/limitranger/admission.go) ---------------------------------

def test_limitrange_fills_a_container_that_sets_nothing() -> None:
    lr = make_limit_range("defaults", "ml").item(default={"cpu": "1", "memory": "1Gi"},
                                                 default_request={"cpu": "500m", "memory": "256Mi"}).obj()
    pod, rec = admit_pod(make_pod("p", "ml").container("c").obj(), _policy(lr))
    assert _res(pod) == {"requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
    assert rec.error == "" and rec.changes == ("cpu, memory request for container c (LimitRange defaults)",
                                               "cpu, memory limit for container c (LimitRange defaults)")


def test_a_limit_without_its_request_keeps_the_limit_as_request() -> None:
    # SetDefaults_Pod runs at decode, before admission: the limit became the request, so the
    # LimitRange's defaultRequest does not apply to that resource (mergeContainerResources: found).
    lr = make_limit_range("defaults", "ml").item(default={"cpu": "1"}, default_request={"cpu": "500m"}).obj()
    pod, rec = admit_pod(make_pod("p", "ml").container("c", limits={"cpu": "2"}).obj(), _policy(lr))
    assert _res(pod)["limits"] == {"cpu": "2"}
    assert "cpu" not in _res(pod).get("requests", {})  # convert.py's defaulted_spec copies the 2 later
    assert rec.changes == () and rec.error == ""


def test_limitrange_item_defaults_come_from_max_then_min() -> None:
    # SetDefaults_LimitRangeItem: default <- max; defaultRequest <- default, else <- min.
    lr = make_limit_range("bounds", "ml").item(max={"cpu": "4"}, min={"memory": "128Mi"}).obj()
    pod, rec = admit_pod(make_pod("p", "ml").container("c").obj(), _policy(lr))
    assert _res(pod) == {"requests": {"cpu": "4", "memory": "128Mi"}, "limits": {"cpu": "4"}}
    assert rec.error == ""


def test_init_containers_are_filled_too() -> None:
    lr = make_limit_range("defaults", "ml").item(default_request={"cpu": "100m"}).obj()
    pod, rec = admit_pod(make_pod("p", "ml").container("c").init_container("init").obj(), _policy(lr))
    assert _res(pod, key="initContainers")["requests"] == {"cpu": "100m"}
    assert "cpu request for init container init (LimitRange defaults)" in rec.changes


def test_another_namespace_s_limitrange_does_not_apply() -> None:
    lr = make_limit_range("defaults", "other").item(default_request={"cpu": "100m"}).obj()
    pod, rec = admit_pod(make_pod("p", "ml").container("c").obj(), _policy(lr))
    assert rec.changes == () and not _res(pod)


def test_limitrange_max_refuses_a_larger_limit() -> None:
    # maxConstraint, upstream's message; the max also became the default limit, which a container
    # that sets its own limit does not take.
    lr = make_limit_range("bounds", "ml").item(max={"cpu": "4"}).obj()
    _, rec = admit_pod(make_pod("p", "ml").container("c", limits={"cpu": "8"}).obj(), _policy(lr))
    assert rec.error == 'pods "p" is forbidden: maximum cpu usage per Container is 4, but limit is 8'


def test_a_pod_max_needs_a_limit() -> None:
    # A Pod item has no defaults (SetDefaults_LimitRangeItem is for Container items only).
    lr = make_limit_range("bounds", "ml").item("Pod", max={"cpu": "4"}).obj()
    _, rec = admit_pod(make_pod("p", "ml").container("c", requests={"cpu": "1"}).obj(), _policy(lr))
    assert rec.error == 'pods "p" is forbidden: maximum cpu usage per Pod is 4.  No limit is specified'


def test_two_violations_are_one_aggregate() -> None:
    # utilerrors.NewAggregate prints several errors as [a, b].
    lr = make_limit_range("bounds", "ml").item(min={"cpu": "1"}, max={"memory": "1Gi"}).obj()
    pod = make_pod("p", "ml").container("c", requests={"cpu": "100m"}, limits={"memory": "2Gi"}).obj()
    _, rec = admit_pod(pod, _policy(lr))
    assert rec.error == ('pods "p" is forbidden: [minimum cpu usage per Container is 1, but request is 100m, '
                         "maximum memory usage per Container is 1Gi, but limit is 2Gi]")


def test_pod_item_checks_the_sum_of_containers() -> None:
    # PodValidateLimitFunc, LimitTypePod: podRequests sums the containers.
    lr = make_limit_range("bounds", "ml").item("Pod", max={"cpu": "3"}).obj()
    pod = (make_pod("p", "ml").container("a", requests={"cpu": "2"}, limits={"cpu": "2"})
           .container("b", requests={"cpu": "2"}, limits={"cpu": "2"}).obj())
    _, rec = admit_pod(pod, _policy(lr))
    assert rec.error == 'pods "p" is forbidden: maximum cpu usage per Pod is 3, but limit is 4'


def test_limit_to_request_ratio() -> None:
    lr = make_limit_range("ratio", "ml").item(ratio={"cpu": "2"}).obj()
    pod = make_pod("p", "ml").container("c", requests={"cpu": "1"}, limits={"cpu": "4"}).obj()
    _, rec = admit_pod(pod, _policy(lr))
    assert rec.error == ('pods "p" is forbidden: cpu max limit to request ratio per Container is 2, '
                         "but provided ratio is 4.000000")


def test_unknown_limitranges_are_said_only_where_a_default_could_matter() -> None:
    policy = ClusterPolicy(runtime_classes={}, limit_ranges=None)
    _, bare = admit_pod(make_pod("p").container("c", requests={"nvidia.com/gpu": "1"}).obj(), policy)
    assert bare.unknown == ("LimitRanges (not in the input): a namespace default request for cpu or memory is not applied",)
    _, full = admit_pod(make_pod("p").container("c", limits={"cpu": "1", "memory": "1Gi"}).obj(), policy)
    assert full.unknown == ()


# --- DefaultTolerationSeconds ----------------------------------------------------------------------

def test_default_toleration_seconds_adds_not_ready_and_unreachable() -> None:
    pod, _ = admit_pod(make_pod("p").container("c").obj(), KNOWN_NONE)
    assert [t["key"] for t in pod["spec"]["tolerations"]] == ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]
    assert all(t["effect"] == "NoExecute" and t["tolerationSeconds"] == 300 for t in pod["spec"]["tolerations"])
    # an empty key with no effect covers both (Admit: len(toleration.Key) == 0)
    pod, _ = admit_pod(make_pod("p").container("c").toleration("", "Exists").obj(), KNOWN_NONE)
    assert len(pod["spec"]["tolerations"]) == 1


# --- RuntimeClass (plugin/pkg/admission/runtimeclass/admission.go) --------------------------------

def test_runtimeclass_overhead_becomes_the_pod_s_overhead() -> None:
    rc = make_runtime_class("kata").overhead(cpu="250m", memory="120Mi").obj()
    pod, rec = admit_pod(make_pod("p").container("c", requests={"cpu": "1"}).runtime_class("kata").obj(), _policy(rc))
    assert pod["spec"]["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert rec.changes == ("spec.overhead cpu=250m, memory=120Mi (RuntimeClass kata)",) and rec.error == ""


def test_runtimeclass_refusals() -> None:
    rc = make_runtime_class("kata").overhead(cpu="250m").node_selector(sandbox="kata").obj()
    pol = _policy(rc)
    _, missing = admit_pod(make_pod("p").container("c").runtime_class("gvisor").obj(), pol)
    assert missing.error == 'pods "p" is forbidden: pod rejected: RuntimeClass "gvisor" not found'  # prepareObjects
    _, differs = admit_pod(make_pod("p").container("c").runtime_class("kata").overhead(cpu="1").obj(), pol)
    assert differs.error.endswith("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")  # setOverhead
    _, same = admit_pod(make_pod("p").container("c").runtime_class("kata").overhead(cpu="0.25").obj(), pol)
    assert same.error == ""  # Semantic.DeepEqual compares quantities, not strings
    _, conflict = admit_pod(make_pod("p").container("c").runtime_class("kata").node_selector(sandbox="runc").obj(), pol)
    assert conflict.error.endswith("conflict: runtimeClass.scheduling.nodeSelector[sandbox] = kata; "
                                   "pod.spec.nodeSelector[sandbox] = runc")  # setScheduling
    _, bare = admit_pod(make_pod("p").container("c").overhead(cpu="1").obj(), pol)
    assert bare.error.endswith("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")  # validateOverhead


def test_runtimeclass_scheduling_merges_selector_and_tolerations() -> None:
    rc = (make_runtime_class("gpu-sandbox").node_selector(sandbox="kata")
          .toleration("sandbox", "Exists", effect="NoSchedule").obj())
    pod = make_pod("p").container("c").runtime_class("gpu-sandbox").node_selector(pool="a").toleration("sandbox", "Equal", "x", "NoSchedule").obj()
    out, rec = admit_pod(pod, _policy(rc))
    assert out["spec"]["nodeSelector"] == {"pool": "a", "sandbox": "kata"}
    # the class's Exists toleration is a superset of the pod's Equal one, which MergeTolerations drops
    assert [t for t in out["spec"]["tolerations"] if t["key"] == "sandbox"] == [
        {"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]
    assert rec.changes[0] == "nodeSelector sandbox=kata (RuntimeClass gpu-sandbox)"


def test_runtimeclasses_unknown_is_said_not_refused() -> None:
    out, rec = admit_pod(make_pod("p").container("c").runtime_class("kata").obj(), ClusterPolicy(None, {}))
    assert rec.error == "" and "overhead" not in out["spec"]
    assert rec.unknown == ("RuntimeClass kata (RuntimeClasses are not in the input): its overhead and scheduling "
                           "constraints are not applied",)


# pkg/util/tolerations/tolerations_test.go TestMergeTolerations (v1.37.2), its table and names.
_T = {
    "all": {"operator": "Exists"},
    "foo-nosched": {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
    "foo-bar-nosched": {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
    "foo-baz-nosched": {"key": "foo", "operator": "Equal", "value": "baz", "effect": "NoSchedule"},
    "faz-baz-nosched": {"key": "faz", "operator": "Equal", "value": "baz", "effect": "NoSchedule"},
    "foo-prefnosched": {"key": "foo", "operator": "Exists", "effect": "PreferNoSchedule"},
    "foo-noexec-10": {"key": "foo", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10},
}


@pytest.mark.parametrize("a,b,expected", [
    (["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"], ["foo-prefnosched", "foo-baz-nosched"],
     ["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10", "foo-prefnosched", "foo-baz-nosched"]),  # disjoint
    (["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"], ["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"],
     ["foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"]),  # duplicate
    (["foo-bar-nosched", "foo-baz-nosched"], ["foo-nosched", "faz-baz-nosched"], ["foo-nosched", "faz-baz-nosched"]),  # merge redundant
    (["foo-bar-nosched", "foo-baz-nosched", "foo-noexec-10"], ["all"], ["all"]),  # merge all
    (["all"], ["foo-bar-nosched", "foo-baz-nosched", "foo-noexec-10"], ["all"]),  # merge into all
], ids=["disjoint", "duplicate", "merge-redundant", "merge-all", "merge-into-all"])
def test_merge_tolerations_upstream_table(a: list[str], b: list[str], expected: list[str]) -> None:
    assert merge_tolerations([_T[x] for x in a], [_T[x] for x in b]) == [_T[x] for x in expected]


# --- end to end: `whatif -f` on a snapshot that holds RuntimeClasses and LimitRanges ---------------

def _cluster(tmp_path: Path, *extra: dict) -> Path:
    items = [make_node("n1").alloc(cpu="4", memory="16Gi").obj(),
             make_pod("filler", "ml").priority(0).req(cpu="2500m", memory="1Gi").on("n1", start=1_700_000_000).obj(),
             *extra]
    p = tmp_path / "cluster.json"
    p.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return p


def _whatif(tmp_path: Path, cluster: Path, pod: dict) -> dict:
    f = tmp_path / "pod.yaml"
    f.write_text(json.dumps(pod))
    r = CliRunner().invoke(app, ["whatif", "-f", str(f), "--snapshot", str(cluster), "-o", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _new_pod(**kw) -> dict:
    b = make_pod("urgent", "ml").priority(100).req(cpu="1", memory="1Gi")
    if kw.get("rc"):
        b = b.runtime_class(kw["rc"])
    return b.obj()


def test_runtimeclass_overhead_turns_a_fit_into_a_preemption(tmp_path: Path) -> None:
    # 1.5 cpu free: the pod's 1 cpu fits; with the class's 1 cpu overhead (NodeResourcesFit adds
    # spec.overhead to the requests) it needs the filler's room.
    rc = make_runtime_class("kata").overhead(cpu="1").obj()
    assert _whatif(tmp_path, _cluster(tmp_path, rc), _new_pod())["outcome"] == "NoPreemptionNeeded"
    doc = _whatif(tmp_path, _cluster(tmp_path, rc), _new_pod(rc="kata"))
    assert doc["outcome"] == "Preempt" and [v["name"] for v in doc["victims"]] == ["filler"]
    assert any("spec.overhead cpu=1 (RuntimeClass kata)" in w for w in doc["warnings"])


def test_a_missing_runtimeclass_is_invalid(tmp_path: Path) -> None:
    doc = _whatif(tmp_path, _cluster(tmp_path, make_runtime_class("kata").obj()), _new_pod(rc="gvisor"))
    assert doc["outcome"] == "Invalid"
    assert doc["message"] == 'pods "urgent" is forbidden: pod rejected: RuntimeClass "gvisor" not found'


def test_limitrange_default_request_is_what_the_pod_asks_for(tmp_path: Path) -> None:
    lr = make_limit_range("defaults", "ml").item(default_request={"cpu": "2"}, default={"cpu": "2"}).obj()
    pod = make_pod("urgent", "ml").priority(100).container("c").obj()  # no resources at all
    doc = _whatif(tmp_path, _cluster(tmp_path, lr), pod)
    assert doc["outcome"] == "Preempt"  # 2 cpu from the LimitRange; 1.5 free
    assert any("cpu request for container c (LimitRange defaults)" in w for w in doc["warnings"])
    assert doc["admitted"] == [{"pod": {"namespace": "ml", "name": "urgent"},
                                "changes": ["cpu request for container c (LimitRange defaults)",
                                            "cpu limit for container c (LimitRange defaults)"]}]
    schema = json.loads((Path(__file__).resolve().parent.parent / "kubectl_wap" / "report" / "schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert _whatif(tmp_path, _cluster(tmp_path), pod)["outcome"] == "NoPreemptionNeeded"


def test_limitrange_refusal_is_invalid(tmp_path: Path) -> None:
    lr = make_limit_range("bounds", "ml").item(max={"cpu": "500m"}).obj()
    doc = _whatif(tmp_path, _cluster(tmp_path, lr), _new_pod())
    assert doc["outcome"] == "Invalid" and "maximum cpu usage per Container is 500m" in doc["message"]


def test_snapshot_keeps_runtimeclasses_and_limitranges(tmp_path: Path) -> None:
    rc = make_runtime_class("kata").overhead(cpu="1").node_selector(sandbox="kata").obj()
    lr = make_limit_range("defaults", "ml").item(default_request={"cpu": "2"}).obj()
    out = tmp_path / "snap.json"
    r = CliRunner().invoke(app, ["snapshot", "--snapshot", str(_cluster(tmp_path, rc, lr)), "--output-file", str(out)])
    assert r.exit_code == 0, r.output
    items = {o["kind"]: o for o in json.loads(out.read_text())["items"]}
    assert items["RuntimeClass"]["overhead"] == {"podFixed": {"cpu": "1"}}
    assert items["RuntimeClass"]["scheduling"] == {"nodeSelector": {"sandbox": "kata"}}
    assert items["LimitRange"]["spec"]["limits"] == [{"type": "Container", "defaultRequest": {"cpu": "2"}}]


def test_the_sandboxed_example_is_admitted_as_kube_apiserver_admits_it() -> None:
    """docs/examples/sandboxed-gang.yaml: the file's LimitRange gives the pods cpu 4 / memory 32Gi,
    its RuntimeClass a 2-cpu / 4Gi overhead and the GPU toleration (without which no GPU node takes
    them). kube-scheduler v1.37.2 and v1.38.0-beta.0 (`python -m tests.oracle diff --examples`, the
    pods created through the real API server) preempt exactly these four pods."""
    example = Path(__file__).resolve().parent.parent / "docs" / "examples" / "sandboxed-gang.yaml"
    r = CliRunner().invoke(app, ["whatif", "-f", str(example), "--demo", "-o", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["outcome"] == "Preempt"
    assert {f"{v['namespace']}/{v['name']}" for v in doc["victims"]} == {
        "batch/render-1", "research/ablation-0", "research/ablation-1", "research/ablation-2"}
    assert len(doc["admitted"]) == 8 and "spec.overhead cpu=2, memory=4Gi (RuntimeClass kata-gpu)" in doc["admitted"][0]["changes"]
