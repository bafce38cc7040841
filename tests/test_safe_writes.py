"""Issue 31 item 3: --output-file and --redact-map never write where another user points them.

A symlink is followed only when the kernel's fs.protected_symlinks would follow it (Linux
fs/namei.c may_follow_link: not in a sticky world-writable directory, or owned by the follower or
by the directory's owner); we also refuse it in any other-writable directory. A dangling link is
never created through; a file without write permission for the caller is never replaced (rename
would replace it silently, even for root); --redact-map equal to --output-file and an empty
--output-file are refused; temporary files a killed run left behind are swept."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_wap.errors import UserError
from kubectl_wap.snapshot.io.save import write_private_text, write_snapshot

HEADER = {"formatVersion": 2}
ITEMS = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}]
NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="making a link owned by another user needs root")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    exe = str(Path(sys.executable).with_name("kubectl-wap"))
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})


def _shared_dir(tmp_path: Path, mode: int) -> Path:
    d = tmp_path / f"shared-{mode:o}"
    d.mkdir()
    os.chmod(d, mode)
    return d


@as_root
@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o1770 | 0o002])
@pytest.mark.parametrize("write", ["snapshot", "private"])
def test_another_users_link_in_a_shared_directory_is_not_followed(tmp_path: Path, mode: int, write: str) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    d = _shared_dir(tmp_path, mode)
    link = d / "out.json"
    link.symlink_to(victim)
    os.lchown(link, NOBODY, NOBODY)
    with pytest.raises(UserError, match="symbolic link owned by another user"):
        if write == "snapshot":
            write_snapshot(str(link), HEADER, ITEMS)
        else:
            write_private_text(str(link), "{}\n")
    assert victim.read_text() == "precious" and link.is_symlink()
    assert sorted(p.name for p in d.iterdir()) == ["out.json"]  # no temporary file left either


@as_root
def test_another_users_link_in_a_private_directory_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    os.lchown(link, NOBODY, NOBODY)  # the directory is ours and not shared: as the kernel, follow
    write_snapshot(str(link), HEADER, ITEMS)
    assert real.read_text().startswith('{"apiVersion"')


def test_own_link_in_a_sticky_directory_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    d = _shared_dir(tmp_path, 0o1777)
    (d / "link.json").symlink_to(real)
    write_snapshot(str(d / "link.json"), HEADER, ITEMS)
    assert real.read_text().startswith('{"apiVersion"')


@as_root
def test_a_link_on_the_way_counts_too(tmp_path: Path) -> None:
    """A directory link in a shared directory owned by someone else is not followed either."""
    target_dir = tmp_path / "theirs"
    target_dir.mkdir()
    d = _shared_dir(tmp_path, 0o1777)
    (d / "sub").symlink_to(target_dir)
    os.lchown(d / "sub", NOBODY, NOBODY)
    with pytest.raises(UserError, match="symbolic link owned by another user"):
        write_snapshot(str(d / "sub" / "out.json"), HEADER, ITEMS)
    assert list(target_dir.iterdir()) == []


def test_dangling_link_is_not_created_through(tmp_path: Path) -> None:
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(UserError, match="dangling symbolic link"):
        write_snapshot(str(link), HEADER, ITEMS)
    assert not (tmp_path / "elsewhere.json").exists() and link.is_symlink()


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o555])
def test_write_protected_file_is_not_replaced(tmp_path: Path, mode: int) -> None:
    p = tmp_path / "s.json"
    p.write_text("keep")
    os.chmod(p, mode)
    with pytest.raises(UserError, match="write-protected"):
        write_snapshot(str(p), HEADER, ITEMS)
    assert p.read_text() == "keep" and stat.S_IMODE(p.stat().st_mode) == mode


def test_redact_map_equal_to_output_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    for spelled in (str(out), f"{tmp_path}/./s.json"):
        r = _cli("snapshot", "--demo", "--redact", "--output-file", str(out), "--redact-map", spelled)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
        assert "--redact-map" in r.stderr and "--output-file" in r.stderr, r.stderr
    assert not out.exists()


@pytest.mark.parametrize("flag", ["--output-file", "--redact-map"])
def test_empty_file_name_is_refused(tmp_path: Path, flag: str) -> None:
    args = ["snapshot", "--demo", flag, ""]
    if flag == "--redact-map":
        args += ["--redact", "--output-file", str(tmp_path / "s.json")]
    r = _cli(*args)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and r.stdout == "", (r.stdout[:200], r.stderr)
    assert "empty" in r.stderr, r.stderr


def test_temporary_files_of_a_killed_run_are_swept(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".s.json.{dead.pid}.abc123.tmp"
    stale.write_text("half a snapshot")
    live = tmp_path / f".s.json.{os.getppid()}.def456.tmp"  # a running process's: left alone
    live.write_text("being written")
    other = tmp_path / f".t.json.{dead.pid}.abc123.tmp"  # another target's: not ours to judge
    other.write_text("x")
    write_snapshot(str(tmp_path / "s.json"), HEADER, ITEMS)
    assert not stale.exists() and live.exists() and other.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["s.json", live.name, other.name])
