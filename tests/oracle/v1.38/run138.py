"""Ad hoc (issue 29, not wired into the batch yet): the generated batch against an oracle binary built
from this directory's go.mod (v1.38.0-beta.0), our engine under the 1.38 profile.

    cp tests/oracle/*.go tests/oracle/v1.38/go.mod tests/oracle/v1.38/go.sum /tmp/o138/
    (cd /tmp/o138 && GOTOOLCHAIN=go1.27.3 GOFLAGS=-mod=mod go test -c -vet=off -o oracle138.test .)
    python tests/oracle/v1.38/run138.py CASES SEED [/tmp/o138/oracle138.test]
"""
import sys, types
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
import tests.oracle.driver as driver
driver.BINARY = Path(sys.argv[3]) if len(sys.argv) > 3 else Path("/tmp/o138/oracle138.test")
driver._stale = lambda: False
driver.oracle_version = lambda: "v1.38.0-beta.0"
import tests.oracle.batch as batch
batch.oracle_version = driver.oracle_version
orig_gates = batch._gates
def g138(text):
    s = orig_gates(text)
    return ",".join(kv for kv in s.split(",") if not kv.startswith("PodGroupPreemptionPolicy="))
batch._gates = g138
import kubectl_wap.preemption.gates as gates
from kubectl_wap.profiles import V1_38
orig_parse = gates.parse_gates
gates.parse_gates = lambda text=None, profile=None, *a, **k: orig_parse(text, V1_38, *a, **k)
args = types.SimpleNamespace(cases=int(sys.argv[1]), seed=int(sys.argv[2]), start=0, scenarios=False, retries=3,
                             out="/tmp/exp138/out", json="/tmp/exp138/summary.json", feature_gates="", batch=50, only="",
                             tie_break="node-name", explore=10)
sys.exit(batch.main_diff(args))
