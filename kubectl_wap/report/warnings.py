"""Warnings of one kind said once, with a count (issue 16): a dump with thousands of dangling
references gives one line per kind, not thousands."""

from __future__ import annotations

import re

# Object names, quoted values and numbers vary between warnings of one kind.
_VARIABLE = re.compile(r"\"[^\"]*\"|'[^']*'|[\w.-]+/[\w./-]+|\b\d[\d.]*\w*\b")
# ... and the name after a kind word ("bound to node gpu-7").
_NAMED = re.compile(r"\b(node|Node|PodGroup|CompositePodGroup|Pod|pod|PDB|PodDisruptionBudget|PriorityClass|namespace|Namespace)\s+[^\s,:;]+")
SHOW = 3  # warnings of one kind printed in full before they are counted (as convert.py does for duplicates)


def summarize(warnings: list[str], show: int = SHOW) -> list[str]:
    """Input order kept; the first `show` warnings of each kind in full, then one line counting
    the rest ("... and N more like it")."""
    groups: dict[str, list[str]] = {}
    for w in warnings:
        groups.setdefault(_VARIABLE.sub("~", _NAMED.sub(r"\1 ~", w)), []).append(w)
    out = []
    for ws in groups.values():
        out.extend(ws[:show])
        if len(ws) > show:
            out.append(f"... and {len(ws) - show} more warning(s) like the last one")
    return out
