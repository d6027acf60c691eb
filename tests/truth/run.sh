#!/usr/bin/env bash
# The truth harness (issue #26 item 4): every cluster profile x manifest, applied to a fresh namespace
# without gpuadmit and with it, judged by the real kube-scheduler of ONE e2e control plane
# (tests/e2e/cluster.sh with kube-controller-manager) shared across all profiles.
#
#   tests/truth/run.sh [--clusters DIR] [--manifests DIR] [--policy FILE...] [--gpuadmit BIN]
#                      [--out DIR] [--parallel N] [--case-timeout SECS] [--profile NAME]... [--manifest NAME]... [--sample K]
#
#   --clusters DIR    cluster profiles, *.yaml (default tests/truth/clusters): Nodes with status (a
#                     `gpuadmit cluster dump` or `kubectl get nodes,... -o yaml`), NodePools, StorageClasses,
#                     ResourceQuotas (each namespace of namespaced objects is a variant of the profile)
#   --manifests DIR   the corpus, *.yaml (default tests/truth/manifests), each file one case
#   --policy FILE...  gpuadmit policies to run "with gpuadmit" under (default: the embedded policy);
#                     every following argument that is not an option is one more policy file, and the
#                     word `default` is the embedded policy; `@noview` after one (default@noview) runs
#                     gpuadmit with its cluster view off
#   --gpuadmit BIN    default $GPUADMIT_BIN, else build/release/src/cli/gpuadmit
#   --out DIR         results.json and matrix.md (default /tmp/gpuadmit-truth)
#   --parallel N      runs at once (default 8: a run mostly waits on the scheduler, and 8 halve the time of 4
#                     on 2 cores; runs whose Pending reason other runs could cause are repeated alone)
#   --sample K        run each manifest on K of the columns (a profile, or one namespace variant of it), not
#                     all, spread evenly and the same on every run (truth-ci: the whole corpus within make
#                     test's budget; make truth runs them all)
#   --enable-admission-plugins LIST  extra kube-apiserver admission plugins, e.g. ExtendedResourceToleration
#                     (GKE enables it: without it a GKE-shaped profile's plain GPU pod stays Pending on the taint)
#
# "With gpuadmit" uses the Helm chart's own webhook configurations (templates/webhooks.yaml rendered
# with webhooks.url at the local `gpuadmit serve`, failurePolicy Fail for both); "without" is a
# namespace with the chart's opt-out label gpuadmit.io/ignore, so both kinds of run share one
# registration and may run side by side.
#
# stdout: one line per case, then `invariants: ...` and last `truth: N cases, H harmful, D honest denials,
# F fixed, U unexplained`. Exit 0 iff no invariant is breached; 1 on a breach; 2 on a harness error.
# Everything started is stopped on exit/INT/TERM. Env: GPUADMIT_TRUTH_TIMEOUT (whole run, default 3600 s).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CLUSTERS=$HERE/clusters
MANIFESTS=$HERE/manifests
OUT=/tmp/gpuadmit-truth
BIN=${GPUADMIT_BIN:-$ROOT/build/release/src/cli/gpuadmit}
PARALLEL=8
CASE_TIMEOUT=20
TOTAL_TIMEOUT=${GPUADMIT_TRUTH_TIMEOUT:-3600}
POLICIES=()
EXTRA=()

log() { printf '%s truth: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 2; }

while (($#)); do
  case $1 in
    --clusters) CLUSTERS=${2:?--clusters DIR}; shift 2 ;;
    --manifests) MANIFESTS=${2:?--manifests DIR}; shift 2 ;;
    --policy)
      shift
      [[ $# -gt 0 && $1 != --* ]] || die "--policy needs at least one FILE"
      while [[ $# -gt 0 && $1 != --* ]]; do
        base=${1%@noview} suffix=${1#"${1%@noview}"}
        if [[ $base == default ]]; then POLICIES+=("default$suffix"); else POLICIES+=("$(readlink -f "$base")$suffix"); fi
        shift
      done
      ;;
    --gpuadmit) BIN=${2:?--gpuadmit BIN}; shift 2 ;;
    --out) OUT=${2:?--out DIR}; shift 2 ;;
    --parallel) PARALLEL=${2:?--parallel N}; shift 2 ;;
    --case-timeout) CASE_TIMEOUT=${2:?--case-timeout SECS}; shift 2 ;;
    --enable-admission-plugins) export GPUADMIT_E2E_ENABLE_ADMISSION_PLUGINS=${2:?--enable-admission-plugins LIST}; shift 2 ;;
    --profile) EXTRA+=(--only-profile "${2:?--profile NAME}"); shift 2 ;;
    --manifest) EXTRA+=(--only-manifest "${2:?--manifest NAME}"); shift 2 ;;
    --sample) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--sample needs a positive number"; EXTRA+=(--sample "$2"); shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ -d $CLUSTERS ]] || die "no cluster profiles: $CLUSTERS is not a directory"
[[ -d $MANIFESTS ]] || die "no manifests: $MANIFESTS is not a directory"
[[ -f $BIN && -x $BIN ]] || die "$BIN is not an executable (make build, or --gpuadmit BIN)"
BIN=$(readlink -f "$BIN")
for p in "${POLICIES[@]}"; do
  p=${p%@noview}
  [[ $p != default ]] || continue
  [[ -f $p ]] || die "policy $p not found"
  "$BIN" policy validate "$p" >/dev/null || die "policy $p is not valid"
done
[[ $PARALLEL =~ ^[1-9][0-9]*$ ]] || die "--parallel must be a positive number"
python3 -c 'import yaml' 2>/dev/null || die "python3 with PyYAML is needed"

WORK=$(mktemp -d /tmp/gpuadmit-truth-run.XXXXXX)
export GPUADMIT_E2E_STATE=$WORK/state
UP=0
CHILD=
T0=$SECONDS

# Long steps run in the background and are waited for, so that INT/TERM reach the trap at once.
bg_run() {
  local secs=$1 rc=0; shift
  timeout -k 20 "$secs" "$@" &
  CHILD=$!
  wait "$CHILD" || rc=$?
  CHILD=
  return "$rc"
}

# shellcheck disable=SC2317,SC2329  # invoked by the EXIT trap
cleanup() {
  local rc=$? pid
  trap - EXIT INT TERM
  if [[ -n $CHILD ]]; then kill -TERM "$CHILD" 2>/dev/null || true; wait "$CHILD" 2>/dev/null || true; fi
  # gpuadmit is the harness's child in its own session: stop it by its recorded pid if still there.
  if [[ -f $WORK/ga/gpuadmit.pid ]]; then
    pid=$(<"$WORK/ga/gpuadmit.pid")
    if [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$BIN" ]]; then kill -TERM "$pid" 2>/dev/null || true; fi
  fi
  if ((UP)); then
    if ((rc != 0 && rc != 1)) && [[ -d $GPUADMIT_E2E_STATE/logs ]]; then
      mkdir -p "$OUT/logs" && cp -r "$GPUADMIT_E2E_STATE/logs/." "$WORK/ga/"*.log "$OUT/logs/" 2>/dev/null || true
      log "component logs copied to $OUT/logs"
    fi
    "$ROOT/tests/e2e/cluster.sh" down >/dev/null 2>&1 || { log "WARNING: cluster.sh down failed; retrying"; "$ROOT/tests/e2e/cluster.sh" down || true; }
  fi
  [[ -d $GPUADMIT_E2E_STATE ]] || rm -rf "$WORK"
  log "done in $((SECONDS - T0))s (exit $rc)"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- tools: control plane and helm (cached; a cold build takes many minutes) --------------------------
log "building/reusing the control-plane binaries and helm"
bg_run 7200 "$ROOT/tests/e2e/build-tools.sh" >"$WORK/tools.env" || die "build-tools.sh failed"
bg_run 3600 "$ROOT/tests/chart/build-helm.sh" >"$WORK/helm.env" || die "build-helm.sh failed"
# shellcheck source=/dev/null
source "$WORK/tools.env"
# shellcheck source=/dev/null
source "$WORK/helm.env"

# --- one control plane with the controllers, no gpuadmit (the harness runs its own) -------------------
t=$SECONDS
UP=1
# The volume controllers too: the harness's provisioner (truth.py) makes PersistentVolumes pre-bound to
# claims, the binder binds them, the ephemeral-volume controller makes the claims of ephemeral volumes
# and the protection controllers let bound claims and volumes be deleted with their namespaces.
bg_run 600 env -u GPUADMIT_BIN GPUADMIT_E2E_CONTROLLERS=1 \
  GPUADMIT_E2E_EXTRA_CONTROLLERS=persistentvolume-binder-controller,ephemeral-volume-controller,persistentvolumeclaim-protection-controller,persistentvolume-protection-controller \
  "$ROOT/tests/e2e/cluster.sh" up >"$WORK/cluster.env" ||
  die "cluster.sh up failed"
# shellcheck source=/dev/null
source "$WORK/cluster.env"
KUBECTL=$GPUADMIT_E2E_KUBECTL
kc() { timeout -k 5 60 "$KUBECTL" "$@"; }
# Karpenter's NodePool CRD (the profiles' NodePools) is among those cluster.sh registers (tests/e2e/manifests/crds/).
log "control plane with kube-controller-manager up in $((SECONDS - t))s"

# --- the chart's webhook configurations, pointed at the local gpuadmit ----------------------------------
mkdir -p "$WORK/ga"
"$BIN" certs generate --ip 127.0.0.1 --dns localhost --out "$WORK/ga/webhook-certs" >"$WORK/ga/certs.log" 2>&1 ||
  die "gpuadmit certs generate failed: $(<"$WORK/ga/certs.log")"
for ((i = 0; i < 100; i++)); do
  TRUTH_WEBHOOK_PORT=$((20000 + RANDOM % 12000))
  (exec 3<>"/dev/tcp/127.0.0.1/$TRUTH_WEBHOOK_PORT") 2>/dev/null || break
done
export TRUTH_WEBHOOK_PORT
"$GPUADMIT_HELM" template gpuadmit "$ROOT/charts/gpuadmit" -n gpuadmit --show-only templates/webhooks.yaml \
  --set webhooks.url="https://127.0.0.1:$TRUTH_WEBHOOK_PORT" \
  --set certificates.helm.enabled=false --set certificates.existingSecret.name=truth \
  --set certificates.existingSecret.caBundle="$(base64 -w0 "$WORK/ga/webhook-certs/ca.crt")" \
  --set webhooks.mutate.failurePolicy=Fail --set webhooks.validate.failurePolicy=Fail \
  >"$WORK/ga/webhooks.yaml" || die "rendering the chart's webhooks failed"
kc apply -f "$WORK/ga/webhooks.yaml" >/dev/null || die "registering the chart's webhooks failed"
log "chart webhooks registered: https://127.0.0.1:$TRUTH_WEBHOOK_PORT (failurePolicy Fail; opt-out label gpuadmit.io/ignore)"

# --- the harness --------------------------------------------------------------------------------------
pol_args=()
for p in "${POLICIES[@]}"; do pol_args+=(--policy "$p"); done
rc=0
bg_run "$TOTAL_TIMEOUT" python3 "$HERE/lib/truth.py" --clusters "$CLUSTERS" --manifests "$MANIFESTS" \
  --out "$OUT" --gpuadmit "$BIN" --workdir "$WORK/ga" --parallel "$PARALLEL" --case-timeout "$CASE_TIMEOUT" \
  "${pol_args[@]}" "${EXTRA[@]}" || rc=$?
((rc != 124)) || log "ERROR: the harness did not finish within ${TOTAL_TIMEOUT}s"
log "results: $OUT/results.json, $OUT/matrix.md"
exit "$rc"
