"""A `whatif -f FILE` question as an oracle case: the objects our `from_manifest` expands the file
to (a workload becomes the pods its controller would create), added to the cluster's items the way
the CLI adds them (`kubectl_wap/cli/inputs.py _load`: hypothetical work replaces what it names), then
given the priorities that Priority admission would give them, since the oracle's API server runs
without that plugin (tests/oracle/README.md: pods and groups carry their resolved spec.priority)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

# plugin/pkg/admission/priority: the two system classes every cluster has
_SYSTEM = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}


def _admit(objs: list[dict], items: list[dict]) -> None:
    """Priority admission (plugin/pkg/admission/priority Admit, getDefaultPriority) on raw objects
    without spec.priority: the named class's value, else the globalDefault class's (the lowest
    when several), else 0; a pod also takes the class's preemptionPolicy when it sets none. A
    PodGroup/CompositePodGroup gets the value only, as our admission.py does (its UPSTREAM-DIFF:
    the policy is copied only with PodGroupPreemptionPolicy on)."""
    classes = {(o.get("metadata") or {}).get("name"): o for o in items if o.get("kind") == "PriorityClass"}
    defaults = sorted((o for o in classes.values() if o.get("globalDefault")), key=lambda o: (o.get("value", 0), o["metadata"]["name"]))
    for o in objs:
        spec = o.setdefault("spec", {})
        if o.get("kind") not in ("Pod", "PodGroup", "CompositePodGroup") or spec.get("priority") is not None:
            continue
        name = spec.get("priorityClassName") or ""
        pc = classes.get(name) if name else (defaults[0] if defaults else None)
        if name and pc is None and name not in _SYSTEM:
            raise ValueError(f"no PriorityClass with name {name} was found")
        spec["priority"] = _SYSTEM[name] if name in _SYSTEM else (pc or {}).get("value", 0)
        if o["kind"] == "Pod" and pc is not None and pc.get("preemptionPolicy") and not spec.get("preemptionPolicy"):
            spec["preemptionPolicy"] = pc["preemptionPolicy"]


def manifest_work(items: list[dict], path: str | Path, namespace: str | None = None
                  ) -> tuple[list[dict], list[dict], str, str, str]:
    """(the cluster items the file's work does not replace, the file's objects, kind, namespace,
    name) for `whatif -f path`."""
    from kubectl_wap.snapshot.io.files import load_items
    from kubectl_wap.snapshot.decode.hypothetical import Replacement, from_manifest

    _, raw = load_items(Path(path))
    objs, kind, ns, name = from_manifest([copy.deepcopy(o) for o in raw], None, namespace)
    _admit(objs, items)
    keep = Replacement(objs).keep
    return [o for o in items if keep(o)], objs, kind, ns, name


def manifest_items(items: list[dict], path: str | Path, namespace: str | None = None) -> tuple[list[dict], str, str, str]:
    """(cluster items with the file's work in, kind, namespace, name) for `whatif -f path`: what the
    oracle creates (its API server admits the new pods itself)."""
    cluster, objs, kind, ns, name = manifest_work(items, path, namespace)
    return cluster + objs, kind, ns, name


EXAMPLES = Path(__file__).resolve().parent.parent.parent / "docs" / "examples"


def example_manifests() -> list[Path]:
    """The docs/examples manifests that hold a workload or a group to ask about (whatif -f) on the
    default demo, not the cluster dumps and simulate inputs beside them, nor a Job sent to a Kueue
    queue (its question is asked of the Kueue demo: docs/kueue.md, tests/test_demo_kueue.py)."""
    import yaml

    out = []
    for p in sorted(EXAMPLES.glob("*.yaml")):
        docs: list[Any] = [d for d in yaml.safe_load_all(p.read_text()) if isinstance(d, dict)]
        queued = any("kueue.x-k8s.io/queue-name" in ((d.get("metadata") or {}).get("labels") or {}) for d in docs)
        if docs and not queued and all(d.get("kind") not in ("List", "Node") for d in docs):
            out.append(p)
    return out
