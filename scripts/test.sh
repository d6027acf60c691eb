#!/usr/bin/env bash
# make test: every suite, ordered to keep the two cores busy, and each step's time at the end.
#
# The Go builds of the test tools (etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kubectl
# and helm; cached in ~/.cache/gpuadmit) take 20+ minutes on a fresh machine. They start first, in the
# background at low priority (build-tools.sh runs go under nice), and fill the gaps the C++ builds and
# suites leave; the suites that need them (differential, chart, watch, truth) come last and wait on the
# cache's lock if the build is still running. On a warm machine the background step finds everything cached.
#
# The e2e scenarios run inside the chart suite, through the chart's own webhook configurations (what
# ships); `make e2e` still runs them through tests/e2e's hand-written ones, with the overhead benchmark.
#
# Env: JOBS (default nproc). Exit status: that of the first failing step; later steps do not run.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
RELEASE_BIN=build/release/src/cli/gpuadmit
T0=$SECONDS
TIMES=()

log() { printf '%s test: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

summary() {
  local line
  printf '\nmake test: steps (seconds)\n'
  for line in "${TIMES[@]}"; do printf '  %s\n' "$line"; done
  printf '  %-22s %5d\n' total $((SECONDS - T0))
}

TOOLS_PID=
cleanup() {
  local rc=$?
  if [[ -n $TOOLS_PID ]] && kill -0 "$TOOLS_PID" 2>/dev/null; then kill -TERM -- "-$TOOLS_PID" 2>/dev/null || true; fi
  summary
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# step NAME CMD...: run CMD, record its time; a failure ends make test with its status.
step() {
  local name=$1 t=$SECONDS rc=0; shift
  log "step $name"
  "$@" || rc=$?
  TIMES+=("$(printf '%-22s %5d%s' "$name" $((SECONDS - t)) "$( ((rc == 0)) || echo "  FAILED (exit $rc)")")")
  ((rc == 0)) || exit "$rc"
}

step deps scripts/deps.sh

# The Go tools, in their own process group (so that an early exit stops the go builds too).
mkdir -p build
setsid bash -c 'tests/e2e/build-tools.sh >/dev/null && tests/chart/build-helm.sh >/dev/null &&
  tests/chart/build-promtool.sh >/dev/null' \
  >build/go-tools.log 2>&1 </dev/null &
TOOLS_PID=$!
log "Go test tools building in the background (build/go-tools.log)"

step build-asan make --no-print-directory build-asan JOBS="$JOBS"
step ctest-asan ctest --preset asan -j "$JOBS"
step build-release make --no-print-directory build JOBS="$JOBS"
step tsan make --no-print-directory tsan JOBS="$JOBS"
step fuzz-ci make --no-print-directory fuzz-ci
step rss tests/load/rss_flat.sh "$RELEASE_BIN" 60 512
step differential tests/differential/quantity/run.sh build/asan/tests/gpuadmit_quantity_probe
step differential-dracel tests/differential/dracel/run.sh build/asan/tests/gpuadmit_dracel_probe
# actionlint (from its Go module) over .github/workflows, and the release workflow's must-haves (docs/release.md).
step release-lint tests/release/run.sh

t=$SECONDS
log "waiting for the Go test tools"
if ! wait "$TOOLS_PID"; then
  TOOLS_PID=
  log "the background Go build failed (build/go-tools.log below); the suites build them again"
  tail -n 20 build/go-tools.log >&2 || true
fi
TOOLS_PID=
TIMES+=("$(printf '%-22s %5d' "go-tools (wait)" $((SECONDS - t)))")

step chart tests/chart/run.sh "$RELEASE_BIN"
# docs/gitops.md's Argo CD and Flux rules against every patch gpuadmit makes to the truth corpus (gojq, as Argo CD).
step gitops tests/gitops/run.sh "$RELEASE_BIN"
step watch-e2e bash -c "cmake --build --preset release -j $JOBS --target gpuadmit_cluster_e2e_tests &&
  GPUADMIT_BIN=$RELEASE_BIN tests/e2e/watch/run.sh build/release/tests/gpuadmit_cluster_e2e_tests"
step truth-ci make --no-print-directory truth-ci
