#!/usr/bin/env bash
# The gpuadmit policy as Kubernetes objects (#23 item 4) on the real control plane: ClusterGPUPolicy and
# GPUPolicy CRDs from `gpuadmit policy crds`, `gpuadmit serve --policy-objects` watching them, its webhook
# judging edits of them.
#
#   tests/e2e/policy-objects.sh GPUADMIT_BIN
#
# The control plane: with GPUADMIT_E2E_STATE naming a running cluster.sh cluster that has gpuadmit (run.sh
# calls this script after its scenarios, on its cluster; or yours after `eval "$(cluster.sh up)"`), that one
# is reused. Otherwise it starts its own (cluster.sh up with GPUADMIT_BIN, state /tmp/gpuadmit-policy-objects,
# no controllers) and stops it on exit.
#
# Either way it runs a gpuadmit of its own, `serve --kubeconfig ... --policy-objects`, on another loopback
# port with the cluster's webhook certificate, and points the cluster's two webhook configurations
# ($STATE/gpuadmit/webhooks.yaml, rendered from whatever template the cluster was started with: tests/chart's
# e2e phase gives the Helm chart's) at it. The policy-object webhook is the template's own when it has one (the
# chart's policies.validate.<name>) and otherwise manifests/policy-webhook.yaml's. On exit it deletes what it
# made (objects, namespaces, the CRDs) and puts the cluster's configurations back (cluster.sh webhooks on,
# which returns once the API server calls the cluster's own gpuadmit again).
#
# Checks (stdout, one PASS/FAIL line each, then `policy-objects: N passed, M failed`; exit 0 iff M is 0):
#   gpuadmit is ready without the CRDs (a missing CRD counts as no objects), the CRDs become Established,
#   and it is ready again with them; baseline: a 1-GPU pod with 4Gi is allowed with a memory-floor warning;
#   a) invalid policies are refused at `kubectl apply` naming the field: a misspelt key (the CRD's schema or
#      gpuadmit), a negative overhead the schema allows (gpuadmit only), a GPUPolicy that loosens the policy;
#   b) ClusterGPUPolicy default with memory-floor enforce denies that pod within seconds, Active, Loaded;
#      a ClusterGPUPolicy of another name is NotSelected and changes nothing;
#   d) with the policy webhook removed, an invalid update reaches the watch: the last valid policy stays in
#      force and the object's Ready condition says Invalid, naming the field;
#   c) without the ClusterGPUPolicy, a GPUPolicy in team-a with memory-floor enforce denies the pod there, while
#      team-b still allows it with a warning; a second GPUPolicy in team-a is Superseded.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: tests/e2e/policy-objects.sh GPUADMIT_BIN}
[[ -x $BIN ]] || { echo "FAIL  setup: $BIN is not an executable"; echo "policy-objects: 0 passed, 1 failed"; exit 1; }
BIN=$(readlink -f "$BIN")
POLL=15   # seconds a policy change may take to show in verdicts or status

log() { printf '%s policy-objects: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

WORK=$(mktemp -d /tmp/gpuadmit-policy-objects.XXXXXX)
OWN_CLUSTER=0
SERVE_PID=
TOOK_OVER=0
MADE_NS=()
# shellcheck disable=SC2034 # counted by lib/standalone.sh
PASSED=0 FAILED=0

cleanup() {
  local rc=$? ns
  trap - EXIT INT TERM
  if ((TOOK_OVER && !OWN_CLUSTER)); then
    # Deleting first: cluster.sh's apply then creates the configurations afresh, without the entry added here.
    kc delete -f "$WORK/webhooks-with-policy.yaml" --ignore-not-found >/dev/null 2>&1
    if [[ $(cat "$STATE/gpuadmit/webhooks" 2>/dev/null) == on ]]; then
      if "$HERE/cluster.sh" webhooks on 2>"$WORK/restore.log"; then log "the cluster's webhook configurations are back"
      else log "WARNING: putting the cluster's webhooks back failed:"; cat "$WORK/restore.log" >&2; rc=1; fi
    fi
  fi
  if [[ -n $SERVE_PID ]]; then kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; fi
  if ((!OWN_CLUSTER)) && [[ -n ${GPUADMIT_E2E_KUBECTL:-} ]]; then
    # A shared cluster is left as found: the CRDs (and with them every policy object) and the namespaces go.
    kc delete crd clustergpupolicies.gpuadmit.io gpupolicies.gpuadmit.io --ignore-not-found --wait=false >/dev/null 2>&1
    for ns in "${MADE_NS[@]}"; do kc delete namespace "$ns" --wait=false >/dev/null 2>&1; done
  fi
  standalone_finish "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck disable=SC2034 # read by lib/standalone.sh
SUITE=policy-objects
# shellcheck source=lib/standalone.sh
source "$HERE/lib/standalone.sh"

# --- the control plane -----------------------------------------------------------------------------------
attach_control_plane /tmp/gpuadmit-policy-objects

# --- gpuadmit serve --policy-objects ------------------------------------------------------------------------
PORT=
for ((i = 0; i < 100; i++)); do
  p=$((20000 + RANDOM % 12000))
  (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { PORT=$p; break; }
done
URL=https://127.0.0.1:$PORT

# serve_start: (re)start it and wait for /readyz (it waits for the cluster view's and the policy objects' first
# LIST), at most 30 s.
serve_start() {
  local i
  if [[ -n $SERVE_PID ]]; then kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=; fi
  "$BIN" serve --listen "127.0.0.1:$PORT" --tls-cert-file "$STATE/webhook-certs/tls.crt" \
    --tls-private-key-file "$STATE/webhook-certs/tls.key" --drain-seconds 0 \
    --kubeconfig "$KUBECONFIG" --policy-objects </dev/null >>"$WORK/gpuadmit.log" 2>&1 &
  SERVE_PID=$!
  for ((i = 0; i < 150; i++)); do
    curl -fsS --max-time 2 --cacert "$STATE/webhook-certs/ca.crt" "$URL/readyz" >/dev/null 2>&1 && { echo "ready after ~$((i / 5))s"; return 0; }
    kill -0 "$SERVE_PID" 2>/dev/null || { echo "gpuadmit serve --policy-objects exited:"; tail -n 15 "$WORK/gpuadmit.log"; SERVE_PID=; return 1; }
    sleep 0.2
  done
  echo "not ready after 30 s; /readyz says: $(curl -sS --max-time 2 --cacert "$STATE/webhook-certs/ca.crt" "$URL/readyz" 2>&1)"
  tail -n 15 "$WORK/gpuadmit.log"
  return 1
}

apply_crds() {
  "$BIN" policy crds >"$WORK/crds.json" || return 1
  kc apply -f "$WORK/crds.json" &&
    kc wait --for=condition=Established --timeout=30s crd/clustergpupolicies.gpuadmit.io crd/gpupolicies.gpuadmit.io
}

# The cluster's configurations pointed at this gpuadmit, with and without the policy-object webhook.
render_webhooks() {
  python3 - "$STATE/gpuadmit/webhooks.yaml" "$GPUADMIT_E2E_WEBHOOK_URL" "$URL" "$HERE/manifests/policy-webhook.yaml" "$WORK" <<'PY'
import copy, pathlib, sys, yaml
src, old_url, new_url, entry_file, work = sys.argv[1:]
docs = []
for d in yaml.safe_load_all(open(src).read().replace(old_url + "/", new_url + "/")):
    if d:
        docs.extend(d["items"] if d.get("kind") == "List" else [d])
is_policy = lambda w: any("gpuadmit.io" in r.get("apiGroups", []) for r in w.get("rules", []))
source = "the cluster's configurations"
for d in docs:
    if d["kind"] == "ValidatingWebhookConfiguration" and not any(is_policy(w) for w in d["webhooks"]):
        entry = yaml.safe_load(open(entry_file))
        entry["clientConfig"] = copy.deepcopy(d["webhooks"][0]["clientConfig"])
        d["webhooks"].append(entry)
        source = "manifests/policy-webhook.yaml"
for d in docs:
    d["metadata"].pop("resourceVersion", None)
with_policy = {"apiVersion": "v1", "kind": "List", "items": docs}
without = copy.deepcopy(with_policy)
for d in without["items"]:
    d["webhooks"] = [w for w in d["webhooks"] if not is_policy(w)]
yaml.safe_dump(with_policy, open(pathlib.Path(work, "webhooks-with-policy.yaml"), "w"))
yaml.safe_dump(without, open(pathlib.Path(work, "webhooks-without-policy.yaml"), "w"))
names = [w["name"] for d in docs if d["kind"] == "ValidatingWebhookConfiguration" for w in d["webhooks"] if is_policy(w)]
print(f"policy-object webhook {names} from {source}")
PY
}

# reviews ENDPOINT: how many reviews this gpuadmit has logged on /ENDPOINT.
reviews() { grep -c "\"msg\":\"review\".*\"endpoint\":\"$1\"" "$WORK/gpuadmit.log"; }

# take_over: apply the configurations (with the policy webhook), then dry-run the GPU probe pod until this
# gpuadmit logs a review on both paths (the other gpuadmit would answer the same: only its log tells).
take_over() {
  local i m v
  kc apply -f "$WORK/webhooks-with-policy.yaml" >/dev/null || return 1
  TOOK_OVER=1
  for ((i = 0; i < 150; i++)); do
    m=$(reviews mutate) v=$(reviews validate)
    kc create --dry-run=server -n default -f "$HERE/manifests/probe-pods.yaml" >/dev/null 2>&1
    (($(reviews mutate) > m && $(reviews validate) > v)) && { echo "the API server calls $URL after ~$((i / 5))s"; return 0; }
    sleep 0.2
  done
  echo "the API server did not call $URL within 30 s"
  return 1
}

# --- what the checks apply -------------------------------------------------------------------------------
# The pod: 1 GPU with a 4Gi memory limit, below memory-floor's 2Gi + 8Gi per GPU (default action: warn).
cat >"$WORK/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: low-memory
  labels: {app.kubernetes.io/part-of: gpuadmit-e2e}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: train
    image: registry.invalid/train:1
    resources:
      limits: {nvidia.com/gpu: "1", cpu: "4", memory: 4Gi}
EOF
# policy FILE KIND NAME NAMESPACE RULES: write a policy object ($WORK/FILE; NAMESPACE "" for a cluster-scoped
# one; RULES in YAML flow style).
policy() {
  local file=$1 kind=$2 name=$3 ns=$4 rules=$5
  {
    echo "apiVersion: gpuadmit.io/v1alpha1"
    echo "kind: $kind"
    if [[ -n $ns ]]; then echo "metadata: {name: $name, namespace: $ns}"; else echo "metadata: {name: $name}"; fi
    echo "spec: {rules: $rules}"
  } >"$WORK/$file"
}
policy cgp-typo.yaml ClusterGPUPolicy default "" '{memory-floor: {action: enforce, perGPU: 8Gi}}'
policy cgp-negative.yaml ClusterGPUPolicy default "" '{memory-floor: {action: enforce, overhead: "-1Gi"}}'
policy cgp-negative-2.yaml ClusterGPUPolicy default "" '{memory-floor: {action: enforce, overhead: "-2Gi"}}'
policy cgp-enforce.yaml ClusterGPUPolicy default "" '{memory-floor: {action: enforce}}'
# ("off" quoted: kubectl reads YAML 1.1, where a bare off is the boolean false.)
policy cgp-other.yaml ClusterGPUPolicy other "" '{memory-floor: {action: "off"}, gpu-tolerations: {action: "off"}}'
policy gp-loosen.yaml GPUPolicy loose team-b '{memory-floor: {action: "off"}}'
policy gp-enforce.yaml GPUPolicy memory team-a '{memory-floor: {action: enforce}}'
policy gp-second.yaml GPUPolicy second team-a '{gpu-quota: {action: enforce}}'

# verdict NS: "denied", "warned" (allowed with a memory-floor Warning), "allowed" or "error: ..." for the pod
# in NS, from a server-side dry run.
verdict() {
  local out rc=0
  out=$(kc -n "$1" apply --dry-run=server -f "$WORK/pod.yaml" 2>&1) || rc=$?
  if ((rc != 0)); then
    if [[ $out == *"denied the request"*"[memory-floor]"* ]]; then echo denied; else echo "error: ${out//$'\n'/ }"; fi
  elif [[ $out == *"Warning: memory-floor"* ]]; then echo warned
  else echo allowed
  fi
}

# expect_verdict NS WANT: poll up to POLL seconds until the pod's verdict in NS is WANT.
expect_verdict() {
  local got start=$SECONDS
  while :; do
    got=$(verdict "$1")
    [[ $got == "$2" ]] && { echo "$1: $got after ~$((SECONDS - start))s"; return 0; }
    ((SECONDS - start < POLL)) || break
    sleep 0.3
  done
  echo "$1: want $2 within ${POLL}s, got: $got"
  kc -n "$1" apply --dry-run=server -f "$WORK/pod.yaml" 2>&1 | sed 's/^/  | /'
  return 1
}

# status RESOURCE [-n NS]: "active reason observedGeneration/generation | message" of a policy object.
status() {
  kc get "$@" -o jsonpath='{.status.active} {.status.conditions[?(@.type=="Ready")].reason} {.status.observedGeneration}/{.metadata.generation} | {.status.conditions[?(@.type=="Ready")].message}'
}

# expect_status WANT-REGEX RESOURCE [-n NS]: poll up to POLL seconds until status matches.
expect_status() {
  local want=$1 got start=$SECONDS; shift
  while :; do
    got=$(status "$@" 2>&1)
    [[ $got =~ $want ]] && { echo "$*: $got"; return 0; }
    ((SECONDS - start < POLL)) || break
    sleep 0.3
  done
  echo "$*: status want /$want/ within ${POLL}s, got: $got"
  kc get "$@" -o yaml | sed -n '/^status:/,$p' | sed 's/^/  | /'
  return 1
}

# refused FILE WANT-SUBSTRING...: `kubectl apply` of FILE fails, and its message holds every WANT.
refused() {
  local file=$1 out w; shift
  if out=$(kc apply -f "$WORK/$file" 2>&1); then echo "applied, want refused: $out"; return 1; fi
  echo "$out"
  for w in "$@"; do [[ $out == *"$w"* ]] || { echo "(the message lacks: $w)"; return 1; }; done
}

# --- the checks ------------------------------------------------------------------------------------------
# Compound steps, so that each check is one command.
remove_policy_webhook() {   # gone once the API server lets the invalid update through a dry run
  local i out
  kc replace -f "$WORK/webhooks-without-policy.yaml" >/dev/null || return 1
  for ((i = 0; i < 150; i++)); do
    out=$(kc apply --dry-run=server -f "$WORK/cgp-negative.yaml" 2>&1) && { echo "policy webhook gone after ~$((i / 5))s"; return 0; }
    sleep 0.2
  done
  echo "the API server still refuses it after 30 s: $out"
  return 1
}
put_back_policy_webhook() {   # back once the API server refuses an invalid update again
  local i out
  kc replace -f "$WORK/webhooks-with-policy.yaml" >/dev/null || return 1
  # (Not cgp-negative.yaml: that is what is stored now, and applying it again changes nothing, so no webhook
  # would be asked.)
  for ((i = 0; i < 150; i++)); do
    out=$(kc apply --dry-run=server -f "$WORK/cgp-negative-2.yaml" 2>&1) || { echo "policy webhook back after ~$((i / 5))s: $out"; return 0; }
    sleep 0.2
  done
  echo "the API server still lets the invalid policy through after 30 s"
  return 1
}
baseline() { expect_verdict team-a warned && expect_verdict team-b warned; }
nothing_stored() {
  ! kc get clustergpupolicy default 2>/dev/null && ! kc -n team-b get gpupolicy loose 2>/dev/null
}
get_shows_active() {
  local out
  out=$(kc get clustergpupolicies 2>&1)
  echo "$out"
  grep -Eq '^default +true +[^ ]+ +Loaded ' <<<"$out"
}
other_not_selected() { expect_status '^false NotSelected ' clustergpupolicy other && expect_verdict team-b denied; }
show_status() { kc get clustergpupolicies && kc get clustergpupolicy default -o jsonpath='{.status}{"\n"}'; }
second_superseded() {
  expect_status '^false Superseded ' -n team-a gpupolicy second && expect_status '^true Loaded ' -n team-a gpupolicy memory &&
    expect_verdict team-a denied
}
cluster_policy_deleted() { kc delete clustergpupolicy default && expect_verdict team-b warned; }

t_start=$SECONDS
for ns in team-a team-b; do
  kc get namespace "$ns" >/dev/null 2>&1 || { kc create namespace "$ns" >/dev/null && MADE_NS+=("$ns"); }
done
# Before the CRDs exist (in a shared cluster they never did): not ready there would keep gpuadmit out of
# service on every cluster without them.
kc delete crd clustergpupolicies.gpuadmit.io gpupolicies.gpuadmit.io --ignore-not-found >/dev/null 2>&1
check "serve --policy-objects ready while the CRDs do not exist (none)" serve_start
check "CRDs from gpuadmit policy crds applied and Established" apply_crds || { summary; exit 1; }
# Restarted with the CRDs in place, so that what follows does not depend on when it notices new CRDs.
check "serve --policy-objects ready with the CRDs" serve_start || { summary; exit 1; }
check "webhook configurations pointed at it, with the policy-object webhook" render_webhooks || { summary; exit 1; }
log "$(<"$WORK/check.log")"
check "the API server calls it (probe pods reviewed on /mutate and /validate)" take_over || { summary; exit 1; }
check "baseline: the 4Gi GPU pod is allowed with a memory-floor warning (team-a, team-b)" baseline

# a) refused at apply, naming the field.
check "a) misspelt key (memory-floor.perGPU) refused at apply, naming the field" \
  refused cgp-typo.yaml perGPU spec.rules.memory-floor
check "a) overhead -1Gi (the CRD schema allows it) refused by gpuadmit, naming spec.rules.memory-floor" \
  refused cgp-negative.yaml 'denied the request' 'spec.rules.memory-floor.overhead'
check "a) a GPUPolicy that loosens the policy (memory-floor off) refused, naming spec.rules.memory-floor" \
  refused gp-loosen.yaml 'denied the request' 'spec.rules.memory-floor'
check "a) nothing refused was stored" nothing_stored

# b) a valid ClusterGPUPolicy flips the verdict within seconds, and says so in its status.
check "b) ClusterGPUPolicy default (memory-floor enforce) applied" kc apply -f "$WORK/cgp-enforce.yaml"
check "b) ... the pod is now denied (team-b)" expect_verdict team-b denied
check "b) ... its status: active, Ready Loaded, observedGeneration = generation" \
  expect_status '^true Loaded ([0-9]+)/\1 ' clustergpupolicy default
check "b) kubectl get clustergpupolicies shows it Active true, Reason Loaded" get_shows_active
check "b) ClusterGPUPolicy other (not --cluster-policy-name) applied" kc apply -f "$WORK/cgp-other.yaml"
check "b) ... is NotSelected, not active, and changes nothing (the pod still denied)" other_not_selected
kc delete -f "$WORK/cgp-other.yaml" --ignore-not-found >/dev/null 2>&1

# d) an invalid update that reaches the watch (the policy webhook removed first) leaves the last valid policy
# in force and is reported Invalid.
check "d) with the policy webhook registered, the invalid update is refused at apply" \
  refused cgp-negative.yaml 'denied the request' 'spec.rules.memory-floor.overhead'
check "d) policy webhook removed from validate.gpuadmit.io" remove_policy_webhook
check "d) the invalid update (overhead -1Gi) stored" kc apply -f "$WORK/cgp-negative.yaml"
check "d) ... Ready reason Invalid for its generation, the message naming spec.rules.memory-floor" \
  expect_status '^[a-z]* Invalid ([0-9]+)/\1 \| .*spec\.rules\.memory-floor' clustergpupolicy default
check "d) ... the last valid policy stays in force: the pod still denied" expect_verdict team-b denied
check "d) (kubectl get clustergpupolicies and the status, for the record)" show_status
cat "$WORK/check.log" >&2
check "d) policy webhook put back" put_back_policy_webhook

# c) a GPUPolicy tightens the policy for its own namespace only.
check "c) ClusterGPUPolicy default deleted: back to the embedded policy (the pod warned in team-b)" cluster_policy_deleted
check "c) GPUPolicy team-a/memory (memory-floor enforce) applied" kc apply -f "$WORK/gp-enforce.yaml"
check "c) ... the pod denied in team-a" expect_verdict team-a denied
check "c) ... the same pod allowed with a warning in team-b" expect_verdict team-b warned
check "c) ... its status: active, Ready Loaded, observedGeneration = generation" \
  expect_status '^true Loaded ([0-9]+)/\1 ' -n team-a gpupolicy memory
# One GPUPolicy per namespace applies, the oldest.
check "c) a second GPUPolicy in team-a applied" kc apply -f "$WORK/gp-second.yaml"
check "c) ... it is Superseded, not active; the first one still applies (the pod denied in team-a)" second_superseded
kc delete -f "$WORK/gp-second.yaml" -f "$WORK/gp-enforce.yaml" --ignore-not-found >/dev/null 2>&1

log "done in $((SECONDS - t_start))s"
summary
