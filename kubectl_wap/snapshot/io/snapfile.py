"""`kubectl wap snapshot --snapshot FILE|--demo`: an existing dump or snapshot as a snapshot
header and stripped items, ready to redact and write (issue 16: convert and redact a
`kubectl get -A -o json` dump before sharing it, instead of sharing it raw)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ...errors import UserError
from .files import DEMO_MISSING, DEMO_PATH, load_items, snapshot_path, stream_file
from ..decode.fields import ObjectError, short_repr
from ..share.redact import OWN_FILE_WARNING
from ..share.strip import strip_object


def saved_items(path: str | None, demo: bool) -> tuple[dict[str, Any], list[dict]]:
    if path and demo:
        raise UserError("use either --snapshot or --demo, not both")
    p = DEMO_PATH if demo else snapshot_path(path or "")
    if demo and not p.exists():
        raise UserError(DEMO_MISSING)
    streamed = stream_file(p)
    h, raw = streamed if streamed is not None else load_items(p)
    items: list[dict] = []
    refused: Counter = Counter()
    for idx, o in enumerate(raw):  # raw objects (not the model's rows): SnapshotItems iterate as dicts
        if not isinstance(o, dict):
            continue
        try:
            items.append(strip_object(o))
        except ObjectError as e:  # a UserError, so before ValueError: name the file and the item
            md = o.get("metadata")
            name = md.get("name") if isinstance(md, dict) else None
            named = f" ({short_repr(name)})" if isinstance(name, str) else ""
            raise ObjectError(f"{p}: item {idx}{named}: {e}") from None
        except ValueError:
            refused[str(o.get("kind"))] += 1
    warnings = list(h.warnings)
    if refused:
        warnings.append(OWN_FILE_WARNING + ", ".join(f"{n} {k}" for k, n in sorted(refused.items())))
    header = {
        "source": "demo" if demo else str(p), "capturedAt": h.captured_at,
        "server": {"url": h.server_url, "version": h.server_version},
        "listed": list(h.listed), "notServed": list(h.not_served), "forbidden": list(h.forbidden),
        "counts": dict(Counter(o.get("kind", "") for o in items)), "warnings": warnings,
    }
    return header, items
