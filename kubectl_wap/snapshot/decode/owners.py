"""What a pod's controller would do after a preemption, read off the raw objects as they stream
past: the controller owner reference (kind, name) and terminationGracePeriodSeconds.

The model keeps neither (nothing in one scheduling cycle reads them); the cycle simulator
(kubectl_wap/simulate) needs them to bring a victim back as a new pending pod and to keep it
terminating for its grace period. Snapshots written by `kubectl wap snapshot` and live reads are
stripped by the allow-list (strip.py keeps no ownerReferences), so only raw dumps (`kubectl get
-o yaml|json`), the demo and hand-written files carry them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from ..io.files import SnapshotItems


@dataclass(slots=True, frozen=True)
class PodExtras:
    owner_kind: str = ""  # the ownerReference with controller: true ("" = none)
    owner_name: str = ""
    grace_seconds: int | None = None  # spec.terminationGracePeriodSeconds (None: not set)


def _extras(obj: dict) -> PodExtras | None:
    md = obj.get("metadata")
    spec = obj.get("spec")
    md = md if isinstance(md, dict) else {}
    spec = spec if isinstance(spec, dict) else {}
    kind = name = ""
    refs = md.get("ownerReferences")
    for ref in refs if isinstance(refs, list) else ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            k, n = ref.get("kind"), ref.get("name")
            if isinstance(k, str) and isinstance(n, str):
                kind, name = k, n
                break
    grace = spec.get("terminationGracePeriodSeconds")
    grace = grace if isinstance(grace, int) and not isinstance(grace, bool) and grace >= 0 else None
    if not kind and grace is None:
        return None
    return PodExtras(kind, name, grace)


def tap_pod_extras(items: Any, into: dict[tuple[str, str], PodExtras]) -> Any:
    """`items`, unchanged, recording each raw Pod's extras in `into` ((namespace, name) ->
    PodExtras) as the loader reads it (a streamed snapshot stays a SnapshotItems: its pod rows,
    which hold no owner, are still converted on the fast path)."""
    if isinstance(items, SnapshotItems):
        src = items
        return SnapshotItems(lambda models: _tap(src.models() if models else iter(src), into))
    return _tap(items, into)


def _tap(items: Iterable[Any], into: dict[tuple[str, str], PodExtras]) -> Iterator[Any]:
    for o in items:
        if isinstance(o, dict) and o.get("kind") == "Pod":
            ex = _extras(o)
            if ex is not None:
                md = o.get("metadata") or {}
                ns, name = md.get("namespace") or "default", md.get("name")
                if isinstance(ns, str) and isinstance(name, str):
                    into[(ns, name)] = ex
        yield o
