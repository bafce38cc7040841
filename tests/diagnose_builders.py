"""Tiny raw-object builders for the diagnosis tests (pending, why-preempted, --optimal)."""

from __future__ import annotations

import sys
from pathlib import Path

from test_autoscale import gang, node  # noqa: F401 - re-exported builders

from kubectl_wap.snapshot.decode.convert import build_snapshot

T0 = "2026-11-30T11:00:00Z"


def pod(name, cpu="1", memory="1Gi", node_name=None, priority=0, group=None, ns="default", nominated=None,
        gates=(), labels=None, scheduler=None, policy=None, created=T0, deleted=None, preempted_at=None,
        pvc=None, gpu=None, tolerations=None, node_selector=None):
    req = {"cpu": cpu, "memory": memory}
    if gpu:
        req["nvidia.com/gpu"] = str(gpu)
    spec = {"priority": priority, "containers": [{"name": "c", "image": "x", "resources": {"requests": req}}]}
    if node_name:
        spec["nodeName"] = node_name
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if scheduler:
        spec["schedulerName"] = scheduler
    if policy:
        spec["preemptionPolicy"] = policy
    if pvc:
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": pvc}}]
    if tolerations:
        spec["tolerations"] = tolerations
    if node_selector:
        spec["nodeSelector"] = node_selector
    status = {"phase": "Running" if node_name else "Pending"}
    if nominated:
        status["nominatedNodeName"] = nominated
    md = {"namespace": ns, "name": name, "uid": f"{ns}-{name}", "creationTimestamp": created, "labels": labels or {}}
    if deleted:
        md["deletionTimestamp"] = deleted
    if preempted_at:
        status["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                                 "lastTransitionTime": preempted_at,
                                 "message": "default-scheduler: preempting to accommodate a higher priority pod"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status}


def snap(items):
    return build_snapshot(items)


sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from make_demo_after import aftermath  # noqa: E402,F401 - the same aftermath the README's example file is made with
