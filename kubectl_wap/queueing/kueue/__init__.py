"""Kueue's admission, as of sigs.k8s.io/kueue v0.17.0 (API kueue.x-k8s.io/v1beta2, its storage
version), one module per concern:

- objects.py: ResourceFlavors, ClusterQueues, Cohorts, LocalQueues, Workloads, as frozen records
  read from the v1beta2 JSON (with the CRD defaults the API server would apply).
- quota.py: the quota tree (pkg/cache/scheduler resource_node.go): nominal quota, borrowing and
  lending limits, usage per flavor and resource, per ClusterQueue and Cohort.
- flavors.py: flavor assignment (pkg/scheduler/flavorassigner/flavorassigner.go).
- preemption.py: classical preemption within the ClusterQueue and reclaim within the cohort
  (pkg/scheduler/preemption/preemption.go, classical/).
- fairshare.py: fair sharing's dominant resource share and the tournament order of a cycle's
  entries (pkg/cache/scheduler/fair_sharing.go, pkg/scheduler/fair_sharing_iterator.go).
- fairpreempt.py: fair sharing preemption (preemption.go fairPreemptions, preemption/fairsharing/).
- config.py: what of Kueue's own Configuration (--kueue-config) changes admission: fair sharing,
  admission fair sharing, waitForPodsReady and its blockAdmission.
- admissionchecks.py: admission checks: which ClusterQueues they make inactive, which apply to a
  Workload (it is Admitted once they are Ready), failed checks that block nomination.
- jobs.py: the pending Workload a submitted Job or JobSet becomes (Kueue's job integrations).
- evicted.py: the pods that go with an evicted Workload (each integration's PodLabelSelector).
- answer.py: the stage's records (admitted, reserved, held, and why) for report/kueue.py to word.
- cycle.py: one scheduling cycle (pkg/scheduler/scheduler.go Scheduler.schedule): the heads of the
  ClusterQueues, nomination, the entry order, admission and preemption issuing.

Not modelled yet (refused with one line where the input needs it, never answered wrongly):
admission fair sharing, topology-aware scheduling, partial admission, what an admission check's
controller does (the nodes a ProvisioningRequest provisions), elastic workload slices,
waitForPodsReady.blockAdmission (waitForPodsReady's timeout is not played), MultiKueue, DRA
resources in Kueue.
"""
