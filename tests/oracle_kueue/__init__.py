"""The second oracle: Kueue's real scheduler (tests/oracle-kueue/, sigs.k8s.io/kueue v0.17.0)."""
