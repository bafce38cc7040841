"""Build kubectl-wap's plugin archives.

    python -m plugins.build --release            # the Krew release archive of this machine: the standalone
                                                 # (PyInstaller) build, no Python needed -> dist/kubectl-wap-
                                                 # <os>-<arch>.tar.gz, its sha256/uri/version in krew-manifest.yaml
    python -m plugins.build --update-manifest-from dist/   # every release archive in dist/ -> the manifest
    python -m plugins.build                      # the Python archive of this platform (a zipapp needing
                                                 # CPython 3.11-3.14): dist/kubectl-wap-<os>-<arch>-python.tar.gz
    python -m plugins.build --write-lock         # re-pin plugins/bundle-lock.txt from this venv

The release archive is plugins/release.py's; the Python archive holds ``kubectl-wap`` (a sh launcher +
zipapp) and ``LICENSE``.  See plugins/README.md for both layouts and their sizes.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "kubectl_wap"
DIST_NAME = "kubectl-wap"
BIN_NAME = "kubectl-wap"
ENTRY = "kubectl_wap.cli:main"
COMPLETE_ENTRY = "kubectl_wap.cli:complete_main"
DEFAULT_PYTHONS = ("3.11", "3.12", "3.13", "3.14")
LOCK_FILE = ROOT / "plugins" / "bundle-lock.txt"
MANIFEST_FILE = ROOT / "krew-manifest.yaml"
LICENSE_FILE = ROOT / "LICENSE"
BOOTSTRAP_FILE = ROOT / "plugins" / "_bootstrap.py"
DEFAULT_RELEASE_URL = (
    "https://github.com/kubectl-wap/kubectl-wap/releases/download/v{version}/{archive}"
)
# The zipapp's prefix: a sh launcher (finds a python3 >= 3.11 on PATH, else says what is
# missing), not a bare `#!/usr/bin/env python3`.
LAUNCHER_FILE = ROOT / "plugins" / "launcher.sh"
ZIP_PREFIX = "_wap/"
# Fixed timestamps make the archive (and so the manifest's sha256) reproducible.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
TAR_MTIME = 315532800  # 1980-01-01T00:00:00Z

# kubernetes>=35 depends on aiohttp (+ aiohttp-retry) only for kubernetes.aio, the asyncio client.
# kubectl-wap uses the synchronous client, and `import kubernetes` never imports aiohttp (checked
# by tests/test_plugin_archive.py), so aiohttp and its compiled helpers (multidict, yarl,
# frozenlist, propcache) stay out of the bundle, together with kubernetes/aio itself (41 MB).
EXCLUDED_DISTS = frozenset({"aiohttp", "aiohttp-retry"})

# Files never needed at run time.
_PRUNE_SUFFIXES = (".pyc", ".pyo", ".pyi", ".pxd", ".pyx", ".h", ".c", ".a")
_PRUNE_PREFIXES = (
    "kubernetes/aio/",
    "numpy/_core/include/",
    "numpy/_core/lib/",
    "numpy/_pyinstaller/",
    "numpy/distutils/",
)
_PRUNE_DIRS = frozenset({"__pycache__", "tests"})


@dataclass(frozen=True)
class Target:
    os: str
    arch: str
    pip_platforms: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.os}-{self.arch}"

    @property
    def archive_name(self) -> str:
        # "-python": the Krew release archive (plugins/release.py) is kubectl-wap-<os>-<arch>.tar.gz
        return f"{DIST_NAME}-{self.name}-python.tar.gz"


def _manylinux(arch: str, newest_glibc_minor: int = 28) -> tuple[str, ...]:
    # pip does not widen an explicit --platform to older manylinux tags, so list them all.
    tags = [f"manylinux_2_{m}_{arch}" for m in range(newest_glibc_minor, 16, -1)]
    tags.append(f"manylinux2014_{arch}")
    return tuple(tags)


def _macos(arch: str) -> tuple[str, ...]:
    # Oldest macOS supported: 11.0 (Big Sur) on both arches; prefer single-arch wheels.
    versions = ["11_0"] + ([f"10_{m}" for m in range(16, 8, -1)] if arch == "x86_64" else [])
    return tuple(f"macosx_{v}_{a}" for v in versions for a in (arch, "universal2"))


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("linux", "amd64", _manylinux("x86_64")),
        Target("linux", "arm64", _manylinux("aarch64")),
        Target("darwin", "amd64", _macos("x86_64")),
        Target("darwin", "arm64", _macos("arm64")),
    )
}


def host_target() -> Target:
    osname = {"linux": "linux", "darwin": "darwin"}.get(sys.platform)
    machine = os.uname().machine.lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    name = f"{osname}-{arch}"
    if name not in TARGETS:
        raise SystemExit(f"build: no Krew target for this host ({sys.platform}/{machine})")
    return TARGETS[name]


class BuildError(Exception):
    pass


# --------------------------------------------------------------------------------------------
# Project facts


def project_version() -> str:
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    init = (ROOT / PACKAGE / "__init__.py").read_text(encoding="utf-8")
    m = re.search(r"""^__version__\s*=\s*["']([^"']+)["']""", init, re.M)
    if not m or m.group(1) != version:
        raise BuildError(
            f"version mismatch: pyproject.toml says {version!r}, "
            f"{PACKAGE}/__init__.py says {m.group(1) if m else None!r}"
        )
    return version


def project_dependencies() -> list[str]:
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["project"]["dependencies"])


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: Path = LOCK_FILE) -> list[tuple[str, str]]:
    pins = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep:
            raise BuildError(f"{path}: every line must pin name==version, got {line!r}")
        pins.append((_canon(name.strip()), version.strip()))
    return pins


def write_lock(path: Path = LOCK_FILE) -> list[str]:
    """Pin the runtime dependency closure as installed in this environment (minus aiohttp)."""
    import importlib.metadata as md

    from packaging.requirements import Requirement

    envs = [
        {"python_version": v, "python_full_version": v + ".0", "sys_platform": p,
         "platform_system": s, "platform_machine": m, "implementation_name": "cpython",
         "platform_python_implementation": "CPython", "os_name": "posix", "extra": ""}
        for v in DEFAULT_PYTHONS
        for p, s in (("linux", "Linux"), ("darwin", "Darwin"))
        for m in ("x86_64", "aarch64", "arm64")
    ]
    seen: dict[str, str] = {}
    stack = [Requirement(r).name for r in project_dependencies()]
    while stack:
        name = _canon(stack.pop())
        if name in seen or name in EXCLUDED_DISTS:
            continue
        dist = md.distribution(name)
        seen[name] = dist.version
        for raw in dist.requires or []:
            req = Requirement(raw)
            if req.marker is None or any(req.marker.evaluate(e) for e in envs):
                stack.append(req.name)
    lines = [f"{n}=={v}" for n, v in sorted(seen.items())]
    header = (
        "# Runtime dependency closure bundled into the kubectl-wap plugin archive.\n"
        "# Generated by `python -m plugins.build --write-lock` from the dev venv; aiohttp and\n"
        "# aiohttp-retry (kubernetes.aio only) are left out on purpose.\n"
    )
    path.write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    return lines


# --------------------------------------------------------------------------------------------
# Wheels


def default_wheel_cache() -> Path:
    env = os.environ.get("KUBECTL_WAP_BUILD_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kubectl-wap-build" / "wheels"


def download_wheels(target: Target, python: str, lock: Path, cache: Path, log) -> list[Path]:
    """pip-download every pinned wheel for one (platform, CPython minor); cached by content key."""
    nodot = python.replace(".", "")
    pins = read_lock(lock)
    key = hashlib.sha256(
        repr((pins, target.pip_platforms, python)).encode()
    ).hexdigest()
    dest = cache / target.name / f"cp{nodot}"
    stamp = dest / ".complete"
    if stamp.is_file() and stamp.read_text().strip() == key:
        wheels = sorted(dest.glob("*.whl"))
        if len(wheels) == len(pins):
            return wheels
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "--progress-bar", "off", "-q",
        "--implementation", "cp", "--python-version", python,
        "--abi", f"cp{nodot}", "--abi", "abi3", "--abi", "none",
        "-d", str(dest), "-r", str(lock),
    ]
    for plat in target.pip_platforms:
        cmd += ["--platform", plat]
    log(f"[{target.name}] pip download for CPython {python}")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(
            f"pip download failed for {target.name} / CPython {python}:\n"
            f"{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
        )
    wheels = sorted(dest.glob("*.whl"))
    got = {_canon(w.name.split("-")[0]) for w in wheels}
    missing = sorted({n for n, _ in pins} - got)
    if missing or len(wheels) != len(pins):
        raise BuildError(f"{target.name}/cp{nodot}: expected {len(pins)} wheels, missing {missing}")
    stamp.write_text(key + "\n")
    return wheels


def _keep(rel: str) -> bool:
    parts = rel.split("/")
    if _PRUNE_DIRS.intersection(parts[:-1]):
        return False
    if rel.endswith(_PRUNE_SUFFIXES) or rel.startswith(_PRUNE_PREFIXES):
        return False
    if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] in ("RECORD", "INSTALLER"):
        return False  # RECORD would no longer match after pruning
    return True


_DATA_DIR = re.compile(r"^[^/]+\.data/([^/]+)/(.*)$")

FileMap = dict[str, tuple[bytes, int]]  # relative path -> (content, unix mode)


def read_wheel(path: Path) -> FileMap:
    files: FileMap = {}
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            rel = info.filename
            m = _DATA_DIR.match(rel)
            if m:
                if m.group(1) not in ("purelib", "platlib"):
                    continue  # scripts, headers, data: not importable, not needed
                rel = m.group(2)
            if not _keep(rel):
                continue
            mode = (info.external_attr >> 16) & 0o777
            files[rel] = (zf.read(info), 0o755 if mode & 0o111 else 0o644)
    return files


def project_files(version: str, stub_cli: bool) -> FileMap:
    files: FileMap = {}
    pkg = ROOT / PACKAGE
    for path in sorted(pkg.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
            continue
        rel = path.relative_to(ROOT).as_posix()
        files[rel] = (path.read_bytes(), 0o644)
    cli = f"{PACKAGE}/cli/__init__.py"
    if cli not in files:
        if not stub_cli:
            raise BuildError(
                f"{cli} does not exist yet; pass --stub-cli to bundle a placeholder CLI"
            )
        files[cli] = (STUB_CLI.encode(), 0o644)
    info = f"{PACKAGE}-{version}.dist-info"
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {DIST_NAME}\nVersion: {version}\n"
        "License: Apache-2.0\n".encode(),
        0o644,
    )
    files[f"{info}/entry_points.txt"] = (
        f"[console_scripts]\n{BIN_NAME} = {ENTRY}\nkubectl_complete-wap = {COMPLETE_ENTRY}\n".encode(),
        0o644,
    )
    files[f"{info}/top_level.txt"] = (f"{PACKAGE}\n".encode(), 0o644)
    return files


STUB_CLI = '''"""Placeholder CLI bundled by `plugins.build --stub-cli` until kubectl_wap/cli/ exists."""
import sys

from kubectl_wap import __version__


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("Usage: kubectl wap [OPTIONS] COMMAND [ARGS]...\\n\\n"
              "  Offline what-if analyzer for workload-aware preemption (stub CLI).")
        return 0
    if argv[0] == "--version":
        print(__version__)
        return 0
    print("stub CLI: the real kubectl_wap.cli is not built in", file=sys.stderr)
    return 2


def complete_main():
    return 0
'''


# --------------------------------------------------------------------------------------------
# Zipapp + tarball


def _zinfo(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.create_system = 3
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def _assemble(trees: dict[str, FileMap], project: FileMap) -> tuple[FileMap, dict[str, FileMap]]:
    """Split per-ABI trees into files identical for every ABI (common) and the rest."""
    abis = list(trees)
    first = trees[abis[0]]
    common: FileMap = {}
    for rel, (data, mode) in first.items():
        if all(rel in t and t[rel][0] == data for t in trees.values()):
            common[rel] = (data, mode)
    for rel in project:
        if any(rel in t for t in trees.values()):
            raise BuildError(f"{rel} is shipped both by the project and by a dependency")
    common.update(project)
    per_abi = {abi: {r: v for r, v in t.items() if r not in common} for abi, t in trees.items()}
    return common, per_abi


def build_zipapp(
    common: FileMap, per_abi: dict[str, FileMap], *, version: str, target: Target, level: int
) -> tuple[bytes, str]:
    entries: list[tuple[str, bytes, int]] = []
    for rel in sorted(common):
        entries.append((f"{ZIP_PREFIX}common/{rel}", *common[rel]))
    for abi in sorted(per_abi):
        for rel in sorted(per_abi[abi]):
            entries.append((f"{ZIP_PREFIX}{abi}/{rel}", *per_abi[abi][rel]))
    bootstrap = BOOTSTRAP_FILE.read_text(encoding="utf-8")
    h = hashlib.sha256()
    h.update(bootstrap.encode())
    for name, data, mode in entries:
        h.update(f"{name}\0{mode}\0{len(data)}\0".encode())
        h.update(hashlib.sha256(data).digest())
    build_id = f"{version}-{h.hexdigest()[:16]}"
    build = {
        "version": version,
        "build_id": build_id,
        "platform": target.name,
        "abis": sorted(per_abi),
        "entry": ENTRY,
        "complete_entry": COMPLETE_ENTRY,
    }
    main_py, n = re.subn(r"^BUILD = \{\}.*$", f"BUILD = {build!r}", bootstrap, count=1, flags=re.M)
    if n != 1:
        raise BuildError("plugins/_bootstrap.py lost its `BUILD = {}` line")
    buf = io.BytesIO()
    buf.write(LAUNCHER_FILE.read_bytes())
    with zipfile.ZipFile(buf, "w", compresslevel=level) as zf:
        zf.writestr(_zinfo("__main__.py", 0o644), main_py.encode())
        build_json = (repr(build) + "\n").encode()
        zf.writestr(_zinfo(f"{ZIP_PREFIX}BUILD", 0o644), build_json)
        for name, data, mode in entries:
            zf.writestr(_zinfo(name, mode), data)
    return buf.getvalue(), build_id


# An archive member: (name, bytes, mode) for a file; (name, None, mode) for a directory. Never a
# symbolic link: Krew v0.4.3 refuses one ("unable to handle file type 50", internal/download/
# downloader.go extractTARGZ handles only TypeDir and TypeReg).
Member = tuple[str, "bytes | None", int]


def write_targz(path: Path, members: list[Member]) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tar:
                for name, data, mode in members:
                    ti = tarfile.TarInfo(name)
                    ti.mode = mode
                    ti.mtime = TAR_MTIME
                    ti.uid = ti.gid = 0
                    ti.uname = ti.gname = ""
                    if data is None:
                        ti.type = tarfile.DIRTYPE
                        tar.addfile(ti)
                    elif not isinstance(data, bytes):
                        raise BuildError(f"{name}: only files and directories go into an archive")
                    else:
                        ti.size = len(data)
                        tar.addfile(ti, io.BytesIO(data))
    os.replace(tmp, path)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass
class Built:
    target: str
    path: str
    sha256: str
    size: int
    build_id: str
    zipapp_size: int
    common_files: int
    abi_files: dict


def build_target(
    target_name: str,
    pythons: tuple[str, ...],
    out: str,
    cache: str,
    lock: str,
    stub_cli: bool,
    level: int,
    quiet: bool = False,
) -> Built:
    log = (lambda *_: None) if quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    target = TARGETS[target_name]
    version = project_version()
    trees: dict[str, FileMap] = {}
    for py in pythons:
        abi = "cp" + py.replace(".", "")
        tree: FileMap = {}
        for whl in download_wheels(target, py, Path(lock), Path(cache), log):
            for rel, val in read_wheel(whl).items():
                if rel in tree and tree[rel][0] != val[0]:
                    raise BuildError(f"{whl.name}: {rel} clashes with another wheel")
                tree[rel] = val
        trees[abi] = tree
    common, per_abi = _assemble(trees, project_files(version, stub_cli))
    log(f"[{target.name}] zipapp: {len(common)} shared files, "
        + ", ".join(f"{a}: {len(f)}" for a, f in sorted(per_abi.items())))
    zipapp, build_id = build_zipapp(common, per_abi, version=version, target=target, level=level)
    license_text = LICENSE_FILE.read_bytes()
    path = Path(out) / target.archive_name
    path.parent.mkdir(parents=True, exist_ok=True)
    write_targz(path, [(BIN_NAME, zipapp, 0o755), ("LICENSE", license_text, 0o644)])
    digest = sha256_file(path)
    log(f"[{target.name}] {path} {path.stat().st_size / 1e6:.1f} MB sha256={digest}")
    return Built(
        target=target.name, path=str(path), sha256=digest, size=path.stat().st_size,
        build_id=build_id, zipapp_size=len(zipapp), common_files=len(common),
        abi_files={a: len(f) for a, f in per_abi.items()},
    )


def build(
    targets: list[str],
    *,
    pythons: tuple[str, ...] = DEFAULT_PYTHONS,
    out: Path = ROOT / "dist",
    cache: Path | None = None,
    lock: Path = LOCK_FILE,
    stub_cli: bool = False,
    level: int = 6,
    jobs: int | None = None,
    quiet: bool = False,
) -> list[Built]:
    if not LICENSE_FILE.is_file():
        raise BuildError("LICENSE is missing")
    project_version()  # a version mismatch fails before any download
    cache = cache or default_wheel_cache()
    host = host_target().name
    args = [(t, tuple(pythons), str(out), str(cache), str(lock), stub_cli, level, quiet) for t in targets]
    jobs = jobs or min(len(targets), os.cpu_count() or 1)
    if jobs > 1 and len(targets) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(build_target, *zip(*args)))
    else:
        results = [build_target(*a) for a in args]
    for r in results:
        if r.target == host:
            shutil.copyfile(r.path, Path(out) / f"{DIST_NAME}-python.tar.gz")
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m plugins.build", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", default="host",
                    help="host (default), all, or a comma list of " + ", ".join(TARGETS))
    ap.add_argument("--python", default=",".join(DEFAULT_PYTHONS),
                    help="CPython minor versions to bundle compiled wheels for")
    ap.add_argument("--out", type=Path, default=ROOT / "dist")
    ap.add_argument("--wheel-cache", type=Path, default=None,
                    help="where downloaded wheels are kept (default ~/.cache/kubectl-wap-build)")
    ap.add_argument("--lock", type=Path, default=LOCK_FILE)
    ap.add_argument("--write-lock", action="store_true",
                    help="re-pin the lock from this environment and exit")
    ap.add_argument("--release", action="store_true",
                    help="build this machine's Krew release archive (standalone, no Python needed) and "
                         "write its sha256, uri and version into the manifest")
    ap.add_argument("--from-build", type=Path, default=None,
                    help="with --release: pack this one-folder build instead of running PyInstaller")
    ap.add_argument("--update-manifest-from", type=Path, default=None, metavar="DIR",
                    help="write the sha256 and uri of every release archive in DIR into the manifest")
    ap.add_argument("--manifest", type=Path, default=MANIFEST_FILE)
    ap.add_argument("--release-url", default=os.environ.get("KUBECTL_WAP_RELEASE_URL",
                                                            DEFAULT_RELEASE_URL),
                    help="uri template with {version} and {archive}")
    ap.add_argument("--stub-cli", action="store_true",
                    help="bundle a placeholder CLI if kubectl_wap/cli/ does not exist")
    ap.add_argument("--compresslevel", type=int, default=6)
    ap.add_argument("-j", "--jobs", type=int, default=None)
    ap.add_argument("-q", "--quiet", action="store_true")
    ns = ap.parse_args(argv)

    try:
        if ns.release or ns.update_manifest_from:
            from plugins import release as R

            if ns.release:
                found = [R.release(ns.out, ns.manifest, from_build=ns.from_build, release_url=ns.release_url)]
            else:
                found = R.update_manifest_from(ns.update_manifest_from, ns.manifest, ns.release_url)
            for r in found:
                print(R.describe(r))
            return 0
        if ns.write_lock:
            for line in write_lock(ns.lock):
                print(line)
            return 0
        if ns.platform == "host":
            targets = [host_target().name]
        elif ns.platform == "all":
            targets = list(TARGETS)
        else:
            targets = [t.strip() for t in ns.platform.split(",") if t.strip()]
            unknown = [t for t in targets if t not in TARGETS]
            if unknown:
                ap.error(f"unknown platform(s) {unknown}; choose from {list(TARGETS)}")
        pythons = tuple(p.strip() for p in ns.python.split(",") if p.strip())
        results = build(
            targets, pythons=pythons, out=ns.out, cache=ns.wheel_cache, lock=ns.lock,
            stub_cli=ns.stub_cli, level=ns.compresslevel, jobs=ns.jobs, quiet=ns.quiet,
        )
    except BuildError as exc:
        print(f"build: {exc}", file=sys.stderr)
        return 1
    for r in results:
        print(f"{r.path}\t{r.size}\t{r.sha256}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
