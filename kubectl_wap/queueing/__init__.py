"""Admission in front of kube-scheduler: a queueing controller decides whether a job's pods are
created at all, and whom it evicts first. `kueue/` models Kueue (sigs.k8s.io/kueue v0.17.0).

This layer reads the base and the model only; the kube-scheduler stages (framework, preemption,
simulate) consume its results. It does no I/O: the snapshot reads the kueue.x-k8s.io objects.
"""
