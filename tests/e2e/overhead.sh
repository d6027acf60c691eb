#!/usr/bin/env bash
# What gpuadmit costs a pod create: N pods created through the e2e cluster's API server with both
# webhook configurations deleted, N with them pointed at a do-nothing webhook (tools/nullwebhook: it
# answers every review with the bytes gpuadmit gave the first one, patch and warnings included, and
# evaluates nothing), and N with gpuadmit; per-create latency p50/p90/p99 and the differences. The
# do-nothing phase is the floor any webhook returning this patch costs: the API server's webhook
# client, TLS, and applying the patch. Prints numbers only: timings are never asserted (a shared 2-core machine is noisy);
# it fails only if a create does not return 201 or the cluster cannot be switched.
#
#   tests/e2e/overhead.sh        against the cluster of $GPUADMIT_E2E_STATE (cluster.sh up with
#                                GPUADMIT_BIN set); run.sh calls it after the scenarios
#
# Method: one curl process per phase sends the creates one after another over one kept-alive
# connection, as a client-go controller would (%{time_total} per request: request written, the API
# server's admission chain incl. both webhooks, etcd write, response read). The body is a GPU pod
# without toleration (so /mutate returns a patch and /validate runs) with a schedulerName nobody
# serves, so the scheduler adds no load. The three phases alternate in R rounds (without, do-nothing,
# gpuadmit, without, ...) of N/R creates each, so that drift (other work on the machine, etcd growth)
# hits all alike; each round starts with W creates that are not counted.
#
# Env: GPUADMIT_E2E_OVERHEAD_N (default 200), GPUADMIT_E2E_OVERHEAD_ROUNDS (default 4),
# GPUADMIT_E2E_OVERHEAD_WARMUP (default 10 per round).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${GPUADMIT_E2E_STATE:-/tmp/gpuadmit-e2e}
N=${GPUADMIT_E2E_OVERHEAD_N:-200}
ROUNDS=${GPUADMIT_E2E_OVERHEAD_ROUNDS:-4}
WARMUP=${GPUADMIT_E2E_OVERHEAD_WARMUP:-10}

log() { printf '%s overhead: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ -f $STATE/cluster.env ]] || die "no running cluster in $STATE (cluster.sh up)"
# shellcheck source=/dev/null
source "$STATE/cluster.env"
[[ -n ${GPUADMIT_E2E_WEBHOOK_URL:-} ]] || die "the cluster in $STATE runs without gpuadmit (set GPUADMIT_BIN for cluster.sh up)"
[[ $N =~ ^[1-9][0-9]*$ && $ROUNDS =~ ^[1-9][0-9]*$ && $WARMUP =~ ^[0-9]+$ ]] ||
  die "GPUADMIT_E2E_OVERHEAD_N/ROUNDS/WARMUP must be whole numbers"
((ROUNDS <= N)) || ROUNDS=$N
kc() { timeout -k 5 60 "$GPUADMIT_E2E_KUBECTL" "$@"; }

WORK=$(mktemp -d /tmp/gpuadmit-e2e-overhead.XXXXXX)
NS=gpuadmit-e2e-overhead-$(printf '%04x' $((RANDOM % 65536)))
CURL_PID=
NULL_PID=
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [[ -z $CURL_PID ]] || { kill "$CURL_PID" 2>/dev/null || true; wait "$CURL_PID" 2>/dev/null || true; }
  [[ -z $NULL_PID ]] || { kill "$NULL_PID" 2>/dev/null || true; wait "$NULL_PID" 2>/dev/null || true; }
  # Unbound pods are deleted at once; the namespace stays Terminating (no namespace controller).
  kc delete pods --all -n "$NS" --wait=false >/dev/null 2>&1 || true
  kc delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

kc create namespace "$NS" >/dev/null
cat >"$WORK/pod.json" <<'EOF'
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"generateName": "overhead-", "labels": {"app.kubernetes.io/part-of": "gpuadmit-e2e-overhead"}},
 "spec": {"schedulerName": "gpuadmit-e2e-nobody", "terminationGracePeriodSeconds": 0,
          "containers": [{"name": "train", "image": "registry.invalid/train:1",
                          "resources": {"limits": {"nvidia.com/gpu": "1", "cpu": "4", "memory": "16Gi"}}}]}}
EOF

# curl config: COUNT creates, each "<http code> <seconds>" on stdout.
write_curl_config() {
  local count=$1 i
  for ((i = 0; i < count; i++)); do
    ((i == 0)) || echo "next"
    cat <<EOF
url = "$GPUADMIT_E2E_API_URL/api/v1/namespaces/$NS/pods"
cacert = "$STATE/pki/ca.crt"
cert = "$STATE/pki/admin.crt"
key = "$STATE/pki/admin.key"
header = "Content-Type: application/json"
header = "Accept: application/json"
data-binary = "@$WORK/pod.json"
output = "/dev/null"
write-out = "%{http_code} %{time_total}\\n"
max-time = 30
silent
EOF
  done >"$WORK/curl-$count.cfg"
}

# round NAME COUNT: WARMUP + COUNT creates; appends the COUNT timings (ms) to $WORK/NAME.ms
round() {
  local name=$1 count=$2 bad
  [[ -f $WORK/curl-$((WARMUP + count)).cfg ]] || write_curl_config $((WARMUP + count))
  curl --config "$WORK/curl-$((WARMUP + count)).cfg" >"$WORK/$name.raw" &
  CURL_PID=$!
  wait "$CURL_PID" || die "curl failed (phase $name)"
  CURL_PID=
  bad=$(awk '$1 != 201' "$WORK/$name.raw" | sort | uniq -c | sed 's/^ *//' | tr '\n' ';')
  [[ -z $bad ]] || die "$name: creates that did not return 201 (count, code, time): $bad"
  [[ $(wc -l <"$WORK/$name.raw") == $((WARMUP + count)) ]] || die "$name: expected $((WARMUP + count)) results"
  tail -n "$count" "$WORK/$name.raw" | awk '{ printf "%.3f\n", $2 * 1000 }' >>"$WORK/$name.ms"
}

switch() {
  "$HERE/cluster.sh" webhooks "$1" 2>"$WORK/switch.log" || { cat "$WORK/switch.log" >&2; die "cluster.sh webhooks $1 failed"; }
}

# start_null_webhook, switch_to_null
# shellcheck source=lib/nullwebhook.sh
source "$HERE/lib/nullwebhook.sh"

# stats FILE: "p50 p90 p99 mean max" in ms (nearest-rank percentiles).
stats() {
  awk '{ v[NR] = $1; s += $1 }
       function rank(p,  r) { r = int(p * NR + 0.999999); if (r < 1) r = 1; return v[r] }
       END { printf "%.2f %.2f %.2f %.2f %.2f\n", rank(0.50), rank(0.90), rank(0.99), s / NR, v[NR] }' "$1"
}

start_null_webhook
log "$N creates each without webhooks, with the do-nothing webhook and with gpuadmit, in $ROUNDS alternating rounds (+$WARMUP warm-up each)"
: >"$WORK/without.ms"
: >"$WORK/null.ms"
: >"$WORK/with.ms"
for ((r = 0; r < ROUNDS; r++)); do
  count=$((N / ROUNDS + (r < N % ROUNDS ? 1 : 0)))
  switch off
  round without "$count"
  switch_to_null
  round null "$count"
  switch on    # left on at the end
  round with "$count"
done
for phase in without null with; do sort -n -o "$WORK/$phase.ms" "$WORK/$phase.ms"; done

read -r a50 a90 a99 amean amax < <(stats "$WORK/without.ms")
read -r n50 n90 n99 nmean nmax < <(stats "$WORK/null.ms")
read -r b50 b90 b99 bmean bmax < <(stats "$WORK/with.ms")

# gpuadmit's own time per review, from its log (latency_us of the reviews in this namespace).
server_side() {
  local endpoint=$1
  grep -F "\"namespace\":\"$NS\"" "$STATE/logs/gpuadmit.log" 2>/dev/null | grep -F "\"endpoint\":\"$endpoint\"" |
    sed -n 's/.*"latency_us":\([0-9]*\).*/\1/p' | sort -n |
    awk '{ v[NR] = $1 } END { if (NR) printf "p50 %d us, p99 %d us (%d reviews)", v[int(0.5 * NR + 0.999999)], v[int(0.99 * NR + 0.999999)], NR; else printf "n/a" }'
}


printf 'overhead: %d pod creates each, sequential over one connection, %d alternating rounds (ms)\n' "$N" "$ROUNDS"
printf 'overhead: %-17s %8s %8s %8s %8s %8s\n' "" p50 p90 p99 mean max
# difference LABEL A50 A90 A99 AMEAN B50 B90 B99 BMEAN: one line of B - A.
difference() {
  printf 'overhead: %-17s %8s %8s %8s %8s\n' "$1" \
    "$(awk -v a="$2" -v b="$6" 'BEGIN { printf "%+.2f", b - a }')" \
    "$(awk -v a="$3" -v b="$7" 'BEGIN { printf "%+.2f", b - a }')" \
    "$(awk -v a="$4" -v b="$8" 'BEGIN { printf "%+.2f", b - a }')" \
    "$(awk -v a="$5" -v b="$9" 'BEGIN { printf "%+.2f", b - a }')"
}
printf 'overhead: %-17s %8s %8s %8s %8s %8s\n' "without webhooks" "$a50" "$a90" "$a99" "$amean" "$amax"
printf 'overhead: %-17s %8s %8s %8s %8s %8s\n' "do-nothing" "$n50" "$n90" "$n99" "$nmean" "$nmax"
printf 'overhead: %-17s %8s %8s %8s %8s %8s\n' "with gpuadmit" "$b50" "$b90" "$b99" "$bmean" "$bmax"
difference "do-nothing cost" "$a50" "$a90" "$a99" "$amean" "$n50" "$n90" "$n99" "$nmean"
difference "gpuadmit cost" "$a50" "$a90" "$a99" "$amean" "$b50" "$b90" "$b99" "$bmean"
difference "gpuadmit - floor" "$n50" "$n90" "$n99" "$nmean" "$b50" "$b90" "$b99" "$bmean"
printf 'overhead: gpuadmit itself (its log): /mutate %s; /validate %s\n' "$(server_side mutate)" "$(server_side validate)"
