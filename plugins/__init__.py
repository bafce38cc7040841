"""Packaging helpers for kubectl-wap (Krew plugin archive, manifest). Not shipped."""
