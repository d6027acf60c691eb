#!/usr/bin/env bash
# The DRA CEL differential test: gpuadmit's device selector evaluator (policy::evaluate) against
# k8s.io/dynamic-resource-allocation/cel (reference/go.mod, the e2e control plane's version) on every
# expression × device of generate.py, and on COUNT random expressions (random_cases.py, seeded). They must
# agree wherever gpuadmit evaluates: same match, the same error message where Kubernetes errs (compared
# exactly), a compile error where Kubernetes has one. "not evaluated" is counted, never a failure.
#
#   tests/differential/dracel/run.sh PROBE [COUNT]     (make differential and make test: the asan build's
#                                                       gpuadmit_dracel_probe, 20,000 random expressions)
# Env: GPUADMIT_DIFFERENTIAL_SEED (default 20261204).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
probe=${1:?usage: run.sh PROBE [COUNT]}
count=${2:-20000}
seed=${GPUADMIT_DIFFERENTIAL_SEED:-20261204}
log() { printf '%s differential: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
command -v go >/dev/null || { log "ERROR: go not found in PATH"; exit 2; }
[[ -x $probe ]] || { log "ERROR: $probe is not built (cmake --build --preset asan)"; exit 2; }
work=$(mktemp -d /tmp/gpuadmit-dracel.XXXXXX)
trap 'rm -rf "$work"' EXIT
export GOTOOLCHAIN=local CGO_ENABLED=0
start=$SECONDS
(cd "$HERE/reference" && go build -o "$work/dracelref" .) || { log "ERROR: building the reference failed"; exit 1; }
{ python3 "$HERE/generate.py"; python3 "$HERE/random_cases.py" "$seed" "$count"; } >"$work/cases.jsonl"
log "$(wc -l <"$work/cases.jsonl") cases (seed $seed)"
"$work/dracelref" <"$work/cases.jsonl" >"$work/kubernetes.jsonl" &
ref_pid=$!
"$probe" <"$work/cases.jsonl" >"$work/gpuadmit.jsonl"
wait "$ref_pid"
rc=0
python3 "$HERE/compare.py" "$work/cases.jsonl" "$work/gpuadmit.jsonl" "$work/kubernetes.jsonl" || rc=$?
log "took $((SECONDS - start))s; $([[ $rc == 0 ]] && echo passed || echo FAILED)"
exit "$rc"
