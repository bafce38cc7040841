"""The sh launcher in front of the zipapp (plugins/launcher.sh, issue 16): the linux/amd64 Krew
archive runs its bundled standalone build where glibc allows, else a python3 runs the zipapp, and
the completion name reaches whichever runs. Fake standalone and zipapp, real /bin/sh."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from plugins import build as B

pytestmark = pytest.mark.skipif(not Path("/bin/sh").exists(), reason="needs /bin/sh")


def _install(tmp: Path, glibc: str | None) -> Path:
    """An installed plugin dir: kubectl-wap (launcher + a zipapp printing what ran) and, unless
    glibc is None, a fake kubectl-wap-standalone/ built for that glibc."""
    d = tmp / "store"
    d.mkdir()
    buf = io.BytesIO()
    buf.write(B.LAUNCHER_FILE.read_bytes())
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("__main__.py", "import os, sys\nprint('zipapp', os.path.basename(sys.argv[0]), *sys.argv[1:])\n")
    exe = d / "kubectl-wap"
    exe.write_bytes(buf.getvalue())
    exe.chmod(0o755)
    if glibc is not None:
        sa = d / B.STANDALONE_DIR
        sa.mkdir()
        (sa / "kubectl-wap").write_text('#!/bin/sh\necho standalone "$KUBECTL_WAP_AS" "$@"\n')
        (sa / "kubectl-wap").chmod(0o755)
        (sa / "GLIBC").write_text(glibc + "\n")
    return exe


def _path(tmp: Path, python: bool) -> str:
    """A PATH with the tools the launcher uses, and a python3 only when asked."""
    b = tmp / "bin"
    b.mkdir(exist_ok=True)
    for tool in ("readlink", "cat", "getconf", "sed"):
        if (w := shutil.which(tool)) and not (b / tool).exists():
            (b / tool).symlink_to(w)
    if python and not (b / "python3").exists():
        (b / "python3").symlink_to(sys.executable)
    return str(b)


def _run(exe: Path, tmp: Path, *args: str, python: bool = True) -> subprocess.CompletedProcess:
    env = {"PATH": _path(tmp, python), "HOME": str(tmp)}
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=60)


def _glibc() -> str:
    v = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None
    if not v or not v.startswith("glibc"):
        pytest.skip("not a glibc system")
    return v.split()[1]


def test_standalone_runs_where_glibc_is_new_enough(tmp_path):
    exe = _install(tmp_path, "2.0")
    r = _run(exe, tmp_path, "whatif", "--demo")
    assert r.returncode == 0 and r.stdout.split() == ["standalone", "kubectl-wap", "whatif", "--demo"], r.stderr
    # the same glibc as the build machine's is new enough too
    same = tmp_path / "same"
    same.mkdir()
    assert _run(_install(same, _glibc()), tmp_path, "x").stdout.split()[0] == "standalone"


def test_completion_name_reaches_the_standalone_build(tmp_path):
    exe = _install(tmp_path, "2.0")
    link = tmp_path / "kubectl_complete-wap"  # Krew's completion link in ~/.krew/bin
    link.symlink_to(exe)
    r = _run(link, tmp_path, "__complete", "whatif", "")
    assert r.stdout.split() == ["standalone", "kubectl_complete-wap", "__complete", "whatif"], r.stderr


def test_older_glibc_falls_back_to_python_and_the_zipapp(tmp_path):
    exe = _install(tmp_path, "99.1")
    r = _run(exe, tmp_path, "--version")
    assert r.returncode == 0 and r.stdout.split() == ["zipapp", "kubectl-wap", "--version"], r.stderr
    link = tmp_path / "kubectl_complete-wap"
    link.symlink_to(exe)
    assert _run(link, tmp_path, "__complete").stdout.split() == ["zipapp", "kubectl_complete-wap", "__complete"]


def test_no_standalone_build_is_the_zipapp_as_before(tmp_path):
    exe = _install(tmp_path, None)
    assert _run(exe, tmp_path, "a").stdout.split() == ["zipapp", "kubectl-wap", "a"]
    # Python runs the file directly too (the prefix is not Python's business)
    r = subprocess.run([sys.executable, str(exe), "b"], capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["zipapp", "kubectl-wap", "b"]


def test_neither_python_nor_a_usable_glibc_is_one_clear_line(tmp_path):
    exe = _install(tmp_path, "99.1")
    r = _run(exe, tmp_path, "--version", python=False)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == "kubectl-wap: needs CPython 3.11+ on PATH (python3 or python3.X), or glibc >= 99.1 for the bundled standalone build\n"


def test_standalone_tree_goes_into_the_archive(tmp_path):
    sa = tmp_path / "onedir"
    (sa / "_internal").mkdir(parents=True)
    (sa / "kubectl-wap").write_bytes(b"\x7fELF fake")
    (sa / "kubectl-wap").chmod(0o755)
    (sa / "GLIBC").write_text("2.36\n")
    (sa / "_internal" / "lib.so").write_bytes(b"x")
    (sa / "kubectl_complete-wap").symlink_to("kubectl-wap")
    members = B.standalone_members(sa)
    names = [m[0] for m in members]
    assert names == ["kubectl-wap-standalone", "kubectl-wap-standalone/GLIBC", "kubectl-wap-standalone/_internal",
                     "kubectl-wap-standalone/_internal/lib.so", "kubectl-wap-standalone/kubectl-wap",
                     "kubectl-wap-standalone/kubectl_complete-wap"]
    out = tmp_path / "a.tar.gz"
    B.write_targz(out, [("kubectl-wap", b"z", 0o755), *members])
    import tarfile

    with tarfile.open(out) as tar:
        got = {m.name: m for m in tar.getmembers()}
    assert got["kubectl-wap-standalone/kubectl-wap"].mode == 0o755
    assert got["kubectl-wap-standalone/kubectl_complete-wap"].issym()
    assert got["kubectl-wap-standalone/_internal"].isdir()
    with pytest.raises(B.BuildError):
        B.standalone_members(tmp_path / "nothing")
