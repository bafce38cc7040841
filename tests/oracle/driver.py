"""Build the Go oracle, turn clusters into its cases, run them, read its answers."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable

ORACLE_DIR = Path(__file__).resolve().parent
BIN_DIR = ORACLE_DIR / "bin"

# The Kubernetes versions the oracle is built at: one glue (tests/oracle/*.go), one go.mod/go.sum per
# version. 1.37's module is this directory; 1.38's go.mod/go.sum live in v1.38/ and are built from a
# copy of the glue (bin/src-1.38/: the go command builds one module per directory). Moving to 1.38.0
# is a version bump in v1.38/go.mod.
VERSIONS = ("1.37", "1.38")
DEFAULT_VERSION = "1.37"
# Go toolchains asked for by a module newer than the machine's Go: the go command fetches it
# through the module proxy (GOTOOLCHAIN=<name>) when the machine's go env says "local".
_TOOLCHAIN = {"1.38": "go1.27.3"}

# The gates our CLI assumes by default (kubectl_wap/preemption/gates.py), spelled for the oracle,
# per version: the real scheduler is asked the same question our engine answers. 1.38 has no
# PodGroupPreemptionPolicy gate (removed: a group's preemption policy is always honoured).
GATES_BY_VERSION = {
    "1.37": "GenericWorkload=true,CompositePodGroup=true,PodGroupPreemptionPolicy=false,TopologyAwareWorkloadScheduling=true",
    "1.38": "GenericWorkload=true,CompositePodGroup=true,TopologyAwareWorkloadScheduling=true",
}
DEFAULT_GATES = GATES_BY_VERSION[DEFAULT_VERSION]
# Gates a version's kube-scheduler does not have: left out of its gate string (the scheduler
# refuses to start with an unknown gate). DRAPreemption is our opt-in for a development-branch rule
# that no built version has.
REMOVED = {"1.37": {"DRAPreemption"}, "1.38": {"PodGroupPreemptionPolicy", "DRAPreemption"}}


class OracleError(RuntimeError):
    pass


def _check(version: str) -> str:
    if version not in VERSIONS:
        raise OracleError(f"unknown oracle version {version!r} (have {', '.join(VERSIONS)})")
    return version


def module_dir(version: str = DEFAULT_VERSION) -> Path:
    """Where the version's go.mod/go.sum are."""
    return ORACLE_DIR if _check(version) == "1.37" else ORACLE_DIR / f"v{version}"


def binary_path(version: str = DEFAULT_VERSION) -> Path:
    return BIN_DIR / ("oracle.test" if _check(version) == "1.37" else f"oracle-{version}.test")


BINARY = binary_path()


def oracle_version(version: str = DEFAULT_VERSION) -> str:
    """The k8s.io/kubernetes version the version's oracle is built from (its go.mod)."""
    m = re.search(r"^\s*k8s\.io/kubernetes (v\S+)", (module_dir(version) / "go.mod").read_text(), re.M)
    return m.group(1) if m else "unknown"


def _sources(version: str) -> list[Path]:
    return sorted(ORACLE_DIR.glob("*.go")) + [module_dir(version) / "go.mod", module_dir(version) / "go.sum"]


def _stale(version: str = DEFAULT_VERSION) -> bool:
    b = binary_path(version)
    if not b.exists():
        return True
    built = b.stat().st_mtime
    return any(p.exists() and p.stat().st_mtime > built for p in _sources(version))


def _build_dir(version: str) -> Path:
    """The directory `go test -c` runs in: this one for 1.37; for another version a copy of the glue
    next to that version's go.mod/go.sum (rewritten on every build, so it never drifts)."""
    if version == DEFAULT_VERSION:
        return ORACLE_DIR
    d = BIN_DIR / f"src-{version}"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    for p in _sources(version):
        shutil.copy2(p, d / p.name)
    return d


def build(quiet: bool = False, version: str = DEFAULT_VERSION) -> Path:
    """Compile the version's oracle (a Go test binary) if a source is newer than the binary. The
    first build on a new machine downloads the modules (and, for 1.38, a newer Go toolchain) and
    compiles kube-apiserver + kube-scheduler (several minutes on 2 cores); later builds come from
    Go's caches."""
    target = binary_path(version)
    if not _stale(version):
        return target
    go = shutil.which("go")
    if go is None:
        raise OracleError("the oracle needs Go (go 1.26+) on PATH")
    BIN_DIR.mkdir(exist_ok=True)
    t0 = time.monotonic()
    if not quiet:
        print(f"oracle: building kube-scheduler {oracle_version(version)} test oracle (go test -c) ...", file=sys.stderr)
    tmp = BIN_DIR / f".{target.name}.{os.getpid()}"
    env = dict(os.environ, GOFLAGS=os.environ.get("GOFLAGS", "") + " -mod=mod")
    if version in _TOOLCHAIN:
        env["GOTOOLCHAIN"] = _TOOLCHAIN[version]
    # The version stamp upstream's build puts in (hack/lib/version.sh): without it kube-apiserver's
    # /version says v0.0.0-master (the e2e tier serves its API to kubectl and kubectl-wap).
    ldflags = f"-ldflags=-X k8s.io/component-base/version.gitVersion={oracle_version(version)}"
    proc = subprocess.run([go, "test", "-c", "-vet=off", ldflags, "-o", str(tmp), "."], cwd=_build_dir(version), env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise OracleError(f"building the {version} oracle failed:\n" + proc.stdout[-4000:] + proc.stderr[-4000:])
    tmp.replace(target)
    if not quiet:
        print(f"oracle: built in {time.monotonic() - t0:.0f}s", file=sys.stderr)
    return target


# --- cases --------------------------------------------------------------------------------------

_KINDS = {"podgroup": "PodGroup", "pg": "PodGroup", "compositepodgroup": "CompositePodGroup", "cpg": "CompositePodGroup",
          "pod": "Pod", "po": "Pod"}
_SENT = {"Node", "Pod", "PodGroup", "CompositePodGroup", "PriorityClass", "PodDisruptionBudget", "Namespace",
         "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode",
         "DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "RuntimeClass", "LimitRange"}


def _meta(o: dict) -> dict:
    return o.get("metadata") or {}


def _group_name(pod: dict) -> str | None:
    sg = (pod.get("spec") or {}).get("schedulingGroup") or {}
    return sg.get("podGroupName")


def _tree_leaves(items: list[dict], kind: str, namespace: str, name: str) -> set[str]:
    """Names of the PodGroups under the root of the hierarchy that (kind, ns, name) belongs to:
    kube-scheduler schedules a CompositePodGroup tree from its root (so does our whatif)."""
    pgs = {_meta(o).get("name"): o for o in items if o.get("kind") == "PodGroup" and _meta(o).get("namespace") == namespace}
    cpgs = {_meta(o).get("name"): o for o in items if o.get("kind") == "CompositePodGroup" and _meta(o).get("namespace") == namespace}

    def parent(o: dict) -> str | None:
        spec = o.get("spec") or {}
        return spec.get("parentCompositePodGroupName") or spec.get("parentName")

    # climb to the root
    cur_kind, cur = kind, (pgs if kind == "PodGroup" else cpgs).get(name)
    if cur is None:
        raise OracleError(f"{kind} {namespace}/{name} not found in the cluster")
    seen = set()
    while parent(cur) and parent(cur) in cpgs and parent(cur) not in seen:
        seen.add(parent(cur))
        cur_kind, cur = "CompositePodGroup", cpgs[parent(cur)]
    if cur_kind == "PodGroup":
        return {_meta(cur)["name"]}
    root = _meta(cur)["name"]
    # every PodGroup whose chain of parents reaches the root
    out = set()
    for pg_name, pg in pgs.items():
        p, hops = parent(pg), 0
        while p and hops < 64:
            if p == root:
                out.add(pg_name)
                break
            p = parent(cpgs[p]) if p in cpgs else None
            hops += 1
    return out


def _with_workload_ref(g: dict) -> dict:
    """v1.37's API requires spec.workloadRef on every CompositePodGroup and on a PodGroup with a
    parent (declarative validation). The scheduler does not read it and our model does not keep
    it; hand-written fixtures often omit it, so the oracle case gets a placeholder."""
    spec = g.get("spec") or {}
    if spec.get("workloadRef") or (g.get("kind") == "PodGroup" and not spec.get("parentCompositePodGroupName")):
        return g
    g = dict(g)
    g["spec"] = dict(spec, workloadRef={"workloadName": "oracle-workload", "templateName": _meta(g).get("name", "t")})
    return g


def bystander(pod: dict) -> bool:
    """A pending pod kube-scheduler will not schedule: gated, or for another scheduler."""
    spec = pod.get("spec") or {}
    return bool(spec.get("schedulingGates")) or spec.get("schedulerName", "default-scheduler") not in ("", "default-scheduler")


def case_for(items: Iterable[dict], kind: str, namespace: str, name: str, case_id: str = "case") -> dict:
    """One oracle case: the cluster's objects the scheduler reads, every running pod, and the
    pending pods of the question (its PodGroup hierarchy from the root, or the pod). Other pending
    pods are left out: our whatif, too, answers for one object with no other pending work
    (nominated pods aside: see tests/oracle/README.md)."""
    items = [o for o in items if isinstance(o, dict) and o.get("kind") in _SENT]
    k = _KINDS.get(kind.lower())
    if k is None:
        raise OracleError(f"unknown kind {kind!r}")
    if k == "Pod":
        wanted = lambda p: _meta(p).get("namespace") == namespace and _meta(p).get("name") == name  # noqa: E731
        if not any(o.get("kind") == "Pod" and wanted(o) for o in items):
            raise OracleError(f"pod {namespace}/{name} not found in the cluster")
    else:
        leaves = _tree_leaves(items, k, namespace, name)
        wanted = lambda p: _meta(p).get("namespace") == namespace and _group_name(p) in leaves  # noqa: E731
    objects = []
    for o in items:
        if o.get("kind") in ("CompositePodGroup", "PodGroup"):
            o = _with_workload_ref(o)
        if o.get("kind") == "Pod":
            spec, status = o.get("spec") or {}, o.get("status") or {}
            if status.get("phase") in ("Succeeded", "Failed"):
                continue
            if not spec.get("nodeName"):
                if _meta(o).get("deletionTimestamp"):
                    continue
                if not wanted(o):
                    # Other pending pods are left out, but those kube-scheduler never schedules
                    # (gated, another scheduler's): they change nothing but what the scheduler
                    # reads (a gated pod's nomination counts in its nominator), and the glue
                    # creates them as bystanders (server_test.go bystanderPod).
                    if not bystander(o):
                        continue
                elif spec.get("schedulingGates"):
                    continue
        objects.append(o)
    return {"id": case_id, "objects": objects, "target": {"kind": k, "namespace": namespace, "name": name}}


# --- running ------------------------------------------------------------------------------------

# A shard whose oracle fails before its first case is started again, up to this many tries in all;
# shards start this many seconds apart.
START_TRIES = 5
STAGGER_S = 2.0


def run(cases: list[dict], gates: str = DEFAULT_GATES, *, timeout_per_case: float = 30.0,
        log: str | None = None, settle: str = "400ms", quiet: bool = True,
        percentage_of_nodes_to_score: int = 100, parallel: int | None = None,
        tie_break: str = "random", version: str = DEFAULT_VERSION) -> list[dict]:
    """Run cases and return the oracle's answers in case order. `tie_break="node-name"` pins the
    scheduler's equal-top-score draw to the smallest node name, our engine's rule
    (tiebreak_test.go says how, without changing upstream's code or its other choices). The cases are split over
    `parallel` oracle processes (each its own etcd and apiserver; a case mostly waits for the
    scheduler to settle, so processes overlap well even on 2 cores). A case the oracle could not
    run carries `error`."""
    binary = build(quiet=quiet, version=version)
    if parallel is None:
        parallel = int(os.environ.get("WAP_ORACLE_PARALLEL", "3"))
    parallel = max(1, min(parallel, len(cases)))
    shards = [cases[i::parallel] for i in range(parallel)]
    with tempfile.TemporaryDirectory(prefix="wap-oracle-") as d:

        def start(k: int, shard: list[dict], attempt: int) -> tuple:
            cin, cout = Path(d) / f"cases-{k}.jsonl", Path(d) / f"results-{k}-{attempt}.jsonl"
            with cin.open("w") as f:
                for c in shard:
                    f.write(json.dumps(c, separators=(",", ":")) + "\n")
            cmd = [str(binary), "-test.run", "^TestOracle$", "-test.timeout", "0",
                   f"-oracle.in={cin}", f"-oracle.out={cout}", f"-oracle.feature-gates={gates}",
                   f"-oracle.timeout={int(timeout_per_case)}s", f"-oracle.settle={settle}",
                   f"-oracle.percentage-of-nodes-to-score={percentage_of_nodes_to_score}",
                   f"-oracle.tie-break={tie_break}"]
            if log:
                cmd.append(f"-oracle.log={log}.{k}" if parallel > 1 else f"-oracle.log={log}")
            errf = (Path(d) / f"stderr-{k}-{attempt}.txt").open("w")
            # stdout too: `go test` binaries print t.Fatal's message and FAIL there
            return subprocess.Popen(cmd, cwd=d, stdout=errf, stderr=subprocess.STDOUT), cout, errf, shard, k, attempt

        procs = []
        for k, shard in enumerate(shards):
            if k:
                # Staggered: the apiservers' start-up is the CPU-heavy part, and upstream's test
                # server gives /healthz only 10 s (test/integration/framework StartTestServer).
                time.sleep(STAGGER_S)
            procs.append(start(k, shard, 0))
        by_id: dict[str, dict] = {}
        while procs:
            proc, cout, errf, shard, k, attempt = procs.pop(0)
            code = proc.wait()
            errf.close()
            err_text = Path(errf.name).read_text()
            results = [json.loads(line) for line in cout.read_text().splitlines() if line.strip()] if cout.exists() else []
            if code != 0 and not results and attempt + 1 < START_TRIES:
                # Failed before its first case: its apiserver did not come up in time on a loaded
                # machine. Start that shard again (the others go on).
                if not quiet:
                    print(f"oracle: shard {k} failed to start (try {attempt + 1}); starting it again", file=sys.stderr)
                time.sleep(STAGGER_S * (attempt + 1))  # let a load spike pass
                procs.append(start(k, shard, attempt + 1))
                continue
            if code != 0 or len(results) != len(shard):
                for p2, *_ in procs:
                    p2.kill()
                raise OracleError(f"oracle exited {code} after {len(results)}/{len(shard)} case(s):\n" + err_text[-3000:])
            if not quiet:
                sys.stderr.write("".join(line for line in err_text.splitlines(True) if not line.startswith('{"level"')))
            for c, r in zip(shard, results):
                by_id[id(c)] = r
    return [by_id[id(c)] for c in cases]


def contract(result: dict, version: str = DEFAULT_VERSION) -> dict[str, Any]:
    """The oracle's answer in the report contract's shape (what `kubectl wap whatif -o json`
    prints for these keys)."""
    return {
        "outcome": result.get("outcome"),
        "message": result.get("message", ""),
        "victims": [{"namespace": v["namespace"], "name": v["name"], "node": v.get("node", "")} for v in result.get("victims") or []],
        "nominatedNode": result.get("nominatedNode") or None,
        "nominated": result.get("nominated") or {},
        "placements": result.get("placements") or [],
        "pending": result.get("pending") or [],
        "oracle": {"kubernetes": oracle_version(version), "elapsedMs": result.get("elapsedMs"), "error": result.get("error")},
    }
