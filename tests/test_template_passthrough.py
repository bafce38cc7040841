"""Pods that share a spec template (a decoded List, a live page, a snapshot file) are stripped,
projected for sharing and written once per template (strip.py `_per_template`, spectemplates.py
`encode`). Each step must give exactly what it gives the same pod with a plain dict spec: the same
values in the same key order, and the same written lines."""

from __future__ import annotations

import copy
import json

import pytest

from test_strip_save import POD
from kubectl_wap.snapshot.decode import lean, spectemplates
from kubectl_wap.snapshot.share.strip import for_sharing, strip_object

_BASE = copy.deepcopy(POD)
_BASE["spec"]["affinity"]["nodeAffinity"] = {"futureKey": 1, "requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"], "extra": "x"}]}]}}


def _variants() -> list[dict]:
    """Specs that place nodeName differently among the kept keys (overhead and resources come
    before it), or leave it out, null or mistyped."""
    out = []
    for drop in ((), ("overhead",), ("overhead", "resources"), ("affinity", "tolerations", "topologySpreadConstraints")):
        spec = {k: v for k, v in _BASE["spec"].items() if k not in drop}
        out.append(spec)
    return out


_NODES = ["n1", None, "", 7, "n2", "__absent__"]


def _pods(spec: dict) -> list[dict]:
    pods = []
    for i, node in enumerate(_NODES):
        p = copy.deepcopy(_BASE)
        p["metadata"]["name"] = f"web-{i}"
        p["metadata"]["uid"] = f"u{i}"
        p["spec"] = {k: v for k, v in spec.items() if k != "nodeName"}
        if node != "__absent__":
            p["spec"]["nodeName"] = node
        pods.append(p)
    return pods


def _text(o) -> str:
    return json.dumps(o)  # key order matters: it is what a writer emits


@pytest.mark.parametrize("spec", _variants(), ids=["all", "no-overhead", "no-overhead-resources", "no-nested"])
@pytest.mark.parametrize("path", ["list", "page"])
def test_templated_pods_strip_share_and_write_like_plain_ones(spec: dict, path: str) -> None:
    pods = _pods(spec)
    if path == "list":
        found = lean.decode_list(json.dumps({"kind": "List", "items": pods}).encode())
        assert found is not None
        templated = list(found[1])
    else:
        found = lean.decode_page(json.dumps({"kind": "PodList", "metadata": {}, "items": pods}).encode(), "Pod",
                                 lean.PageTemplates())
        assert found is not None
        templated = [dict(x, apiVersion="v1", kind="Pod") for x in found[2]]
    assert all(type(p["spec"]) is spectemplates.TemplatedSpec and p["spec"].template is not None for p in templated)
    plain = [dict(p, spec=dict(p["spec"])) for p in templated]

    stripped_t = [strip_object(p) for p in templated]
    stripped_p = [strip_object(p) for p in plain]
    assert [_text(x) for x in stripped_t] == [_text(x) for x in stripped_p]
    assert type(stripped_t[0]["spec"]) is spectemplates.TemplatedSpec  # the template went along

    shared_t = [for_sharing(x) for x in stripped_t]
    shared_p = [for_sharing(x) for x in stripped_p]
    assert [_text(x) for x in shared_t] == [_text(x) for x in shared_p]
    assert list(spectemplates.encode(shared_t)) == list(spectemplates.encode(shared_p))


def test_an_edited_templated_spec_is_treated_as_plain() -> None:
    found = lean.decode_list(json.dumps({"kind": "List", "items": _pods(_variants()[0])}).encode())
    p = next(iter(found[1]))
    p["spec"]["nodeName"] = "elsewhere"  # drops the template: converted from its contents
    assert p["spec"].template is None
    out = for_sharing(strip_object(p))
    assert out["spec"]["nodeName"] == "elsewhere"
    assert "futureKey" not in _text(out)  # still projected onto the allow-list


def test_live_pages_share_one_spec_object_per_template() -> None:
    raw = json.dumps({"kind": "PodList", "metadata": {}, "items": _pods(_variants()[0])}).encode()
    _, _, items = lean.decode_page(raw, "Pod", lean.PageTemplates())
    assert len({id(p["spec"].template) for p in items}) == 1
    _, _, whole = lean.decode_page(raw, "Pod")  # without templates: plain dicts, as before
    assert all(type(p["spec"]) is dict for p in whole)
    # What the live read keeps of them (strip_object) is the same, key order included.
    assert [_text(strip_object(dict(p, kind="Pod"))) for p in items] == [_text(strip_object(dict(p, kind="Pod"))) for p in whole]
