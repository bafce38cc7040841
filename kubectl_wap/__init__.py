"""kubectl-wap: offline what-if analyzer for Kubernetes workload-aware preemption."""

__version__ = "0.1.0"
