"""`-o html`: one self-contained page on stdout (issues 16 and 33). No network: inline CSS and, for
whatif, one inline script (the namespace filter); no inline event handlers.

- whatif: per node of the placement, and per collateral node (a victim runs there, the preemptor
  does not), two bars to scale where the full bar is the node's allocatable of the deciding
  resource: now (kept | evicted | free) and after preemption (kept | preemptor | free), with the
  numbers of explain's arithmetic (nodeuse.py); the victims and the spared units with reasons.
- simulate: the timeline, one row per cycle with a bar of pods bound and pods evicted (one scale
  for every cycle), who preempted whom, what is still pending, the totals.
- pending: one row per pending object with its reasons, preemption and scale-up answers.
- diff: the two scenarios side by side (victim pods to one scale) and the changes.

The namespace filter also reads the URL fragment (`page.html#ns=research`), so a link can share a
filtered view (and a headless browser can test it)."""

from __future__ import annotations

import base64
import hashlib
import re
from html import escape
from typing import Any

from ..model import Snapshot
from ..quantity import format_amount
from .age import age
from .diagnose import preemption_cell
from .escape import inert
from .headline import collateral, headline
from .nodeuse import collateral_usage, node_usage
from .profileinfo import profile_line

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d1d1f;background:#fff}
h1{font-size:20px;margin:0 0 6px} h2{font-size:16px;margin:22px 0 8px}
.verdict-Preempt{color:#a15c00}.verdict-NoPreemptionNeeded{color:#147a2e}.verdict-Unschedulable,.verdict-Invalid{color:#b3261e}
.verdict-NotEligible{color:#7b1fa2} dl{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:8px 0}
dt{color:#555} dd{margin:0} .node{margin:6px 0 12px} .node-name{font-family:ui-monospace,monospace}
.bar{display:flex;height:22px;width:760px;outline:1px solid #999;overflow:hidden;margin:2px 0}
.seg{height:100%;flex:none} .kept{background:#9e9e9e}.evicted{background:#e53935}.preemptor{background:#1e88e5}.free{background:#e8f5e9}
.bound{background:#43a047} .when{display:inline-block;width:150px;color:#555;font-size:12px} .row{display:flex;align-items:center}
.collateral .node-name::after{content:" (collateral)";color:#a15c00}
.cycle{display:grid;grid-template-columns:32px 300px 260px 420px;gap:8px;align-items:center;padding:2px 0;border-bottom:1px solid #eee}
.tl{display:flex;height:14px} .side{display:inline-block;vertical-align:top;width:46%;margin-right:3%}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle;border:1px solid #999}
table{border-collapse:collapse;margin:4px 0} th,td{text-align:left;padding:3px 10px;border-bottom:1px solid #e0e0e0;vertical-align:top}
th{background:#f5f5f5} td:first-child{white-space:nowrap} td.num{text-align:right;font-variant-numeric:tabular-nums} code{font-family:ui-monospace,monospace}
.nums{color:#444;font-size:12px} #filter{margin:8px 0}
"""

_JS = """
(function(){
  var sel=document.getElementById('ns');
  function apply(ns){
    sel.value=ns;
    document.querySelectorAll('[data-ns]').forEach(function(el){el.hidden=!!ns&&el.getAttribute('data-ns')!==ns;});
    document.getElementById('shown').textContent=document.querySelectorAll('tr.victim:not([hidden])').length;
  }
  sel.addEventListener('change',function(){apply(sel.value);history.replaceState(null,'',sel.value?'#ns='+sel.value:'#');});
  var m=/ns=([^&]+)/.exec(location.hash); apply(m?decodeURIComponent(m[1]):'');
})();
"""


def _seg(kind: str, amount: int, total: int, resource: str) -> str:
    if total <= 0 or amount <= 0:
        return ""
    pct = 100.0 * amount / total
    return (f'<div data-width="{pct:.3f}%" class="seg {kind}" data-kind="{kind}" data-amount="{amount}" '
            f'title="{kind}: {escape(format_amount(resource, amount))}"></div>')


def _bar(u: dict[str, Any]) -> str:
    """Two bars to scale: the full width is the node's allocatable (or what is asked of it, if more:
    an overcommitted node), now (kept | evicted | free) and after preemption (kept | preemptor |
    free). The numbers are nodeuse's, the ones explain prints."""
    r, total = u["resource"], u["allocatable"]
    now_free = total - u["kept"] - u["evicted"]
    scale = max(total, u["kept"] + u["evicted"], u["kept"] + u["preemptor"])
    rows = []
    for when, segs in (("now", (("kept", u["kept"]), ("evicted", u["evicted"]), ("free", max(now_free, 0)))),
                       ("after preemption", (("kept", u["kept"]), ("preemptor", u["preemptor"]), ("free", max(u["free"], 0))))):
        bar = "".join(_seg(k, v, scale, r) for k, v in segs)
        rows.append(f'<div class="row" data-when="{when}"><span class="when">{when}</span>'
                    f'<div class="bar" data-scale="{scale}">{bar}</div></div>')
    cls = "node collateral" if u.get("collateral") else "node"
    # explain's own sentence for the node (nodeuse.py writes it once for both)
    nums = u["text"].removeprefix(u["node"] + " ")
    return (f'<div class="{cls}" data-node="{escape(u["node"])}"><div><span class="node-name">{escape(u["node"])}</span> '
            f'<span class="nums">{escape(nums)}</span></div>{"".join(rows)}</div>')


def _row(cells: list[Any], ns: str, cls: str) -> str:
    tds = "".join(f'<td class="num">{c}</td>' if isinstance(c, int) else f"<td>{escape(str(c))}</td>" for c in cells)
    return f'<tr class="{cls}" data-ns="{escape(ns)}">{tds}</tr>'


def _table(headers: list[str], rows: list[str], tid: str) -> str:
    ths = "".join(f"<th>{escape(h)}</th>" for h in headers)
    return f'<table id="{tid}"><thead><tr>{ths}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


# A segment's width as _seg/_px_seg write it: a number and a unit, nothing a snapshot can reach
# (every text of a document goes through html.escape, so no quote of it ends an attribute).
_WIDTH = re.compile(r'<div data-width="([0-9.]+(?:%|px))"')


def _page(title: str, body: list[str], script: str | None = None) -> str:
    """The page around `body`: inline CSS, at most one inline script, nothing fetched. Each
    segment's width becomes a rule of the one <style> block (an id per segment), never a style=
    attribute: the Content-Security-Policy allows that block and the script by their hashes only."""
    rules: list[str] = []

    def lift(m: re.Match[str]) -> str:
        sid = f"s{len(rules)}"
        rules.append(f"#{sid}{{width:{m.group(1)}}}")
        return f'<div id="{sid}"'

    html_body = [_WIDTH.sub(lift, part) for part in body]
    css = _CSS + "\n".join(rules) + "\n"
    return "\n".join(["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{escape(title)}</title>",
                      _csp(css, script), f"<style>{css}</style></head><body>", *html_body,
                      (f"<script>{script}</script>" if script else "") + "</body></html>\n"])


def _csp(css: str, script: str | None) -> str:
    """The page's Content-Security-Policy: nothing loaded from anywhere (default-src 'none'), only
    its own <style> and <script> blocks, each allowed by its SHA-256 (so text a snapshot smuggles
    past the escaping could still neither run nor style, nor send a form or set a base URL)."""
    def h(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    scripts = f"script-src {h(script)}" if script else "script-src 'none'"
    policy = f"default-src 'none'; style-src {h(css)}; {scripts}; base-uri 'none'; form-action 'none'"
    return f'<meta http-equiv="Content-Security-Policy" content="{policy}">'


@inert
def render_html(doc: dict, snap: Snapshot) -> str:
    pre = doc["preemptor"]
    usage = (doc.get("nodeArithmetic") or node_usage(doc, snap)) + collateral_usage(doc, snap)
    namespaces = sorted({v["unit"]["namespace"] for v in doc["victimUnits"]} | {v["unit"]["namespace"] for v in doc["reprieved"]})
    s = doc["summary"]
    parts = [
        f'<h1 id="verdict" class="verdict-{escape(doc["outcome"])}">{escape(doc["outcome"])}: '
        f"{escape(pre['kind'])} {escape(pre['namespace'])}/{escape(pre['name'])}</h1>",
        f'<p id="message">{escape(doc["message"])}</p>',
        f"<p>{s['victimPods']} pod(s) in {s['victimUnits']} unit(s) preempted; {s['reprievedUnits']} candidate unit(s) spared; "
        f"priority {pre['priority']}, policy {escape(pre['preemptionPolicy'])}.</p>",
        f'<p id="scheduler-version">{escape(profile_line(doc) or "")}</p>',
        "<dl id=\"headline\">" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in headline(doc))
        + "".join(f"<dt>Collateral</dt><dd>{escape(c)}</dd>" for c in collateral(doc)) + "</dl>",
    ]
    if usage:
        parts.append('<h2>Nodes of the placement</h2><p class="nums">Each bar is the node\'s allocatable of the '
                     "deciding resource (the preemptor's tightest there; for a collateral node, the one its victims free most "
                     'of), drawn to scale.</p><div class="legend">'
                     '<span class="kept"></span>kept<span class="evicted"></span>evicted'
                     '<span class="preemptor"></span>preemptor<span class="free"></span>free</div>')
        parts.append('<div id="nodes">' + "".join(_bar(u) for u in usage) + "</div>")
    parts.append('<div id="filter"><label>Namespace <select id="ns"><option value="">all</option>'
                 + "".join(f'<option value="{escape(n)}">{escape(n)}</option>' for n in namespaces)
                 + '</select></label> <span id="shown"></span> victim unit(s) shown</div>')
    vrows = [_row([f"{v['unit']['namespace']}/{v['unit']['name']}", v["unit"]["kind"], v["unit"]["disruptionMode"] or "-",
                   v["unit"]["priority"], len(v["pods"]), ",".join(sorted({p["node"] for p in v["pods"]})),
                   "yes" if v["violatesPDB"] else "-", v["reason"]], v["unit"]["namespace"], "victim")
             for v in doc["victimUnits"]]
    parts.append("<h2>Victims</h2>" + _table(["UNIT", "KIND", "MODE", "PRIORITY", "PODS", "NODES", "VIOLATES-PDB", "REASON"], vrows, "victims"))
    srows = [_row([f"{v['unit']['namespace']}/{v['unit']['name']}", v["unit"]["kind"], v["unit"]["disruptionMode"] or "-",
                   v["unit"]["priority"], len(v["pods"]), "yes" if v["violatesPDB"] else "-", v["reason"]], v["unit"]["namespace"], "spared")
             for v in doc["reprieved"]]
    parts.append(f"<h2>Spared ({len(srows)} shown of {s['reprievedUnits']})</h2>"
                 + _table(["UNIT", "KIND", "MODE", "PRIORITY", "PODS", "VIOLATES-PDB", "REASON"], srows, "spared"))
    if doc.get("cycles"):
        crows = "".join(f"<li>{escape(_cycle_text(c))}</li>" for c in doc["cycles"])
        parts.append(f'<h2>Cycles</h2><ol id="cycles">{crows}</ol>')
    return _page(f"kubectl wap: {pre['kind']} {pre['namespace']}/{pre['name']}", parts, _JS)


def _cycle_text(c: Any) -> str:
    if isinstance(c, dict):
        return ", ".join(f"{k}: {v}" for k, v in c.items() if not isinstance(v, (list, dict)))
    return str(c)


# ---- simulate, pending, diff ---------------------------------------------------------------------

_TIMELINE_PX = 400  # the widest cycle's bar (pods bound + pods evicted), in CSS pixels


def _ref(o: dict) -> str:
    return f"{o['kind']} {o['namespace']}/{o['name']}"


def _px_seg(kind: str, n: int, px_per_pod: float, what: str) -> str:
    if n <= 0:
        return ""
    return (f'<div data-width="{n * px_per_pod:.3f}px" class="seg {kind}" data-kind="{kind}" data-count="{n}" '
            f'title="{n} {what}"></div>')


@inert
def render_simulation_html(doc: dict) -> str:
    """The simulation as a timeline: a row per cycle, its bar the pods it bound (green) and the
    pods it evicted (red), every cycle to one scale (pixels per pod)."""
    s = doc["summary"]
    most = max((len(c["placed"]) + len(c["victims"]) for c in doc["cycles"]), default=0)
    px = _TIMELINE_PX / most if most else 0.0
    parts = [
        f'<h1 id="verdict">Simulation: {s["cycles"]} cycle(s), {s["preemptions"]} preemption(s)</h1>',
        f"<p>{s['evictedPods']} pod(s) evicted, {s['recreatedPods']} recreated by their controllers; {s['boundPods']} pod(s) bound; "
        f"{s['pendingObjects']} object(s) still pending; cascade depth {s['cascadeDepth']}; stopped: {escape(doc['stopReason'])}.</p>",
        f'<p id="scheduler-version">{escape(profile_line(doc) or "")}</p>',
        '<h2>Timeline</h2><div class="legend"><span class="bound"></span>pods bound (placed)<span class="evicted"></span>pods evicted'
        f'</div><p class="nums">One scale for every cycle: {px:.2f} px per pod.</p>',
        f'<div id="timeline" data-px-per-pod="{px:.6f}">',
    ]
    for c in doc["cycles"]:
        bar = (_px_seg("bound", len(c["placed"]), px, "pod(s) bound or nominated")
               + _px_seg("evicted", len(c["victims"]), px, "pod(s) evicted"))
        victims = ", ".join(f"{v['namespace']}/{v['name']}" for v in c["victims"])
        parts.append(f'<div class="cycle" data-cycle="{c["n"]}" data-action="{escape(c["action"])}"><span title="{escape(c["time"] or "")}">{c["n"]}</span>'
                     f'<span>{escape(_ref(c["object"]))} <span class="nums">priority {c["priority"]}</span></span>'
                     f'<span>{escape(c["action"])}<br><span class="nums">{escape(c["message"] or "")}</span></span>'
                     f'<div class="tl" title="{escape(victims)}">{bar}</div></div>')
    parts.append("</div>")
    if doc["cascade"]:
        parts.append("<h2>Who preempted whom</h2>" + _tree_html(doc["cascade"]))
    if doc["pending"]:
        rows = [_row([p["kind"], f"{p['namespace']}/{p['name']}", p["priority"], p["pods"], p["reason"]], p["namespace"], "pending")
                for p in doc["pending"]]
        parts.append("<h2>Still pending</h2>" + _table(["KIND", "OBJECT", "PRIORITY", "PODS", "REASON"], rows, "pending"))
    t = doc["totals"]
    by = lambda d, sep: ", ".join(f"{k}{sep}{v}" for k, v in d.items()) or "none"  # noqa: E731
    parts.append('<h2>Totals</h2><dl id="totals">'
                 f"<dt>Evictions by namespace</dt><dd>{escape(by(t['evictionsByNamespace'], ' '))}</dd>"
                 f"<dt>By priority</dt><dd>{escape(by(t['evictionsByPriority'], ': '))}</dd>"
                 f"<dt>PDB violations</dt><dd>{t['pdbViolations']}</dd>"
                 f"<dt>GPU-hours of work lost</dt><dd>{escape(', '.join(f'{r} {h:g}' for r, h in t['gpuHoursLost'].items()) or 'none')}</dd></dl>")
    return _page("kubectl wap simulate", parts)


def _tree_html(nodes: list[dict]) -> str:
    items = []
    for n in nodes:
        victims = ", ".join(v["pod"] + (f" -> {v['recreatedAs']}" if v["recreatedAs"] else "") for v in n["victims"])
        items.append(f"<li>cycle {n['cycle']}: {escape(_ref(n['object']))} (priority {n['priority']}) preempted "
                     f"{len(n['victims'])} pod(s): {escape(victims)}" + (_tree_html(n["then"]) if n["then"] else "") + "</li>")
    return f'<ul class="cascade">{"".join(items)}</ul>'


@inert
def render_pending_html(doc: dict) -> str:
    """One row per pending object: why, whether preemption or one more node would help."""
    rows = [_row([r["kind"], f"{r['namespace']}/{r['name']}", r["priority"], r["pendingPods"], age(r["ageSeconds"]), r["reason"],
                  preemption_cell(r["preemption"]), r["scaleUp"] or "-", r["upstreamReason"] or "-"], r["namespace"], "pending")
            for r in doc["items"]]
    where = f" in namespace {doc['namespace']}" if doc.get("namespace") else ""
    parts = [f'<h1 id="verdict">{len(rows)} pending object(s){escape(where)}</h1>',
             f'<p id="scheduler-version">{escape(profile_line(doc) or "")}</p>',
             _table(["KIND", "OBJECT", "PRIORITY", "PODS", "AGE", "REASON", "PREEMPTION", "ADD-NODE", "UPSTREAM"], rows, "pending")]
    return _page("kubectl wap pending", parts)


@inert
def render_diff_html(d: dict) -> str:
    """Scenario A beside scenario B (victim pods and placed pods to one scale), then the changes."""
    a, b = d["a"], d["b"]
    most = max(a["victimPods"], b["victimPods"], a["placedPods"], b["placedPods"], 1)
    px = 300 / most
    sides = []
    for label, x, side in zip(d["labels"], (a, b), ("a", "b")):
        sides.append(f'<div class="side" data-side="{side}"><h2>{escape(label)}</h2>'
                     f'<p class="verdict-{escape(x["outcome"])}">{escape(x["outcome"])}: {escape(x["message"])}</p>'
                     f'<div class="row"><span class="when">victim pods {x["victimPods"]}</span><div class="tl">'
                     f'{_px_seg("evicted", x["victimPods"], px, "victim pod(s)")}</div></div>'
                     f'<div class="row"><span class="when">placed pods {x["placedPods"]}</span><div class="tl">'
                     f'{_px_seg("bound", x["placedPods"], px, "pod(s) placed")}</div></div></div>')
    rows = ([_row(["victim+", f"{v['namespace']}/{v['name']}", "-", v["node"]], v["namespace"], "change") for v in d["victimsAdded"]]
            + [_row(["victim-", f"{v['namespace']}/{v['name']}", v["node"], "-"], v["namespace"], "change") for v in d["victimsRemoved"]]
            + [_row(["placed", f"{c['namespace']}/{c['name']}", c["before"] or "-", c["after"] or "-"], c["namespace"], "change")
               for c in d["placementChanges"]])
    verdict = f"changed {a['outcome']} -> {b['outcome']}" if a["outcome"] != b["outcome"] else "unchanged"
    parts = [f'<h1 id="verdict">Verdict {escape(verdict)}</h1>',
             f"<p>{len(d['victimsAdded'])} victim pod(s) added, {len(d['victimsRemoved'])} removed, "
             f"{len(d['placementChanges'])} placement change(s).</p>",
             f'<div id="sides" data-px-per-pod="{px:.6f}">{"".join(sides)}</div>',
             "<h2>Changes</h2>" + _table(["CHANGE", "POD", "BEFORE", "AFTER"], rows, "changes")]
    return _page("kubectl wap diff", parts)
