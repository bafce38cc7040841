"""A workload of a `whatif -f` file against the PodGroups beside it: which pod template names
which group, the refusals when the gang the file describes is not the one kube-scheduler would
see, and the one line saying how the pods were read. The gang is what the pod templates'
`spec.schedulingGroup.podGroupName` and the file's PodGroup/CompositePodGroup objects say: the
scheduler knows no workload kinds (GangScheduling reads PodGroups only)."""

from __future__ import annotations

from typing import Any, Iterable

from ...errors import UserError
from .workloads import Template, Workload

# Labels a controller sets on its pods (the template does not carry them; workloads.make_pods
# leaves them out): a selector on them would match nothing among our pods.
_CONTROLLER_LABELS = {
    "Job": ("batch.kubernetes.io/", "job-name", "controller-uid"),
    "Deployment": ("pod-template-hash",),
    "ReplicaSet": ("pod-template-hash",),
    "StatefulSet": ("statefulset.kubernetes.io/", "apps.kubernetes.io/pod-index", "controller-revision-hash"),
    "JobSet": ("jobset.sigs.k8s.io/", "batch.kubernetes.io/", "job-name", "controller-uid"),
    "LeaderWorkerSet": ("leaderworkerset.sigs.k8s.io/", "statefulset.kubernetes.io/", "apps.kubernetes.io/pod-index"),
    "PyTorchJob": ("training.kubeflow.org/",),
    "TFJob": ("training.kubeflow.org/",),
    "MPIJob": ("training.kubeflow.org/", "batch.kubernetes.io/", "job-name"),
    "RayCluster": ("ray.io/",),
    "RayJob": ("ray.io/",),
}


def group_of(t: Template) -> str | None:
    sg = (t.template.get("spec") or {}).get("schedulingGroup")
    name = sg.get("podGroupName") if isinstance(sg, dict) else None
    return name if isinstance(name, str) and name else None


def _span(names: list[str]) -> str:
    """NAME-0..N-1 for runs of consecutive indices under one prefix, joined; long lists folded."""
    runs: list[tuple[str, int, int]] = []
    for n in names:
        prefix, _, idx = n.rpartition("-")
        i = int(idx) if idx.isdigit() else None
        if i is not None and runs and runs[-1][0] == prefix and runs[-1][2] == i - 1:
            runs[-1] = (prefix, runs[-1][1], i)
        elif i is not None:
            runs.append((prefix, i, i))
        else:
            runs.append((n, -1, -1))
    parts = [p if a < 0 else (f"{p}-{a}" if a == b else f"{p}-{a}..{b}") for p, a, b in runs]
    return ", ".join(parts) if len(parts) <= 3 else f"{parts[0]}, ... {parts[-1]}"


def describe(w: Workload) -> str:
    """One line: how many pods from which template, how counted, how named (and how the names
    differ from the controller's), what comes later."""
    head = f"{w.kind} {w.namespace}/{w.name}: {w.pods} pod(s)"
    suffix = f" ({w.naming})" if w.naming else ""
    if len(w.templates) == 1 and not w.templates[0].later:
        t = w.templates[0]
        line = f"{head} from its pod template ({t.how}), named {_span(t.names)}{suffix}"
    else:
        parts = [f"{t.label}: none now ({t.later})" if t.later else
                 f"{t.label} {len(t.names)} ({t.how}{', named ' + _span(t.names) if t.names else ''})" for t in w.templates]
        line = f"{head} from {len(w.templates)} pod templates: " + "; ".join(parts) + suffix
    return "; ".join([line] + w.notes)


def _selector_keys(spec: dict[str, Any]) -> Iterable[str]:
    aff = spec.get("affinity") if isinstance(spec.get("affinity"), dict) else {}
    terms: list[Any] = []
    for kind in ("podAffinity", "podAntiAffinity"):
        a = aff.get(kind) if isinstance(aff.get(kind), dict) else {}
        terms += a.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        terms += [t.get("podAffinityTerm") for t in a.get("preferredDuringSchedulingIgnoredDuringExecution") or []
                  if isinstance(t, dict)]
    terms += spec.get("topologySpreadConstraints") or []
    for t in terms:
        if not isinstance(t, dict):
            continue
        sel = t.get("labelSelector") if isinstance(t.get("labelSelector"), dict) else {}
        yield from (sel.get("matchLabels") or {}) if isinstance(sel.get("matchLabels"), dict) else ()
        yield from (e.get("key") for e in sel.get("matchExpressions") or [] if isinstance(e, dict))
        yield from (k for k in t.get("matchLabelKeys") or [] if isinstance(k, str))


def check_labels(w: Workload) -> None:
    """Refuse a template whose pod (anti-)affinity or spread constraint selects on a label only
    its controller sets: without that label our pods would not match it as the real ones do."""
    prefixes = _CONTROLLER_LABELS.get(w.kind, ())
    for t in w.templates:
        for key in _selector_keys(t.template.get("spec") or {}):
            if isinstance(key, str) and key.startswith(prefixes):
                raise UserError(f"the -f file: {w.kind} {w.name}'s {t.label} template selects on label {key} "
                                f"(affinity or topologySpreadConstraints), which its controller sets on the pods: -f does "
                                "not add the controller's labels, so select on a label of the template")


def _names(t: Template) -> str:
    g = group_of(t)
    return f"{t.label} names {'PodGroup ' + g if g else 'no PodGroup'}"


def check_groups(w: Workload, objs: list[dict[str, Any]]) -> None:
    """The gang the file describes must be the one the pods join: with PodGroups in the file, every
    template that creates pods now names one of them, and each of them is named; without any, a
    workload of several pods is refused (each pod would be its own question), as are pods naming a
    PodGroup the file lacks."""
    now = [t for t in w.templates if t.names]
    in_file = {(o.get("metadata") or {}).get("name") for o in objs if o.get("kind") == "PodGroup"
               and ((o.get("metadata") or {}).get("namespace") or "default") == w.namespace}
    cpgs = any(o.get("kind") == "CompositePodGroup" for o in objs)
    pgs_named = sorted(n for n in in_file if n)
    if in_file or cpgs:
        wrong = [t for t in now if group_of(t) not in in_file]
        if wrong and len(w.templates) == 1 and len(in_file) == 1:
            raise UserError(f"the -f file holds PodGroup {pgs_named[0]}, but {w.kind} {w.name}'s pod template does not name it "
                            f"({wrong[0].field}.spec.schedulingGroup.podGroupName): its pods would not be the group's")
        if wrong:
            raise UserError(f"the -f file holds PodGroup(s) {', '.join(pgs_named) or '(none)'}, but in {w.kind} {w.name} "
                            + "; ".join(f"{_names(t)} ({t.field}.spec.schedulingGroup.podGroupName)" for t in wrong)
                            + ": those pods would not be the group's")
        unnamed = sorted(set(pgs_named) - {group_of(t) for t in now})
        if unnamed:
            later = [t for t in w.templates if t.later and group_of(t) in unnamed]
            raise UserError(f"PodGroup {unnamed[0]} in the -f file has no pods: " + "; ".join(_names(t) for t in now)
                            + (f"; {later[0].label} names it but its pods come later ({later[0].later})" if later else "")
                            + f" in {w.kind} {w.name}")
        return
    if w.pods <= 1:
        return
    named = sorted({g for t in now if (g := group_of(t))})
    if len(named) == 1 and all(group_of(t) for t in now):
        raise UserError(f"the workload's pods name PodGroup {named[0]}: put that PodGroup in the -f file too, so the "
                        "gang is analysed as kube-scheduler schedules it")
    if named:
        raise UserError(f"the workload's pods name PodGroups ({'; '.join(_names(t) for t in now)}): put "
                        f"{', '.join(named)} in the -f file too (with the CompositePodGroup above them, if any), so the gang "
                        "is analysed as kube-scheduler schedules it")
    if len(w.templates) == 1:
        raise UserError(f"{w.kind} {w.name} creates {w.pods} pods with no PodGroup: kube-scheduler schedules them one by one, "
                        "each its own question; ask about one (--replicas 1), or add a PodGroup and "
                        f"{w.templates[0].field}.spec.schedulingGroup to make them a gang")
    raise UserError(f"{w.kind} {w.name} creates {w.pods} pods from {len(now)} pod templates with no PodGroup: kube-scheduler "
                    "schedules them one by one, each its own question; add a PodGroup (or a CompositePodGroup tree) and name "
                    "it in each template's spec.schedulingGroup.podGroupName to make them a gang")
