"""Object names from a live cluster, for shell completion (issue 16): one read-only list call with
a short timeout, names only. Any failure (no kubeconfig, unreachable server, 403, timeout) gives no
names: completion must never print an error or hang the shell. kubectl's own completion does the
same (`kubectl get ... -o template` under `--request-timeout=5s`, kubectl/pkg/cmd/util/completion)."""

from __future__ import annotations

import dataclasses
from typing import Any

from .live import RESOURCES, ResourceSpec

# Shorter than kubectl's 5 s: a shell waiting on <TAB> feels anything over a second or two.
COMPLETION_TIMEOUT = 2.0
_LIMIT = "500"  # one page: completion lists what a person can read, not a whole cluster

_BY_WORD: dict[str, ResourceSpec] = {}
for _spec in RESOURCES:
    _BY_WORD[_spec.plural] = _spec
_ALIASES = {"podgroup": "podgroups", "pg": "podgroups", "compositepodgroup": "compositepodgroups",
            "cpg": "compositepodgroups", "pod": "pods", "po": "pods", "namespace": "namespaces", "ns": "namespaces"}


def live_names(kind: str, namespace: str | None, kubeconfig: str | None, context: str | None,
               timeout: float = COMPLETION_TIMEOUT, overrides: Any = None) -> list[str]:
    """Names of `kind` (a kubectl word: pod, podgroup, cpg, namespace...) in `namespace`, read from
    the cluster of `kubeconfig`/`context`."""
    spec = _BY_WORD.get(_ALIASES.get(kind.lower(), kind.lower()))
    items = _list(spec, namespace, kubeconfig, context, timeout, overrides) if spec is not None else []
    return sorted({str((o.get("metadata") or {}).get("name")) for o in items if isinstance(o, dict)} - {"None"})


def live_units(kind: str, namespace: str, kubeconfig: str | None, context: str | None, bound: bool,
               timeout: float = COMPLETION_TIMEOUT, overrides: Any = None) -> list[str]:
    """Pods and PodGroups that are pending (`bound` False: what whatif and explain ask about) or
    running (`bound` True: the victims why-preempted asks about). Pods: one list through the field
    selector kubectl users type (`spec.nodeName=` / `spec.nodeName!=`). PodGroups: the groups and
    the namespace's pods (two lists); a group is running when a pod of it is bound
    (`spec.schedulingGroup.podGroupName`), pending when one is not or it has none yet (a group
    whose pods are still to come is a what-if too: `whatif podgroup NAME --replicas N`). Silent on
    any failure."""
    word = _ALIASES.get(kind.lower(), kind.lower())
    if word not in ("pods", "podgroups"):
        return live_names(kind, namespace, kubeconfig, context, timeout=timeout, overrides=overrides)
    query = [("fieldSelector", "spec.nodeName!=" if bound else "spec.nodeName=")] if word == "pods" else []
    pods = [o for o in _list(_BY_WORD["pods"], namespace, kubeconfig, context, timeout, overrides, *query)
            if isinstance(o, dict) and isinstance(o.get("spec"), dict)]
    if word == "pods":  # filtered again: servers that ignore the field selector
        return sorted({str((o.get("metadata") or {}).get("name")) for o in pods if bool(o["spec"].get("nodeName")) == bound} - {"None"})
    members: dict[str, list[bool]] = {}
    for o in pods:
        sg = o["spec"].get("schedulingGroup")
        if isinstance(sg, dict) and sg.get("podGroupName"):
            members.setdefault(str(sg["podGroupName"]), []).append(bool(o["spec"].get("nodeName")))
    groups = live_names("podgroups", namespace, kubeconfig, context, timeout=timeout, overrides=overrides)
    return [g for g in groups if group_wanted(members.get(g, []), bound)]


def group_wanted(members_bound: list[bool], bound: bool) -> bool:
    """Whether completion offers a PodGroup whose member pods are bound as `members_bound` says:
    for a what-if (`bound` False) when a member is pending or it has none yet; for why-preempted
    (`bound` True) when a member runs. A partly running group is both."""
    return any(members_bound) if bound else not members_bound or not all(members_bound)


def _list(spec: ResourceSpec, namespace: str | None, kubeconfig: str | None, context: str | None, timeout: float,
          overrides: Any, *query: tuple[str, str]) -> list:
    """One page of `spec`'s objects, or [] on any failure."""
    try:
        from .readonly import connect

        client = connect(kubeconfig, context, request_timeout=timeout, overrides=overrides)
        try:
            # one request per version, no retries: a slow cluster gives no names rather than a hung
            # shell. A resource served at several versions (live.py ResourceSpec.versions) is asked
            # at each, most stable first, until one is served (a 1.38 cluster with alpha APIs off has
            # no v1alpha3 CompositePodGroups).
            for version in spec.versions or (spec.version,):
                at = dataclasses.replace(spec, version=version)
                resp = client.request("GET", at.path(namespace if spec.namespaced else None), [("limit", _LIMIT), *query])
                if resp.status != 404:
                    break
            if resp.status != 200:
                return []
            return resp.json().get("items") or []
        finally:
            client.close()
    except Exception:  # noqa: BLE001 - completion never fails loudly
        return []
