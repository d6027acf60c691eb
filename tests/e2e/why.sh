#!/usr/bin/env bash
# `gpuadmit why` on the real control plane: stuck and killed GPU pods, and a workload without pods, each
# explained with Kubernetes' own words quoted (the real scheduler's PodScheduled message or FailedScheduling
# event, the container's terminated state, the eviction message, a controller's FailedCreate event).
#
#   tests/e2e/why.sh GPUADMIT_BIN
#
# The control plane: with GPUADMIT_E2E_STATE naming a running cluster.sh cluster that has gpuadmit (run.sh
# calls this script after audit.sh, on its cluster; or yours after `eval "$(cluster.sh up)"`), that one is
# reused. Otherwise it starts its own (cluster.sh up with GPUADMIT_BIN, state /tmp/gpuadmit-why, no
# controllers) and stops it on exit.
#
# Either way it turns the cluster's webhooks off (cluster.sh webhooks off: gpuadmit would otherwise fix or deny
# these pods at creation) and creates, in a namespace of its own (e2e-why-XXXX), GPU pods that stay Pending
# for each scheduling cause: 16 GPUs (no node has that many), 1 GPU without the GPU toleration (the nodes'
# nvidia.com/gpu taint), a nodeSelector no node matches, and a nodeSelector for a node of its own that is
# cordoned (e2e-why-cordoned-XXXX, a fake 1-GPU node created with status, spec.unschedulable; deleted on
# exit: the shared nodes are never cordoned). Then three pods bound to gpu-a100-0 by spec.nodeName (no kubelet
# runs there, so nothing else writes their status), whose status it writes through the status subresource as
# a kubelet would: one OOMKilled (7B bf16 model annotations, a 32Gi limit: memory-floor's 88Gi), one Evicted
# (Burstable, "The node was low on resource: memory..."), and one Evicted as a kubelet really leaves it, with
# its container's status too (terminated ContainerStatusUnknown, exit code 137: the eviction's kill, not an
# OOM kill). With kube-controller-manager (GPUADMIT_E2E_CONTROLLERS=1 in cluster.env) also: in a second
# namespace (NS-quota), a ResourceQuota requests.nvidia.com/gpu: 1 and a Job asking for 2 GPUs, whose pods
# the quota refuses (the job controller's FailedCreate "exceeded quota" event); and a Deployment with
# replicas 0 whose pods no node can run (16 GPUs). Its ReplicaSet made, it turns the webhooks back on and
# scales the Deployment to 1 (deployments/scale is not sent to gpuadmit): the ReplicaSet's pods are denied by
# gpuadmit's node-fit, a FailedCreate event quoting "admission webhook ... denied the request". (A fractional
# GPU, as in the offline fixture, cannot be used here: the API server itself refuses `nvidia.com/gpu: 0.5` in
# a Deployment's template, "must be an integer", so it never gets a ReplicaSet.) Without the controllers the
# quota and Deployment cases are skipped.
#
# Checks (stdout, one PASS/FAIL line each, then `why: N passed, M failed`; exit 0 iff M is 0):
#   the pods are stored as written (no webhook: the untolerated pod has no GPU toleration); the scheduler
#   leaves the four Pending (PodScheduled=False within 60 s); for each case `gpuadmit why ... --kubeconfig
#   <the cluster's> -o json` exits 0 with the state, a cause whose quote is Kubernetes' words verbatim (the
#   pod's PodScheduled message or one of its FailedScheduling events; the Job's or the ReplicaSet's
#   FailedCreate events), the explanation and the rule that bears on it (node-fit for insufficient GPUs, the
#   selector and the cordon; gpu-tolerations; memory-floor with 88Gi; guaranteed-qos; gpu-quota; gpuadmit for
#   the webhook's denial, and node-fit for the template; the evicted pod whose container exited 137 is
#   explained as evicted, not OOMKilled), and the text output has the same `Kubernetes says:` line (verbatim),
#   a `Fix:` and the `Rule:` line; a pod that does not exist: exit 2; `kubectl gpuadmit why` through
#   kubectl's plugin mechanism (a kubectl-gpuadmit symlink to GPUADMIT_BIN first on PATH) prints what the
#   direct call prints, and `kubectl plugin list` shows it. On exit it deletes both namespaces and its node,
#   and puts the webhooks back if they are still off (cluster.sh webhooks on).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: tests/e2e/why.sh GPUADMIT_BIN}
[[ -x $BIN ]] || { echo "FAIL  setup: $BIN is not an executable"; echo "why: 0 passed, 1 failed"; exit 1; }
BIN=$(readlink -f "$BIN")
SCHED_WAIT=60   # seconds the scheduler may take to mark the pods unschedulable
EVENT_WAIT=90   # seconds a controller's FailedCreate event (and the quota's status) may take

log() { printf '%s why: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

WORK=$(mktemp -d /tmp/gpuadmit-why.XXXXXX)
OWN_CLUSTER=0
WEBHOOKS_WERE=   # the cluster's webhooks (on|off) before this suite turned them off; empty: not touched
MADE_NS=()
MADE_NODE=
# shellcheck disable=SC2034 # counted by lib/standalone.sh
PASSED=0 FAILED=0

# fd 3/4: the real stdout/stderr, for the trap (a signal may come while a check's output goes to its log).
exec 3>&1 4>&2
cleanup() {
  local rc=$? ns left start
  trap - EXIT INT TERM
  exec 1>&3 2>&4
  if ((!OWN_CLUSTER)) && [[ -n ${GPUADMIT_E2E_KUBECTL:-} ]]; then
    # A shared cluster is left as found. Pods bound to fake nodes need a forced delete (no kubelet confirms a
    # graceful one, and one left Terminating holds its node for the scheduler); with the controllers a
    # ReplicaSet or Job may still make one until the garbage collector has deleted it: bounded, as run.sh does.
    for ns in "${MADE_NS[@]}"; do
      kc -n "$ns" delete deployments,jobs --all --wait=false >/dev/null 2>&1
      start=$SECONDS
      while left=$(kc get -n "$ns" pods,replicasets,jobs -o name 2>/dev/null) && [[ -n $left ]]; do
        ((SECONDS - start < 30)) || { log "WARNING: still left in $ns after 30s: ${left//$'\n'/ }"; break; }
        kc -n "$ns" delete pods --all --force --grace-period=0 --wait=false >/dev/null 2>&1
        kc -n "$ns" delete replicasets,jobs --all --wait=false >/dev/null 2>&1
        sleep 0.3
      done
      kc delete namespace "$ns" --wait=false >/dev/null 2>&1
    done
    if [[ -n $MADE_NODE ]]; then
      kc delete node "$MADE_NODE" --ignore-not-found --wait=false >/dev/null 2>&1 ||
        log "WARNING: deleting node $MADE_NODE failed"
    fi
    restore_webhooks || rc=1
  fi
  standalone_finish "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck disable=SC2034 # read by lib/standalone.sh
SUITE=why
# shellcheck source=lib/standalone.sh
source "$HERE/lib/standalone.sh"

# --- the control plane -----------------------------------------------------------------------------------
attach_control_plane /tmp/gpuadmit-why
CONTROLLERS=${GPUADMIT_E2E_CONTROLLERS:-0}
HEX=$(printf '%04x' $((RANDOM % 65536)))
NS=e2e-why-$HEX
QUOTA_NS=$NS-quota
NODE=e2e-why-cordoned-$HEX
EVICTION="The node was low on resource: memory. Threshold quantity: 100Mi, available: 52Mi. Container train was using 30Gi, request is 8Gi, has larger consumption of memory."

# --- what is created while no webhook is there -----------------------------------------------------------
# A fake 1-GPU node like gpu-t4-0 (its taint too), cordoned; status in the create body (fake-cluster.sh).
cat >"$WORK/node.yaml" <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $NODE
  labels:
    kubernetes.io/hostname: $NODE
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    app.kubernetes.io/part-of: gpuadmit-e2e
spec:
  unschedulable: true
  taints:
  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
status:
  capacity:    {cpu: "16", memory: 64Gi, pods: "110", ephemeral-storage: 200Gi, nvidia.com/gpu: "1"}
  allocatable: {cpu: "16", memory: 64Gi, pods: "110", ephemeral-storage: 200Gi, nvidia.com/gpu: "1"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: "fake node (no kubelet)"}
  addresses:
  - {type: Hostname, address: $NODE}
  nodeInfo: {architecture: amd64, operatingSystem: linux, osImage: fake, kernelVersion: fake,
             containerRuntimeVersion: "fake://0", kubeletVersion: v0.0.0-fake, kubeProxyVersion: "",
             machineID: $NODE, systemUUID: $NODE, bootID: $NODE}
EOF

# gpu_pod NAME GPUS EXTRA-SPEC-LINES...: a Guaranteed GPU pod with the GPU toleration unless told otherwise.
gpu_pod() {
  local name=$1 gpus=$2 line; shift 2
  printf -- '- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: %s\n    labels: {app.kubernetes.io/part-of: gpuadmit-e2e}\n  spec:\n    terminationGracePeriodSeconds: 0\n' "$name"
  for line in "$@"; do printf '    %s\n' "$line"; done
  printf '    containers:\n    - name: train\n      image: registry.invalid/train:1\n'
  printf '      resources:\n        limits: {cpu: "%s", memory: %sGi, nvidia.com/gpu: "%s"}\n' $((gpus * 4)) $((gpus * 32)) "$gpus"
}
TOLERATE='tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]'
{
  printf 'apiVersion: v1\nkind: List\nitems:\n'
  gpu_pod sixteen-gpus 16 "$TOLERATE"                                        # no node has 16
  gpu_pod untolerated 1                                                      # the nvidia.com/gpu taint
  gpu_pod no-such-pool 1 "$TOLERATE" 'nodeSelector: {gpuadmit.io/e2e-pool: nowhere}'
  gpu_pod on-cordoned-node 1 "$TOLERATE" "nodeSelector: {kubernetes.io/hostname: $NODE}"
} >"$WORK/pending.yaml"
PENDING=(sixteen-gpus untolerated no-such-pool on-cordoned-node)

# Bound by spec.nodeName (the scheduler leaves them alone), status written below as a kubelet would.
cat >"$WORK/killed.yaml" <<'EOF'
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: oom
    labels: {app.kubernetes.io/part-of: gpuadmit-e2e}
    annotations: {gpuadmit.io/model-parameters: 7B, gpuadmit.io/model-precision: bf16, gpuadmit.io/batch-memory: 4Gi}
  spec:
    terminationGracePeriodSeconds: 0
    nodeName: gpu-a100-0
    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
    containers:
    - name: train
      image: registry.invalid/train:1
      resources:
        limits: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "1"}
- apiVersion: v1
  kind: Pod
  metadata:
    name: evicted
    labels: {app.kubernetes.io/part-of: gpuadmit-e2e}
  spec:
    terminationGracePeriodSeconds: 0
    nodeName: gpu-a100-0
    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
    containers:
    - name: train
      image: registry.invalid/train:1
      resources:
        requests: {cpu: "2", memory: 8Gi}
        limits: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "1"}
- apiVersion: v1
  kind: Pod
  metadata:
    name: evicted-killed
    labels: {app.kubernetes.io/part-of: gpuadmit-e2e}
  spec:
    terminationGracePeriodSeconds: 0
    nodeName: gpu-a100-0
    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
    containers:
    - name: train
      image: registry.invalid/train:1
      resources:
        requests: {cpu: "2", memory: 8Gi}
        limits: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "1"}
EOF

# With controllers only. The quota's namespace is another one, so that the pods above do not count in it.
cat >"$WORK/quota.yaml" <<'EOF'
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ResourceQuota
  metadata: {name: gpu-quota}
  spec:
    hard: {requests.nvidia.com/gpu: "1"}
EOF
cat >"$WORK/job.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata:
  name: over-quota
  labels: {app.kubernetes.io/part-of: gpuadmit-e2e}
spec:
  backoffLimit: 0
  template:
    metadata:
      labels: {app.kubernetes.io/part-of: gpuadmit-e2e}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 0
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: train
        image: registry.invalid/train:1
        resources:
          limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: "2"}
EOF
# replicas 0: its ReplicaSet is made while the webhooks are off (gpuadmit judges ReplicaSets too, and would
# deny it); scaled to 1 once they are on, so that the ReplicaSet's pods reach gpuadmit.
cat >"$WORK/deployment.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: refused
  labels: {app.kubernetes.io/part-of: gpuadmit-e2e}
spec:
  replicas: 0
  selector: {matchLabels: {app: refused}}
  template:
    metadata:
      labels: {app: refused, app.kubernetes.io/part-of: gpuadmit-e2e}
    spec:
      terminationGracePeriodSeconds: 0
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: train
        image: registry.invalid/train:1
        resources:
          limits: {cpu: "16", memory: 256Gi, nvidia.com/gpu: "16"}
EOF

# --- the checks' steps -------------------------------------------------------------------------------------
webhooks_off() {
  WEBHOOKS_WERE=$(cat "$STATE/gpuadmit/webhooks" 2>/dev/null) || { echo "no $STATE/gpuadmit/webhooks"; return 1; }
  echo "webhooks were $WEBHOOKS_WERE"
  "$HERE/cluster.sh" webhooks off
}

make_namespaces() {
  local ns
  for ns in "$NS" "$QUOTA_NS"; do
    MADE_NS+=("$ns")   # first: a signal's trap runs once kubectl is done, before the next command
    kc create namespace "$ns" || return 1
  done
}

make_node() {
  MADE_NODE=$NODE
  kc create -f "$WORK/node.yaml" || return 1
  kc get node "$NODE" -o jsonpath='{.metadata.name} unschedulable={.spec.unschedulable} gpus={.status.allocatable.nvidia\.com/gpu}{"\n"}'
  [[ $(kc get node "$NODE" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}') == 1 ]] ||
    { echo "want allocatable nvidia.com/gpu 1 (status given on create)"; return 1; }
}

create_pods() {
  kc -n "$NS" create -f "$WORK/killed.yaml" && kc -n "$NS" create -f "$WORK/pending.yaml"
}

stored_as_written() {
  local tol qos
  tol=$(kc -n "$NS" get pod untolerated -o jsonpath='{.spec.tolerations[*].key}') || return 1
  qos=$(kc -n "$NS" get pod evicted -o jsonpath='{.status.qosClass}') || return 1
  echo "pod/untolerated: tolerations=[$tol]; pod/evicted: qosClass=$qos"
  [[ " $tol " != *" nvidia.com/gpu "* ]] || { echo "want no nvidia.com/gpu toleration: a webhook mutated it"; return 1; }
  [[ $qos == Burstable ]] || { echo "want pod/evicted Burstable: a webhook mutated it"; return 1; }
}

# The status a kubelet would write: the container restarted after an OOM kill; the pod evicted.
write_status() {
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  kc -n "$NS" patch pod oom --subresource=status --type=merge -p "$(cat <<EOF
{"status": {"phase": "Running", "containerStatuses": [{"name": "train", "image": "registry.invalid/train:1",
  "imageID": "", "ready": true, "started": true, "restartCount": 3,
  "state": {"running": {"startedAt": "$now"}},
  "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137, "startedAt": "$now", "finishedAt": "$now"}}}]}}
EOF
)" || return 1
  kc -n "$NS" patch pod evicted --subresource=status --type=merge -p "$(cat <<EOF
{"status": {"phase": "Failed", "reason": "Evicted", "message": "$EVICTION"}}
EOF
)" || return 1
  # Evicted as a kubelet leaves it: the container's status too, the one the kubelet makes up for a container
  # gone with its pod (pkg/kubelet/kubelet_pods.go: ContainerStatusUnknown, exit code 137). Not an OOM kill.
  kc -n "$NS" patch pod evicted-killed --subresource=status --type=merge -p "$(cat <<EOF
{"status": {"phase": "Failed", "reason": "Evicted", "message": "$EVICTION",
  "containerStatuses": [{"name": "train", "image": "registry.invalid/train:1", "imageID": "", "ready": false,
  "started": false, "restartCount": 0,
  "state": {"terminated": {"reason": "ContainerStatusUnknown", "exitCode": 137, "startedAt": "$now", "finishedAt": "$now",
    "message": "The container could not be located when the pod was terminated"}}}]}}
EOF
)" || return 1
  kc -n "$NS" get pods oom evicted evicted-killed -o jsonpath='{range .items[*]}{.metadata.name}: phase={.status.phase} reason={.status.reason} qos={.status.qosClass} lastState={.status.containerStatuses[0].lastState.terminated.reason}{"\n"}{end}'
  [[ $(kc -n "$NS" get pod oom -o jsonpath='{.status.containerStatuses[0].lastState.terminated.reason}') == OOMKilled &&
    $(kc -n "$NS" get pod evicted -o jsonpath='{.status.phase}/{.status.reason}') == Failed/Evicted ]] ||
    { echo "the status written is not the status stored"; return 1; }
}

# unschedulable: every pending pod has PodScheduled=False (the real scheduler), within SCHED_WAIT seconds.
unschedulable() {
  local start=$SECONDS p st waiting
  while :; do
    waiting=()
    for p in "${PENDING[@]}"; do
      st=$(kc -n "$NS" get pod "$p" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}') || return 1
      [[ $st == False ]] || waiting+=("$p")
    done
    ((${#waiting[@]} == 0)) && break
    ((SECONDS - start < SCHED_WAIT)) || { echo "still not PodScheduled=False after ${SCHED_WAIT}s: ${waiting[*]}"; kc -n "$NS" get pods -o wide; return 1; }
    sleep 0.5
  done
  for p in "${PENDING[@]}"; do
    echo "$p: $(kc -n "$NS" get pod "$p" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
  done
  echo "after ~$((SECONDS - start))s"
}

# quota_ready: the quota controller has filled in the quota's status (before it, the API server refuses a GPU
# pod with "status unknown for quota", not "exceeded quota").
quota_ready() {
  local start=$SECONDS hard
  kc -n "$QUOTA_NS" create -f "$WORK/quota.yaml" || return 1
  while :; do
    hard=$(kc -n "$QUOTA_NS" get resourcequota gpu-quota -o jsonpath='{.status.hard.requests\.nvidia\.com/gpu}')
    [[ -n $hard ]] && { echo "status.hard requests.nvidia.com/gpu=$hard after ~$((SECONDS - start))s"; return 0; }
    ((SECONDS - start < EVENT_WAIT)) || { echo "the quota has no status after ${EVENT_WAIT}s"; return 1; }
    sleep 0.5
  done
}

# failed_create NS KIND NAME: wait for a FailedCreate event about KIND/NAME; prints its message.
failed_create() {
  local ns=$1 kind=$2 name=$3 start=$SECONDS msg
  while :; do
    msg=$(kc -n "$ns" get events --field-selector "involvedObject.kind=$kind,involvedObject.name=$name,reason=FailedCreate" \
      -o jsonpath='{range .items[*]}{.message}{"\n"}{end}')
    [[ -n $msg ]] && { echo "$msg"; echo "after ~$((SECONDS - start))s"; return 0; }
    ((SECONDS - start < EVENT_WAIT)) || { echo "no FailedCreate event about $kind/$name after ${EVENT_WAIT}s"; kc -n "$ns" get events; return 1; }
    sleep 0.5
  done
}

job_refused() {
  kc -n "$QUOTA_NS" create -f "$WORK/job.yaml" || return 1
  failed_create "$QUOTA_NS" Job over-quota
}

# deployment_made: the Deployment (replicas 0) and its ReplicaSet, made while the webhooks are off.
deployment_made() {
  local start=$SECONDS
  kc -n "$NS" create -f "$WORK/deployment.yaml" || return 1
  while :; do
    RS=$(kc -n "$NS" get replicasets -l app=refused -o jsonpath='{.items[0].metadata.name}' 2>/dev/null)
    [[ -n $RS ]] && { echo "replicaset/$RS after ~$((SECONDS - start))s"; return 0; }
    ((SECONDS - start < EVENT_WAIT)) || { echo "no ReplicaSet of deployment/refused after ${EVENT_WAIT}s"; return 1; }
    sleep 0.5
  done
}

webhooks_back() {   # as they were (run.sh's cluster: on)
  "$HERE/cluster.sh" webhooks "$WEBHOOKS_WERE"
}

# deployment_refused: scaled to 1 (deployments/scale does not reach gpuadmit), the ReplicaSet's pod is denied.
deployment_refused() {
  kc -n "$NS" scale deployment refused --replicas=1 || return 1
  failed_create "$NS" ReplicaSet "$RS"
}

# run_why NAME WANT-RC ARGS...: gpuadmit why ARGS --kubeconfig ..., stdout in $WORK/NAME.out; its exit
# status must be WANT-RC.
run_why() {
  local name=$1 want=$2 rc=0; shift 2
  echo "+ gpuadmit why $* --kubeconfig $KUBECONFIG"
  timeout -k 5 120 "$BIN" why "$@" --kubeconfig "$KUBECONFIG" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
  cat "$WORK/$name.out" "$WORK/$name.err"
  echo "(exit $rc)"
  ((rc == want)) || { echo "want exit $want"; return 1; }
}

# said NS KIND NAME: what Kubernetes says of the object, as JSON in $WORK/said.json: the object and the
# events about it.
said() {
  kc -n "$1" get "$2" "$3" -o json >"$WORK/object.json" &&
    kc -n "$1" get events --field-selector "involvedObject.kind=$2,involvedObject.name=$3" -o json >"$WORK/events.json"
}

# why_case CASE NS KIND NAME [OWNED-KIND OWNED-NAME]: gpuadmit why KIND/NAME -o json and text; python3 judges
# the JSON against what Kubernetes says of the object (or of OWNED-KIND/OWNED-NAME, for a FailedCreate event of
# the ReplicaSet a Deployment controls), then the text must show the same quote, a Fix: and the Rule:.
# The job and replicaset controllers retry a refused create with backoff (1, 2, 4, 8, 16 s ... after the
# first, on 1.35 and 1.37 alike), each time a new FailedCreate event naming a new pod, and gpuadmit why
# quotes the newest: when the text differs and the object got a new event between the two runs, both runs
# are made again (at most 3 times). A text that differs while no event came in fails at once.
why_case() {
  local attempt rc n0 n1
  for attempt in 1 2 3; do
    n0=$(event_count "$2" "${5:-$3}" "${6:-$4}")
    rc=0; why_case_once "$@" || rc=$?
    ((rc == 2)) || return "$rc"
    n1=$(event_count "$2" "${5:-$3}" "${6:-$4}")
    ((n1 > n0)) || return 1
    echo "(attempt $attempt: the text quotes another event; ${5:-$3}/${6:-$4} got $((n1 - n0)) new event(s) between the runs: again)"
  done
  return 1
}

event_count() {   # NS KIND NAME
  kc -n "$1" get events --field-selector "involvedObject.kind=$2,involvedObject.name=$3" -o name | wc -l
}

# why_case_once: one JSON run and one text run; 1: the JSON is wrong, 2: the text is.
why_case_once() {
  local case=$1 ns=$2 kind=$3 name=$4 quote rule
  run_why "$case.json" 0 "${kind,,}/$name" -n "$ns" -o json || return 1
  said "$ns" "${5:-$kind}" "${6:-$name}" || return 1
  python3 - "$WORK/$case.json.out" "$WORK/object.json" "$WORK/events.json" "$case" "$ns" "$EVICTION" <<'PY' || return 1
import json, sys
path, object_path, events_path, case, ns, eviction = sys.argv[1:]
doc = json.load(open(path))
obj = json.load(open(object_path))
events = json.load(open(events_path))["items"]
causes = doc.get("causes", [])
problems = []

def cause(title_prefix):
    for c in causes:
        if c["title"].startswith(title_prefix):
            return c
    problems.append(f"no cause titled {title_prefix!r}; causes: {[c['title'] for c in causes]}")
    return None

def ruled(rule, where="rule"):
    found = [c for c in causes if c["rule"].startswith(rule + " ") or c["rule"] == rule]
    if not found:
        problems.append(f"no cause with rule {rule}; rules: {[c['rule'] for c in causes]}")
        return None
    return found[0]

def want_in(text, part, what):
    if part not in text:
        problems.append(f"{what} does not say {part!r}: {text!r}")

def want_state(state):
    if doc.get("state") != state:
        problems.append(f"state {doc.get('state')!r}, want {state!r}")

kind = obj["kind"].lower()
if doc.get("object") != f"{kind}/{ns}/{obj['metadata']['name']}" and case != "deployment":
    problems.append(f"object {doc.get('object')!r}, want {kind}/{ns}/{obj['metadata']['name']}")

# What the scheduler said: the PodScheduled condition's message and its FailedScheduling events.
scheduler_said = [c.get("message", "") for c in obj.get("status", {}).get("conditions", [])
                  if c.get("type") == "PodScheduled" and c.get("status") == "False"]
scheduler_said += [e.get("message", "") for e in events if e.get("reason") == "FailedScheduling"]
created_said = [e.get("message", "") for e in events if e.get("reason") == "FailedCreate"]

def not_scheduled(part):
    want_state("Pending")
    c = cause("not scheduled")
    if c is None:
        return
    if c["quote"] not in scheduler_said:
        problems.append(f"quote {c['quote']!r} is not what the scheduler said: {scheduler_said}")
    want_in(c["quote"], part, "the quote")
    print("Kubernetes says:", c["quote"])

if case == "insufficient":
    not_scheduled("Insufficient nvidia.com/gpu")
    c = ruled("node-fit")
    if c:
        want_in(c["explanation"], "no node can run this pod", "node-fit's explanation")
        want_in(c["explanation"], "the pod asks for 16", "node-fit's explanation")
elif case == "untolerated":
    not_scheduled("untolerated taint")
    c = ruled("gpu-tolerations")
    if c:
        want_in(c["fix"], "nvidia.com/gpu", "gpu-tolerations' fix")
elif case == "selector":
    not_scheduled("didn't match Pod's node affinity/selector")
    c = ruled("node-fit")
    if c:
        want_in(c["explanation"], "nodeSelector gpuadmit.io/e2e-pool=nowhere", "node-fit's explanation")
elif case == "cordon":
    not_scheduled("were unschedulable")
    c = ruled("node-fit")
    if c:
        want_in(c["explanation"], "1 node is cordoned", "node-fit's explanation")
elif case == "oom":
    want_state("Running")
    c = cause("OOMKilled")
    if c:
        if c["quote"] != 'container "train": terminated OOMKilled, exit code 137':
            problems.append(f"quote {c['quote']!r}, want the container's terminated state")
        if not c["rule"].startswith("memory-floor"):
            problems.append(f"rule {c['rule']!r}, want memory-floor")
        want_in(c["explanation"], "88Gi", "memory-floor's explanation")
        want_in(c["fix"], "88Gi", "memory-floor's fix")
        print("Kubernetes says:", c["quote"])
elif case == "evicted":
    want_state("Failed (Evicted)")
    c = cause("evicted")
    if c:
        if c["quote"] != eviction:
            problems.append(f"quote {c['quote']!r}, want the eviction message {eviction!r}")
        if not c["rule"].startswith("guaranteed-qos"):
            problems.append(f"rule {c['rule']!r}, want guaranteed-qos")
        want_in(c["explanation"], "Burstable", "the explanation")
        want_in(c["fix"], "memory request", "guaranteed-qos' fix")
        print("Kubernetes says:", c["quote"])
elif case == "evicted-killed":
    want_state("Failed (Evicted)")
    c = cause("evicted")
    if c:
        if c["quote"] != eviction:
            problems.append(f"quote {c['quote']!r}, want the eviction message {eviction!r}")
        if not c["rule"].startswith("guaranteed-qos"):
            problems.append(f"rule {c['rule']!r}, want guaranteed-qos")
        print("Kubernetes says:", c["quote"])
    if any(x["title"] == "OOMKilled" for x in causes):
        problems.append("an OOMKilled cause: the container's exit code 137 is the eviction's kill "
                        "(reason ContainerStatusUnknown), not an OOM kill")
elif case in ("quota", "deployment"):
    want_state("no pods")
    owner = "job over-quota" if case == "quota" else "replicaset " + obj["metadata"]["name"]
    c = cause("no pods: " + owner + " could not create them")
    if c:
        if c["quote"] not in created_said:
            problems.append(f"quote {c['quote']!r} is not one of the FailedCreate events: {created_said}")
        if case == "quota":
            want_in(c["quote"], "exceeded quota: gpu-quota", "the quote")
            if not c["rule"].startswith("gpu-quota"):
                problems.append(f"rule {c['rule']!r}, want gpu-quota")
        else:
            want_in(c["quote"], "admission webhook", "the quote")
            want_in(c["quote"], "denied the request: gpuadmit denied pod", "the quote")
            if not c["rule"].startswith("gpuadmit"):
                problems.append(f"rule {c['rule']!r}, want gpuadmit (the rule named in the message)")
        print("Kubernetes says:", c["quote"])
    # The template, as admission judges it now.
    t = [x for x in causes if x["title"].startswith("its pod template")]
    want_rule = "gpu-quota" if case == "quota" else "node-fit"
    if not any(x["rule"].startswith(want_rule) for x in t):
        problems.append(f"no template cause with rule {want_rule}: {[(x['title'], x['rule']) for x in t]}")
else:
    problems.append(f"unknown case {case}")

for c in causes:
    print(f"cause: {c['title']} | rule: {c['rule']}")
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
PY
  # The text output: the same quote, a Fix: and the Rule: of the cause quoted.
  local -a quoted
  mapfile -t quoted < <(python3 -c '
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["causes"] if c["quote"]][0]
print(json.dumps(c["quote"])); print(json.dumps(c["rule"]))' "$WORK/$case.json.out")
  ((${#quoted[@]} == 2)) || { echo "no cause with a quote"; return 1; }
  quote=${quoted[0]} rule=${quoted[1]}
  run_why "$case.text" 0 "${kind,,}/$name" -n "$ns" >/dev/null || { cat "$WORK/$case.text.out" "$WORK/$case.text.err"; return 1; }
  python3 - "$WORK/$case.text.out" "$quote" "$rule" <<'PY' || return 2
import json, sys
text, quote, rule = open(sys.argv[1]).read(), json.loads(sys.argv[2]), json.loads(sys.argv[3])
lines = text.splitlines()
bad = []
# Verbatim: a quote of several lines (a webhook's denial) keeps every line, its later lines indented under
# the first.
shown = quote.replace("\n", "\n   ")
if "\n   Kubernetes says: " + shown + "\n" not in "\n" + text:
    bad.append(f"no '   Kubernetes says: {shown}' (verbatim, later lines indented)")
if "   Fix:" not in lines:
    bad.append("no '   Fix:' line")
if rule and "   Rule: " + rule not in lines:
    bad.append(f"no line '   Rule: {rule}'")
print(text)
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

# kubectl's plugin mechanism: kubectl-gpuadmit (a symlink to BIN) first on PATH; `kubectl gpuadmit why ...`
# passes the arguments after the plugin's name to it.
plugin_why() {
  local plugins=$WORK/plugins rc=0
  mkdir -p "$plugins" && ln -sf "$BIN" "$plugins/kubectl-gpuadmit" || return 1
  run_why direct 0 oom -n "$NS" || return 1
  echo "+ kubectl gpuadmit why oom -n $NS --kubeconfig $KUBECONFIG"
  PATH="$plugins:$PATH" timeout -k 5 120 "$GPUADMIT_E2E_KUBECTL" gpuadmit why oom -n "$NS" --kubeconfig "$KUBECONFIG" \
    >"$WORK/plugin.out" 2>"$WORK/plugin.err" || rc=$?
  cat "$WORK/plugin.out" "$WORK/plugin.err"
  echo "(exit $rc)"
  ((rc == 0)) || { echo "want exit 0"; return 1; }
  diff -u "$WORK/direct.out" "$WORK/plugin.out" || { echo "kubectl gpuadmit why printed something else than gpuadmit why"; return 1; }
  grep -q '^   Kubernetes says: container "train": terminated OOMKilled, exit code 137$' "$WORK/plugin.out" ||
    { echo "want the OOMKilled quote"; return 1; }
}

plugin_list() {
  local plugins=$WORK/plugins rc=0
  echo "+ kubectl plugin list"
  PATH="$plugins:$PATH" timeout -k 5 60 "$GPUADMIT_E2E_KUBECTL" plugin list >"$WORK/list.out" 2>&1 || rc=$?
  cat "$WORK/list.out"
  echo "(exit $rc; other kubectl-* files on PATH may make it warn and exit 1)"
  grep -qxF "$plugins/kubectl-gpuadmit" "$WORK/list.out" || { echo "want the line $plugins/kubectl-gpuadmit"; return 1; }
}

# --- the checks ------------------------------------------------------------------------------------------
t_start=$SECONDS
check "the cluster's webhooks turned off (cluster.sh webhooks off)" webhooks_off || { summary; exit 1; }
check "namespaces $NS and $QUOTA_NS created" make_namespaces || { summary; exit 1; }
check "node $NODE (1 GPU, cordoned) created" make_node || { summary; exit 1; }
check "pods created with no webhook: 4 to stay Pending, 3 bound to gpu-a100-0" create_pods || { summary; exit 1; }
check "... stored as written: untolerated has no GPU toleration, evicted Burstable" stored_as_written
check "status written as a kubelet would: oom OOMKilled (exit 137), evicted(-killed) Failed/Evicted" write_status
check "the scheduler leaves the 4 Pending (PodScheduled=False within ${SCHED_WAIT}s)" unschedulable
if ((CONTROLLERS)); then
  check "ResourceQuota requests.nvidia.com/gpu: 1 in $QUOTA_NS, its status filled in" quota_ready &&
    check "Job over-quota (2 GPUs): the job controller's FailedCreate (exceeded quota)" job_refused
  check "Deployment refused (16 GPUs, replicas 0) and its ReplicaSet made" deployment_made
else
  log "no kube-controller-manager in this cluster (GPUADMIT_E2E_CONTROLLERS=0): the quota and Deployment checks are skipped"
fi

check "why sixteen-gpus: the scheduler quoted (Insufficient), node-fit" why_case insufficient "$NS" Pod sixteen-gpus
check "why untolerated: the scheduler quoted (untolerated taint), gpu-tolerations" why_case untolerated "$NS" Pod untolerated
check "why no-such-pool: the scheduler quoted (selector), node-fit" why_case selector "$NS" Pod no-such-pool
check "why on-cordoned-node: the scheduler quoted (unschedulable), node-fit" why_case cordon "$NS" Pod on-cordoned-node
check "why oom: terminated OOMKilled, exit code 137; memory-floor 88Gi" why_case oom "$NS" Pod oom
check "why evicted: the eviction message quoted; guaranteed-qos" why_case evicted "$NS" Pod evicted
check "why evicted-killed (its container terminated, exit code 137): evicted, not OOMKilled" why_case evicted-killed "$NS" Pod evicted-killed
check "why no-such-pod: exit 2" run_why missing 2 no-such-pod -n "$NS"
if ((CONTROLLERS)); then
  check "why job/over-quota: the Job's FailedCreate quoted (exceeded quota); gpu-quota" why_case quota "$QUOTA_NS" Job over-quota
fi

check "the cluster's webhooks back on (cluster.sh webhooks on)" webhooks_back
if ((CONTROLLERS)) && [[ -n ${RS:-} ]]; then
  if [[ $WEBHOOKS_WERE == on ]]; then
    check "scaled to 1: gpuadmit denies the ReplicaSet's pod (its FailedCreate event)" deployment_refused &&
      check "why deployment/refused: the ReplicaSet's FailedCreate quoted; node-fit" why_case deployment "$NS" Deployment refused ReplicaSet "$RS"
  else
    log "the cluster's webhooks were off before this suite: the Deployment's denial is not checked"
  fi
fi
check "kubectl gpuadmit why (plugin on PATH): the same output as gpuadmit why" plugin_why
check "kubectl plugin list shows kubectl-gpuadmit" plugin_list

log "done in $((SECONDS - t_start))s"
summary
