"""The `Why:` line of an Unschedulable gang names the pod that failed, not the first member in
name order (members after the failing one were never tried)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kubectl_wap.cli import app

CLUSTER = """
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}, status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}}
- apiVersion: v1
  kind: Pod
  metadata: {name: low, namespace: default, uid: u-low, creationTimestamp: "2026-11-30T10:00:00Z"}
  spec: {nodeName: n1, priority: 0, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
  status: {phase: Running, startTime: "2026-11-30T10:00:00Z"}
- apiVersion: scheduling.k8s.io/v1beta1
  kind: PodGroup
  metadata: {name: g, namespace: default, uid: u-g, creationTimestamp: "2026-11-30T11:30:00Z"}
  spec: {priority: 100, schedulingPolicy: {gang: {minCount: 3}}}
"""
POD = """- apiVersion: v1
  kind: Pod
  metadata: {{name: {name}, namespace: default, uid: u-{name}, creationTimestamp: "2026-11-30T11:30:0{i}Z"}}
  spec: {{priority: 100, schedulingGroup: {{podGroupName: g}}, containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}
  status: {{phase: Pending}}
"""


def test_why_names_the_pod_that_failed(tmp_path: Path) -> None:
    # g-a fits, g-b needs more than the node has, g-c (never tried) sorts after; g-a sorts first.
    pods = [("g-a", 0, "1"), ("g-b", 1, "4"), ("g-c", 2, "1")]
    f = tmp_path / "c.yaml"
    f.write_text(CLUSTER + "".join(POD.format(name=n, i=i, cpu=c) for n, i, c in pods))
    r = CliRunner().invoke(app, ["whatif", "podgroup", "g", "--snapshot", str(f)])
    assert "Unschedulable" in r.output, r.output
    why = [ln for ln in r.output.splitlines() if ln.startswith("Why:")]
    assert why and "default/g-b" in why[0] and "Insufficient cpu" in why[0], r.output
