"""Kubernetes version profiles: the scheduler rules that changed between releases, as data.

Code asks the profile (`profile.pdb_empty_selector_matches_all`), never the version number. The
analysis runs under one profile, passed down from the CLI with the feature gates
(`preemption/gates.py Gates.profile`).

* **1.37** is what kube-scheduler v1.37.2 does: read in its source and measured by the oracle
  (tests/oracle/, the real scheduler built from k8s.io/kubernetes v1.37.2).
* **1.38** follows upstream's development branch (../shared/docs/upstream-changes.md): used only
  when asked for, since it is not released.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Profile:
    version: str
    released: bool
    # preemption/util.go FilterVictimsWithPDBViolation. v1.37.2: `if len(pod.Labels) == 0
    # { return false }` and "A PDB with a nil or empty selector matches nothing"
    # (`selector.Empty()` skips the PDB). PR #141785 (development branch, after 1.37): `{}`
    # selects every pod of the namespace, unlabeled pods included; only nil matches nothing.
    pdb_empty_selector_matches_all: bool
    pdb_unlabeled_pods_can_violate: bool


V1_37 = Profile("1.37", released=True, pdb_empty_selector_matches_all=False, pdb_unlabeled_pods_can_violate=False)
# UPSTREAM-DIFF: 1.38 is not released; its rules come from upstream's newest code and tests
# (upstream-changes.md section 3), not from a released scheduler.
V1_38 = Profile("1.38", released=False, pdb_empty_selector_matches_all=True, pdb_unlabeled_pods_can_violate=True)

PROFILES = {p.version: p for p in (V1_37, V1_38)}
# The newest released version's profile: what a snapshot without a server version gets.
DEFAULT = V1_37
