#!/bin/sh
# kubectl-wap launcher: the shell prefix of the zipapp that follows (plugins/launcher.sh; written
# by plugins/build.py in place of a plain `#!/usr/bin/env python3`). sh runs these lines and never
# reaches the zip data below, since every path ends in exec or exit; Python reads a zip from its
# end and ignores the prefix. It runs this file as a zipapp with a CPython on PATH: python3 first,
# then python3.14 .. 3.11 (the zipapp's bootstrap re-execs a supported one or says which versions
# are needed). The Krew release archive needs none of this: it is the standalone build
# (plugins/release.py).
for py in python3 python3.14 python3.13 python3.12 python3.11; do
  if command -v "$py" >/dev/null 2>&1; then exec "$py" "$0" "$@"; fi
done
echo "kubectl-wap: needs CPython 3.11+ on PATH (python3 or python3.X); the Krew release archive needs no Python" >&2
exit 2
