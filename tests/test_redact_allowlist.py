"""Issue 19, redaction by allow-list: a distinctive string in every field of every kind (and in
unknown keys at every level) must not survive `--redact`; plain snapshots keep the allow-list too."""

from __future__ import annotations

import gzip
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from kubectl_wap.snapshot.share.allowlist import SCHEMAS, L, M
from kubectl_wap.snapshot.share.redact import Redactor
from kubectl_wap.snapshot.share.strip import strip_object

_n = itertools.count()


def _leak() -> str:
    return f"zqLEAK{next(_n):05d}x"


def _seed(schema: Any) -> Any:
    """A value of the schema's shape with a distinctive string in every leaf, plus unknown keys."""
    if isinstance(schema, dict):
        out = {k: _seed(v) for k, v in schema.items()}
        out[_leak()] = _leak()  # an unknown field
        out[_leak()] = {_leak(): _leak()}  # an unknown nested map
        return out
    if isinstance(schema, L):
        return [_seed(schema.item), _seed(schema.item)]
    if isinstance(schema, M):
        key = "nvidia.com/gpu" if schema.key == "resname" else _seed(schema.key) if schema.key == "qname" else _leak()
        return {key: _seed(schema.value)}
    if schema == "qname":  # a DRA attribute name: its domain is the cluster's, the name a CEL identifier
        return f"{_leak()}/model"
    if schema == "cel":  # a CEL expression: the strings it can carry are its literals
        return f'device.attributes["d"].x == "{_leak()}"'
    return _leak()  # every leaf: enum, id, quantity, time, int... all given a string


def _objects() -> list[dict]:
    objs = []
    for kind, schema in SCHEMAS.items():
        o = _seed(schema)
        o["kind"] = kind
        o["apiVersion"] = _leak()
        objs.append(o)
    return objs


def _leaks(doc: Any) -> list[str]:
    text = json.dumps(doc)
    return sorted(set(__import__("re").findall(r"zqLEAK\d{5}x", text)))


def test_no_seeded_string_survives_redaction() -> None:
    r = Redactor(b"k" * 32)
    objs = _objects()
    assert _leaks(objs)  # the seeding worked
    out = [r.item(o) for o in objs]
    assert _leaks(out) == []
    # and the structure the scheduler reads is still there, hashed
    pod = out[0]
    assert pod["metadata"]["name"].startswith("r") and pod["spec"]["nodeName"] == r.h(objs[0]["spec"]["nodeName"])


def test_every_kind_is_seeded() -> None:
    assert set(SCHEMAS) == {"Pod", "Node", "PodGroup", "CompositePodGroup", "PodDisruptionBudget", "PriorityClass", "Namespace",
                            "DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate",
                            # the storage kinds the volume filters read (issue 15)
                            "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode",
                            # what create-time admission reads for hypothetical pods (issue 30)
                            "RuntimeClass", "LimitRange"}


@pytest.mark.parametrize("kind", ["PodGroup", "CompositePodGroup", "PodDisruptionBudget", "PersistentVolumeClaim",
                                  "PersistentVolume", "CSINode"])
def test_plain_snapshots_follow_the_allow_list(kind: str) -> None:
    o = _seed(SCHEMAS[kind])
    o["kind"] = kind
    out = strip_object(o)
    text = json.dumps(out)
    # unknown keys (at every level) are gone; the allow-listed leaves keep their values
    for part, schema in ((o, SCHEMAS[kind]), (o["spec"], SCHEMAS[kind]["spec"]), (o["metadata"], SCHEMAS[kind]["metadata"])):
        for k in part:
            if k not in schema:
                assert k not in text
    assert o["metadata"]["name"] in text and out["spec"]


def test_host_ip_and_kubelet_version_are_not_kept() -> None:
    r = Redactor(b"k" * 32)
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "a"},
           "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.1.2.3"}]}]}}
    node = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n"}, "status": {"nodeInfo": {"kubeletVersion": "v1.37.1-acme.4"}}}
    text = json.dumps([r.item(pod), r.item(node)])
    assert "10.1.2.3" not in text and "acme" not in text
    assert '"hostPort": 8080' in text


def test_redacted_live_snapshot_header_has_no_url(tmp_path: Path) -> None:
    import os
    import subprocess

    sys.path.insert(0, str(Path(__file__).parent))
    from fake_apiserver import FakeApiServer

    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1"}}}
    with FakeApiServer([node], token="t0ken-abcdef", tls=True) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kc")
        out = tmp_path / "s.json.gz"
        r = subprocess.run([str(Path(sys.executable).with_name("kubectl-wap")), "snapshot", "--output-file", str(out), "--redact",
                            "--kubeconfig", str(kc)], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "NO_COLOR": "1"})
        assert r.returncode == 0, r.stderr
        first = gzip.decompress(out.read_bytes()).decode().splitlines()[0]
        header = json.loads(first[first.index('"header":') + 9: first.index(',"items":[')])
        assert header["server"] == {"url": "redacted", "version": srv.version}
        assert "127.0.0.1" not in gzip.decompress(out.read_bytes()).decode()


def test_plain_snapshot_files_reduce_nested_pod_stanzas(tmp_path: Path) -> None:
    from kubectl_wap.snapshot.io.files import load_items
    from kubectl_wap.snapshot.io.save import write_snapshot

    from kubectl_wap.snapshot.share.allowlist import POD

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a", "uid": "u"},
           "spec": {f: _seed(POD["spec"][f]) for f in ("affinity", "tolerations", "topologySpreadConstraints",
                                                         "schedulingGroup", "resources", "overhead")}}
    pod["spec"]["nodeName"] = "n"
    path = tmp_path / "s.json"
    write_snapshot(str(path), {"formatVersion": 2}, [strip_object(pod)])
    back = load_items(path)[1][0]
    kept = json.dumps(back)
    # unknown keys at every level are gone; the allow-listed leaves are kept as they were
    assert pod["spec"]["tolerations"][0]["key"] in kept
    for part in (pod["spec"]["tolerations"][0], pod["spec"]["affinity"]["nodeAffinity"], pod["spec"]["schedulingGroup"]):
        unknown = [k for k in part if k.startswith("zqLEAK")]  # seeded unknown fields (dict schemas)
        assert unknown and not any(k in kept for k in unknown)
