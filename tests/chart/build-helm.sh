#!/usr/bin/env bash
# Build (or reuse) helm for the chart tests, from the Go tools module tools/helm (helm.sh/helm/v3
# at the version pinned there), the same way tests/e2e/build-tools.sh builds the control plane:
#   ${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}/helm-<version>/bin/helm
# Rebuilt only if missing or not reporting the pinned version.
#
# stdout: `export GPUADMIT_HELM=...` and `export GPUADMIT_HELM_VERSION=...` (eval them)
# stderr: timestamped progress (a heartbeat every 30 s during a cold build).
# Env: GPUADMIT_CACHE_DIR, GPUADMIT_BUILD_NICE (default 10; 2 shared cores).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MOD=$HERE/tools/helm
CACHE_ROOT=${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}
NICE=${GPUADMIT_BUILD_NICE:-10}

log() { printf '%s build-helm: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

mod_version() {
  awk -v m="$2" '($1 == m && $2 ~ /^v/) { print $2; exit } ($1 == "require" && $2 == m) { print $3; exit }' "$1/go.mod"
}

command -v go >/dev/null || die "go not found in PATH"
VERSION=$(mod_version "$MOD" helm.sh/helm/v3)
[[ $VERSION =~ ^v3\.[0-9]+\.[0-9]+$ ]] || die "cannot parse helm.sh/helm/v3 version from $MOD/go.mod: '$VERSION'"
# Helm's default .Capabilities.KubeVersion comes from the client-go it is built with (as in Helm's Makefile).
CLIENT_GO=$(mod_version "$MOD" k8s.io/client-go)
[[ $CLIENT_GO =~ ^v0\.([0-9]+)\.[0-9]+$ ]] || die "cannot parse k8s.io/client-go version: '$CLIENT_GO'"
K8S_MINOR=${BASH_REMATCH[1]}

BIN=$CACHE_ROOT/helm-$VERSION/bin
mkdir -p "$BIN"
exec 9>"$CACHE_ROOT/.build-helm.lock"
flock 9

export CGO_ENABLED=0 GOTOOLCHAIN=local

has_version() { local out; [[ -x $BIN/helm ]] && out=$("$BIN/helm" version --short 2>/dev/null) && [[ $out == "$VERSION"* ]]; }

if has_version; then
  log "helm $VERSION: cached"
else
  t0=$(date +%s)
  log "building helm $VERSION ..."
  # Its sleep outlives a kill of the loop: it must hold neither stdout (a caller's $(...) would wait for it)
  # nor the lock (fd 9). log writes to stderr.
  ( while sleep 30; do log "  ... still building helm ($(($(date +%s) - t0))s)"; done ) >/dev/null 9>&- &
  hb=$!
  trap 'kill $hb 2>/dev/null || true; rm -f "$BIN/.helm.tmp"' EXIT
  ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    ldflags+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$K8S_MINOR"
  done
  (cd "$MOD" && nice -n "$NICE" go build -trimpath -ldflags "$ldflags" -o "$BIN/.helm.tmp" helm.sh/helm/v3/cmd/helm) ||
    die "go build of helm failed"
  mv -f "$BIN/.helm.tmp" "$BIN/helm"
  log "built helm in $(($(date +%s) - t0))s"
fi
has_version || die "helm does not report $VERSION"
printf 'export GPUADMIT_HELM=%q\n' "$BIN/helm"
printf 'export GPUADMIT_HELM_VERSION=%q\n' "$VERSION"
