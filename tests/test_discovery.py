"""API versions as the server serves them (issue 29 item 3, snapshot/io/discovery.py): PodGroups and
CompositePodGroups are listed at the most stable version the server serves (v1 > v1beta1 >
v1alpha3), DRA objects at v1 only, against the loopback API server laid out as v1.37 and v1.38
serve these groups (k8s.io/api v0.37.2 / v0.38.0-beta.0)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_apiserver import FakeApiServer  # noqa: E402

from kubectl_wap.snapshot.decode.convert import build_snapshot  # noqa: E402
from kubectl_wap.snapshot.io.discovery import version_priority  # noqa: E402
from kubectl_wap.snapshot.io.live import load_live  # noqa: E402
from kubectl_wap.snapshot.io.names import live_names  # noqa: E402
from kubectl_wap.model import SnapshotHeader  # noqa: E402

CPG = "compositepodgroups.scheduling.k8s.io"
PG = "podgroups.scheduling.k8s.io"


def _objects() -> list[dict]:
    return [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}},
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "CompositePodGroup", "metadata": {"namespace": "ml", "name": "tree"},
         "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 1}}, "priority": 10, "workloadRef": {"workloadName": "w"}}},
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"namespace": "ml", "name": "leaf"},
         "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}, "priority": 10, "parentCompositePodGroupName": "tree",
                  "workloadRef": {"workloadName": "w"}}},
    ]


def _capture(tmp_path: Path, **kw) -> tuple[dict, list[dict], FakeApiServer]:
    with FakeApiServer(_objects(), **kw) as srv:
        header, items = load_live(str(srv.write_kubeconfig(tmp_path / "kc")), None, None)
        return header, items, srv


def test_version_priority_is_kubernetes_order() -> None:
    got = sorted(["v1alpha3", "v1beta1", "v2", "v1", "v1beta2", "v1alpha1", "foo"], key=version_priority)
    assert got == ["v2", "v1", "v1beta2", "v1beta1", "v1alpha3", "v1alpha1", "foo"]


def test_1_37_layout_reads_cpgs_at_v1alpha3(tmp_path: Path) -> None:
    header, items, _ = _capture(tmp_path)  # the fake's default: PodGroup v1beta1, CPG v1alpha3 (v1.37)
    assert header["apiVersions"][CPG] == "scheduling.k8s.io/v1alpha3"
    assert header["apiVersions"][PG] == "scheduling.k8s.io/v1beta1"
    assert {o["kind"] for o in items} >= {"CompositePodGroup", "PodGroup"}


def test_1_38_layout_reads_cpgs_at_v1beta1(tmp_path: Path) -> None:
    versions = {"compositepodgroups": ("v1beta1", "v1alpha3"), "podgroups": ("v1beta1", "v1alpha3")}
    header, items, srv = _capture(tmp_path, versions=versions)
    assert header["apiVersions"][CPG] == "scheduling.k8s.io/v1beta1"
    assert "/apis/scheduling.k8s.io/v1alpha3/compositepodgroups" not in srv.paths()


def test_cpg_served_only_at_v1beta1_is_captured(tmp_path: Path) -> None:
    # A 1.38 cluster with alpha APIs off: before discovery the capture asked v1alpha3 only, got 404,
    # and went on without the tree (a PodGroup with a parent nobody knows).
    header, items, _ = _capture(tmp_path, versions={"compositepodgroups": ("v1beta1",)})
    assert CPG in header["listed"] and CPG not in header["notServed"]
    cpgs = [o for o in items if o["kind"] == "CompositePodGroup"]
    assert [o["metadata"]["name"] for o in cpgs] == ["tree"]
    snap = build_snapshot(items, SnapshotHeader(source="test"))
    assert [g.name for g in snap.composite_pod_groups] == ["tree"]
    assert snap.composite_pod_groups[0].workload_name == "w"


def test_dra_beta_only_server_is_named_not_misread(tmp_path: Path) -> None:
    beta = {p: ("v1beta2",) for p in ("deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates")}
    header, items, _ = _capture(tmp_path, versions=beta)
    assert not [o for o in items if o["kind"] in ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")]
    assert "resourceclaims.resource.k8s.io" in header["notServed"]
    assert any("served only at resource.k8s.io/v1beta2" in w for w in header["warnings"])


def test_discovery_forbidden_falls_back_to_the_default_versions(tmp_path: Path) -> None:
    with FakeApiServer(_objects()) as srv:
        srv.fail("/apis/scheduling.k8s.io", 403, times=None)
        header, items = load_live(str(srv.write_kubeconfig(tmp_path / "kc")), None, None)
    assert header["apiVersions"][CPG] == "scheduling.k8s.io/v1alpha3"
    assert [o for o in items if o["kind"] == "CompositePodGroup"]


@pytest.mark.parametrize("versions", [{}, {"compositepodgroups": ("v1beta1",)}])
def test_completion_names_cpgs_at_whatever_version_is_served(tmp_path: Path, versions: dict) -> None:
    with FakeApiServer(_objects(), versions=versions) as srv:
        names = live_names("cpg", "ml", str(srv.write_kubeconfig(tmp_path / "kc")), None)
    assert names == ["tree"]
