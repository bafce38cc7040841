"""snapshot/decode/defaulting.py: requests defaulted from limits as the API server's SetDefaults_Pod does
(pkg/apis/core/v1/defaults.go, v1.37.2 and v1.38.0-beta.0), never mutating its input. The end-to-end
answer is the fixture tests/scenarios/pod-gpu-limits-only.yaml (checked by both oracles)."""

from __future__ import annotations

import copy
import json

from kubectl_wap.model import SnapshotHeader
from kubectl_wap.snapshot.decode.convert import build_snapshot
from kubectl_wap.snapshot.decode.defaulting import defaulted_spec
from kubectl_wap.snapshot.share.strip import strip_object


def _c(requests: dict | None = None, limits: dict | None = None, **extra) -> dict:
    res = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    return {"name": "c", "resources": res, **extra}


def test_each_missing_request_comes_from_its_limit_and_set_requests_stay() -> None:
    spec = {"containers": [_c({"cpu": "1"}, {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": "4"})],
            "initContainers": [_c(None, {"cpu": "3"}, restartPolicy="Always")]}
    before = copy.deepcopy(spec)
    out = defaulted_spec(spec)
    assert out is not spec and spec == before  # a copy, input untouched
    assert out["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "4"}
    assert out["initContainers"][0]["resources"]["requests"] == {"cpu": "3"}
    again = defaulted_spec(out)
    assert again is out  # idempotent: a server-defaulted pod is left as it is


def test_nothing_to_default_returns_the_same_object() -> None:
    spec = {"containers": [_c({"cpu": "1"}), _c(None, None), {"name": "bare"}]}
    out = defaulted_spec(spec)
    assert out is spec


def test_pod_level_limits_default_pod_requests_where_no_container_requests() -> None:
    # defaultPodRequests: memory requested by no container takes the pod-level limit; cpu, which a
    # container requests, is not taken from the pod limit.
    spec = {"containers": [_c({"cpu": "1"})], "resources": {"limits": {"cpu": "4", "memory": "8Gi"}}}
    out = defaulted_spec(spec)
    assert out is not spec and out["resources"]["requests"] == {"memory": "8Gi"}


def test_the_model_and_a_stripped_snapshot_see_the_defaulted_requests() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
           "spec": {"containers": [_c(None, {"nvidia.com/gpu": "2", "cpu": "500m"})]}, "status": {"phase": "Pending"}}
    snap = build_snapshot([copy.deepcopy(pod)], SnapshotHeader(source="t"))
    assert snap.pods[0].requests["nvidia.com/gpu"] == 2 and snap.pods[0].requests["cpu"] == 500
    stripped = json.loads(json.dumps(strip_object(copy.deepcopy(pod))))
    assert stripped["spec"]["containers"][0]["resources"] == {"requests": {"nvidia.com/gpu": "2", "cpu": "500m"}}


def test_the_report_says_per_pod_what_was_defaulted():
    """Issue 30 item 1: what the reading defaulted is in -o json (`defaulted`, per pod) and one
    warning line; a pod that already requests what it limits is not listed."""
    from builders import make_node, make_pod

    from kubectl_wap.model import SnapshotHeader
    from kubectl_wap.preemption.analyze import analyze
    from kubectl_wap.report.document import to_document
    from kubectl_wap.snapshot.decode.convert import build_snapshot
    from kubectl_wap.snapshot.decode.defaulting import defaulted_resources

    items = [make_node("n1").alloc(cpu="4", memory="8Gi").obj(),
             make_pod("low").priority(0).limits_only(cpu="4").on("n1", start=1_795_000_000).obj(),
             make_pod("ok").priority(0).container(requests={"cpu": "1"}, limits={"cpu": "2"}).obj(),
             make_pod("hi").priority(10).container(requests={"memory": "1Gi"}, limits={"cpu": "2", "memory": "2Gi"})
             .init_container("init", limits={"memory": "3Gi"}).obj()]
    assert defaulted_resources(items[3]["spec"]) == ("cpu", "memory")
    assert defaulted_resources(items[2]["spec"]) == ()
    snap = build_snapshot(items, SnapshotHeader(source="test"))
    assert snap.defaulted == {("default", "low"): ("cpu",), ("default", "hi"): ("cpu", "memory")}
    assert sum("requests defaulted from limits for 2 pod(s)" in w for w in snap.warnings) == 1
    res = analyze(snap, "pod", "default", "hi", None)
    doc = to_document(res, "test", "")
    assert doc["defaulted"] == [{"pod": {"namespace": "default", "name": "hi"}, "requestsFromLimits": ["cpu", "memory"]},
                                {"pod": {"namespace": "default", "name": "low"}, "requestsFromLimits": ["cpu"]}]
