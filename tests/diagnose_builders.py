"""Tiny raw-object builders for the diagnosis tests (pending, why-preempted, --optimal)."""

from __future__ import annotations

from test_autoscale import gang, node  # noqa: F401 - re-exported builders

from kubectl_wap.snapshot.convert import build_snapshot

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


def aftermath(items, doc, at="2026-11-30T11:58:00Z", scheduler="default-scheduler"):
    """The cluster as our whatif answer would leave it right after the preemption (executor.go
    PreemptPod): every victim gets DisruptionTarget (PreemptionByScheduler) and a deletionTimestamp,
    and each preemptor pod its nominatedNodeName."""
    import copy

    victims = {(v["namespace"], v["name"]) for v in doc["victims"]}
    nominated = {(p["pod"]["namespace"], p["pod"]["name"]): p["node"] for p in doc["placements"]}
    typ = doc["preemptor"]["kind"].lower()
    out = []
    for o in items:
        o = copy.deepcopy(o)
        if isinstance(o, dict) and o.get("kind") == "Pod":
            md, st = o["metadata"], o.setdefault("status", {})
            key = (md.get("namespace") or "default", md["name"])
            if key in victims:
                md["deletionTimestamp"] = at
                st["conditions"] = [c for c in st.get("conditions") or [] if c.get("type") != "DisruptionTarget"] + [
                    {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "lastTransitionTime": at,
                     "message": f"{scheduler}: preempting to accommodate a higher priority {typ}"}]
            if key in nominated:
                st["nominatedNodeName"] = nominated[key]
        out.append(o)
    return out
