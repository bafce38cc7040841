"""Kueue's own Configuration (issue 35): --kueue-config reads it (bare, or the ConfigMap
kueue-system/kueue-manager-config); fair sharing on is answered with its preemption strategies
(tests/test_kueue_fairshare.py has the model), waitForPodsReady.blockAdmission is refused in one
line; without the file the Kueue stage says Kueue's defaults are assumed, and warns when a
ClusterQueue or Cohort carries spec.fairSharing. Read rules: Kueue v0.17.0
apis/config/v1beta2 configuration_types.go and defaults.go, v1beta1 configuration_conversion.go."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.errors import UserError
from kubectl_wap.queueing.kueue.config import KueueConfig, kueue_config
from kubectl_wap.snapshot.io.files import read_kueue_config

DEMO = Path(__file__).parent / "fixtures" / "kueue-demo"
CLUSTER, JOB = DEMO / "cluster.yaml", DEMO / "job.yaml"
V1B2, V1B1 = "config.kueue.x-k8s.io/v1beta2", "config.kueue.x-k8s.io/v1beta1"
NOTE = "Kueue's configuration was not read: its defaults are assumed"
FINAL, INITIAL = "LessThanOrEqualToFinalShare", "LessThanInitialShare"
ON = {"preemptionStrategies": [FINAL, INITIAL]}


def _cfg(api: str = V1B2, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": api, "kind": "Configuration", "health": {"healthProbeBindAddress": ":8081"}, **fields}


def _write(tmp_path: Path, doc: Any, name: str = "config.yaml") -> Path:
    f = tmp_path / name
    f.write_text(yaml.safe_dump(doc))
    return f


def _configmap(cfg: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
            "data": {"controller_manager_config.yaml": yaml.safe_dump(cfg)}}


def _whatif(*extra: str, code: int = 0, cluster: Path = CLUSTER):  # type: ignore[no-untyped-def]
    args = ["whatif", "-f", str(JOB), "--snapshot", str(cluster), "--replicas", "1", *extra]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == code, f"{args}: exit {res.exit_code}\n{res.output}"
    return res


@pytest.mark.parametrize("doc,want", [
    # v1beta2: a stanza present turns the feature on (fairsharing.Enabled tests the pointer).
    (_cfg(), KueueConfig(read=True)),
    (_cfg(fairSharing={"preemptionStrategies": [FINAL]}), KueueConfig(read=True, fair_sharing=True, fair_strategies=(FINAL,))),
    (_cfg(fairSharing={"preemptionStrategies": [INITIAL]}), KueueConfig(read=True, fair_sharing=True, fair_strategies=(INITIAL,))),
    (_cfg(fairSharing=ON), KueueConfig(read=True, fair_sharing=True)),
    (_cfg(fairSharing=None), KueueConfig(read=True)),
    # v1beta2 defaults.go: blockAdmission defaults to false.
    (_cfg(waitForPodsReady={"timeout": "5m"}), KueueConfig(read=True, wait_for_pods_ready=True)),
    (_cfg(waitForPodsReady={"timeout": "5m", "blockAdmission": True}),
     KueueConfig(read=True, wait_for_pods_ready=True, block_admission=True)),
    # v1beta1: only enable: true counts (configuration_conversion.go drops the stanza otherwise) ...
    (_cfg(V1B1, fairSharing={"enable": False}), KueueConfig(read=True)),
    (_cfg(V1B1, fairSharing={"enable": True}), KueueConfig(read=True, fair_sharing=True)),  # the default pair
    (_cfg(V1B1, fairSharing={"enable": True, "preemptionStrategies": [INITIAL]}),
     KueueConfig(read=True, fair_sharing=True, fair_strategies=(INITIAL,))),
    (_cfg(V1B1, waitForPodsReady={"enable": False, "blockAdmission": True}), KueueConfig(read=True)),
    # ... and blockAdmission defaults to enable (v1beta1 defaults.go).
    (_cfg(V1B1, waitForPodsReady={"enable": True}), KueueConfig(read=True, wait_for_pods_ready=True, block_admission=True)),
    (_cfg(V1B1, waitForPodsReady={"enable": True, "blockAdmission": False}), KueueConfig(read=True, wait_for_pods_ready=True)),
    # admission fair sharing also needs its feature gate (beta, on by default since v0.15).
    (_cfg(admissionFairSharing={"usageHalfLifeTime": "168h"}), KueueConfig(read=True, admission_fair_sharing=True)),
    (_cfg(admissionFairSharing={"usageHalfLifeTime": "168h"}, featureGates={"AdmissionFairSharing": False}), KueueConfig(read=True)),
])
def test_what_a_configuration_switches_on(doc: dict[str, Any], want: KueueConfig) -> None:
    assert kueue_config(doc, "f") == want


@pytest.mark.parametrize("doc,words", [
    ({"apiVersion": "v1", "kind": "Pod"}, "is not a Kueue Configuration"),
    ([1, 2], "not a Kueue Configuration"),
    (_cfg(fairSharing=[1]), "fairSharing is not a mapping"),
    (_cfg(V1B1, fairSharing={"enable": "yes"}), "enable must be true or false"),
    # pkg/config/validation.go validateFairSharing: v1beta2 requires the strategies, a valid set
    (_cfg(fairSharing={}), "preemptionStrategies must be specified"),
    (_cfg(fairSharing={"preemptionStrategies": [INITIAL, FINAL]}), "is not one Kueue accepts"),
])
def test_not_a_configuration_is_one_line(doc: Any, words: str) -> None:
    with pytest.raises(UserError, match=words):
        kueue_config(doc, "f")


def test_the_configmap_form_is_read(tmp_path: Path) -> None:
    on = _cfg(fairSharing=ON)
    assert read_kueue_config(_write(tmp_path, _configmap(on))) == KueueConfig(read=True, fair_sharing=True)
    # `kubectl get cm ... -o yaml` of a label selector: a List of the one ConfigMap.
    listed = {"apiVersion": "v1", "kind": "List", "items": [_configmap(on)]}
    assert read_kueue_config(_write(tmp_path, listed, "list.yaml")).fair_sharing
    bare = _write(tmp_path, on, "bare.yaml")
    assert read_kueue_config(bare).fair_sharing
    other = _configmap(on)
    other["data"] = {"something.yaml": "x: 1"}
    with pytest.raises(UserError, match=r"no data\[controller_manager_config.yaml\]"):
        read_kueue_config(_write(tmp_path, other, "other.yaml"))


@pytest.mark.parametrize("configmap", [False, True])
def test_fair_sharing_on_is_answered(tmp_path: Path, configmap: bool) -> None:
    on = _cfg(fairSharing={"preemptionStrategies": [FINAL]})
    res = _whatif("--kueue-config", str(_write(tmp_path, _configmap(on) if configmap else on)), "-o", "json")
    doc = json.loads(res.stdout)
    assert doc["queueing"]["outcome"] and "not modelled" not in res.output, res.output
    assert ("Kueue's fair sharing is on: a cohort's entries are tried lowest dominant resource share first, and "
            "preemption across the cohort follows LessThanOrEqualToFinalShare.") in doc["queueing"]["notes"]


def test_block_admission_is_refused_in_one_line(tmp_path: Path) -> None:
    # v1beta1 with enable alone: blockAdmission defaults to true there.
    res = _whatif("--kueue-config", str(_write(tmp_path, _configmap(_cfg(V1B1, waitForPodsReady={"enable": True})))), code=2)
    err = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(err) == 1 and "waitForPodsReady.blockAdmission is on" in err[0], res.stderr


def test_a_default_configuration_answers_as_without_it_minus_the_note(tmp_path: Path) -> None:
    without = json.loads(_whatif("-o", "json").stdout)
    read = json.loads(_whatif("--kueue-config", str(_write(tmp_path, _cfg())), "-o", "json").stdout)
    assert any(n.startswith(NOTE) for n in without["queueing"]["notes"])
    assert not any(n.startswith(NOTE) for n in read["queueing"]["notes"])
    without["queueing"]["notes"] = [n for n in without["queueing"]["notes"] if not n.startswith(NOTE)]
    assert read == without


def test_wait_for_pods_ready_without_block_admission_answers_with_a_note(tmp_path: Path) -> None:
    doc = json.loads(_whatif("--kueue-config", str(_write(tmp_path, _cfg(waitForPodsReady={"timeout": "5m"}))), "-o", "json").stdout)
    assert doc["queueing"]["outcome"] == "admitted-after-evictions"
    assert any(n.startswith("Kueue's waitForPodsReady is on") for n in doc["queueing"]["notes"])


def test_the_defaults_note_in_text() -> None:
    lines = _whatif().stdout.splitlines()
    assert any(line.strip().startswith(NOTE) and "--kueue-config FILE" in line for line in lines)


def test_a_fair_sharing_stanza_warns_without_the_config(tmp_path: Path) -> None:
    dump = copy.deepcopy(yaml.safe_load(CLUSTER.read_text()))
    cqs = [o for o in dump["items"] if o["kind"] == "ClusterQueue"]
    cqs[0]["spec"]["fairSharing"] = {"weight": "2"}
    cluster = _write(tmp_path, dump, "cluster.yaml")
    res = _whatif(cluster=cluster)
    warn = [line for line in res.stderr.splitlines() if "spec.fairSharing" in line]
    assert len(warn) == 1 and f"ClusterQueue {cqs[0]['metadata']['name']}" in warn[0] and "--kueue-config" in warn[0], res.stderr
    # The demo as shipped has no stanza: no warning.
    assert "spec.fairSharing" not in _whatif().stderr
    # With the file read, fair sharing off: the stanza is inert, no warning.
    assert "spec.fairSharing" not in _whatif("--kueue-config", str(_write(tmp_path, _cfg())), cluster=cluster).stderr


def test_pending_lists_workload_rows_under_fair_sharing(tmp_path: Path) -> None:
    cfg = _write(tmp_path, _cfg(fairSharing=ON))
    res = CliRunner().invoke(app, ["pending", "-A", "--snapshot", str(CLUSTER), "--kueue-config", str(cfg)])
    assert res.exit_code == 0, res.output
    assert "not listed" not in res.stderr, res.stderr


def test_pending_warns_of_a_fair_sharing_stanza_without_the_config(tmp_path: Path) -> None:
    # The `--demo kueue` snapshot: its Workload sweep waits for Kueue (the fixture has none waiting).
    dump = json.loads(resources.files("kubectl_wap").joinpath("data/demo-kueue-snapshot.json").read_text())
    next(o for o in dump["items"] if o["kind"] == "ClusterQueue")["spec"]["fairSharing"] = {"weight": "1"}
    snap = tmp_path / "demo-kueue.json"
    snap.write_text(json.dumps(dump))
    res = CliRunner().invoke(app, ["pending", "-A", "--snapshot", str(snap)])
    assert res.exit_code == 0, res.output
    assert "spec.fairSharing, a sign Kueue's fair sharing is on" in res.stderr
    assert "sweep" in res.stdout  # the Workload rows still stand: the warning does not refuse
