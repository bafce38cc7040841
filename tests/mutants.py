"""Rule-level mutation testing: `python -m tests.mutants [-k SUBSTRING] [--list]`.

Each mutant flips one scheduling rule in kubectl_wap/ with a small textual replacement. For each
mutant the package is copied to a temporary directory, the replacement is applied there (the
working tree is never touched), and the engine tests run against the copy (PYTHONPATH puts it in
front of the installed package; a check per run makes sure the copy is the one imported). A mutant
is *killed* when some test fails, *survived* when all pass. Hypothesis runs derandomized so the
result is reproducible. The last result belongs in tests/README.md ("Mutation testing").

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

# The engine tests: scenarios (upstream fixtures through the CLI), properties, reprieval and
# placement references, demo expectations. Scoring/filter mutants add the vectorized reference.
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
FRAMEWORK = ENGINE + ["tests/test_vectorized_reference.py", "tests/test_filter_all_vector.py", "tests/test_nominated_index.py"]


@dataclass(frozen=True)
class Mutant:
    id: str
    path: str  # relative to kubectl_wap/
    old: str  # must occur exactly once in the file
    new: str
    rule: str  # the upstream rule broken
    tests: tuple[str, ...] = tuple(ENGINE)
    survived_before: bool = False  # one of the 8 survivors of the issue-20 audit


M = Mutant
MUTANTS: list[Mutant] = [
    # ---- framework: Filter / Score -----------------------------------------------------------
    M("nominated-fast-path", "framework/filtering.py",
      "free = state.alloc[idx, cols] - state.requested[idx, cols] - extra[cols]",
      "free = state.alloc[idx, cols] - state.requested[idx, cols]",
      "RunFilterPluginsWithNominatedPods: the fit fast path ignores nominated pods' requests", tuple(FRAMEWORK), True),
    M("nominated-equal-priority", "framework/nominated.py",
      "if (p.priority or 0) >= prio and not has(p)]",
      "if (p.priority or 0) > prio and not has(p)]",
      "addGENominatedPods: nominated pods of equal priority are ignored", tuple(FRAMEWORK)),
    M("taint-noexecute", "framework/filtering.py",
      'if taint.effect not in ("NoSchedule", "NoExecute"):', 'if taint.effect not in ("NoSchedule",):',
      "TaintToleration.Filter: NoExecute taints not enforced", tuple(FRAMEWORK)),
    M("cordon-ignored", "framework/filtering.py",
      "if node.unschedulable and not tolerates_taint(pod.tolerations, UNSCHEDULABLE_TAINT):",
      "if False:", "NodeUnschedulable.Filter: cordoned nodes accepted", tuple(FRAMEWORK)),
    M("host-port-ignored", "framework/filtering.py",
      "if pod.host_ports and not ports_fit(state, pod, idx, extra_ports):",
      "if False:", "NodePorts.Filter: host port conflicts ignored", tuple(FRAMEWORK)),
    M("pod-count-ignored", "framework/filtering.py",
      "    if int(state.pod_count[idx]) + extra_pods + 1 > allowed:\n        reasons.append",
      "    if False:\n        reasons.append", "fitsRequest: the node's pod capacity is not checked", tuple(FRAMEWORK)),
    M("score-node-affinity-0", "framework/scoring.py",
      "node_affinity(state, pod, nodes) * 2", "node_affinity(state, pod, nodes) * 0",
      "default profile: NodeAffinity score weight 2", tuple(FRAMEWORK), True),
    M("score-taint-toleration-0", "framework/scoring.py",
      "taint_toleration(state, pod, nodes) * 3", "taint_toleration(state, pod, nodes) * 0",
      "default profile: TaintToleration score weight 3", tuple(FRAMEWORK), True),
    M("score-least-allocated-flipped", "framework/scoring.py",
      "total = least_allocated(state, pod, nodes) * 1", "total = -least_allocated(state, pod, nodes) * 1",
      "NodeResourcesFit LeastAllocated: emptier nodes score higher", tuple(FRAMEWORK)),
    M("cpg-min-group-count", "framework/podgroup.py",
      'min_count = cpg.min_group_count if cpg.policy == "gang" else 1', "min_count = 1",
      "GangScheduling.PlacementFeasible: a gang CompositePodGroup needs minGroupCount successful children"),
    M("gang-min-count", "framework/podgroup.py",
      'min_count = pg.min_count if pg.policy == "gang" else 1', "min_count = 1",
      "GangScheduling.PlacementFeasible: a gang PodGroup needs minCount pods"),
    # ---- victim units and importance ----------------------------------------------------------
    M("importance-size-flipped", "preemption/importance.py",
      "return (-priority, -rank, -size, earliest_start, first_uid)",
      "return (-priority, -rank, size, earliest_start, first_uid)",
      "MoreImportantVictim: more pods is more important", survived_before=True),
    M("importance-size-above-rank", "preemption/importance.py",
      "return (-priority, -rank, -size, earliest_start, first_uid)",
      "return (-priority, -size, -rank, earliest_start, first_uid)",
      "MoreImportantVictim: rank (kind) is compared before the number of pods", survived_before=True),
    M("importance-reversed", "preemption/importance.py",
      'return sorted(units, key=attrgetter("importance"))',
      'return sorted(units, key=attrgetter("importance"), reverse=True)',
      "MoreImportantVictim as a whole (the audit reversed importance.py's unused key)", survived_before=True),
    M("importance-start-flipped", "preemption/importance.py",
      "return (-priority, -rank, -size, earliest_start, first_uid)",
      "return (-priority, -rank, -size, -earliest_start, first_uid)",
      "MoreImportantVictim: the earlier start time is more important"),
    M("importance-priority-flipped", "preemption/importance.py",
      "return (-priority, -rank, -size, earliest_start, first_uid)",
      "return (priority, -rank, -size, earliest_start, first_uid)",
      "MoreImportantVictim: higher priority is more important"),
    M("group-member-pod-rank", "preemption/units.py",
      "rank_.append(PODGROUP_RANK)", "rank_.append(POD_RANK)",
      "NewPodVictim: a pod of a Single-mode group ranks as a PodGroup"),
    M("all-mode-ignored", "preemption/units.py",
      "        if g.disruption_mode == ALL:\n            best = g",
      "        if False:\n            best = g",
      "getHighestAllAncestor: disruptionMode All groups are preempted atomically"),
    M("lowest-all-ancestor", "preemption/units.py",
      "        if g.disruption_mode == ALL:\n            best = g",
      "        if g.disruption_mode == ALL and best is None:\n            best = g",
      "getHighestAllAncestor: the highest All ancestor is the unit"),
    M("own-priority-not-group", "preemption/units.py",
      "            return group_priority(root), f\"{root.kind} {root.key}\"",
      "            return pod.priority or 0, f\"{root.kind} {root.key}\"",
      "getPodPriority: a group pod takes its root group's priority"),
    M("victims-equal-priority", "preemption/units.py",
      "                prio = pod.priority or 0\n                if limit is not None and prio >= limit:",
      "                prio = pod.priority or 0\n                if limit is not None and prio > limit:",
      "SelectVictimsOnDomain: only strictly lower-priority units are victims"),
    # ---- PDBs ----------------------------------------------------------------------------------
    M("pdb-disrupted-ignored", "preemption/pdb.py",
      "if pod.name in pdb.disrupted_pods:", "if False:",
      "FilterVictimsWithPDBViolation: pods in status.disruptedPods consume no budget", survived_before=True),
    M("pdb-keep-consuming", "preemption/pdb.py",
      "                    break  # podIsViolating returns at the first violated budget\n", "",
      "FilterVictimsWithPDBViolation (v1.37.2): stop at the first violated PDB", survived_before=True),
    M("pdb-off-by-one", "preemption/pdb.py",
      "if allowed[i] < 0:", "if allowed[i] <= 0:",
      "FilterVictimsWithPDBViolation: violating only when the budget goes below zero"),
    M("pdb-expressions-ignored", "preemption/pdb.py",
      "    if not sel.match_expressions:\n        labels = pod.labels",
      "    if True:\n        labels = pod.labels",
      "LabelSelectorAsSelector: matchExpressions are part of the selector"),
    M("pdb-violating-not-first", "preemption/workload.py",
      "order_units = violating + non_violating", "order_units = non_violating + violating",
      "SelectVictimsOnDomain: PDB-violating units are reprieved first"),
    M("columnar-pdb-violating-not-first", "preemption/candidates.py",
      "return violating + non_violating,", "return non_violating + violating,",
      "SelectVictimsOnDomain: PDB-violating units are reprieved first (the columnar fast path)"),
    M("columnar-trivial-ignores-anti-affinity", "preemption/candidates.py",
      "trivial = (node >= 0) & ~anti", "trivial = node >= 0",
      "a victim's required anti-affinity is a cross-node term: its unit is checked wherever it runs"),
    M("columnar-importance-reversed", "preemption/importance.py",
      "return _lexsort_then_uid([inputs[w] * sign for w, sign in layout], uids)",
      "return _lexsort_then_uid([inputs[w] * -sign for w, sign in layout], uids)",
      "MoreImportantVictim as a whole (the columnar order of the fast path)"),
    M("columnar-violate-count-lost", "preemption/units.py",
      "                u.violate_count = self.violate[k]", "                pass",
      "FilterVictimsWithPDBViolation: a unit built after the classification still counts its violating pods"),
    M("columnar-trivial-ignores-touched", "preemption/candidates.py",
      "trivial &= ~np.isin(node, np.fromiter(plan.touched, np.int64, len(plan.touched)))", "pass",
      "selectVictimsOnDomain: a unit on a node receiving a preemptor pod is checked"),
    # ---- default preemption ---------------------------------------------------------------------
    M("unresolvable-nodes-tried", "preemption/default.py",
      "if (st := r.statuses.get(i)) is not None and st.code == UNSCHEDULABLE]",
      "if (st := r.statuses.get(i)) is not None and st.code in (UNSCHEDULABLE, UNRESOLVABLE)]",
      "nodesWherePreemptionMightHelp: UnschedulableAndUnresolvable nodes are skipped"),
    M("pick-pdb-criterion-dropped", "preemption/default.py",
      '("fewest PDB violations", lambda c: -c.num_pdb)', '("fewest PDB violations", lambda c: 0)',
      "pickOneNodeForPreemption: fewest PDB violations first"),
    M("pick-fewest-victims-flipped", "preemption/default.py",
      '("fewest victims", lambda c: -len(c.pods))', '("fewest victims", lambda c: len(c.pods))',
      "pickOneNodeForPreemption: fewest victims"),
    M("pick-highest-priority-flipped", "preemption/default.py",
      'lambda c: -(c.pods[0].priority or 0))', 'lambda c: (c.pods[0].priority or 0))',
      "pickOneNodeForPreemption: lowest highest-priority victim"),
    M("pick-final-tiebreak", "preemption/default.py",
      "left.sort(key=lambda c: names[c.node])", "left.sort(key=lambda c: names[c.node], reverse=True)",
      "pickOneNodeForPreemption: final tie (ours: smallest node name)"),
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
    ap.add_argument("-k", dest="select", default="", help="run only mutants whose id contains this")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("-v", action="store_true", help="show pytest output")
    args = ap.parse_args(argv)
    # On SIGTERM unwind like Ctrl-C: subprocess.run kills the running pytest and the temporary
    # copy of the package is removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    chosen = [m for m in MUTANTS if args.select in m.id]
    for m in chosen:  # fail fast on a stale mutant before running anything
        n = (PKG / m.path).read_text().count(m.old)
        if n != 1:
            raise SystemExit(f"mutant {m.id}: original text found {n} times in kubectl_wap/{m.path}")
    if args.list:
        for m in chosen:
            print(f"{m.id:32} {m.path:28} {m.rule}")
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
