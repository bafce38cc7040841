#!/usr/bin/env bash
# The real kube-apiserver e2e tier: build (or reuse) the oracle binary, whose TestServe is
# kube-apiserver v1.37.2 with embedded etcd (tests/oracle/serve_test.go), then run tests/e2e.
#
#   bash tests/e2e/run.sh [pytest args...]
#
# Uses the python of the active virtualenv (.ci/run activates .venv) and Go on PATH. Exits non-zero,
# loudly, when the binary cannot be built: this tier never skips itself once asked for.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${PYTHON:-python}"
t0=$(date +%s)
# A no-op when tests/oracle/bin/oracle.test is newer than every Go source (go test -c otherwise;
# Go's build cache makes a rebuild about a minute, a first build on a new machine several).
if ! "$PY" -m tests.oracle build; then
    echo "e2e: FAILED: could not build tests/oracle/bin/oracle.test (kube-apiserver v1.37.2) for the real-apiserver tier" >&2
    exit 1
fi
# and kube-apiserver v1.38.0-beta.0 (tests/oracle/v1.38: CompositePodGroups at v1beta1)
if ! "$PY" -m tests.oracle build --version 1.38; then
    echo "e2e: FAILED: could not build tests/oracle/bin/oracle-1.38.test (kube-apiserver v1.38.0-beta.0) for the real-apiserver tier" >&2
    exit 1
fi
t1=$(date +%s)
echo "e2e: server binary ready in $((t1 - t0)) s" >&2
# pyproject addopts already has -q: a second -q would drop the "N passed" summary line
KUBECTL_WAP_E2E=1 "$PY" -m pytest tests/e2e -p no:cacheprovider "$@"
echo "e2e: tests took $(( $(date +%s) - t1 )) s" >&2
