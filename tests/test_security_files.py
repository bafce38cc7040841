"""Issue 19, file side: output injection, bounded inputs, YAML timestamps and aliases, safe writes,
closed pipes. Small and fast; the big hostile inputs are in tools/hostile_probe.py (run by hand)."""

from __future__ import annotations

import gzip
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kubectl_wap.errors import UserError
from kubectl_wap.snapshot.io import files, save
from kubectl_wap.snapshot.io.files import load_snapshot
from kubectl_wap.snapshot.io.safeyaml import safe_yaml
from kubectl_wap.snapshot.io.save import write_snapshot

EVIL = "evil\x1b[2J\r\nforged row\x07\u202egnp.exe"
MARKUP = "a[/x][bold]b"  # no space: a name with one is refused at load (it would split in `-o name | xargs`)


def _cli() -> str:
    return str(Path(sys.executable).with_name("kubectl-wap"))


def _run(*args: str, timeout: float = 60, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_cli(), *args], capture_output=True, text=True, timeout=timeout, errors="replace",
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}, **kw)  # type: ignore[arg-type]


def _snapshot(tmp_path: Path) -> Path:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"zone": EVIL}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    objs: list[dict] = [node]
    # A pod *named* EVIL is refused at load (tests/test_names_refused.py); EVIL still reaches the
    # output through what is not a name: a label value and a reference to a PodGroup.
    for i, name in enumerate(("evil-0", MARKUP)):
        objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"u{i}"},
                     "spec": {"nodeName": "n1", "priority": 1, "schedulingGroup": {"podGroupName": EVIL},
                              "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]},
                     "status": {"phase": "Running"}})
    objs.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                 "metadata": {"name": MARKUP, "namespace": "default"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}}})
    objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "want", "namespace": "default", "uid": "w"},
                 "spec": {"priority": 100, "schedulingGroup": {"podGroupName": MARKUP},
                          "containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]}})
    p = tmp_path / "evil.json"
    p.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    return p


# -- 2. output injection ------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["rank"], ["rank", "-o", "wide"], ["whatif", "podgroup", MARKUP], ["whatif", "podgroup", MARKUP, "-o", "wide"],
    ["explain", "podgroup", MARKUP],
])
@pytest.mark.parametrize("color", ["never", "always"])
def test_names_and_warnings_are_escaped_and_never_markup(tmp_path: Path, args: list[str], color: str) -> None:
    r = _run(*args, "-n", "default", "--snapshot", str(_snapshot(tmp_path)), "--color", color)
    assert r.returncode == 0, r.stderr
    for stream in (r.stdout, r.stderr):
        assert "\r" not in stream and "\x07" not in stream and "\u202e" not in stream
        assert "\x1b[2J" not in stream
        if color == "never":
            assert "\x1b" not in stream
    # the shown form of the hostile name, and the markup-looking name printed as it is
    shown = r.stdout + r.stderr
    if args[0] != "rank":  # rank's table shows neither the label nor the missing group's name
        assert "evil\\x1b[2J\\r\\nforged row" in shown
    assert "\n forged row" not in shown and "\nforged row" not in shown
    if args[0] != "explain":
        assert MARKUP in r.stdout


def test_error_lines_are_escaped(tmp_path: Path) -> None:
    r = _run("whatif", "podgroup", "nope\x1b[2J\rX", "-n", "default", "--snapshot", str(_snapshot(tmp_path)))
    assert r.returncode == 2
    assert "\x1b" not in r.stderr and "\r" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    r = _run("whatif", "podgroup", "[/x]", "-n", "default", "--snapshot", str(_snapshot(tmp_path)))
    assert r.returncode == 2 and "[/x]" in r.stderr, r.stderr


# -- 4. inputs that are not regular files, or too big ------------------------------------------------

def test_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for args in (["rank", "--snapshot", str(fifo)], ["whatif", "-f", str(fifo), "--demo"],
                 ["whatif", "podgroup", "train-llama", "-n", "ml", "--demo", "--autoscale", "--node-templates", str(fifo)]):
        r = _run(*args, timeout=30)
        assert r.returncode == 2, r.stderr
        assert f"{fifo}: is a FIFO; give a regular file" in r.stderr, r.stderr


def test_character_device_is_refused() -> None:
    r = _run("rank", "--snapshot", "/dev/zero", timeout=30)
    assert r.returncode == 2 and "/dev/zero: is a device; give a regular file" in r.stderr, r.stderr


def test_decompressed_size_is_bounded(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * 5_000_000))  # 5 MB of blanks, ~5 KB compressed
    r = _run("rank", "--snapshot", str(bomb), "--max-input-size", "1Mi")
    assert r.returncode == 2, r.stderr
    assert "bomb.json.gz: larger than --max-input-size (1,048,576 bytes after decompression)" in r.stderr
    r = _run("rank", "--snapshot", str(bomb), "--max-input-size", "lots")
    assert r.returncode == 2 and "--max-input-size" in r.stderr


def test_streamed_snapshot_is_bounded_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.json.gz"
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "a", "uid": f"u{i}"},
             "spec": {"nodeName": "n"}} for i in range(200)]
    write_snapshot(str(path), {"formatVersion": 2}, pods)
    monkeypatch.setattr(files, "max_input_bytes", 2000)
    with pytest.raises(UserError, match="larger than --max-input-size"):
        load_snapshot(path)


# -- 4. YAML aliases: a budget, checked before anything is built -------------------------------------

BOMB = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i-1}'] * 9) if i else ', '.join(['lol'] * 9)}]\n" for i in range(10))


@pytest.mark.parametrize("where", ["tolerations", "affinity", "topologySpreadConstraints", "requests"])
def test_alias_bomb_anywhere_is_refused_fast(tmp_path: Path, where: str) -> None:
    stanza = {"tolerations": "tolerations: *l9", "affinity": "affinity: {nodeAffinity: *l9}",
              "topologySpreadConstraints": "topologySpreadConstraints: *l9",
              "requests": "containers: [{name: c, resources: {requests: *l9}}]"}[where]
    text = BOMB + f"kind: Pod\nmetadata: {{name: p, namespace: d}}\nspec:\n  {stanza}\n"
    f = tmp_path / "bomb.yaml"
    f.write_text(text)
    with pytest.raises(UserError, match="bomb.yaml: YAML aliases expand the document beyond 100,000 extra nodes"):
        load_snapshot(f)
    r = _run("whatif", "-f", str(f), "--demo", timeout=30)
    assert r.returncode == 2 and "YAML aliases expand" in r.stderr, r.stderr


def test_alias_bomb_in_node_templates(tmp_path: Path) -> None:
    f = tmp_path / "t.yaml"
    f.write_text(BOMB + "templates: [{name: a, allocatable: {cpu: 1}, taints: *l9}]\n")
    r = _run("whatif", "podgroup", "train-llama", "-n", "ml", "--demo", "--node-templates", str(f), timeout=30)
    assert r.returncode == 2 and "YAML aliases expand" in r.stderr, r.stderr


def test_modest_aliases_still_work() -> None:
    doc = safe_yaml("t: &t [{key: a, operator: Exists}]\nu: *t\nv: *t\n", "x")
    assert doc["u"] == doc["t"] == [{"key": "a", "operator": "Exists"}]


def test_deep_nesting_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "deep.yaml"
    f.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n")
    r = _run("rank", "--snapshot", str(f), timeout=30)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr


# -- 3. YAML timestamps read like quoted ones ----------------------------------------------------------

def test_unquoted_and_quoted_timestamps_read_alike(tmp_path: Path) -> None:
    base = ("kind: Pod\nmetadata: {name: p, namespace: d, uid: u, creationTimestamp: %s}\n"
            "spec: {nodeName: n}\nstatus: {phase: Running, startTime: %s}\n")
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(base % ("2020-01-01T00:00:00Z", "2020-01-01T00:00:05Z"))
    b.write_text(base % ('"2020-01-01T00:00:00Z"', '"2020-01-01T00:00:05Z"'))
    pa, pb = load_snapshot(a).pods[0], load_snapshot(b).pods[0]
    assert pa == pb
    assert pa.start_time == pytest.approx(1577836805.0)


# -- 3. flags with bounds --------------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["whatif", "podgroup", "g", "--replicas", "2000000000", "--requests", "cpu=1"], "--replicas must be between 1 and 100,000"),
    (["whatif", "podgroup", "g", "--replicas", "2", "--min-count", "0"], "--min-count must be between 1 and 100,000"),
    (["rank", "--priority", "9223372036854775807"], "--priority must be a 32-bit integer"),
])
def test_flag_bounds(args: list[str], message: str) -> None:
    r = _run(*args, "--demo")
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_node_template_cpu_beyond_int64(tmp_path: Path) -> None:
    f = tmp_path / "t.yaml"
    f.write_text("templates: [{name: big, allocatable: {cpu: 1e1000, memory: 1Gi}}]\n")
    r = _run("whatif", "podgroup", "train-llama", "-n", "ml", "--demo", "--node-templates", str(f))
    assert r.returncode == 2 and "cpu: value out of range" in r.stderr, r.stderr


# -- 5. writing ----------------------------------------------------------------------------------------

HEADER = {"formatVersion": 2}
ITEMS = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}]


def test_device_target_is_written_in_place() -> None:
    write_snapshot("/dev/null", HEADER, ITEMS)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_symlink_target_replaces_the_file_not_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_snapshot(str(link), HEADER, ITEMS)
    assert link.is_symlink() and real.read_text().startswith('{"apiVersion"')


def test_existing_mode_is_kept(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    p.write_text("old")
    os.chmod(p, 0o640)
    write_snapshot(str(p), HEADER, ITEMS)
    assert stat.S_IMODE(p.stat().st_mode) == 0o640


def test_private_text_is_0600_even_over_a_wider_file(tmp_path: Path) -> None:
    p = tmp_path / "map.json"
    p.write_text("{}")
    os.chmod(p, 0o644)
    save.write_private_text(str(p), "{}\n")
    assert stat.S_IMODE(p.stat().st_mode) == 0o600


@pytest.mark.parametrize("target, message", [
    ("{tmp}/no/such/dir/s.json", "cannot write: directory {tmp}/no/such/dir does not exist"),
    ("{tmp}", "is a directory; give a file name"),
])
def test_bad_targets_are_one_line(tmp_path: Path, target: str, message: str) -> None:
    with pytest.raises(UserError, match=message.format(tmp=tmp_path).replace(".", r"\.")):
        write_snapshot(target.format(tmp=tmp_path), HEADER, ITEMS)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through a read-only mode")
def test_unwritable_directory_is_one_line(tmp_path: Path) -> None:
    d = tmp_path / "ro"
    d.mkdir(mode=0o500)
    with pytest.raises(UserError, match="cannot write"):
        write_snapshot(str(d / "s.json"), HEADER, ITEMS)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_mid_write_leaves_no_temp_file(tmp_path: Path, sig: int) -> None:
    script = (
        "import sys, time\n"
        "from kubectl_wap.snapshot.io.save import write_snapshot\n"
        "def items():\n"
        "    yield {'kind': 'Node', 'metadata': {'name': 'n'}}\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(60)\n"
        f"write_snapshot({str(tmp_path / 's.json')!r}, {{}}, items())\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "writing"
    proc.send_signal(sig)
    assert proc.wait(timeout=30) == 128 + sig
    assert list(tmp_path.iterdir()) == []


# -- 3. closed pipes ---------------------------------------------------------------------------------

def test_epipe_ends_quietly() -> None:
    proc = subprocess.Popen([_cli(), "rank", "--demo", "-o", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    rc = proc.wait(timeout=60)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert rc in (0, 141), (rc, err)


def test_closed_stdout_is_one_line() -> None:
    r = subprocess.run(f"'{_cli()}' rank --demo -o json >&-", shell=True, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == "error: cannot write the output: stdout is closed", r.stderr


def test_row_timestamp_out_of_range_is_one_line(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    write_snapshot(str(p), HEADER, [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1"}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a", "uid": "u",
                                                         "creationTimestamp": "2026-01-01T00:00:00Z"},
         "spec": {"nodeName": "n"}, "status": {"phase": "Running"}}])
    p.write_text(p.read_text().replace("1767225600", "-99999999999999999"))
    r = _run("rank", "--snapshot", str(p))
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"error: {p}: pod a/p: creationTimestamp: -99999999999999999 is outside years 1..9999\n"


def test_cache_keys_keep_nan_and_null_apart(tmp_path: Path) -> None:
    # Stanzas are cached by their JSON bytes (no repr); orjson writes NaN as null, so a NaN weight
    # (an error) must not borrow the entry of a null weight (0).
    def pod(name: str, weight: object) -> dict:
        term = {"weight": weight, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}
        return {"kind": "Pod", "metadata": {"name": name, "namespace": "d", "uid": name},
                "spec": {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}}}

    from kubectl_wap.snapshot.decode.convert import build_snapshot

    with pytest.raises(UserError, match="pod d/b: spec.affinity: weight: expected an integer, got nan"):
        build_snapshot([pod("a", None), pod("b", float("nan"))])


def test_full_disk_is_one_line() -> None:
    # /dev/full: a device, written in place; every write fails with ENOSPC.
    with pytest.raises(UserError, match=r"^/dev/full: cannot write: no space left on the device$"):
        write_snapshot("/dev/full", HEADER, ITEMS)


def test_read_only_file_system_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    def erofs(*_a: object, **_k: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(save.os, "replace", erofs)
    with pytest.raises(UserError, match=r"s.json: cannot write: read-only file system$"):
        write_snapshot(str(tmp_path / "s.json"), HEADER, ITEMS)
    assert list(tmp_path.iterdir()) == []  # the temporary file is gone too


def test_autoscale_section_is_escaped(tmp_path: Path) -> None:
    # The node-template names come from a file (or the snapshot's labels): the autoscale table is
    # escaped like the rest of the report (it was printed from the unescaped document).
    import json

    f = tmp_path / "templates.yaml"
    f.write_text("templates:\n- name: " + json.dumps(EVIL) + "\n  allocatable: {cpu: \"96\", memory: 768Gi, nvidia.com/gpu: \"8\", pods: 110}\n"
                 "  labels: {pool: gpu}\n  maxNodes: 4\n")
    r = _run("whatif", "podgroup", "job-1", "-n", "ml", "--demo", "--autoscale", "--node-templates", str(f), "--color", "never")
    assert r.returncode == 0, r.stderr
    assert "evil\\x1b[2J\\r\\nforged row" in r.stdout
    assert "\x1b" not in r.stdout and "\r" not in r.stdout and "\u202e" not in r.stdout
