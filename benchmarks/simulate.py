"""Timing of `kubectl wap simulate` (issue 14) on the generated clusters.

`python -m benchmarks.simulate --size S|M|L [--gangs 20]` loads the size's snapshot (generated on
first use, as benchmarks.run does), adds pending gangs until there are --gangs of them (copies
of the generator's GPU gang `gang-64`, 64 pods of one GPU each, every other one at priority
100,000 instead of 1,000,000, created one second apart) and plays every pending object with the
cycle simulator. Prints one JSON line: load, simulate (wall and CPU seconds), cycles, preemptions,
evicted pods, bound pods, what is left pending, and a digest of the timeline (the same input must
give the same digest)."""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from dataclasses import replace

from .generate import DEFAULT_OUT, ensure


def add_gangs(snap, want: int, template: str = "gang-64", namespace: str = "bench-gangs") -> int:
    """Copies of the template gang until `want` gangs are pending; returns how many were added."""
    # One pass over the pods (a scan per group was 11k x 150k pod reads at L: ~2 minutes per run).
    unbound = {(p.namespace, p.pod_group_name) for p in snap.pods if p.pod_group_name and not p.node_name}
    pending = {(g.namespace, g.name) for g in snap.pod_groups if (g.namespace, g.name) in unbound}
    tpl = next(g for g in snap.pod_groups if g.namespace == namespace and g.name == template)
    pods = [p for p in snap.pods if p.namespace == namespace and p.pod_group_name == template]
    added = 0
    k = 0
    while len(pending) + added < want:
        k += 1
        name = f"sim-gang-{k}"
        prio = 1_000_000 if k % 2 else 100_000
        cls = "high-priority" if k % 2 else "production"
        snap.pod_groups.append(replace(tpl, name=name, uid=f"{tpl.uid}-{k}", priority=prio, priority_class_name=cls,
                                       creation_timestamp=(tpl.creation_timestamp or 0) + k))
        for i, p in enumerate(pods):
            snap.pods.append(replace(p, name=f"{name}-{i}", uid=f"{p.uid}-{k}", pod_group_name=name, priority=prio,
                                     priority_class_name=cls, creation_timestamp=(p.creation_timestamp or 0) + k))
        added += 1
    return added


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="S")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--gangs", type=int, default=20)
    ap.add_argument("--time-limit", type=float, default=300.0, help="the simulator's wall-clock bound (its default: 300 s)")
    a = ap.parse_args(argv)

    from kubectl_wap.simulate import Options, simulate
    from kubectl_wap.simulate import records as R
    from kubectl_wap.snapshot.io.files import load_snapshot

    meta = ensure(a.size, a.out)
    t = time.perf_counter()
    snap = load_snapshot(meta["snapshot_path"])
    load_s = time.perf_counter() - t
    added = add_gangs(snap, a.gangs)
    t, c = time.perf_counter(), time.process_time()
    sim = simulate(snap, Options(time_limit=a.time_limit))
    wall_s, cpu_s = time.perf_counter() - t, time.process_time() - c
    pre = [x for x in sim.cycles if x.action == R.PREEMPT]
    digest = hashlib.sha256(json.dumps([(x.n, x.obj.kind, x.obj.namespace, x.obj.name, x.action, x.placed, [v.key for v in x.victims])
                                        for x in sim.cycles]).encode()).hexdigest()[:16]
    print(json.dumps({
        "size": a.size, "nodes": len(snap.nodes), "pods": len(snap.pods), "gangs_added": added, "load_s": round(load_s, 2),
        "simulate_s": round(wall_s, 2), "simulate_cpu_s": round(cpu_s, 2), "cycles": len(sim.cycles), "preemptions": len(pre),
        "evicted_pods": sum(len(x.victims) for x in pre), "bound_pods": sim.bound, "pending_objects": len(sim.pending),
        "stop": sim.stop_reason, "timeline_digest": digest,
    }))


if __name__ == "__main__":
    main()
