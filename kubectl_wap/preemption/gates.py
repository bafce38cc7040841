"""Feature gates as kube-scheduler spells them (`--feature-gates A=true,B=false`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UserError
from ..model.lookup import did_you_mean
from ..profiles import DEFAULT as DEFAULT_PROFILE
from ..profiles import PROFILES, Profile

# Our defaults (documented in docs/fidelity.md): the v1.37 world with workload scheduling on.
# TopologyAwareWorkloadScheduling defaults to true although upstream's gate is alpha: a PodGroup or
# CompositePodGroup carrying spec.schedulingConstraints only exists when the apiserver gate is on
# (the field is dropped otherwise), so a snapshot that has them comes from a TAS-enabled cluster.
DEFAULTS = {
    "GenericWorkload": True,
    "CompositePodGroup": True,
    "PodGroupPreemptionPolicy": False,
    "TopologyAwareWorkloadScheduling": True,
}
KNOWN = set(DEFAULTS) | {"SchedulerAsyncPreemption", "DRAWorkloadResourceClaims"}


@dataclass(slots=True, frozen=True)
class Gates:
    generic_workload: bool = True
    composite_pod_group: bool = True
    pod_group_preemption_policy: bool = False
    topology_aware_workload_scheduling: bool = True
    # The Kubernetes version whose rules the analysis follows (profiles.py); it travels with the
    # gates because both describe the scheduler being modelled.
    profile: Profile = DEFAULT_PROFILE
    # Why that profile (cli/profilepick.py): "server version v1.37.1", "--scheduler-version", ...
    profile_source: str = ""
    profile_warning: str | None = None  # said when the profile was a guess (no server version)
    # DynamicResources frees the victims' devices in preemption (1.38's DRAPreemption gate; the
    # 1.37 profile has no such gate, so it is off there).
    dra_preemption: bool = False

    def spelled(self) -> str:
        return (
            f"GenericWorkload={str(self.generic_workload).lower()},"
            f"CompositePodGroup={str(self.composite_pod_group).lower()},"
            + ("" if "PodGroupPreemptionPolicy" in self.profile.removed_gates else
               f"PodGroupPreemptionPolicy={str(self.pod_group_preemption_policy).lower()},") +
            f"TopologyAwareWorkloadScheduling={str(self.topology_aware_workload_scheduling).lower()}"
            + (",DRAPreemption=true" if self.dra_preemption else "")
        )


def parse_gates(text: str | None, profile: Profile = DEFAULT_PROFILE, profile_source: str = "",
                profile_warning: str | None = None) -> Gates:
    """Our defaults (DEFAULTS) over the profile's release defaults, then the user's values. Gates
    that only some releases have are refused under a profile without them."""
    values = dict(profile.gate_defaults)
    values.update(DEFAULTS)
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise UserError(f"invalid --feature-gates entry {part!r}: want NAME=true|false")
        k, v = (x.strip() for x in part.split("=", 1))
        known = (KNOWN - set(profile.removed_gates)) | set(profile.gate_defaults)
        if k in profile.removed_gates:
            raise UserError(f"feature gate {k!r} does not exist in Kubernetes {profile.version} ({profile.removed_gates[k]}); "
                            "see --scheduler-version")
        if k not in known:
            elsewhere = [ver for ver, p in PROFILES.items() if k in p.gate_defaults]
            if elsewhere:
                raise UserError(f"feature gate {k!r} does not exist in Kubernetes {profile.version} (it does in {', '.join(elsewhere)}: "
                                "see --scheduler-version)")
            raise UserError(f"unknown feature gate {k!r}{did_you_mean(k, known)} (known: {', '.join(sorted(known))})")
        if v.lower() not in ("true", "false"):
            raise UserError(f"invalid value {v!r} for feature gate {k}: want true or false")
        values[k] = v.lower() == "true"
    return Gates(
        values["GenericWorkload"],
        values["CompositePodGroup"],
        values["PodGroupPreemptionPolicy"],
        values["TopologyAwareWorkloadScheduling"],
        profile,
        profile_source,
        profile_warning,
        values.get("DRAPreemption", False),
    )
