#!/usr/bin/env bash
# The real kube-apiserver e2e tier: build (or reuse) kube-apiserver + etcd, then run tests/e2e.
#
#   bash tests/e2e/run.sh [pytest args...]
#
# Uses the python of the active virtualenv (.ci/run activates .venv). Exits non-zero, loudly, when the
# server cannot be built (for instance the Debian mirrors cannot be reached): this tier never skips
# itself once asked for.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${PYTHON:-python}"
t0=$(date +%s)
if ! bash tests/e2e/build_apiserver.sh; then
    echo "e2e: FAILED: could not build kube-apiserver/etcd for the real-apiserver tier (see the message above)" >&2
    exit 1
fi
t1=$(date +%s)
echo "e2e: server binaries ready in $((t1 - t0)) s" >&2
# pyproject addopts already has -q: a second -q would drop the "N passed" summary line
KUBECTL_WAP_E2E=1 "$PY" -m pytest tests/e2e -p no:cacheprovider "$@"
echo "e2e: tests took $(( $(date +%s) - t1 )) s" >&2
