"""Scale-up simulation: add synthetic template nodes to the snapshot and rerun the same analysis.

A set of additions "works" when the analysis says NoPreemptionNeeded and every pending pod of the
preemptor is placed. The search tries each template alone (k = 1..maxNodes, linear, so the first
hit is the fewest), then, if no template alone works, grows a mixed set greedily one node at a
time, preferring the addition that leaves the fewest victim pods / the most placeable pods.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..preemption.analyze import analyze
from ..preemption.gates import Gates
from ..preemption.result import NO_PREEMPTION_NEEDED, PREEMPT, Result
from ..model import Snapshot
from .templates import Template


@dataclass(slots=True)
class Trial:
    additions: dict[str, int]  # template name -> count
    result: Result

    @property
    def placed(self) -> int:
        return len(self.result.placements) if self.result.outcome in (NO_PREEMPTION_NEEDED, PREEMPT) else 0

    @property
    def pending(self) -> int:
        return len(self.result.preemptor.pods)

    @property
    def works(self) -> bool:
        return self.result.outcome == NO_PREEMPTION_NEEDED and self.placed >= self.pending

    @property
    def works_min(self) -> bool:
        """Schedulable without preemption, perhaps with only the gang's minCount placed."""
        return self.result.outcome == NO_PREEMPTION_NEEDED and self.placed > 0

    @property
    def victim_pods(self) -> int:
        return len(self.result.victim_pods)

    @property
    def victim_units(self) -> int:
        return len(self.result.victims)


def with_nodes(snap: Snapshot, templates: dict[str, Template], additions: dict[str, int]) -> Snapshot:
    nodes = list(snap.nodes)
    taken = {n.name for n in nodes}
    for name, k in additions.items():
        t = templates[name]
        for i in range(1, k + 1):
            node = t.node(i)
            j = i
            while node.name in taken:  # never collide with a real node
                j += 1000
                node = t.node(j)
            taken.add(node.name)
            nodes.append(node)
    return replace(snap, nodes=nodes)


class Simulator:
    def __init__(self, snap: Snapshot, kind: str, namespace: str, name: str, gates: Gates | None, templates: list[Template]):
        self.snap, self.kind, self.namespace, self.name, self.gates = snap, kind, namespace, name, gates
        self.templates = {t.name: t for t in templates}
        self._cache: dict[tuple, Trial] = {}
        self.runs = 0

    def trial(self, additions: dict[str, int]) -> Trial:
        additions = {k: v for k, v in additions.items() if v > 0}
        key = tuple(sorted(additions.items()))
        tr = self._cache.get(key)
        if tr is None:
            self.runs += 1
            res = analyze(with_nodes(self.snap, self.templates, additions), self.kind, self.namespace, self.name, self.gates)
            tr = self._cache[key] = Trial(additions, res)
        return tr

    def cost(self, additions: dict[str, int]) -> float | None:
        total = 0.0
        for name, k in additions.items():
            c = self.templates[name].cost_per_hour
            if c is None:
                return None
            total += c * k
        return total

    def fewest_alone(self, t: Template, require_all: bool = True) -> Trial | None:
        for k in range(1, t.max_nodes + 1):
            tr = self.trial({t.name: k})
            if tr.works if require_all else tr.works_min:
                return tr
        return None

    def greedy(self, candidates: list[Template], require_all: bool = True) -> Trial | None:
        cur: dict[str, int] = {}
        limit = sum(t.max_nodes for t in candidates)
        for _ in range(limit):
            best: tuple | None = None
            for t in candidates:
                if cur.get(t.name, 0) >= t.max_nodes:
                    continue
                add = dict(cur)
                add[t.name] = add.get(t.name, 0) + 1
                tr = self.trial(add)
                ok = tr.works if require_all else tr.works_min
                c = self.cost({t.name: 1})
                score = (not ok, tr.result.outcome != PREEMPT, tr.victim_pods, -tr.placed, c if c is not None else 0.0, t.name)
                if best is None or score < best[0]:
                    best = (score, add, tr, ok)
            if best is None:
                return None
            _, cur, tr, ok = best
            if ok:
                return tr
        return None
