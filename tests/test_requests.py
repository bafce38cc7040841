"""Effective pod requests: component-helpers resource.PodRequests and the scheduler's non-zero
defaults (GetNonzeroRequests), as kubectl_wap.snapshot.decode.convert.pod_from computes them."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_wap.errors import UserError
from kubectl_wap.framework.buildstate import build_state
from kubectl_wap.snapshot.decode.convert import build_snapshot, pod_from

GI = 2**30
MI = 2**20
DEF_CPU, DEF_MEM = 100, 200 * MI  # schedutil.DefaultMilliCPURequest / DefaultMemoryRequest


def c(cpu: str | None = None, mem: str | None = None, *, restart: str | None = None, **extra: str) -> dict[str, Any]:
    req: dict[str, Any] = dict(extra)
    if cpu is not None:
        req["cpu"] = cpu
    if mem is not None:
        req["memory"] = mem
    out: dict[str, Any] = {"name": "c", "image": "i", "resources": {"requests": req} if req else {}}
    if restart:
        out["restartPolicy"] = restart
    return out


def pod(containers=(), init=(), **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": list(containers), "initContainers": list(init), **spec},
    }


def node(name: str = "n1", cpu: str = "8", mem: str = "32Gi") -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "memory": mem, "pods": "110"}}}


# ---- PodRequests ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "obj, want",
    [
        pytest.param(pod([c("100m", "1Gi"), c("200m", "1Gi")]), {"cpu": 300, "memory": 2 * GI}, id="sum-of-containers"),
        pytest.param(pod([c("1")], [c("2", "1Gi")]), {"cpu": 2000, "memory": GI}, id="init-max-per-resource"),
        pytest.param(pod([c("3", "4Gi")], [c("2", "1Gi")]), {"cpu": 3000, "memory": 4 * GI}, id="init-smaller"),
        pytest.param(pod([c("1", "1Gi")], [c("2"), c(None, "3Gi")]), {"cpu": 2000, "memory": 3 * GI},
                     id="max-with-each-init-container"),
        pytest.param(pod([c("1")], [c("500m", restart="Always")]), {"cpu": 1500}, id="sidecar-added-to-sum"),
        pytest.param(pod([c("1")], [c("500m", restart="Always"), c("2")]), {"cpu": 2500},
                     id="sidecar-added-to-later-init"),
        pytest.param(pod([c("1")], [c("2"), c("500m", restart="Always")]), {"cpu": 2000},
                     id="sidecar-not-added-to-earlier-init"),
        pytest.param(pod([c("1")], [c("500m", restart="Always"), c("250m", restart="Always"), c("1")]),
                     {"cpu": 1750}, id="sidecars-cumulate"),
        pytest.param(pod([c("100m")], [c("5", restart="Never")]), {"cpu": 5000}, id="restartPolicy-Never-is-plain-init"),
        pytest.param(pod([c("1", "1Gi")], overhead={"cpu": "250m", "memory": "64Mi"}),
                     {"cpu": 1250, "memory": GI + 64 * MI}, id="overhead"),
        pytest.param(pod([c("1", "1Gi", **{"nvidia.com/gpu": "2"})], resources={"requests": {"cpu": "4", "memory": "8Gi"}}),
                     {"cpu": 4000, "memory": 8 * GI, "nvidia.com/gpu": 2}, id="pod-level-overrides-cpu-memory"),
        pytest.param(pod([c("1", "1Gi")], resources={"requests": {"cpu": "500m"}}), {"cpu": 500, "memory": GI},
                     id="pod-level-cpu-only"),
        pytest.param(pod([c("1")], resources={"requests": {"cpu": "2", "nvidia.com/gpu": "9"}}), {"cpu": 2000},
                     id="pod-level-ignores-other-resources"),
        pytest.param(pod([c("1")], resources={"requests": {"cpu": "2"}}, overhead={"cpu": "100m"}), {"cpu": 2100},
                     id="pod-level-plus-overhead"),
        pytest.param(pod([c()]), {}, id="no-requests"),
        pytest.param(pod([c("0")]), {}, id="zero-dropped"),
        pytest.param(pod([c("1m"), c("0.1m")]), {"cpu": 2}, id="milli-rounds-up-per-pod"),
        pytest.param(pod([c(None, "100m")]), {"memory": 1}, id="memory-value-rounds-up"),
        pytest.param(pod([c(**{"nvidia.com/gpu": "1", "ephemeral-storage": "1Gi"})]),
                     {"nvidia.com/gpu": 1, "ephemeral-storage": GI}, id="extended-resources"),
        # SetDefaults_Pod (pkg/apis/core/v1/defaults.go): a limit without a request is the request, as the API server
        # stores the pod (snapshot/decode/defaulting.py); the oracle agrees (tests/scenarios/pod-gpu-limits-only.yaml)
        pytest.param(pod([{"name": "c", "resources": {"limits": {"cpu": "4"}}}]), {"cpu": 4000}, id="limits-default-requests"),
        pytest.param(pod([{"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "4"}}}]), {"cpu": 1000},
                     id="requests-win-over-limits"),
        pytest.param(pod([c("1")], [c("1", restart="Always")], overhead={"cpu": "1"}), {"cpu": 3000},
                     id="sidecar-and-overhead"),
    ],
)
def test_effective_requests(obj: dict, want: dict[str, int]) -> None:
    assert dict(pod_from(obj).requests) == want


@pytest.mark.parametrize(
    "obj, want",
    [
        pytest.param(pod([c()]), (DEF_CPU, DEF_MEM), id="defaults-per-container"),
        pytest.param(pod([c(), c()]), (2 * DEF_CPU, 2 * DEF_MEM), id="two-containers"),
        pytest.param(pod([c("1")]), (1000, DEF_MEM), id="only-memory-defaulted"),
        pytest.param(pod([c(None, "1Gi")]), (DEF_CPU, GI), id="only-cpu-defaulted"),
        pytest.param(pod([c("0", "0")]), (0, 0), id="explicit-zero-is-not-missing"),
        pytest.param(pod([c("1", "1Gi"), c()]), (1000 + DEF_CPU, GI + DEF_MEM), id="mixed"),
        pytest.param(pod([c("1", "1Gi")], overhead={"cpu": "100m"}), (1100, GI), id="overhead-counts"),
        pytest.param(pod([c()], resources={"requests": {"cpu": "3", "memory": "1Gi"}}), (3000, GI), id="pod-level-wins"),
        pytest.param(pod([c("1", "1Gi")], [c()]), (1000, GI), id="init-default-below-containers"),
        pytest.param(pod([c("10m", "1Mi")], [c()]), (DEF_CPU, DEF_MEM), id="init-default-above-containers"),
        pytest.param(pod([]), (0, 0), id="no-containers"),
    ],
)
def test_nonzero_requests(obj: dict, want: tuple[int, int]) -> None:
    assert pod_from(obj).nonzero_requests == want


def test_nonzero_does_not_leak_into_requests() -> None:
    p = pod_from(pod([c(), c("1")]))
    assert dict(p.requests) == {"cpu": 1000}
    assert p.nonzero_requests == (1000 + DEF_CPU, 2 * DEF_MEM)


# ---- terminal pods hold nothing -----------------------------------------------------------------

def _bound(name: str, phase: str, cpu: str = "2") -> dict[str, Any]:
    o = pod([c(cpu, "1Gi")], nodeName="n1")
    o["metadata"] = {"name": name, "namespace": "ns"}
    o["status"] = {"phase": phase}
    return o


def test_terminal_pods_hold_no_resources() -> None:
    snap = build_snapshot([node(), _bound("run", "Running"), _bound("ok", "Succeeded"), _bound("bad", "Failed"),
                           _bound("pend", "Pending")])
    st = build_state(snap)
    cpu = st.res_index["cpu"]
    mem = st.res_index["memory"]
    assert int(st.requested[0, cpu]) == 4000  # Running + Pending-but-bound, not the terminal ones
    assert int(st.requested[0, mem]) == 2 * GI
    assert int(st.pod_count[0]) == 2
    names = {p.name for _, p in st.all_pods()}
    assert names == {"run", "pend"}
    assert [p.terminal for p in snap.pods] == [False, True, True, False]


def test_pod_on_missing_node_is_ignored_by_state() -> None:
    o = _bound("lost", "Running")
    o["spec"]["nodeName"] = "gone"
    snap = build_snapshot([node(), o])
    st = build_state(snap)
    assert [p.name for p in st.ignored_pods] == ["lost"]
    assert int(st.requested.sum()) == 0
    assert any("gone" in w and "not in the snapshot" in w for w in snap.warnings)


def test_terminal_pod_on_missing_node_is_not_warned() -> None:
    o = _bound("done", "Succeeded")
    o["spec"]["nodeName"] = "gone"
    snap = build_snapshot([node(), o])
    assert not any("gone" in w for w in snap.warnings)


# ---- bad quantities: one line naming the object and the field ---------------------------------

@pytest.mark.parametrize(
    "obj, field",
    [
        (pod([c("abc")]), "spec.containers[0].resources.requests.cpu"),
        (pod([c("1"), c(None, "1Kb")]), "spec.containers[1].resources.requests.memory"),
        (pod([c("-1")]), "spec.containers[0].resources.requests.cpu"),
        (pod([c("1")], [c("-5m")]), "spec.initContainers[0].resources.requests.cpu"),
        (pod([c("1")], overhead={"memory": "lots"}), "spec.overhead.memory"),
        (pod([c("1")], resources={"requests": {"cpu": "-1"}}), "spec.resources.requests.cpu"),
        (pod([c(True)]), "spec.containers[0].resources.requests.cpu"),  # type: ignore[arg-type]
        (pod([c("1e999")]), "cpu"),  # beyond the scheduler's int64
    ],
)
def test_bad_quantity_is_one_line_user_error(obj: dict, field: str) -> None:
    with pytest.raises(UserError) as ei:
        build_snapshot([obj])
    msg = str(ei.value)
    assert "\n" not in msg
    assert "pod ns/p" in msg
    assert field in msg


def test_negative_message_says_so() -> None:
    with pytest.raises(UserError, match="greater than or equal to 0"):
        pod_from(pod([c("-100m")]))


@pytest.mark.parametrize("alloc", [{"cpu": "x"}, {"cpu": "-1"}, {"memory": float("inf")}, {"cpu": "1e999"}])
def test_bad_node_allocatable(alloc: dict) -> None:
    with pytest.raises(UserError) as ei:
        build_snapshot([{"kind": "Node", "metadata": {"name": "n9"}, "status": {"allocatable": alloc}}])
    assert "node n9" in str(ei.value) and "allocatable" in str(ei.value)


def test_node_capacity_used_when_allocatable_missing() -> None:
    snap = build_snapshot([{"kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"cpu": "2", "memory": "1Gi"}}}])
    assert dict(snap.nodes[0].allocatable) == {"cpu": 2000, "memory": GI}
