#!/usr/bin/env bash
# The GitOps diff rules of docs/gitops.md against what gpuadmit really patches (issue #54, item 4).
#
#   tests/gitops/run.sh GPUADMIT_BIN
#
# 1. Builds (or reuses) gojq from the Go tools module tests/gitops/tools/gojq, at the version Argo CD pins,
#    as tests/chart/build-promtool.sh builds promtool:
#      ${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}/gojq-<version>/bin/gojq
#    Rebuilt only if missing or built from another version (a stamp beside it says which). Argo CD runs an
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
CACHE_ROOT=${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}
NICE=${GPUADMIT_BUILD_NICE:-10}
T0=$(date +%s)

log() { printf '%s gitops: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $# -eq 1 ]] || die "usage: tests/gitops/run.sh GPUADMIT_BIN"
BIN=$1
[[ -x $BIN ]] || die "not an executable: $BIN"
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
command -v go >/dev/null || die "go not found in PATH"
command -v python3 >/dev/null || die "python3 not found in PATH"

# --- gojq -------------------------------------------------------------------------------------------
VERSION=$(awk '$1 == "github.com/itchyny/gojq" && $2 ~ /^v/ { print $2; exit }' "$MOD/go.mod")
[[ $VERSION =~ ^v0\.[0-9]+\.[0-9]+$ ]] || die "cannot parse github.com/itchyny/gojq version from $MOD/go.mod: '$VERSION'"
GOJQ_DIR=$CACHE_ROOT/gojq-$VERSION/bin
mkdir -p "$GOJQ_DIR"
exec 9>"$CACHE_ROOT/.build-gojq.lock"
flock 9
export CGO_ENABLED=0 GOTOOLCHAIN=local

built() { [[ -x $GOJQ_DIR/gojq && $(cat "$GOJQ_DIR/.version" 2>/dev/null) == "$VERSION" ]] && "$GOJQ_DIR/gojq" -n '1' >/dev/null 2>&1; }

if built; then
  log "gojq $VERSION: cached"
else
  t=$(date +%s)
  log "building gojq $VERSION ..."
  trap 'rm -f "$GOJQ_DIR/.gojq.tmp"' EXIT
  (cd "$MOD" && nice -n "$NICE" go build -trimpath -ldflags "-s -w" -o "$GOJQ_DIR/.gojq.tmp" \
    github.com/itchyny/gojq/cmd/gojq) || die "go build of gojq failed"
  mv -f "$GOJQ_DIR/.gojq.tmp" "$GOJQ_DIR/gojq"
  echo "$VERSION" >"$GOJQ_DIR/.version"
  log "built gojq in $(($(date +%s) - t))s"
fi
built || die "gojq $VERSION does not run"
exec 9>&-
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
