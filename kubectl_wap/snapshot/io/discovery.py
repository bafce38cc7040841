"""Which API version to read each resource at, from the server's discovery documents.

Kubernetes serves the workload objects at several versions at once, and not the same ones in every
release: v1.37 serves PodGroup at scheduling.k8s.io/v1beta1 and CompositePodGroup only at
v1alpha3; v1.38 serves both at v1beta1 (and still at v1alpha3, when alpha APIs are on). A
capture that asks for one fixed version silently misses the objects of a cluster that does not
serve it. So, per group, we read `/apis/GROUP` (the versions served) and `/apis/GROUP/VERSION`
(the resources each serves) and list every resource at the most stable version that serves it,
among the versions whose object shape we read (`ResourceSpec.versions`): for the scheduling group
v1 > v1beta1 > v1alpha3 (their PodGroup and CompositePodGroup specs have the same fields in
k8s.io/api v0.38.0-beta.0; v1 is assumed to keep them). resource.k8s.io is read at v1 only: its
beta shapes differ (a v1beta1 request has no `exactly`), and reading them as v1 would answer a
different question. A version served only outside that list is named in a warning.

Discovery is best effort: when a group's document cannot be read (403, an old or partial
server), the resource's default version is listed as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Protocol

_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(v: str) -> tuple[int, int, int]:
    """Kubernetes' version priority (apimachinery version.CompareKubeAwareVersionStrings): GA
    before beta before alpha, higher numbers first. Sorting ascending by this key puts the most
    stable first; names that are not Kubernetes versions sort last."""
    m = _VERSION.match(v)
    if not m:
        return (3, 0, 0)
    major, stage, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    return ({None: 0, "beta": 1, "alpha": 2}[stage], -major, -minor)


class _Response(Protocol):
    status: int

    def json(self) -> Any: ...


@dataclass(frozen=True, slots=True)
class Served:
    """What discovery found for one group: version -> resource plurals it serves."""
    group: str
    resources: dict[str, frozenset[str]]

    def versions_of(self, plural: str) -> list[str]:
        return sorted((v for v, rs in self.resources.items() if plural in rs), key=version_priority)


def discover(get: Callable[[str], _Response], group: str) -> Served | None:
    """The group's served versions and their resources, or None when the server does not tell
    (any answer but 200 on /apis/GROUP, or a document of another shape). A group the server does
    not serve at all answers 404: that is None too, and the listing itself reports it."""
    resp = get(f"/apis/{group}")
    if resp.status != 200:
        return None
    try:
        doc = resp.json()
        versions = [str(v["version"]) for v in doc.get("versions") or []]
    except (ValueError, AttributeError, KeyError, TypeError):
        return None
    out: dict[str, frozenset[str]] = {}
    for v in versions:
        r = get(f"/apis/{group}/{v}")
        if r.status != 200:
            continue
        try:
            names = frozenset(str(x["name"]) for x in r.json().get("resources") or [] if "/" not in str(x.get("name", "")))
        except (ValueError, AttributeError, KeyError, TypeError):
            continue
        out[v] = names
    return Served(group, out)


def choose(spec: Any, served: Served | None) -> tuple[Any, str | None]:
    """(the spec at the version to list, a warning or None). Without discovery, or when no
    version serves the resource, the spec is kept as it is (the listing then records 404)."""
    if served is None:
        return spec, None
    serving = served.versions_of(spec.plural)
    readable = [v for v in serving if v in (spec.versions or (spec.version,))]
    if readable:
        return (spec if readable[0] == spec.version else replace(spec, version=readable[0])), None
    if serving:
        return spec, (f"{spec.name} is served only at {', '.join(f'{spec.group}/{v}' for v in serving)}, which kubectl-wap "
                      f"does not read (it reads {', '.join(f'{spec.group}/{v}' for v in (spec.versions or (spec.version,)))})")
    return spec, None


def resolve(specs: Iterable[Any], get: Callable[[str], _Response]) -> tuple[list[Any], list[str]]:
    """Every spec at the version to list it at (one discovery per group), and the warnings."""
    cache: dict[str, Served | None] = {}
    out, warnings = [], []
    unread: dict[str, set[str]] = {}  # if_served groups served only at versions we do not read
    for spec in specs:
        if not spec.versions:  # a resource read at its one version: no discovery needed
            out.append(spec)
            continue
        if spec.group not in cache:
            cache[spec.group] = discover(get, spec.group)
        served = cache[spec.group]
        if getattr(spec, "if_served", False):
            # An add-on's API (Kueue): listed only when served at a version we read; absent (or
            # discovery unreadable), nothing is said; served elsewhere, one line for the group.
            serving = served.versions_of(spec.plural) if served is not None else []
            if not serving:
                continue
            if not any(v in spec.versions for v in serving):
                unread.setdefault(spec.group, set()).update(serving)
                continue
        chosen, warn = choose(spec, served)
        out.append(chosen)
        if warn:
            warnings.append(warn)
    for group, versions in unread.items():
        wanted = sorted({v for s in specs if s.group == group for v in s.versions}, key=version_priority)
        warnings.append(f"{group} is served only at {', '.join(f'{group}/{v}' for v in sorted(versions, key=version_priority))}, "
                        f"which kubectl-wap does not read (it reads {', '.join(f'{group}/{v}' for v in wanted)}): its "
                        "objects are not captured")
    return out, warnings
