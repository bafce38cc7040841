"""The API server's defaulting of pod resources, for objects that never went through one.

A live cluster's pods were defaulted on create; a manifest about to be submitted (`whatif -f`), a
hand-written scenario or another tool's dump may not have been. The one default that changes
scheduling is requests from limits: GPU manifests mostly write `nvidia.com/gpu` (often cpu and
memory too) under `limits:` only, and the API server copies each limit to a missing request
(k8s.io/kubernetes v1.37.2 and v1.38.0-beta.0 pkg/apis/core/v1/defaults.go `SetDefaults_Pod`, per
container and init container; then, with PodLevelResources, `defaultPodRequests` for pod-level
`spec.resources`). Read without it, a pod with limits only requests nothing and the answer is for
another question (issue 30).

On an already defaulted pod this is a no-op (every limit has its request), so it is applied to
every pod read, whatever the source. The functions return the spec unchanged (the same object)
when nothing is defaulted, and a copy otherwise: inputs are never mutated.
"""

from __future__ import annotations

from typing import Any

# resourcehelper.IsSupportedPodLevelResource (v1.37.2 component-helpers): cpu, memory, hugepages-*.
_POD_LEVEL = ("cpu", "memory")


def _supported_pod_level(name: str) -> bool:
    return name in _POD_LEVEL or name.startswith("hugepages-")


def _list(v: Any) -> list:
    return v if isinstance(v, list) else []


def _requests(c: Any) -> dict:
    """A container's (or pod spec's) resources.requests; {} for any other shape (mistyped fields
    read as unset: the loader reports those it must, with the field named)."""
    r = c.get("resources") if isinstance(c, dict) else None
    req = r.get("requests") if isinstance(r, dict) else None
    return req if isinstance(req, dict) else {}


def _container_defaults(c: Any) -> Any:
    if not isinstance(c, dict):
        return c
    res = c.get("resources")
    if not isinstance(res, dict):
        return c
    limits = res.get("limits")
    if not isinstance(limits, dict) or not limits:
        return c
    requests = res.get("requests") if isinstance(res.get("requests"), dict) else {}
    missing = {k: v for k, v in limits.items() if k not in requests}
    if not missing:
        return c
    return {**c, "resources": {**res, "requests": {**requests, **missing}}}


def defaulted_spec(spec: dict) -> dict:
    """The spec with requests defaulted from limits as SetDefaults_Pod does (`spec` itself when
    nothing is defaulted)."""
    out = spec
    for key in ("containers", "initContainers"):
        cs = spec.get(key)
        if not isinstance(cs, list):
            continue
        new = [_container_defaults(c) for c in cs]
        if any(a is not b for a, b in zip(new, cs)):
            if out is spec:
                out = dict(spec)
            out[key] = new
    pod = out.get("resources")
    if isinstance(pod, dict) and isinstance(pod.get("limits"), dict) and pod["limits"]:
        # defaultPodRequests: the aggregated container requests for overcommittable resources
        # (cpu, memory), then the pod-level limit where nothing requested the resource. The first
        # step sets a pod-level request equal to what the containers' sum already is, so only the
        # second changes an answer; both are done so the object reads as the server stores it.
        reqs = dict(pod.get("requests") or {}) if isinstance(pod.get("requests"), dict) else {}
        before = dict(reqs)
        containers = [c for c in _list(out.get("containers")) if isinstance(c, dict)]
        requested = {k for c in containers for k in _requests(c)}
        for k, v in pod["limits"].items():
            if k not in reqs and _supported_pod_level(k) and not (k in _POD_LEVEL and k in requested):
                reqs[k] = v
        if reqs != before:
            if out is spec:
                out = dict(spec)
            out["resources"] = {**pod, "requests": reqs}
    return out


def defaulted_resources(spec: dict) -> tuple[str, ...]:
    """The resource names whose requests defaulted_spec fills in from limits (containers, init
    containers and pod level, sorted; () for a pod the API server would store unchanged): what
    the report says was defaulted."""
    out = defaulted_spec(spec)
    if out is spec:
        return ()
    names: set[str] = set()

    for key in ("containers", "initContainers"):
        for a, b in zip(_list(spec.get(key)), _list(out.get(key))):
            names.update(k for k in _requests(b) if k not in _requests(a))
    names.update(k for k in _requests(out) if k not in _requests(spec))
    return tuple(sorted(names))
