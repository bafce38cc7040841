"""Suite-wide hooks: print the contention property statistics at the end of every run (CI included),
so the share of examples that really preempt stays visible (tests/README.md "Property statistics");
no progress line in the suite's terminals (below)."""

from __future__ import annotations

import os
import sys

# The progress line (cli/progress.py) shows on a terminal's stderr once a step passes a second: on a
# loaded machine a demo step can, and the pty tests would see its bytes. Off for the suite;
# tests/test_progress.py turns it on where it is the subject.
os.environ.setdefault("KUBECTL_WAP_PROGRESS_AFTER", "off")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    mod = sys.modules.get("test_properties_contention")
    stats = getattr(mod, "STATS", None)
    if not stats:
        return
    from collections import Counter

    outcomes = Counter(o for o, _ in stats)
    several = sum(1 for o, n in stats if o == "Preempt" and n >= 2)
    terminalreporter.write_line(
        f"contention properties: {len(stats)} examples, {several} ({several / len(stats):.0%}) preempt with >= 2 victim units; "
        + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
