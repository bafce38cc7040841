"""Errors a user can cause. The CLI turns these into one line on stderr and exit code 2."""

from __future__ import annotations


class UserError(Exception):
    """Bad input, unknown object, unreachable cluster, forbidden list, ...: one clear line."""

    exit_code = 2


class ClusterAccessError(UserError):
    """The cluster could not be read (unreachable, TLS, auth, forbidden core list)."""


# ---- credentials never printed ------------------------------------------------------------------
# The kubeconfig loader registers every credential it sees (bearer tokens, basic-auth passwords and
# their encoded header, client keys, URL passwords); every line the CLI prints for an error, and the
# --debug traceback, goes through scrub() first. A message built anywhere (the kubernetes client's
# own exceptions included) can then never show one.
_SECRETS: set[str] = set()
_MIN_SECRET = 4  # shorter values would blank out ordinary words; no real credential is this short


def register_secret(value: object) -> None:
    """Remember a credential so scrub() removes it (and its trimmed form) from any text."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        return
    for v in (value, value.strip()):
        if len(v) >= _MIN_SECRET:
            _SECRETS.add(v)
    # A PEM key or multi-line value can surface one line at a time (e.g. in a parse error).
    for line in value.splitlines():
        line = line.strip()
        if len(line) >= 16 and not line.startswith("-----"):
            _SECRETS.add(line)


def scrub(text: str) -> str:
    """`text` with every registered credential replaced by "<redacted>" (longest first, so a
    token inside a longer registered header value goes with it)."""
    if not _SECRETS or not text:
        return text
    for s in sorted(_SECRETS, key=len, reverse=True):
        if s in text:
            text = text.replace(s, "<redacted>")
    return text
