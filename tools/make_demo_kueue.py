#!/usr/bin/env python3
"""Generate the bundled Kueue demo cluster, kubectl_wap/data/demo-kueue-snapshot.json (issue 35).

Read it with `--demo kueue` (or `--snapshot @demo-kueue`). It is tests/fixtures/kueue-demo/cluster.yaml
(two 8-GPU nodes; ClusterQueues team-a-cq and team-b-cq of 8 GPUs each in cohort ml; team-b's
train-7, 3 x 4 GPUs, admitted in team-b-cq borrowing 4 of team-a's) plus one pending Workload,
team-b/sweep (1 x 8 GPUs, WorkloadPriorityClass batch), which Kueue cannot admit: its ClusterQueue
is over its nominal quota and nothing may be preempted for it. Stripped as a live capture is
(snapshot/share/strip.py). The job to submit is docs/examples/kueue-job.yaml (the fixture's job.yaml):

    kubectl wap whatif -f docs/examples/kueue-job.yaml --demo kueue      # Kueue evicts train-7, then it fits
    kubectl wap pending -A --demo kueue                                 # sweep: held by Kueue, and why

Deterministic: run it again and the file is byte-identical.

    python tools/make_demo_kueue.py            # (re)write the bundled snapshot
    python tools/make_demo_kueue.py --check    # exit 1 if the bundled file (or the example job) is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kubectl_wap.snapshot.share.strip import for_sharing, strip_object  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "kueue-demo"
DEFAULT_OUT = REPO / "kubectl_wap" / "data" / "demo-kueue-snapshot.json"
EXAMPLE_JOB = REPO / "docs" / "examples" / "kueue-job.yaml"
CAPTURED = "2026-12-01T12:00:00Z"

SWEEP = {
    "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
    "metadata": {"name": "sweep", "namespace": "team-b", "uid": "wl-sweep", "creationTimestamp": "2026-12-01T11:30:00Z",
                 "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "sweep", "uid": "job-sweep",
                                      "controller": True}]},
    "spec": {"queueName": "lq", "priority": 100,
             "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "batch"},
             "active": True,
             "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [{
                 "name": "sweep", "image": "trainer:1",
                 "resources": {"requests": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"},
                               "limits": {"nvidia.com/gpu": "8"}}}]}}}]},
}


def build() -> dict:
    items = yaml.safe_load((FIXTURE / "cluster.yaml").read_text())["items"] + [SWEEP]
    items = [for_sharing(strip_object(o)) for o in items]
    kueue = ["resourceflavors", "clusterqueues", "cohorts", "localqueues", "workloads", "workloadpriorityclasses",
             "topologies", "admissionchecks"]
    listed = ["nodes", "pods", "namespaces", "priorityclasses.scheduling.k8s.io", "poddisruptionbudgets.policy",
              "podgroups.scheduling.k8s.io", "compositepodgroups.scheduling.k8s.io"] + [f"{k}.kueue.x-k8s.io" for k in kueue]
    header = {"formatVersion": 1, "capturedAt": CAPTURED, "server": {"url": "demo-kueue", "version": "v1.37.1"},
              "listed": listed, "notServed": [], "forbidden": [], "resourceVersions": {}, "counts": {},
              "apiVersions": {f"{k}.kueue.x-k8s.io": "kueue.x-k8s.io/v1beta2" for k in kueue}}
    return {"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot", "header": header, "items": items}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated file is out of date")
    args = ap.parse_args()
    # The snapshot and the job docs/kueue.md submits to it (the fixture's, so the tests' job is the docs' job).
    wanted = {DEFAULT_OUT: json.dumps(build(), indent=1, sort_keys=False) + "\n",
              EXAMPLE_JOB: (FIXTURE / "job.yaml").read_text()}
    stale = [p for p, text in wanted.items() if not p.exists() or p.read_text() != text]
    if args.check:
        print("up to date" if not stale else f"out of date: {', '.join(map(str, stale))}: run tools/make_demo_kueue.py")
        return 1 if stale else 0
    for p in stale:
        p.write_text(wanted[p])
    return 0


if __name__ == "__main__":
    sys.exit(main())
