"""Fuzz the loaders: random JSON-ish objects (known kinds, junk in every field) and random file
bytes. Only kubectl_wap.errors.UserError may escape; anything else would be a traceback or an
"error: TypeError: ..." exit 1 for the user."""

from __future__ import annotations

import copy
import gzip
import json
import os
import tempfile
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_wap.errors import UserError
from kubectl_wap.framework.buildstate import build_state
from kubectl_wap.model import Snapshot
from kubectl_wap.snapshot.decode.convert import build_snapshot
from kubectl_wap.snapshot.io.files import load_snapshot

KINDS = ["Pod", "Node", "PodGroup", "CompositePodGroup", "PriorityClass", "PodDisruptionBudget", "Namespace",
         "List", "PodList", "Snapshot", "Secret", "Workload", "Frob", ""]

# Field names the converters read, so random maps hit real code paths.
KEYS = [
    "metadata", "name", "namespace", "uid", "labels", "creationTimestamp", "deletionTimestamp",
    "spec", "status", "containers", "initContainers", "restartPolicy", "resources", "requests", "cpu", "memory",
    "nvidia.com/gpu", "overhead", "priority", "priorityClassName", "preemptionPolicy", "nodeName", "schedulerName",
    "nodeSelector", "affinity", "nodeAffinity", "podAffinity", "podAntiAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution",
    "nodeSelectorTerms", "matchExpressions", "matchFields", "matchLabels", "key", "operator", "values", "weight",
    "preference", "podAffinityTerm", "labelSelector", "topologyKey", "namespaces", "namespaceSelector",
    "tolerations", "effect", "value", "topologySpreadConstraints", "maxSkew", "whenUnsatisfiable", "minDomains",
    "schedulingGroup", "podGroupName", "volumes", "persistentVolumeClaim", "ephemeral", "resourceClaims",
    "schedulingGates", "ports", "hostPort", "hostIP", "protocol", "image", "phase", "startTime", "conditions",
    "type", "reason", "nominatedNodeName", "allocatable", "capacity", "images", "names", "sizeBytes", "taints",
    "unschedulable", "schedulingPolicy", "gang", "basic", "minCount", "minGroupCount", "disruptionMode", "all",
    "single", "parentCompositePodGroupName", "schedulingConstraints", "topology", "globalDefault", "selector",
    "disruptionsAllowed", "disruptedPods", "items", "kind", "apiVersion", "header",
]

QUANTITIES = st.sampled_from(["1", "100m", "2Gi", "1e3", "-1", "1e999", "abc", "", ".5", "1Ki", "0.1m", "9" * 30])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8), QUANTITIES,
    st.sampled_from(KINDS + ["Always", "In", "NotIn", "Exists", "Gt", "Never", "Running", "Succeeded", "n1", "g"]),
)
JUNK = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=4)), children, max_size=4),
    ),
    max_leaves=12,
)
NAMES = st.one_of(st.sampled_from(["n1", "n2", "g", "p", "a", "b", "default"]), st.text(max_size=5), JUNK)

# ---- valid templates, then junk planted at a random place ---------------------------------------

TEMPLATES: list[dict[str, Any]] = [
    {"kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}},
     "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "images": [{"names": ["i"], "sizeBytes": 5}]}},
    {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a"}, "creationTimestamp": "2026-01-01T00:00:00Z"},
     "spec": {"nodeName": "n1", "priority": 5, "priorityClassName": "high", "schedulingGroup": {"podGroupName": "g"},
              "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                              "ports": [{"hostPort": 80, "protocol": "TCP"}]}],
              "initContainers": [{"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}}],
              "overhead": {"cpu": "10m"}, "resources": {"requests": {"memory": "2Gi"}},
              "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                  {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]},
                  "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchFields": []}}]},
                  "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                      {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone"}],
                      "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 3, "podAffinityTerm": {"topologyKey": "z"}}]}},
              "tolerations": [{"key": "k", "operator": "Exists"}],
              "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "minDomains": 2,
                                             "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}}],
              "volumes": [{"persistentVolumeClaim": {"claimName": "x"}}], "schedulingGates": [{"name": "g"}]},
     "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z", "nominatedNodeName": "n2",
                "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]}},
    {"kind": "PodGroup", "metadata": {"name": "g", "namespace": "ns"},
     "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"all": {}}, "priorityClassName": "high",
              "parentCompositePodGroupName": "a", "schedulingConstraints": {"topology": [{"key": "zone"}]}}},
    {"kind": "CompositePodGroup", "metadata": {"name": "a", "namespace": "ns"},
     "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 1}}, "parentCompositePodGroupName": "b", "priority": 3}},
    {"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000, "globalDefault": True, "preemptionPolicy": "Never"},
    {"kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": "ns"},
     "spec": {"selector": {"matchLabels": {"app": "a"}}}, "status": {"disruptionsAllowed": 1, "disruptedPods": {"p": "t"}}},
    {"kind": "Namespace", "metadata": {"name": "ns", "labels": {"t": "1"}}},
]


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, prefix + (i,))
    return out


def _plant(obj: Any, path: tuple, junk: Any) -> Any:
    if not path:
        return junk
    obj = copy.deepcopy(obj)
    cur = obj
    for step in path[:-1]:
        cur = cur[step]
    cur[path[-1]] = junk
    return obj


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    t = draw(st.sampled_from(TEMPLATES))
    obj = t
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(obj) if p]  # keep the top-level object (kind) most of the time
        if not paths:
            break
        obj = _plant(obj, draw(st.sampled_from(paths)), draw(JUNK))
    return obj


GENERIC = st.fixed_dictionaries(
    {"kind": st.sampled_from(KINDS)},
    optional={
        "metadata": st.one_of(JUNK, st.fixed_dictionaries({"name": NAMES}, optional={"namespace": NAMES, "labels": JUNK, "uid": JUNK})),
        "spec": JUNK, "status": JUNK, "value": JUNK, "globalDefault": JUNK, "preemptionPolicy": JUNK, "items": JUNK,
    },
)
OBJECTS = st.one_of(mutated(), GENERIC, JUNK)
ITEMS = st.lists(st.one_of(mutated(), mutated(), GENERIC), max_size=8)


def _check(snap: Snapshot) -> None:
    # What the loader hands on must be usable: integer resources that fit int64, a buildable state.
    for p in snap.pods:
        assert all(isinstance(v, int) and 0 <= v < 2**63 for v in p.requests.values())
        assert isinstance(p.priority, int)
    for n in snap.nodes:
        assert all(isinstance(v, int) and 0 <= v < 2**63 for v in n.allocatable.values())
    for g in snap.pod_groups + snap.composite_pod_groups:
        assert isinstance(g.priority, int)
    build_state(snap)


FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(ITEMS)
def test_build_snapshot_only_user_errors(items: list[Any]) -> None:
    try:
        snap = build_snapshot(items)
    except UserError as e:
        assert "\n" not in str(e)
        return
    _check(snap)


@FUZZ
@given(st.lists(OBJECTS, max_size=4))
def test_build_snapshot_any_junk(items: list[Any]) -> None:
    try:
        _check(build_snapshot(items))
    except UserError:
        pass


def _load_bytes(data: bytes, suffix: str) -> None:
    fd, path = tempfile.mkstemp(suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        try:
            _check(load_snapshot(path))
        except UserError as e:
            assert "\n" not in str(e)
    finally:
        os.unlink(path)


def _doc(kind: str, items: list[Any], header: Any) -> Any:
    if kind == "Snapshot":
        return {"apiVersion": "kubectl-wap/v1alpha1", "kind": "Snapshot", "header": header, "items": items}
    if kind == "array":
        return items
    return {"apiVersion": "v1", "kind": kind, "items": items}


@FUZZ
@given(
    items=ITEMS,
    wrapper=st.sampled_from(["Snapshot", "List", "PodList", "NodeList", "array"]),
    header=JUNK,
    encoding=st.sampled_from(["json", "yaml", "json.gz", "yaml.gz"]),
)
def test_load_snapshot_only_user_errors(items: list[Any], wrapper: str, header: Any, encoding: str) -> None:
    doc = _doc(wrapper, items, header)
    if encoding.startswith("json"):
        try:
            data = json.dumps(doc).encode()  # NaN/Infinity allowed, as Python's json reads them back
        except (TypeError, ValueError):
            return
    else:
        try:
            data = yaml.safe_dump(doc).encode()
        except yaml.YAMLError:
            return
    if encoding.endswith(".gz"):
        data = gzip.compress(data)
    _load_bytes(data, "." + encoding)


@FUZZ
@given(st.binary(max_size=200), st.sampled_from([".json", ".yaml", ".gz"]))
def test_load_snapshot_random_bytes(data: bytes, suffix: str) -> None:
    _load_bytes(data, suffix)


@FUZZ
@given(st.lists(st.sampled_from(list("{}[]:,-\"' \n\tab1.#&*!|>%@`") + ["---\n", "kind: Pod\n", "null", "&a ", "*a"]),
                max_size=60).map("".join))
def test_load_snapshot_yamlish_text(text: str) -> None:
    _load_bytes(text.encode(), ".yaml")
