"""Input errors that help (issue 16): names, namespaces, PriorityClasses and resources the
snapshot does not hold are UserErrors (exit 2) naming the closest valid values, checked before the
engine runs so a typo never turns into a verdict. A dump that lacks Nodes or Pods is one line
saying which `kubectl get` resource to add. Pure functions over the model."""

from __future__ import annotations

import difflib
from typing import Iterable

from ..errors import UserError
from ..model import Snapshot

_API_GROUP = {"PodGroup": "podgroups.scheduling.k8s.io", "CompositePodGroup": "compositepodgroups.scheduling.k8s.io"}
_KINDS = {"podgroup": "PodGroup", "pg": "PodGroup", "podgroups": "PodGroup",
          "compositepodgroup": "CompositePodGroup", "cpg": "CompositePodGroup", "compositepodgroups": "CompositePodGroup",
          "pod": "Pod", "po": "Pod", "pods": "Pod"}
KIND_WORDS = ["podgroup", "compositepodgroup", "pod"]
# Resources every node has (NodeResourcesFit reads them whether or not allocatable lists them).
_NATIVE = {"cpu", "memory", "ephemeral-storage", "pods"}
# The two classes every API server has (the admission plugin creates them).
SYSTEM_CLASSES = {"system-cluster-critical", "system-node-critical"}


def did_you_mean(word: str, choices: Iterable[str], n: int = 3) -> str:
    """" (did you mean X?)" with the closest choices, or ""."""
    names = sorted(set(choices))
    # A domain-qualified name whose last part is the word first ("gpu" -> "nvidia.com/gpu").
    close = [c for c in names if "/" in c and c.rsplit("/", 1)[1] == word]
    close += [c for c in difflib.get_close_matches(word, names, n=n, cutoff=0.6) if c not in close]
    close = close[:n]
    if not close:
        return ""
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)"


def available(choices: Iterable[str], limit: int = 8) -> str:
    names = sorted(set(choices))
    if not names:
        return "none"
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def kind_of(word: str) -> str:
    k = _KINDS.get(word.lower())
    if k is None:
        raise UserError(f"unknown kind {word!r}{did_you_mean(word.lower(), KIND_WORDS)}: want {', '.join(KIND_WORDS)}")
    return k


def split_type_name(kind: str | None, name: str | None) -> tuple[str | None, str | None]:
    """kubectl's TYPE/NAME form: `podgroup/job-1` is `podgroup job-1`."""
    if kind and "/" in kind and name is None:
        k, _, n = kind.partition("/")
        if not k or not n:
            raise UserError(f"invalid TYPE/NAME {kind!r}: want e.g. podgroup/job-1")
        return k, n
    if kind and "/" in kind:
        raise UserError(f"there is no need to specify a name after TYPE/NAME {kind!r}")
    return kind, name


def namespaces(snap: Snapshot, ignore: frozenset[tuple[str, str]] = frozenset()) -> set[str]:
    """Namespaces the snapshot knows: Namespace objects and those of its objects, except the
    (namespace, name) objects in `ignore` (hypothetical work must not vouch for its own)."""
    out = {n.name for n in snap.namespaces}
    for objs in (snap.pods, snap.pod_groups, snap.composite_pod_groups):
        out.update(o.namespace for o in objs if (o.namespace, o.name) not in ignore)
    return out


def check_cluster(snap: Snapshot, need_pods: bool = True) -> None:
    """A dump without Nodes (or without Pods, when an existing object is asked about) cannot
    answer anything: say what to add, once (instead of a warning per dangling reference)."""
    if not snap.nodes:
        raise UserError(
            "the snapshot holds no Nodes: add `nodes` to the dump (kubectl get nodes,pods,priorityclasses,"
            "poddisruptionbudgets,podgroups,compositepodgroups -A -o json > dump.json)"
        )
    if need_pods and not snap.pods:
        raise UserError("the snapshot holds no Pods: add `pods` to the dump (kubectl get nodes,pods,... -A -o json > dump.json)")


def namespace_near_miss(snap: Snapshot, namespace: str) -> str | None:
    """A warning for a namespace filter that matches nothing because of a typo (`-n researc`), or
    None. Only a near miss: an empty namespace (default) is absent from a snapshot that holds no
    Namespace objects, and filtering on it is no mistake."""
    known = namespaces(snap)
    if namespace in known or not (hint := did_you_mean(namespace, known)):
        return None
    return f'no object of the cluster is in namespace "{namespace}"{hint}'


def check_namespace(snap: Snapshot, namespace: str, ignore: frozenset[tuple[str, str]] = frozenset()) -> None:
    known = namespaces(snap, ignore)
    if namespace not in known:
        raise UserError(f'namespace "{namespace}" not found{did_you_mean(namespace, known)}; namespaces: {available(known)}')


def check_object(snap: Snapshot, kind: str, namespace: str, name: str) -> None:
    """The pending object exists; else a not-found error naming the unserved API group, the
    closest names in the namespace, and the namespaces where that name exists."""
    k = kind_of(kind)
    if k == "Pod":
        objs = [(p.namespace, p.name) for p in snap.pods]
    elif k == "PodGroup":
        objs = [(g.namespace, g.name) for g in snap.pod_groups]
    else:
        objs = [(g.namespace, g.name) for g in snap.composite_pod_groups]
    if (namespace, name) in objs:
        return
    msg = f'{k.lower()} "{name}" not found in namespace "{namespace}"'
    group = _API_GROUP.get(k)
    if group and group in snap.header.not_served:
        raise UserError(f"{msg}: the API server does not serve {group} (is the {k} API enabled?)")
    if group and not objs:
        raise UserError(f"{msg}: the snapshot holds no {k}s (a dump needs `{group.split('.')[0]}` in its kubectl get list)")
    elsewhere = sorted(f"{ns}/{n}" for ns, n in objs if n == name)
    if elsewhere:
        raise UserError(f"{msg} (found as {', '.join(elsewhere[:3])}: use -n)")
    check_namespace(snap, namespace)
    same_ns = [n for ns, n in objs if ns == namespace]
    hint = did_you_mean(name, same_ns)
    raise UserError(f"{msg}{hint}; {k.lower()}s in {namespace}: {available(same_ns)}")


def check_hypothetical(snap: Snapshot, priority_class: str | None, requests: dict[str, str], namespace: str,
                       hypothetical: frozenset[tuple[str, str]] = frozenset()) -> None:
    """Flags of hypothetical work name things that exist: a PriorityClass, resources some node
    offers, a namespace (so a typo is an error, not an Invalid or Unschedulable verdict)."""
    if priority_class:
        classes = {c.name for c in snap.priority_classes} | SYSTEM_CLASSES
        if priority_class not in classes:
            raise UserError(
                f'PriorityClass "{priority_class}" not found{did_you_mean(priority_class, classes)}; '
                f"PriorityClasses: {available(classes - SYSTEM_CLASSES)}"
            )
    offered = set(_NATIVE)
    for n in snap.nodes:
        offered.update(k for k, v in n.allocatable.items() if v)
    for r in requests:
        if r not in offered and not r.startswith("hugepages-"):
            raise UserError(
                f'no node offers resource "{r}"{did_you_mean(r, offered)}; resources: {available(offered, 12)}'
            )
    check_namespace(snap, namespace, hypothetical)
