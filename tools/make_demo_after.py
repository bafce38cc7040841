"""Write docs/examples/demo-after-job-1.json.gz: the demo cluster right after kube-scheduler acted on
our `whatif podgroup job-1 -n ml --demo` answer (executor.go PreemptPod): every victim has the
DisruptionTarget condition (PreemptionByScheduler, 11:58:00Z) and a deletionTimestamp, every job-1
pod its nominatedNodeName. No events (they are what a capture an hour later would have lost).
It is the input of `why-preempted` in the README and docs/commands/why-preempted.md. Deterministic; `--check` says if the file is stale.

    python tools/make_demo_after.py [--check]
"""

from __future__ import annotations

import argparse
import copy
import gzip
import io
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

OUT = REPO / "docs" / "examples" / "demo-after-job-1.json.gz"
AT = "2026-11-30T11:58:00Z"


def aftermath(items: list, doc: dict, at: str = AT, scheduler: str = "default-scheduler") -> list:
    """Raw items as `doc` (a WhatIfReport) would leave them once kube-scheduler has acted on it."""
    victims = {(v["namespace"], v["name"]) for v in doc["victims"]}
    nominated = {(p["pod"]["namespace"], p["pod"]["name"]): p["node"] for p in doc["placements"]}
    typ = doc["preemptor"]["kind"].lower()
    out = []
    for o in items:
        o = copy.deepcopy(o)
        if isinstance(o, dict) and o.get("kind") == "Pod":
            md, st = o["metadata"], o.setdefault("status", {})
            key = (md.get("namespace") or "default", md["name"])
            if key in victims:
                md["deletionTimestamp"] = at
                st["conditions"] = [c for c in st.get("conditions") or [] if c.get("type") != "DisruptionTarget"] + [
                    {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "lastTransitionTime": at,
                     "message": f"{scheduler}: preempting to accommodate a higher priority {typ}"}]
            if key in nominated:
                st["nominatedNodeName"] = nominated[key]
        out.append(o)
    return out


def render() -> bytes:
    from kubectl_wap.preemption.analyze import analyze
    from kubectl_wap.report.document import to_document
    from kubectl_wap.snapshot.decode.convert import build_snapshot
    from kubectl_wap.snapshot.io.files import DEMO_PATH
    from kubectl_wap.snapshot.io.save import _write_body
    from kubectl_wap.snapshot.share.strip import strip_object

    demo = json.loads(DEMO_PATH.read_text(encoding="utf-8"))
    doc = to_document(analyze(build_snapshot(demo["items"]), "podgroup", "ml", "job-1"))
    header = dict(demo["header"], server={"url": "demo-after-job-1", "version": demo["header"]["server"]["version"]})
    # As `kubectl wap snapshot` would write it: stripped items, our streaming layout.
    text = io.StringIO()
    _write_body(text, header, [strip_object(o) for o in aftermath(demo["items"], doc)])
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as f:
        f.write(text.getvalue().encode())
    return buf.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    data = render()
    if a.check:
        if not OUT.exists() or gzip.decompress(OUT.read_bytes()) != gzip.decompress(data):
            sys.exit(f"{OUT} is stale: run tools/make_demo_after.py")
        return
    OUT.write_bytes(data)
    print(f"wrote {OUT} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
