#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets (clang 14, ASan+UBSan: the `fuzz` preset) and runs each for a
# bounded time, seeded from the committed corpus and the fixtures (build/fuzz/tests/fuzz/<target>.inputs,
# written by tests/fuzz/CMakeLists.txt from the list the replay test reads).
#
# Usage: tests/fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60 s, every target)
#   FUZZ_JOBS=N  run N targets at a time (default 1)
# New inputs go to build/fuzz/corpus/<target>/, findings to build/fuzz/findings/<target>/ (crash-*,
# timeout-*, oom-*). Exits 1 on any finding, naming the file: copy it into tests/fuzz/corpus/<target>/ as
# crash-<what-it-is>, so the replay test in `make test` keeps it, then fix it.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SECS=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(quantity json pod review policy kubeconfig watch)
JOBS=${FUZZ_JOBS:-1}
[[ $SECS =~ ^[0-9]+$ && $SECS -gt 0 ]] || { echo "fuzz: seconds per target must be a positive integer, not '$SECS'" >&2; exit 2; }

log() { printf '%s fuzz: %s\n' "$(date -u +%H:%M:%S)" "$*"; }

cd "$ROOT"
scripts/deps.sh clang-14 libclang-rt-14-dev >/dev/null
cmake --preset fuzz >/dev/null
t0=$(date +%s)
cmake --build --preset fuzz -j "$(nproc)" --target "${TARGETS[@]/#/gpuadmit_fuzz_}" | grep -E "error|FAILED" || true
for t in "${TARGETS[@]}"; do
  [ -x "build/fuzz/tests/fuzz/gpuadmit_fuzz_$t" ] || { log "no target '$t' (build failed?)"; exit 2; }
done
log "built ${#TARGETS[@]} targets in $(( $(date +%s) - t0 ))s; ${SECS}s each, $JOBS at a time"

one() {
  local t=$1 bin="build/fuzz/tests/fuzz/gpuadmit_fuzz_$1"
  local work="build/fuzz/corpus/$t" findings="build/fuzz/findings/$t" out="build/fuzz/$t.log"
  mkdir -p "$work" "$findings"
  local inputs=()
  while IFS= read -r line; do [ -n "$line" ] && [ -e "$line" ] && inputs+=("$line"); done <"build/fuzz/tests/fuzz/$t.inputs"
  # -timeout: one input that runs 10 s is a hang; -rss_limit_mb: a blow-up, not a slow leak.
  local rc=0
  "$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$work" "${inputs[@]}" >"$out" 2>&1 || rc=$?
  local runs corpus
  runs=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$out" | grep -oE '[0-9]+$' || echo "?")
  corpus=$(find "$work" -type f | wc -l)
  if [ "$rc" -eq 0 ]; then
    printf '%-11s %10s runs  %5s new inputs  ok\n' "$t" "$runs" "$corpus"
  else
    printf '%-11s %10s runs  %5s new inputs  FINDING (exit %s): %s\n' "$t" "$runs" "$corpus" "$rc" \
      "$(find "$findings" -type f -newer "$bin" | head -1)"
    grep -E "property broken|fuzz: |ERROR: |SUMMARY" "$out" | head -5 | sed 's/^/    /'
  fi
  return "$rc"
}

failed=0
pids=()
for t in "${TARGETS[@]}"; do
  one "$t" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$JOBS" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
log "done in $(( $(date +%s) - t0 ))s: $([ $failed -eq 0 ] && echo "no findings" || echo "FINDINGS above (logs: build/fuzz/<target>.log)")"
exit $failed
