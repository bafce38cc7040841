"""Filter/plugin status codes as upstream's framework.Code (fwk.Code), and the Status value."""

from __future__ import annotations

from dataclasses import dataclass

SUCCESS = 0
ERROR = 1
UNSCHEDULABLE = 2
UNRESOLVABLE = 3  # UnschedulableAndUnresolvable: preemption cannot help on this node
WAIT = 4
SKIP = 5

CODE_NAMES = {
    SUCCESS: "Success",
    ERROR: "Error",
    UNSCHEDULABLE: "Unschedulable",
    UNRESOLVABLE: "UnschedulableAndUnresolvable",
    WAIT: "Wait",
    SKIP: "Skip",
}


@dataclass(slots=True, frozen=True)
class Status:
    code: int = SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code == SUCCESS

    @property
    def code_name(self) -> str:
        return CODE_NAMES[self.code]

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)


OK = Status()


def unschedulable(plugin: str, *reasons: str) -> Status:
    return Status(UNSCHEDULABLE, reasons, plugin)


def unresolvable(plugin: str, *reasons: str) -> Status:
    return Status(UNRESOLVABLE, reasons, plugin)
