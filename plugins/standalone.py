"""Build a standalone linux binary of kubectl-wap with PyInstaller (issue 16): for machines without
CPython 3.11+ (the zipapp archive of plugins/build.py needs one).

    pip install pyinstaller==6.22.3 && pip install .   # a regular (not editable) install, or --paths
    python -m plugins.standalone                        # -> dist/standalone/kubectl-wap/ (onedir)
                                                        #    + dist/kubectl-wap-linux-amd64-standalone.tar.gz

Onedir, not onefile: a onefile binary unpacks its ~50 MB into a temporary directory on every run
(measured on the demo: `--version` 1.4-2.7 s, `whatif` 2.4-3.1 s against 0.9-1.5 s from a venv).

Portability: the bootloader needs only GLIBC_2.14, but the bundled libpython and extension modules
need the build machine's glibc or older. Build inside a manylinux2014 (glibc 2.17) container for
old bastions; a build on Debian 12 runs on glibc >= 2.36 only.

The linux/amd64 Krew archive ships this build next to the zipapp (`python -m plugins.build
--standalone dist/standalone/kubectl-wap`): its launcher (plugins/launcher.sh) runs it where glibc
allows, else a python3 runs the zipapp.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENTRY = ROOT / "plugins" / "standalone_entry.py"


def pyinstaller_args(out: Path, work: Path) -> list[str]:
    return [
        sys.executable, "-m", "PyInstaller", "--onedir", "--name", "kubectl-wap", "--noconfirm", "--log-level", "WARN",
        "--paths", str(ROOT), "--collect-submodules", "kubectl_wap", "--collect-data", "kubectl_wap",
        # kubernetes.aio (and aiohttp) are never imported by kubectl-wap (see plugins/README.md).
        "--exclude-module", "kubernetes.aio", "--exclude-module", "aiohttp", "--exclude-module", "tkinter",
        "--distpath", str(out), "--workpath", str(work), "--specpath", str(work), str(ENTRY),
    ]


def glibc_version() -> str:
    """This machine's glibc as MAJOR.MINOR (os.confstr gives "glibc 2.36")."""
    import os

    return (os.confstr("CS_GNU_LIBC_VERSION") or "glibc 0.0").split()[-1]


def _reset(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "dist")
    ns = ap.parse_args(argv)
    out, work = ns.out / "standalone", ns.out / "standalone-build"
    subprocess.run(pyinstaller_args(out, work), check=True)
    app = out / "kubectl-wap"
    (app / "kubectl_complete-wap").unlink(missing_ok=True)
    (app / "kubectl_complete-wap").symlink_to("kubectl-wap")
    shutil.copy(ROOT / "LICENSE", app / "LICENSE")
    # The launcher of the Krew archive (plugins/launcher.sh) runs this build only where glibc is at
    # least the build machine's: libpython and the extension modules link against it.
    (app / "GLIBC").write_text(glibc_version() + "\n")
    archive = ns.out / "kubectl-wap-linux-amd64-standalone.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for p in sorted(app.rglob("*")):
            tar.add(p, arcname=str(p.relative_to(out)), recursive=False, filter=_reset)
    print(archive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
