#!/usr/bin/env bash
# The GitOps diff rules of docs/gitops.md against what gpuadmit really patches (issue #54, item 4).
#
#   tests/gitops/run.sh GPUADMIT_BIN
#
# 1. Builds (or reuses) gojq from the Go tools module tests/gitops/tools/gojq, at the version Argo CD pins,
#    with tests/lib/go_tool.sh: ${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}/gojq-<version>/bin/gojq. Argo CD runs an
#    ignoreDifferences jqPathExpression as gojq's del(EXPR) (util/argo/normalizers/diff_normalizer.go).
# 2. Reuses helm from tests/chart/build-helm.sh (built there if missing) to render the chart for the
#    install checks (caBundle and TLS Secret drift between two renders).
# 3. Runs check_diff_rules.py: every manifest of tests/truth/manifests under each policy that patches
#    (embedded default, deploy/policies/kubeflow.yaml, deploy/policies/strict.yaml), without and with each
#    cluster profile of tests/truth/clusters; each object's patch applied gives the live object; desired and
#    live normalized as Argo CD's ignoreDifferences does must be equal; each rule must be needed; a user's
#    own change must still show. Exit 1 on any failure.
#
# stderr: timestamped progress. Env: GPUADMIT_CACHE_DIR, GPUADMIT_BUILD_NICE (default 10).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MOD=$HERE/tools/gojq
T0=$(date +%s)
# shellcheck source=tests/lib/go_tool.sh
source "$ROOT/tests/lib/go_tool.sh"

log() { printf '%s gitops: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $# -eq 1 ]] || die "usage: tests/gitops/run.sh GPUADMIT_BIN"
BIN=$1
[[ -x $BIN ]] || die "not an executable: $BIN"
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
command -v python3 >/dev/null || die "python3 not found in PATH"

# --- gojq (the version Argo CD pins) ------------------------------------------------------------------
build_go_tool gojq "$MOD" github.com/itchyny/gojq "" github.com/itchyny/gojq/cmd/gojq
GOJQ_DIR=$GO_TOOL_BIN
log "gojq: $("$GOJQ_DIR/gojq" --version 2>&1)"

# --- helm (the chart tests' build; cached) ----------------------------------------------------------
eval "$("$ROOT/tests/chart/build-helm.sh")"
[[ -x ${GPUADMIT_HELM:-} ]] || die "tests/chart/build-helm.sh gave no helm"

# --- the check --------------------------------------------------------------------------------------
rc=0
python3 "$HERE/check_diff_rules.py" --root "$ROOT" --gpuadmit "$BIN" --gojq "$GOJQ_DIR/gojq" \
  --helm "$GPUADMIT_HELM" ${GITOPS_PATHS_OUT:+--paths-out "$GITOPS_PATHS_OUT"} || rc=$?
log "done in $(($(date +%s) - T0))s (exit $rc)"
exit "$rc"
