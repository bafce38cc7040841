"""What makes a snapshot safe to keep and share: the allow-list of fields (allowlist.py), stripping
to it (strip.py) and redaction (redact.py). docs/architecture.md "Inside the snapshot package"."""
