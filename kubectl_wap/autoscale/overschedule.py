"""Armada's overscheduling admission check and the per-pod "does any template fit" test.

Overscheduling (armada-overscheduling-proposal): a job may be admitted although the cluster
lacks room when ``jobResources <= largest(nodeResources) * multiplier``. Node shapes are
multi-dimensional, so "largest" is the set of maximal (Pareto-undominated) template shapes; the
job passes if some maximal shape times the multiplier covers it in every resource it requests.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Mapping

from ..errors import UserError
from ..framework.plugins.selectors import node_matches_pod_node_affinity, tolerates_taint
from ..model import Pod
from .templates import Template


def job_resources(pods: Iterable[Pod]) -> dict[str, int]:
    total: dict[str, int] = {}
    for p in pods:
        for r, v in p.requests.items():
            total[r] = total.get(r, 0) + v
    total = {r: v for r, v in total.items() if v > 0}
    return total


def _dominates(a: Mapping[str, int], b: Mapping[str, int], dims: Iterable[str]) -> bool:
    """a >= b everywhere and > somewhere."""
    ge = all(a.get(d, 0) >= b.get(d, 0) for d in dims)
    return ge and any(a.get(d, 0) > b.get(d, 0) for d in dims)


def largest_shapes(templates: list[Template], dims: Iterable[str] | None = None) -> list[dict[str, int]]:
    """Maximal template shapes (duplicates folded), compared on `dims` (default: every resource
    any template has, except pods)."""
    if dims is None:
        dims = sorted({r for t in templates for r in t.allocatable if r != "pods"})
    dims = list(dims)
    shapes: list[dict[str, int]] = []
    for t in templates:
        s = {d: int(t.allocatable.get(d, 0)) for d in dims}
        if s not in shapes:
            shapes.append(s)
    return [s for s in shapes if not any(_dominates(o, s, dims) for o in shapes)]


def parse_multiplier(m: float | str | None) -> Fraction | None:
    if m is None:
        return None
    try:
        f = Fraction(str(m))
    except (ValueError, ZeroDivisionError):
        raise UserError(f"invalid overschedule multiplier {m!r}: want a positive number such as 1.5") from None
    if f <= 0:
        raise UserError(f"invalid overschedule multiplier {m!r}: must be greater than 0")
    return f


def overschedule_check(pods: list[Pod], templates: list[Template], multiplier: float | str | None) -> dict | None:
    m = parse_multiplier(multiplier)
    if m is None:
        return None
    job = job_resources(pods)
    dims = sorted({r for t in templates for r in t.allocatable if r != "pods"} | set(job))
    shapes = largest_shapes(templates, dims)
    covering = [s for s in shapes if all(v <= s.get(r, 0) * m for r, v in job.items())]
    return {
        "multiplier": float(m) if m.denominator != 1 else int(m),
        "admitted": bool(covering),
        "jobResources": job,
        "largestShapes": shapes,
        "coveringShapes": covering,
    }


def template_fit(pod: Pod, t: Template) -> str | None:
    """None when the pod fits an empty node of template `t` on its own, else why not."""
    node = t.node(1)
    for taint in node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not tolerates_taint(pod.tolerations, taint):
            return f"untolerated taint {taint.key}={taint.value}:{taint.effect}"
    if not node_matches_pod_node_affinity(pod, node):
        return "node selector/affinity does not match the template's labels"
    if node.allocatable.get("pods", 0) < 1:
        return "template allows no pods"
    short = [r for r, v in pod.requests.items() if v > 0 and v > node.allocatable.get(r, 0)]
    if short:
        return "requests exceed allocatable: " + ", ".join(sorted(short))
    return None


def pods_fitting_no_template(pods: list[Pod], templates: list[Template]) -> list[tuple[Pod, dict[str, str]]]:
    out = []
    for p in pods:
        why = {t.name: template_fit(p, t) for t in templates}
        if all(w is not None for w in why.values()):
            out.append((p, why))
    return out
