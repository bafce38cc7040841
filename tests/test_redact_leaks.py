"""Issue 31 item 6, "and it still leaks": what `snapshot --redact` let through, each now hashed or
gone, while the relation the scheduler reads through it still holds."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.snapshot.share.redact import redact_items, redactor_for

KEY = b"leaks-key-0123456789abcdef"


def _text(items: list[dict]) -> str:
    return json.dumps(redact_items(items, KEY))


def test_the_header_keeps_no_input_path_and_no_vendor_version(tmp_path: Path) -> None:
    secret_dir = tmp_path / "customer-acme-prod"
    secret_dir.mkdir()
    dump = secret_dir / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1"}}}]}))
    r = CliRunner().invoke(app, ["snapshot", "--snapshot", str(dump), "--redact", "-o", "json"])
    assert r.exit_code == 0, r.output
    assert "customer-acme-prod" not in r.stdout and "dump.json" not in r.stdout
    header = json.loads(r.stdout)["header"]
    assert header["source"] == "redacted" and header["redacted"] is True
    # the server's version keeps what behaviour depends on, not a vendor's build suffix
    from kubectl_wap.snapshot.share.redact import redact_header

    h = redact_header({"source": "/home/alice/acme.json", "server": {"url": "https://10.0.0.1", "version": "v1.37.1-acme.4"}})
    assert h["source"] == "redacted" and h["server"] == {"url": "redacted", "version": "v1.37.1"}


def test_integer_label_values_are_not_kept() -> None:
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "n1", "labels": {"billing/account": "123456789012", "cores": "64"}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a", "labels": {"acct": "210987654321"}},
           "spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
               {"matchExpressions": [{"key": "billing/account", "operator": "Gt", "values": ["100000000000"]}]}]}}}}}
    text = _text([node, pod])
    for n in ("123456789012", "210987654321", "100000000000", '"64"'):
        assert n not in text


def test_custom_node_role_names_are_hashed_and_still_match() -> None:
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/payments-team": "",
                                                  "node-role.kubernetes.io/control-plane": ""}},
            "spec": {"taints": [{"key": "node-role.kubernetes.io/payments-team", "effect": "NoSchedule"}]}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a"},
           "spec": {"nodeSelector": {"node-role.kubernetes.io/payments-team": ""},
                    "tolerations": [{"key": "node-role.kubernetes.io/payments-team", "operator": "Exists"}]}}
    rn, rp = redact_items([node, pod], KEY)
    assert "payments-team" not in json.dumps([rn, rp])
    (key,) = [k for k in rp["spec"]["nodeSelector"]]
    assert key.startswith("node-role.kubernetes.io/") and key in rn["metadata"]["labels"]
    assert rn["spec"]["taints"][0]["key"] == rp["spec"]["tolerations"][0]["key"] == key


def test_extended_resources_under_a_company_domain_are_hashed_alike_everywhere() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "8", "acme.com/fpga": "2", "nvidia.com/gpu": "4",
                                       "deviceclass.resource.kubernetes.io/acme-fpga-class": "1"}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a"},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"acme.com/fpga": "1", "nvidia.com/gpu": "1"}}}]}}
    lr = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l", "namespace": "a"},
          "spec": {"limits": [{"type": "Container", "max": {"acme.com/fpga": "2"}}]}}
    dc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "acme-fpga-class"},
          "spec": {"extendedResourceName": "acme.com/fpga"}}
    items = [node, pod, lr, dc]
    r = redactor_for(items, KEY)
    rn, rp, rl, rd = (r.item(o) for o in items)
    assert "acme" not in json.dumps([rn, rp, rl, rd])
    fpga = f"{r.h('acme.com')}/{r.h('fpga')}"
    assert fpga in rn["status"]["allocatable"] and fpga in rp["spec"]["containers"][0]["resources"]["requests"]
    assert fpga in rl["spec"]["limits"][0]["max"] and rd["spec"]["extendedResourceName"] == fpga
    # well-known vendors' names are kept; a DeviceClass's implicit resource names the (hashed) class
    assert rn["status"]["allocatable"]["nvidia.com/gpu"] == "4" and rn["status"]["allocatable"]["cpu"] == "8"
    assert f"deviceclass.resource.kubernetes.io/{rd['metadata']['name']}" in rn["status"]["allocatable"]


def test_dra_attributes_and_selector_literals_that_identify_are_hashed() -> None:
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
              "spec": {"driver": "gpu.acme.com", "nodeName": "n1", "pool": {"name": "n1"}, "devices": [{"name": "d0", "attributes": {
                  "ip": {"string": "10.20.30.40"}, "serial": {"string": "SN1234567890"}, "host": {"string": "gpu7.rack3.acme.internal"},
                  "vendor": {"string": "nvidia.com"}, "driverVersion": {"version": "1.3.0-acme.7"}, "count": {"int": 8},
                  "gpu.acme.com/family": {"string": "falcon"}}}]}}
    dc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"}, "spec": {"selectors": [
        {"cel": {"expression": "device.attributes['gpu.acme.com'].serial == 'SN1234567890' && r'falcon' == "
                               "device.attributes[\"gpu.acme.com\"].family && device.driver == '''gpu.acme.com'''"}}]}}
    rs, rd = redact_items([slice_, dc], KEY)
    text = json.dumps([rs, rd])
    for s in ("10.20.30.40", "SN1234567890", "gpu7", "acme", "falcon"):
        assert s not in text, s
    attrs = rs["spec"]["devices"][0]["attributes"]
    assert attrs["vendor"] == {"string": "nvidia.com"} and attrs["count"] == {"int": 8}
    assert attrs["driverVersion"]["version"].startswith("1.3.0-")  # the compared part kept
    assert set(attrs) >= {"ip", "serial", "host", "driverVersion"}  # attribute names kept (CEL identifiers)


def test_warnings_an_input_snapshot_carried_are_left_out(tmp_path: Path) -> None:
    """A snapshot file's header warnings are free text (anyone may have edited them): --redact
    leaves them out, counted; the conversion's own warning (refused kinds) stays."""
    from kubectl_wap.snapshot.io.save import write_snapshot

    snap = tmp_path / "in.json"
    write_snapshot(str(snap), {"formatVersion": 2, "source": "/home/alice/customer-acme.json",
                               "warnings": ["forbidden to list nodes of customer-acme-prod"]},
                   [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1"}}},
                    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "a"}}])
    r = CliRunner().invoke(app, ["snapshot", "--snapshot", str(snap), "--redact", "-o", "json"])
    assert r.exit_code == 0, r.output
    assert "customer-acme" not in r.stdout
    warnings = json.loads(r.stdout)["header"]["warnings"]
    assert warnings == ["left out (never kept in a snapshot): 1 Secret", "1 warning(s) of the input snapshot left out (--redact)"]
