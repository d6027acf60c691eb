#!/usr/bin/env bash
# Build (or reuse) actionlint for the release workflow check (tests/release/run.sh), from the Go tools
# module tools/actionlint (github.com/rhysd/actionlint at the version pinned there), as
# tests/chart/build-promtool.sh builds promtool:
#   ${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}/actionlint-<version>/bin/actionlint
# Rebuilt only if missing, built from another version (a stamp beside it says which) or not reporting
# the pinned version (`actionlint -version`; the version is set at link time, as its release builds do).
#
# stdout: `export GPUADMIT_ACTIONLINT=...` (eval it)
# stderr: timestamped progress (a heartbeat every 30 s during a cold build: under a minute of CPU and a
# small module graph).
# Env: GPUADMIT_CACHE_DIR, GPUADMIT_BUILD_NICE (default 10; 2 shared cores).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MOD=$HERE/tools/actionlint
CACHE_ROOT=${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}
NICE=${GPUADMIT_BUILD_NICE:-10}

log() { printf '%s build-actionlint: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

command -v go >/dev/null || die "go not found in PATH"
VERSION=$(awk '$1 == "github.com/rhysd/actionlint" && $2 ~ /^v/ { print $2; exit }' "$MOD/go.mod")
[[ $VERSION =~ ^v1\.[0-9]+\.[0-9]+$ ]] || die "cannot parse github.com/rhysd/actionlint version from $MOD/go.mod: '$VERSION'"

BIN=$CACHE_ROOT/actionlint-$VERSION/bin
mkdir -p "$BIN"
exec 9>"$CACHE_ROOT/.build-actionlint.lock"
flock 9

export CGO_ENABLED=0 GOTOOLCHAIN=local

built() {
  [[ -x $BIN/actionlint && $(cat "$BIN/.version" 2>/dev/null) == "$VERSION" ]] &&
    [[ $("$BIN/actionlint" -version 2>/dev/null | head -n 1) == "$VERSION" ]]
}

if built; then
  log "actionlint $VERSION: cached"
else
  t0=$(date +%s)
  log "building actionlint $VERSION ..."
  # The heartbeat stops its sleep when killed, and neither holds stdout or the lock: an orphaned sleep would
  # keep the caller's $(...) open, and the next run waiting on flock, for up to 30 s.
  (
    trap 'kill "$s" 2>/dev/null; exit 0' TERM
    while :; do
      sleep 30 & s=$!
      wait "$s"
      log "  ... still building actionlint ($(($(date +%s) - t0))s)"
    done
  ) >&2 9>&- &
  hb=$!
  trap 'kill $hb 2>/dev/null || true; rm -f "$BIN/.actionlint.tmp"' EXIT
  (cd "$MOD" && nice -n "$NICE" go build -trimpath -ldflags "-s -w -X github.com/rhysd/actionlint.version=$VERSION" \
    -o "$BIN/.actionlint.tmp" github.com/rhysd/actionlint/cmd/actionlint) || die "go build of actionlint failed"
  mv -f "$BIN/.actionlint.tmp" "$BIN/actionlint"
  echo "$VERSION" >"$BIN/.version"
  log "built actionlint in $(($(date +%s) - t0))s"
fi
built || die "actionlint $VERSION does not run"
printf 'export GPUADMIT_ACTIONLINT=%q\n' "$BIN/actionlint"
