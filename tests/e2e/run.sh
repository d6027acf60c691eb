#!/usr/bin/env bash
# gpuadmit end-to-end suite: a real kube-apiserver + kube-scheduler + kube-controller-manager on loopback (cluster.sh), the fake
# GPU nodes (fake-cluster.sh), `gpuadmit serve` registered as mutate.gpuadmit.io/validate.gpuadmit.io,
# then every scenario under scenarios/ and the overhead measurement (overhead.sh).
#
#   tests/e2e/run.sh GPUADMIT_BIN [SCENARIO...]      (make e2e: tests/e2e/run.sh build/release/src/cli/gpuadmit)
#
# stdout: one line per scenario (PASS/FAIL, name, seconds; a FAIL is followed by what differed), the
# overhead figures, and last, alone on its line: `e2e: N passed, M failed`. Exit status 0 iff M == 0.
# stderr: progress (tool build, cluster start, webhook state changes).
#
# Everything it starts is stopped on exit, on failure and on INT/TERM (trap -> cluster.sh down). On a
# failure the component logs are copied to $GPUADMIT_E2E_ARTIFACTS (default /tmp/gpuadmit-e2e-artifacts).
#
# Env: GPUADMIT_E2E_OVERHEAD=0 skips overhead.sh; GPUADMIT_E2E_POLICY_OBJECTS=0 skips policy-objects.sh;
# GPUADMIT_E2E_CLIENT_AUTH=0 skips client-auth.sh; GPUADMIT_E2E_AUDIT=0 skips audit.sh; GPUADMIT_E2E_WHY=0
# skips why.sh; GPUADMIT_E2E_DRA=0 skips dra.sh (all six run only when no scenario is named);
# GPUADMIT_E2E_OVERHEAD_N (default 200) pods per phase;
# GPUADMIT_E2E_CONTROLLERS (default 1) 1: the cluster runs kube-controller-manager (workloads create
# Pods), 0: not (scenarios with `needs=controllers` are then skipped);
# GPUADMIT_E2E_STATE (default: a new /tmp/gpuadmit-e2e-run.XXXXXX); GPUADMIT_E2E_WAIT (default 60)
# seconds a scenario may wait for the scheduler. Scenario format: tests/e2e/README.md.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SCENARIOS_DIR=${GPUADMIT_E2E_SCENARIOS_DIR:-$HERE/scenarios}
ARTIFACTS=${GPUADMIT_E2E_ARTIFACTS:-/tmp/gpuadmit-e2e-artifacts}
WAIT_DEFAULT=${GPUADMIT_E2E_WAIT:-60}
CLEANUP_TIMEOUT=30   # bound on removing a scenario's pods (controllers may re-create them until GC is done)
GPUADMIT_E2E_CONTROLLERS=${GPUADMIT_E2E_CONTROLLERS:-1}
[[ $GPUADMIT_E2E_CONTROLLERS == 0 || $GPUADMIT_E2E_CONTROLLERS == 1 ]] ||
  { echo "GPUADMIT_E2E_CONTROLLERS must be 0 or 1, not '$GPUADMIT_E2E_CONTROLLERS'" >&2; exit 2; }
export GPUADMIT_E2E_CONTROLLERS
KUBECTL_TIMEOUT=60   # bound on any single kubectl call (it has its own request timeouts too)

log() { printf '%s e2e: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 2; }

[[ $# -ge 1 ]] || { echo "usage: $0 GPUADMIT_BIN [SCENARIO...]" >&2; exit 2; }
[[ -f $1 && -x $1 ]] || die "$1 is not an executable (build it first: make build)"
GPUADMIT_BIN=$(readlink -f "$1"); shift
export GPUADMIT_BIN
ONLY=("$@")
if ((${#ONLY[@]})); then
  ALL=("${ONLY[@]%/}")
  for s in "${ALL[@]}"; do [[ -f $SCENARIOS_DIR/$s/expect ]] || die "no scenario $SCENARIOS_DIR/$s/expect"; done
else
  mapfile -t ALL < <(find "$SCENARIOS_DIR" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | LC_ALL=C sort)
fi
((${#ALL[@]})) || die "no scenarios in $SCENARIOS_DIR"

# --- lifetime ------------------------------------------------------------------------------------
# Long steps run in the background and are waited for: bash runs a trap only between commands, and
# `wait` returns as soon as a signal arrives, so INT/TERM are handled at once.
CHILD=
WORK=$(mktemp -d /tmp/gpuadmit-e2e-run.XXXXXX)   # scratch files; the cluster state goes in $WORK/state
GPUADMIT_E2E_STATE=${GPUADMIT_E2E_STATE:-$WORK/state}
export GPUADMIT_E2E_STATE
UP_STARTED=0
FAILED=0
PASSED=0
SKIPPED=0
STEP="start"          # what runs now, for the summary of an aborted run
SUMMARY_DONE=0
T_START=$SECONDS

# bg_run SECONDS CMD...: run CMD bounded by `timeout`, wait for it, return its status (redirect the
# call to capture its output: a $(...) would defer the trap until it ends). `timeout` puts the
# command in its own process group, so a terminal Ctrl-C reaches only this script, whose trap
# stops the command (TERM; KILL 30 s later).
bg_run() {
  local secs=$1 rc=0; shift
  timeout -k 30 "$secs" "$@" 3>&- 4>&- &
  CHILD=$!
  wait "$CHILD" || rc=$?
  CHILD=
  return "$rc"
}

# fd 3/4: the real stdout/stderr, for the trap (it may fire inside a redirected function call).
exec 3>&1 4>&2
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  exec 1>&3 2>&4
  if [[ -n $CHILD ]]; then
    kill -TERM "$CHILD" 2>/dev/null || true   # timeout passes TERM on; a cluster.sh up stops what it started
    wait "$CHILD" 2>/dev/null || true
  fi
  if ((UP_STARTED)); then
    if ((rc != 0 || FAILED != 0)) && [[ -d $GPUADMIT_E2E_STATE/logs ]]; then
      rm -rf "$ARTIFACTS" && mkdir -p "$ARTIFACTS" && cp -r "$GPUADMIT_E2E_STATE/logs/." "$ARTIFACTS/" &&
        log "component logs copied to $ARTIFACTS"
    fi
    "$HERE/cluster.sh" down >/dev/null 2>&1 || { log "WARNING: cluster.sh down failed; retrying"; "$HERE/cluster.sh" down || rc=1; }
  fi
  [[ -d $GPUADMIT_E2E_STATE ]] || rm -rf "$WORK"   # kept if down could not stop everything
  if ((rc == 130 || rc == 143)); then log "interrupted; everything stopped"; fi
  if ((!SUMMARY_DONE)); then
    # Aborted (set-up failure or signal): still end with the summary line, counting the aborted step.
    ((rc != 0)) || rc=1
    printf 'FAIL  %-52s (aborted, exit %s)\n' "$STEP" "$rc"
    echo "e2e: $PASSED passed, $((FAILED + 1)) failed"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- control plane -------------------------------------------------------------------------------
log "building/reusing the control-plane binaries (a cold build takes minutes; progress below)"
t0=$SECONDS
STEP=build-tools
bg_run 7200 "$HERE/build-tools.sh" >"$WORK/tools.env" || die "build-tools.sh failed"
# shellcheck source=/dev/null
source "$WORK/tools.env"
KUBECTL_BIN=$GPUADMIT_E2E_K8S_BIN/kubectl
log "control-plane binaries ready after $((SECONDS - t0))s"

unset GPUADMIT_E2E_POLICY GPUADMIT_E2E_FAILURE_POLICY   # the suite's baseline: embedded policy, Fail
t0=$SECONDS
UP_STARTED=1
STEP=cluster-up
log "kube-controller-manager: $( ((GPUADMIT_E2E_CONTROLLERS)) && echo on || echo 'off (GPUADMIT_E2E_CONTROLLERS=0)')"
bg_run 600 "$HERE/cluster.sh" up >"$WORK/cluster.env" || die "cluster.sh up failed"
# shellcheck source=/dev/null
source "$WORK/cluster.env"
STEP=fake-nodes
bg_run 120 "$HERE/fake-cluster.sh" nodes || die "creating the fake nodes failed"
log "cluster with gpuadmit up in $((SECONDS - t0))s"

# gpuadmit's cluster view must hold the fake nodes and the storage class before a scenario relies on
# them: read its /metrics until it does (the watch takes well under a second; bounded).
STEP=cluster-view
cluster_view_objects() {
  curl -fsS --max-time 2 --cacert "$GPUADMIT_E2E_STATE/webhook-certs/ca.crt" "$GPUADMIT_E2E_WEBHOOK_URL/metrics" 2>/dev/null |
    awk '$1 == "gpuadmit_cluster_objects{kind=\"nodes\"}" {n=$2} $1 == "gpuadmit_cluster_objects{kind=\"storageclasses\"}" {s=$2} END {print n "/" s}'
}
want_view="$("$KUBECTL_BIN" get nodes -o name | wc -l)/$("$KUBECTL_BIN" get storageclasses -o name | wc -l)"
t0=$SECONDS
until [[ $(cluster_view_objects) == "$want_view" ]]; do
  ((SECONDS - t0 < 30)) || die "gpuadmit's cluster view has nodes/storageclasses $(cluster_view_objects), want $want_view"
  sleep 0.2
done
log "gpuadmit's cluster view has the nodes/storageclasses: $want_view"

# kq ARGS: kubectl, bounded, output captured by the caller.
kq() { timeout -k 5 "$KUBECTL_TIMEOUT" "$KUBECTL_BIN" "$@" 3>&- 4>&-; }

# --- suite state (what the scenarios' `setup=` changes) -----------------------------------------
# Baseline: webhooks on, gpuadmit running with the embedded policy, failurePolicy Fail. A scenario
# states only what differs; the next scenario puts back what it does not state.
CUR_WEBHOOKS=on CUR_GPUADMIT=running CUR_FP=Fail CUR_POLICY=

# apply_setup DIR SETUP-WORDS: bring the cluster to the wanted state; each cluster.sh call returns
# once a server-side dry run shows the change took effect.
apply_setup() {
  local dir=$1 words=$2 w k v
  local webhooks=on gpuadmit=running fp=Fail policy=
  for w in $words; do
    k=${w%%=*} v=${w#*=}
    case $k in
      webhooks) [[ $v == on || $v == off ]] || { echo "setup: webhooks=$v (want on|off)"; return 1; }; webhooks=$v ;;
      gpuadmit) [[ $v == running || $v == stopped ]] || { echo "setup: gpuadmit=$v (want running|stopped)"; return 1; }; gpuadmit=$v ;;
      failurePolicy) [[ $v == Fail || $v == Ignore ]] || { echo "setup: failurePolicy=$v (want Fail|Ignore)"; return 1; }; fp=$v ;;
      policy) policy=$(readlink -f "$dir/$v"); [[ -f $policy ]] || { echo "setup: policy file $dir/$v not found"; return 1; } ;;
      *) echo "setup: unknown setting '$w'"; return 1 ;;
    esac
  done
  # Order: the server first (a policy change needs a restart), then the configurations.
  if [[ $gpuadmit == stopped && $CUR_GPUADMIT == running ]]; then
    cluster_cmd gpuadmit stop || return 1
  elif [[ $gpuadmit == running && ($CUR_GPUADMIT == stopped || $policy != "$CUR_POLICY") ]]; then
    cluster_cmd gpuadmit restart "$policy" || return 1
    CUR_POLICY=$policy
  fi
  CUR_GPUADMIT=$gpuadmit
  if [[ $fp != "$CUR_FP" ]]; then
    cluster_cmd failure-policy "$fp" || return 1
    CUR_FP=$fp
  fi
  if [[ $webhooks != "$CUR_WEBHOOKS" ]]; then
    cluster_cmd webhooks "$webhooks" || return 1
    CUR_WEBHOOKS=$webhooks
  fi
  return 0
}

# cluster_cmd ARGS: cluster.sh ARGS; its log goes to stderr (progress), and on failure also to stdout.
cluster_cmd() {
  bg_run 120 "$HERE/cluster.sh" "$@" 2>"$WORK/cluster-cmd.log" && { cat "$WORK/cluster-cmd.log" >&2; return 0; }
  cat "$WORK/cluster-cmd.log"
  return 1
}

# split_expect LINE: set EK (key or jsonpath), EOP (= ~= != !~=) and EV (value). The operator is the
# first one outside [...] and (...), so jsonpath filters like [?(@.type=="Ready")] stay in the key.
split_expect() {
  local s=$1 i c depth=0
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in
      '[' | '(') depth=$((depth + 1)) ;;
      ']' | ')') depth=$((depth - 1)) ;;
      '!' | '~' | '=')
        ((depth == 0)) || continue
        if [[ ${s:i:3} == '!~=' ]]; then EOP='!~='
        elif [[ ${s:i:2} == '~=' || ${s:i:2} == '!=' ]]; then EOP=${s:i:2}
        elif [[ $c == '=' ]]; then EOP='='
        else continue
        fi
        EK=${s:0:i} EV=${s:i+${#EOP}}
        return 0
        ;;
    esac
  done
  return 1
}

# match OP VALUE ACTUAL: = equal, ~= ERE matches, != differs, !~= ERE does not match.
match() {
  case $1 in
    '=') [[ $3 == "$2" ]] ;;
    '~=') [[ $3 =~ $2 ]] ;;
    '!=') [[ $3 != "$2" ]] ;;
    '!~=') ! [[ $3 =~ $2 ]] ;;
  esac
}

# lines_match OP VALUE TEXT: = some line equals VALUE; ~= some line matches; !~= no line matches;
# != no line equals.
lines_match() {
  local op=$1 want=$2 line found=1
  while IFS= read -r line; do
    case $op in
      '=' | '!=') [[ $line == "$want" ]] && { found=0; break; } ;;
      '~=' | '!~=') [[ $line =~ $want ]] && { found=0; break; } ;;
    esac
  done <<<"$3"
  case $op in '=' | '~=') return "$found" ;; *) ((found != 0)) ;; esac
}

# pod_condition NS: "status reason" of PodScheduled for the manifest's object ("" if none yet).
scheduled_condition() {
  kq get -n "$1" -f manifest.yaml \
    -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}{" "}{.status.conditions[?(@.type=="PodScheduled")].reason}' 2>/dev/null
}

# pods_ready N WANT STATE: STATE ("name status" lines) has at least N pods and, if WANT is set, each
# has PodScheduled=WANT; and exactly N once WANT is reached.
pods_ready() {
  local n=$1 want=$2 st=$3 count bad
  count=$(awk 'NF' <<<"$st" | wc -l)
  ((count >= n)) || return 1
  if [[ -n $want ]]; then
    bad=$(awk -v w="$want" 'NF && $2 != w' <<<"$st" | wc -l)
    ((bad == 0)) || return 1
  fi
  ((count == n))
}

# --- one scenario --------------------------------------------------------------------------------
# run_scenario DIR: prints PASS/FAIL line (and details) to stdout.
run_scenario() {
  local dir=$1 name t0=$SECONDS
  name=$(basename "$dir")
  STEP=$name
  cd "$dir"   # kubectl names the file "manifest.yaml" in its messages
  local -a problems=() checks=() before=()
  local about="" setup="" ns="" cmd="create -f manifest.yaml" want_exit=0 wait_for="" wait_secs=$WAIT_DEFAULT stored=""
  local needs="" pods_sel="" pods_n=1
  local -a pod_checks=()
  local line
  [[ -f $dir/expect ]] || problems+=("missing expect")
  [[ -f $dir/manifest.yaml ]] || problems+=("missing manifest.yaml")
  while IFS= read -r line || [[ -n $line ]]; do
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    split_expect "$line" || { problems+=("expect: cannot parse '$line'"); continue; }
    case $EK in
      about) about=$EV ;;
      setup) setup+=" $EV" ;;
      namespace) ns=$EV ;;
      kubectl) cmd=$EV ;;
      before) before+=("$EV") ;;
      exit) want_exit=$EV ;;
      wait) wait_for=${EV%% *}; [[ $EV == *' '* ]] && wait_secs=${EV#* } ;;
      stored) stored=$EV ;;
      needs) needs=$EV ;;
      pods) pods_sel=${EV%% *}; [[ $EV == *' '* ]] && pods_n=${EV#* } ;;
      pod.*) pod_checks+=("$line") ;;
      stdout | stderr | .*) checks+=("$line") ;;
      *) problems+=("expect: unknown key '$EK'") ;;
    esac
  done < <(cat "$dir/expect" 2>/dev/null)
  [[ $want_exit =~ ^[0-9]+$ ]] || problems+=("expect: exit=$want_exit is not a number")
  [[ $wait_secs =~ ^[0-9]+$ ]] || problems+=("expect: wait seconds '$wait_secs' is not a number")
  [[ -z $stored || $stored == yes || $stored == no ]] || problems+=("expect: stored=$stored (want yes|no)")
  [[ -z $needs || $needs == controllers ]] || problems+=("expect: needs=$needs (want controllers)")
  [[ $pods_n =~ ^[0-9]+$ ]] || problems+=("expect: pods count '$pods_n' is not a number")
  ((${#pod_checks[@]} == 0)) || [[ -n $pods_sel ]] || problems+=("expect: pod.* checks need pods=SELECTOR")
  if [[ $needs == controllers ]] && ((!GPUADMIT_E2E_CONTROLLERS)) && ((${#problems[@]} == 0)); then
    SKIPPED=$((SKIPPED + 1))
    printf 'SKIP  %-52s (needs kube-controller-manager: GPUADMIT_E2E_CONTROLLERS=1)\n' "$name"
    return 0
  fi
  local dry_run=0
  [[ " $cmd " == *" --dry-run=server "* ]] && dry_run=1
  [[ -n $stored ]] || { if ((want_exit == 0 && !dry_run)); then stored=yes; else stored=no; fi; }

  local made_ns=0 out="" err="" rc=0 ran=0
  if ((${#problems[@]} == 0)); then
    apply_setup "$dir" "$setup" >"$WORK/setup.log" || problems+=("setup '${setup# }' failed: $(<"$WORK/setup.log")")
  fi
  if ((${#problems[@]} == 0)); then
    if [[ -z $ns ]]; then
      ns=e2e-$name
      ns=${ns:0:57}-$(printf '%04x' $((RANDOM % 65536)))
    fi
    if ! kq get namespace "$ns" >/dev/null 2>&1; then
      kq create namespace "$ns" >/dev/null 2>&1 && made_ns=1 || problems+=("cannot create namespace $ns")
    fi
  fi
  local b
  for b in "${before[@]}"; do
    ((${#problems[@]} == 0)) || break
    local -a bargv
    read -r -a bargv <<<"$b"
    bg_run "$KUBECTL_TIMEOUT" "$KUBECTL_BIN" -n "$ns" "${bargv[@]}" >"$WORK/out" 2>&1 ||
      problems+=("before: kubectl $b failed: $(<"$WORK/out")")
  done
  if ((${#problems[@]} == 0)); then
    local -a argv
    read -r -a argv <<<"$cmd"
    bg_run "$KUBECTL_TIMEOUT" "$KUBECTL_BIN" -n "$ns" "${argv[@]}" >"$WORK/out" 2>"$WORK/err" || rc=$?
    out=$(<"$WORK/out") err=$(<"$WORK/err") ran=1
    [[ $rc == "$want_exit" ]] || problems+=("kubectl exit $rc, want $want_exit")

    # Pods made by the controllers (pods=SELECTOR N): wait until there are N, and, with wait=, until the
    # scheduler has decided on each; then there must be exactly N (a controller that keeps making
    # pods, e.g. a Deployment fighting over its ReplicaSet's template, shows up here).
    local -a pod_names=()
    if [[ -n $pods_sel ]]; then
      local want_ps="" pstate="" start=$SECONDS
      case $wait_for in
        scheduled) want_ps=True ;;
        unschedulable) want_ps=False ;;
        "") ;;
        *) problems+=("expect: wait=$wait_for (want scheduled|unschedulable)") ;;
      esac
      while :; do
        pstate=$(kq get pods -n "$ns" -l "$pods_sel" \
          -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="PodScheduled")].status}{"\n"}{end}' 2>/dev/null) || pstate=""
        pods_ready "$pods_n" "$want_ps" "$pstate" && break
        ((SECONDS - start < wait_secs)) || break
        sleep 0.3
      done
      mapfile -t pod_names < <(awk 'NF {print $1}' <<<"$pstate")
      if ! pods_ready "$pods_n" "$want_ps" "$pstate"; then
        problems+=("pods -l $pods_sel: want $pods_n${want_ps:+ with PodScheduled=$want_ps} within ${wait_secs}s, got: $(tr '\n' ';' <<<"$pstate")")
      fi
      wait_for=""   # the manifest's own object (a workload) has no PodScheduled condition
    fi

    # Wait for the scheduler's verdict (bounded poll).
    if [[ -n $wait_for ]]; then
      local want_status cond="" start=$SECONDS
      case $wait_for in
        scheduled) want_status=True ;;
        unschedulable) want_status=False ;;
        *) problems+=("expect: wait=$wait_for (want scheduled|unschedulable)") ;;
      esac
      if [[ -n ${want_status:-} ]]; then
        while ((SECONDS - start < wait_secs)); do
          cond=$(scheduled_condition "$ns") || true
          [[ ${cond%% *} == "$want_status" ]] && break
          sleep 0.3
        done
        [[ ${cond%% *} == "$want_status" ]] ||
          problems+=("not $wait_for within ${wait_secs}s (PodScheduled: '${cond:-none}')")
      fi
    fi

    # Stored or not.
    local got_stored=no
    kq get -n "$ns" -f manifest.yaml -o name >/dev/null 2>&1 && got_stored=yes
    [[ $got_stored == "$stored" ]] || problems+=("object stored: $got_stored, want $stored")

    # Output lines and fields.
    local c actual
    for c in "${checks[@]}"; do
      split_expect "$c"
      case $EK in
        stdout | stderr)
          [[ $EK == stdout ]] && actual=$out || actual=$err
          if ! lines_match "$EOP" "$EV" "$actual"; then
            case $EOP in
              '=') problems+=("$EK: no line is '$EV'") ;;
              '~=') problems+=("$EK: no line matches '$EV'") ;;
              *) problems+=("$EK: a line $([[ $EOP == '!=' ]] && echo is || echo matches) '$EV' (want none)") ;;
            esac
          fi
          ;;
        *)
          if ((dry_run)); then
            # Nothing is stored: ask the API server again, as a dry run.
            actual=$(kq -n "$ns" create --dry-run=server -f manifest.yaml -o "jsonpath={$EK}" 2>"$WORK/field.err") ||
              actual="<error: $(<"$WORK/field.err")>"
          elif [[ $got_stored == yes ]]; then
            actual=$(kq -n "$ns" get -f manifest.yaml -o "jsonpath={$EK}" 2>"$WORK/field.err") ||
              actual="<error: $(<"$WORK/field.err")>"
          else
            actual="<no stored object>"
          fi
          match "$EOP" "$EV" "$actual" || problems+=("$EK: '$actual', want $EOP '$EV'")
          ;;
      esac
    done
    # pod.JSONPATH checks: on every pod found above.
    local pn
    for c in "${pod_checks[@]}"; do
      split_expect "$c"
      ((${#pod_names[@]})) || { problems+=("$EK: no pod -l $pods_sel"); continue; }
      for pn in "${pod_names[@]}"; do
        actual=$(kq -n "$ns" get pod "$pn" -o "jsonpath={${EK#pod}}" 2>"$WORK/field.err") ||
          actual="<error: $(<"$WORK/field.err")>"
        match "$EOP" "$EV" "$actual" || problems+=("pod $pn: ${EK#pod}: '$actual', want $EOP '$EV'")
      done
    done
  fi

  # Clean up: pods bound to fake nodes need a forced delete (no kubelet confirms a graceful one, and
  # a pod left Terminating still holds its node's GPUs for the scheduler). With the controllers, the
  # garbage collector deletes a workload's pods gracefully, and a ReplicaSet or Job may still create
  # one until the collector has deleted it: force-delete the namespace's pods until neither pods nor
  # pod-making objects are left (bounded). The namespace controller (if running) removes the rest.
  if [[ -n $ns ]]; then
    kq -n "$ns" delete -f manifest.yaml --ignore-not-found --force --grace-period=0 --wait=false >/dev/null 2>&1 || true
    if ((made_ns && GPUADMIT_E2E_CONTROLLERS)); then
      local left start=$SECONDS
      while left=$(kq get -n "$ns" pods,replicasets,jobs,statefulsets,daemonsets -o name 2>/dev/null) && [[ -n $left ]]; do
        if ((SECONDS - start >= CLEANUP_TIMEOUT)); then
          log "WARNING: $name: still left in $ns after ${CLEANUP_TIMEOUT}s: ${left//$'\n'/ }"
          break
        fi
        kq -n "$ns" delete pods --all --force --grace-period=0 --wait=false >/dev/null 2>&1 || true
        sleep 0.3
      done
    fi
    if ((made_ns)); then kq delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; fi
  fi

  local secs=$((SECONDS - t0))
  if ((${#problems[@]} == 0)); then
    PASSED=$((PASSED + 1))
    printf 'PASS  %-52s %3ss\n' "$name" "$secs"
  else
    FAILED=$((FAILED + 1))
    printf 'FAIL  %-52s %3ss\n' "$name" "$secs"
    [[ -z $about ]] || printf '      about: %s\n' "$about"
    local p
    for p in "${problems[@]}"; do printf '      - %s\n' "${p//$'\n'/$'\n'        }"; done
    if ((ran)); then
      printf '      kubectl -n %s %s -> exit %s\n' "$ns" "$cmd" "$rc"
      [[ -z $out ]] || printf '      stdout: %s\n' "${out//$'\n'/$'\n'              }"
      [[ -z $err ]] || printf '      stderr: %s\n' "${err//$'\n'/$'\n'              }"
    fi
  fi
}

# --- scenarios -----------------------------------------------------------------------------------
log "running ${#ALL[@]} scenarios"
t_scen=$SECONDS
for s in "${ALL[@]}"; do
  run_scenario "$SCENARIOS_DIR/$s"
done
log "scenarios took $((SECONDS - t_scen))s"

# Back to the baseline for the overhead measurement.
STEP=restore-baseline
if ! apply_setup "$SCENARIOS_DIR" "" >"$WORK/restore.log"; then
  FAILED=$((FAILED + 1))
  echo "FAIL  restore-baseline"
  sed 's/^/      /' "$WORK/restore.log"
fi

# --- overhead ------------------------------------------------------------------------------------
if [[ ${GPUADMIT_E2E_OVERHEAD:-1} != 0 && ${#ONLY[@]} == 0 ]]; then
  STEP=overhead
  if bg_run 900 "$HERE/overhead.sh"; then
    PASSED=$((PASSED + 1))
  else
    FAILED=$((FAILED + 1))
    echo "FAIL  overhead (see above)"
  fi
fi

# --- policy objects -------------------------------------------------------------------------------
# ClusterGPUPolicy/GPUPolicy on this cluster (policy-objects.sh: its own `serve --policy-objects`, the webhook
# configurations pointed at it meanwhile and put back after; about 10 s), after the overhead so that nothing
# it leaves behind (CRDs being deleted) is measured. Like the overhead, one item, and only in a full run;
# GPUADMIT_E2E_POLICY_OBJECTS=0 skips it.
if [[ ${GPUADMIT_E2E_POLICY_OBJECTS:-1} != 0 && ${#ONLY[@]} == 0 ]]; then
  STEP="policy-objects"
  if bg_run 600 "$HERE/policy-objects.sh" "$GPUADMIT_BIN"; then
    PASSED=$((PASSED + 1))
  else
    FAILED=$((FAILED + 1))
    echo "FAIL  policy-objects (see above)"
  fi
fi

# --- client authentication ------------------------------------------------------------------------------
# gpuadmit serve --client-ca-file and --metrics-listen on this cluster (client-auth.sh: its own server trusting
# the webhook client CA that kube-apiserver presents a certificate of, the webhook configurations pointed at
# it meanwhile and put back after; about 20 s). Like the two above, one item, and only in a full run;
# GPUADMIT_E2E_CLIENT_AUTH=0 skips it.
if [[ ${GPUADMIT_E2E_CLIENT_AUTH:-1} != 0 && ${#ONLY[@]} == 0 ]]; then
  STEP="client-auth"
  if bg_run 300 "$HERE/client-auth.sh" "$GPUADMIT_BIN"; then
    PASSED=$((PASSED + 1))
  else
    FAILED=$((FAILED + 1))
    echo "FAIL  client-auth (see above)"
  fi
fi

# --- audit ---------------------------------------------------------------------------------------------
# gpuadmit audit on this cluster (audit.sh: the webhook configurations removed meanwhile and put back after,
# pods and a Deployment created without them in a namespace of its own, then `gpuadmit audit --kubeconfig`
# over it; about 10 s). Like the three above, one item, and only in a full run; GPUADMIT_E2E_AUDIT=0 skips it.
if [[ ${GPUADMIT_E2E_AUDIT:-1} != 0 && ${#ONLY[@]} == 0 ]]; then
  STEP="audit"
  if bg_run 300 "$HERE/audit.sh" "$GPUADMIT_BIN"; then
    PASSED=$((PASSED + 1))
  else
    FAILED=$((FAILED + 1))
    echo "FAIL  audit (see above)"
  fi
fi

# --- why -----------------------------------------------------------------------------------------------
# gpuadmit why on this cluster (why.sh: the webhook configurations removed while it creates stuck and killed
# GPU pods, a quota-refused Job and a Deployment in a namespace of its own, put back for the Deployment's
# denial; `gpuadmit why --kubeconfig` on each, and as `kubectl gpuadmit why`; about 15 s). Like the four above,
# one item, and only in a full run; GPUADMIT_E2E_WHY=0 skips it.
if [[ ${GPUADMIT_E2E_WHY:-1} != 0 && ${#ONLY[@]} == 0 ]]; then
  STEP="why"
  if bg_run 300 "$HERE/why.sh" "$GPUADMIT_BIN"; then
    PASSED=$((PASSED + 1))
  else
    FAILED=$((FAILED + 1))
    echo "FAIL  why (see above)"
  fi
fi

# --- dra -----------------------------------------------------------------------------------------------
# DRA on this cluster (dra.sh: the fake DRA nodes, DeviceClasses and ResourceSlices of dra/ added, each silent DRA
# failure created with the webhook configurations removed and the scheduler's and controllers' words checked, then
# again with gpuadmit, its verdicts checked; everything it added deleted on exit; about 15-20 s). Last: while its
# DeviceClass maps nvidia.com/gpu (KEP-5004) a plain GPU pod could land on a DRA node. It needs the resourceclaim
# controller (kube-controller-manager): with GPUADMIT_E2E_CONTROLLERS=0 it is skipped. Like the five above, one item,
# and only in a full run; GPUADMIT_E2E_DRA=0 skips it.
if [[ ${GPUADMIT_E2E_DRA:-1} != 0 && ${#ONLY[@]} == 0 ]]; then
  STEP="dra"
  if ((!GPUADMIT_E2E_CONTROLLERS)); then
    SKIPPED=$((SKIPPED + 1))
    printf 'SKIP  %-52s (needs kube-controller-manager: GPUADMIT_E2E_CONTROLLERS=1)\n' dra
  elif bg_run 300 "$HERE/dra.sh" "$GPUADMIT_BIN"; then
    PASSED=$((PASSED + 1))
  else
    FAILED=$((FAILED + 1))
    echo "FAIL  dra (see above)"
  fi
fi

log "suite took $((SECONDS - T_START))s (cluster start included)"
SUMMARY_DONE=1
echo "e2e: $PASSED passed, $FAILED failed$( ((SKIPPED)) && echo ", $SKIPPED skipped")"
((FAILED == 0))
