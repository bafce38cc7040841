"""Queue-manager holds visible on the pods themselves: only what the objects say, never guessed.

- Kueue (pod integration) gates pods with `kueue.x-k8s.io/...` scheduling gates (`admission`
  until the workload is admitted, `topology` until topology assignment) and labels them with
  `kueue.x-k8s.io/queue-name`.
- KAI Scheduler queues pods by the `kai.scheduler/queue` label (older: `runai/queue`); such pods
  name KAI in `schedulerName`, so kube-scheduler never considers them.
"""

from __future__ import annotations

from ..model import Pod

KUEUE_PREFIX = "kueue.x-k8s.io/"
KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"
KAI_QUEUES = ("kai.scheduler/queue", "runai/queue")


def holds_of(pods: list[Pod]) -> list[str]:
    """'held by <manager> (...)' lines for the pods of one row, most specific first."""
    out: list[str] = []
    kueue_gates = sorted({g for p in pods for g in p.scheduling_gates if g.startswith(KUEUE_PREFIX)})
    if kueue_gates:
        n = sum(1 for p in pods if any(g.startswith(KUEUE_PREFIX) for g in p.scheduling_gates))
        queues = sorted({p.labels[KUEUE_QUEUE] for p in pods if KUEUE_QUEUE in p.labels})
        q = f" queue {', '.join(queues)}," if queues else ""
        out.append(f"held by Kueue ({q} gate {', '.join(kueue_gates)} on {n} pod(s))".replace("( ", "("))
    for key in KAI_QUEUES:
        kai = [p for p in pods if key in p.labels and p.scheduler_name != "default-scheduler"]
        if kai:
            queues = sorted({p.labels[key] for p in kai})
            names = sorted({p.scheduler_name for p in kai})
            out.append(f"held by KAI Scheduler (queue {', '.join(queues)}; schedulerName {', '.join(names)})")
            break
    return out
