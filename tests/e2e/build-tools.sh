#!/usr/bin/env bash
# Build (or reuse) the e2e control-plane binaries from the Go tools modules under tools/:
#   kube-apiserver, kube-scheduler, kube-controller-manager, kubectl
#                                            (tools/k8s, k8s.io/kubernetes at the pinned version)
#   etcd                                     (tools/etcd, go.etcd.io/etcd/server/v3)
#
# Binaries go to a cache keyed by version, outside the work tree, so a fresh clone (CI) on the
# same machine reuses them:
#   ${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}/k8s-<version>/bin
#   ${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}/etcd-<version>/bin
# A binary is rebuilt only if it is missing or does not report the pinned version.
#
# stdout: shell `export` lines, to be eval'ed:   envs=$(tests/e2e/build-tools.sh) && eval "$envs"
#   GPUADMIT_E2E_K8S_BIN, GPUADMIT_E2E_ETCD_BIN, GPUADMIT_E2E_K8S_VERSION, GPUADMIT_E2E_ETCD_VERSION
# stderr: timestamped progress.
#
# Env: GPUADMIT_CACHE_DIR (cache root), GPUADMIT_BUILD_NICE (nice level for go build, default 10:
# the machine has 2 cores and C++ builds share them).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
K8S_MOD=$HERE/tools/k8s
ETCD_MOD=$HERE/tools/etcd
CACHE_ROOT=${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}
NICE=${GPUADMIT_BUILD_NICE:-10}

log() { printf '%s build-tools: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Version of a required module, read from go.mod (cheap: no Go invocation on the warm path).
# Handles both `require M vX` and the tidied `require ( ... M vX // indirect )` forms.
mod_version() {
  awk -v m="$2" '($1 == m && $2 ~ /^v/) { print $2; exit } ($1 == "require" && $2 == m) { print $3; exit }' "$1/go.mod"
}

command -v go >/dev/null || die "go not found in PATH"
K8S_VERSION=$(mod_version "$K8S_MOD" k8s.io/kubernetes)
ETCD_VERSION=$(mod_version "$ETCD_MOD" go.etcd.io/etcd/server/v3)
[[ $K8S_VERSION =~ ^v1\.([0-9]+)\.[0-9]+$ ]] || die "cannot parse k8s.io/kubernetes version from $K8S_MOD/go.mod: '$K8S_VERSION'"
K8S_MINOR=${BASH_REMATCH[1]}
[[ $ETCD_VERSION =~ ^v3\.[0-9]+\.[0-9]+$ ]] || die "cannot parse etcd version from $ETCD_MOD/go.mod: '$ETCD_VERSION'"

K8S_BIN=$CACHE_ROOT/k8s-$K8S_VERSION/bin
ETCD_BIN=$CACHE_ROOT/etcd-$ETCD_VERSION/bin
mkdir -p "$K8S_BIN" "$ETCD_BIN"

# Serialise concurrent runs (a dev shell and CI on the same machine share the cache).
exec 9>"$CACHE_ROOT/.build.lock"
flock 9

# Static, reproducible builds. GOTOOLCHAIN=local: fail fast rather than try to download a
# toolchain (only the module proxy is reachable). The default -mod=readonly makes a go.sum
# that is out of date fail loudly instead of being edited behind our back.
export CGO_ENABLED=0 GOTOOLCHAIN=local

HEARTBEAT_PID=
cleanup() {
  if [[ -n $HEARTBEAT_PID ]]; then kill "$HEARTBEAT_PID" 2>/dev/null || true; wait "$HEARTBEAT_PID" 2>/dev/null || true; fi
  rm -f "$K8S_BIN"/.*.tmp "$ETCD_BIN"/.*.tmp 2>/dev/null || true
}
trap cleanup EXIT

# has_version BINARY EXPECTED-SUBSTRING VERSION-ARGS...: the binary exists and reports the version.
has_version() {
  local bin=$1 want=$2 out; shift 2
  [[ -x $bin ]] || return 1
  out=$("$bin" "$@" 2>/dev/null) || return 1   # captured, not piped: grep -q + pipefail can SIGPIPE
  [[ $out == *"$want"* ]]
}

# build MODDIR OUTFILE PACKAGE LDFLAGS: go build into a temp name, then rename, so an interrupted
# build never leaves a binary that looks finished. A heartbeat line every 30 s shows it is alive
# (kube-apiserver takes many minutes from a cold build cache on 2 cores).
build() {
  local moddir=$1 out=$2 pkg=$3 ldflags=$4 name t0
  name=$(basename "$out")
  t0=$(date +%s)
  log "building $name ($pkg) ..."
  # Its sleep outlives a kill of the loop: it must hold neither stdout (a caller's $(...) would wait for it)
  # nor the lock (fd 9). log writes to stderr.
  ( while sleep 30; do log "  ... still building $name ($(($(date +%s) - t0))s)"; done ) >/dev/null 9>&- &
  HEARTBEAT_PID=$!
  if ! (cd "$moddir" && nice -n "$NICE" go build -trimpath -ldflags "$ldflags" -o "$(dirname "$out")/.$name.tmp" "$pkg"); then
    die "go build of $pkg failed"
  fi
  kill "$HEARTBEAT_PID" 2>/dev/null || true; wait "$HEARTBEAT_PID" 2>/dev/null || true; HEARTBEAT_PID=
  mv -f "$(dirname "$out")/.$name.tmp" "$out"
  log "built $name in $(($(date +%s) - t0))s"
}

# --- Kubernetes ------------------------------------------------------------------------------
# Version stamps as k/k's hack/lib/version.sh sets them (both component-base and client-go).
# Without them binaries report v0.0.0-master+$Format:%H$ and kubectl/skew checks misbehave.
# Commit and date come from the proxy's .info for the tag (constant => stable build-cache keys).
k8s_ldflags() {
  local info commit date
  info=$(cd "$K8S_MOD" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" 2>/dev/null) || info=
  commit=$(sed -n 's/.*"Hash": *"\([0-9a-f]\{40\}\)".*/\1/p' <<<"$info" | head -n1)
  date=$(sed -n 's/.*"Time": *"\([^"]*\)".*/\1/p' <<<"$info" | head -n1)
  local kv=(
    "gitVersion=$K8S_VERSION" "gitMajor=1" "gitMinor=$K8S_MINOR" "gitTreeState=clean"
    "gitCommit=${commit:-unknown}" "buildDate=${date:-1970-01-01T00:00:00Z}"
  )
  local flags="-s -w" p x
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    for x in "${kv[@]}"; do flags+=" -X $p.$x"; done
  done
  printf '%s' "$flags"
}

K8S_LDFLAGS=
need_k8s_ldflags() { [[ -n $K8S_LDFLAGS ]] || K8S_LDFLAGS=$(k8s_ldflags); }

for name in kube-apiserver kube-scheduler kube-controller-manager; do
  if has_version "$K8S_BIN/$name" "Kubernetes $K8S_VERSION" --version; then
    log "$name $K8S_VERSION: cached"
  else
    need_k8s_ldflags
    build "$K8S_MOD" "$K8S_BIN/$name" "k8s.io/kubernetes/cmd/$name" "$K8S_LDFLAGS"
  fi
done
if has_version "$K8S_BIN/kubectl" "Client Version: $K8S_VERSION" version --client; then
  log "kubectl $K8S_VERSION: cached"
else
  need_k8s_ldflags
  build "$K8S_MOD" "$K8S_BIN/kubectl" k8s.io/kubernetes/cmd/kubectl "$K8S_LDFLAGS"
fi

# --- etcd ------------------------------------------------------------------------------------
# etcd's version number is a constant in api/v3/version; only the git SHA is an ldflag (as in
# etcd's scripts/build_lib.sh). We have no SHA from a module build, so record the module version.
ETCD_WANT="etcd Version: ${ETCD_VERSION#v}"
if has_version "$ETCD_BIN/etcd" "$ETCD_WANT" --version; then
  log "etcd $ETCD_VERSION: cached"
else
  build "$ETCD_MOD" "$ETCD_BIN/etcd" go.etcd.io/etcd/server/v3 \
    "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$ETCD_VERSION"
fi

# Final check: every binary is there and reports the pinned version.
has_version "$K8S_BIN/kube-apiserver" "Kubernetes $K8S_VERSION" --version || die "kube-apiserver does not report $K8S_VERSION"
has_version "$K8S_BIN/kube-scheduler" "Kubernetes $K8S_VERSION" --version || die "kube-scheduler does not report $K8S_VERSION"
has_version "$K8S_BIN/kube-controller-manager" "Kubernetes $K8S_VERSION" --version || die "kube-controller-manager does not report $K8S_VERSION"
has_version "$K8S_BIN/kubectl" "Client Version: $K8S_VERSION" version --client || die "kubectl does not report $K8S_VERSION"
has_version "$ETCD_BIN/etcd" "$ETCD_WANT" --version || die "etcd does not report $ETCD_VERSION"
log "ready: k8s $K8S_VERSION in $K8S_BIN, etcd $ETCD_VERSION in $ETCD_BIN"

printf 'export GPUADMIT_E2E_K8S_VERSION=%q\n' "$K8S_VERSION"
printf 'export GPUADMIT_E2E_ETCD_VERSION=%q\n' "$ETCD_VERSION"
printf 'export GPUADMIT_E2E_K8S_BIN=%q\n' "$K8S_BIN"
printf 'export GPUADMIT_E2E_ETCD_BIN=%q\n' "$ETCD_BIN"
