"""`whatif -o html` (issue 16): one self-contained page, checked as a browser renders it: headless
Chromium loads the page and dumps the DOM after its script ran (namespace filter from the URL
fragment), and takes a screenshot. Skipped when Chromium is not installed (.ci/run installs
Debian's `chromium`)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubectl_wap.cli import app
from tests.png import rgb_rows

JOB1 = ["whatif", "podgroup", "job-1", "-n", "ml", "--demo"]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars"]


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> tuple[Path, str, dict]:
    r = CliRunner().invoke(app, [*JOB1, "-o", "html"])
    assert r.exit_code == 0, r.output
    doc = json.loads(CliRunner().invoke(app, [*JOB1, "-o", "json"]).stdout)
    path = tmp_path_factory.mktemp("html") / "job-1.html"
    path.write_text(r.stdout)
    return path, r.stdout, doc


def test_page_is_self_contained(page):
    _, html, _ = page
    assert html.startswith("<!DOCTYPE html>")
    # no network: nothing fetched (no src=, href= to a URL, @import, url())
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    if not CHROMIUM:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    profile = tmp_path / "profile"
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=120)


def test_rendered_dom(page, tmp_path):
    path, _, doc = page
    p = _chromium(tmp_path, "--dump-dom", path.as_uri())
    assert p.returncode == 0, p.stderr[-2000:]
    dom = p.stdout
    assert 'id="verdict"' in dom and "Preempt: PodGroup ml/job-1" in dom
    placed = sorted({pl["node"] for pl in doc["placements"]})
    assert re.findall(r'class="node" data-node="([^"]+)"', dom) == placed
    # the collateral node (research/protein-fold's pod on gpu-a2) is drawn too
    assert re.findall(r'class="node collateral" data-node="([^"]+)"', dom) == ["gpu-a2"]
    # each node: now (kept | evicted | free) and after (kept | preemptor | free), each the whole
    # allocatable (the demo's nodes are not overcommitted): widths add up to 100 %
    nodes_html = dom[dom.index('id="nodes"'):dom.index('id="filter"')]
    for node in placed:
        block = nodes_html.split(f'data-node="{node}"')[1].split("data-node=")[0]
        bars = block.split('class="bar"')[1:]
        assert len(bars) == 2, block
        # widths sit in the page's one <style> block, a rule per segment id (the CSP allows no style=)
        rules = dict(re.findall(r"#(s\d+)\{width:([\d.]+)%\}", dom))
        for bar, order in zip(bars, (("kept", "evicted", "free"), ("kept", "preemptor", "free"))):
            kinds = re.findall(r'data-kind="(\w+)"', bar)
            assert kinds == [k for k in order if k in kinds], kinds
            widths = [float(rules[i]) for i in re.findall(r'<div id="(s\d+)" class="seg', bar)]
            assert abs(sum(widths) - 100) < 0.01, widths
    assert len(re.findall(r'<tr class="victim"', dom)) == len(doc["victimUnits"])
    assert len(re.findall(r'<tr class="spared"', dom)) == len(doc["reprieved"])
    assert re.search(r'id="shown">7<', dom)  # the script ran: every victim unit shown


def test_namespace_filter_in_the_browser(page, tmp_path):
    path, _, doc = page
    p = _chromium(tmp_path, "--dump-dom", path.as_uri() + "#ns=research")
    dom = p.stdout
    rows = re.findall(r'<tr class="(victim|spared)" data-ns="([^"]+)"( hidden="")?', dom)
    assert rows
    for _, ns, hidden in rows:
        assert bool(hidden) == (ns != "research"), (ns, hidden)
    research = sum(1 for v in doc["victimUnits"] if v["unit"]["namespace"] == "research")
    assert re.search(rf'id="shown">{research}<', dom)


def test_screenshot(page, tmp_path):
    path, _, _ = page
    shot = tmp_path / "shot.png"
    p = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,900", path.as_uri())
    assert p.returncode == 0 and shot.exists(), p.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a rendered page, not a blank one
    # The picture has the bar colours: kept grey, evicted red, preemptor blue.
    px = _pixels(data)
    colours = {(0x9e, 0x9e, 0x9e), (0xe5, 0x39, 0x35), (0x1e, 0x88, 0xe5)}
    assert colours <= px, sorted(px)[:20]


def _pixels(png: bytes) -> set[tuple[int, int, int]]:
    """The distinct RGB colours of the screenshot."""
    return {px for row in rgb_rows(png) for px in row}
