# What the suites that run beside the cluster's gpuadmit or one of their own share (policy-objects.sh,
# client-auth.sh, audit.sh, why.sh, dra.sh, which source this file). They define SUITE (the name in the
# summary), HERE (tests/e2e), BIN, WORK (a scratch dir), PASSED/FAILED (0), OWN_CLUSTER (0) and log;
# attach_control_plane sets STATE and sources its cluster.env.

kc() { timeout -k 5 60 "$GPUADMIT_E2E_KUBECTL" "$@"; }

# check NAME CMD...: run CMD (output to a log), print PASS/FAIL with the time; on failure the log's tail.
check() {
  local name=$1 t0=$SECONDS rc=0; shift
  "$@" >"$WORK/check.log" 2>&1 || rc=$?
  if ((rc == 0)); then
    PASSED=$((PASSED + 1)); printf 'PASS  %-60s %3ss\n' "$name" $((SECONDS - t0))
  else
    FAILED=$((FAILED + 1)); printf 'FAIL  %-60s %3ss\n' "$name" $((SECONDS - t0))
    tail -n 40 "$WORK/check.log" | sed 's/^/      /'
  fi
  return "$rc"
}

summary() {
  echo "$SUITE: $PASSED passed, $FAILED failed"
  ((FAILED == 0))
}

# attach_control_plane OWN_STATE_DIR [CONTROLLERS]: the cluster named by GPUADMIT_E2E_STATE when one runs there
# (run.sh's, shared), else one of its own in OWN_STATE_DIR (OWN_CLUSTER=1: the caller's cleanup stops it), with
# kube-controller-manager when CONTROLLERS is 1 (default 0). Either way it must run gpuadmit (cluster.sh up
# with GPUADMIT_BIN). Exits with a FAIL line when there is none.
attach_control_plane() {
  local controllers=${2:-0}
  if [[ -n ${GPUADMIT_E2E_STATE:-} && -f $GPUADMIT_E2E_STATE/cluster.env ]]; then
    STATE=$GPUADMIT_E2E_STATE
    log "reusing the control plane of $STATE"
  else
    STATE=$1
    export GPUADMIT_E2E_STATE=$STATE
    log "starting a control plane of its own in $STATE"
    OWN_CLUSTER=1
    GPUADMIT_BIN=$BIN GPUADMIT_E2E_CONTROLLERS=$controllers "$HERE/cluster.sh" up >"$WORK/cluster.env" 2>"$WORK/cluster-up.log" ||
      { tail -n 30 "$WORK/cluster-up.log" >&2; echo "FAIL  setup: cluster.sh up"; FAILED=1; summary; exit 1; }
  fi
  # shellcheck source=/dev/null
  source "$STATE/cluster.env"
  export KUBECONFIG
  [[ -n ${GPUADMIT_E2E_WEBHOOK_URL:-} && -f $STATE/gpuadmit/webhooks.yaml ]] ||
    { echo "FAIL  setup: the cluster in $STATE runs without gpuadmit (cluster.sh up needs GPUADMIT_BIN)"; FAILED=1; summary; exit 1; }
}

# restore_webhooks: for the EXIT trap of a suite that turned the cluster's webhooks off (WEBHOOKS_WERE: what
# they were before; empty: never touched): back on if they were. Returns 1 when that fails.
restore_webhooks() {
  [[ ${WEBHOOKS_WERE:-} == on && $(cat "$STATE/gpuadmit/webhooks" 2>/dev/null) != on ]] || return 0
  if "$HERE/cluster.sh" webhooks on 2>"$WORK/restore.log"; then
    log "the cluster's webhook configurations are back"
  else
    log "WARNING: putting the cluster's webhooks back failed:"; cat "$WORK/restore.log" >&2; return 1
  fi
}

# standalone_finish RC, the end of a suite's EXIT trap: its own control plane stopped (OWN_CLUSTER), WORK kept
# with gpuadmit's log shown when RC is not 0 (else removed); exits with RC.
standalone_finish() {
  local rc=$1
  if ((OWN_CLUSTER)); then "$HERE/cluster.sh" down >/dev/null 2>&1 || log "WARNING: cluster.sh down failed"; fi
  if ((rc != 0)) && [[ -f $WORK/gpuadmit.log ]]; then
    log "gpuadmit's log (last 30 lines; all of it in $WORK/gpuadmit.log, kept):"
    tail -n 30 "$WORK/gpuadmit.log" >&2
  else
    rm -rf "$WORK"
  fi
  exit "$rc"
}
