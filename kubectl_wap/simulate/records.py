"""What the cycle simulator decided, as plain records (the report layer words them).

Objects are named by kind/namespace/name, never held as engine objects, so a simulation trace
can be written out and read back without the engine."""

from __future__ import annotations

from dataclasses import dataclass, field

# Actions of one scheduling cycle.
BIND = "bind"  # pods fit as the cluster stands and bind (no PostFilter)
PREEMPT = "preempt"  # PostFilter chose victims; the pods are nominated, victims removed
UNSCHEDULABLE = "unschedulable"  # the cycle failed and preemption did not help (or is not allowed)
WAITING = "waiting"  # ongoing preemption: victims still terminating on the nominated node(s)
INVALID = "invalid"  # validation or priority admission refuses the object: never scheduled
CUT_OFF = "cut-off"  # a preemption storm: the simulator stops scheduling the object

# Why the simulation ended.
DONE = "queue-empty"  # every pending object was placed
NO_PROGRESS = "no-progress"  # objects are left, and nothing can change their outcome
MAX_CYCLES = "max-cycles"
TIME_LIMIT = "time-limit"

# Events between cycles.
RECREATED = "recreated"  # a controller brought a victim back as a new pending pod
TERMINATED = "terminated"  # a victim's grace period ended (--grace)
OTHER_SCHEDULER = "placed-by-other-scheduler"  # a recreated pod of another scheduler bound at once
JOB_FAILED = "job-failed"  # a Job exceeded its backoffLimit: its victims are not recreated
NOT_RECREATED = "not-recreated"  # a victim without a controller: it is gone


@dataclass(slots=True, frozen=True)
class ObjectRef:
    kind: str  # Pod | PodGroup | CompositePodGroup
    namespace: str
    name: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass(slots=True, frozen=True)
class Victim:
    namespace: str
    name: str
    node: str
    priority: int
    unit: ObjectRef  # the preemption unit the pod was taken with
    owner: str  # "Kind/name" of its controller, "" without one
    origin: str  # ns/name of the first pod of its lineage (itself unless it was recreated)
    times: int  # how many times its lineage has been evicted, this one included
    violates_pdb: bool
    started: float | None  # status.startTime (None: unknown)
    gpus: dict[str, int] = field(default_factory=dict)  # extended resources with "gpu" in the name

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(slots=True, frozen=True)
class CycleRecord:
    n: int
    time: float  # simulated time (POSIX seconds)
    obj: ObjectRef
    priority: int
    action: str
    outcome: str  # the engine's outcome name (Preempt, NoPreemptionNeeded, ...)
    message: str
    placed: tuple[tuple[str, str], ...] = ()  # (pod ns/name, node): bound (bind) or nominated (preempt)
    victims: tuple[Victim, ...] = ()
    pending_left: int = 0  # pods of the object still pending after the cycle
    caused_by: tuple[int, ...] = ()  # cycles whose victims, recreated, are in this object
    depth: int = 0  # cascade depth of a preemption (1 = original pending work preempted)
    pdb_violations: int = 0


@dataclass(slots=True, frozen=True)
class Event:
    time: float
    kind: str
    pod: str  # ns/name
    detail: str = ""  # the new pod's name (recreated), the node (other scheduler), the Job
    cycle: int = 0  # the cycle that caused it


@dataclass(slots=True)
class Storm:
    preemptor: ObjectRef
    victim: str  # origin ns/name of the victim lineage
    cycles: list[int] = field(default_factory=list)  # the preemption cycles that took it
    cut_off: bool = False


@dataclass(slots=True, frozen=True)
class Pending:
    obj: ObjectRef
    priority: int
    pods: int
    reason: str


@dataclass(slots=True)
class Simulation:
    start: float
    end: float = 0.0
    cycles: list[CycleRecord] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    storms: list[Storm] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)
    stop_reason: str = ""
    warnings: list[str] = field(default_factory=list)
    bound: int = 0  # pods bound by the simulation
    wall_seconds: float = 0.0

    @property
    def evictions(self) -> list[tuple[int, Victim]]:
        return [(c.n, v) for c in self.cycles for v in c.victims]
