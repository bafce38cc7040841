"""Kubernetes version profiles: the scheduler rules that changed between releases, as data.

Code asks the profile (`profile.victim_aware_placement`), never the version number. The analysis
runs under one profile, passed down from the CLI with the feature gates (`preemption/gates.py
Gates.profile`). This module imports nothing of ours, so every layer may read it.

* **1.37** is what kube-scheduler v1.37.2 does: read in its source
  (k8s.io/kubernetes@v1.37.2) and measured by the oracle (tests/oracle/, the real scheduler built
  from that module).
* **1.38** follows upstream's development branch (../shared/docs/upstream-changes.md, cited by
  section below): used only when asked for (`--scheduler-version 1.38`), since it is not released.

Rules that are the same in both (checked in the v1.37.2 source, so not profile fields): the
ongoing-preemption short circuit returns Success with the current nominations
(podgrouppreemption.go `Preempt`), the nominated-node rules of upstream-changes.md D16 (v1.37.2's
test/integration/scheduler/nominated_node_name has the same cases), PodGroupPostFilter only on a
root status of Unschedulable, binding before preemption.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Mapping


@dataclass(frozen=True, slots=True)
class Profile:
    version: str
    released: bool
    # Upstream's release defaults of the scheduler feature gates the release has (pkg/features/
    # kube_features.go). A gate missing here does not exist in that release (--feature-gates
    # refuses it). Our own analysis defaults for the workload gates (preemption/gates.py
    # DEFAULTS: workload scheduling on) apply on top, in every profile.
    gate_defaults: Mapping[str, bool] = field(default_factory=dict)
    # preemption/util.go FilterVictimsWithPDBViolation. v1.37.2: `if len(pod.Labels) == 0
    # { return false }` and "A PDB with a nil or empty selector matches nothing"
    # (`selector.Empty()` skips the PDB). PR #141785 (development branch, after 1.37): `{}`
    # selects every pod of the namespace, unlabeled pods included; only nil matches nothing.
    pdb_empty_selector_matches_all: bool = False
    pdb_unlabeled_pods_can_violate: bool = False
    # schedule_one_podgroup.go validatePodGroup. v1.37.2: the pods of the hierarchy against the
    # root group ("all pods in a single pod group ..."), non-root groups not checked. Development
    # branch (upstream-changes.md D4): validatePodGroupHierarchy also checks every (composite)
    # pod group's priority and (gate on) preemption policy against the root, and the strings name
    # the objects ("... in a pod group hierarchy ..., got %d (%q) and %d (%q)").
    validate_hierarchy: bool = False
    # The fit error when a pod-group cycle "succeeds" with no pod placed. v1.37.2
    # schedule_one_podgroup.go errPodGroupUnschedulable; development branch algorithm_podgroup.go
    # RunRootSchedulingAlgorithm (upstream-changes.md D3).
    no_pods_schedulable_message: str = "pod group is unschedulable"
    # Node choice inside the WAP scheduling simulation prefers nodes whose placement needs the
    # cheapest new victims, before the Score plugins (upstream-changes.md 1.3). v1.37.2's
    # selectVictimsOnDomain schedules on the cluster with every potential victim removed and
    # nothing reads victims.
    victim_aware_placement: bool = False
    # Reprieval of WAP victims. v1.37.2 selectVictimsOnDomain: put the unit back and replay every
    # assignment with the full Filter ("full-replay"). Development branch (D6, D7): Phase 1
    # node-local Filters on the victim's nodes, Phase 2 PreFilterExtensions + cross-node Filters,
    # after the manager's ReprieveFilter agrees ("two-phase"). Upstream documents both as giving
    # the same verdicts and the default ReprieveFilter attempts every victim, so the victims are the
    # same; the profile names the procedure for the explanation.
    reprieval: Literal["full-replay", "two-phase"] = "full-replay"
    reprieve_filter: bool = False

    @property
    def dra_preemption_gate(self) -> bool:
        """Whether the release has the DRAPreemption gate (DynamicResources frees the victims'
        devices during preemption). v1.37.2's DynamicResources has no PreFilterExtensions."""
        return "DRAPreemption" in self.gate_defaults


# v1.37.2 pkg/features/kube_features.go, the last entry of each gate's versioned spec.
_GATES_1_37 = {
    "ClearingNominatedNodeNameAfterBinding": True,   # beta since 1.35
    "SchedulerAsyncAPICalls": False,                 # beta, off, since 1.34
    "SchedulerAsyncPreemption": True,                # beta since 1.33
    "NominatedNodeNameForExpectation": True,         # beta since 1.35
    "PodLevelResources": True,                       # beta since 1.34
    "GenericWorkload": False,                        # beta, off, in 1.37
    "CompositePodGroup": False,                      # alpha 1.37
    "PodGroupPreemptionPolicy": False,               # alpha 1.37
    "TopologyAwareWorkloadScheduling": False,        # alpha 1.36
    "DRAWorkloadResourceClaims": False,              # beta, off, in 1.37
}

V1_37 = Profile("1.37", released=True, gate_defaults=_GATES_1_37)

# UPSTREAM-DIFF: 1.38 is not released; its rules come from upstream's newest code and tests
# (upstream-changes.md), not from a released scheduler. Gates: DRAPreemption is new (D15); that
# it is on by default is inferred from the DRA integration test that turns it off to show the
# difference ("preemption fails for direct claims when the DRAPreemption feature gate is
# disabled"). No newer kube_features.go was read, so every other gate keeps its 1.37 default.
_GATES_1_38 = dict(_GATES_1_37, DRAPreemption=True)

V1_38 = Profile(
    "1.38",
    released=False,
    gate_defaults=_GATES_1_38,
    pdb_empty_selector_matches_all=True,      # section 3, PR #141785
    pdb_unlabeled_pods_can_violate=True,      # section 3, PR #141785
    validate_hierarchy=True,                  # D4
    no_pods_schedulable_message="no pods were schedulable",  # D3
    # UPSTREAM-DIFF: inferred from upstream's integration tests (section 1.2); the implementing
    # code was not found. Section 1.3's smallest rule.
    victim_aware_placement=True,
    reprieval="two-phase",                    # D6
    reprieve_filter=True,                     # D7
)

PROFILES: Mapping[str, Profile] = {p.version: p for p in (V1_37, V1_38)}
# The newest released version's profile: what a snapshot without a server version gets.
DEFAULT = V1_37
