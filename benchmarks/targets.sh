#!/bin/bash
# Issue 34's targets in one run (benchmarks/README.md, "Issue 34: the targets, one run"):
#   bash benchmarks/targets.sh [OUT_DIR] [RESULTS_DIR]
# from the repository root, on an idle machine. Sizes are generated into OUT_DIR on first use
# (seed 42). XL (20k nodes / 600k pods) is not generated here: it takes ~4 minutes and ~4 GB of disk;
# see the README for its commands.
set -euo pipefail
O=${1:-/tmp/kubectl-wap-bench}
R=${2:-$O/targets}
mkdir -p "$R"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
{ date -u; uptime; git log --oneline -1; } > "$R/log.txt"
python -m benchmarks.run --size L --repeat 3 --no-literal --out "$O" > "$R/L.txt" 2>&1
python -m benchmarks.run --size M --repeat 3 --no-literal --out "$O" > "$R/M.txt" 2>&1
for i in 1 2 3; do python -m benchmarks.simulate --size L --out "$O" > "$R/sim$i.txt" 2>&1; done
for i in 1 2 3; do python -m benchmarks.live --size L --out "$O" --mode snapshot,load > "$R/live$i.txt" 2>&1; done
# The demo whatif, whole process: wall, user and system seconds per run.
for i in 1 2 3 4 5 6 7 8 9; do
  /usr/bin/time -f "%e %U %S" -a -o "$R/demo.txt" \
    python -c "import sys; sys.argv[0] = 'kubectl-wap'; from kubectl_wap.cli import main; main()" \
    whatif podgroup job-1 -n ml --demo > /dev/null
done
{ uptime; date -u; } >> "$R/log.txt"
echo "results in $R"
