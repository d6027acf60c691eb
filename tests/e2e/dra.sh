#!/usr/bin/env bash
# DRA (Dynamic Resource Allocation) on the real control plane (issue #19 item 7): every silent failure Kubernetes
# gives a pod that asks for GPUs through ResourceClaims, first without gpuadmit (what the real kube-scheduler and
# the resourceclaim controller of kube-controller-manager 1.37 really do), then with gpuadmit (its verdict at
# `kubectl create`); plus the DRA pods that schedule, which gpuadmit must allow (a 1-GPU claim fixed to Guaranteed),
# and KEP-5004: a plain `nvidia.com/gpu: 2` served by the devices of a DeviceClass with extendedResourceName on
# nodes whose allocatable has no nvidia.com/gpu at all.
#
#   tests/e2e/dra.sh GPUADMIT_BIN
#
# The control plane: with GPUADMIT_E2E_STATE naming a running cluster.sh cluster that has gpuadmit (run.sh calls
# this script after why.sh, on its cluster, which tests/chart/run.sh's e2e phase also uses; or yours after
# `eval "$(GPUADMIT_E2E_CONTROLLERS=1 GPUADMIT_BIN=... cluster.sh up)"`), that one is reused. Otherwise it starts its
# own (cluster.sh up with GPUADMIT_BIN and GPUADMIT_E2E_CONTROLLERS=1, state /tmp/gpuadmit-dra) and stops it on
# exit. It needs kube-controller-manager with the resourceclaim controller (cluster.sh runs it whenever it runs
# kube-controller-manager) and, for the two KEP-5004 pods, the feature gate DRAExtendedResource (GA and locked on in
# 1.37; alpha and off by default in 1.35, where GPUADMIT_E2E_FEATURE_GATES=DRAExtendedResource=true turns it on):
# without the gate those checks print SKIP.
#
# 1. The fake DRA cluster of dra/ (issue #19's, copied from /work/shared/reference/dra-fake-cluster/): nodes
#    dra-a100-0 (3 A100 + 7 MIG 1g.10gb of a fourth) and dra-h100-0 (8 H100), tainted nvidia.com/gpu like the other
#    GPU nodes, status given on create (kept: Node PrepareForCreate), no nvidia.com/gpu in allocatable (no device
#    plugin); DeviceClasses gpu.nvidia.com (extendedResourceName nvidia.com/gpu) and mig.nvidia.com; one
#    ResourceSlice per node. Applied at the start and deleted on exit: while gpu.nvidia.com maps nvidia.com/gpu,
#    any plain GPU pod of another suite could be placed on a DRA node, so this suite runs last (run.sh).
# 2. Without gpuadmit: the cluster's webhook configurations deleted (cluster.sh webhooks off, as why.sh does; this
#    works for run.sh's template and for the chart's), namespace e2e-dra-XXXX-without with the ResourceClaimTemplates
#    of dra/02-templates.yaml and the ResourceClaim shared-gpu (dra/04-shared-claim.yaml); every pod of
#    dra/03-pods.yaml created alone, and the Deployment shared-claim (2 replicas, one resourceClaimName). Checked:
#    each is created (exit 0, no warning), then what Kubernetes says of it (the check names quote it). The namespace
#    is emptied (pods force-deleted, claims deleted: their devices freed) before step 3.
# 3. With gpuadmit: the configurations put back, namespace e2e-dra-XXXX-with with the same templates and claim,
#    gpuadmit's cluster view waited for (its /metrics: the nodes, and each DRA kind it watches), then each pod again:
#    a claim or template it cannot see created with a warning (never denied: it may be created a moment later),
#    the other silent failures denied at `kubectl create` with the phrases agreed with the dra-claims rule, the pods that
#    schedule allowed and scheduled (the 1-GPU one Guaranteed), the Deployment allowed with a `shared by` warning.
#
# Checks (stdout, one PASS/FAIL/SKIP line each, then `dra: N passed, M failed` (`, K skipped`); exit 0 iff M is 0).
# On exit it deletes both namespaces (pods force-deleted) and the DRA nodes, ResourceSlices and DeviceClasses, and
# puts the webhooks back if they are still off (cluster.sh webhooks on).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DRA=$HERE/dra
BIN=${1:?usage: tests/e2e/dra.sh GPUADMIT_BIN}
[[ -x $BIN ]] || { echo "FAIL  setup: $BIN is not an executable"; echo "dra: 0 passed, 1 failed"; exit 1; }
BIN=$(readlink -f "$BIN")
SCHED_WAIT=60   # seconds the scheduler may take to decide on a pod
SILENT_AGE=8    # a pod Kubernetes is silent about must be this old (seconds) before "no condition" is believed
EVENT_WAIT=60   # seconds a controller's event may take

log() { printf '%s dra: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

WORK=$(mktemp -d /tmp/gpuadmit-dra.XXXXXX)
OWN_CLUSTER=0
WEBHOOKS_WERE=   # the cluster's webhooks (on|off) before this suite turned them off; empty: not touched
MADE_NS=()
MADE_DRA=0
# shellcheck disable=SC2034 # counted by lib/standalone.sh
PASSED=0 FAILED=0
SKIPPED=0

# empty_namespace NS: the Deployment, then (bounded, 30 s) every pod force-deleted (no kubelet confirms a graceful
# delete; a pod left Terminating keeps its claim reserved) and every ResourceClaim deleted, until none is left.
empty_namespace() {
  local ns=$1 left start=$SECONDS
  kc -n "$ns" delete deployments --all --wait=false >/dev/null 2>&1
  while left=$(kc get -n "$ns" pods,replicasets,resourceclaims -o name 2>/dev/null) && [[ -n $left ]]; do
    ((SECONDS - start < 30)) || { echo "still left in $ns after 30s: ${left//$'\n'/ }"; return 1; }
    kc -n "$ns" delete pods --all --force --grace-period=0 --wait=false >/dev/null 2>&1
    kc -n "$ns" delete replicasets,resourceclaims --all --wait=false >/dev/null 2>&1
    sleep 0.3
  done
  echo "$ns: no pods, ReplicaSets or ResourceClaims left after ~$((SECONDS - start))s"
}

# fd 3/4: the real stdout/stderr, for the trap (a signal may come while a check's output goes to its log).
exec 3>&1 4>&2
cleanup() {
  local rc=$? ns
  trap - EXIT INT TERM
  exec 1>&3 2>&4
  if ((!OWN_CLUSTER)) && [[ -n ${GPUADMIT_E2E_KUBECTL:-} ]]; then
    # A shared cluster is left as found.
    for ns in "${MADE_NS[@]}"; do
      empty_namespace "$ns" >"$WORK/empty.log" 2>&1 || { log "WARNING: $(<"$WORK/empty.log")"; }
      kc delete namespace "$ns" --wait=false >/dev/null 2>&1
    done
    if ((MADE_DRA)); then
      kc delete -f "$DRA/01-slices.yaml" -f "$DRA/00-cluster.yaml" --ignore-not-found --wait=false >/dev/null 2>&1 ||
        log "WARNING: deleting the DRA nodes, ResourceSlices and DeviceClasses failed"
    fi
    restore_webhooks || rc=1
  fi
  standalone_finish "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck disable=SC2034 # read by lib/standalone.sh
SUITE=dra
# shellcheck source=lib/standalone.sh
source "$HERE/lib/standalone.sh"

summary() {   # lib/standalone.sh's, with the skipped count
  echo "$SUITE: $PASSED passed, $FAILED failed$( ((SKIPPED)) && echo ", $SKIPPED skipped")"
  ((FAILED == 0))
}
skip() {   # skip NAME REASON
  SKIPPED=$((SKIPPED + 1))
  printf 'SKIP  %-60s (%s)\n' "$1" "$2"
}

# --- the control plane -----------------------------------------------------------------------------------
# Its own control plane, when it starts one, runs kube-controller-manager: the resourceclaim controller makes a
# pod's claims from its templates.
attach_control_plane /tmp/gpuadmit-dra 1
HEX=$(printf '%04x' $((RANDOM % 65536)))
NS_OFF=e2e-dra-$HEX-without
NS_ON=e2e-dra-$HEX-with
EXT=0   # DRAExtendedResource on (set by control_plane_ready)

# The pods of dra/03-pods.yaml, one file each ($WORK/pods/NAME.yaml), so that each create has its own verdict.
mkdir -p "$WORK/pods"
awk -v dir="$WORK/pods" '
  function flush() { if (name != "") { printf "%s", doc > (dir "/" name ".yaml"); close(dir "/" name ".yaml") } doc = ""; name = "" }
  /^---/ { flush(); next }
  /^#/ && doc == "" { next }
  { doc = doc $0 "\n" }
  match($0, /^metadata: \{name: [a-z0-9-]+\}/) { name = substr($0, 18, RLENGTH - 18) }
  END { flush() }' "$DRA/03-pods.yaml"
PODS=(p-missing-claim p-missing-template p-typo-class p-sixteen p-h200 p-bad-attr p-cc9 p-two-mig p-one-gpu p-ext-2gpu p-ext-9gpu)
for p in "${PODS[@]}"; do
  [[ -s $WORK/pods/$p.yaml ]] || { echo "FAIL  setup: no pod $p in $DRA/03-pods.yaml"; FAILED=1; summary; exit 1; }
done

# --- helpers -----------------------------------------------------------------------------------------------
# sched NS POD FIELD: a field of the pod's PodScheduled condition (status, reason, message).
sched() { kc -n "$1" get pod "$2" -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].$3}"; }

# wait_sched NS POD True|False: until PodScheduled has that status (bounded).
wait_sched() {
  local start=$SECONDS st
  while :; do
    st=$(sched "$1" "$2" status) || return 1
    [[ $st == "$3" ]] && { echo "pod/$2: PodScheduled=$3 after ~$((SECONDS - start))s"; return 0; }
    ((SECONDS - start < SCHED_WAIT)) || { echo "pod/$2: PodScheduled='$st' after ${SCHED_WAIT}s, want $3"; kc -n "$1" get pod "$2" -o yaml; return 1; }
    sleep 0.3
  done
}

# events NS POD: "reason [component] message" of each event about the pod.
events() {
  kc -n "$1" get events --field-selector "involvedObject.kind=Pod,involvedObject.name=$2" \
    -o jsonpath='{range .items[*]}{.reason} [{.reportingComponent}{.source.component}] {.message}{"\n"}{end}'
}

# create NS FILE: kubectl create, stdout/stderr/exit in $WORK/create.{out,err,rc} and shown.
create() {
  local rc=0
  echo "+ kubectl -n $1 create -f $(basename "$2")"
  (cd "$(dirname "$2")" && kc -n "$1" create -f "$(basename "$2")") >"$WORK/create.out" 2>"$WORK/create.err" || rc=$?
  echo "$rc" >"$WORK/create.rc"
  cat "$WORK/create.out" "$WORK/create.err"
  echo "(exit $rc)"
  return 0
}

# claim_devices NS CLAIM: "node: device device ..." of an allocated claim.
claim_devices() {
  kc -n "$1" get resourceclaim "$2" \
    -o jsonpath='{.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]}: {.status.allocation.devices.results[*].device}'
}

# pod_claim NS POD: the name of the pod's (first) ResourceClaim, or of the claim the scheduler made for its
# extended resources (KEP-5004).
pod_claim() {
  local c
  c=$(kc -n "$1" get pod "$2" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}{.status.extendedResourceClaimStatus.resourceClaimName}')
  [[ -n $c ]] || { echo "pod/$2 has no ResourceClaim in its status"; return 1; }
  echo "$c"
}

# --- set-up checks -------------------------------------------------------------------------------------------
# control_plane_ready: kube-controller-manager runs the resourceclaim controller (with
# --use-service-account-credentials it makes the ServiceAccount kube-system/resource-claim-controller when that
# controller starts); whether kube-apiserver has DRAExtendedResource on (its kubernetes_feature_enabled metric).
control_plane_ready() {
  [[ ${GPUADMIT_E2E_CONTROLLERS:-0} == 1 ]] || { echo "this cluster runs no kube-controller-manager (GPUADMIT_E2E_CONTROLLERS=0)"; return 1; }
  kc -n kube-system get serviceaccount resource-claim-controller -o name ||
    { echo "no ServiceAccount kube-system/resource-claim-controller: kube-controller-manager does not run resourceclaim-controller"; return 1; }
  local gate
  gate=$(kc get --raw /metrics | grep '^kubernetes_feature_enabled{name="DRAExtendedResource"')
  echo "kube-apiserver: $gate (cluster.env: GPUADMIT_E2E_FEATURE_GATES=${GPUADMIT_E2E_FEATURE_GATES-unset})"
  [[ $gate == *' 1' ]] && EXT=1
  return 0
}

# apply_dra: the nodes (status kept on create), DeviceClasses and ResourceSlices.
apply_dra() {
  MADE_DRA=1   # first: a signal's trap runs once kubectl is done
  kc apply -f "$DRA/00-cluster.yaml" -f "$DRA/01-slices.yaml" || return 1
  local n alloc ready
  for n in dra-a100-0 dra-h100-0; do
    ready=$(kc get node "$n" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')
    alloc=$(kc get node "$n" -o jsonpath='{.status.allocatable}')
    echo "node/$n: Ready=$ready allocatable=$alloc"
    [[ $ready == True ]] || { echo "node/$n is not Ready: status not kept on create?"; return 1; }
    [[ $alloc != *nvidia.com/gpu* ]] || { echo "node/$n has nvidia.com/gpu in allocatable; want DRA only"; return 1; }
  done
  kc get deviceclasses -o jsonpath='{range .items[*]}deviceclass/{.metadata.name}: extendedResourceName={.spec.extendedResourceName}{"\n"}{end}'
  kc get resourceslices -o jsonpath='{range .items[*]}resourceslice/{.metadata.name}: node {.spec.nodeName}, {.spec.devices[*].name}{"\n"}{end}'
  if ((EXT)); then
    [[ $(kc get deviceclass gpu.nvidia.com -o jsonpath='{.spec.extendedResourceName}') == nvidia.com/gpu ]] ||
      { echo "deviceclass/gpu.nvidia.com lost its extendedResourceName (DRAExtendedResource off in kube-apiserver?)"; return 1; }
  fi
}

webhooks_off() {
  WEBHOOKS_WERE=$(cat "$STATE/gpuadmit/webhooks" 2>/dev/null) || { echo "no $STATE/gpuadmit/webhooks"; return 1; }
  echo "webhooks were $WEBHOOKS_WERE"
  "$HERE/cluster.sh" webhooks off
}
webhooks_back() { "$HERE/cluster.sh" webhooks "${WEBHOOKS_WERE:-on}"; }

# make_namespace NS: the namespace, the ResourceClaimTemplates and the ResourceClaim shared-gpu.
make_namespace() {
  MADE_NS+=("$1")
  kc create namespace "$1" && kc -n "$1" create -f "$DRA/02-templates.yaml" -f "$DRA/04-shared-claim.yaml"
}

# --- without gpuadmit ---------------------------------------------------------------------------------------
# create_all_without: every pod and the Deployment created as written, no warning (no webhook is there).
create_all_without() {
  local p bad=0
  for p in "${PODS[@]}"; do
    create "$NS_OFF" "$WORK/pods/$p.yaml"
    [[ $(<"$WORK/create.rc") == 0 && $(<"$WORK/create.out") == "pod/$p created" ]] || { echo "want exit 0 and 'pod/$p created'"; bad=1; }
    ! grep -q '^Warning' "$WORK/create.err" || { echo "want no warning"; bad=1; }
  done
  create "$NS_OFF" "$DRA/shared-claim-deployment.yaml"
  [[ $(<"$WORK/create.rc") == 0 ]] || bad=1
  ! grep -q '^Warning' "$WORK/create.err" || { echo "want no warning"; bad=1; }
  ((!bad))
}

# unschedulable POD REASON PHRASE...: PodScheduled=False with this reason, the message has every phrase, no node.
unschedulable() {
  local pod=$1 reason=$2 got msg ph bad=0; shift 2
  wait_sched "$NS_OFF" "$pod" False || return 1
  got=$(sched "$NS_OFF" "$pod" reason) msg=$(sched "$NS_OFF" "$pod" message)
  echo "reason: $got"; echo "message: $msg"
  echo "events:"; events "$NS_OFF" "$pod"
  [[ $got == "$reason" ]] || { echo "want reason $reason"; bad=1; }
  for ph in "$@"; do [[ $msg == *"$ph"* ]] || { echo "want the message to say: $ph"; bad=1; }; done
  [[ -z $(kc -n "$NS_OFF" get pod "$pod" -o jsonpath='{.spec.nodeName}') ]] || { echo "bound to a node"; bad=1; }
  ((!bad))
}

# silent POD [EVENT-REASON PHRASE]: SILENT_AGE seconds old (and the other pods decided: the checks before), still
# no PodScheduled condition, no node, Pending; no event about it at all, or (with EVENT-REASON) that event, whose
# message has PHRASE, and no other reason.
silent() {
  local pod=$1 reason=${2:-} phrase=${3:-} created age st ev start=$SECONDS bad=0
  created=$(kc -n "$NS_OFF" get pod "$pod" -o jsonpath='{.metadata.creationTimestamp}') || return 1
  age=$(($(date +%s) - $(date -d "$created" +%s)))
  ((age >= SILENT_AGE)) || sleep $((SILENT_AGE - age))
  while [[ -n $reason ]]; do
    ev=$(events "$NS_OFF" "$pod")
    [[ $ev == *"$reason "* ]] && break
    ((SECONDS - start < EVENT_WAIT)) || { echo "no $reason event about pod/$pod after ${EVENT_WAIT}s"; break; }
    sleep 0.5
  done
  st=$(kc -n "$NS_OFF" get pod "$pod" -o jsonpath='phase={.status.phase} node={.spec.nodeName} conditions={.status.conditions}')
  ev=$(events "$NS_OFF" "$pod")
  echo "pod/$pod after ${SILENT_AGE}s+: $st"
  echo "events:"; echo "$ev"
  [[ $st == 'phase=Pending node= conditions=' ]] || { echo "want Pending, no node, no condition"; bad=1; }
  if [[ -z $reason ]]; then
    [[ -z $ev ]] || { echo "want no event"; bad=1; }
  else
    [[ $(grep -c . <<<"$ev") == $(grep -c "^$reason " <<<"$ev") && $ev == *"$phrase"* ]] ||
      { echo "want only $reason events, saying: $phrase"; bad=1; }
  fi
  ((!bad))
}

# scheduled NS POD NODE-ERE: bound (PodScheduled=True) to a node matching NODE-ERE; prints its claim's devices.
scheduled() {
  local ns=$1 pod=$2 want=$3 node claim
  wait_sched "$ns" "$pod" True || return 1
  node=$(kc -n "$ns" get pod "$pod" -o jsonpath='{.spec.nodeName}')
  echo "pod/$pod: node $node, qosClass $(kc -n "$ns" get pod "$pod" -o jsonpath='{.status.qosClass}')"
  [[ $node =~ $want ]] || { echo "want a node matching $want"; return 1; }
  claim=$(pod_claim "$ns" "$pod") || return 1
  echo "resourceclaim/$claim: $(claim_devices "$ns" "$claim")"
}

# cc9 NS: 2 devices of dra-h100-0 (compute capability 9.0.0 > 8.9.0).
cc9() {
  scheduled "$1" p-cc9 '^dra-h100-0$' || return 1
  local d
  d=$(claim_devices "$1" "$(pod_claim "$1" p-cc9)")
  [[ $d =~ ^dra-h100-0:\ gpu-[0-7]\ gpu-[0-7]$ ]] || { echo "want 2 H100 devices, got '$d'"; return 1; }
}

# two_mig NS: 2 MIG devices of dra-a100-0 with the same parentUUID (the claim's matchAttribute constraint).
two_mig() {
  scheduled "$1" p-two-mig '^dra-a100-0$' || return 1
  local d dev parents=()
  d=$(claim_devices "$1" "$(pod_claim "$1" p-two-mig)")
  for dev in ${d#*: }; do
    parents+=("$(kc get resourceslice dra-a100-0-gpu.nvidia.com -o jsonpath="{.spec.devices[?(@.name==\"$dev\")].attributes.parentUUID.string}")")
  done
  echo "parentUUIDs: ${parents[*]}"
  [[ ${#parents[@]} == 2 && -n ${parents[0]} && ${parents[0]} == "${parents[1]}" ]] || { echo "want 2 MIG devices of one GPU"; return 1; }
}

# one_gpu NS QOS: on a DRA node, one device, with this QoS class.
one_gpu() {
  scheduled "$1" p-one-gpu '^dra-' || return 1
  local q
  q=$(kc -n "$1" get pod p-one-gpu -o jsonpath='{.status.qosClass}')
  [[ $q == "$2" ]] || { echo "want qosClass $2, got $q"; return 1; }
}

# ext_2gpu NS: on a DRA node (no nvidia.com/gpu in its allocatable), served by a claim the scheduler made for the
# extended resource (status.extendedResourceClaimStatus) with 2 devices.
ext_2gpu() {
  scheduled "$1" p-ext-2gpu '^dra-' || return 1
  local s d
  s=$(kc -n "$1" get pod p-ext-2gpu -o jsonpath='{.status.extendedResourceClaimStatus}')
  echo "extendedResourceClaimStatus: $s"
  [[ $s == *'"resourceName":"nvidia.com/gpu"'* ]] || { echo "want a request mapping for nvidia.com/gpu"; return 1; }
  d=$(claim_devices "$1" "$(pod_claim "$1" p-ext-2gpu)")
  [[ $d =~ ^dra-[a-z0-9-]+:\ gpu-[0-9]\ gpu-[0-9]$ ]] || { echo "want 2 GPU devices, got '$d'"; return 1; }
}

# shared_without: the Deployment's 2 pods on one node, both holding the one device of claim shared-gpu.
shared_without() {
  local start=$SECONDS st nodes r d
  while :; do
    st=$(kc -n "$NS_OFF" get pods -l app=shared-claim -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="PodScheduled")].status} {.spec.nodeName}{"\n"}{end}')
    [[ $(awk '$2 == "True"' <<<"$st" | wc -l) -ge 2 ]] && break
    ((SECONDS - start < SCHED_WAIT)) || { echo "want 2 scheduled pods within ${SCHED_WAIT}s, got: $st"; return 1; }
    sleep 0.3
  done
  echo "$st"
  nodes=$(awk '{print $3}' <<<"$st" | sort -u)
  r=$(kc -n "$NS_OFF" get resourceclaim shared-gpu -o jsonpath='{.status.reservedFor[*].name}')
  d=$(claim_devices "$NS_OFF" shared-gpu)
  echo "resourceclaim/shared-gpu: $d; reservedFor: $r"
  [[ $(grep -c . <<<"$st") == 2 && $(grep -c . <<<"$nodes") == 1 ]] || { echo "want 2 pods on one node"; return 1; }
  [[ $(wc -w <<<"$r") == 2 && $d =~ ^dra-[a-z0-9-]+:\ gpu-[0-9]$ ]] || { echo "want one device reserved for both pods"; return 1; }
}

# --- with gpuadmit -------------------------------------------------------------------------------------------
# view_ready: gpuadmit's cluster view holds what kubectl lists: the nodes (the DRA ones too), and each DRA kind its
# /metrics reports (gpuadmit_cluster_objects{kind=...}; a build that does not watch a kind yet has no such line).
view_ready() {
  local start=$SECONDS kind want got metrics ok
  while :; do
    metrics=$(curl -fsS --max-time 2 --cacert "$GPUADMIT_E2E_WEBHOOK_CA" "$GPUADMIT_E2E_WEBHOOK_URL/metrics" 2>/dev/null)
    ok=1
    : >"$WORK/view.txt"
    for kind in nodes deviceclasses resourceslices resourceclaimtemplates resourceclaims; do
      got=$(awk -v k="gpuadmit_cluster_objects{kind=\"$kind\"}" '$1 == k {print $2}' <<<"$metrics")
      if [[ -z $got ]]; then echo "$kind: not in gpuadmit's view (not watched by this build)" >>"$WORK/view.txt"; continue; fi
      want=$(kc get "$kind" -A -o name | wc -l)
      echo "$kind: gpuadmit $got, kubectl $want" >>"$WORK/view.txt"
      [[ $got == "$want" ]] || ok=0
    done
    ((ok)) && { cat "$WORK/view.txt"; return 0; }
    ((SECONDS - start < 30)) || { echo "after 30s:"; cat "$WORK/view.txt"; return 1; }
    sleep 0.3
  done
}

# deep_claim: a tenant's ResourceClaim whose opaque driver parameters nest 200 objects deep (legal: the API
# server keeps up to 10 KiB of them) is in gpuadmit's view like any claim, its deep part left out and counted;
# the view is not stale. Before, it failed every LIST page and watch event of resourceclaims.
deep_claim() {
  local deep='{"v":1}' i metrics stale malformed
  for ((i = 0; i < 200; i++)); do deep="{\"a\":$deep}"; done
  printf '%s' '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"deep-params"},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}],
    "config":[{"requests":["gpu"],"opaque":{"driver":"gpu.nvidia.com","parameters":'"$deep"'}}]}}}' >"$WORK/deep-claim.json"
  kc -n "$NS_ON" create -f "$WORK/deep-claim.json" || return 1
  view_ready || return 1
  metrics=$(curl -fsS --max-time 2 --cacert "$GPUADMIT_E2E_WEBHOOK_CA" "$GPUADMIT_E2E_WEBHOOK_URL/metrics") || return 1
  stale=$(awk '$1 == "gpuadmit_cluster_stale" {print $2}' <<<"$metrics")
  malformed=$(awk '$1 == "gpuadmit_cluster_malformed_events_total{kind=\"resourceclaims\"}" {print $2}' <<<"$metrics")
  echo "gpuadmit_cluster_stale $stale; malformed resourceclaims $malformed"
  [[ $stale == 0 && ${malformed:-0} -ge 1 ]] || { echo "want a current view and the deep part counted"; return 1; }
}

# denied POD PHRASE...: kubectl create exits 1 with gpuadmit's denial (not the API server's own refusal), stderr
# has every phrase (fixed strings), nothing stored.
denied() {
  local pod=$1 ph bad=0; shift
  create "$NS_ON" "$WORK/pods/$pod.yaml"
  [[ $(<"$WORK/create.rc") == 1 ]] || { echo "want exit 1 (denied)"; bad=1; }
  grep -qE 'admission webhook "(mutate|validate)\.gpuadmit\.io" denied the request' "$WORK/create.err" ||
    { echo "want 'admission webhook \"mutate|validate.gpuadmit.io\" denied the request'"; bad=1; }
  for ph in "$@"; do grep -qF -- "$ph" "$WORK/create.err" || { echo "want stderr to say: $ph"; bad=1; }; done
  ! kc -n "$NS_ON" get pod "$pod" -o name >/dev/null 2>&1 || { echo "pod/$pod was stored"; bad=1; }
  ((!bad))
}

# warned POD PHRASE...: kubectl create exits 0 ('pod/POD created') with a 'Warning:' line that says every
# PHRASE: a reference the view cannot see is never a denial (the object may come a moment later).
warned() {
  local pod=$1 ph bad=0; shift
  create "$NS_ON" "$WORK/pods/$pod.yaml"
  [[ $(<"$WORK/create.rc") == 0 && $(<"$WORK/create.out") == "pod/$pod created" ]] ||
    { echo "want exit 0 and 'pod/$pod created'"; bad=1; }
  for ph in "$@"; do grep -E '^Warning: ' "$WORK/create.err" | grep -qF -- "$ph" || { echo "want a warning saying: $ph"; bad=1; }; done
  ((!bad))
}

# allowed POD CHECK-FN ARGS...: kubectl create exits 0 ('pod/POD created'), then CHECK-FN ARGS.
allowed() {
  local pod=$1; shift
  create "$NS_ON" "$WORK/pods/$pod.yaml"
  [[ $(<"$WORK/create.rc") == 0 ]] || { echo "want exit 0 (allowed)"; return 1; }
  "$@"
}

# shared_with: the Deployment allowed with a warning that the claim is shared by its replicas; its 2 pods made and
# scheduled.
shared_with() {
  create "$NS_ON" "$DRA/shared-claim-deployment.yaml"
  [[ $(<"$WORK/create.rc") == 0 ]] || { echo "want exit 0 (allowed)"; return 1; }
  grep -E '^Warning: .*shared by' "$WORK/create.err" || { echo "want a 'Warning: ...shared by...' line"; return 1; }
  local start=$SECONDS st
  while :; do
    st=$(kc -n "$NS_ON" get pods -l app=shared-claim -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="PodScheduled")].status} {.spec.nodeName}{"\n"}{end}')
    [[ $(awk '$2 == "True"' <<<"$st" | wc -l) -ge 2 ]] && { echo "$st"; return 0; }
    ((SECONDS - start < SCHED_WAIT)) || { echo "want 2 scheduled pods within ${SCHED_WAIT}s, got: $st"; kc -n "$NS_ON" get events; return 1; }
    sleep 0.3
  done
}

# --- the checks ------------------------------------------------------------------------------------------
t_start=$SECONDS
check "control plane: kube-controller-manager runs resourceclaim-controller; DRAExtendedResource read" control_plane_ready ||
  { summary; exit 1; }
((EXT)) || log "DRAExtendedResource is off in kube-apiserver: the KEP-5004 checks are skipped"
check "DRA cluster: dra-a100-0, dra-h100-0 (Ready, no nvidia.com/gpu), 2 DeviceClasses, 2 ResourceSlices" apply_dra ||
  { summary; exit 1; }
check "the cluster's webhooks turned off (cluster.sh webhooks off)" webhooks_off || { summary; exit 1; }
check "namespace $NS_OFF: ResourceClaimTemplates and ResourceClaim shared-gpu" make_namespace "$NS_OFF" || { summary; exit 1; }
check "without gpuadmit: 11 pods and Deployment shared-claim created as written, no warning" create_all_without

# What Kubernetes says (the scheduler's PodScheduled condition and events, the controllers' events). Decided pods
# first: the silent ones are judged once the scheduler has had its turn on everything.
check "without: p-typo-class Pending: 'request gpu: device class gpu.nvidia.cm does not exist'" \
  unschedulable p-typo-class Unschedulable "request gpu: device class gpu.nvidia.cm does not exist"
check "without: p-sixteen Pending: 'N cannot allocate all claims'" \
  unschedulable p-sixteen Unschedulable "cannot allocate all claims"
check "without: p-h200 Pending: the same 'N cannot allocate all claims'" \
  unschedulable p-h200 Unschedulable "cannot allocate all claims"
# 1.37's allocator names the device the selector failed on (1.35: "selector #0: CEL runtime error: ...").
check "without: p-bad-attr Pending, SchedulerError: 'CEL runtime error: no such key: gpuModel'" \
  unschedulable p-bad-attr SchedulerError "selector #0 on device gpu.nvidia.com/dra-" \
  "CEL runtime error: no such key: gpuModel"
if ((EXT)); then
  check "without: p-ext-9gpu Pending: 'Insufficient nvidia.com/gpu', 'cannot allocate all claims'" \
    unschedulable p-ext-9gpu Unschedulable "Insufficient nvidia.com/gpu" "cannot allocate all claims"
else
  skip "without: p-ext-9gpu" "DRAExtendedResource off"
fi
check "without: p-cc9 scheduled on dra-h100-0 (2 H100)" cc9 "$NS_OFF"
check "without: p-two-mig scheduled on dra-a100-0 (2 MIG slices, one parentUUID)" two_mig "$NS_OFF"
check "without: p-one-gpu scheduled on a DRA node, BestEffort" one_gpu "$NS_OFF" BestEffort
if ((EXT)); then
  check "without: p-ext-2gpu (nvidia.com/gpu: 2) scheduled on a DRA-only node, KEP-5004 claim" ext_2gpu "$NS_OFF"
else
  skip "without: p-ext-2gpu" "DRAExtendedResource off"
fi
check "without: Deployment shared-claim: both pods on one node share one device, no warning" shared_without
check "without: p-missing-claim Pending with no condition and no event at all" silent p-missing-claim
check "without: p-missing-template Pending, no condition; only the controller's FailedResourceClaimCreation event" \
  silent p-missing-template FailedResourceClaimCreation 'resourceclaimtemplate.resource.k8s.io "no-such-template" not found'
check "namespace $NS_OFF emptied (pods force-deleted, claims deleted: devices freed)" empty_namespace "$NS_OFF"

check "the cluster's webhooks back on (cluster.sh webhooks on)" webhooks_back || { summary; exit 1; }
check "namespace $NS_ON: ResourceClaimTemplates and ResourceClaim shared-gpu" make_namespace "$NS_ON" || { summary; exit 1; }
check "gpuadmit's cluster view has the nodes and the DRA objects it watches" view_ready
check "a tenant's claim with 200-deep opaque parameters: in the view, its deep part counted, the view current" deep_claim

check "with gpuadmit: p-missing-claim created, warned: 'ResourceClaim \"does-not-exist\" is not in namespace'" \
  warned p-missing-claim 'ResourceClaim "does-not-exist" is not in namespace' 'the pod waits for it'
check "with: p-missing-template created, warned: 'ResourceClaimTemplate \"no-such-template\" is not in namespace'" \
  warned p-missing-template 'ResourceClaimTemplate "no-such-template" is not in namespace' 'the pod waits for it'
check "with: p-typo-class created, warned: 'DeviceClass \"gpu.nvidia.cm\" does not exist', names gpu.nvidia.com" \
  warned p-typo-class 'DeviceClass "gpu.nvidia.cm" does not exist' 'did you mean "gpu.nvidia.com"' 'the pod waits for it'
check "with: p-sixteen denied: 'no node has more than 8'" denied p-sixteen 'no node has more than 8'
check "with: p-h200 denied: 'matches no device', 'productName is one of'" denied p-h200 'matches no device' 'productName is one of'
check "with: p-bad-attr denied: 'no such key: gpuModel'" denied p-bad-attr 'no such key: gpuModel'
check "with: p-cc9 allowed, scheduled on dra-h100-0" allowed p-cc9 cc9 "$NS_ON"
check "with: p-two-mig allowed, scheduled on dra-a100-0 (one parentUUID)" allowed p-two-mig two_mig "$NS_ON"
check "with: p-one-gpu allowed, Guaranteed (guaranteed-qos), scheduled on a DRA node" allowed p-one-gpu one_gpu "$NS_ON" Guaranteed
check "with: Deployment shared-claim allowed with 'Warning: ... shared by', 2 pods scheduled" shared_with
if ((EXT)); then
  check "with: p-ext-2gpu allowed (KEP-5004: no pod the scheduler places is denied), scheduled on a DRA node" \
    allowed p-ext-2gpu ext_2gpu "$NS_ON"
  check "with: p-ext-9gpu denied (node-fit), names nvidia.com/gpu" denied p-ext-9gpu 'node-fit' 'nvidia.com/gpu'
else
  skip "with: p-ext-2gpu" "DRAExtendedResource off"
  skip "with: p-ext-9gpu" "DRAExtendedResource off"
fi

log "done in $((SECONDS - t_start))s"
summary
