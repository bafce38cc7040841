"""Raw Kubernetes objects -> the model: the decoders (lean.py, spectemplates.py, podrows.py), the
converters (convert.py and the per-kind convert_storage.py, dra.py over the shared fields.py), what
the API server does to an object it has not seen (defaulting.py, admission.py, podadmission.py),
hypothetical work (hypothetical.py, workloads.py, workload_groups.py) and what the model does not
keep (evidence.py, owners.py). docs/architecture.md "Inside the snapshot package"."""
