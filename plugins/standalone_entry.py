"""Entry script of the standalone (PyInstaller) binary: one executable, two names. kubectl runs
`kubectl_complete-wap` for plugin completion; link that name to the binary."""

import os
import sys


def pick(argv0: str):
    from kubectl_wap.cli import complete_main, main

    return complete_main if os.path.basename(argv0).startswith("kubectl_complete") else main


if __name__ == "__main__":
    pick(sys.argv[0])()
