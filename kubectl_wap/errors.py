"""Errors a user can cause. The CLI turns these into one line on stderr and exit code 2."""

from __future__ import annotations


class UserError(Exception):
    """Bad input, unknown object, unreachable cluster, forbidden list, ...: one clear line."""

    exit_code = 2


class ClusterAccessError(UserError):
    """The cluster could not be read (unreachable, TLS, auth, forbidden core list)."""
