"""Node-local values over every node, refreshed only where the cluster state changed.

NodeResourcesFit's verdict and its LeastAllocated and BalancedAllocation scores depend, for a pod
shape, on one node's row of the state alone (its allocatable, requested and non-zero sums, pod
count). The pods of a gang share one shape and, between two of them, only the node the first was
assumed on changes: recomputing those values over thousands of nodes for every pod was most of a
placement's time. Here they are kept per (state, function, shape) for all nodes, and brought up to
date from ClusterState's change feed: `touched` (the node of every single-pod change, in order) and
`epoch` (moves on every change that may touch any node: bulk additions and removals, a bulk
rollback), which forces a full recomputation. A new resource column changes no existing column,
so values of shapes that do not request it stay valid; a shape that requests it is new.

`rows(idx)` must be elementwise over nodes (row k of the result depends only on node idx[k]), and
`one(i)` must give exactly row i of it (the same integer and IEEE float operations, in plain
Python): then the values refreshed for a few nodes are those a full recomputation gives
(tests/test_nodecache.py holds the two equal over random sequences of changes, and `one` equal to
`rows` on every node).
"""

from __future__ import annotations

from typing import Any, Callable, Hashable

import numpy as np

from .state import ClusterState

# (state token, function name, shape) -> [epoch, len(touched) seen, values over all nodes]
_CACHE: dict[tuple, list] = {}
_MAX_ENTRIES = 512
_ONE_BY_ONE = 16  # up to this many changed nodes are refreshed with `one`


def over_all_nodes(state: ClusterState, name: str, shape: Hashable,
                   rows: Callable[[np.ndarray], np.ndarray], one: Callable[[int], Any]) -> np.ndarray:
    """The values of `rows` for every node (read-only: index it, never write to it). `one(i)` is
    the same value for node i alone, in plain Python: refreshing the node or two a gang pod
    changed costs microseconds that way, against ~25 numpy calls of `rows` on a tiny array."""
    key = (state.token, name, shape)
    entry = _CACHE.get(key)
    seen = len(state.touched)
    if entry is None or entry[0] != state.epoch or entry[1] > seen:
        if len(_CACHE) >= _MAX_ENTRIES:
            _CACHE.clear()
        values = rows(np.arange(len(state.nodes), dtype=np.intp))
        values.flags.writeable = False
        _CACHE[key] = [state.epoch, seen, values]
        return values
    values = entry[2]
    if entry[1] < seen:
        changed = set(state.touched[entry[1]:])
        values.flags.writeable = True
        if len(changed) <= _ONE_BY_ONE:
            for i in changed:
                values[i] = one(i)
        else:
            idx = np.fromiter(changed, np.intp, len(changed))
            values[idx] = rows(idx)
        values.flags.writeable = False
        entry[1] = seen
    return values
