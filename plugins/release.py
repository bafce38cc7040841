"""The release archive of one platform: the PyInstaller one-folder build (plugins/standalone.py), no
Python needed on the machine, packed the way Krew v0.4.3 can unpack it (issue 32).

    python -m plugins.build --release            # this machine's platform -> dist/kubectl-wap-<os>-<arch>.tar.gz
                                                 # (.zip on windows) + its sha256, uri, version in krew-manifest.yaml
    python -m plugins.build --release --from-build dist/standalone/kubectl-wap   # pack an existing build
    python -m plugins.build --update-manifest-from dist/   # the release job: every archive in dist/ -> manifest

Krew extracts only regular files and directories from a .tar.gz ("unable to handle file type 50" for
a symlink: sigs.k8s.io/krew@v0.4.3 internal/download/downloader.go extractTARGZ), so a symlink in
the build is replaced by its target's bytes, or dropped where the target is in the archive already
and nothing loads it by the link's name (see _link_policy). kubectl's plugin completion runs
`kubectl_complete-wap`: a two-line sh script next to the binary, which runs it under that name.

An archive is reproducible from the same build tree: members sorted, mtime 1980-01-01, uid/gid 0,
mode 0755 for executables and directories, 0644 otherwise, gzip without a name or a time.
"""

from __future__ import annotations

import os
import platform
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from plugins import build as B

COMPLETE_NAME = "kubectl_complete-wap"
# The completion entry point Krew installs next to the binary (a file, not a link: see above). The
# binary picks complete_main from KUBECTL_WAP_AS (plugins/standalone_entry.py).
COMPLETE_SCRIPT = (
    "#!/bin/sh\n"
    "# kubectl's plugin completion (kubectl >= 1.26) runs kubectl_complete-wap: the same binary.\n"
    'p=$(readlink -f "$0" 2>/dev/null) || p=$0\n'
    'KUBECTL_WAP_AS=kubectl_complete-wap exec "${p%/*}/kubectl-wap" "$@"\n'
).encode()

# Size budget of issue 32 (tests/test_release_archive.py fails past it).
MAX_ARCHIVE_BYTES = 40 * 1000 * 1000
MAX_UNPACKED_BYTES = 100 * 1000 * 1000


@dataclass(frozen=True, slots=True)
class ReleaseTarget:
    os: str
    arch: str

    @property
    def name(self) -> str:
        return f"{self.os}-{self.arch}"

    @property
    def exe(self) -> str:
        return "kubectl-wap.exe" if self.os == "windows" else "kubectl-wap"

    @property
    def archive_name(self) -> str:
        return f"{B.DIST_NAME}-{self.name}." + ("zip" if self.os == "windows" else "tar.gz")


RELEASE_TARGETS = {t.name: t for t in (
    ReleaseTarget("linux", "amd64"), ReleaseTarget("linux", "arm64"),
    ReleaseTarget("darwin", "amd64"), ReleaseTarget("darwin", "arm64"),
    ReleaseTarget("windows", "amd64"),
)}


def host_release_target() -> ReleaseTarget:
    osname = {"linux": "linux", "darwin": "darwin", "win32": "windows"}.get(sys.platform)
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    name = f"{osname}-{arch}"
    if name not in RELEASE_TARGETS:
        raise B.BuildError(f"no release target for this machine ({sys.platform}/{machine})")
    return RELEASE_TARGETS[name]


def _link_policy(root: Path, link: Path, target_os: str) -> str:
    """'drop' a symlink whose target is a file of the build already, else 'copy' its bytes.

    PyInstaller 6 (linux) puts a package's bundled shared libraries (numpy.libs/*.so) under
    _internal/ and leaves a link at the top of _internal/ for each; the extension modules find them
    through their own RPATH ($ORIGIN/../../numpy.libs), so the top-level link is never loaded (the
    release smoke test and tests/test_release_archive.py run numpy through the built archive).
    Only on linux, where that is measured: elsewhere a link becomes a copy (bigger, surely loadable;
    the macOS jobs' smoke test runs numpy through it)."""
    if target_os != "linux":
        return "copy"
    target = link.resolve()
    try:
        target.relative_to(root.resolve())
    except ValueError:
        return "copy"
    return "drop" if target.is_file() and link.parent == root / "_internal" else "copy"


def members_of(build: Path, target: ReleaseTarget) -> list[B.Member]:
    """The archive's members from a one-folder build (kubectl-wap/ with _internal/), in a fixed
    order, with no symlink left: LICENSE and the completion script are added."""
    exe = build / target.exe
    if not exe.is_file() or not (build / "_internal").is_dir():
        raise B.BuildError(f"{build} is not a one-folder build (python -m plugins.standalone)")
    skip = {"LICENSE", "GLIBC", COMPLETE_NAME}  # written below / not needed by the release layout
    out: list[B.Member] = []
    for p in sorted(build.rglob("*"), key=lambda q: q.relative_to(build).as_posix()):
        rel = p.relative_to(build).as_posix()
        if rel in skip:
            continue
        if p.is_symlink():
            if _link_policy(build, p, target.os) == "drop":
                continue
            if p.is_dir():
                raise B.BuildError(f"{rel} links to a directory: not packable for Krew")
            out.append((rel, p.read_bytes(), 0o755 if os.access(p, os.X_OK) else 0o644))
        elif p.is_dir():
            out.append((rel, None, 0o755))
        else:
            out.append((rel, p.read_bytes(), 0o755 if os.access(p, os.X_OK) or rel == target.exe else 0o644))
    out.append(("LICENSE", B.LICENSE_FILE.read_bytes(), 0o644))
    if target.os != "windows":  # kubectl on Windows looks for kubectl_complete-wap.exe; not shipped
        out.append((COMPLETE_NAME, COMPLETE_SCRIPT, 0o755))
    out.sort(key=lambda m: m[0])
    return out


def write_zip(path: Path, members: list[B.Member]) -> None:
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data, mode in members:
            if data is None:
                info = zipfile.ZipInfo(name + "/", date_time=B.ZIP_DATE)
                info.external_attr = (0o40000 | mode) << 16 | 0x10
                zf.writestr(info, b"")
            else:
                assert isinstance(data, bytes)
                zf.writestr(B._zinfo(name, mode), data)
    os.replace(tmp, path)


@dataclass(frozen=True, slots=True)
class Release:
    target: str
    path: Path
    sha256: str
    size: int
    unpacked: int
    uri: str


def pack(build: Path, target: ReleaseTarget, out: Path, release_url: str = B.DEFAULT_RELEASE_URL) -> Release:
    members = members_of(build, target)
    out.mkdir(parents=True, exist_ok=True)
    path = out / target.archive_name
    if target.os == "windows":
        write_zip(path, members)
    else:
        B.write_targz(path, members)
    version = B.project_version()
    return Release(
        target=target.name, path=path, sha256=B.sha256_file(path), size=path.stat().st_size,
        unpacked=sum(len(d) for _, d, _ in members if isinstance(d, bytes)),
        uri=release_url.format(version=version, archive=target.archive_name),
    )


def update_manifest_from(out: Path, manifest: Path, release_url: str = B.DEFAULT_RELEASE_URL) -> list[Release]:
    """Write the sha256 and uri of every release archive found in `out` (and the version) into the
    manifest: the release workflow's last job, after it has collected every platform's archive."""
    from plugins.krew_manifest import update_manifest

    version = B.project_version()
    found = []
    for t in RELEASE_TARGETS.values():
        p = out / t.archive_name
        if p.is_file():
            found.append(Release(t.name, p, B.sha256_file(p), p.stat().st_size, 0,
                                 release_url.format(version=version, archive=t.archive_name)))
    if not found:
        raise B.BuildError(f"no release archive in {out} ({', '.join(t.archive_name for t in RELEASE_TARGETS.values())})")
    update_manifest(manifest, version=version,
                    platforms={(t.split("-")[0], t.split("-")[1]): (r.uri, r.sha256)
                               for r in found for t in [r.target]})
    return found


def release(out: Path, manifest: Path | None, *, from_build: Path | None = None,
            release_url: str = B.DEFAULT_RELEASE_URL) -> Release:
    """Build this machine's one-folder binary (unless from_build names one), pack it, and write its
    sha256, uri and version into the manifest."""
    target = host_release_target()
    if from_build is None:
        from plugins import standalone

        from_build = standalone.build(out)
    r = pack(from_build, target, out, release_url)
    if manifest is not None:
        from plugins.krew_manifest import update_manifest

        update_manifest(manifest, version=B.project_version(),
                        platforms={(target.os, target.arch): (r.uri, r.sha256)})
    return r


def describe(r: Release) -> str:
    unpacked = f"\t(unpacked {r.unpacked / 1e6:.1f} MB)" if r.unpacked else ""  # known when packed here
    return f"{r.path}\t{r.size}\t{r.sha256}{unpacked}"
