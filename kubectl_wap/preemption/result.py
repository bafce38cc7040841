"""Plain result objects of an analysis. The report layer renders them; nothing is recomputed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..framework.status import Status
from ..model import Pod
from .units import VictimUnit

NO_PREEMPTION_NEEDED = "NoPreemptionNeeded"
PREEMPT = "Preempt"
UNSCHEDULABLE = "Unschedulable"
NOT_ELIGIBLE = "NotEligible"
INVALID = "Invalid"

# Pod-group cycles of one analysis (preemption/workload.py _cycles).
BIND = "bind"  # the cycle placed pods without preemption; they bind
PREEMPT_CYCLE = "post-filter"  # the cycle failed and PodGroupPostFilter ran
# Enough for every group: each binding cycle places at least one pod, and a group has at most a
# few thousand pods; the loop also ends at the first cycle that does not bind.
DEFAULT_MAX_CYCLES = 1_000_000


@dataclass(slots=True)
class Preemptor:
    kind: str  # PodGroup | CompositePodGroup | Pod
    namespace: str
    name: str
    priority: int
    priority_source: str
    preemption_policy: str
    policy_source: str
    pods: list[Pod] = field(default_factory=list)  # pending pods to place
    running: list[Pod] = field(default_factory=list)  # members already scheduled


_SPARED = "spared: every placed preemptor pod still fits with it back"


@dataclass(slots=True)
class UnitVerdict:
    """What happened to one candidate unit in the reprieve loop."""

    unit: VictimUnit
    order: int  # position in the reprieve order
    reprieved: bool
    violates_pdb: bool
    pdbs: list[str] = field(default_factory=list)
    failed_pod: Pod | None = None  # the preemptor pod that no longer fit with the unit back
    failed_node: str = ""
    failed_status: Status | None = None

    @property
    def reason(self) -> str:
        if self.reprieved and not self.violates_pdb:
            return _SPARED  # most of a large cluster's candidates: one shared string
        pdb = f"; violates PDB {', '.join(self.pdbs)}" if self.violates_pdb else ""
        if self.reprieved:
            return f"spared: every placed preemptor pod still fits with it back{pdb}"
        if self.failed_pod is not None and self.failed_status is not None:
            return (
                f"needed: with it back, preemptor pod {self.failed_pod.key} fails {self.failed_status.plugin or 'Filter'} "
                f"on {self.failed_node} ({self.failed_status.message}){pdb}"
            )
        return f"needed{pdb}"


@dataclass(slots=True)
class Cycle:
    """One scheduling cycle of the analysed group: what bound, or what PodGroupPostFilter decided."""

    n: int
    action: str  # BIND | PREEMPT_CYCLE
    placed: list[tuple[Pod, str]] = field(default_factory=list)  # bound (BIND) or proposed/nominated
    victims: list["UnitVerdict"] = field(default_factory=list)
    outcome: str = ""  # the outcome of a PREEMPT_CYCLE cycle


@dataclass(slots=True)
class Result:
    outcome: str
    message: str
    preemptor: Preemptor
    algorithm: str = ""  # workload-aware | default | none
    placements: list[tuple[Pod, str]] = field(default_factory=list)
    unplaced: list[tuple[Pod, str]] = field(default_factory=list)
    nominated_node: str | None = None
    victims: list[UnitVerdict] = field(default_factory=list)  # units preempted, output order
    # Spared units, and every unit in reprieve order: lists, or for workload-aware preemption's
    # fast path candidates.Verdicts (built when read; see verdict_flags and spared_on).
    reprieved: Sequence[UnitVerdict] = field(default_factory=list)
    candidates: Sequence[UnitVerdict] = field(default_factory=list)
    num_pdb_violations: int = 0
    num_potential: int = 0  # candidate units (lower priority) considered by workload-aware preemption
    warnings: list[str] = field(default_factory=list)
    # pods of the input whose requests were defaulted from limits (Snapshot.defaulted), for the report
    defaulted: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    # hypothetical pods create-time admission changed (Snapshot.admitted), for the report
    admitted: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)  # numbered explanation, in decision order
    # default preemption: candidate nodes considered and their victims
    node_candidates: list[dict] = field(default_factory=list)
    # pod-group analyses: every cycle, in order (placements and victims above summarize them)
    cycles: list[Cycle] = field(default_factory=list)

    @property
    def victim_pods(self) -> list[Pod]:
        return [p for v in self.victims for p in v.unit.pods]


def verdict_flags(verdicts: Sequence[UnitVerdict]) -> tuple[list[bool], list[bool]]:
    """(spared, violates a PDB) per verdict; a Verdicts sequence answers without building them."""
    flags = getattr(verdicts, "flags", None)
    if flags is not None:
        return flags()
    return [v.reprieved for v in verdicts], [v.violates_pdb for v in verdicts]


def spared_on(verdicts: Sequence[UnitVerdict], nodes: set[str]) -> list[UnitVerdict]:
    """The verdicts whose unit has a pod on one of these nodes (by the pods' nodeName)."""
    pick = getattr(verdicts, "on_nodes", None)
    if pick is not None:
        return pick(nodes)
    return [v for v in verdicts if any(p.node_name in nodes for p in v.unit.pods)]
