"""Entry script of the standalone (PyInstaller) binary: one executable, two names. kubectl runs
`kubectl_complete-wap` for plugin completion; link that name to the binary."""

import os
import sys


def pick(argv0: str):
    from kubectl_wap.cli import complete_main, main

    # Run by the launcher of the Krew archive (plugins/launcher.sh), argv[0] is this binary's own
    # path; the name kubectl ran comes in KUBECTL_WAP_AS.
    name = os.environ.pop("KUBECTL_WAP_AS", "") or os.path.basename(argv0)
    return complete_main if name.startswith("kubectl_complete") else main


if __name__ == "__main__":
    pick(sys.argv[0])()
