"""The version profile in every report's header (issue 15): which Kubernetes release's scheduler
rules the analysis followed, and why that one (cli/profilepick.py)."""

from __future__ import annotations

from typing import Any


def profile_fields(gates: Any) -> dict[str, Any]:
    """JSON fields: `schedulerVersion` ("1.37"), `schedulerVersionSource` (why), and
    `schedulerVersionReleased` (false for a profile of an unreleased version), `schedulerVersionBuild`
    (the upstream build its rules come from: profiles.Profile.upstream_build)."""
    p = gates.profile
    return {"schedulerVersion": p.version, "schedulerVersionSource": gates.profile_source or "default",
            "schedulerVersionReleased": p.released, "schedulerVersionBuild": p.upstream_build}


def profile_line(doc: dict[str, Any]) -> str | None:
    """The text header's line, or None for a document without the fields."""
    v = doc.get("schedulerVersion")
    if not v:
        return None
    build = doc.get("schedulerVersionBuild")
    if doc.get("schedulerVersionReleased", True):
        state = f" (as kube-scheduler {build})" if build else ""
    else:
        state = f" (unreleased: rules read from kube-scheduler {build})" if build else " (unreleased: rules from upstream's development branch)"
    return f"Scheduler rules: Kubernetes {v}{state}, {doc.get('schedulerVersionSource', 'default')}"
