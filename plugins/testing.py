"""Helpers shared by tests/test_plugin_archive.py and tests/test_kubectl_integration.py (the Python
archive; the Krew release archive is tests/test_release_archive.py's).

The archive is built once per pytest process (host platform only, all bundled CPython ABIs) and
reused by both test modules; pip's downloads are cached across runs in the build's wheel cache.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from plugins import build as B

_BUILT: "BuiltForTests | None" = None


@dataclass
class BuiltForTests:
    archive: Path  # dist/kubectl-wap-<os>-<arch>-python.tar.gz (host)
    host_archive: Path  # dist/kubectl-wap-python.tar.gz
    result: B.Built
    stub_cli: bool
    workdir: Path
    started: float  # time.time() when the build began (sources edited later may differ)

    def extract(self, dest: Path) -> Path:
        """Unpack the archive like krew does; return the path of the kubectl-wap executable."""
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(self.archive) as tar:
            tar.extractall(dest, filter="data") if sys.version_info >= (3, 12) else tar.extractall(dest)
        exe = dest / B.BIN_NAME
        os.chmod(exe, 0o755)
        return exe


def real_cli_exists() -> bool:
    return (B.ROOT / B.PACKAGE / "cli" / "__init__.py").is_file()


def built_archive(workdir: Path) -> BuiltForTests:
    """Build (once per process) into workdir; later calls return the first build."""
    global _BUILT
    if _BUILT is not None:
        return _BUILT
    workdir.mkdir(parents=True, exist_ok=True)
    stub = not real_cli_exists()
    out = workdir / "dist"
    started = time.time()
    results = B.build([B.host_target().name], out=out, stub_cli=stub, quiet=True)
    (result,) = results
    _BUILT = BuiltForTests(
        archive=Path(result.path), host_archive=out / f"{B.DIST_NAME}-python.tar.gz",
        result=result, stub_cli=stub,
        workdir=workdir, started=started,
    )
    return _BUILT


def find_bare_python(minor: str) -> str | None:
    """A CPython 3.<minor> interpreter that is not a venv (pyenv builds, then the system's)."""
    roots = [os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")]
    candidates: list[str] = []
    for root in roots:
        candidates += sorted(glob.glob(os.path.join(root, "versions", f"{minor}.*", "bin",
                                                    f"python{minor}")), reverse=True)
    candidates += [f"/usr/local/bin/python{minor}", f"/usr/bin/python{minor}"]
    for exe in candidates:
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            continue
        try:
            out = subprocess.run(
                [exe, "-I", "-c", "import sys; print(sys.prefix == sys.base_prefix, "
                                  "'%d.%d' % sys.version_info[:2], sys.implementation.name)"],
                capture_output=True, text=True, timeout=30,
            ).stdout.split()
        except (OSError, subprocess.SubprocessError):
            continue
        if out == ["True", minor, "cpython"]:
            return exe
    return None


def clean_env(path_dirs: list[str], cache_dir: Path, home: Path | None = None,
              system_dirs: bool = True) -> dict[str, str]:
    """An environment with no venv, no PYTHON* variables and only the given PATH entries
    (plus /usr/bin:/bin for `env` and friends unless system_dirs is False)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "KUBECTL_WAP", "PYENV", "CONDA"))}
    env["PATH"] = os.pathsep.join(path_dirs + (["/usr/bin", "/bin"] if system_dirs else []))
    env["KUBECTL_WAP_CACHE_DIR"] = str(cache_dir)
    if home is not None:
        env["HOME"] = str(home)
    return env


def python_dir(tmp: Path, exe: str, names: tuple[str, ...] = ("python3",)) -> str:
    """A directory holding only symlinks `names` -> exe, to put one interpreter on PATH."""
    d = tmp / ("py-" + Path(exe).name + "-" + str(abs(hash(exe)) % 10**6))
    d.mkdir(parents=True, exist_ok=True)
    for n in names:
        link = d / n
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(exe)
    return str(d)


def rmtree(p: Path) -> None:
    shutil.rmtree(p, ignore_errors=True)
