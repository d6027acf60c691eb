#!/usr/bin/env bash
# Instructions per request, by endpoint, counted by valgrind's callgrind: the same figure on every run,
# where throughput on a shared two-core machine moves by a third between identical runs. Use it to judge a
# change to the request path; `make bench` gives the wall-clock figures.
#
# Each endpoint is run twice through the load bench (--only ENDPOINT, one connection, N requests), and the
# difference of the two totals divided by the difference of N is what one request costs: the load
# generator and the server together, user space only (the kernel's share, TCP over loopback, is not
# counted). Of that, the part spent in admission::review is shown on its own.
#
# usage: scripts/instructions.sh [BUILD_DIR]      (default build/release; needs valgrind)
#        ENDPOINTS="/validate /mutate" scripts/instructions.sh    (a subset)
set -euo pipefail
build=${1:-build/release}
cd "$(dirname "$0")/.."
bench="$build/bench/gpuadmit_load_bench"
if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
  echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2
  exit 2
fi
if [ ! -x "$bench" ]; then
  echo "instructions.sh: $bench is missing; run make bench (or cmake --build --preset release) first" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
small=200
large=600

# Prints "<total instructions> <instructions inside admission::review>" for one run.
count() {
  local endpoint=$1 requests=$2
  if ! valgrind --tool=callgrind --callgrind-out-file="$work/out" "$bench" --only "$endpoint" --connections 1 \
      --max-requests "$requests" --seconds 3600 >"$work/stdout" 2>"$work/log"; then
    echo "instructions.sh: the load bench failed on $endpoint:" >&2
    cat "$work/stdout" "$work/log" >&2
    exit 1
  fi
  local total review
  total=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/log")
  review=$(callgrind_annotate --inclusive=yes "$work/out" 2>/dev/null |
    awk '!found && /review\.cpp:gpuadmit::admission::review\(/ { gsub(",", "", $1); print $1; found = 1 }')
  echo "$total ${review:-0}"
}

printf '%-16s %16s %16s %16s\n' endpoint "instr/request" "in review" "transport+rest"
for endpoint in ${ENDPOINTS:-/bench/constant /validate /mutate}; do
  read -r total_small review_small < <(count "$endpoint" "$small")
  read -r total_large review_large < <(count "$endpoint" "$large")
  per_request=$(((total_large - total_small) / (large - small)))
  per_review=$(((review_large - review_small) / (large - small)))
  printf '%-16s %16d %16d %16d\n' "$endpoint" "$per_request" "$per_review" "$((per_request - per_review))"
done
