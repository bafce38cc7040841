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
               pending_only: bool = False, timeout: float = COMPLETION_TIMEOUT, overrides: Any = None) -> list[str]:
    """Names of `kind` (a kubectl word: pod, podgroup, cpg, namespace...) in `namespace`, read from
    the cluster of `kubeconfig`/`context`. Pods: `pending_only` keeps unscheduled ones (the pods a
    what-if asks about), through the same field selector kubectl users type (`spec.nodeName=`)."""
    spec = _BY_WORD.get(_ALIASES.get(kind.lower(), kind.lower()))
    if spec is None:
        return []
    try:
        from .readonly import connect

        client = connect(kubeconfig, context, request_timeout=timeout, overrides=overrides)
        try:
            query = [("limit", _LIMIT)]
            if pending_only and spec.plural == "pods":
                query.append(("fieldSelector", "spec.nodeName="))
            # one request per version, no retries: a slow cluster gives no names rather than a hung
            # shell. A resource served at several versions (live.py ResourceSpec.versions) is asked
            # at each, most stable first, until one is served (a 1.38 cluster with alpha APIs off has
            # no v1alpha3 CompositePodGroups).
            for version in spec.versions or (spec.version,):
                at = dataclasses.replace(spec, version=version)
                resp = client.request("GET", at.path(namespace if spec.namespaced else None), query)
                if resp.status != 404:
                    break
            if resp.status != 200:
                return []
            items = resp.json().get("items") or []
        finally:
            client.close()
    except Exception:  # noqa: BLE001 - completion never fails loudly
        return []
    if pending_only and spec.plural == "pods":  # servers that ignore the field selector
        items = [o for o in items if isinstance(o, dict) and not (o.get("spec") or {}).get("nodeName")]
    return sorted({str((o.get("metadata") or {}).get("name")) for o in items if isinstance(o, dict)} - {"None"})
