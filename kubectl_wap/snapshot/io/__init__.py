"""The snapshot package's I/O: files and the bundled demo (files.py, liststream.py), a live cluster
through the one GET-only transport (readonly.py, kubeconfig.py, discovery.py, live.py, names.py),
and writing a snapshot (save.py, snapfile.py). docs/architecture.md "Inside the snapshot package"."""
