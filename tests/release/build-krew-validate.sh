#!/usr/bin/env bash
# Build (or reuse) krew's validate-krew-manifest and krew itself for the krew manifest check
# (tests/release/run.sh), from the Go tools module tools/krew (sigs.k8s.io/krew at the version pinned there),
# as build-actionlint.sh builds actionlint:
#   ${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}/krew-validate-<version>/bin/validate-krew-manifest
#   ${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}/krew-validate-<version>/bin/krew
# validate-krew-manifest is the check krew-index runs on a submitted manifest; krew is used for
# `krew install --manifest=... --archive=...` of the rendered manifest with a local archive (no download).
# Rebuilt only if missing, built from another version (a stamp beside them says which) or not recording the
# pinned version in their build info (`go version -m`); krew's own `version` reports it too (set at link
# time, as its release builds do).
#
# stdout: `export GPUADMIT_KREW_VALIDATE=...` and `export GPUADMIT_KREW=...` (eval them)
# stderr: timestamped progress (a heartbeat every 30 s during a cold build: under a minute of CPU, module
# downloads of a few MB).
# Env: GPUADMIT_CACHE_DIR, GPUADMIT_BUILD_NICE (default 10; 2 shared cores).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MOD=$HERE/tools/krew
CACHE_ROOT=${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}
NICE=${GPUADMIT_BUILD_NICE:-10}
TOOLS=(validate-krew-manifest krew)

log() { printf '%s build-krew-validate: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

command -v go >/dev/null || die "go not found in PATH"
VERSION=$(awk '$1 == "sigs.k8s.io/krew" && $2 ~ /^v/ { print $2; exit }' "$MOD/go.mod")
[[ $VERSION =~ ^v0\.[0-9]+\.[0-9]+$ ]] || die "cannot parse sigs.k8s.io/krew version from $MOD/go.mod: '$VERSION'"

BIN=$CACHE_ROOT/krew-validate-$VERSION/bin
mkdir -p "$BIN"
exec 9>"$CACHE_ROOT/.build-krew-validate.lock"
flock 9

export CGO_ENABLED=0 GOTOOLCHAIN=local

# The module version a binary was built from, from its embedded build info.
module_version() { go version -m "$1" 2>/dev/null | awk '$1 == "mod" && $2 == "sigs.k8s.io/krew" { print $3 }'; }

built() {
  [[ $(cat "$BIN/.version" 2>/dev/null) == "$VERSION" ]] || return 1
  local t
  for t in "${TOOLS[@]}"; do
    [[ -x $BIN/$t && $(module_version "$BIN/$t") == "$VERSION" ]] || return 1
  done
}

if built; then
  log "validate-krew-manifest and krew $VERSION: cached"
else
  t0=$(date +%s)
  log "building validate-krew-manifest and krew $VERSION ..."
  # The heartbeat stops its sleep when killed, and neither holds stdout or the lock: an orphaned sleep would
  # keep the caller's $(...) open, and the next run waiting on flock, for up to 30 s.
  (
    trap 'kill "$s" 2>/dev/null; exit 0' TERM
    while :; do
      sleep 30 & s=$!
      wait "$s"
      log "  ... still building krew tools ($(($(date +%s) - t0))s)"
    done
  ) >&2 9>&- &
  hb=$!
  tmp=$BIN/.build.tmp
  trap 'kill $hb 2>/dev/null || true; rm -rf "$tmp"' EXIT
  rm -rf "$tmp"
  mkdir -p "$tmp"
  (cd "$MOD" && nice -n "$NICE" go build -trimpath -ldflags "-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$VERSION" \
    -o "$tmp/" sigs.k8s.io/krew/cmd/validate-krew-manifest sigs.k8s.io/krew/cmd/krew) || die "go build of the krew tools failed"
  for t in "${TOOLS[@]}"; do mv -f "$tmp/$t" "$BIN/$t"; done
  echo "$VERSION" >"$BIN/.version"
  log "built validate-krew-manifest and krew in $(($(date +%s) - t0))s"
fi
built || die "validate-krew-manifest or krew in $BIN is not $VERSION"
printf 'export GPUADMIT_KREW_VALIDATE=%q\n' "$BIN/validate-krew-manifest"
printf 'export GPUADMIT_KREW=%q\n' "$BIN/krew"
