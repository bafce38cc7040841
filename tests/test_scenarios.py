"""Scenario fixtures transcribed from upstream kube-scheduler table tests (see tests/scenarios/README.md).

Each tests/scenarios/*.yaml holds one cluster (plain Kubernetes objects), one what-if question and the
expected answer. ``test_scenario_schema`` checks the fixture files themselves; ``test_scenario`` runs the
CLI in-process (``kubectl wap whatif ... -o json``) against the cluster and compares the report.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from kubectl_wap.profiles import PROFILES

SCENARIO_DIR = Path(__file__).parent / "scenarios"
SCENARIO_FILES = sorted(SCENARIO_DIR.glob("*.yaml"))

OUTCOMES = {"NoPreemptionNeeded", "Preempt", "Unschedulable", "NotEligible", "Invalid"}
WHATIF_KINDS = {"podgroup", "compositepodgroup", "pod"}
KNOWN_GATES = {"GenericWorkload", "CompositePodGroup", "PodGroupPreemptionPolicy"}
TOP_KEYS = {"name", "source", "adapted", "derived", "featureGates", "cluster", "whatif", "expect", "schedulerVersion",
            "expectByVersion", "featureGatesByVersion"}
# `featureGatesByVersion`: {version: gates} added to featureGates under that version only (a gate only
# that profile accepts, e.g. the DRAPreemption opt-in of the 1.38 profile).
# `schedulerVersion`: the Kubernetes version (kubectl_wap/profiles.py) whose answer `expect` is; default 1.37.
# `expectByVersion`: {version: expect} for the other versions' answers on the same cluster.
DEFAULT_VERSION = "1.37"
EXPECT_KEYS = {"outcome", "victims", "victimOrder", "messageContains", "nominatedNode", "placements",
               "numPDBViolations", "violatesPDB"}
# `source`: kubernetes/kubernetes[@rev] <file.go> <Function or TestName>[: '<case name>'] (several joined by " and ");
# without @rev the citation is checked against v1.37.2; @master marks a case only on the development branch.
# A *_test.go citation must name the table case; a citation of a non-test file names the upstream function whose
# rule the fixture follows, and the fixture then says `derived:` (its expectation is reasoned, not asserted upstream).
SOURCE_RE = re.compile(
    r"kubernetes/kubernetes(?:@(?P<rev>[\w.-]+))? (?P<path>[\w./-]+\.go) (?P<func>[A-Za-z_][\w.]*)(?:: (?P<case>'(?:[^']|'')+'|\"[^\"]+\"))?")
UPSTREAM = Path("/root/go/pkg/mod/k8s.io/kubernetes@v1.37.2")  # checked when present (dev machines)


def _load(path: Path) -> dict:
    docs = list(yaml.safe_load_all(path.read_text()))
    assert len(docs) == 1, f"{path.name}: exactly one YAML document expected, got {len(docs)}"
    doc = docs[0]
    assert isinstance(doc, dict), f"{path.name}: top level must be a mapping"
    return doc


def _ids(paths):
    return [p.stem for p in paths]


def _key(obj: dict) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return obj.get("kind", ""), meta.get("namespace", ""), meta.get("name", "")


def _check_source(doc: dict) -> None:
    """Every citation names a file and a test case (or, for a code file, a function plus `derived:`); when
    the upstream v1.37.2 tree is on disk, the file exists and contains the function and the case name."""
    source = doc["source"]
    assert isinstance(source, str)
    cites = list(SOURCE_RE.finditer(source))
    assert cites, f"source {source!r} must read: kubernetes/kubernetes <file.go> <Function>[: '<case>']"
    for m in cites:
        path, func, case = m["path"], m["func"], m["case"]
        if path.endswith("_test.go"):
            assert func.startswith("Test") and case, f"{m[0]!r}: a test file citation names TestX: '<case>'"
        else:
            assert "derived" in doc, f"{m[0]!r} cites code, not a test case: the fixture must say `derived:`"
        if UPSTREAM.is_dir() and not m["rev"]:
            text = (UPSTREAM / path).read_text()
            assert re.search(rf"func (\([^)]*\) )?{re.escape(func)}\b", text), f"{func} not in {path}"
            if case:
                name = case[1:-1].replace("''", "'")
                assert name in text, f"case {name!r} not in {path}"


def test_scenarios_present():
    assert len(SCENARIO_FILES) >= 25, "expected the transcribed upstream scenario set"


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=_ids(SCENARIO_FILES))
def test_scenario_schema(path: Path):
    doc = _load(path)
    unknown = set(doc) - TOP_KEYS
    assert not unknown, f"unknown top-level keys {unknown}"
    for key in ("name", "source", "cluster", "whatif", "expect"):
        assert key in doc, f"missing required key {key!r}"
    assert isinstance(doc["name"], str) and doc["name"].strip()
    _check_source(doc)
    if "adapted" in doc:
        assert isinstance(doc["adapted"], str) and doc["adapted"].strip()
    if "derived" in doc:  # the reasoning itself, not a tag
        assert isinstance(doc["derived"], str) and len(doc["derived"].split()) >= 12, "derived: give the reasoning"

    for v, extra in (doc.get("featureGatesByVersion") or {}).items():
        assert v in PROFILES and isinstance(extra, str), f"featureGatesByVersion: {v!r} must name a profile"
        for item in extra.split(","):
            assert item.partition("=")[0] in PROFILES[v].gate_defaults, f"{item!r}: not a gate of Kubernetes {v}"
    gates = doc.get("featureGates")
    if gates is not None:
        assert isinstance(gates, str)
        for item in gates.split(","):
            name, _, value = item.partition("=")
            assert name in KNOWN_GATES, f"unknown feature gate {name!r}"
            assert value in ("true", "false"), f"bad gate value in {item!r}"

    cluster = doc["cluster"]
    assert isinstance(cluster, list) and cluster, "cluster must be a non-empty list of objects"
    seen = set()
    for obj in cluster:
        assert isinstance(obj, dict) and obj.get("apiVersion") and obj.get("kind"), f"bad object {obj!r}"
        assert (obj.get("metadata") or {}).get("name"), f"object without metadata.name: {obj!r}"
        k = _key(obj)
        assert k not in seen, f"duplicate object {k}"
        seen.add(k)
    nodes = {o["metadata"]["name"] for o in cluster if o["kind"] == "Node"}
    assert nodes, "cluster needs at least one Node"
    for o in cluster:
        if o["kind"] == "Node":
            alloc = (o.get("status") or {}).get("allocatable") or {}
            assert "pods" in alloc, f"node {o['metadata']['name']} needs allocatable pods"
        if o["kind"] == "Pod":
            node_name = (o.get("spec") or {}).get("nodeName")
            assert node_name is None or node_name in nodes, f"pod bound to unknown node {node_name}"

    whatif = doc["whatif"]
    assert isinstance(whatif, dict)
    assert whatif.get("kind") in WHATIF_KINDS, f"whatif.kind must be one of {WHATIF_KINDS}"
    assert whatif.get("name") and whatif.get("namespace")
    target_kind = {"podgroup": "PodGroup", "compositepodgroup": "CompositePodGroup", "pod": "Pod"}[whatif["kind"]]
    assert (target_kind, whatif["namespace"], whatif["name"]) in seen, "whatif target not in cluster"

    version = doc.get("schedulerVersion", DEFAULT_VERSION)
    assert version in PROFILES, f"schedulerVersion {version!r} is not a profile ({', '.join(PROFILES)})"
    _check_expect(doc["expect"], seen, nodes)
    others = doc.get("expectByVersion") or {}
    assert isinstance(others, dict)
    for v, exp in others.items():
        assert v in PROFILES and v != version, f"expectByVersion: {v!r} must be another profile than {version}"
        _check_expect(exp, seen, nodes)


def _check_expect(expect: dict, seen: set, nodes: set) -> None:
    assert isinstance(expect, dict)
    unknown = set(expect) - EXPECT_KEYS
    assert not unknown, f"unknown expect keys {unknown}"
    assert expect.get("outcome") in OUTCOMES, f"expect.outcome must be one of {OUTCOMES}"
    victims = expect.get("victims", [])
    assert isinstance(victims, list)
    for v in victims:
        ns, _, name = str(v).partition("/")
        assert ns and name, f"victim {v!r} must be namespace/name"
        assert ("Pod", ns, name) in seen, f"victim {v!r} not in cluster"
    assert len(set(victims)) == len(victims), "duplicate victims"
    if expect["outcome"] != "Preempt" and expect["outcome"] != "NoPreemptionNeeded":
        # no new victims on failure paths (ongoing preemption is outcome Preempt with [])
        assert not victims
    assert isinstance(expect.get("victimOrder", False), bool)
    if "messageContains" in expect:
        assert isinstance(expect["messageContains"], str) and expect["messageContains"]
    if "nominatedNode" in expect:
        assert expect["nominatedNode"] in nodes
    if "numPDBViolations" in expect:
        assert isinstance(expect["numPDBViolations"], int) and expect["numPDBViolations"] >= 0
    for v, flag in (expect.get("violatesPDB") or {}).items():
        assert v in victims and isinstance(flag, bool), f"violatesPDB: {v!r} must be an expected victim, value true/false"
    for pod_key, node_name in (expect.get("placements") or {}).items():
        ns, _, name = pod_key.partition("/")
        assert ("Pod", ns, name) in seen, f"placement for unknown pod {pod_key}"
        assert node_name in nodes, f"placement on unknown node {node_name}"


def _run_whatif(doc: dict, tmp_path: Path, version: str = DEFAULT_VERSION) -> dict:
    from typer.testing import CliRunner

    from kubectl_wap.cli import app

    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": doc["cluster"]}))
    whatif = doc["whatif"]
    args = ["whatif", whatif["kind"], whatif["name"], "-n", whatif["namespace"],
            "--snapshot", str(snapshot), "-o", "json", "--scheduler-version", version]
    gates = ",".join(filter(None, [doc.get("featureGates"), (doc.get("featureGatesByVersion") or {}).get(version)]))
    # A gate the version removed (PodGroupPreemptionPolicy in 1.38, profiles.py removed_gates) is
    # left out under that version, as the oracle batch does (tests/oracle/batch.py _gates): the
    # fixture's gate string is its 1.37 cluster's.
    removed = PROFILES[version].removed_gates
    gates = ",".join(kv for kv in gates.split(",") if kv.split("=", 1)[0].strip() not in removed)
    if gates:
        args += ["--feature-gates", gates]
    result = CliRunner().invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"CLI raised {result.exception!r}\n{result.output}")
    try:
        return json.loads(result.stdout)
    except ValueError as err:  # pragma: no cover - diagnostic path
        raise AssertionError(f"CLI output is not JSON (exit {result.exit_code}):\n{result.output}") from err


def _pod_key(ref: dict) -> str:
    return f"{ref.get('namespace', '')}/{ref.get('name', '')}"


def _versioned_cases() -> list[tuple[Path, str]]:
    """Each fixture once for its own version, and once more for every version in expectByVersion."""
    out = []
    for p in SCENARIO_FILES:
        doc = yaml.safe_load(p.read_text())
        out.append((p, doc.get("schedulerVersion", DEFAULT_VERSION)))
        out.extend((p, v) for v in (doc.get("expectByVersion") or {}))
    return out


VERSIONED = _versioned_cases()


def _expect_for(doc: dict, version: str) -> dict:
    return doc["expect"] if version == doc.get("schedulerVersion", DEFAULT_VERSION) else doc["expectByVersion"][version]


@pytest.mark.parametrize("path,version", VERSIONED, ids=[f"{p.stem}@{v}" for p, v in VERSIONED])
def test_scenario(path: Path, version: str, tmp_path: Path):
    doc = _load(path)
    expect = _expect_for(doc, version)
    report = _run_whatif(doc, tmp_path, version)
    context = f"{path.name} (Kubernetes {version}): {doc['name']}\nsource: {doc['source']}\nmessage: {report.get('message')!r}"
    assert report.get("schedulerVersion") == version, context

    assert report.get("outcome") == expect["outcome"], context

    got = [_pod_key(v) for v in report.get("victims") or []]
    want = list(expect.get("victims", []))
    assert sorted(got) == sorted(want), f"victims differ\n{context}\n got: {got}\nwant: {want}"
    if expect.get("victimOrder"):
        assert got == want, f"victim order differs\n{context}\n got: {got}\nwant: {want}"

    if "messageContains" in expect:
        assert expect["messageContains"] in (report.get("message") or ""), context

    if "numPDBViolations" in expect:
        assert report["summary"]["pdbViolations"] == expect["numPDBViolations"], context
    if "violatesPDB" in expect:
        got_flags = {_pod_key(v): v.get("violatesPDB") for v in report.get("victims") or []}
        for pod_key, flag in expect["violatesPDB"].items():
            assert got_flags.get(pod_key) is flag, f"violatesPDB of {pod_key}\n{context}\n got: {got_flags}"

    if "nominatedNode" in expect:
        assert report.get("nominatedNode") == expect["nominatedNode"], context

    if expect.get("placements"):
        got_placements = {_pod_key(p.get("pod") or {}): p.get("node") for p in report.get("placements") or []}
        for pod_key, node_name in expect["placements"].items():
            assert got_placements.get(pod_key) == node_name, (
                f"placement of {pod_key}\n{context}\n got: {got_placements}")
