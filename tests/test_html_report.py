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
    # each bar has its segments in order, widths adding up to 100 %
    for node in placed:
        bar = re.search(rf'data-node="{node}".*?<div class="bar">(.*?)</div></div>', dom, re.S).group(1)
        kinds = re.findall(r'data-kind="(\w+)"', bar)
        assert kinds == [k for k in ("kept", "evicted", "preemptor", "free") if k in kinds] and "preemptor" in kinds
        # widths sit in the page's one <style> block, a rule per segment id (the CSP allows no style=)
        rules = dict(re.findall(r"#(s\d+)\{width:([\d.]+)%\}", dom))
        widths = [float(rules[i]) for i in re.findall(r'<div id="(s\d+)" class="seg', bar)]
        assert abs(sum(widths) - 100) < 0.01
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
    """The distinct RGB colours of an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes)."""
    import struct
    import zlib

    pos, chunks, ihdr = 8, [], None
    while pos < len(png):
        n, kind = struct.unpack(">I4s", png[pos:pos + 8])
        body = png[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    assert depth == 8 and ctype in (2, 6) and not interlace
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = w * bpp
    prev = bytearray(stride)
    out: set[tuple[int, int, int]] = set()
    i = 0
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.update(zip(line[0::bpp], line[1::bpp], line[2::bpp]))
        prev = line
    return out
