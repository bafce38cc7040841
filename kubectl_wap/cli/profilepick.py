"""Which version profile an analysis runs under (issue 15): `--scheduler-version` when given,
otherwise the server's version (live: /version; snapshot: its header), otherwise the newest
released profile with a warning. A profile of an unreleased version is picked for its servers only
when its rules were read from an upstream build of that version (`Profile.upstream_build`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UserError
from ..profiles import DEFAULT, PROFILES, Profile

_MINOR = re.compile(r"^v?(\d+)\.(\d+)(?:[.+-].*)?$")


@dataclass(frozen=True, slots=True)
class Picked:
    profile: Profile
    source: str                 # why this profile: shown next to the version in every report
    warning: str | None = None  # said with the report's warnings


def _minor(text: str) -> tuple[int, int] | None:
    m = _MINOR.match(text.strip())
    return (int(m[1]), int(m[2])) if m else None


def _released() -> list[Profile]:
    return sorted((p for p in PROFILES.values() if p.released), key=lambda p: _minor(p.version) or (0, 0))


def parse_scheduler_version(text: str | None, flag: str = "--scheduler-version") -> Profile | None:
    """The profile `--scheduler-version` names (1.38, v1.38 and 1.38.2 all name 1.38), or None
    when the flag is absent. Unknown: one line naming the closest profile."""
    if text is None:
        return None
    mm = _minor(text)
    key = f"{mm[0]}.{mm[1]}" if mm else text.strip()
    if key in PROFILES:
        return PROFILES[key]
    known = ", ".join(PROFILES)
    if mm:
        closest = min(PROFILES, key=lambda v: (abs(((_minor(v) or (0, 0))[0] - mm[0]) * 1000 + (_minor(v) or (0, 0))[1] - mm[1]), v))
    else:
        import difflib

        closest = (difflib.get_close_matches(text.strip(), list(PROFILES), n=1, cutoff=0.0) or [DEFAULT.version])[0]
    raise UserError(f"unknown {flag} {text!r}: known versions are {known} (did you mean {closest}?)")


def pick_profile(requested: Profile | None, server_version: str) -> Picked:
    """The profile for an input whose server reported `server_version` ("" when unknown)."""
    if requested is not None:
        return Picked(requested, "--scheduler-version")
    mm = _minor(server_version) if server_version else None
    if mm is None:
        shown = f"unreadable server version {server_version!r}" if server_version else "no server version"
        return Picked(DEFAULT, f"default: {shown} in the input",
                      f"the input carries {shown}: analyzing with Kubernetes {DEFAULT.version} rules (the newest released); "
                      "pass --scheduler-version to choose")
    key = f"{mm[0]}.{mm[1]}"
    p = PROFILES.get(key)
    if p is not None and p.released:
        return Picked(p, f"server version {server_version}")
    if p is not None and p.upstream_build:
        # Issue 29: a server of a version whose profile was read from an upstream pre-release
        # (1.38 from v1.38.0-beta.0) gets that profile: its rules are much closer to what the
        # server runs than the previous release's. The report says which build they come from.
        return Picked(p, f"server version {server_version}",
                      f"the server runs {server_version}: analyzing with Kubernetes {key} rules read from kube-scheduler "
                      f"{p.upstream_build} (not yet released; pass --scheduler-version to choose another)")
    released = _released()
    newest, oldest = released[-1], released[0]
    if p is not None or mm > (_minor(newest.version) or (0, 0)):
        extra = f" (pass --scheduler-version {key} for its development-branch rules)" if p is not None else ""
        why = f"its {key} profile is unreleased" if p is not None else "no profile that new"
        return Picked(newest, f"newest released: server version {server_version}, {why}",
                      f"the server runs {server_version}, newer than the newest released rules we model: analyzing with "
                      f"Kubernetes {newest.version} rules{extra}")
    return Picked(oldest, f"oldest profile: server version {server_version} is older",
                  f"the server runs {server_version}, older than the rules we model: analyzing with Kubernetes "
                  f"{oldest.version} rules (workload-aware preemption differs in older releases)")
