"""`python -m kubectl_wap.cli` runs `kubectl wap` (benchmarks/run.py uses it when no kubectl-wap is installed)."""

from . import main

main()
