"""Rule-level mutation testing: `python -m tests.mutants [-k SUBSTRING] [--list]`.

Each mutant flips one scheduling rule in kubectl_wap/ with a small textual replacement. For each
mutant the package is copied to a temporary directory, the replacement is applied there (the
working tree is never touched), and the mutant's `tests` (its module's own test files) run against
the copy (PYTHONPATH puts it in front of the installed package; a check per run makes sure the copy
is the one imported). A mutant is *killed* when some test fails, *survived* when all pass; `killed_by`
records the test that fails first. Hypothesis runs with a fixed seed so the result is
reproducible. The last result belongs in tests/README.md ("Mutation testing").

Why a hand-written list rather than mutmut / cosmic-ray: those generate every operator mutation
of every line (thousands here: cli, report and loaders included) and most survivors are
equivalent rewrites or unobservable in an offline analyzer; triaging them is the cost. What this
suite must show is that each *scheduling rule* we mirror from upstream has a test that fails when
the rule is wrong, so the mutants are written per rule, each with the upstream function it breaks.
The tree copy per mutant costs ~0.1 s and -x stops a killed run at its first failure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "kubectl_wap"

# The engine tests (scenarios through the CLI, properties, reprieval and placement references, demo
# expectations): what a mutant without its own `tests` runs against. Since issue 38 every mutant of
# the catalogue names its module's own test file(s) instead, and the test that kills it.
ENGINE = [
    "tests/test_scenarios.py",
    "tests/test_properties.py",
    "tests/test_properties_contention.py",
    "tests/test_reprieval_equivalence.py",
    "tests/test_demo_expectations.py",
    "tests/test_upstream_updates.py",
    "tests/test_placement.py",
    "tests/test_explanation_steps.py",
    "tests/test_selectors.py",
    "tests/test_pick_one_node_tie.py",
    "tests/test_candidate_columns.py",
    "tests/test_importance_order.py",
]

# Each module's own test file(s).
FILTERING = ("tests/test_filtering_rules.py",)  # framework/filtering.py
NOMINATED = ("tests/test_nominated_index.py",)  # framework/nominated.py
SCORING = ("tests/test_scoring_rules.py",)  # framework/scoring.py
PODGROUP = ("tests/test_podgroup.py", "tests/test_podgroup_quorum.py")  # framework/podgroup.py
IMPORTANCE = ("tests/test_importance_order.py",)  # preemption/importance.py
COLUMNS = ("tests/test_importance_order.py", "tests/test_candidate_columns.py")
UNITS = ("tests/test_units.py",)  # preemption/units.py
PDB = ("tests/test_pdb.py", "tests/test_upstream_updates.py")  # preemption/pdb.py
WORKLOAD = ("tests/test_workload.py",)  # preemption/workload.py
CANDIDATES = ("tests/test_candidate_columns.py",)  # preemption/candidates.py
DEFAULT = ("tests/test_pick_one_node_tie.py", "tests/test_default_preemption.py")  # preemption/default.py


@dataclass(frozen=True)
class Mutant:
    id: str
    path: str  # relative to kubectl_wap/
    old: str  # must occur exactly once in the file
    new: str
    rule: str  # the upstream rule broken
    tests: tuple[str, ...] = tuple(ENGINE)
    survived_before: bool = False  # one of the 8 survivors of the issue-20 audit
    killed_by: str = ""  # the test that kills it (the first to fail: pytest runs with -x)


M = Mutant
# ---- the 36 mutants of issues 20-37 (moved from ENGINE to their modules' own files by issue 38)
MUTANTS: list[Mutant] = [
    # ---- framework: Filter / Score -----------------------------------------------------------
    M("nominated-fast-path", "framework/filtering.py",
      "free = state.alloc[idx, cols] - state.requested[idx, cols] - extra[cols]",
      "free = state.alloc[idx, cols] - state.requested[idx, cols]",
      "RunFilterPluginsWithNominatedPods: the fit fast path ignores nominated pods' requests", FILTERING, True,
      killed_by="tests/test_filtering_rules.py::test_filter_with_nominated_pods"
                "[a nominated pod of equal priority takes its room from the pod]"),
    M("nominated-equal-priority", "framework/nominated.py",
      "if (p.priority or 0) >= prio and not has(p)]",
      "if (p.priority or 0) > prio and not has(p)]",
      "addGENominatedPods: nominated pods of equal priority are ignored", NOMINATED,
      killed_by="tests/test_nominated_index.py::test_vectorized_nominated_check_matches_per_node"),
    M("taint-noexecute", "framework/filtering.py",
      'if taint.effect not in ("NoSchedule", "NoExecute"):', 'if taint.effect not in ("NoSchedule",):',
      "TaintToleration.Filter: NoExecute taints not enforced", FILTERING,
      killed_by="tests/test_filtering_rules.py::test_taint_toleration"
                "[an untolerated NoExecute taint rejects the pod as a NoSchedule one does]"),
    M("cordon-ignored", "framework/filtering.py",
      "if node.unschedulable and not tolerates_taint(pod.tolerations, UNSCHEDULABLE_TAINT):",
      "if False:", "NodeUnschedulable.Filter: cordoned nodes accepted", FILTERING,
      killed_by="tests/test_filtering_rules.py::test_node_unschedulable"
                "[a cordoned node rejects a pod that does not tolerate the unschedulable taint]"),
    M("host-port-ignored", "framework/filtering.py",
      "if pod.host_ports and not ports_fit(state, pod, idx, extra_ports):",
      "if False:", "NodePorts.Filter: host port conflicts ignored", FILTERING,
      killed_by="tests/test_filtering_rules.py::test_node_ports[the same udp port conflicts]"),
    M("pod-count-ignored", "framework/filtering.py",
      "    if int(state.pod_count[idx]) + extra_pods + 1 > allowed:\n        reasons.append",
      "    if False:\n        reasons.append", "fitsRequest: the node's pod capacity is not checked", FILTERING,
      killed_by="tests/test_filtering_rules.py::test_too_many_pods"
                "[even without requests the pod fails on a node with no room for another pod]"),
    M("fit-equal-edge-fails", "framework/filtering.py",
      "ok &= (free >= amts).all(axis=1)", "ok &= (free > amts).all(axis=1)",
      "fitsRequest: a request equal to what is free fits (`delta > allocatable - requested` fails)", FILTERING,
      killed_by="tests/test_filtering_rules.py::test_resource_amounts[equal edge case]"),
    M("fit-unresolvable-at-total", "framework/filtering.py",
      "unres = unres or a > int(alloc[c])", "unres = unres or a >= int(alloc[c])",
      "fitsRequest: Unresolvable only when the request exceeds the node's whole allocatable", FILTERING,
      killed_by="tests/test_filtering_rules.py::test_resource_amounts"
                "[a request equal to the whole allocatable is resolvable by preemption]"),
    M("node-affinity-filter-dropped", "framework/filtering.py",
      "    if not node_matches_pod_node_affinity(pod, node):\n        return unresolvable",
      "    if False:\n        return unresolvable",
      "NodeAffinity.Filter: spec.nodeSelector and the required node affinity not enforced", FILTERING,
      killed_by="tests/test_filtering_rules.py::test_node_affinity[missing labels]"),
    M("csi-limit-inclusive", "framework/plugins/nodevolumelimits.py",
      "count.get(driver, 0) + n > limit:", "count.get(driver, 0) + n >= limit:",
      "NodeVolumeLimits (csi.go Filter): a node at exactly its attach limit still fits", ("tests/test_volumes.py",),
      killed_by="tests/test_volumes.py::test_volumes_up_to_the_limit_fit"),
    M("volume-zone-value-ignored", "framework/plugins/volumezone.py",
      "if v is None or v not in values:", "if v is None:",
      "VolumeZone.Filter: the node's zone must be one of the PV's zones", ("tests/test_volumes.py",),
      killed_by="tests/test_volumes.py::test_zonal_pv_fits_only_nodes_of_its_zone"),
    M("rwop-removal-ignored", "framework/plugins/volumerestrictions.py",
      "        n = data.count_for(removed)\n        data.conflicts -= n", "        n = data.count_for(removed)\n        data.conflicts -= 0",
      "VolumeRestrictions RemovePod: removing the ReadWriteOncePod holder clears the conflict (preemption can help)",
      ("tests/test_volumes.py",),
      killed_by="tests/test_volumes.py::test_removing_the_holder_clears_the_conflict_and_adding_it_back_restores_it"),
    M("dra-allocated-device-free", "framework/plugins/dynamicresources.py",
      "elif d.id in u.taken or d.id in used:", "elif d.id in used:",
      "DynamicResources (GatherAllocatedState): a device an allocated claim holds is not free", ("tests/test_dra.py",),
      killed_by="tests/test_dra.py::test_devices_taken_by_allocated_claims_are_not_free"),
    M("score-node-affinity-0", "framework/scoring.py",
      "node_affinity(state, pod, nodes) * 2", "node_affinity(state, pod, nodes) * 0",
      "default profile: NodeAffinity score weight 2", SCORING, True,
      killed_by="tests/test_scoring_rules.py::test_default_profile_weights[NodeAffinity counts twice in the total]"),
    M("score-taint-toleration-0", "framework/scoring.py",
      "taint_toleration(state, pod, nodes) * 3", "taint_toleration(state, pod, nodes) * 0",
      "default profile: TaintToleration score weight 3", SCORING, True,
      killed_by="tests/test_scoring_rules.py::test_default_profile_weights[TaintToleration counts three times in the total]"),
    M("score-least-allocated-flipped", "framework/scoring.py",
      "total = least_allocated(state, pod, nodes) * 1", "total = -least_allocated(state, pod, nodes) * 1",
      "NodeResourcesFit LeastAllocated: emptier nodes score higher", SCORING,
      killed_by="tests/test_scoring_rules.py::test_least_allocated_adds_to_the_total_so_the_emptier_node_wins"),
    M("cpg-min-group-count", "framework/podgroup.py",
      'min_count = cpg.min_group_count if cpg.policy == "gang" else 1', "min_count = 1",
      "GangScheduling.PlacementFeasible: a gang CompositePodGroup needs minGroupCount successful children", PODGROUP,
      killed_by="tests/test_podgroup.py::test_composite_pod_group_needs_its_min_group_count"
                "[a gang CompositePodGroup with room for fewer than minGroupCount children fails]"),
    M("gang-min-count", "framework/podgroup.py",
      'min_count = pg.min_count if pg.policy == "gang" else 1', "min_count = 1",
      "GangScheduling.PlacementFeasible: a gang PodGroup needs minCount pods", PODGROUP,
      killed_by="tests/test_podgroup.py::test_pod_group_needs_its_min_count[a gang PodGroup with room for fewer than minCount pods fails]"),
    # ---- victim units and importance ----------------------------------------------------------
    M("importance-size-flipped", "preemption/importance.py",
      "return (-priority, -rank, -size, earliest_start, first_uid)",
      "return (-priority, -rank, size, earliest_start, first_uid)",
      "MoreImportantVictim: more pods is more important", IMPORTANCE, True,
      killed_by="tests/test_importance_order.py::test_more_important_victim[both PGs, vi1 larger]"),
    M("importance-size-above-rank", "preemption/importance.py",
      "return (-priority, -rank, -size, earliest_start, first_uid)",
      "return (-priority, -size, -rank, earliest_start, first_uid)",
      "MoreImportantVictim: rank (kind) is compared before the number of pods", IMPORTANCE, True,
      killed_by="tests/test_importance_order.py::test_more_important_victim"
                "[CPG vs PG, CPG smaller size, same priority (CPG rank wins over size)]"),
    M("importance-reversed", "preemption/importance.py",
      'return sorted(units, key=attrgetter("importance"))',
      'return sorted(units, key=attrgetter("importance"), reverse=True)',
      "MoreImportantVictim as a whole (the audit reversed importance.py's unused key)", IMPORTANCE, True,
      killed_by="tests/test_importance_order.py::test_more_important_victim[vi1 has higher priority]"),
    M("importance-start-flipped", "preemption/importance.py",
      "return (-priority, -rank, -size, earliest_start, first_uid)",
      "return (-priority, -rank, -size, -earliest_start, first_uid)",
      "MoreImportantVictim: the earlier start time is more important", IMPORTANCE,
      killed_by="tests/test_importance_order.py::test_more_important_victim[both Pods, vi1 older]"),
    M("importance-priority-flipped", "preemption/importance.py",
      "return (-priority, -rank, -size, earliest_start, first_uid)",
      "return (priority, -rank, -size, earliest_start, first_uid)",
      "MoreImportantVictim: higher priority is more important", IMPORTANCE,
      killed_by="tests/test_importance_order.py::test_more_important_victim[vi1 has higher priority]"),
    M("group-member-pod-rank", "preemption/units.py",
      "rank_.append(POD_RANK if own_priority else PODGROUP_RANK)", "rank_.append(POD_RANK)",
      "NewPodVictim: a pod of a Single-mode group ranks as a PodGroup", UNITS,
      killed_by="tests/test_units.py::test_new_pod_victim_of_a_group_member"
                "[in 1.37 a pod of a Single-mode group ranks as a PodGroup at its group's priority]"),
    M("all-mode-ignored", "preemption/units.py",
      "        if g.disruption_mode == ALL:\n            best = g",
      "        if False:\n            best = g",
      "getHighestAllAncestor: disruptionMode All groups are preempted atomically", UNITS,
      killed_by="tests/test_units.py::test_get_highest_all_ancestor[pod group disruption mode All]"),
    M("lowest-all-ancestor", "preemption/units.py",
      "        if g.disruption_mode == ALL:\n            best = g",
      "        if g.disruption_mode == ALL and best is None:\n            best = g",
      "getHighestAllAncestor: the highest All ancestor is the unit", UNITS,
      killed_by="tests/test_units.py::test_get_highest_all_ancestor[highest All parent wins (both have disruption mode All)]"),
    M("own-priority-not-group", "preemption/units.py",
      "            return _leaf_priority(leaf, index)\n",
      "            return pod.priority or 0, _leaf_priority(leaf, index)[1]\n",
      "getPodPriority: a group pod takes its root group's priority", UNITS,
      killed_by="tests/test_units.py::test_get_pod_priority[pod with PodGroup returns PodGroup priority instead of pod priority]"),
    M("victims-equal-priority", "preemption/units.py",
      "                prio = pod.priority or 0\n                if limit is not None and prio >= limit:",
      "                prio = pod.priority or 0\n                if limit is not None and prio > limit:",
      "SelectVictimsOnDomain: only strictly lower-priority units are victims", UNITS,
      killed_by="tests/test_units.py::test_only_strictly_lower_priority_units_are_potential_victims"),
    # ---- PDBs ----------------------------------------------------------------------------------
    M("pdb-disrupted-ignored", "preemption/pdb.py",
      "if pod.name in pdb.disrupted_pods:", "if False:",
      "FilterVictimsWithPDBViolation: pods in status.disruptedPods consume no budget", PDB, True,
      killed_by="tests/test_pdb.py::test_filter_victims_with_pdb_violation[pod in DisruptedPods is ignored]"),
    M("pdb-keep-consuming", "preemption/pdb.py",
      "                    break  # podIsViolating returns at the first violated budget\n", "",
      "FilterVictimsWithPDBViolation (v1.37.2): stop at the first violated PDB", PDB, True,
      killed_by="tests/test_upstream_updates.py::test_pod_stops_consuming_budgets_at_its_first_violation"),
    M("pdb-off-by-one", "preemption/pdb.py",
      "if allowed[i] < 0:", "if allowed[i] <= 0:",
      "FilterVictimsWithPDBViolation: violating only when the budget goes below zero", PDB,
      killed_by="tests/test_pdb.py::test_filter_victims_with_pdb_violation[victim matching PDB, adequate DisruptionsAllowed]"),
    M("pdb-expressions-ignored", "preemption/pdb.py",
      "    if not sel.match_expressions:\n        labels = pod.labels",
      "    if True:\n        labels = pod.labels",
      "LabelSelectorAsSelector: matchExpressions are part of the selector", PDB,
      killed_by="tests/test_pdb.py::test_match_expressions_are_part_of_the_selector[a pod outside the expression consumes nothing]"),
    M("pdb-violating-not-first", "preemption/workload.py",
      "order_units = violating + non_violating", "order_units = non_violating + violating",
      "SelectVictimsOnDomain: PDB-violating units are reprieved first", WORKLOAD,
      killed_by="tests/test_workload.py::test_pdb_violating_victims_are_reprieved_first[PDB: Prefer non-violating victim-object path]"),
    M("columnar-pdb-violating-not-first", "preemption/candidates.py",
      "return violating + non_violating,", "return non_violating + violating,",
      "SelectVictimsOnDomain: PDB-violating units are reprieved first (the columnar fast path)", CANDIDATES,
      killed_by="tests/test_candidate_columns.py::test_order_and_classification_equal_the_object_passes[None]"),
    M("columnar-trivial-ignores-anti-affinity", "preemption/candidates.py",
      "trivial = (node >= 0) & ~anti", "trivial = node >= 0",
      "a victim's required anti-affinity is a cross-node term: its unit is checked wherever it runs", CANDIDATES,
      killed_by="tests/test_candidate_columns.py::test_victim_anti_affinity_off_the_placement_nodes_is_checked"),
    M("columnar-importance-reversed", "preemption/importance.py",
      "return _lexsort_then_uid([inputs[w] * sign for w, sign in layout], uids)",
      "return _lexsort_then_uid([inputs[w] * -sign for w, sign in layout], uids)",
      "MoreImportantVictim as a whole (the columnar order of the fast path)", IMPORTANCE,
      killed_by="tests/test_importance_order.py::test_more_important_victim[vi1 has higher priority]"),
    M("columnar-violate-count-lost", "preemption/units.py",
      "                u.violate_count = self.violate[k]", "                pass",
      "FilterVictimsWithPDBViolation: a unit built after the classification still counts its violating pods", UNITS,
      killed_by="tests/test_units.py::test_a_unit_built_after_the_pdb_classification_keeps_its_violating_pods"),
    M("columnar-trivial-ignores-touched", "preemption/candidates.py",
      "trivial &= ~np.isin(node, np.fromiter(plan.touched, np.int64, len(plan.touched)))", "pass",
      "selectVictimsOnDomain: a unit on a node receiving a preemptor pod is checked", CANDIDATES,
      killed_by="tests/test_candidate_columns.py::test_victim_anti_affinity_off_the_placement_nodes_is_checked"),
    # ---- default preemption ---------------------------------------------------------------------
    M("unresolvable-nodes-tried", "preemption/default.py",
      "if (st := r.statuses.get(i)) is not None and st.code == UNSCHEDULABLE]",
      "if (st := r.statuses.get(i)) is not None and st.code in (UNSCHEDULABLE, UNRESOLVABLE)]",
      "nodesWherePreemptionMightHelp: UnschedulableAndUnresolvable nodes are skipped", DEFAULT,
      killed_by="tests/test_default_preemption.py::test_post_filter_tries_only_unschedulable_nodes"
                "[preemption should respect filteredNodesStatuses]"),
    M("pick-pdb-criterion-dropped", "preemption/default.py",
      '("fewest PDB violations", lambda c: -c.num_pdb)', '("fewest PDB violations", lambda c: 0)',
      "pickOneNodeForPreemption: fewest PDB violations first", DEFAULT,
      killed_by="tests/test_default_preemption.py::test_fewest_pdb_violations_goes_first"),
    M("pick-fewest-victims-flipped", "preemption/default.py",
      '("fewest victims", lambda c: -len(c.pods))', '("fewest victims", lambda c: len(c.pods))',
      "pickOneNodeForPreemption: fewest victims", DEFAULT,
      killed_by="tests/test_default_preemption.py::test_fewest_victims_once_the_adjusted_sums_tie"),
    M("pick-highest-priority-flipped", "preemption/default.py",
      'lambda c: -(c.pods[0].priority or 0))', 'lambda c: (c.pods[0].priority or 0))',
      "pickOneNodeForPreemption: lowest highest-priority victim", DEFAULT,
      killed_by="tests/test_default_preemption.py::test_select_best_candidate[node with min highest priority pod is picked]"),
    M("pick-final-tiebreak", "preemption/default.py",
      "left.sort(key=lambda c: names[c.node])", "left.sort(key=lambda c: names[c.node], reverse=True)",
      "pickOneNodeForPreemption: final tie (ours: smallest node name)", DEFAULT,
      killed_by="tests/test_pick_one_node_tie.py::test_full_tie_goes_to_the_smallest_node_name[order0]"),
]

# ---- issue 38: one mutant per rule the audit found unguarded, each run against its module's own
# focused test file(s) only (not ENGINE); killed_by names the test that fails under it.
MUTANTS += [
    M("columnar-start-missing-oldest", "preemption/candidates.py",
      "start = np.fromiter([_INF if p.start_time is None else p.start_time for p in c.pods], np.float64, n)",
      "start = np.fromiter([0.0 if p.start_time is None else p.start_time for p in c.pods], np.float64, n)",
      "GetPodStartTime / MoreImportantPod: a pod without status.startTime is newest (columnar order)", COLUMNS,
      killed_by="tests/test_importance_order.py::test_a_pod_without_start_time_is_the_newest_on_both_paths"),
    M("columns-start-missing-oldest", "preemption/units.py",
      "np.fromiter([_INF if p.start_time is None else p.start_time for p in pods], np.float64, n),",
      "np.fromiter([0.0 if p.start_time is None else p.start_time for p in pods], np.float64, n),",
      "GetPodStartTime / MoreImportantPod: a pod without status.startTime is newest (collect's per-node start column)", COLUMNS,
      killed_by="tests/test_importance_order.py::test_a_pod_without_start_time_is_the_newest_on_both_paths"),
    M("unit-start-missing-oldest", "preemption/units.py",
      "importance_key(prio, rank, 1, _INF if st is None else st, pod.uid)",
      "importance_key(prio, rank, 1, 0.0 if st is None else st, pod.uid)",
      "GetPodStartTime / MoreImportantPod: a pod without status.startTime is newest (object path)", IMPORTANCE,
      killed_by="tests/test_importance_order.py::test_a_pod_without_start_time_is_the_newest_on_both_paths"),
    M("pdb-disrupted-break", "preemption/pdb.py",
      "                if pod.name in pdb.disrupted_pods:\n                    continue",
      "                if pod.name in pdb.disrupted_pods:\n                    break",
      "FilterVictimsWithPDBViolation: a pod in one PDB's disruptedPods still consumes its other PDBs", PDB,
      killed_by="tests/test_pdb.py::test_disrupted_pod_of_one_pdb_still_consumes_its_other_pdbs"),
    M("pdb-invalid-selector-matches", "preemption/pdb.py",
      "if sel is None or sel.invalid:", "if sel is None:",
      "FilterVictimsWithPDBViolation: a PDB whose selector does not parse matches no pod", PDB,
      killed_by="tests/test_pdb.py::test_pdb_whose_selector_does_not_parse_matches_no_pod"),
    M("ipa-first-of-series-loosened", "framework/plugins/interpodaffinity.py",
      "if not (len(aff) == 0 and d.self_match):", "if not d.self_match:",
      "InterPodAffinity nodeTopologyMatchesAffinity: a self-matching pod passes only while no pod in the cluster matches its terms",
      ("tests/test_interpodaffinity.py",),
      killed_by="tests/test_interpodaffinity.py::test_self_affinity_exception_ends_once_a_matching_pod_exists"),
    M("reprieval-affinity-not-cross-node", "preemption/reprieval.py",
      "if aff is not None and (aff.pod_affinity_required or aff.pod_anti_affinity_required):",
      "if aff is not None and aff.pod_anti_affinity_required:",
      "selectVictimsOnDomain reprieval: a preemptor's required pod affinity reads pods on every node",
      ("tests/test_reprieval_equivalence.py",),
      killed_by="tests/test_reprieval_equivalence.py::test_victim_off_the_placement_node_ends_the_preemptors_first_of_series_pass"),
    M("pick-start-missing-oldest", "preemption/default.py",
      'return min((p.start_time if p.start_time is not None else float("inf")) for p in pods if (p.priority or 0) == top)',
      'return min((p.start_time if p.start_time is not None else 0.0) for p in pods if (p.priority or 0) == top)',
      "pickOneNodeForPreemption / GetEarliestPodStartTime: a victim without start time started now",
      ("tests/test_pick_one_node_tie.py",),
      killed_by="tests/test_pick_one_node_tie.py::test_victim_without_start_time_counts_as_started_now"),
    M("pick-start-lowest-priority", "preemption/default.py",
      "top = max((p.priority or 0) for p in pods)", "top = min((p.priority or 0) for p in pods)",
      "pickOneNodeForPreemption / GetEarliestPodStartTime: the start times of the highest-priority victims",
      ("tests/test_pick_one_node_tie.py",),
      killed_by="tests/test_pick_one_node_tie.py::test_start_times_of_the_highest_priority_victims_only"),
    M("victim-aware-costliest", "preemption/victimaware.py",
      "best = min(sets, key=_KEY)", "best = max(sets, key=_KEY)",
      "RankNodes: the feasible nodes with the cheapest surviving victim set go on to Score",
      ("tests/test_versions.py", "tests/test_victimsets.py"),
      killed_by="tests/test_versions.py::test_override_gives_each_versions_answer[1.38]"),
    # (`return _cmp(n2, n1)` for CompareVictimSets' last line is equivalent: with every unit
    # holding a pod, equal totals and equal sizes unit by unit leave equal lengths.)
    M("victimsets-rank-dropped", "preemption/victimsets.py",
      "c = _cmp(u1.rank, u2.rank) or _cmp(len(u1.pods), len(u2.pods))", "c = _cmp(len(u1.pods), len(u2.pods))",
      "CompareVictimSets: a lower victim rank (Pod < PodGroup) is cheaper at equal counts",
      ("tests/test_victimsets.py",),
      killed_by="tests/test_victimsets.py::test_upstream_table"
                "[standalone pod preferred over PodGroup of same priority and total pod count]"),
    M("validation-gang-basic-child", "preemption/validation.py",
      'if parent.policy == "gang" and g.policy == "basic":', "if False:",
      "validatePodGroupHierarchy: a gang parent cannot have a basic child", ("tests/test_validation_138.py",),
      killed_by="tests/test_validation_138.py::test_validate_pod_group[CPG failure when gang parent group has a basic child PodGroup]"),
    M("selector-gt-inclusive", "framework/plugins/selectors.py",
      "if op == GT and not n > vals:", "if op == GT and not n >= vals:",
      "labels.Requirement.Matches: Gt is strictly greater", ("tests/test_selectors.py",),
      killed_by="tests/test_selectors.py::test_node_selector_term[term4-node4-False]"),
    M("spread-min-domains-inclusive", "framework/plugins/podtopologyspread.py",
      "if len(self.tp_counts[i]) < self.constraints[i].min_domains:",
      "if len(self.tp_counts[i]) <= self.constraints[i].min_domains:",
      "PodTopologySpread minMatchNum: global minimum 0 only with fewer domains than minDomains",
      ("tests/test_podtopologyspread.py",),
      killed_by="tests/test_podtopologyspread.py::test_min_domains"),
    M("score-balanced-allocation-0", "framework/scoring.py",
      "total += balanced_allocation(state, pod, nodes) * 1", "total += balanced_allocation(state, pod, nodes) * 0",
      "default profile: NodeResourcesBalancedAllocation score weight 1",
      ("tests/test_vectorized_reference.py", "tests/test_upstream_updates.py"),
      killed_by="tests/test_vectorized_reference.py::test_total_scores_match_reference"),
    M("nominated-counts-itself", "framework/nominated.py",
      "if s is not None and pod.uid in s.uids:  # a pod never counts against itself", "if False:",
      "addGENominatedPods: a nominated pod is not counted against itself (pi.Pod.UID != pod.UID)",
      ("tests/test_nominated_index.py",),
      killed_by="tests/test_nominated_index.py::test_vectorized_nominated_check_matches_per_node"),
    M("sim-job-backoff-inclusive", "simulate/world.py",
      "if self.job_failures[k] > backoff_limit:", "if self.job_failures[k] >= backoff_limit:",
      "job_controller.go: a Job fails when its failures exceed backoffLimit (`failed > backoffLimit`)", ("tests/test_simulate.py",),
      killed_by="tests/test_simulate.py::test_a_job_fails_only_past_its_backoff_limit"),
    M("sim-recreated-not-queued", "simulate/engine.py",
      "        else:\n            self.enqueue(new)", "        else:\n            pass",
      "a controller's replacement pod enters kube-scheduler's queue (the cascade)", ("tests/test_simulate.py",),
      killed_by="tests/test_simulate.py::test_cascade_of_depth_two"),
    M("sim-statefulset-renamed", "simulate/world.py",
      '            if ex.owner_kind == "StatefulSet":\n                name = victim.name',
      '            if False:\n                name = victim.name',
      "StatefulSet controller: the replacement keeps the ordinal name", ("tests/test_simulate.py",),
      killed_by="tests/test_simulate.py::test_statefulset_victim_comes_back_with_its_name"),
    M("optimal-pdb-objective-dropped", "diagnose/optimal.py",
      'objectives.append(("PDB violations", viol, [1] * len(viol)))', 'objectives.append(("PDB violations", [], []))',
      "pickOneNodeForPreemption: fewest PDB violations first (the optimum's first objective)", ("tests/test_diagnose_optimal.py",),
      killed_by="tests/test_diagnose_optimal.py::test_demo_job1_optimum_strictly_better_than_scheduler"),  # and test_avoids_pdb_violation_first
    M("optimal-levels-lowest-first", "diagnose/optimal.py",
      "for lvl in sorted(levels, reverse=True):", "for lvl in sorted(levels):",
      "pickOneNodeForPreemption: the lowest highest-priority victim before the fewest victims", ("tests/test_diagnose_optimal.py",),
      killed_by="tests/test_diagnose_optimal.py::test_demo_job1_optimum_strictly_better_than_scheduler"),
      # and test_the_highest_victim_priority_is_minimized_before_the_pod_count, which names the rule
    M("queue-age-before-priority", "simulate/queue.py",
      "return (-self.priority, self.timestamp, self.seq)", "return (self.timestamp, -self.priority, self.seq)",
      "PrioritySort.Less: higher priority first, then the earlier timestamp", ("tests/test_simulate.py",),
      killed_by="tests/test_simulate.py::test_priority_goes_before_age"),
    M("queue-failed-keeps-timestamp", "simulate/queue.py",
      "        if not keep_timestamp:\n            e.timestamp = now\n", "",
      "AddUnschedulablePodIfNotPresent: a failed attempt refreshes the entry's queue timestamp", ("tests/test_simulate.py",),
      killed_by="tests/test_simulate.py::test_a_failed_attempt_goes_behind_the_entries_already_waiting"),
    M("nominator-other-scheduler", "framework/nominated.py",
      "if p.nominated_node_name and not p.scheduled and p.scheduler_name == DEFAULT_SCHEDULER]",
      "if p.nominated_node_name and not p.scheduled]",
      "eventhandlers.go responsibleForPod: another scheduler's pending pod never reaches the nominator",
      ("tests/test_podgroup_quorum.py",),
      killed_by="tests/test_podgroup_quorum.py::test_nominator_holds_gated_pods_but_not_another_schedulers"),
    M("nominator-drops-gated", "framework/nominated.py",
      "if p.nominated_node_name and not p.scheduled and p.scheduler_name == DEFAULT_SCHEDULER]",
      "if p.nominated_node_name and not p.scheduled and p.scheduler_name == DEFAULT_SCHEDULER and not p.scheduling_gates]",
      "PriorityQueue.addPod: a gated pod's nomination is recorded too", ("tests/test_podgroup_quorum.py",),
      killed_by="tests/test_podgroup_quorum.py::test_nominator_holds_gated_pods_but_not_another_schedulers"),
    M("quorum-running-not-counted", "framework/podgroup.py",
      "return not p.terminal and (bool(p.node_name) or p.scheduler_name == DEFAULT_SCHEDULER)",
      "return not p.terminal and not p.node_name and p.scheduler_name == DEFAULT_SCHEDULER",
      "isPGReady AllPodsCount: bound members count toward the quorum", ("tests/test_podgroup_quorum.py",),
      killed_by="tests/test_podgroup_quorum.py::test_running_and_gated_members_count_toward_the_quorum"),
    M("quorum-min-group-count-ignored", "framework/podgroup.py",
      'need = g.min_group_count if g.policy == "gang" else 1\n        if depth',
      "need = 1\n        if depth",
      "isCPGTreeReady: a gang CompositePodGroup needs minGroupCount ready children", ("tests/test_podgroup_quorum.py",),
      killed_by="tests/test_podgroup_quorum.py::test_cpg_tree_needs_min_group_count_ready_children"),
    M("pending-counts-deleting-pods", "diagnose/pending.py",
      "return not p.node_name and not p.terminal and p.deletion_timestamp is None",
      "return not p.node_name and not p.terminal",
      "skipPodSchedule: a pod being deleted is not scheduled (not a pending row)", ("tests/test_diagnose_pending.py",),
      killed_by="tests/test_diagnose_pending.py::test_unbound_pod_being_deleted_is_not_pending"),
    M("forensics-equal-priority-suspect", "diagnose/forensics.py",
      "if (p.priority or 0) <= prio or not (nominated_here or started_here):",
      "if (p.priority or 0) < prio or not (nominated_here or started_here):",
      "PodEligibleToPreemptOthers / SelectVictimsOnNode: only a higher-priority pod preempts",
      ("tests/test_diagnose_forensics.py",),
      killed_by="tests/test_diagnose_forensics.py::test_a_pod_of_the_victims_own_priority_is_no_suspect"),
    M("quantity-floor", "quantity.py",
      "    return -((-f.numerator) // f.denominator)", "    return f.numerator // f.denominator",
      "Quantity.Value / MilliValue round up", ("tests/test_quantity.py",),
      killed_by="tests/test_quantity.py::test_readings_round_up[100m-100-1]"),
    M("timestamp-offset-dropped", "snapshot/decode/fields.py",
      'return _fromisoformat(v).timestamp()  # 3.11', 'return _fromisoformat(v).replace(tzinfo=None).timestamp()  # 3.11',
      "metav1.Time (RFC 3339): the UTC offset is part of the time", ("tests/test_loaders.py",),
      killed_by="tests/test_loaders.py::test_timestamps_keep_their_utc_offset"),
    M("redact-hashes-numbers", "snapshot/share/redact.py",
      '            if self._numbers is not None and v in self._numbers:\n                return self._numbers[v]\n', "",
      "NodeSelectorRequirement Gt/Lt compare label values as integers: redaction keeps their order",
      ("tests/test_redact.py", "tests/test_redact_fields.py"),
      killed_by="tests/test_redact_fields.py::test_numbers_compared_by_gt_lt_stay_numbers"),
    M("strip-drops-tolerations", "snapshot/share/strip.py",
      '    "tolerations",\n    "topologySpreadConstraints",\n    "priority",',
      '    "topologySpreadConstraints",\n    "priority",',
      "TaintToleration reads spec.tolerations: strip keeps them", ("tests/test_strip_save.py",),
      killed_by="tests/test_strip_save.py::test_pod_keeps_only_scheduling_fields"),
    M("exit-code-diff-inverted", "cli/diff.py",
      'raise typer.Exit(1 if d["changed"] else 0)', 'raise typer.Exit(0 if d["changed"] else 1)',
      "diff --exit-code: 1 when the scenarios differ, 0 when they agree", ("tests/test_cli.py", "tests/test_cli_guards.py"),
      killed_by="tests/test_cli.py::test_diff_exit_code_is_1_only_when_the_sides_differ[--replicas 4-True]"),
]


def _apply(tree: Path, m: Mutant) -> None:
    f = tree / "kubectl_wap" / m.path
    text = f.read_text()
    n = text.count(m.old)
    if n != 1:
        raise SystemExit(f"mutant {m.id}: expected the original text once in kubectl_wap/{m.path}, found {n}")
    f.write_text(text.replace(m.old, m.new))


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(m: Mutant, verbose: bool = False) -> tuple[bool, float, str]:
    """(killed, seconds, first failing test or '')."""
    with tempfile.TemporaryDirectory(prefix=f"wap-mutant-{m.id}-") as tmp:
        tree = Path(tmp)
        shutil.copytree(PKG, tree / "kubectl_wap", ignore=shutil.ignore_patterns("__pycache__"))
        _apply(tree, m)
        env = _env(tree)
        where = subprocess.run([sys.executable, "-c", "import kubectl_wap; print(kubectl_wap.__file__)"],
                               env=env, cwd=tmp, capture_output=True, text=True).stdout.strip()
        if not where.startswith(tmp):
            raise SystemExit(f"mutant {m.id}: the copy is not the package imported ({where})")
        t0 = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0",
             "--rootdir", str(ROOT), *[str(ROOT / t) for t in m.tests]],
            env=env, cwd=tmp, capture_output=True, text=True)
        dt = time.monotonic() - t0
        failed = next((ln.split(" ", 1)[1].split(" - ")[0] for ln in proc.stdout.splitlines() if ln.startswith("FAILED ")), "")
        if verbose:
            print(proc.stdout[-3000:])
        if proc.returncode not in (0, 1):
            raise SystemExit(f"mutant {m.id}: pytest exit {proc.returncode}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
        return proc.returncode == 1, dt, failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.mutants", description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", dest="select", default="", help="run only mutants whose id contains this (a comma-separated list: any of them)")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("-v", action="store_true", help="show pytest output")
    args = ap.parse_args(argv)
    # On SIGTERM unwind like Ctrl-C: subprocess.run kills the running pytest and the temporary
    # copy of the package is removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    chosen = [m for m in MUTANTS if any(s in m.id for s in args.select.split(","))]
    for m in chosen:  # fail fast on a stale mutant before running anything
        n = (PKG / m.path).read_text().count(m.old)
        if n != 1:
            raise SystemExit(f"mutant {m.id}: original text found {n} times in kubectl_wap/{m.path}")
    if args.list:
        for m in chosen:
            print(f"{m.id:32} {m.path:28} {m.rule}" + (f"  [killed by {m.killed_by}]" if m.killed_by else ""))
        return 0
    survivors = []
    t_all = time.monotonic()
    for m in chosen:
        killed, dt, failed = run(m, args.v)
        mark = "killed  " if killed else "SURVIVED"
        print(f"{mark} {m.id:32} {dt:6.1f}s  {failed if killed else m.rule}", flush=True)
        if not killed:
            survivors.append(m)
    print(f"{len(chosen) - len(survivors)}/{len(chosen)} killed, {len(survivors)} survived "
          f"({time.monotonic() - t_all:.0f} s)")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
