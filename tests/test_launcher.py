"""The sh launcher in front of the zipapp of the Python archive (plugins/launcher.sh, issues 16 and
32): a python3 runs the zipapp, the completion name reaches it, and without a Python it says so in
one line. Fake zipapp, real /bin/sh. (The Krew release archive is the standalone build:
tests/test_release_archive.py.)"""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from plugins import build as B

pytestmark = pytest.mark.skipif(not Path("/bin/sh").exists(), reason="needs /bin/sh")


def _install(tmp: Path) -> Path:
    """An installed plugin dir: kubectl-wap (launcher + a zipapp printing what ran)."""
    d = tmp / "store"
    d.mkdir()
    buf = io.BytesIO()
    buf.write(B.LAUNCHER_FILE.read_bytes())
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("__main__.py", "import os, sys\nprint('zipapp', os.path.basename(sys.argv[0]), *sys.argv[1:])\n")
    exe = d / "kubectl-wap"
    exe.write_bytes(buf.getvalue())
    exe.chmod(0o755)
    return exe


def _path(tmp: Path, python: bool) -> str:
    """A PATH with a python3 only when asked (the launcher uses only sh builtins)."""
    b = tmp / "bin"
    b.mkdir(exist_ok=True)
    if python and not (b / "python3").exists():
        (b / "python3").symlink_to(sys.executable)
    return str(b)


def _run(exe: Path, tmp: Path, *args: str, python: bool = True) -> subprocess.CompletedProcess:
    env = {"PATH": _path(tmp, python), "HOME": str(tmp)}
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=60)


def test_python3_runs_the_zipapp_under_either_name(tmp_path):
    exe = _install(tmp_path)
    r = _run(exe, tmp_path, "--version")
    assert r.returncode == 0 and r.stdout.split() == ["zipapp", "kubectl-wap", "--version"], r.stderr
    link = tmp_path / "kubectl_complete-wap"
    link.symlink_to(exe)
    assert _run(link, tmp_path, "__complete").stdout.split() == ["zipapp", "kubectl_complete-wap", "__complete"]


def test_python_runs_the_file_directly_too(tmp_path):
    exe = _install(tmp_path)
    assert _run(exe, tmp_path, "a").stdout.split() == ["zipapp", "kubectl-wap", "a"]
    # Python runs the file directly too (the prefix is not Python's business)
    r = subprocess.run([sys.executable, str(exe), "b"], capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["zipapp", "kubectl-wap", "b"]


def test_no_python_is_one_clear_line(tmp_path):
    exe = _install(tmp_path)
    r = _run(exe, tmp_path, "--version", python=False)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == "kubectl-wap: needs CPython 3.11+ on PATH (python3 or python3.X); the Krew release archive needs no Python\n"
