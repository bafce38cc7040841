"""The release workflow and the manifest under the upstream tools (issue 32): actionlint
(github.com/rhysd/actionlint) on .github/workflows/release.yml and Krew's own
validate-krew-manifest (sigs.k8s.io/krew v0.4.3) on krew-manifest.yaml, both built from the Go
module proxy into the test's own bin directory. They need `go` and a module proxy, so they run in
the .ci/run release tier (KUBECTL_WAP_RELEASE_TIER=1), like the oracle builds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from plugins.smoke import go_install  # noqa: E402

ACTIONLINT = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"
VALIDATE = "sigs.k8s.io/krew/cmd/validate-krew-manifest@v0.4.3"
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"

pytestmark = pytest.mark.skipif(
    os.environ.get("KUBECTL_WAP_RELEASE_TIER") != "1" or shutil.which("go") is None,
    reason="the release tier (KUBECTL_WAP_RELEASE_TIER=1 and go on PATH; .ci/run sets it)",
)


@pytest.fixture(scope="module")
def gobin(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("gobin")


def test_release_workflow_passes_actionlint(gobin):
    exe = go_install(ACTIONLINT, gobin)
    r = subprocess.run([str(exe), "-no-color", str(WORKFLOW)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_actionlint_catches_a_broken_workflow(gobin, tmp_path):
    """The check can fail: an unknown runner label (the retired macos-13) is refused."""
    exe = go_install(ACTIONLINT, gobin)
    bad = tmp_path / "release.yml"
    bad.write_text(WORKFLOW.read_text().replace("runner: macos-15-intel", "runner: macos-13"))
    r = subprocess.run([str(exe), "-no-color", str(bad)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and 'label "macos-13" is unknown' in r.stdout


def test_workflow_runs_the_job_script_on_every_platform():
    """What runs here (plugins/release-job.sh) is what each job runs."""
    import yaml

    wf = yaml.safe_load(WORKFLOW.read_text())
    build = wf["jobs"]["build"]
    plats = [m["platform"] for m in build["strategy"]["matrix"]["include"]]
    assert plats == ["linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64", "windows-amd64"]
    assert len({m["runner"] for m in build["strategy"]["matrix"]["include"]}) == 5
    assert [s["run"] for s in build["steps"] if "release-job.sh" in s.get("run", "")] == ["bash plugins/release-job.sh"]


def test_manifest_passes_krews_validator(gobin, tmp_path):
    exe = go_install(VALIDATE, gobin)
    # the validator wants the file named after the plugin, as in krew-index (plugins/wap.yaml);
    # -skip-install: its install step would download the release uri (our smoke test installs
    # the built archive with --archive instead)
    target = tmp_path / "wap.yaml"
    shutil.copy(ROOT / "krew-manifest.yaml", target)
    r = subprocess.run([str(exe), "-manifest", str(target), "-skip-install"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "structural validation OK" in r.stderr
    bad = tmp_path / "bad" / "wap.yaml"
    bad.parent.mkdir()
    bad.write_text(target.read_text().replace("os: darwin\n        arch: arm64", "os: darwin\n        arch: amd64"))
    r = subprocess.run([str(exe), "-manifest", str(bad), "-skip-install"], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "overlapping" in r.stderr
