"""The real kube-scheduler as a test oracle (issue 13).

`tests/oracle/` is a small Go module (our code only) that runs the unmodified kube-scheduler and
kube-apiserver of `k8s.io/kubernetes` (the version pinned in go.mod) on embedded etcd, the way
upstream's integration tests run them. This package builds it and talks to it:

* `build()` compiles the oracle once (Go build cache makes later builds fast) and returns the binary.
* `case_for(items, kind, namespace, name)` turns a cluster (plain Kubernetes objects, anything our
  `--snapshot` reads) and a what-if question into one oracle case.
* `run(cases, gates)` runs cases through one apiserver and returns the oracle's answers, in the
  report contract's shape (outcome, message, victims, nominatedNode, placements).

`python -m tests.oracle whatif podgroup NAME -n NS --snapshot FILE -o json` is the same question
as `kubectl wap whatif ...`, answered by the real scheduler.
"""

from __future__ import annotations

from .driver import (
    DEFAULT_GATES,
    OracleError,
    build,
    case_for,
    oracle_version,
    run,
)

__all__ = ["DEFAULT_GATES", "OracleError", "build", "case_for", "oracle_version", "run"]
