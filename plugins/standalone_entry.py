"""Entry script of the standalone (PyInstaller) binary: one executable, two names. kubectl runs
`kubectl_complete-wap` for plugin completion: a link of that name to the binary, or the release
archive's two-line script (plugins/release.py), which sets KUBECTL_WAP_AS."""

import os
import sys


def pick(argv0: str):
    from kubectl_wap.cli import complete_main, main

    # Run by the completion script (plugins/release.py COMPLETE_SCRIPT), argv[0] is this binary's
    # own path; the name kubectl ran comes in KUBECTL_WAP_AS.
    name = os.environ.pop("KUBECTL_WAP_AS", "") or os.path.basename(argv0)
    return complete_main if name.startswith("kubectl_complete") else main


if __name__ == "__main__":
    pick(sys.argv[0])()
