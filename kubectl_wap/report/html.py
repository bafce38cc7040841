"""`whatif -o html`: the decision as one self-contained page on stdout (issue 16). No network:
inline CSS and a few lines of inline script (the namespace filter). Per node of the placement, a
stacked bar of the deciding resource (kept / evicted / preemptor / free); the victims and the
spared units with their reasons; the cycle timeline when the document has one (`cycles`).

The namespace filter also reads the URL fragment (`page.html#ns=research`), so a link can share a
filtered view (and a headless browser can test it)."""

from __future__ import annotations

import base64
import hashlib
from html import escape
from typing import Any

from ..model import Snapshot
from ..quantity import format_amount
from .headline import collateral, headline
from .nodeuse import node_usage
from .profileinfo import profile_line
from .escape import inert

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d1d1f;background:#fff}
h1{font-size:20px;margin:0 0 6px} h2{font-size:16px;margin:22px 0 8px}
.verdict-Preempt{color:#a15c00}.verdict-NoPreemptionNeeded{color:#147a2e}.verdict-Unschedulable,.verdict-Invalid{color:#b3261e}
.verdict-NotEligible{color:#7b1fa2} dl{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:8px 0}
dt{color:#555} dd{margin:0} .node{margin:6px 0 12px} .node-name{font-family:ui-monospace,monospace}
.bar{display:flex;height:22px;border:1px solid #999;border-radius:3px;overflow:hidden;max-width:760px}
.seg{height:100%} .kept{background:#9e9e9e}.evicted{background:#e53935}.preemptor{background:#1e88e5}.free{background:#e8f5e9}
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


def _seg(kind: str, amount: int, total: int, resource: str, widths: list[str]) -> str:
    if total <= 0 or amount <= 0:
        return ""
    pct = 100.0 * amount / total
    # The width goes into the page's one <style> block (a rule per segment), not a style=
    # attribute: the Content-Security-Policy allows that block by its hash, and no inline style.
    sid = f"s{len(widths)}"
    widths.append(f"#{sid}{{width:{pct:.3f}%}}")
    return (f'<div id="{sid}" class="seg {kind}" data-kind="{kind}" data-amount="{amount}" '
            f'title="{kind}: {escape(format_amount(resource, amount))}"></div>')


def _bar(u: dict[str, Any], widths: list[str]) -> str:
    r, total = u["resource"], u["allocatable"]
    # allocatable = kept + preemptor + free after preemption; the evicted segment sits between
    # kept and preemptor (what the victims held), so the bar is longer than allocatable by it.
    free = max(u["free"], 0)
    scale = u["kept"] + u["evicted"] + u["preemptor"] + free
    segs = "".join(_seg(k, v, scale, r, widths) for k, v in (
        ("kept", u["kept"]), ("evicted", u["evicted"]), ("preemptor", u["preemptor"]), ("free", free)))
    f = lambda v: escape(format_amount(r, v))  # noqa: E731
    return (f'<div class="node" data-node="{escape(u["node"])}"><div><span class="node-name">{escape(u["node"])}</span> '
            f'<span class="nums">{escape(r)}: allocatable {f(total)}; kept {f(u["kept"])} ({u["keptPods"]} pod(s)), '
            f'evicted {f(u["evicted"])} ({u["evictedPods"]} pod(s)), preemptor {f(u["preemptor"])} ({u["preemptorPods"]} pod(s)), '
            f'free after {f(u["free"])}</span></div><div class="bar">{segs}</div></div>')


def _row(cells: list[Any], ns: str, cls: str) -> str:
    tds = "".join(f'<td class="num">{c}</td>' if isinstance(c, int) else f"<td>{escape(str(c))}</td>" for c in cells)
    return f'<tr class="{cls}" data-ns="{escape(ns)}">{tds}</tr>'


def _table(headers: list[str], rows: list[str], tid: str) -> str:
    ths = "".join(f"<th>{escape(h)}</th>" for h in headers)
    return f'<table id="{tid}"><thead><tr>{ths}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


@inert
def render_html(doc: dict, snap: Snapshot) -> str:
    pre = doc["preemptor"]
    usage = doc.get("nodeArithmetic") or node_usage(doc, snap)
    namespaces = sorted({v["unit"]["namespace"] for v in doc["victimUnits"]} | {v["unit"]["namespace"] for v in doc["reprieved"]})
    s = doc["summary"]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>kubectl wap: {escape(pre['kind'])} {escape(pre['namespace'])}/{escape(pre['name'])}</title>",
        "",  # the <style> block and the policy that names its hash, filled in below
        f'<h1 id="verdict" class="verdict-{escape(doc["outcome"])}">{escape(doc["outcome"])}: '
        f"{escape(pre['kind'])} {escape(pre['namespace'])}/{escape(pre['name'])}</h1>",
        f'<p id="message">{escape(doc["message"])}</p>',
        f"<p>{s['victimPods']} pod(s) in {s['victimUnits']} unit(s) preempted; {s['reprievedUnits']} candidate unit(s) spared; "
        f"priority {pre['priority']}, policy {escape(pre['preemptionPolicy'])}.</p>",
        f'<p id="scheduler-version">{escape(profile_line(doc) or "")}</p>',
        "<dl id=\"headline\">" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in headline(doc))
        + "".join(f"<dt>Collateral</dt><dd>{escape(c)}</dd>" for c in collateral(doc)) + "</dl>",
    ]
    widths: list[str] = []
    if usage:
        parts.append('<h2>Nodes of the placement</h2><div class="legend">'
                     '<span class="kept"></span>kept<span class="evicted"></span>evicted'
                     '<span class="preemptor"></span>preemptor<span class="free"></span>free</div>')
        parts.append('<div id="nodes">' + "".join(_bar(u, widths) for u in usage) + "</div>")
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
    css = _CSS + "\n".join(widths) + "\n"
    parts[3] = f"{_csp(css)}\n<style>{css}</style></head><body>"
    parts.append(f"<script>{_JS}</script></body></html>\n")
    return "\n".join(parts)


def _csp(css: str) -> str:
    """The page's Content-Security-Policy: nothing loaded from anywhere (default-src 'none'), only
    its own <style> and <script> blocks, each allowed by its SHA-256 (so text a snapshot smuggles
    past the escaping could still neither run nor style, nor send a form or set a base URL)."""
    def h(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    policy = f"default-src 'none'; style-src {h(css)}; script-src {h(_JS)}; base-uri 'none'; form-action 'none'"
    return f'<meta http-equiv="Content-Security-Policy" content="{policy}">'


def _cycle_text(c: Any) -> str:
    if isinstance(c, dict):
        return ", ".join(f"{k}: {v}" for k, v in c.items() if not isinstance(v, (list, dict)))
    return str(c)
