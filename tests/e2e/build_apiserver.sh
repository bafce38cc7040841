#!/usr/bin/env bash
# Build (once per machine) the kube-apiserver and etcd that the real-apiserver e2e tier runs.
#
# Recipe: /work/shared/docs/real-apiserver.md (shared/docs/real-apiserver.md). Debian's `kubernetes`
# source package (1.20.x, vendored), built with Debian's golang-1.19, with vendor/.../reflect2 replaced
# by Debian's 1.0.2 copy (Go 1.19 otherwise segfaults in json-iterator serving a CRD). etcd comes from
# Debian's etcd-server package.
#
# Everything goes under $KUBECTL_WAP_E2E_CACHE (default /var/cache/kubectl-wap-e2e):
#   bin/kube-apiserver, bin/etcd     the results; a later run with both present does nothing
#   apt/                             a private apt setup (deb + deb-src lists, cache); the system's
#                                    apt configuration and lists are never touched
#   build/                           downloads, toolchain prefix and the source tree (removed after a
#                                    successful build unless KUBECTL_WAP_E2E_KEEP_BUILD=1)
#
# Only Debian mirrors (the machine's own source list) are contacted. Any failure exits non-zero with
# a message starting "build_apiserver:"; nothing is skipped silently.
set -euo pipefail

CACHE="${KUBECTL_WAP_E2E_CACHE:-/var/cache/kubectl-wap-e2e}"
BIN="$CACHE/bin"
APT="$CACHE/apt"
WORK="$CACHE/build"
PREFIX="$WORK/prefix"
LOG="$CACHE/build.log"

die() { echo "build_apiserver: $*" >&2; exit 1; }
say() { echo "build_apiserver: $*" >&2; }

cached_ok() {
    [[ -x "$BIN/kube-apiserver" && -x "$BIN/etcd" ]] \
        && "$BIN/kube-apiserver" --version >/dev/null 2>&1 \
        && "$BIN/etcd" --version >/dev/null 2>&1
}

if [[ "${1:-}" != "--force" ]] && cached_ok; then
    say "cached: $("$BIN/kube-apiserver" --version) and etcd $("$BIN/etcd" --version | sed -n 's/^etcd Version: //p') in $BIN"
    exit 0
fi

command -v apt-get >/dev/null || die "apt-get not found: this build needs a Debian machine (see tests/e2e/README.md)"
command -v dpkg-source >/dev/null || die "dpkg-source not found (Debian package dpkg-dev); install it with apt-get install dpkg-dev"
command -v make >/dev/null || die "make not found (apt-get install make)"
# The machine's own Debian source list (deb822); overridable to test the failure path.
SYS_SOURCES="${KUBECTL_WAP_E2E_APT_SOURCES:-/etc/apt/sources.list.d/debian.sources}"
[[ -r "$SYS_SOURCES" ]] || die "$SYS_SOURCES not found: cannot derive the deb-src entries (see tests/e2e/README.md)"

mkdir -p "$BIN" "$APT/sources.list.d" "$APT/lists/partial" "$APT/cache/archives/partial" "$WORK"
: > "$LOG"
start=$(date +%s)

# 1. A private apt setup: the machine's own Debian sources, both binary and source indexes.
sed -e 's/^Types:.*/Types: deb deb-src/' "$SYS_SOURCES" > "$APT/sources.list.d/debian.sources"
: > "$APT/sources.list"
APT_OPTS=(
    -o "Dir::Etc::SourceList=$APT/sources.list"
    -o "Dir::Etc::SourceParts=$APT/sources.list.d"
    -o "Dir::State::Lists=$APT/lists"
    -o "Dir::Cache=$APT/cache"
    -o "APT::Sandbox::User=root"
    -o "Acquire::Retries=3"
)
say "apt-get update (private lists in $APT)"
apt-get "${APT_OPTS[@]}" -q --error-on=any update >>"$LOG" 2>&1 \
    || die "apt-get update failed: cannot reach the Debian mirrors (log: $LOG): $(tail -n 3 "$LOG" | tr '\n' ' ')"

# 2. Source and toolchain packages.
cd "$WORK"
rm -rf src debs prefix
mkdir -p src debs prefix
say "apt-get source --download-only kubernetes (~34 MB)"
(cd src && apt-get "${APT_OPTS[@]}" -q source --download-only kubernetes) >>"$LOG" 2>&1 \
    || die "apt-get source kubernetes failed (log: $LOG): $(tail -n 3 "$LOG" | tr '\n' ' ')"
say "apt-get download golang-1.19-go golang-1.19-src etcd-server rsync libpopt0 golang-github-modern-go-reflect2-dev"
(cd debs && apt-get "${APT_OPTS[@]}" -q download golang-1.19-go golang-1.19-src etcd-server rsync libpopt0 \
    golang-github-modern-go-reflect2-dev) >>"$LOG" 2>&1 \
    || die "apt-get download of the toolchain failed (log: $LOG): $(tail -n 3 "$LOG" | tr '\n' ' ')"
for deb in debs/*.deb; do dpkg-deb -x "$deb" prefix; done

dsc=$(ls src/kubernetes_*.dsc 2>/dev/null | head -n 1)
[[ -n "$dsc" ]] || die "no kubernetes .dsc downloaded (log: $LOG)"
say "unpacking $(basename "$dsc")"
(cd src && dpkg-source --no-check -x "$(basename "$dsc")" tree) >>"$LOG" 2>&1 \
    || die "dpkg-source -x failed (log: $LOG)"
TREE="$WORK/src/tree"

# 3. The one patch: Debian's reflect2 1.0.2 instead of the vendored copy.
R2="$PREFIX/usr/share/gocode/src/github.com/modern-go/reflect2"
[[ -d "$R2" ]] || die "reflect2 source not found in golang-github-modern-go-reflect2-dev ($R2)"
rm -rf "$TREE/vendor/github.com/modern-go/reflect2"
cp -a "$R2" "$TREE/vendor/github.com/modern-go/reflect2"

# 4. Build, offline: vendored modules only.
export GOROOT="$PREFIX/usr/lib/go-1.19"
[[ -x "$GOROOT/bin/go" ]] || die "go not found at $GOROOT/bin/go"
export PATH="$GOROOT/bin:$PREFIX/usr/bin:$PATH"
export LD_LIBRARY_PATH="$PREFIX/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local GO111MODULE=on
export GOCACHE="$WORK/gocache" GOPATH="$WORK/gopath"
rsync --version >/dev/null 2>&1 || die "the unpacked rsync does not run (libpopt0?)"
say "make WHAT=cmd/kube-apiserver (about 3.5 min on 2 cores)"
(cd "$TREE" && make WHAT=cmd/kube-apiserver) >>"$LOG" 2>&1 \
    || die "make WHAT=cmd/kube-apiserver failed (log: $LOG): $(tail -n 5 "$LOG" | tr '\n' ' ')"
built=$(ls "$TREE"/_output/local/bin/linux/*/kube-apiserver 2>/dev/null | head -n 1)
[[ -n "$built" ]] || built="$TREE/_output/bin/kube-apiserver"
[[ -x "$built" ]] || die "kube-apiserver binary not found after make (log: $LOG)"
install -m 0755 "$built" "$BIN/kube-apiserver.new" && mv "$BIN/kube-apiserver.new" "$BIN/kube-apiserver"
install -m 0755 "$PREFIX/usr/bin/etcd" "$BIN/etcd.new" && mv "$BIN/etcd.new" "$BIN/etcd"
cached_ok || die "the built binaries do not run (log: $LOG)"
if [[ "${KUBECTL_WAP_E2E_KEEP_BUILD:-0}" != 1 ]]; then
    rm -rf "$WORK"
fi
say "built $("$BIN/kube-apiserver" --version) and etcd in $BIN in $(( $(date +%s) - start )) s"
