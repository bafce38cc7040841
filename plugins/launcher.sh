#!/bin/sh
# kubectl-wap launcher: the shell prefix of the zipapp that follows (plugins/launcher.sh; written
# by plugins/build.py in place of a plain `#!/usr/bin/env python3`). sh runs these lines and never
# reaches the zip data below, since every path ends in exec or exit; Python reads a zip from its
# end and ignores the prefix. Order:
#  1. the standalone build next to this file (kubectl-wap-standalone/, PyInstaller, in the
#     linux/amd64 Krew archive: no Python needed), when this machine's glibc is at least the one
#     it was built against (kubectl-wap-standalone/GLIBC);
#  2. a CPython on PATH running this file as a zipapp: python3 first, then python3.14 .. 3.11
#     (the zipapp's bootstrap re-execs a supported one or says which versions are needed).
real=$(readlink -f "$0" 2>/dev/null) || real=$0
sa="${real%/*}/kubectl-wap-standalone"
if [ -x "$sa/kubectl-wap" ] && [ -r "$sa/GLIBC" ]; then
  need=$(cat "$sa/GLIBC")
  have=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed -n 's/^glibc //p')
  nmaj=${need%%.*} nmin=${need#*.} hmaj=${have%%.*} hmin=${have#*.}
  nmin=${nmin%%.*} hmin=${hmin%%.*}
  if [ -n "$have" ] && { [ "$hmaj" -gt "$nmaj" ] || { [ "$hmaj" -eq "$nmaj" ] && [ "$hmin" -ge "$nmin" ]; }; } 2>/dev/null; then
    # one binary, two names: the completion entry is chosen by the name kubectl ran
    KUBECTL_WAP_AS=${0##*/}
    export KUBECTL_WAP_AS
    exec "$sa/kubectl-wap" "$@"
  fi
fi
for py in python3 python3.14 python3.13 python3.12 python3.11; do
  if command -v "$py" >/dev/null 2>&1; then exec "$py" "$0" "$@"; fi
done
echo "kubectl-wap: needs CPython 3.11+ on PATH (python3 or python3.X)${need:+, or glibc >= $need for the bundled standalone build}" >&2
exit 2
