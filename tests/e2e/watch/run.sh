#!/usr/bin/env bash
# The cluster watcher against a real kube-apiserver: starts the e2e control plane (tests/e2e/cluster.sh, its
# own state dir so it never collides with the scenario suite), runs the hidden "[e2e]" Catch2 cases of
# gpuadmit_cluster_e2e_tests, and, with GPUADMIT_BIN set, `gpuadmit cluster dump` against it. Always stops
# the control plane on exit; on failure the component logs are kept in $GPUADMIT_E2E_STATE-logs.
#
#   tests/e2e/watch/run.sh build/dev/tests/gpuadmit_cluster_e2e_tests [CATCH2 ARGS...]
#
# Env: GPUADMIT_E2E_STATE (default /tmp/gpuadmit-cluster-it), GPUADMIT_BIN (optional: the gpuadmit binary).
# Timing lines ("e2e.cluster timing: ...") go to stdout.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
[[ $# -ge 1 && -x $1 ]] || { echo "usage: $0 GPUADMIT_CLUSTER_E2E_TESTS_BINARY [CATCH2 ARGS...]" >&2; exit 2; }
TESTS=$(readlink -f "$1"); shift
export GPUADMIT_E2E_STATE=${GPUADMIT_E2E_STATE:-/tmp/gpuadmit-cluster-it}
# Control plane only: this suite does not register the webhook.
unset GPUADMIT_E2E_POLICY
CLUSTER_SH=$ROOT/tests/e2e/cluster.sh

finish() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ $rc != 0 && -d $GPUADMIT_E2E_STATE/logs ]]; then
    rm -rf "$GPUADMIT_E2E_STATE-logs"
    cp -r "$GPUADMIT_E2E_STATE/logs" "$GPUADMIT_E2E_STATE-logs" || true
    echo "run-e2e: failed (exit $rc); component logs in $GPUADMIT_E2E_STATE-logs" >&2
  fi
  "$CLUSTER_SH" down >/dev/null 2>&1 || echo "run-e2e: WARNING: cluster.sh down failed" >&2
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# GPUADMIT_BIN would make `up` start the webhook; this suite runs the binary itself.
envs=$(env -u GPUADMIT_BIN "$CLUSTER_SH" up) && eval "$envs"
"$ROOT/tests/e2e/fake-cluster.sh" nodes >&2

"$TESTS" "[e2e]" "$@"

if [[ -n ${GPUADMIT_BIN:-} ]]; then
  out=$(mktemp /tmp/gpuadmit-cluster-dump.XXXXXX.yaml)
  "$GPUADMIT_BIN" cluster dump --kubeconfig "$KUBECONFIG" -o yaml --output-file "$out"
  nodes=$(grep -c '^  kind: Node$' "$out" || true)
  want=$("$GPUADMIT_E2E_KUBECTL" get nodes -o name | wc -l)
  rm -f "$out"
  [[ $nodes == "$want" ]] || { echo "run-e2e: cluster dump has $nodes nodes, the cluster $want" >&2; exit 1; }
  echo "e2e.cluster dump: gpuadmit cluster dump wrote all $want nodes"
fi
echo "run-e2e: passed"
