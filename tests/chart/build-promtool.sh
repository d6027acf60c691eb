#!/usr/bin/env bash
# Build (or reuse) promtool for the chart tests, from the Go tools module tools/promtool
# (github.com/prometheus/prometheus at the version pinned there), as build-helm.sh builds helm:
#   ${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}/promtool-<version>/bin/promtool
# Rebuilt only if missing or built from another version (a stamp beside it says which).
#
# stdout: `export GPUADMIT_PROMTOOL=...` (eval it)
# stderr: timestamped progress (a heartbeat every 30 s during a cold build: about 5 min of CPU and the
# downloads of Prometheus' module graph, cloud SDKs included, since promtool links its service discovery).
# Env: GPUADMIT_CACHE_DIR, GPUADMIT_BUILD_NICE (default 10; 2 shared cores).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MOD=$HERE/tools/promtool
CACHE_ROOT=${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}
NICE=${GPUADMIT_BUILD_NICE:-10}

log() { printf '%s build-promtool: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

command -v go >/dev/null || die "go not found in PATH"
VERSION=$(awk '$1 == "github.com/prometheus/prometheus" && $2 ~ /^v/ { print $2; exit }' "$MOD/go.mod")
[[ $VERSION =~ ^v0\.[0-9]+\.[0-9]+$ ]] || die "cannot parse github.com/prometheus/prometheus version from $MOD/go.mod: '$VERSION'"

BIN=$CACHE_ROOT/promtool-$VERSION/bin
mkdir -p "$BIN"
exec 9>"$CACHE_ROOT/.build-promtool.lock"
flock 9

export CGO_ENABLED=0 GOTOOLCHAIN=local

built() { [[ -x $BIN/promtool && $(cat "$BIN/.version" 2>/dev/null) == "$VERSION" ]] && "$BIN/promtool" --help >/dev/null 2>&1; }

if built; then
  log "promtool $VERSION: cached"
else
  t0=$(date +%s)
  log "building promtool $VERSION ..."
  # Its sleep outlives a kill of the loop: it must hold neither stdout (a caller's $(...) would wait for it)
  # nor the lock (fd 9). log writes to stderr.
  ( while sleep 30; do log "  ... still building promtool ($(($(date +%s) - t0))s)"; done ) >/dev/null 9>&- &
  hb=$!
  trap 'kill $hb 2>/dev/null || true; rm -f "$BIN/.promtool.tmp"' EXIT
  (cd "$MOD" && nice -n "$NICE" go build -trimpath -ldflags "-s -w" -o "$BIN/.promtool.tmp" \
    github.com/prometheus/prometheus/cmd/promtool) || die "go build of promtool failed"
  mv -f "$BIN/.promtool.tmp" "$BIN/promtool"
  echo "$VERSION" >"$BIN/.version"
  log "built promtool in $(($(date +%s) - t0))s"
fi
built || die "promtool $VERSION does not run"
printf 'export GPUADMIT_PROMTOOL=%q\n' "$BIN/promtool"
