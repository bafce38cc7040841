#!/usr/bin/env bash
# One job of .github/workflows/release.yml, for the machine it runs on: a build venv pinned to
# plugins/bundle-lock.txt, the standalone build packed for Krew (plugins/release.py), a copy of
# krew-manifest.yaml with this platform's sha256/uri/version, and the smoke test: the real Krew
# installs the archive into a temporary KREW_ROOT and the real kubectl runs `kubectl wap --version`
# and the demo whatif with no Python on PATH (plugins/smoke.py). The workflow runs exactly this
# script on each runner; here (linux/amd64) `bash plugins/release-job.sh` runs the same steps.
#
#   RELEASE_OUT  where the archive, the manifest copy and smoke.json go (default dist/release)
#   PYTHON       the interpreter that builds (default python3; the workflow's is 3.12)
#   KREW_BIN     a built krew binary, else `go install sigs.k8s.io/krew/cmd/krew@v0.4.3`
set -euo pipefail
cd "$(dirname "$0")/.."
out=${RELEASE_OUT:-dist/release}
venv=${RELEASE_VENV:-.venv-release}
step_start=$(date +%s)
step() { local now; now=$(date +%s); echo "== release step: $1: $((now - step_start)) s"; step_start=$now; }

mkdir -p "$out"
"${PYTHON:-python3}" -m venv "$venv"
# shellcheck disable=SC1091
if [ -f "$venv/Scripts/activate" ]; then . "$venv/Scripts/activate"; else . "$venv/bin/activate"; fi
# the runtime dependencies at the versions the Python archive bundles; PyInstaller and kubectl from
# pyproject.toml's `release` extra
python -m pip install --quiet --disable-pip-version-check -c plugins/bundle-lock.txt '.[release]'
step "build venv (bundle-lock.txt + PyInstaller + kubectl)"

cp krew-manifest.yaml "$out/krew-manifest.yaml"
python -m plugins.build --release --out "$out" --manifest "$out/krew-manifest.yaml"
step "standalone build + archive + manifest"

archive=$(python -c 'from plugins.release import host_release_target as t; print(t().archive_name)')
python -m plugins.smoke --archive "$out/$archive" --manifest "$out/krew-manifest.yaml" \
  ${KREW_BIN:+--krew "$KREW_BIN"} > "$out/smoke.json"
cat "$out/smoke.json"
step "smoke test (real Krew + kubectl, no Python on PATH)"
