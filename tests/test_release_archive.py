"""The Krew release archive (plugins/release.py, issue 32): the standalone one-folder build packed
so that Krew v0.4.3 can unpack it (no symlink), reproducibly, with the completion script and the
manifest's sha256 written by the same command.

The first part packs fake one-folder builds (cheap). The second part checks a real release build,
made by plugins/release-job.sh (the release workflow's job script), when KUBECTL_WAP_RELEASE_DIR
names its output directory (the .ci/run release tier does): the size budget, the real Krew
installing it, the demo and a live read through the real kubectl with no Python on PATH.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from plugins import build as B  # noqa: E402
from plugins import krew_manifest as K  # noqa: E402
from plugins import release as R  # noqa: E402

LINUX = R.RELEASE_TARGETS["linux-amd64"]
WINDOWS = R.RELEASE_TARGETS["windows-amd64"]


def fake_onedir(root: Path, exe: str = "kubectl-wap") -> Path:
    """A one-folder build shaped like PyInstaller 6's on linux: the binary, _internal/ with a
    package's bundled library and a top-level link to it, and a link elsewhere."""
    app = root / "kubectl-wap"
    (app / "_internal" / "numpy.libs").mkdir(parents=True)
    (app / "_internal" / "pkg").mkdir()
    (app / exe).write_bytes(b"\x7fELF binary")
    (app / exe).chmod(0o755)
    (app / "_internal" / "libpython3.12.so.1.0").write_bytes(b"\x7fELF libpython")
    (app / "_internal" / "numpy.libs" / "libopenblas.so").write_bytes(b"\x7fELF openblas")
    (app / "_internal" / "libopenblas.so").symlink_to("numpy.libs/libopenblas.so")
    (app / "_internal" / "pkg" / "data.txt").write_text("data")
    (app / "_internal" / "pkg" / "alias.txt").symlink_to("data.txt")
    (app / "GLIBC").write_text("2.36\n")
    return app


def tar_members(path: Path) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(path) as tar:
        return {m.name: m for m in tar.getmembers()}


# ---------------------------------------------------------------------------------------------
# packing (fake builds)


def test_archive_has_no_symlink_and_the_krew_layout(tmp_path):
    r = R.pack(fake_onedir(tmp_path / "b"), LINUX, tmp_path / "out")
    assert r.path.name == "kubectl-wap-linux-amd64.tar.gz"
    got = tar_members(r.path)
    # Krew v0.4.3 extracts only directories and regular files (downloader.go extractTARGZ)
    assert all(m.isdir() or m.isreg() for m in got.values()), [m.name for m in got.values() if m.issym()]
    assert sorted(got) == [
        "LICENSE", "_internal", "_internal/libpython3.12.so.1.0", "_internal/numpy.libs",
        "_internal/numpy.libs/libopenblas.so", "_internal/pkg", "_internal/pkg/alias.txt",
        "_internal/pkg/data.txt", "kubectl-wap", "kubectl_complete-wap",
    ]
    # the top-level link to a bundled library is dropped (the extension modules load it by RPATH);
    # any other link becomes a copy of its target
    with tarfile.open(r.path) as tar:
        assert tar.extractfile("_internal/pkg/alias.txt").read() == b"data"
        assert tar.extractfile("LICENSE").read() == B.LICENSE_FILE.read_bytes()
    assert got["kubectl-wap"].mode == 0o755 and got["kubectl_complete-wap"].mode == 0o755
    assert got["_internal/pkg/data.txt"].mode == 0o644
    assert {m.mtime for m in got.values()} == {B.TAR_MTIME} and {m.uid for m in got.values()} == {0}
    assert r.sha256 == hashlib.sha256(r.path.read_bytes()).hexdigest()


def test_archive_is_reproducible(tmp_path):
    """Same build tree -> same bytes, whatever order the files were made in."""
    a = R.pack(fake_onedir(tmp_path / "one"), LINUX, tmp_path / "out1")
    b_root = tmp_path / "two" / "kubectl-wap"
    b_root.mkdir(parents=True)
    # the same tree, created in reverse order and with other mtimes
    src = tmp_path / "one" / "kubectl-wap"
    for p in sorted(src.rglob("*"), reverse=True):
        q = b_root / p.relative_to(src)
        q.parent.mkdir(parents=True, exist_ok=True)
        if p.is_symlink():
            q.symlink_to(os.readlink(p))
        elif p.is_file():
            q.write_bytes(p.read_bytes())
            q.chmod(p.stat().st_mode & 0o777)
            os.utime(q, (1e9, 1e9))
    b = R.pack(b_root, LINUX, tmp_path / "out2")
    assert a.path.read_bytes() == b.path.read_bytes() and a.sha256 == b.sha256


def test_windows_archive_is_a_zip_without_the_completion_script(tmp_path):
    r = R.pack(fake_onedir(tmp_path / "b", exe="kubectl-wap.exe"), WINDOWS, tmp_path / "out")
    assert r.path.name == "kubectl-wap-windows-amd64.zip"
    with zipfile.ZipFile(r.path) as zf:
        names = zf.namelist()
        # off linux no link is dropped (only measured there): it becomes a copy
        assert zf.read("_internal/libopenblas.so") == b"\x7fELF openblas"
    assert "kubectl-wap.exe" in names and "LICENSE" in names and R.COMPLETE_NAME not in names
    assert R.pack(fake_onedir(tmp_path / "c", exe="kubectl-wap.exe"), WINDOWS, tmp_path / "out2").sha256 == r.sha256


def test_not_a_build_and_a_link_to_a_directory_are_refused(tmp_path):
    with pytest.raises(B.BuildError):
        R.members_of(tmp_path, LINUX)
    app = fake_onedir(tmp_path / "b")
    (app / "_internal" / "dirlink").symlink_to("pkg")
    with pytest.raises(B.BuildError, match="links to a directory"):
        R.members_of(app, LINUX)
    with pytest.raises(B.BuildError):
        B.write_targz(tmp_path / "x.tar.gz", [("a", "-> b", 0o777)])  # type: ignore[list-item]


def test_release_writes_sha256_uri_and_version_into_the_manifest(tmp_path):
    """`--release --from-build` packs and updates only this platform's uri and sha256 (and the
    version); everything else in the manifest is left as it was."""
    manifest = tmp_path / "wap.yaml"
    original = B.MANIFEST_FILE.read_text()
    manifest.write_text(original)
    host = R.host_release_target()
    exe = host.exe
    app = fake_onedir(tmp_path / "b", exe=exe)
    assert B.main(["--release", "--from-build", str(app), "--out", str(tmp_path / "out"),
                   "--manifest", str(manifest)]) == 0
    archive = tmp_path / "out" / host.archive_name
    doc = K.load(manifest)
    assert K.validate(doc, "wap") == []
    plat = K.platform_for(doc, host.os, host.arch)
    assert plat["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert plat["uri"].endswith(f"/v{B.project_version()}/{host.archive_name}")
    assert doc["spec"]["version"] == f"v{B.project_version()}"
    before, after = original.splitlines(), manifest.read_text().splitlines()
    changed = [b for a, b in zip(before, after) if a != b]
    assert len(before) == len(after) and all(c.strip().startswith(("uri:", "sha256:", "version:")) for c in changed)
    others = [p for p in yaml.safe_load(original)["spec"]["platforms"]
              if not K.selector_matches(p["selector"], host.os, host.arch)]
    assert others == [p for p in doc["spec"]["platforms"] if p is not plat]


def test_update_manifest_from_takes_every_archive_in_the_directory(tmp_path):
    manifest = tmp_path / "wap.yaml"
    manifest.write_text(B.MANIFEST_FILE.read_text())
    out = tmp_path / "out"
    R.pack(fake_onedir(tmp_path / "l"), LINUX, out)
    R.pack(fake_onedir(tmp_path / "w", exe="kubectl-wap.exe"), WINDOWS, out)
    found = R.update_manifest_from(out, manifest)
    assert sorted(r.target for r in found) == ["linux-amd64", "windows-amd64"]
    doc = K.load(manifest)
    for r in found:
        o, a = r.target.split("-")
        assert K.platform_for(doc, o, a)["sha256"] == B.sha256_file(r.path)
    assert K.platform_for(doc, "darwin", "arm64")["sha256"] == "0" * 64
    with pytest.raises(B.BuildError):
        R.update_manifest_from(tmp_path / "empty", manifest)


@pytest.mark.skipif(not Path("/bin/sh").exists(), reason="needs /bin/sh")
def test_completion_script_runs_the_binary_beside_it_under_the_completion_name(tmp_path):
    """kubectl_complete-wap (sh, in the archive) runs ./kubectl-wap with KUBECTL_WAP_AS set, also
    through a link from elsewhere and with an empty PATH (no dirname, readlink may be missing)."""
    store = tmp_path / "store"
    store.mkdir()
    (store / "kubectl-wap").write_text('#!/bin/sh\necho "$KUBECTL_WAP_AS" "$@"\n')
    (store / "kubectl-wap").chmod(0o755)
    (store / R.COMPLETE_NAME).write_bytes(R.COMPLETE_SCRIPT)
    (store / R.COMPLETE_NAME).chmod(0o755)
    link = tmp_path / "bin" / R.COMPLETE_NAME
    link.parent.mkdir()
    link.symlink_to(store / R.COMPLETE_NAME)
    for path in (os.environ.get("PATH", ""), ""):
        for exe in (store / R.COMPLETE_NAME, link):
            r = subprocess.run([str(exe), "__complete", "whatif", ""], capture_output=True, text=True,
                               env={"PATH": path}, timeout=30)
            if exe == link and not path:
                continue  # without readlink a link from elsewhere cannot be followed; Krew never makes one
            assert r.stdout.split() == ["kubectl_complete-wap", "__complete", "whatif"], (exe, path, r.stderr)


def test_standalone_entry_dispatches_on_its_name():
    """The PyInstaller binary (plugins/standalone.py) is one executable under two names."""
    from kubectl_wap.cli import complete_main, main
    from plugins.standalone import kubernetes_generated_modules, pyinstaller_args
    from plugins.standalone_entry import pick

    args = pyinstaller_args(Path("/o"), Path("/w"))
    assert "--onedir" in args and "kubectl_wap" in args and args[-1].endswith("standalone_entry.py")
    assert "--strip" not in args  # it breaks numpy's OpenBLAS (standalone.strip_interpreter)
    gen = kubernetes_generated_modules()
    assert "kubernetes.client.api" in gen and "kubernetes.client.models.v1_pod" in gen
    assert "kubernetes.client.api_client" not in gen and "kubernetes.client.models" not in gen
    assert pick("/x/kubectl-wap") is main and pick("kubectl_complete-wap") is complete_main
    os.environ["KUBECTL_WAP_AS"] = "kubectl_complete-wap"
    try:
        assert pick("/store/kubectl-wap") is complete_main
    finally:
        os.environ.pop("KUBECTL_WAP_AS", None)


def test_live_read_never_imports_the_generated_kubernetes_modules(tmp_path):
    """What lets the standalone build leave out kubernetes.client's generated APIs and models:
    a live whatif against the loopback API server imports none of them."""
    from fake_apiserver import FakeApiServer
    from test_diagnose_live import OBJECTS

    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'kubernetes.client.api' or name.startswith(('kubernetes.client.api.', 'kubernetes.client.models.')):\n"
        "            raise ImportError('left out of the standalone build: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "sys.argv = ['kubectl-wap'] + sys.argv[1:]\n"
        "from kubectl_wap.cli import main\n"
        "main()\n"
    )
    with FakeApiServer(OBJECTS) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        r = subprocess.run([sys.executable, "-c", code, "whatif", "pod", "winner", "-n", "a", "--kubeconfig", str(kc),
                            "-o", "json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["preemptor"]["name"] == "winner"


# ---------------------------------------------------------------------------------------------
# a real release build (plugins/release-job.sh output)

RELEASE_DIR = os.environ.get("KUBECTL_WAP_RELEASE_DIR")
needs_release = pytest.mark.skipif(
    not RELEASE_DIR, reason="set KUBECTL_WAP_RELEASE_DIR to plugins/release-job.sh's output (the .ci/run release tier does)"
)


@pytest.fixture(scope="module")
def release_dir() -> Path:
    assert RELEASE_DIR
    return Path(RELEASE_DIR).resolve()


@pytest.fixture(scope="module")
def archive(release_dir) -> Path:
    return release_dir / R.host_release_target().archive_name


@needs_release
def test_release_archive_is_within_the_size_budget(archive):
    """Issue 32's budget: <= 40 MB archive, <= 100 MB unpacked (plugins/README.md has the figures)."""
    size = archive.stat().st_size
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
    unpacked = sum(m.size for m in members)
    assert size <= R.MAX_ARCHIVE_BYTES, f"archive {size / 1e6:.1f} MB > {R.MAX_ARCHIVE_BYTES / 1e6:.0f} MB"
    assert unpacked <= R.MAX_UNPACKED_BYTES, f"unpacked {unpacked / 1e6:.1f} MB > {R.MAX_UNPACKED_BYTES / 1e6:.0f} MB"
    assert all(m.isreg() or m.isdir() for m in members)
    names = {m.name for m in members}
    assert {"kubectl-wap", "kubectl_complete-wap", "LICENSE", "_internal"} <= names
    # what the build leaves out stays out (plugins/standalone.py EXCLUDED_MODULES)
    assert not [n for n in names if n.startswith(("_internal/hypothesis", "_internal/pygments", "_internal/aiohttp"))]


@needs_release
def test_real_krew_installs_it_and_kubectl_runs_it_without_python(release_dir, archive, tmp_path):
    """`kubectl krew install --manifest --archive` with the real Krew v0.4.3 into a temporary
    KREW_ROOT, then `kubectl wap --version`, the demo whatif and completion through the real
    kubectl, PATH = KREW_ROOT/bin + kubectl + kubectl-krew only (plugins/smoke.py)."""
    from plugins import smoke

    krew = Path(os.environ["KREW_BIN"]) if os.environ.get("KREW_BIN") else None
    s = smoke.smoke(archive, release_dir / "krew-manifest.yaml", tmp_path, krew=krew, repeat=2)
    assert s.version == f"kubectl-wap {B.project_version()}"
    assert s.installed == ["LICENSE", "_internal", "kubectl-wap", "kubectl_complete-wap"]
    assert s.outcome == "Preempt" and s.victims == 10  # the demo's answer, as from the venv
    assert s.completion[:3] == ["podgroup", "compositepodgroup", "pod"]
    print(json.dumps(s.seconds))


@needs_release
def test_standalone_build_reads_a_live_cluster_and_says_what_it_is(archive, tmp_path):
    """The frozen binary, with no Python on PATH: a live whatif against the loopback API server
    (the kubernetes client without its generated modules), the demo with --optimal (highspy) and
    -o html, and `version -o json` naming the standalone build."""
    from fake_apiserver import FakeApiServer
    from test_diagnose_live import OBJECTS

    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "x", filter="data")
    exe = str(tmp_path / "x" / "kubectl-wap")
    env = {"PATH": "", "HOME": str(tmp_path), "NO_COLOR": "1"}

    def run(*args: str) -> str:
        r = subprocess.run([exe, *args], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        return r.stdout

    with FakeApiServer(OBJECTS) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        assert json.loads(run("whatif", "pod", "winner", "-n", "a", "--kubeconfig", str(kc), "-o", "json"))["preemptor"]["name"] == "winner"
    assert "proven optimal" in run("whatif", "podgroup", "job-1", "-n", "ml", "--demo", "--optimal")
    assert run("whatif", "podgroup", "job-1", "-n", "ml", "--demo", "-o", "html").lstrip().startswith("<!DOCTYPE html>")
    assert json.loads(run("version", "-o", "json"))["clientVersion"]["build"] == "standalone"
