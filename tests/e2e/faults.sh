#!/usr/bin/env bash
# Faults on the real control plane while pods are created (docs/reliability.md has the table it prints).
#
#   tests/e2e/faults.sh GPUADMIT_BIN        (make faults)
#
# Its own control plane (cluster.sh up, state in $GPUADMIT_E2E_STATE, default /tmp/gpuadmit-faults), with
# two `gpuadmit serve` replicas behind tools/balancer (a Service's two endpoints: new connections go to
# replicas whose /readyz answers 200) and both webhooks at the balancer, failurePolicy Fail, each replica
# watching the cluster. For each fault, CLIENTS curl processes create pods at RATE each through the API
# server for SECONDS; the fault is injected a few seconds in. Nine of ten pods ask for a GPU without a
# toleration (gpuadmit must add it), one for half a GPU (gpuadmit must deny it, 403). Counted per fault:
#   failed  a create that did not get its answer: not 201 for the GPU pods, not 403 for the half GPU
#           (a webhook the API server could not call is a 500 under Fail);
#   wrong   a GPU pod stored without gpuadmit's toleration, or the half GPU refused by the API server's
#           own validation (422) instead of gpuadmit: a fix or a denial skipped.
# Faults: a rolling restart (SIGTERM, drain, start again; one replica, then the other), the serving
# certificate rotated to a new CA mid-load (caBundle carrying both first, as a rotation must), a broken
# policy written mid-load (the replicas must keep the old one and say so), a replica restarted on that
# broken policy (live, kept out of the balancer until the file is fixed, never on another policy), the API server unreachable from
# the replicas for 60 s (their kubeconfig goes through a proxy that holds every byte), kube-apiserver
# restarted (the watches break; the recovery time of the replicas' views), etcd restarted, and hostile
# clients at both replicas (tools/hostile: idle TLS connections, slowloris headers and bodies, each
# reconnecting when closed; bodies over the limit, deeply nested JSON), clients that hold answered
# connections past the cap (tools/hostile -mode answered), and a tenant's costly DRA claims beside the load
# (hostile_claims.py: the templates the API server accepts, on a fleet of DRA nodes). Each row also gives the creates' latency (p50 / p99); the
# "none" row is the baseline.
#
# Env: FAULTS_SECONDS (default 30), FAULTS_CLIENTS (4), FAULTS_RATE (per client and second, 10),
# FAULTS_ONLY (space-separated fault names to run: none rolling-restart cert-rotation broken-policy
# restart-on-broken-policy partition slow-clients answered-clients hostile-claim apiserver-restart
# etcd-restart), FAULTS_SLOW_CLIENTS (hostile connections per replica, 5000: 10,000 in all, against the
# default --max-connections of 512 each), FAULTS_ANSWERED_CLIENTS
# (connections per replica that ask GET /healthz once and then hold it idle, 600), FAULTS_HOSTILE_NODES (40),
# FAULTS_HOSTILE_DEVICES (GPUs per node, 64) and FAULTS_HOSTILE_RATE (hostile pods per second, 2).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=$(readlink -f "${1:?usage: faults.sh GPUADMIT_BIN}")
export GPUADMIT_E2E_STATE=${GPUADMIT_E2E_STATE:-/tmp/gpuadmit-faults}
STATE=$GPUADMIT_E2E_STATE
SECS=${FAULTS_SECONDS:-30}
CLIENTS=${FAULTS_CLIENTS:-4}
RATE=${FAULTS_RATE:-10}
ONLY=${FAULTS_ONLY:-none rolling-restart cert-rotation broken-policy restart-on-broken-policy partition slow-clients answered-clients hostile-claim apiserver-restart etcd-restart}
SLOW_CLIENTS=${FAULTS_SLOW_CLIENTS:-5000}
ANSWERED_CLIENTS=${FAULTS_ANSWERED_CLIENTS:-600}
HOSTILE_NODES=${FAULTS_HOSTILE_NODES:-40}
HOSTILE_DEVICES=${FAULTS_HOSTILE_DEVICES:-64}
HOSTILE_RATE=${FAULTS_HOSTILE_RATE:-2}
[[ $SECS =~ ^[1-9][0-9]*$ && $CLIENTS =~ ^[1-9][0-9]*$ && $RATE =~ ^[1-9][0-9]*$ ]] ||
  { echo "faults: FAULTS_SECONDS, FAULTS_CLIENTS and FAULTS_RATE must be whole numbers" >&2; exit 2; }

log() { printf '%s faults: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

WORK=$(mktemp -d /tmp/gpuadmit-faults-work.XXXXXX)
PIDS=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${REPLICA_PID[@]:-}"; do [[ -z $p ]] || kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$HERE/cluster.sh" down >/dev/null 2>&1 || true
  if ((rc != 0)); then log "work dir kept: $WORK"; else rm -rf "$WORK"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "control plane (cluster.sh up)"
envs=$(GPUADMIT_BIN=$BIN "$HERE/cluster.sh" up) || die "cluster.sh up failed"
eval "$envs"
kc() { timeout -k 5 60 "$GPUADMIT_E2E_KUBECTL" --kubeconfig "$STATE/admin.kubeconfig" "$@"; }
"$HERE/cluster.sh" gpuadmit stop >/dev/null 2>&1 || true   # its single replica: ours take over

# --- two replicas behind the balancer ---------------------------------------------------------
CERTS=$WORK/certs
mkdir -p "$CERTS"
cp "$STATE/webhook-certs/"{ca.crt,tls.crt,tls.key} "$CERTS/"
cp "$CERTS/ca.crt" "$CERTS/trust.pem"   # what this script's own probes trust: the old CA, and the new one once rotated
cp "$(dirname "$HERE")/../src/config/default_policy.yaml" "$WORK/policy.yaml"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=("$(free_port)" "$(free_port)")
REPLICA_PID=("" "")

# launch_replica I: starts replica I, without waiting for anything.
launch_replica() {
  "$BIN" serve --listen "127.0.0.1:${PORT[$1]}" --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
    --policy "$WORK/policy.yaml" --drain-seconds 5 --kubeconfig "$WORK/via-proxy.kubeconfig" \
    >>"$WORK/replica-$1.log" 2>&1 &
  REPLICA_PID[$1]=$!
}
start_replica() {
  local i=$1 t
  launch_replica "$i"
  for ((t = 0; t < 300; t++)); do
    curl -fsS --max-time 1 --cacert "$CERTS/trust.pem" "https://127.0.0.1:${PORT[$i]}/readyz" >/dev/null 2>&1 && return 0
    kill -0 "${REPLICA_PID[$i]}" 2>/dev/null || die "replica $i exited: $(tail -3 "$WORK/replica-$i.log")"
    sleep 0.1
  done
  die "replica $i not ready within 30s"
}
# stop_replica I: SIGTERM and wait for it to drain and exit, as a pod's termination does.
stop_replica() {
  local i=$1
  kill -TERM "${REPLICA_PID[$i]}"
  wait "${REPLICA_PID[$i]}" || die "replica $i exited non-zero after SIGTERM"
  REPLICA_PID[i]=""
}
metric() {   # metric I NAME_AND_LABELS: the value on replica I's /metrics (0 when absent)
  curl -fsS --max-time 2 --cacert "$CERTS/trust.pem" "https://127.0.0.1:${PORT[$1]}/metrics" |
    awk -v m="$2" '$1 == m { print $2; found = 1 } END { if (!found) print 0 }'
}

for tool in balancer hostile; do
  (cd "$HERE/tools/$tool" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -o "$WORK/$tool" .) || die "building tools/$tool failed"
done
# start_balancer NAME ARGS...: the address it listens on goes to $WORK/NAME.addr. Called in this shell,
# not in $(...), so that its pid is recorded for the cleanup.
start_balancer() {
  local name=$1 t addr=""
  shift
  : >"$WORK/$name.log" # before the child opens it: the loop below may read it first
  "$WORK/balancer" "$@" >>"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  for ((t = 0; t < 50; t++)); do
    addr=$(sed -n '1s/^listening //p' "$WORK/$name.log")
    [[ -z $addr ]] || break
    sleep 0.1
  done
  [[ -n $addr ]] || die "$name did not start: $(cat "$WORK/$name.log")"
  echo "$addr" >"$WORK/$name.addr"
}
# The replicas reach the API server through a plain proxy that the partition fault pauses.
start_balancer apiproxy -plain -pause "$WORK/partition" -backends "127.0.0.1:$GPUADMIT_E2E_API_PORT"
APIPROXY=$(cat "$WORK/apiproxy.addr")
sed "s|server: https://127.0.0.1:$GPUADMIT_E2E_API_PORT|server: https://$APIPROXY|" "$STATE/admin.kubeconfig" >"$WORK/via-proxy.kubeconfig"
grep -q "server: https://$APIPROXY" "$WORK/via-proxy.kubeconfig" || die "cannot point the replicas' kubeconfig at the proxy"
start_replica 0
start_replica 1
start_balancer balancer -backends "127.0.0.1:${PORT[0]},127.0.0.1:${PORT[1]}"
LB=$(cat "$WORK/balancer.addr")
CA_BUNDLE=$(base64 -w0 "$CERTS/ca.crt")
point_webhooks() {   # point_webhooks CA_BUNDLE: both configurations at the balancer, with that caBundle
  sed -e "s|$GPUADMIT_E2E_WEBHOOK_URL/|https://$LB/|g" -e "s|caBundle: .*|caBundle: $1|" \
    "$STATE/gpuadmit/webhooks.yaml" >"$WORK/webhooks.yaml"
  grep -q "https://$LB/mutate" "$WORK/webhooks.yaml" || die "cannot point the webhooks at the balancer"
  kc apply -f "$WORK/webhooks.yaml" >/dev/null
}
point_webhooks "$CA_BUNDLE"
log "replicas on ${PORT[*]}, balancer $LB; $CLIENTS clients x $RATE creates/s for ${SECS}s per fault"

# --- the load --------------------------------------------------------------------------------
cat >"$WORK/gpu.json" <<'JSON'
{"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "gpu-"},
 "spec": {"schedulerName": "gpuadmit-faults-nobody", "terminationGracePeriodSeconds": 0,
          "containers": [{"name": "train", "image": "registry.invalid/train:1",
                          "resources": {"limits": {"nvidia.com/gpu": "1", "cpu": "4", "memory": "16Gi"}}}]}}
JSON
cat >"$WORK/half.json" <<'JSON'
{"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "half-"},
 "spec": {"schedulerName": "gpuadmit-faults-nobody", "terminationGracePeriodSeconds": 0,
          "containers": [{"name": "train", "image": "registry.invalid/train:1",
                          "resources": {"limits": {"nvidia.com/gpu": "0.5"}}}]}}
JSON
# curl_create NS FILE LABEL RATE: one create of FILE's pod in NS, at most RATE a second; "LABEL <http code>
# <seconds>" per create.
curl_create() {
  cat <<CFG
url = "$GPUADMIT_E2E_API_URL/api/v1/namespaces/$1/pods"
cacert = "$STATE/pki/ca.crt"
cert = "$STATE/pki/admin.crt"
key = "$STATE/pki/admin.key"
header = "Content-Type: application/json"
data-binary = "@$2"
output = "/dev/null"
write-out = "$3 %{http_code} %{time_total}\\n"
max-time = 30
rate = "$4/s"
silent
CFG
}
# curl_config NS COUNT: COUNT creates in NS, every tenth the half GPU.
curl_config() {
  local ns=$1 count=$2 i body
  for ((i = 0; i < count; i++)); do
    ((i == 0)) || echo "next"
    body=gpu
    ((i % 10 != 9)) || body=half
    curl_create "$ns" "$WORK/$body.json" "$body" "$RATE"
  done
}

inject() { "$2" >"$WORK/note" || die "$1: the fault could not be injected: $(cat "$WORK/note")"; }

# run_fault NAME ACTION WHEN: load for SECS; ACTION (a function) 3 s in (WHEN=during), or just before
# the load (WHEN=first: the restarts, whose outage no webhook could serve); prints the table row.
run_fault() {
  local name=$1 action=$2 when=$3 ns="faults-$1" i count=$(((${4:-$SECS}) * RATE)) loaders=() note=""
  kc create namespace "$ns" >/dev/null
  curl_config "$ns" "$count" >"$WORK/$name.cfg"
  # The action runs in this shell (not in $(...)): it starts and waits for replicas, which must be its children.
  if [[ $when == first ]]; then inject "$name" "$action"; fi
  for ((i = 0; i < CLIENTS; i++)); do
    curl --config "$WORK/$name.cfg" >"$WORK/$name.$i.out" 2>/dev/null &
    loaders+=($!)
  done
  if [[ $when == during ]]; then
    sleep 3
    inject "$name" "$action"
  fi
  note=$(cat "$WORK/note")
  for p in "${loaders[@]}"; do wait "$p" || true; done
  if [[ -f $WORK/recovery ]]; then
    wait "$(cat "$WORK/recovery.pid")" 2>/dev/null || true
    note=${note//RECOVERY/$(cat "$WORK/recovery")}
    [[ $note != *STALE* ]] || note=${note//STALE/$(stale_seen)}
    rm -f "$WORK/recovery" "$WORK/recovery.pid"
  fi
  local creates failed wrong_denials missing
  creates=$(cat "$WORK/$name".*.out | wc -l)
  failed=$(cat "$WORK/$name".*.out | awk '($1 == "gpu" && $2 != 201) || ($1 == "half" && $2 != 403 && $2 != 422) || ($1 == "hostile" && $2 != 201)' | wc -l)
  wrong_denials=$(cat "$WORK/$name".*.out | awk '$1 == "half" && $2 == 422' | wc -l)
  # A GPU pod stored without the toleration gpuadmit adds: the fix was skipped.
  missing=$(kc get pods -n "$ns" -o jsonpath='{range .items[*]}{.metadata.name}={.spec.tolerations[*].key}{"\n"}{end}' |
    grep '^gpu-' | grep -vc 'nvidia\.com/gpu' || true)
  local codes
  codes=$(cat "$WORK/$name".*.out | awk '{ print $1 "=" $2 }' | sort | uniq -c | awk '{ printf "%s%s x%s", s, $2, $1; s = ", " }')
  local latency
  latency=$(cat "$WORK/$name".*.out | awk '$1 != "hostile" { print $3 * 1000 }' | sort -n |
    awk '{ v[NR] = $1 } END { r50 = int(0.5 * NR + 0.99); r99 = int(0.99 * NR + 0.99); printf "%.1f / %.1f", v[r50], v[r99] }')
  printf '| %s | %s | %s | %s | %s | %s |\n' "$name" "$creates" "$failed" "$((wrong_denials + missing))" "$latency" \
    "$note (answers: $codes)" | tee -a "$WORK/table.md"
  kc delete pods --all -n "$ns" --wait=false >/dev/null 2>&1 || true
}

fault_none() { echo "no fault: the baseline for the latencies"; }

fault_rolling_restart() {
  local t0=$SECONDS
  for i in 0 1; do
    stop_replica "$i"
    start_replica "$i"
  done
  echo "both replicas restarted in turn (SIGTERM, 5 s drain, start, ready) in $((SECONDS - t0)) s"
}

fault_cert_rotation() {
  "$BIN" certs generate --ip 127.0.0.1 --dns localhost --out "$WORK/new-certs" >/dev/null 2>&1 || return 1
  cat "$WORK/new-certs/ca.crt" >>"$CERTS/trust.pem"
  point_webhooks "$(base64 -w0 "$CERTS/trust.pem")"   # the API server trusts both first, as a rotation must
  sleep 2   # the API server's informer carries the new caBundle (well under a second here)
  local before
  before=$(metric 0 'gpuadmit_tls_certificate_reloads_total{result="success"}')
  cp "$WORK/new-certs/tls.key" "$CERTS/tls.key.new" && cp "$WORK/new-certs/tls.crt" "$CERTS/tls.crt.new"
  mv "$CERTS/tls.key.new" "$CERTS/tls.key" && mv "$CERTS/tls.crt.new" "$CERTS/tls.crt"
  local t
  for ((t = 0; t < 100; t++)); do
    [[ $(metric 0 'gpuadmit_tls_certificate_reloads_total{result="success"}') != "$before" ]] && break
    sleep 0.1
  done
  ((t < 100)) || return 1
  echo "a new CA and certificate written (caBundle carrying both first): replica 0 served it $((t / 10)).$((t % 10)) s later"
}

fault_broken_policy() {
  local t before
  before=$(metric 0 'gpuadmit_policy_reloads_total{result="failure"}')
  cp "$WORK/policy.yaml" "$WORK/policy.good"
  printf 'apiVersion: gpuadmit.io/v1alpha1\nkind: Policy\nspec:\n  rules:\n    node-fit: {action: sometimes}\n' >"$WORK/policy.yaml"
  for ((t = 0; t < 100; t++)); do
    [[ $(metric 0 'gpuadmit_policy_reloads_total{result="failure"}') != "$before" ]] && break
    sleep 0.1
  done
  ((t < 100)) || return 1
  sleep 5   # creates under the broken file
  cp "$WORK/policy.good" "$WORK/policy.yaml"
  echo "broken policy written for 5 s: replica 0 counted the failed reload after $((t / 10)).$((t % 10)) s and kept the old policy"
}

# A restart while the mounted policy is broken (#47 item 5): the replica comes up live but not ready, the
# balancer (as the endpoints controller) keeps it out, the other replica serves every create with the policy
# it held, and the fixed file makes the restarted one ready without another restart.
fault_restart_on_broken_policy() {
  local t ready
  cp "$WORK/policy.yaml" "$WORK/policy.good"
  printf 'apiVersion: gpuadmit.io/v1alpha1\nkind: Policy\nspec:\n  rules:\n    node-fit: {action: sometimes}\n' >"$WORK/policy.yaml"
  stop_replica 0
  launch_replica 0
  for ((t = 0; t < 100; t++)); do
    curl -fsS --max-time 1 --cacert "$CERTS/trust.pem" "https://127.0.0.1:${PORT[0]}/healthz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  ((t < 100)) || { echo "replica 0 not live on the broken policy: $(tail -3 "$WORK/replica-0.log")"; return 1; }
  sleep 5   # creates while replica 0 is up on the broken file
  ready=$(curl -sS --max-time 2 --cacert "$CERTS/trust.pem" "https://127.0.0.1:${PORT[0]}/readyz" 2>&1)
  [[ $ready == *"policy: "*":5:"* ]] || { echo "replica 0 on the broken policy answered /readyz: $ready"; return 1; }
  kill -0 "${REPLICA_PID[0]}" 2>/dev/null || { echo "replica 0 exited on the broken policy"; return 1; }
  cp "$WORK/policy.good" "$WORK/policy.yaml"
  for ((t = 0; t < 100; t++)); do
    curl -fsS --max-time 1 --cacert "$CERTS/trust.pem" "https://127.0.0.1:${PORT[0]}/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  ((t < 100)) || { echo "replica 0 not ready 10 s after the policy was fixed"; return 1; }
  echo "replica 0 restarted on a broken policy: live, unready for 5 s (/readyz named the error at its line), exited 0 times; ready $((t / 10)).$((t % 10)) s after the fix, replica 1 served meanwhile"
}

# view_recovery: seconds until both replicas' views are synced and not stale again.
view_recovery() {
  local t0=$1 t
  for ((t = 0; t < 1200; t++)); do
    if [[ $(metric 0 gpuadmit_cluster_stale) == 0 && $(metric 1 gpuadmit_cluster_stale) == 0 &&
      $(metric 0 gpuadmit_cluster_synced) == 1 && $(metric 1 gpuadmit_cluster_synced) == 1 ]]; then
      echo $((SECONDS - t0))
      return 0
    fi
    sleep 0.1
  done
  echo "never"
}

# sample_stale: replica 0's gpuadmit_cluster_stale every half second, into $WORK/stale, until killed.
sample_stale() { while true; do metric 0 gpuadmit_cluster_stale >>"$WORK/stale" 2>/dev/null || true; sleep 0.5; done; }
# stale_seen: "marked stale N s in" (the first sample that said so, at half a second each), or never.
stale_seen() {
  local first
  first=$(grep -n '^1' "$WORK/stale" | head -1 | cut -d: -f1)
  [[ -n $first ]] && echo "marked stale $(((first - 1) / 2)) s in" || echo "never marked stale"
}

# restart WHAT: restart it, then measure the views' recovery in the background while the load runs.
restart() {
  local t0=$SECONDS sampler
  : >"$WORK/stale"
  sample_stale &
  sampler=$!
  "$HERE/cluster.sh" "restart-$1" >/dev/null 2>"$WORK/restart.err" || { kill "$sampler"; cat "$WORK/restart.err"; return 1; }
  local ready=$SECONDS
  : >"$WORK/recovery"
  (view_recovery "$ready" >"$WORK/recovery"; kill "$sampler") &
  echo $! >"$WORK/recovery.pid"
  echo "$1 down and back ($((ready - t0)) s until /readyz), then the load: the views (STALE) synced and fresh RECOVERY s after /readyz"
}

# The API server unreachable from the replicas (not from the API server's webhook client) for 60 s.
fault_partition() {
  local t0=$SECONDS sampler
  : >"$WORK/stale"
  sample_stale &
  sampler=$!
  touch "$WORK/partition"
  sleep 60
  rm -f "$WORK/partition"
  local back=$SECONDS
  : >"$WORK/recovery"
  (view_recovery "$back" >"$WORK/recovery"; kill "$sampler") &
  echo $! >"$WORK/recovery.pid"
  echo "the replicas cut off from the API server for $((back - t0)) s, creates going on: the view (STALE) synced and fresh RECOVERY s after"
}
fault_apiserver_restart() { restart apiserver; }

# Hostile clients at both replicas while the API server's reviews go on (tools/hostile).
fault_slow_clients() {
  local rss0 rss1 rss2 out
  rss0=$(ps -o rss= -p "${REPLICA_PID[0]}")
  out=$("$WORK/hostile" -seconds $((SECS - 5)) -count "$SLOW_CLIENTS" "127.0.0.1:${PORT[0]}" "127.0.0.1:${PORT[1]}") || return 1
  rss1=$(ps -o rss= -p "${REPLICA_PID[0]}")
  sleep 12 # past the next of serve's 10-second checks for free memory to give back
  rss2=$(ps -o rss= -p "${REPLICA_PID[0]}")
  echo "$SLOW_CLIENTS per replica: $out; replica 0 RSS ${rss0} -> ${rss1} kB at the end of the flood, ${rss2} kB 12 s after, evicted $(metric 0 gpuadmit_http_connections_evicted_total), rejected $(metric 0 gpuadmit_http_connections_rejected_total)"
}
# A pod that opens connections and asks GET /healthz once on each (probes need no client certificate), then
# holds them idle past the connection cap, from an address of its own as a pod has. Started before the load
# and given time to fill the cap, so the API server's connections for the load are new ones. The note is
# completed when the flood ends (the RECOVERY slot, filled once the load is over).
fault_answered_clients() {
  : >"$WORK/recovery"
  (
    "$WORK/hostile" -mode answered -source 127.0.0.2 -seconds $((SECS + 10)) -count "$ANSWERED_CLIENTS" \
      "127.0.0.1:${PORT[0]}" "127.0.0.1:${PORT[1]}" >"$WORK/answered.out" 2>&1
    echo "$(cat "$WORK/answered.out"); replica 0 evicted $(metric 0 gpuadmit_http_connections_evicted_total), rejected $(metric 0 gpuadmit_http_connections_rejected_total)" >"$WORK/recovery"
  ) &
  echo $! >"$WORK/recovery.pid"
  sleep 8 # the hostile connections ramp up over 5 s
  echo "$ANSWERED_CLIENTS per replica from 127.0.0.2, each answered once then idle, from before the load: RECOVERY"
}
fault_etcd_restart() { restart etcd; }

# A tenant's hostile claims under load (#47 items 2 and 7): a fleet of HOSTILE_NODES DRA nodes of
# HOSTILE_DEVICES GPUs each, the tenant's ResourceClaimTemplates that the API server accepts (each of
# hostile_claims.py's is tried; a refusal is reported: Kubernetes' own cost limit stopped it), and pods using
# them at HOSTILE_RATE per second beside the load. Every create must still get its answer (the hostile pods
# 201, allowed with dra-claims' over-budget warning), and the others' latency shows what they cost.
fault_hostile_claim() {
  local ns=faults-hostile-claim f out accepted=() refused=() i count
  python3 "$HERE/hostile_claims.py" "$WORK/claims" "$HOSTILE_NODES" "$HOSTILE_DEVICES" || return 1
  kc create -f "$WORK/claims/fleet.json" >/dev/null || { echo "the DRA fleet was refused"; return 1; }
  for f in counted-repeats costly-uuid; do
    python3 -c 'import json, sys; t = json.load(open(sys.argv[1])); t["metadata"]["name"] = sys.argv[2]; print(json.dumps(t))' \
      "$WORK/claims/$f.json" "$f" >"$WORK/claims/t-$f.json"
    if out=$(kc -n "$ns" create -f "$WORK/claims/t-$f.json" 2>&1); then
      accepted+=("$f")
      sed "s/\"resourceClaimTemplateName\": \"hostile\"/\"resourceClaimTemplateName\": \"$f\"/" \
        "$WORK/claims/hostile-pod.json" >"$WORK/claims/pod-$f.json"
    else
      # One line for the table: the API server's first reason (an invalid expression, or its cost).
      printf '%s\n' "$out" >"$WORK/claims/refused-$f.txt"
      out=$(tr '\n' ' ' <<<"$out" | grep -o -E '(compilation failed|[a-z ]*cost)[^|*]{0,100}' | head -1)
      refused+=("$f (${out:-see $WORK/claims/refused-$f.txt})")
    fi
  done
  ((${#accepted[@]})) || { echo "the API server refused every hostile template: ${refused[*]}"; return 0; }
  sleep 3   # the replicas' views take the fleet and the templates in
  count=$(((SECS - 8) * HOSTILE_RATE))
  for ((i = 0; i < count; i++)); do
    ((i == 0)) || echo "next"
    f=${accepted[$((i % ${#accepted[@]}))]}
    curl_create "$ns" "$WORK/claims/pod-$f.json" hostile "$HOSTILE_RATE"
  done >"$WORK/hostile.cfg"
  : >"$WORK/recovery"
  (
    curl --config "$WORK/hostile.cfg" >"$WORK/hostile-claim.hostile.out" 2>/dev/null || true
    local answered budget
    answered=$(awk '$2 == 201' "$WORK/hostile-claim.hostile.out" | wc -l)
    budget=$(($(metric 0 'gpuadmit_admission_reviews_over_budget_total{webhook="mutate"}' | cut -d. -f1) +
      $(metric 0 'gpuadmit_admission_reviews_over_budget_total{webhook="validate"}' | cut -d. -f1)))
    echo "$count hostile pods, $answered created (201), their p50 / p99 $(awk '{ print $3 * 1000 }' "$WORK/hostile-claim.hostile.out" |
      sort -n | awk '{ v[NR] = $1 } END { printf "%.0f / %.0f ms", v[int(0.5 * NR + 0.99)], v[int(0.99 * NR + 0.99)] }'); replica 0 counted $budget reviews over budget" >"$WORK/recovery"
    # Gone before the next row (fake nodes go with --force: no kubelet confirms a graceful delete).
    kc delete -f "$WORK/claims/fleet.json" --force --grace-period=0 --wait=false >/dev/null 2>&1 || true
  ) &
  echo $! >"$WORK/recovery.pid"
  echo "templates accepted by the API server: ${accepted[*]}${refused:+; refused: ${refused[*]}}; $HOSTILE_NODES DRA nodes x $HOSTILE_DEVICES GPUs; RECOVERY"
}

printf '| fault | creates | failed | wrong verdicts | create p50 / p99 ms | what happened |\n| --- | --- | --- | --- | --- | --- |\n' | tee "$WORK/table.md"
for f in $ONLY; do
  declare -F "fault_${f//-/_}" >/dev/null || die "no fault '$f'"
  case $f in
    *-restart) [[ $f == rolling-restart ]] && when=during || when=first ;;
    answered-clients) when=first ;;
    *) when=during ;;
  esac
  secs=$SECS
  [[ $f != partition ]] || secs=$((SECS + 60))
  run_fault "$f" "fault_${f//-/_}" "$when" "$secs"
done
log "replica logs: $WORK/replica-*.log"
awk -F'|' 'NR > 2 && ($4 + 0 > 0 || $5 + 0 > 0) { bad = 1 } END { exit bad }' "$WORK/table.md" ||
  { log "FAILED: a fault lost creates or verdicts (table above)"; exit 1; }
log "every fault: 0 failed creates, 0 wrong verdicts"
