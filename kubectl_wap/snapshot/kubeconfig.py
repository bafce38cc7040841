"""What kubectl would read from kubeconfig files for the defaults we need: the contexts and the
current context's namespace. KUBECONFIG may list several files (`a:b`); kubectl merges them, the
first file that sets a value wins (clientcmd's loading rules)."""

from __future__ import annotations

import os
from typing import Any


def _paths(kubeconfig: str | None) -> list[str]:
    if kubeconfig:
        return [os.path.expanduser(kubeconfig)]
    env = os.environ.get("KUBECONFIG", "")
    if env:
        return [os.path.expanduser(p) for p in env.split(os.pathsep) if p]
    return [os.path.expanduser("~/.kube/config")]


def merged(kubeconfig: str | None) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """(current-context, {context name: context}) merged over the files; unreadable files are
    skipped (this is for defaults and completion; the client reports real problems)."""
    import yaml

    current: str | None = None
    contexts: dict[str, dict[str, Any]] = {}
    for path in _paths(kubeconfig):
        try:
            with open(path) as f:
                cfg = yaml.safe_load(f) or {}
        except (OSError, yaml.YAMLError):
            continue
        if not isinstance(cfg, dict):
            continue
        current = current or cfg.get("current-context") or None
        for c in cfg.get("contexts") or []:
            if isinstance(c, dict) and isinstance(c.get("name"), str):
                contexts.setdefault(c["name"], c.get("context") or {})
    return current, contexts


def context_namespace(kubeconfig: str | None, context: str | None) -> str:
    current, contexts = merged(kubeconfig)
    ctx = contexts.get(context or current or "") or {}
    ns = ctx.get("namespace") if isinstance(ctx, dict) else None
    return ns if isinstance(ns, str) and ns else "default"
