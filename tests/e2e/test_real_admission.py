"""Create-time admission of a new pod, ours (kubectl_wap/snapshot/decode/podadmission.py) against the real
kube-apiserver's (v1.37.2 and v1.38.0-beta.0, the oracle's TestServe with its default admission
plugins: LimitRanger, DefaultTolerationSeconds and RuntimeClass on).

Each case creates its LimitRanges (in a namespace of its own) and RuntimeClasses, then asks the server
to create the pod with `dryRun=All`: admission runs in full and the answer is the pod as it would be
stored, or the refusal. Our `admit_pod` (followed by SetDefaults_Pod's requests from limits, which
convert.py applies) must give the same resources, overhead, nodeSelector and tolerations, or the same
message. Runs only with KUBECTL_WAP_E2E=1 (bash tests/e2e/run.sh)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from real_apiserver import ENABLED, SKIP_REASON  # noqa: E402

if not ENABLED:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from kubectl_wap.quantity import parse_quantity  # noqa: E402
from kubectl_wap.snapshot.decode.defaulting import defaulted_spec  # noqa: E402
from kubectl_wap.snapshot.decode.podadmission import admit_pod, policy_from  # noqa: E402
from tests.builders import make_limit_range, make_pod, make_runtime_class  # noqa: E402

pytestmark = pytest.mark.e2e

LR = make_limit_range
RC = make_runtime_class


# name: (LimitRanges, RuntimeClasses, pod). "NS" is replaced by the case's own namespace.
CASES = {
    "limitrange-fills-empty-container": (
        [LR("d", "NS").item(default={"cpu": "1", "memory": "1Gi"}, default_request={"cpu": "500m", "memory": "256Mi"})],
        [], make_pod("p", "NS").container("c")),
    "limits-only-keeps-its-request": (
        [LR("d", "NS").item(default={"cpu": "1", "memory": "1Gi"}, default_request={"cpu": "500m", "memory": "256Mi"})],
        [], make_pod("p", "NS").container("c", limits={"cpu": "2"})),
    "limitrange-max-is-the-default": (
        [LR("d", "NS").item(max={"cpu": "4"}, min={"memory": "128Mi"})], [], make_pod("p", "NS").container("c")),
    "init-and-sidecar-filled": (
        [LR("d", "NS").item(default_request={"cpu": "100m"}, default={"cpu": "200m"})], [],
        make_pod("p", "NS").container("c").init_container("init").init_container("side", sidecar=True)),
    "two-limitranges-first-by-name": (
        [LR("a", "NS").item(default_request={"cpu": "100m"}), LR("b", "NS").item(default_request={"memory": "64Mi"})],
        [], make_pod("p", "NS").container("c")),
    "max-exceeded": ([LR("d", "NS").item(max={"cpu": "4"})], [], make_pod("p", "NS").container("c", limits={"cpu": "8"})),
    "two-violations": ([LR("d", "NS").item(min={"cpu": "1"}, max={"memory": "1Gi"})], [],
                       make_pod("p", "NS").container("c", requests={"cpu": "100m"}, limits={"memory": "2Gi"})),
    "pod-max-summed": ([LR("d", "NS").item("Pod", max={"cpu": "3"})], [],
                       make_pod("p", "NS").container("a", requests={"cpu": "2"}, limits={"cpu": "2"})
                       .container("b", requests={"cpu": "2"}, limits={"cpu": "2"})),
    "pod-max-without-limit": ([LR("d", "NS").item("Pod", max={"cpu": "4"})], [],
                              make_pod("p", "NS").container("c", requests={"cpu": "1"})),
    "ratio": ([LR("d", "NS").item(ratio={"cpu": "2"})], [],
              make_pod("p", "NS").container("c", requests={"cpu": "1"}, limits={"cpu": "4"})),
    "runtimeclass-overhead": ([], [RC("kata-NS").overhead(cpu="250m", memory="120Mi")],
                              make_pod("p", "NS").container("c", requests={"cpu": "1"}).runtime_class("kata-NS")),
    "runtimeclass-missing": ([], [], make_pod("p", "NS").container("c").runtime_class("gvisor-NS")),
    "runtimeclass-overhead-differs": ([], [RC("kata-NS").overhead(cpu="250m")],
                                      make_pod("p", "NS").container("c").runtime_class("kata-NS").overhead(cpu="1")),
    "runtimeclass-selector-conflict": ([], [RC("kata-NS").node_selector(sandbox="kata")],
                                       make_pod("p", "NS").container("c").runtime_class("kata-NS").node_selector(sandbox="runc")),
    "runtimeclass-scheduling-merged": (
        [], [RC("kata-NS").node_selector(sandbox="kata").toleration("sandbox", "Exists", effect="NoSchedule")],
        make_pod("p", "NS").container("c").runtime_class("kata-NS").node_selector(pool="a")
        .toleration("sandbox", "Equal", "x", "NoSchedule")),
    "overhead-without-runtimeclass": ([], [], make_pod("p", "NS").container("c").overhead(cpu="1")),
    "limitrange-and-runtimeclass": (
        [LR("d", "NS").item(default_request={"cpu": "300m"}, max={"memory": "2Gi"})], [RC("kata-NS").overhead(cpu="100m")],
        make_pod("p", "NS").container("c", limits={"memory": "1Gi"}).runtime_class("kata-NS")),
}


def _sub(o, ns: str):
    if isinstance(o, dict):
        return {k: _sub(v, ns) for k, v in o.items()}
    if isinstance(o, list):
        return [_sub(v, ns) for v in o]
    return o.replace("NS", ns) if isinstance(o, str) else o


def _q(rl: dict | None) -> dict:
    return {k: parse_quantity(v) for k, v in (rl or {}).items()}


def _view(spec: dict) -> dict:
    """What the scheduler reads of an admitted pod, quantities compared as numbers."""
    def res(cs):
        return [(c["name"], _q((c.get("resources") or {}).get("requests")), _q((c.get("resources") or {}).get("limits")))
                for c in cs or []]
    tols = [{k: t[k] for k in ("key", "operator", "value", "effect", "tolerationSeconds") if t.get(k) not in (None, "")}
            for t in spec.get("tolerations") or []]
    return {"containers": res(spec.get("containers")), "initContainers": res(spec.get("initContainers")),
            "overhead": _q(spec.get("overhead")), "nodeSelector": spec.get("nodeSelector") or {}, "tolerations": tols}


@pytest.mark.parametrize("server", ["cluster", "cluster138"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_admission_matches_the_api_server(case: str, server: str, request: pytest.FixtureRequest) -> None:
    c = request.getfixturevalue(server)
    ns = f"adm-{sorted(CASES).index(case)}"
    lrs, rcs, pod = CASES[case]
    lr_objs = [_sub(b.obj(), ns) for b in lrs]
    rc_objs = [_sub(b.obj(), ns) for b in rcs]
    pod_obj = _sub(pod.obj(), ns)
    pod_obj.pop("status", None)
    code, _ = c.request("GET", f"/api/v1/namespaces/{ns}")
    if code == 404:
        c.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, *lr_objs, *rc_objs])
    code, got = c.request("POST", f"/api/v1/namespaces/{ns}/pods?dryRun=All", pod_obj)

    ours, rec = admit_pod(pod_obj, policy_from(lr_objs + rc_objs, ["runtimeclasses.node.k8s.io", "limitranges"]))
    if code == 201:
        assert rec.error == "", f"the server admitted the pod; we refused it: {rec.error}"
        assert _view(defaulted_spec(ours["spec"])) == _view(got["spec"])
    else:
        assert code == 403, got
        assert rec.error == got["message"]
