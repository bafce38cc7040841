"""Fixtures of the real kube-apiserver e2e tier (only active with KUBECTL_WAP_E2E=1; see README.md)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # import the helper whatever pytest's import mode

from real_apiserver import cluster, cluster138  # noqa: E402,F401  (the session fixtures)


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: needs the real kube-apiserver tier (KUBECTL_WAP_E2E=1, tests/e2e/run.sh)")
