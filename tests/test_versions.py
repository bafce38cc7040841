"""Version profiles (issue 15): which profile an analysis runs under (--scheduler-version, else the
server version from /version or the snapshot header, else 1.37 with a warning), bad values, the
profile in every report's header, and the rules that differ between 1.37 and 1.38 on one cluster
(the per-version fixtures in tests/scenarios run in test_scenarios.py)."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.errors import UserError
from kubectl_wap.preemption.gates import parse_gates
from kubectl_wap.cli.profilepick import parse_scheduler_version, pick_profile
from kubectl_wap.profiles import DEFAULT, PROFILES, V1_37, V1_38

sys.path.insert(0, str(Path(__file__).parent))
from fake_apiserver import FakeApiServer  # noqa: E402

SCEN = Path(__file__).parent / "scenarios"
# v-large alone under 1.38 (victim-aware); v-large and both pg-victim pods under 1.37.
LEFTOVER = yaml.safe_load((SCEN / "wap-victim-aware-leftover-capacity.yaml").read_text())["cluster"]
ANSWER = {"1.37": ["v-large", "v-pg1-1", "v-pg1-2"], "1.38": ["v-large"]}
WHATIF = ["whatif", "podgroup", "pg-preemptor", "-n", "default"]


def _snapshot(tmp_path: Path, version: str | None) -> Path:
    """Our snapshot format with the server version in its header (None: a plain List dump)."""
    if version is None:
        doc = {"apiVersion": "v1", "kind": "List", "items": LEFTOVER}
    else:
        header = {"formatVersion": 1, "capturedAt": "2026-12-01T00:00:00Z", "server": {"url": "https://k8s", "version": version}}
        doc = {"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot", "header": header, "items": LEFTOVER}
    p = tmp_path / "snap.json.gz"
    p.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return p


def _run(args: list[str]) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, args)
    return r.exit_code, r.stdout, r.stderr


def _victims(doc: dict) -> list[str]:
    return sorted(v["name"] for v in doc["victims"])


# -- picking ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("server,want", [("v1.37.2", "1.37"), ("v1.37.0-rc.1", "1.37"), ("1.37", "1.37")])
def test_snapshot_header_picks_the_profile(tmp_path: Path, server: str, want: str) -> None:
    code, out, _ = _run(WHATIF + ["--snapshot", str(_snapshot(tmp_path, server)), "-o", "json"])
    doc = json.loads(out)
    assert code == 0 and doc["schedulerVersion"] == want
    assert doc["schedulerVersionSource"] == f"server version {server}"
    assert _victims(doc) == ANSWER[want]
    assert not any("scheduler-version" in w for w in doc["warnings"])


@pytest.mark.parametrize("version", ["1.37", "1.38"])
def test_override_gives_each_versions_answer(tmp_path: Path, version: str) -> None:
    snap = _snapshot(tmp_path, "v1.37.2")
    code, out, _ = _run(WHATIF + ["--snapshot", str(snap), "-o", "json", "--scheduler-version", version])
    doc = json.loads(out)
    assert code == 0 and doc["schedulerVersion"] == version and doc["schedulerVersionSource"] == "--scheduler-version"
    assert doc["schedulerVersionReleased"] is PROFILES[version].released
    assert _victims(doc) == ANSWER[version]


def test_dump_without_version_gets_newest_released_with_warning(tmp_path: Path) -> None:
    code, out, _ = _run(WHATIF + ["--snapshot", str(_snapshot(tmp_path, None)), "-o", "json"])
    doc = json.loads(out)
    assert code == 0 and doc["schedulerVersion"] == DEFAULT.version == "1.37" and DEFAULT.released
    assert _victims(doc) == ANSWER["1.37"]
    assert [w for w in doc["warnings"] if "no server version" in w and "--scheduler-version" in w]
    # Asked explicitly: no warning.
    code, out, _ = _run(WHATIF + ["--snapshot", str(_snapshot(tmp_path, None)), "-o", "json", "--scheduler-version", "1.37"])
    assert not [w for w in json.loads(out)["warnings"] if "server version" in w]


def test_table_output_shows_profile_and_warning(tmp_path: Path) -> None:
    code, out, err = _run(WHATIF + ["--snapshot", str(_snapshot(tmp_path, None)), "--color", "never"])
    assert code == 0
    assert "Scheduler rules: Kubernetes 1.37 (as kube-scheduler v1.37.2), default: no server version in the input" in out
    assert "Warning: the input carries no server version" in err
    code, out, _ = _run(WHATIF + ["--snapshot", str(_snapshot(tmp_path, "v1.37.2")), "--scheduler-version", "1.38", "--color", "never"])
    assert "Scheduler rules: Kubernetes 1.38 (unreleased: rules read from kube-scheduler v1.38.0-beta.0), --scheduler-version" in out
    code, out, _ = _run(["explain"] + WHATIF[1:] + ["--snapshot", str(_snapshot(tmp_path, "v1.37.2")), "--scheduler-version", "1.38"])
    assert "Scheduler rules: Kubernetes 1.38 (unreleased:" in out and "Victim-aware node choice" in out


def test_html_report_names_the_version(tmp_path: Path) -> None:
    code, out, _ = _run(WHATIF + ["--snapshot", str(_snapshot(tmp_path, "v1.37.2")), "-o", "html", "--scheduler-version", "1.38"])
    assert code == 0 and '<p id="scheduler-version">Scheduler rules: Kubernetes 1.38 (unreleased' in out


@pytest.mark.parametrize("server", ["v1.38.0-beta.0", "v1.38.0-rc.1", "v1.38.0", "v1.38.2"])
def test_a_1_38_server_gets_the_1_38_profile(tmp_path: Path, server: str) -> None:
    """Issue 29: the 1.38 profile, read from v1.38.0-beta.0, for every 1.38 server; the report
    names the build the rules come from."""
    code, out, _ = _run(WHATIF + ["--snapshot", str(_snapshot(tmp_path, server)), "-o", "json"])
    doc = json.loads(out)
    assert doc["schedulerVersion"] == "1.38" and _victims(doc) == ANSWER["1.38"]
    assert doc["schedulerVersionBuild"] == "v1.38.0-beta.0" and doc["schedulerVersionSource"] == f"server version {server}"
    assert [w for w in doc["warnings"] if server in w and "v1.38.0-beta.0" in w]


def test_released_profile_names_its_build(tmp_path: Path) -> None:
    code, out, _ = _run(WHATIF + ["--snapshot", str(_snapshot(tmp_path, "v1.37.2"))])
    assert code == 0 and "Scheduler rules: Kubernetes 1.37 (as kube-scheduler v1.37.2), server version v1.37.2" in out


@pytest.mark.parametrize("server,want,warn", [("v1.39.1", "1.37", "newer"), ("v1.35.4", "1.37", "older"), ("garbage", "1.37", "unreadable")])
def test_other_server_versions(server: str, want: str, warn: str) -> None:
    picked = pick_profile(None, server)
    assert picked.profile.version == want and picked.warning and warn in picked.warning


def test_live_cluster_version_from_the_server(tmp_path: Path) -> None:
    for version, want in (("v1.37.2", "1.37"), ("v1.38.1", "1.38")):
        with FakeApiServer(LEFTOVER, version=version) as srv:
            kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
            code, out, err = _run(WHATIF + ["--kubeconfig", str(kc), "-o", "json"])
            assert code == 0, err
            doc = json.loads(out)
            assert doc["schedulerVersion"] == want and f"server version {version}" in doc["schedulerVersionSource"]
            code, out, _ = _run(WHATIF + ["--kubeconfig", str(kc), "-o", "json", "--scheduler-version", "1.38"])
            assert _victims(json.loads(out)) == ANSWER["1.38"]


# -- bad values ------------------------------------------------------------------------------------

@pytest.mark.parametrize("value,closest", [("1.39", "1.38"), ("1.36", "1.37"), ("2.0", "1.38"), ("latest", None)])
def test_unknown_version_is_one_line_exit_2(tmp_path: Path, value: str, closest: str | None) -> None:
    code, out, err = _run(WHATIF + ["--snapshot", str(_snapshot(tmp_path, "v1.37.2")), "--scheduler-version", value])
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: unknown --scheduler-version '{value}': known versions are 1.37, 1.38")
    if closest:
        assert f"(did you mean {closest}?)" in lines[0]


@pytest.mark.parametrize("spelled", ["1.38", "v1.38", "1.38.2", " 1.38 "])
def test_version_spellings(spelled: str) -> None:
    assert parse_scheduler_version(spelled) is V1_38
    assert parse_scheduler_version(None) is None


def test_gates_per_profile() -> None:
    """DRAPreemption: refused under 1.37 (v1.37.2's kube_features.go has no such gate); under 1.38
    an opt-in, off by default, because v1.38.0-beta.0 has no such gate either (profiles.py)."""
    assert parse_gates(None, V1_38).dra_preemption is False
    assert parse_gates("DRAPreemption=true", V1_38).dra_preemption is True
    assert parse_gates(None, V1_37).dra_preemption is False
    with pytest.raises(UserError, match=r"does not exist in Kubernetes 1.37 \(it does in 1.38"):
        parse_gates("DRAPreemption=true", V1_37)
    # Release gates that do not change the offline analysis are accepted under both.
    for p in (V1_37, V1_38):
        parse_gates("ClearingNominatedNodeNameAfterBinding=false,SchedulerAsyncAPICalls=true,PodLevelResources=true", p)


def test_bad_gate_for_version_is_refused_before_reading(tmp_path: Path) -> None:
    code, _, err = _run(WHATIF + ["--snapshot", str(tmp_path / "missing.json"), "--feature-gates", "DRAPreemption=true"])
    assert code == 2 and "does not exist in Kubernetes 1.37" in err and "missing.json" not in err


# -- every analysing command takes the flag and reports the version ----------------------------------

@pytest.mark.parametrize("args", [
    ["rank", "--priority", "100"],
    ["rank", "--for", "podgroup/pg-preemptor", "-n", "default"],
    ["pending", "-A", "--no-scale-up"],
    ["why-preempted", "pod", "v-large", "-n", "default"],
    ["explain", "podgroup", "pg-preemptor", "-n", "default"],
    ["whatif", "podgroup", "pg-preemptor", "-n", "default", "--autoscale"],
])
def test_every_command(tmp_path: Path, args: list[str]) -> None:
    snap = str(_snapshot(tmp_path, "v1.37.2"))
    for version in ("1.37", "1.38"):
        code, out, err = _run(args + ["--snapshot", snap, "-o", "json", "--scheduler-version", version])
        assert code == 0, err
        doc = json.loads(out)
        assert doc["schedulerVersion"] == version
    code, _, err = _run(args + ["--snapshot", snap, "--scheduler-version", "9.9"])
    assert code == 2 and "unknown --scheduler-version" in err


def test_diff_between_versions(tmp_path: Path) -> None:
    snap = str(_snapshot(tmp_path, "v1.37.2"))
    code, out, err = _run(["diff"] + WHATIF[1:] + ["--snapshot", snap, "--to", "--scheduler-version 1.38", "-o", "json"])
    assert code == 0, err
    assert "v-pg1-1" in out  # removed from the victims under 1.38


def test_victim_aware_commitments_follow_rollbacks() -> None:
    """A preemptor pod whose assume was rolled back (a failed gang, another TAS placement tried)
    no longer holds its victims: only pods still placed in the state count."""
    from types import SimpleNamespace

    from kubectl_wap.preemption.victimaware import VictimAwareChoice

    placed = {"a"}
    state = SimpleNamespace(has=lambda p: p.uid in placed)
    choice = VictimAwareChoice(SimpleNamespace(state=state), [], {})
    choice.commits = {"a": (SimpleNamespace(uid="a"), frozenset({0})), "b": (SimpleNamespace(uid="b"), frozenset({1}))}
    assert choice._condemned() == {0}
    placed.add("b")
    assert choice._condemned() == {0, 1}
