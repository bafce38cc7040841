"""Reference checks between loaded objects (section 3.3 of the semantics doc).

Upstream tolerates every dangling reference: a pod whose PodGroup is missing waits in PreEnqueue
(it is not schedulable and, as a victim, falls back to its own priority); a missing parent stops
the walk up the hierarchy; the walk is capped at WorkloadMaxTreeDepth and is cycle-safe. So these
are warnings, never errors."""

from __future__ import annotations

from ...model import WORKLOAD_MAX_TREE_DEPTH, Snapshot


def check_references(snap: Snapshot) -> None:
    pgs = {(g.namespace, g.name) for g in snap.pod_groups}
    cpgs = {(c.namespace, c.name): c for c in snap.composite_pod_groups}
    nodes = {n.name for n in snap.nodes}
    missing_pg: dict[tuple[str, str], int] = {}
    missing_node: dict[str, int] = {}
    for p in snap.pods:
        if p.pod_group_name and (p.namespace, p.pod_group_name) not in pgs:
            missing_pg[(p.namespace, p.pod_group_name)] = missing_pg.get((p.namespace, p.pod_group_name), 0) + 1
        if p.scheduled and p.node_name not in nodes:
            missing_node[p.node_name] = missing_node.get(p.node_name, 0) + 1
    for (ns, name), n in sorted(missing_pg.items()):
        snap.warnings.append(
            f"{n} pod(s) reference PodGroup {ns}/{name}, which is not in the snapshot: as victims they use their own priority"
        )
    for node, n in sorted(missing_node.items()):
        snap.warnings.append(f"{n} pod(s) are bound to node {node}, which is not in the snapshot: they are ignored")
    for g in list(snap.pod_groups) + list(snap.composite_pod_groups):
        parent = g.parent
        seen = {(g.namespace, g.name, type(g).__name__)}
        depth = 0
        while parent:
            depth += 1
            c = cpgs.get((g.namespace, parent))
            if c is None:
                snap.warnings.append(
                    f"{type(g).__name__} {g.key} has parent CompositePodGroup {g.namespace}/{parent}, which is not in the snapshot"
                )
                break
            k = (c.namespace, c.name, "CompositePodGroup")
            if k in seen:
                snap.warnings.append(f"{type(g).__name__} {g.key}: parent chain has a cycle at {c.key}; the walk stops there")
                break
            seen.add(k)
            if depth > WORKLOAD_MAX_TREE_DEPTH:
                snap.warnings.append(
                    f"{type(g).__name__} {g.key}: hierarchy deeper than {WORKLOAD_MAX_TREE_DEPTH} levels; the scheduler stops walking after {WORKLOAD_MAX_TREE_DEPTH}"
                )
                break
            parent = c.parent
