"""Build the one-folder standalone binary of kubectl-wap with PyInstaller: no Python needed on the
machine that runs it (issues 16 and 32). plugins/release.py packs it for Krew.

    pip install -c plugins/bundle-lock.txt ".[release]"   # plugins/release-job.sh does this in its own venv
    python -m plugins.standalone              # -> dist/standalone/kubectl-wap/ (kubectl-wap + _internal/)

Onedir, not onefile: a onefile binary unpacks its ~50 MB into a temporary directory on every run
(measured on the demo: `--version` 1.4-2.7 s, `whatif` 2.4-3.1 s against 0.9-1.5 s from a venv).

Portability: the bootloader needs only GLIBC_2.14, but the bundled libpython and extension modules
need the build machine's glibc or older, so the release workflow builds linux in an old-glibc
container (.github/workflows/release.yml); a build on Debian 12 runs on glibc >= 2.36 only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENTRY = ROOT / "plugins" / "standalone_entry.py"

# Modules PyInstaller collects because something imports them somewhere, but that kubectl-wap never
# imports at run time (measured with every command's sys.modules: plugins/README.md "What the
# standalone build leaves out"; tests/test_release_archive.py runs the built binary).
EXCLUDED_MODULES = (
    "kubernetes.aio", "aiohttp",  # the asyncio client only (see plugins/README.md)
    "hypothesis",  # pydantic's optional hypothesis plugin
    "pygments",  # rich.syntax / rich.traceback only
    "tkinter", "unittest", "doctest", "lib2to3", "idlelib", "xmlrpc", "sqlite3",
    "numpy.f2py", "numpy.distutils", "numpy.testing", "numpy._pyinstaller",
    # `kubectl wap mcp` needs the optional `mcp` extra (~19 MB: pydantic, starlette, uvicorn, ...),
    # imported only by that command; the standalone build says how to install it instead
    "mcp", "mcp_types",
)


def kubernetes_generated_modules() -> list[str]:
    """kubernetes.client's ~60 generated API classes and ~860 models: kubernetes >= 35 loads them
    lazily (kubernetes/client/__init__.py and models/__init__.py resolve names on first use), and
    kubectl-wap uses only ApiClient.call_api, Configuration, rest and exceptions (snapshot/
    readonly.py), so none is ever imported: 6.1 MB of the compressed PYZ."""
    import importlib.util

    spec = importlib.util.find_spec("kubernetes.client")
    if spec is None or not spec.submodule_search_locations:
        return []
    base = Path(next(iter(spec.submodule_search_locations)))
    out = ["kubernetes.client.api"]  # the package and, with it, every submodule
    out += sorted(f"kubernetes.client.models.{p.stem}" for p in (base / "models").glob("*.py") if p.stem != "__init__")
    return out


def pyinstaller_args(out: Path, work: Path) -> list[str]:
    """PyInstaller's command line (run in-process: ~900 --exclude-module would overflow Windows'
    32 K command line)."""
    args = [
        "--onedir", "--name", "kubectl-wap", "--noconfirm", "--log-level", "WARN",
        "--paths", str(ROOT), "--collect-submodules", "kubectl_wap", "--collect-data", "kubectl_wap",
    ]
    for mod in (*EXCLUDED_MODULES, *kubernetes_generated_modules()):
        args += ["--exclude-module", mod]
    return args + ["--distpath", str(out), "--workpath", str(work), "--specpath", str(work), str(ENTRY)]


def glibc_version() -> str:
    """This machine's glibc as MAJOR.MINOR (os.confstr gives "glibc 2.36"), or "" off glibc."""
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").split()[-1]
    except (AttributeError, ValueError, OSError, IndexError):
        return ""


def strip_interpreter(app: Path) -> list[Path]:
    """Drop the debug sections of the interpreter's own libraries (libpython and lib-dynload/*.so,
    linux): a pyenv libpython3.11 is 22 MB with them, 5.6 MB without. Not PyInstaller's --strip:
    it strips the wheels' auditwheel-repaired libraries too, and numpy's OpenBLAS then fails to load
    ("ELF load command address/offset not page-aligned")."""
    if not sys.platform.startswith("linux"):
        return []
    strip = shutil.which("strip")
    if strip is None:  # a silent skip would only show as a blown size budget later
        raise SystemExit("standalone: strip (binutils) is needed on linux to drop libpython's debug sections")
    internal = app / "_internal"
    done = sorted([*internal.glob("libpython3*.so*"), *internal.glob("python3*/lib-dynload/*.so")])
    for p in done:
        subprocess.run([strip, "--strip-debug", str(p)], check=True)
    return done


def build(out: Path) -> Path:
    """PyInstaller into out/standalone/kubectl-wap/; returns that directory."""
    dist, work = out / "standalone", out / "standalone-build"
    import PyInstaller.__main__

    PyInstaller.__main__.run(pyinstaller_args(dist, work))
    app = dist / "kubectl-wap"
    strip_interpreter(app)
    # The build machine's glibc: what the binary needs at least (plugins/README.md "glibc floor").
    if glibc := glibc_version():
        (app / "GLIBC").write_text(glibc + "\n")
    return app


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "dist")
    ns = ap.parse_args(argv)
    print(build(ns.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
