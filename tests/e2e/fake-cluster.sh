#!/usr/bin/env bash
# Fake GPU cluster on top of cluster.sh's control plane: Node objects with status (no kubelet) and a
# scheduling smoke test against the real kube-scheduler.
#
#   tests/e2e/fake-cluster.sh nodes   create (or refresh) the nodes of manifests/nodes.yaml:
#                                       gpu-a100-0 (8x A100-80GB), gpu-t4-0 (1x T4), both tainted
#                                       nvidia.com/gpu=present:NoSchedule; cpu-0 (no GPU, no taint);
#                                       gpu-mi300x-0/1 (4x amd.com/gpu, custom taint); StorageClass standard
#   tests/e2e/fake-cluster.sh smoke   nodes + check that the scheduler binds/refuses pods as a real
#                                       cluster would; prints "smoke: N passed, N failed"
#
# Uses $KUBECONFIG and $GPUADMIT_E2E_KUBECTL when set (eval "$(cluster.sh up)" sets both), else
# reads them from the running cluster's state dir.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NODES=$HERE/manifests/nodes.yaml
STATE=${GPUADMIT_E2E_STATE:-/tmp/gpuadmit-e2e}

log() { printf '%s fake-cluster: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if [[ -z ${KUBECONFIG:-} || -z ${GPUADMIT_E2E_KUBECTL:-} ]]; then
  [[ -f $STATE/cluster.env ]] || die "no KUBECONFIG/GPUADMIT_E2E_KUBECTL and no running cluster in $STATE (run cluster.sh up)"
  # shellcheck source=/dev/null
  source "$STATE/cluster.env"
fi
kubectl() { "$GPUADMIT_E2E_KUBECTL" "$@"; }

# The nodes of the manifest and what the check expects of each (name -> allocatable nvidia.com/gpu).
declare -A WANT_GPUS=([gpu-a100-0]=8 [gpu-t4-0]=1 [cpu-0]="" [gpu-mi300x-0]="" [gpu-mi300x-1]="")

# Status given on create is kept (Node strategy PrepareForCreate). On update the main resource
# ignores status, so an existing node gets spec/labels via `replace` and status via the status
# subresource (kubectl >= 1.24 has --subresource).
cmd_nodes() {
  local err
  if ! err=$(kubectl create -f "$NODES" 2>&1 >/dev/null); then
    # Anything other than "already exists" (e.g. validation) is a real error.
    if grep -v 'AlreadyExists\|already exists' <<<"$err" | grep -q .; then die "creating nodes failed: $err"; fi
    log "some nodes existed: replacing spec/labels and status"
    kubectl replace -f "$NODES" >/dev/null
    kubectl replace --subresource=status -f "$NODES" >/dev/null
  fi
  local n gpus
  for n in "${!WANT_GPUS[@]}"; do
    gpus=$(kubectl get node "$n" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')
    if [[ $gpus != "${WANT_GPUS[$n]}" ]]; then
      # Not expected with kube-apiserver 1.35 or 1.37 (status is kept on create); kept as a fallback.
      log "node $n has allocatable nvidia.com/gpu='$gpus' after create; setting status via the subresource"
      kubectl replace --subresource=status -f "$NODES" >/dev/null
      gpus=$(kubectl get node "$n" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')
      [[ $gpus == "${WANT_GPUS[$n]}" ]] || die "node $n: allocatable nvidia.com/gpu='$gpus', want '${WANT_GPUS[$n]}'"
    fi
  done
  kubectl apply -f "$HERE/manifests/storage.yaml" >/dev/null || die "creating the storage class failed"
  log "nodes ready: $(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}({.status.allocatable.nvidia\.com/gpu}) {end}')"
}

# --- smoke test ----------------------------------------------------------------------------------
PASSED=0 FAILED=0
pass() { PASSED=$((PASSED + 1)); log "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); log "FAIL: $*"; }

SUFFIX=$(date +%s)-$RANDOM
PODS=()
# Pods bound to a fake node never finish a graceful delete (no kubelet): force them.
cleanup_pods() {
  ((${#PODS[@]})) || return 0
  kubectl delete pod -n default "${PODS[@]}" --force --grace-period=0 --ignore-not-found >/dev/null 2>&1 || true
}

# make_pod NAME GPUS TOLERATE: a pod that never runs (no kubelet pulls the image).
make_pod() {
  local name=$1 gpus=$2 tolerate=$3 limits="" tol=""
  [[ $gpus == 0 ]] || limits="limits: {nvidia.com/gpu: \"$gpus\"}"
  [[ $tolerate == yes ]] && tol='tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]'
  PODS+=("$name")
  kubectl create -n default -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $name, labels: {app.kubernetes.io/part-of: gpuadmit-e2e-smoke}}
spec:
  terminationGracePeriodSeconds: 0
  $tol
  containers:
  - name: main
    image: registry.invalid/never-pulled:0
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      $limits
EOF
}

pod_field() { kubectl get pod -n default "$1" -o jsonpath="$2"; }

cmd_smoke() {
  cmd_nodes
  trap cleanup_pods EXIT

  local p n msg
  # 1. A plain pod can only go to the untainted CPU node.
  p=smoke-plain-$SUFFIX
  make_pod "$p" 0 no
  if kubectl wait -n default --for=condition=PodScheduled "pod/$p" --timeout=60s >/dev/null 2>&1 &&
    n=$(pod_field "$p" '{.spec.nodeName}') && [[ $n == cpu-0 ]]; then
    pass "plain pod bound to cpu-0"
  else
    fail "plain pod not bound to cpu-0 (nodeName='$(pod_field "$p" '{.spec.nodeName}')')"
  fi

  # 2. A GPU pod without toleration fits nowhere: GPU nodes are tainted, cpu-0 has no GPUs.
  p=smoke-gpu-untolerated-$SUFFIX
  make_pod "$p" 1 no
  if kubectl wait -n default --for=condition=PodScheduled=False "pod/$p" --timeout=60s >/dev/null 2>&1; then
    msg=$(pod_field "$p" '{.status.conditions[?(@.type=="PodScheduled")].message}')
    n=$(pod_field "$p" '{.spec.nodeName}')
    if [[ -z $n && $msg == *"untolerated taint"* ]]; then
      pass "GPU pod without toleration unschedulable: $msg"
    else
      fail "GPU pod without toleration: nodeName='$n' message='$msg'"
    fi
  else
    fail "GPU pod without toleration: no PodScheduled=False condition within 60s"
  fi

  # 3. With the toleration it lands on a GPU node.
  p=smoke-gpu-tolerated-$SUFFIX
  make_pod "$p" 1 yes
  if kubectl wait -n default --for=condition=PodScheduled "pod/$p" --timeout=60s >/dev/null 2>&1 &&
    n=$(pod_field "$p" '{.spec.nodeName}') && [[ $n == gpu-a100-0 || $n == gpu-t4-0 ]]; then
    pass "tolerating GPU pod bound to $n"
  else
    fail "tolerating GPU pod not bound to a GPU node (nodeName='$(pod_field "$p" '{.spec.nodeName}')')"
  fi

  # 4. Nodes keep Ready=True and only their own taints: no node-lifecycle controller runs, and
  #    TaintNodesByCondition is disabled in the apiserver.
  local bad="" ready taints
  for n in "${!WANT_GPUS[@]}"; do
    ready=$(kubectl get node "$n" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')
    taints=$(kubectl get node "$n" -o jsonpath='{range .spec.taints[*]}{.key}={.value}:{.effect} {end}')
    taints=${taints% }
    case $n in
      cpu-0) [[ $ready == True && -z $taints ]] || bad+=" $n(ready=$ready taints=$taints)" ;;
      gpu-mi300x-*) [[ $ready == True && $taints == "example.com/accelerator=mi300x:NoSchedule" ]] || bad+=" $n(ready=$ready taints=$taints)" ;;
      *) [[ $ready == True && $taints == "nvidia.com/gpu=present:NoSchedule" ]] || bad+=" $n(ready=$ready taints=$taints)" ;;
    esac
  done
  if [[ -z $bad ]]; then pass "nodes still Ready with only their own taints"; else fail "nodes changed:$bad"; fi

  echo "smoke: $PASSED passed, $FAILED failed"
  ((FAILED == 0))
}

case ${1:-nodes} in
  nodes) cmd_nodes ;;
  smoke) cmd_smoke ;;
  *) echo "usage: $0 [nodes|smoke]" >&2; exit 2 ;;
esac
