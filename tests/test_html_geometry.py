"""`-o html` drawn to scale (issue 33 item 4), checked as headless Chromium lays the page out: the
pixel width of every bar segment (read from the DOM with getBoundingClientRect) is its amount over
the node's allocatable times the bar's width, the numbers beside each bar are explain's, the
collateral node is drawn, and a row of the screenshot through each bar shows the same runs of
colour. The same for simulate's timeline (pixels per pod) and diff. Skipped without Chromium."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubectl_wap.cli import app
from tests.png import rgb_rows

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--force-device-scale-factor=1"]
WINDOW = "--window-size=1300,1600"
JOB1 = ["whatif", "podgroup", "job-1", "-n", "ml", "--demo"]
BAR_PX = 760  # .bar{width:760px}
COLOURS = {"kept": (0x9E, 0x9E, 0x9E), "evicted": (0xE5, 0x39, 0x35), "preemptor": (0x1E, 0x88, 0xE5),
           "free": (0xE8, 0xF5, 0xE9), "bound": (0x43, 0xA0, 0x47)}

# Appended by the test only: reads the layout of every bar segment into the DOM for --dump-dom.
# (A Content-Security-Policy on the page would block it; the test's copy drops that meta tag.)
MEASURE = """<script>
var out=[];document.querySelectorAll('.seg').forEach(function(e){var r=e.getBoundingClientRect(),
p=e.parentElement.getBoundingClientRect(),n=e.closest('[data-node]'),w=e.closest('[data-when]'),c=e.closest('[data-cycle]'),
s=e.closest('[data-side]');out.push({kind:e.getAttribute('data-kind'),amount:+e.getAttribute('data-amount'),
count:+e.getAttribute('data-count'),node:n&&n.getAttribute('data-node'),when:w&&w.getAttribute('data-when'),
cycle:c&&+c.getAttribute('data-cycle'),side:s&&s.getAttribute('data-side'),scale:+e.parentElement.getAttribute('data-scale'),
x:r.left,y:r.top,w:r.width,h:r.height,barW:p.width});});
var pre=document.createElement('pre');pre.id='geom';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
</script>"""


def _cli(args: list[str]) -> str:
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    return r.stdout


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    if not CHROMIUM:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", WINDOW, *args],
                          capture_output=True, text=True, timeout=120)


def _layout(page: str, tmp_path: Path) -> tuple[list[dict], str]:
    """(each segment's geometry, the DOM) as Chromium lays the page out."""
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "measure.html"
    path.write_text(page.replace("</body>", MEASURE + "</body>"))
    p = _chromium(tmp_path, "--dump-dom", path.as_uri())
    assert p.returncode == 0, p.stderr[-2000:]
    m = re.search(r'<pre id="geom">(.*?)</pre>', p.stdout, re.S)
    assert m, p.stdout[-2000:]
    return json.loads(html.unescape(m.group(1))), p.stdout


def _screenshot(page: str, tmp_path: Path) -> list[list[tuple[int, int, int]]]:
    path, shot = tmp_path / "page.html", tmp_path / "shot.png"
    path.write_text(page)
    p = _chromium(tmp_path, f"--screenshot={shot}", path.as_uri())
    assert p.returncode == 0 and shot.exists(), p.stderr[-2000:]
    return rgb_rows(shot.read_bytes())


@pytest.fixture(scope="module")
def whatif() -> tuple[str, dict]:
    return _cli([*JOB1, "-o", "html"]), json.loads(_cli([*JOB1, "-o", "json"]))


def test_whatif_bars_are_to_scale(whatif, tmp_path):
    page, doc = whatif
    segs, dom = _layout(page, tmp_path)
    arithmetic = {a["node"]: a for a in doc["nodeArithmetic"]}
    nodes = {s["node"] for s in segs if s["node"]}
    assert nodes == set(arithmetic) | {"gpu-a2"}  # the placement's nodes and the collateral one
    for s in segs:
        if not s["node"]:
            continue  # the legend's swatches
        assert abs(s["barW"] - BAR_PX) < 0.5  # every bar is the node's allocatable (none is overcommitted)
        assert abs(s["w"] - s["amount"] / s["scale"] * BAR_PX) < 1.0, s
    # the case: gpu-a3 holds 8 GPUs; the victims free 4 of them, the preemptor takes 4
    a3 = {(s["when"], s["kind"]): s for s in segs if s["node"] == "gpu-a3"}
    assert abs(a3["now", "evicted"]["w"] - BAR_PX / 2) < 1 and abs(a3["after preemption", "preemptor"]["w"] - BAR_PX / 2) < 1
    # per bar, the amounts are explain's: kept + evicted + free now, kept + preemptor + free after
    for node, a in arithmetic.items():
        mine = [s for s in segs if s["node"] == node]
        now = {s["kind"]: s["amount"] for s in mine if s["when"] == "now"}
        after = {s["kind"]: s["amount"] for s in mine if s["when"] == "after preemption"}
        assert after.get("kept", 0) == a["kept"] and after.get("preemptor", 0) == a["preemptor"] and after.get("free", 0) == a["free"]
        assert now.get("evicted", 0) == a["evicted"] and sum(now.values()) == a["allocatable"] == sum(after.values())
        assert html.escape(a["text"].removeprefix(node + " ")) in dom or a["text"].removeprefix(node + " ") in html.unescape(dom)


def test_whatif_numbers_are_explains(whatif):
    """The sentence beside each bar is the one explain prints for the node."""
    page, _ = whatif
    explain = json.loads(_cli(["explain", "podgroup", "job-1", "-n", "ml", "--demo", "-o", "json"]))
    texts = [a["text"] for a in explain.get("nodeArithmetic") or []]
    assert texts
    for t in texts:
        node, _, rest = t.partition(" ")
        assert f'data-node="{node}"' in page and html.escape(rest, quote=False) in page


def test_whatif_screenshot_rows_match_the_amounts(whatif, tmp_path):
    page, _ = whatif
    segs, _ = _layout(page, tmp_path)
    rows = _screenshot(page, tmp_path)
    bars: dict[tuple[str, str], list[dict]] = {}
    for s in segs:
        if s["node"]:
            bars.setdefault((s["node"], s["when"]), []).append(s)
    assert len(bars) == 12  # 6 nodes x (now, after)
    for (node, when), ss in bars.items():
        y = int(ss[0]["y"] + ss[0]["h"] / 2)
        x0 = int(round(min(s["x"] for s in ss)))
        line = rows[y][x0:x0 + BAR_PX]
        for s in ss:
            px = sum(1 for c in line if c == COLOURS[s["kind"]])
            want = s["amount"] / s["scale"] * BAR_PX
            assert abs(px - want) <= 2, (node, when, s["kind"], px, want)


def test_simulate_timeline_to_one_scale(tmp_path):
    page = _cli(["simulate", "--demo", "-o", "html"])
    doc = json.loads(_cli(["simulate", "--demo", "-o", "json"]))
    segs, dom = _layout(page, tmp_path)
    px = float(re.search(r'id="timeline" data-px-per-pod="([\d.]+)"', page).group(1))
    cycles = {c["n"]: c for c in doc["cycles"]}
    assert len(re.findall(r'class="cycle" data-cycle=', dom)) == len(cycles)
    seen = 0
    for s in segs:
        if s["cycle"] is None:
            continue
        c = cycles[s["cycle"]]
        want = len(c["placed"]) if s["kind"] == "bound" else len(c["victims"])
        assert s["count"] == want
        assert abs(s["w"] - want * px) < 1.0, s
        seen += 1
    assert seen == sum((len(c["placed"]) > 0) + (len(c["victims"]) > 0) for c in cycles.values())
    # cycle 2 (ml/job-1 preempts): 16 pods nominated, 10 evicted: red is 10/16 of green
    two = {s["kind"]: s["w"] for s in segs if s["cycle"] == 2}
    assert abs(two["evicted"] / two["bound"] - 10 / 16) < 0.01
    assert "research/protein-fold-4zpnf" in dom  # who preempted whom, with the recreated pods


def test_pending_and_diff_pages(tmp_path):
    pending = _cli(["pending", "-A", "--demo", "-o", "html"])
    doc = json.loads(_cli(["pending", "-A", "--demo", "-o", "json"]))
    _, dom = _layout(pending, tmp_path)
    assert len(re.findall(r'<tr class="pending"', dom)) == len(doc["items"]) == 5
    assert "ml/job-1" in dom and "yes: 10 pod(s) in 7 unit(s)" in dom

    to = "--replicas 4"
    diff = _cli(["diff", "podgroup", "job-1", "-n", "ml", "--demo", "--to", to, "-o", "html"])
    d = json.loads(_cli(["diff", "podgroup", "job-1", "-n", "ml", "--demo", "--to", to, "-o", "json"]))
    segs, dom = _layout(diff, tmp_path / "d")
    px = float(re.search(r'data-px-per-pod="([\d.]+)"', diff).group(1))
    for s in segs:
        if s["side"]:
            want = d[s["side"]]["victimPods" if s["kind"] == "evicted" else "placedPods"]
            assert abs(s["w"] - want * px) < 1.0, s
    assert len(re.findall(r'<tr class="change"', dom)) == len(d["victimsAdded"]) + len(d["victimsRemoved"]) + len(d["placementChanges"])


@pytest.mark.parametrize("args", [
    JOB1, ["simulate", "--demo"], ["pending", "-A", "--demo"],
    ["diff", "podgroup", "job-1", "-n", "ml", "--demo", "--to", "--replicas 4"],
], ids=["whatif", "simulate", "pending", "diff"])
def test_every_page_is_self_contained(args):
    """Nothing fetched, no inline event handlers, at most one inline script (whatif's filter)."""
    page = _cli([*args, "-o", "html"])
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page) and "@import" not in page and "url(" not in page
    assert not re.search(r"<[^>]+\son[a-z]+\s*=", page)
    assert page.count("<script") == (1 if args[0] == "whatif" else 0)
