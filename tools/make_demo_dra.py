#!/usr/bin/env python3
"""Generate the bundled DRA demo cluster, kubectl_wap/data/demo-dra-snapshot.json (issue 15).

Read it with `--snapshot @demo-dra`. Four H100 nodes publish 8 GPUs each through a ResourceSlice
(driver gpu.nvidia.com); every GPU is allocated through ResourceClaims generated from templates:
on each node three `batch` pods (priority 100) hold 2 GPUs each and one `serving` pod (priority
500) holds 2. The pending gang `ml/train` (priority 1000, 4 pods, minCount 4) asks for 4 GPUs per
pod with at least 80Gi of memory (a CEL selector on the device capacity).

    kubectl wap whatif podgroup train -n ml --snapshot @demo-dra                               # v1.37: no
    kubectl wap whatif podgroup train -n ml --snapshot @demo-dra --scheduler-version 1.38

Without DRAPreemption (v1.37.2) the DynamicResources failure is UnschedulableAndUnresolvable and
nothing is preempted; with it, each node frees 4 GPUs by preempting two batch pods (8 victims),
and the serving pods stay. Deterministic: run it again and the file is byte-identical.

    python tools/make_demo_dra.py            # (re)write the bundled snapshot
    python tools/make_demo_dra.py --check    # exit 1 if the bundled file is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "kubectl_wap" / "data" / "demo-dra-snapshot.json"
DRIVER = "gpu.nvidia.com"
CAPTURED = "2026-11-30T12:00:00Z"
NODES = [f"h100-{i}" for i in range(4)]
API = "resource.k8s.io/v1"


def _uid(*parts: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "kubectl-wap-demo-dra/" + "/".join(parts)))


def _meta(name: str, ns: str | None = None, **extra: object) -> dict:
    m: dict = {"name": name, "uid": _uid(ns or "", name), "creationTimestamp": "2026-11-01T12:00:00Z"}
    if ns:
        m["namespace"] = ns
    m.update(extra)
    return m


def _template(ns: str, name: str, count: int, selector: str | None = None) -> dict:
    ex: dict = {"deviceClassName": "h100", "count": count}
    if selector:
        ex["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": API, "kind": "ResourceClaimTemplate", "metadata": _meta(name, ns),
            "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": ex}]}}}}


def _pod(ns: str, name: str, prio_class: str, prio: int, template: str, node: str | None = None,
         generated: str | None = None, group: str | None = None, started: str | None = None) -> dict:
    spec: dict = {
        "priorityClassName": prio_class, "priority": prio, "schedulerName": "default-scheduler",
        "containers": [{"name": "main", "image": "nvcr.io/nvidia/pytorch:25.10-py3",
                        "resources": {"requests": {"cpu": "8", "memory": "64Gi"}, "claims": [{"name": "gpus"}]}}],
        "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": template}],
    }
    if node:
        spec["nodeName"] = node
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    status: dict = {"phase": "Running" if node else "Pending"}
    if started:
        status["startTime"] = started
    if generated:
        status["resourceClaimStatuses"] = [{"name": "gpus", "resourceClaimName": generated}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": _meta(name, ns, labels={"app": name.rsplit("-", 1)[0]}),
            "spec": spec, "status": status}


def build() -> dict:
    items: list[dict] = []
    for ns in ("batch", "serving", "ml"):
        items.append({"apiVersion": "v1", "kind": "Namespace",
                      "metadata": _meta(ns, labels={"kubernetes.io/metadata.name": ns}), "status": {"phase": "Active"}})
    for name, value in (("batch-low", 100), ("serving", 500), ("training-high", 1000)):
        items.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": _meta(name),
                      "value": value, "preemptionPolicy": "PreemptLowerPriority"})
    items.append({"apiVersion": API, "kind": "DeviceClass", "metadata": _meta("h100"),
                  "spec": {"selectors": [{"cel": {"expression":
                      f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].productName == "NVIDIA-H100-80GB-HBM3"'}}]}})
    items.append(_template("batch", "gpu-pair", 2))
    items.append(_template("serving", "gpu-pair", 2))
    items.append(_template("ml", "gpu-quad", 4, f'device.capacity["{DRIVER}"].memory.compareTo(quantity("80Gi")) >= 0'))
    for n, node in enumerate(NODES):
        items.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": _meta(node, labels={"kubernetes.io/hostname": node, "kubernetes.io/os": "linux",
                                            "topology.kubernetes.io/zone": "us-east-1a", "pool": "h100"}),
            "status": {"allocatable": {"cpu": "96", "memory": "1000Gi", "pods": "110", "ephemeral-storage": "800Gi"},
                       "capacity": {"cpu": "96", "memory": "1000Gi", "pods": "110", "ephemeral-storage": "800Gi"}},
        })
        items.append({
            "apiVersion": API, "kind": "ResourceSlice", "metadata": _meta(f"{node}-{DRIVER}"),
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{g}",
                                  "attributes": {"productName": {"string": "NVIDIA-H100-80GB-HBM3"}, "index": {"int": g},
                                                 "driverVersion": {"version": "580.95.5"}},
                                  "capacity": {"memory": {"value": "80Gi"}}} for g in range(8)]},
        })
        holders = [("batch", f"batch-{n}{k}", "batch-low", 100) for k in range(3)] + [("serving", f"serve-{n}", "serving", 500)]
        for k, (ns, pod, pc, prio) in enumerate(holders):
            claim = f"{pod}-gpus-{_uid(pod)[:5]}"
            devs = [f"gpu-{2 * k}", f"gpu-{2 * k + 1}"]
            items.append({
                "apiVersion": API, "kind": "ResourceClaim", "metadata": _meta(claim, ns),
                "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "h100", "count": 2}}]}},
                "status": {"allocation": {"devices": {"results": [{"request": "gpus", "driver": DRIVER, "pool": node, "device": d} for d in devs]},
                                          "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                              {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                           "reservedFor": [{"resource": "pods", "name": pod, "uid": _uid(ns, pod)}]},
            })
            items.append(_pod(ns, pod, pc, prio, "gpu-pair", node, claim, started=f"2026-11-30T{8 + k:02d}:{10 * n:02d}:00Z"))
    items.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": _meta("train", "ml"),
                  "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}, "priorityClassName": "training-high", "priority": 1000}})
    for w in range(4):
        items.append(_pod("ml", f"train-{w}", "training-high", 1000, "gpu-quad", group="train"))
    kinds = ["nodes", "pods", "namespaces", "priorityclasses.scheduling.k8s.io", "poddisruptionbudgets.policy",
             "podgroups.scheduling.k8s.io", "compositepodgroups.scheduling.k8s.io", "deviceclasses.resource.k8s.io",
             "resourceslices.resource.k8s.io", "resourceclaims.resource.k8s.io", "resourceclaimtemplates.resource.k8s.io"]
    header = {"formatVersion": 1, "capturedAt": CAPTURED, "server": {"url": "demo-dra", "version": "v1.37.1"},
              "listed": kinds, "notServed": [], "forbidden": [], "resourceVersions": {}, "counts": {}}
    return {"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot", "header": header, "items": items}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", default=str(DEFAULT_OUT))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = json.dumps(build(), indent=1, sort_keys=False) + "\n"
    out = Path(args.output)
    if args.check:
        same = out.exists() and out.read_text() == text
        print("up to date" if same else f"{out} is out of date: run tools/make_demo_dra.py")
        return 0 if same else 1
    out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
