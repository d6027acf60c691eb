#!/usr/bin/env bash
# The Quantity differential test: gpuadmit's k8s::Quantity against k8s.io/apimachinery's resource.Quantity
# (the version of the e2e control plane, reference/go.mod) on every string literal of apimachinery's own
# quantity_test.go, each with three mutations, and COUNT generated strings (generate.py, seeded). Both
# sides must accept the same strings, with the same exact value, canonical text and ordering, except for
# the differences include/k8s/gpuadmit/k8s/quantity.hpp states (compare.py lists them).
#
#   tests/differential/quantity/run.sh PROBE [COUNT]     (make differential: the asan build's probe,
#                                                         1,000,000 strings)
# Env: GPUADMIT_DIFFERENTIAL_SEED (default 20261201).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
probe=${1:?usage: run.sh PROBE [COUNT]}
count=${2:-1000000}
seed=${GPUADMIT_DIFFERENTIAL_SEED:-20261201}
log() { printf '%s differential: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
command -v go >/dev/null || { log "ERROR: go not found in PATH"; exit 2; }
[[ -x $probe ]] || { log "ERROR: $probe is not built (cmake --build --preset asan)"; exit 2; }
work=$(mktemp -d /tmp/gpuadmit-differential.XXXXXX)
trap 'rm -rf "$work"' EXIT
export GOTOOLCHAIN=local CGO_ENABLED=0
start=$SECONDS
(cd "$HERE/reference" && go build -o "$work/quantityref" .) || { log "ERROR: building the reference failed"; exit 1; }
apimachinery=$(cd "$HERE/reference" && go list -m -f '{{.Dir}}' k8s.io/apimachinery)
"$work/quantityref" literals "$apimachinery/pkg/api/resource/quantity_test.go" >"$work/literals.hex"
python3 "$HERE/generate.py" "$seed" "$count" "$work/literals.hex" >"$work/inputs.hex"
log "$(wc -l <"$work/literals.hex") literals of $(basename "$apimachinery")/pkg/api/resource/quantity_test.go, $(wc -l <"$work/inputs.hex") inputs in all (seed $seed)"
"$work/quantityref" <"$work/inputs.hex" >"$work/kubernetes.txt" &
ref_pid=$!
"$probe" <"$work/inputs.hex" >"$work/gpuadmit.txt"
wait "$ref_pid"
rc=0
python3 "$HERE/compare.py" "$work/inputs.hex" "$work/gpuadmit.txt" "$work/kubernetes.txt" || rc=$?
log "took $((SECONDS - start))s; $([[ $rc == 0 ]] && echo passed || echo FAILED)"
exit "$rc"
