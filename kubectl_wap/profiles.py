"""Kubernetes version profiles: the scheduler rules that changed between releases, as data.

Code asks the profile (`profile.victim_aware_placement`), never the version number. The analysis
runs under one profile, passed down from the CLI with the feature gates (`preemption/gates.py
Gates.profile`). This module imports nothing of ours, so every layer may read it.

* **1.37** is what kube-scheduler v1.37.2 does: read in its source
  (k8s.io/kubernetes@v1.37.2) and measured by the oracle (tests/oracle/, the real scheduler built
  from that module).
* **1.38** is read in the source of k8s.io/kubernetes@v1.38.0-beta.0 (each rule cites the function),
  with the older readings of upstream's development branch (../shared/docs/upstream-changes.md,
  cited by section) where the beta's source agrees; picked for servers of 1.38 (beta, rc,
  release) and by `--scheduler-version 1.38`. Spot-measured only: 25 generated clusters against
  the v1.38.0-beta.0 oracle (tests/oracle/v1.38/README.md), not yet a batch in CI.

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
    # (`selector.Empty()` skips the PDB). PR #141785, in v1.38.0-beta.0's util.go (read): no label
    # check, `metav1.LabelSelectorAsSelector`, so `{}` selects every pod of the namespace,
    # unlabeled pods included, and only nil (labels.Nothing) matches nothing.
    pdb_empty_selector_matches_all: bool = False
    pdb_unlabeled_pods_can_violate: bool = False
    # schedule_one_podgroup.go validatePodGroup. v1.37.2: the pods of the hierarchy against the
    # root group ("all pods in a single pod group ..."), non-root groups not checked.
    # v1.38.0-beta.0 validatePodGroupHierarchy (read; preemption/validation.py): every group below
    # the root (workload, priority, preemption policy, gang parent/basic child, All parent/Single
    # child, depth) and every pod, with strings that name the objects by EntityKey.
    validate_hierarchy: bool = False
    # The fit error when a pod-group cycle "succeeds" with no pod placed. v1.37.2
    # schedule_one_podgroup.go errPodGroupUnschedulable; development branch algorithm_podgroup.go
    # RunRootSchedulingAlgorithm (upstream-changes.md D3).
    no_pods_schedulable_message: str = "pod group is unschedulable"
    # Node choice inside the WAP scheduling simulation: only the feasible nodes whose surviving
    # potential victims cost least (CompareVictimSets) reach the Score plugins, and the node
    # chosen condemns them (v1.38.0-beta.0 DefaultPreemption RankNodes/Reserve). v1.37.2's
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
    # The priority and kind of a victim unit built from a group's pod. v1.37.2 types.go
    # NewPodVictim / getPodPriority: the root group's priority, and a single group pod ranks as a
    # PodGroup. v1.38.0-beta.0 victims.go getCrossNodesVictims + types.go NewPodVictim / NewVictim:
    # the pod's own spec.priority, and a single pod is of the Pod kind.
    victims_keep_pod_priority: bool = False
    # Whether the pods a failed child group of a CompositePodGroup had placed one by one are kept
    # as proposed assignments of the WAP simulation (framework/podgroup.py GroupResult.leaked).
    # v1.37.2: yes (found and measured by the 1.37 oracle batch). v1.38.0-beta.0: no, measured by
    # the 1.38 oracle on tests/oracle/v1.38/cases (gen-7-20, gen-7-34: the beta nominates only the
    # pods of the children that fit); the beta replaced GangScheduling's Permit step with
    # PlacementFeasible (#141182, #141314). The code path was not read line by line.
    failed_child_pods_proposed: bool = True
    # Where the WAP preemptor's policy comes from. v1.37.2 podGroupPreemptor: the
    # PodGroupPreemptionPolicy gate picks the root's spec.preemptionPolicy (on) or the pods' Never
    # (off). v1.38.0-beta.0 manager.go getPreemptionPolicy: the root's policy when set, else the
    # pods' (no gate).
    preemption_policy_gated: bool = True
    # API validation of PodGroup / CompositePodGroup creation refuses `disruptionMode: all` unless
    # the scheduling policy is gang (v1.38.0-beta.0 pkg/apis/scheduling/validation
    # nonGangDisruptionModeAllErrorMsg; not in v1.37.2). Such a group stored before an upgrade
    # stays, and the scheduler reads its mode as All: the analysis warns and keeps it.
    all_mode_requires_gang: bool = False
    # Gates of an earlier release this one removed, with the behaviour it kept: --feature-gates
    # refuses them under this profile (gates.py).
    removed_gates: Mapping[str, str] = field(default_factory=dict)
    # The upstream build this profile's rules were read from (1.37: and measured against by the
    # oracle in CI), stated in reports (docs/versions.md).
    upstream_build: str = ""

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

V1_37 = Profile("1.37", released=True, gate_defaults=_GATES_1_37, upstream_build="v1.37.2")

# v1.38.0-beta.0 pkg/features/kube_features.go, the last entry of each gate's versioned spec
# (read; docs/versions.md "Feature gates in v1.38.0-beta.0"). PodGroupPreemptionPolicy is removed
# (the scheduler always honours a group's preemption policy: preemption/manager.go
# getPreemptionPolicy); there is no DRAPreemption gate (DynamicResources.PreFilterExtensions
# returns nil: preemption frees no device), although the development branch once had one (D15).
_GATES_1_38 = {
    "ClearingNominatedNodeNameAfterBinding": True,   # beta since 1.35
    "SchedulerAsyncAPICalls": False,                 # beta, off, since 1.34
    "SchedulerAsyncPreemption": True,                # beta since 1.33
    "NominatedNodeNameForExpectation": True,         # beta since 1.35
    "PodLevelResources": True,                       # beta since 1.34
    "GenericWorkload": False,                        # beta, off, since 1.37
    "CompositePodGroup": False,                      # beta, off, in 1.38 (alpha in 1.37)
    "TopologyAwareWorkloadScheduling": False,        # beta, off, in 1.38
    "DRAWorkloadResourceClaims": False,              # beta, off, since 1.37
    # UPSTREAM-DIFF: DRAPreemption is not in v1.38.0-beta.0 (read). Kept, off, as an explicit
    # opt-in for the development branch's DRA preemption (upstream-changes.md D15; it may land in
    # a later 1.38 build or in 1.39): the default 1.38 answer is the beta's (no device is freed).
    "DRAPreemption": False,
}

V1_38 = Profile(
    "1.38",
    released=False,
    upstream_build="v1.38.0-beta.0",
    gate_defaults=_GATES_1_38,
    pdb_empty_selector_matches_all=True,      # v1.38.0-beta.0 util.go FilterVictimsWithPDBViolation
    pdb_unlabeled_pods_can_violate=True,      # the same
    validate_hierarchy=True,                  # v1.38.0-beta.0 validatePodGroupHierarchy (validation.py)
    no_pods_schedulable_message="no pods were schedulable",  # D3
    # v1.38.0-beta.0 DefaultPreemption RankNodes / Reserve with preemption.CompareVictimSets
    # (preemption/victimaware.py).
    victim_aware_placement=True,
    victims_keep_pod_priority=True,           # v1.38.0-beta.0 victims.go getCrossNodesVictims
    failed_child_pods_proposed=False,         # the 1.38 oracle (tests/oracle/v1.38/cases)
    preemption_policy_gated=False,            # v1.38.0-beta.0 manager.go getPreemptionPolicy
    all_mode_requires_gang=True,              # v1.38.0-beta.0 scheduling validation
    removed_gates={"PodGroupPreemptionPolicy": "removed in 1.38: a group's spec.preemptionPolicy is always honoured, "
                                               "and when it is unset a member pod's Never is"},
    reprieval="two-phase",                    # D6
    reprieve_filter=True,                     # D7
)

PROFILES: Mapping[str, Profile] = {p.version: p for p in (V1_37, V1_38)}
# The newest released version's profile: what a snapshot without a server version gets.
DEFAULT = V1_37
