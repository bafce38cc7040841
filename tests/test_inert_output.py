"""Issue 31 item 1: one escaping rule for every byte that reaches a terminal or a page.

A shared snapshot carries hostile text where the API server stores any string (label values, a
reference to a PodGroup, a condition's or an event's message, a kubeconfig's context name). Every
output but json/yaml shows it only as escapes: -o name (whatif, rank), -o jsonpath,
-o custom-columns, the --optimal block, pending (table and wide), diff, why-preempted, the
completion candidates, and the HTML page (which also carries a Content-Security-Policy)."""

from __future__ import annotations

import base64
import hashlib
import importlib
import inspect
import json
import pkgutil
import re
import sys
import unicodedata
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kubectl_wap.report
from kubectl_wap.cli import app
from kubectl_wap.report.escape import printable
from tests.builders import make_node, make_pod, make_podgroup

# ESC[2J clears the screen, OSC 8 is a hyperlink, OSC 52 writes the clipboard; CR and BS rewrite a
# line; U+202E reverses it; a zero-width space, a word joiner and an invisible tag character hide
# text; U+0085 (NEL) and U+2028 end a line in some terminals.
EVIL = "ev\x1b[2Jx\x1b]8;;http://e.x/\x07L\x1b]8;;\x07\x1b]52;c;aGk=\x07\r\b\u202eZ\u200b\u2060\U000e0041\x85\u2028\nforged"
RAW = ["\x1b", "\x07", "\r", "\b", "\u202e", "\u200b", "\u2060", "\U000e0041", "\x85", "\u2028"]
T0 = 1_700_000_000


def _cluster() -> dict:
    n1 = make_node("n1").alloc(cpu="4", memory="8Gi").label(zone=EVIL).obj()
    n2 = make_node("n2").alloc(cpu="4", memory="8Gi").obj()
    victim = make_pod("victim", "ml").priority(1).req(cpu="3").on("n1", start=T0).label(team=EVIL).obj()
    victim["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                                       "message": EVIL, "lastTransitionTime": "2023-11-14T22:13:20Z"}]
    busy = make_pod("busy", "ml").priority(1).req(cpu="3").on("n2", start=T0).obj()
    want = make_pod("want", "ml").priority(100).req(cpu="2").group("pg").created(T0).obj()
    orphan = make_pod("orphan", "ml").priority(5).req(cpu="1").group(EVIL).created(T0).obj()
    stuck = make_pod("stuck", "ml").priority(5).req(cpu="1").node_selector(disk=EVIL).created(T0).obj()
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "ml"}, "reason": "Preempted",
             "message": EVIL, "involvedObject": {"kind": "Pod", "name": "victim", "namespace": "ml"},
             "lastTimestamp": "2023-11-14T22:13:20Z"}
    items = [n1, n2, victim, busy, want, orphan, stuck, make_podgroup("pg", "ml").gang(1).priority(100).obj(), event]
    return {"apiVersion": "v1", "kind": "List", "items": items}


@pytest.fixture(scope="module")
def snap(tmp_path_factory: pytest.TempPathFactory) -> str:
    p = tmp_path_factory.mktemp("inert") / "evil.json"
    p.write_text(json.dumps(_cluster()))
    return str(p)


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, [*args, "--color", "always"])
    return r.exit_code, r.stdout + (r.stderr if r.stderr_bytes is not None else "")


WHATIF = ["whatif", "podgroup", "pg", "-n", "ml"]
CASES = {
    "whatif table": [*WHATIF],
    "whatif wide": [*WHATIF, "-o", "wide"],
    "whatif -o name": [*WHATIF, "-o", "name"],
    "whatif jsonpath": [*WHATIF, "-o", "jsonpath={range .victims[*]}{.name}{\"\\n\"}{end}{.warnings[0]}"],
    "whatif custom-columns": [*WHATIF, "-o", "custom-columns=NAME:.name,LABELS:.labels,NODE:.node"],
    "whatif --optimal": [*WHATIF, "--optimal"],
    "whatif html": [*WHATIF, "-o", "html"],
    "explain": ["explain", "podgroup", "pg", "-n", "ml"],
    "rank": ["rank", "-n", "ml", "-o", "wide"],
    "rank -o name": ["rank", "-n", "ml", "-o", "name"],
    "rank custom-columns": ["rank", "-n", "ml", "-o", "custom-columns=U:.name,L:.labels"],
    "pending": ["pending", "-n", "ml"],
    "pending wide": ["pending", "-n", "ml", "-o", "wide"],
    "diff": ["diff", *WHATIF[1:], "--to", "--feature-gates PodGroupPreemptionPolicy=true"],
    "why-preempted": ["why-preempted", "pod", "victim", "-n", "ml"],
    "simulate": ["simulate", "-n", "ml"],
    # issue 33: every command takes every format, so every new path is checked
    "whatif jsonpath-as-json": [*WHATIF, "-o", "jsonpath-as-json={.victims[*].labels}"],
    "explain -o name": ["explain", *WHATIF[1:], "-o", "name"],
    "explain custom-columns": ["explain", *WHATIF[1:], "-o", "custom-columns=NAME:.name,LABELS:.labels"],
    "pending -o name": ["pending", "-n", "ml", "-o", "name"],
    "pending custom-columns": ["pending", "-n", "ml", "-o", "custom-columns=N:.name,R:.reason,B:.blockers"],
    "pending jsonpath": ["pending", "-n", "ml", "-o", "jsonpath={range .items[*]}{.name} {.reason}{\"\\n\"}{end}"],
    "why-preempted custom-columns": ["why-preempted", "pod/victim", "-n", "ml", "-o", "custom-columns=K:.kind,E:.evidence"],
    "why-preempted jsonpath": ["why-preempted", "pod/victim", "-n", "ml", "-o", "jsonpath={.evidence}{.suspects}"],
    "simulate custom-columns": ["simulate", "-n", "ml", "-o", "custom-columns=N:.n,O:.object,M:.message"],
    "simulate -o name": ["simulate", "-n", "ml", "-o", "name"],
    "diff custom-columns": ["diff", *WHATIF[1:], "--to", "--replicas 2", "-o", "custom-columns=C:.change,N:.name,U:.unit"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_text_reaches_no_output_raw(snap: str, case: str) -> None:
    code, out = _run(*CASES[case], "--snapshot", snap)
    assert code == 0, out
    for ch in RAW:
        # Rich's own colour sequences start with ESC too: only ours (ESC ] or ESC[2J) are hostile.
        if ch == "\x1b":
            assert "\x1b]" not in out and "\x1b[2J" not in out, (case, out)
        else:
            assert ch not in out, (case, repr(ch), out)
    assert "\nforged" not in out, (case, out)


def test_escapes_are_shown_where_the_text_is(snap: str) -> None:
    code, out = _run(*CASES["whatif jsonpath"], "--snapshot", snap)
    assert code == 0 and "ev\\x1b[2Jx\\x1b]8;;http://e.x/\\x07L" in out and "\\u202eZ\\u200b\\u2060\\U000e0041\\x85\\u2028\\nforged" in out, out
    # the template's own newline literal still ends the line
    assert out.count("\n") >= 1


def test_jsonpath_literal_that_is_not_json_is_one_line() -> None:
    code, out = _run("whatif", "podgroup", "job-1", "-n", "ml", "--demo", "-o", 'jsonpath={"\\x"}')
    assert code == 2 and "jsonpath" in out and len(out.strip().splitlines()) == 1, out


def test_completion_candidates_are_escaped(tmp_path: Path) -> None:
    from kubectl_wap.cli.completion import candidates

    kc = tmp_path / "kubeconfig"
    kc.write_text(json.dumps({"apiVersion": "v1", "kind": "Config", "clusters": [], "users": [],
                              "contexts": [{"name": "ctx\nforged\x1b]52;c;aGk=\x07", "context": {"cluster": "c", "user": "u"}}]}))
    cands, _ = candidates(["rank", "--kubeconfig", str(kc), "--context", ""])
    assert cands == ["ctx\\nforged\\x1b]52;c;aGk=\\x07"], cands


def test_html_page_has_a_content_security_policy_that_allows_only_its_own_script_and_style(snap: str) -> None:
    code, page = _run(*CASES["whatif html"], "--snapshot", snap)
    assert code == 0, page
    m = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert m, page[:400]
    policy = dict((d.split()[0], d.split()[1:]) for d in m.group(1).split(";") if d.strip())
    assert policy["default-src"] == ["'none'"]
    for kind in ("script", "style"):
        blocks = re.findall(rf"<{kind}>(.*?)</{kind}>", page, re.S)
        assert len(blocks) == 1
        digest = base64.b64encode(hashlib.sha256(blocks[0].encode()).digest()).decode()
        assert policy[f"{kind}-src"] == [f"'sha256-{digest}'"], (kind, policy)
    # no inline style or handler attributes: the policy would block them (or need 'unsafe-inline')
    assert not re.search(r"\sstyle=|\son\w+=", page)
    for directive in ("base-uri", "form-action"):
        assert policy[directive] == ["'none'"]


def test_printable_escapes_every_invisible_or_control_character() -> None:
    """The ranges in escape.py hold every Cc, Cf, Zl, Zp and Cs character of this Python's Unicode
    database, and nothing visible (letters, marks, spaces, symbols stay as they are)."""
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        cat = unicodedata.category(ch)
        if cat == "Cn":  # unassigned here, maybe a format character in a newer Unicode: either way
            continue
        assert (printable(ch) != ch) == (cat in ("Cc", "Cf", "Zl", "Zp", "Cs")), (hex(cp), cat)


def test_custom_columns_cells_are_escaped() -> None:
    from kubectl_wap.report.formats import column_spec, custom_columns

    for no_headers in (False, True):
        # a hostile value, and a hostile header (the spec is the user's, but a file can hold anything)
        out = custom_columns(column_spec("N:.name,L:.labels.team," + EVIL.replace(":", "") + ":.name"), [{"name": "a", "labels": {"team": EVIL}}],
                             no_headers)
        assert not any(ch in out for ch in RAW) and "\nforged" not in out, out
        assert "\\x1b]52" in out


def test_every_renderer_of_report_is_inert() -> None:
    """Every `render_*` (and the warning printer) in report/ escapes its document first, so a new
    command cannot forget to."""
    missing = []
    for info in pkgutil.iter_modules(kubectl_wap.report.__path__):
        mod = importlib.import_module(f"kubectl_wap.report.{info.name}")
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if fn.__module__ == mod.__name__ and (name.startswith("render_") or name == "print_warnings"):
                if not getattr(fn, "__inert__", False):
                    missing.append(f"{mod.__name__}.{name}")
    assert not missing, f"renderers that do not go through escape.inert: {missing}"
