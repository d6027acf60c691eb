#!/usr/bin/env bash
# The burst (issue #24; make burst; not in make test, about 4 minutes): pod creates arriving all at once
# through the real API server while gpuadmit holds a large cluster view, against the same burst through a
# do-nothing webhook that returns gpuadmit's own answer (tools/nullwebhook, via lib/nullwebhook.sh).
#
# Its own control plane (cluster.sh up, with kube-controller-manager and gpuadmit serve on loopback), then
# BURST_NODES (5,000) nodes written through the API server: 10 % GPU nodes in tainted pools (A100, H100, L4),
# the rest CPU pools, three zones; gpuadmit's view must hold them all before the first burst. Each burst:
#   - a Job at parallelism and completions BURST_PARALLELISM (200), its pods created by the Job controller
#     as fast as it goes;
#   - at the same moment BURST_CLIENTS (50) concurrent `kubectl create` loops of BURST_PER_CLIENT (4) pods.
# Every pod asks for a GPU without a toleration (gpuadmit adds one) and names a scheduler nobody runs, so
# nothing is scheduled. The two webhooks alternate over BURST_ROUNDS (2) rounds in fresh namespaces.
#
# Per webhook: creates, failed (a kubectl create that did not succeed, a FailedCreate event of the Job, a
# Job pod missing), wrong verdicts (a pod stored without the toleration), kubectl create p50/p99 (the whole
# command: a process start each, the same for both webhooks), the time until the Job's pods all exist, and
# gpuadmit's own time per review from its log. Exit 1 on any failed create or wrong verdict; timings are
# printed, never asserted.
#
#   tests/e2e/burst.sh GPUADMIT_BIN
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=$(readlink -f "${1:?usage: burst.sh GPUADMIT_BIN}")
export GPUADMIT_E2E_STATE=${GPUADMIT_E2E_STATE:-/tmp/gpuadmit-burst}
STATE=$GPUADMIT_E2E_STATE
NODES=${BURST_NODES:-5000}
PARALLELISM=${BURST_PARALLELISM:-200}
CLIENTS=${BURST_CLIENTS:-50}
PER_CLIENT=${BURST_PER_CLIENT:-4}
ROUNDS=${BURST_ROUNDS:-2}
for v in "$NODES" "$PARALLELISM" "$CLIENTS" "$PER_CLIENT" "$ROUNDS"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "burst: BURST_NODES, _PARALLELISM, _CLIENTS, _PER_CLIENT and _ROUNDS must be whole numbers" >&2; exit 2; }
done

log() { printf '%s burst: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

WORK=$(mktemp -d /tmp/gpuadmit-burst-work.XXXXXX)
NULL_PID=
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [[ -z $NULL_PID ]] || kill "$NULL_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  "$HERE/cluster.sh" down >/dev/null 2>&1 || true
  if ((rc != 0)); then log "work dir kept: $WORK"; else rm -rf "$WORK"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "control plane with kube-controller-manager and gpuadmit (cluster.sh up)"
envs=$(GPUADMIT_BIN=$BIN GPUADMIT_E2E_CONTROLLERS=1 "$HERE/cluster.sh" up) || die "cluster.sh up failed"
eval "$envs"
kc() { timeout -k 5 120 "$GPUADMIT_E2E_KUBECTL" "$@"; }
gpuadmit_metric() {
  curl -fsS --max-time 5 --cacert "$GPUADMIT_E2E_WEBHOOK_CA" "$GPUADMIT_E2E_WEBHOOK_URL/metrics" |
    awk -v m="$1" '$1 == m { print $2; found = 1 } END { if (!found) print 0 }'
}

# --- the cluster view: NODES nodes through the API server, four writers ---------------------------
log "writing $NODES nodes"
python3 - "$NODES" "$WORK" "$GPUADMIT_E2E_API_URL" "$STATE/pki" <<'PY'
import json, sys
count, work, url, pki = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
gpu_pools = [("a100", "NVIDIA-A100-SXM4-80GB", "8", "a2-ultragpu-8g"), ("h100", "NVIDIA-H100-80GB-HBM3", "8", "a3-highgpu-8g"),
             ("l4", "NVIDIA-L4", "1", "g2-standard-8")]
configs = [open(f"{work}/nodes-{w}.cfg", "w") for w in range(4)]
for i in range(count):
    zone = "us-central1-" + "abc"[i % 3]
    labels = {"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": f"burst-node-{i:05d}"}
    taints, allocatable = [], {"cpu": "32", "memory": "128Gi", "pods": "110"}
    if i % 10 == 0:
        pool, product, gpus, machine = gpu_pools[(i // 10) % 3]
        labels.update({"cloud.google.com/gke-nodepool": pool, "nvidia.com/gpu.product": product,
                       "node.kubernetes.io/instance-type": machine})
        taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
        allocatable.update({"nvidia.com/gpu": gpus, "cpu": "96", "memory": "1000Gi"})
    else:
        pool = ("general", "highmem", "spot")[i % 3]
        labels.update({"cloud.google.com/gke-nodepool": pool, "node.kubernetes.io/instance-type": "n2-standard-32"})
        if pool == "spot":
            taints.append({"key": "cloud.google.com/gke-spot", "value": "true", "effect": "NoSchedule"})
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"burst-node-{i:05d}", "labels": labels},
            "spec": {"taints": taints},
            "status": {"allocatable": allocatable, "capacity": allocatable,
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    body = json.dumps(node, separators=(",", ":")).replace("\\", "\\\\").replace('"', '\\"')
    f = configs[i % 4]
    if i >= 4:
        f.write("next\n")
    f.write(f'url = "{url}/api/v1/nodes"\ncacert = "{pki}/ca.crt"\ncert = "{pki}/admin.crt"\nkey = "{pki}/admin.key"\n'
            f'header = "Content-Type: application/json"\ndata-raw = "{body}"\noutput = "/dev/null"\n'
            'write-out = "%{http_code}\\n"\nmax-time = 30\nsilent\n')
for f in configs:
    f.close()
PY
writers=()
for w in 0 1 2 3; do
  curl --config "$WORK/nodes-$w.cfg" >"$WORK/nodes-$w.out" 2>/dev/null &
  writers+=($!)
done
for p in "${writers[@]}"; do wait "$p" || true; done
bad=$(cat "$WORK"/nodes-*.out | grep -vc '^201$' || true)
((bad == 0)) || die "$bad node writes did not return 201: $(cat "$WORK"/nodes-*.out | sort | uniq -c | tr '\n' ' ')"
t0=$SECONDS
until [[ $(gpuadmit_metric 'gpuadmit_cluster_objects{kind="nodes"}') -ge $NODES ]]; do
  ((SECONDS - t0 < 120)) || die "gpuadmit's view did not reach $NODES nodes within 120 s"
  sleep 0.5
done
log "gpuadmit's view holds $(gpuadmit_metric 'gpuadmit_cluster_objects{kind="nodes"}') nodes ($((SECONDS - t0)) s after the last write); RSS $(ps -o rss= -p "$(cat "$STATE/pids/gpuadmit.pid")") kB"

# --- the bursts ----------------------------------------------------------------------------------
cat >"$WORK/pod.json" <<'JSON'
{"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "burst-"},
 "spec": {"schedulerName": "gpuadmit-burst-nobody", "terminationGracePeriodSeconds": 0,
          "containers": [{"name": "train", "image": "registry.invalid/train:1",
                          "resources": {"limits": {"nvidia.com/gpu": "1", "cpu": "4", "memory": "16Gi"}}}]}}
JSON
job_manifest() {
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: burst}
spec:
  parallelism: $PARALLELISM
  completions: $PARALLELISM
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      schedulerName: gpuadmit-burst-nobody
      terminationGracePeriodSeconds: 0
      containers:
      - name: train
        image: registry.invalid/train:1
        resources: {limits: {nvidia.com/gpu: "1", cpu: "4", memory: 16Gi}}
YAML
}

# kubectl_client NS: PER_CLIENT creates one after another; "<exit code> <ms>" per create.
kubectl_client() {
  local i t0 rc
  for ((i = 0; i < PER_CLIENT; i++)); do
    t0=$(date +%s%N)
    rc=0
    kc create -n "$1" -f "$WORK/pod.json" >/dev/null 2>>"$WORK/kubectl.err" || rc=$?
    echo "$rc $((($(date +%s%N) - t0) / 1000000))"
  done
}

# percentiles FILE: "p50 p99" of the numbers in FILE (nearest rank).
percentiles() {
  sort -n "$1" | awk '{ v[NR] = $1 } function r(p, k) { k = int(p * NR + 0.999999); return v[k < 1 ? 1 : k] }
    END { printf "%d %d\n", r(0.50), r(0.99) }'
}

# burst WEBHOOK ROUND: one burst in a fresh namespace; appends to $WORK/WEBHOOK.{ms,job,counts}.
burst() {
  local webhook=$1 ns="burst-$1-$2" clients=() watcher t0 i
  kc create namespace "$ns" >/dev/null
  # Every pod the Job controller creates, stamped as it appears (and again at each change: first stamps count).
  (kc get pods -n "$ns" -l job-name=burst --watch-only -o name 2>/dev/null |
    while read -r pod; do echo "$pod $(date +%s%N)"; done >"$WORK/$webhook-$2.events") &
  watcher=$!
  sleep 1   # the watch is open before the Job exists
  job_manifest >"$WORK/job.yaml"
  t0=$(date +%s%N)
  kc create -n "$ns" -f "$WORK/job.yaml" >/dev/null || die "$webhook: creating the Job failed"
  for ((i = 0; i < CLIENTS; i++)); do
    kubectl_client "$ns" >"$WORK/$webhook-$2.client-$i" &
    clients+=($!)
  done
  for p in "${clients[@]}"; do wait "$p" || true; done
  local deadline=$((SECONDS + 120))
  local events="$WORK/$webhook-$2.events" seen_file="$WORK/$webhook-$2.seen"
  first_seen() { awk '!($1 in t) { t[$1] = $2 } END { for (p in t) print t[p] }' "$events" >"$seen_file"; }
  until first_seen && (($(wc -l <"$WORK/$webhook-$2.seen") >= PARALLELISM)) || ((SECONDS > deadline)); do sleep 0.5; done
  first_seen
  kill "$watcher" 2>/dev/null || true
  pkill -f -- "-n $ns -l job-name=burst --watch-only" 2>/dev/null || true
  local seen last failed_kubectl failed_job missing_toleration stored
  seen=$(wc -l <"$WORK/$webhook-$2.seen")
  last=$(sort -n "$WORK/$webhook-$2.seen" | tail -1)
  cat "$WORK/$webhook-$2".client-* | awk '{ print $2 }' >>"$WORK/$webhook.ms"
  failed_kubectl=$(cat "$WORK/$webhook-$2".client-* | awk '$1 != 0' | wc -l)
  failed_job=$(kc get events -n "$ns" --field-selector reason=FailedCreate -o name | wc -l)
  stored=$(kc get pods -n "$ns" --no-headers | wc -l)
  missing_toleration=$(kc get pods -n "$ns" -o jsonpath='{range .items[*]}{.metadata.name}={.spec.tolerations[*].key}{"\n"}{end}' |
    grep -vc 'nvidia\.com/gpu' || true)
  echo "$(((last - t0) / 1000000))" >>"$WORK/$webhook.job"
  echo "$((CLIENTS * PER_CLIENT + PARALLELISM)) $((failed_kubectl + failed_job + (seen < PARALLELISM ? PARALLELISM - seen : 0))) $missing_toleration $stored" >>"$WORK/$webhook.counts"
  log "$webhook round $2: $stored pods stored, Job's $seen pods in $(((last - t0) / 1000000)) ms, $failed_kubectl kubectl failures, $failed_job FailedCreate events, $missing_toleration without the toleration"
  kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
}

NS=burst-probe
kc create namespace "$NS" >/dev/null
# start_null_webhook, switch_to_null
# shellcheck source=lib/nullwebhook.sh
source "$HERE/lib/nullwebhook.sh"
start_null_webhook
for webhook in null gpuadmit; do : >"$WORK/$webhook.ms"; : >"$WORK/$webhook.job"; : >"$WORK/$webhook.counts"; done
log "$ROUNDS rounds of: a Job at parallelism $PARALLELISM and $CLIENTS kubectl clients x $PER_CLIENT creates, through the do-nothing webhook, then gpuadmit"
for ((r = 1; r <= ROUNDS; r++)); do
  switch_to_null
  burst null "$r"
  "$HERE/cluster.sh" webhooks on >/dev/null 2>"$WORK/switch.log" || die "cluster.sh webhooks on failed: $(cat "$WORK/switch.log")"
  burst gpuadmit "$r"
done

reviews() {   # gpuadmit's own time per review in the burst namespaces, from its log
  grep -F '"namespace":"burst-gpuadmit-' "$STATE/logs/gpuadmit.log" 2>/dev/null | grep -F "\"endpoint\":\"$1\"" |
    sed -n 's/.*"latency_us":\([0-9]*\).*/\1/p' | sort -n |
    awk '{ v[NR] = $1 } END { if (NR) printf "p50 %d / p99 %d us (%d)", v[int(0.5 * NR + 0.999999)], v[int(0.99 * NR + 0.999999)], NR; else printf "n/a" }'
}
printf '| webhook | creates | failed | wrong verdicts | kubectl create p50 / p99 ms | Job: all %d pods created, ms | gpuadmit per review |\n| --- | --- | --- | --- | --- | --- | --- |\n' "$PARALLELISM"
bad=0
for webhook in null gpuadmit; do
  read -r creates failed wrong _ < <(awk '{ c += $1; f += $2; w += $3 } END { print c, f, w }' "$WORK/$webhook.counts")
  read -r p50 p99 < <(percentiles "$WORK/$webhook.ms")
  jobs=$(tr '\n' ' ' <"$WORK/$webhook.job" | sed 's/ $//; s/ / and /g')
  own="(do-nothing)"
  [[ $webhook == null ]] || own="/mutate $(reviews mutate); /validate $(reviews validate)"
  printf '| %s | %d | %d | %d | %d / %d | %s | %s |\n' "$([[ $webhook == null ]] && echo do-nothing || echo gpuadmit)" \
    "$creates" "$failed" "$wrong" "$p50" "$p99" "$jobs" "$own"
  ((failed == 0 && wrong == 0)) || bad=1
done
((bad == 0)) || die "a burst lost creates or verdicts (table above; kubectl errors in $WORK/kubectl.err)"
log "every burst: 0 failed creates, 0 wrong verdicts; gpuadmit RSS $(ps -o rss= -p "$(cat "$STATE/pids/gpuadmit.pid")") kB"
