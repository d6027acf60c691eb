#!/usr/bin/env bash
# make bench: every benchmark, release build, numbers on stdout.
set -euo pipefail
build=${1:-build/release}
cd "$(dirname "$0")/.."
"$build/bench/gpuadmit_policy_bench"
if [ -x "$build/bench/gpuadmit_cluster_bench" ]; then
  "$build/bench/gpuadmit_cluster_bench"
fi
if [ -x "$build/bench/gpuadmit_dra_bench" ]; then
  "$build/bench/gpuadmit_dra_bench"
fi
"$build/bench/gpuadmit_dra_review_bench"
if [ -x "$build/bench/gpuadmit_load_bench" ]; then
  "$build/bench/gpuadmit_load_bench"
fi
