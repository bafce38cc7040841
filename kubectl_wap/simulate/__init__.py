"""The cycle simulator (above preemption, below report): kube-scheduler's queue and cycles played
forward over every pending object, with victims recreated by their controllers."""

from .engine import Options, simulate

__all__ = ["Options", "simulate"]
