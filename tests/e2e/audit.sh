#!/usr/bin/env bash
# `gpuadmit audit` on the real control plane: an audit over objects created before gpuadmit was registered.
# It lists the cluster's Pods, PVCs and workloads through a kubeconfig (API discovery finds the workload
# kinds), judges each as admission would now, and patches nothing.
#
#   tests/e2e/audit.sh GPUADMIT_BIN
#
# The control plane: with GPUADMIT_E2E_STATE naming a running cluster.sh cluster that has gpuadmit (run.sh
# calls this script after its scenarios, on its cluster; or yours after `eval "$(cluster.sh up)"`), that one
# is reused. Otherwise it starts its own (cluster.sh up with GPUADMIT_BIN, state /tmp/gpuadmit-audit, no
# controllers) and stops it on exit.
#
# Either way it turns the cluster's webhooks off (cluster.sh webhooks off), creates in a namespace of its own
# (e2e-audit-XXXX) what admission would have judged: a) a Burstable 1-GPU pod without the GPU toleration
# (admission would fix it: guaranteed-qos, gpu-tolerations, shm-size), b) a pod asking for 16 GPUs (no node
# has that many: node-fit would deny it), c) a CPU pod (nothing to say), d) when the cluster runs
# kube-controller-manager (GPUADMIT_E2E_CONTROLLERS=1 in cluster.env), a 1-GPU Deployment, so that its
# ReplicaSet and Pod exist too; and a CPU pod alone in a second namespace. Then it runs `gpuadmit audit
# --kubeconfig <the cluster's> -n NS` and turns the webhooks back on. On exit it deletes both namespaces and
# puts the webhooks back if they are still off (cluster.sh webhooks on, which returns once the API server
# calls the cluster's gpuadmit again).
#
# Checks (stdout, one PASS/FAIL line each, then `audit: N passed, M failed`; exit 0 iff M is 0):
#   the objects are stored as written (no webhook: pod a Burstable, without the GPU toleration);
#   -o json: exit 1; a node-fit deny row with pod b; gpu-tolerations and guaranteed-qos fix rows (and
#   shm-size) naming pod a; the CPU pod in no row; summary audited/denied/withFindings/namespaces as created;
#   d) the Deployment in the gpu-tolerations row, its ReplicaSet and Pod in no row but in leftToControllers
#   (skipped without controllers); text output: the NAMESPACE header and the "objects audited in" line;
#   -n of the namespace with the CPU pod only: exit 0, no rows; with the webhooks back on, the objects are as
#   before the audit (pod a still Burstable, no toleration or /dev/shm volume added, no gpuadmit annotation);
#   `cluster dump --with-objects -n NS` then `audit --cluster` of that file: the live audit's JSON exactly.
#
# Then serve's background audit (before the webhooks go back on): the PolicyReport CRD applied
# (crds/policyreports.yaml), two `gpuadmit serve --audit-interval 10s --audit-lease NS/gpuadmit-audit`
# replicas started on loopback (POD_NAME replica-a and replica-b, the kubeconfig's cluster view):
#   the PolicyReport NS/gpuadmit names pod b under node-fit and pod a under gpu-tolerations and
#   guaranteed-qos (result fail), the CPU pod passes; the other namespace's report has no results, pass 1;
#   the Lease holder exports gpuadmit_audit_violations{rule="node-fit",resource_namespace=NS,action="deny"} 1 and
#   gpuadmit_audit_leader 1, the other replica leader 0 and no audit run; the holder killed with SIGKILL,
#   the other takes the Lease over (after its 15 s) and audits, within 40 s; SIGTERM gives the Lease up
#   (holder empty).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: tests/e2e/audit.sh GPUADMIT_BIN}
[[ -x $BIN ]] || { echo "FAIL  setup: $BIN is not an executable"; echo "audit: 0 passed, 1 failed"; exit 1; }
BIN=$(readlink -f "$BIN")
POD_WAIT=60   # seconds the Deployment's ReplicaSet and Pod may take to appear (kube-controller-manager)

log() { printf '%s audit: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

WORK=$(mktemp -d /tmp/gpuadmit-audit.XXXXXX)
OWN_CLUSTER=0
WEBHOOKS_WERE=   # the cluster's webhooks (on|off) before this suite turned them off; empty: not touched
MADE_NS=()
declare -A REPLICA_PID=() REPLICA_PORT=()   # the background audit's `gpuadmit serve` replicas
REPORTS_MADE=0
# shellcheck disable=SC2034 # counted by lib/standalone.sh
PASSED=0 FAILED=0

stop_replicas() {
  local name
  for name in "${!REPLICA_PID[@]}"; do kill -KILL "${REPLICA_PID[$name]}" 2>/dev/null; done
  for name in "${!REPLICA_PID[@]}"; do wait "${REPLICA_PID[$name]}" 2>/dev/null; done
  REPLICA_PID=()
}

# fd 3/4: the real stdout/stderr, for the trap (a signal may come while a check's output goes to its log).
exec 3>&1 4>&2
cleanup() {
  local rc=$? ns left start
  trap - EXIT INT TERM
  exec 1>&3 2>&4
  stop_replicas
  if [[ -n ${GPUADMIT_E2E_KUBECTL:-} ]] && ((REPORTS_MADE)); then
    kc delete policyreports -A -l app.kubernetes.io/managed-by=gpuadmit --wait=false >/dev/null 2>&1
  fi
  if ((!OWN_CLUSTER)) && [[ -n ${GPUADMIT_E2E_KUBECTL:-} ]]; then
    # A shared cluster is left as found. Pods bound to fake nodes need a forced delete (no kubelet confirms a
    # graceful one, and one left Terminating holds its node for the scheduler); with the controllers a
    # ReplicaSet may still make one until the garbage collector has deleted it: bounded, as run.sh does.
    for ns in "${MADE_NS[@]}"; do
      kc -n "$ns" delete deployments --all --wait=false >/dev/null 2>&1
      start=$SECONDS
      while left=$(kc get -n "$ns" pods,replicasets -o name 2>/dev/null) && [[ -n $left ]]; do
        ((SECONDS - start < 30)) || { log "WARNING: still left in $ns after 30s: ${left//$'\n'/ }"; break; }
        kc -n "$ns" delete pods --all --force --grace-period=0 --wait=false >/dev/null 2>&1
        sleep 0.3
      done
      kc delete namespace "$ns" --wait=false >/dev/null 2>&1
    done
    restore_webhooks || rc=1
  fi
  standalone_finish "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck disable=SC2034 # read by lib/standalone.sh
SUITE=audit
# shellcheck source=lib/standalone.sh
source "$HERE/lib/standalone.sh"

# --- the control plane -----------------------------------------------------------------------------------
attach_control_plane /tmp/gpuadmit-audit
CONTROLLERS=${GPUADMIT_E2E_CONTROLLERS:-0}
NS=e2e-audit-$(printf '%04x' $((RANDOM % 65536)))
CLEAN_NS=$NS-clean

# --- what is created while no webhook is there -----------------------------------------------------------
# a) 1 GPU, Burstable (cpu request 1, limit 2), no GPU toleration, no /dev/shm volume; memory above
#    memory-floor's 2Gi + 8Gi per GPU and a plain image, so that only the three fixes apply.
cat >"$WORK/objects.yaml" <<'EOF'
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: burstable-gpu
    labels: {app.kubernetes.io/part-of: gpuadmit-e2e}
  spec:
    terminationGracePeriodSeconds: 0
    containers:
    - name: train
      image: registry.invalid/train:1
      resources:
        requests: {cpu: "1", memory: 16Gi, nvidia.com/gpu: "1"}
        limits: {cpu: "2", memory: 16Gi, nvidia.com/gpu: "1"}
- apiVersion: v1
  kind: Pod
  metadata:
    name: sixteen-gpus
    labels: {app.kubernetes.io/part-of: gpuadmit-e2e}
  spec:
    terminationGracePeriodSeconds: 0
    containers:
    - name: train
      image: registry.invalid/train:1
      resources:
        limits: {cpu: "16", memory: 256Gi, nvidia.com/gpu: "16"}
- apiVersion: v1
  kind: Pod
  metadata:
    name: cpu-only
    labels: {app.kubernetes.io/part-of: gpuadmit-e2e}
  spec:
    terminationGracePeriodSeconds: 0
    containers:
    - name: web
      image: registry.invalid/web:1
      resources:
        limits: {cpu: "1", memory: 1Gi}
EOF
# d) with controllers only: its ReplicaSet and Pod are made by kube-controller-manager, unjudged too.
cat >"$WORK/deployment.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gpu-trainer
  labels: {app.kubernetes.io/part-of: gpuadmit-e2e}
spec:
  replicas: 1
  selector: {matchLabels: {app: gpu-trainer}}
  template:
    metadata:
      labels: {app: gpu-trainer, app.kubernetes.io/part-of: gpuadmit-e2e}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: train
        image: registry.invalid/train:1
        resources:
          limits: {cpu: "4", memory: 32Gi, nvidia.com/gpu: "1"}
EOF

# --- the checks' steps -------------------------------------------------------------------------------------
webhooks_off() {
  WEBHOOKS_WERE=$(cat "$STATE/gpuadmit/webhooks" 2>/dev/null) || { echo "no $STATE/gpuadmit/webhooks"; return 1; }
  echo "webhooks were $WEBHOOKS_WERE"
  "$HERE/cluster.sh" webhooks off
}

make_namespaces() {
  local ns
  for ns in "$NS" "$CLEAN_NS"; do
    MADE_NS+=("$ns")   # first: a signal's trap runs once kubectl is done, before the next command
    kc create namespace "$ns" || return 1
  done
}

create_objects() {
  kc -n "$NS" create -f "$WORK/objects.yaml" || return 1
  kc -n "$CLEAN_NS" create -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: cpu-only
  labels: {app.kubernetes.io/part-of: gpuadmit-e2e}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: web
    image: registry.invalid/web:1
    resources:
      limits: {cpu: "1", memory: 1Gi}
EOF
}

# snapshot: what admission would have changed on the objects of NS, one line per object (pods: QoS class,
# resources, toleration keys, volume names, annotations; the Deployment: its template's).
snapshot() {
  kc -n "$NS" get pods -o jsonpath='{range .items[*]}pod/{.metadata.name} {.status.qosClass} {.spec.containers[*].resources} tolerations=[{.spec.tolerations[*].key}] volumes=[{.spec.volumes[*].name}] {.metadata.annotations}{"\n"}{end}' &&
    kc -n "$NS" get deployments -o jsonpath='{range .items[*]}deployment/{.metadata.name} {.spec.template.spec.containers[*].resources} tolerations=[{.spec.template.spec.tolerations[*].key}] volumes=[{.spec.template.spec.volumes[*].name}] {.spec.template.metadata.annotations}{"\n"}{end}'
}

stored_as_written() {
  local qos tol vols
  qos=$(kc -n "$NS" get pod burstable-gpu -o jsonpath='{.status.qosClass}') || return 1
  tol=$(kc -n "$NS" get pod burstable-gpu -o jsonpath='{.spec.tolerations[*].key}') || return 1
  vols=$(kc -n "$NS" get pod burstable-gpu -o jsonpath='{.spec.volumes[*].name}') || return 1
  echo "pod/burstable-gpu: qosClass=$qos tolerations=[$tol] volumes=[$vols]"
  [[ $qos == Burstable ]] || { echo "want Burstable: a webhook mutated it"; return 1; }
  [[ " $tol " != *" nvidia.com/gpu "* ]] || { echo "want no nvidia.com/gpu toleration: a webhook mutated it"; return 1; }
  [[ " $vols " != *" dshm "* ]] || { echo "want no dshm volume: a webhook mutated it"; return 1; }
}

# deployment_pods: wait until the Deployment has its ReplicaSet and Pod (kube-controller-manager).
deployment_pods() {
  local start=$SECONDS rs pods
  kc -n "$NS" create -f "$WORK/deployment.yaml" || return 1
  while :; do
    rs=$(kc -n "$NS" get replicasets -l app=gpu-trainer -o name 2>/dev/null)
    pods=$(kc -n "$NS" get pods -l app=gpu-trainer -o name 2>/dev/null)
    [[ -n $rs && -n $pods ]] && { echo "${rs//$'\n'/ } ${pods//$'\n'/ } after ~$((SECONDS - start))s"; return 0; }
    ((SECONDS - start < POD_WAIT)) || break
    sleep 0.5
  done
  echo "want a ReplicaSet and a Pod of deployment/gpu-trainer within ${POD_WAIT}s; have: [$rs] [$pods]"
  kc -n "$NS" get deployments,replicasets,pods -o wide
  return 1
}

# run_audit NAME WANT-RC ARGS...: gpuadmit audit --kubeconfig ... ARGS, stdout in $WORK/NAME.out; its exit
# status must be WANT-RC.
run_audit() {
  local name=$1 want=$2 rc=0; shift 2
  echo "+ gpuadmit audit --kubeconfig $KUBECONFIG $*"
  timeout -k 5 120 "$BIN" audit --kubeconfig "$KUBECONFIG" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
  cat "$WORK/$name.out" "$WORK/$name.err"
  echo "(exit $rc)"
  ((rc == want)) || { echo "want exit $want"; return 1; }
}

# audit_json CHECK: python3 checks of $WORK/json.out (what `audit -o json` printed), named by CHECK.
audit_json() {
  python3 - "$WORK/json.out" "$NS" "$1" "$CONTROLLERS" <<'PY'
import json, sys
path, ns, check, controllers = sys.argv[1:]
controllers = controllers == "1"
doc = json.load(open(path))
rows, summary = doc["rows"], doc["summary"]
problems = []

def rows_of(rule, verdict=None):
    return [r for r in rows if r["rule"] == rule and (verdict is None or r["verdict"] == verdict)]

def want_row(rule, verdict, obj):
    found = rows_of(rule, verdict)
    if not found:
        problems.append(f"no row rule={rule} verdict={verdict}; rows: " +
                        ", ".join(f"{r['rule']}/{r['verdict']}" for r in rows))
    elif not any(obj in r["objects"] for r in found):
        problems.append(f"row {rule}/{verdict} does not name {obj}: {found[0]['objects']}")

def in_no_row(obj):
    for r in rows:
        if obj in r["objects"]:
            problems.append(f"{obj} is in row {r['rule']}/{r['verdict']}")

for r in rows:
    if r["namespace"] != ns:
        problems.append(f"a row of namespace {r['namespace']!r} (-n {ns})")
    if r["count"] != len(r["objects"]):
        problems.append(f"row {r['rule']}/{r['verdict']}: count {r['count']} but {len(r['objects'])} objects")

if check == "deny":
    want_row("node-fit", "deny", "pod/sixteen-gpus")
    for r in rows_of("node-fit", "deny"):
        print("node-fit example:", r["example"].splitlines()[0])
    if "pod/burstable-gpu" in sum((r["objects"] for r in rows if r["verdict"] == "deny"), []):
        problems.append("pod/burstable-gpu is in a deny row")
elif check == "fix":
    for rule in ("gpu-tolerations", "guaranteed-qos", "shm-size"):
        want_row(rule, "fix", "pod/burstable-gpu")
    for r in rows_of("guaranteed-qos", "fix"):
        print("guaranteed-qos example:", r["example"].splitlines()[0])
elif check == "cpu":
    in_no_row("pod/cpu-only")
elif check == "summary":
    want = {"audited": 4 if controllers else 3, "denied": 1, "withFindings": 3 if controllers else 2,
            "namespaces": 1, "notChecked": 0, "leftToControllers": 2 if controllers else 0}
    for k, v in want.items():
        if summary.get(k) != v:
            problems.append(f"summary.{k} = {summary.get(k)}, want {v}")
elif check == "controllers":
    want_row("gpu-tolerations", "fix", "deployment/gpu-trainer")
    for r in rows:
        for o in r["objects"]:
            if o.startswith("replicaset/") or (o.startswith("pod/gpu-trainer-")):
                problems.append(f"{o} (made by the Deployment) is in row {r['rule']}/{r['verdict']}")
    if summary.get("leftToControllers") != 2:
        problems.append(f"summary.leftToControllers = {summary.get('leftToControllers')}, want 2 (the ReplicaSet and its Pod)")
else:
    problems.append(f"unknown check {check}")

print("summary:", json.dumps(summary, sort_keys=True))
for r in rows:
    print(f"row: {r['rule']}/{r['verdict']} count={r['count']} {r['objects']}")
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
PY
}

audit_text() {
  run_audit text 1 -n "$NS" || return 1
  grep -q '^NAMESPACE  *RULE  *VERDICT  *COUNT  *OBJECTS' "$WORK/text.out" || { echo "want the header NAMESPACE RULE VERDICT COUNT OBJECTS"; return 1; }
  grep -Eq '^[0-9]+ objects? audited in 1 namespace: 1 would be denied' "$WORK/text.out" ||
    { echo "want the summary line 'N objects audited in 1 namespace: 1 would be denied, ...'"; return 1; }
  grep -Eq "^$NS +node-fit +deny +1 +pod/sixteen-gpus" "$WORK/text.out" || { echo "want a node-fit deny line for pod/sixteen-gpus"; return 1; }
}

# No --kubeconfig: audit through $KUBECONFIG = a missing file, then the cluster's (kubectl skips the missing
# one); then, with no $KUBECONFIG, through HOME/.kube/config alone, a copy whose context's namespace is NS,
# which `why` takes for its -n (kubectl's default namespace).
kubeconfig_rules() {
  local home=$WORK/home rc=0
  mkdir -p "$home/.kube"
  KUBECONFIG="$WORK/no-such-kubeconfig:$KUBECONFIG" timeout -k 5 120 "$BIN" audit -n "$NS" -o json \
    >"$WORK/rules-env.out" 2>"$WORK/rules-env.err" || rc=$?
  echo "KUBECONFIG=<missing>:<the cluster's> gpuadmit audit -n NS: exit $rc"
  ((rc == 1)) && grep -q sixteen-gpus "$WORK/rules-env.out" || { cat "$WORK/rules-env.err"; return 1; }
  python3 - "$KUBECONFIG" "$NS" "$home/.kube/config" <<'PY' || return 1
import sys, yaml
config = yaml.safe_load(open(sys.argv[1]))
for c in config["contexts"]:
    if c["name"] == config["current-context"]:
        c["context"]["namespace"] = sys.argv[2]
yaml.safe_dump(config, open(sys.argv[3], "w"))
PY
  rc=0
  env -u KUBECONFIG HOME="$home" timeout -k 5 120 "$BIN" why pod/sixteen-gpus -o json \
    >"$WORK/rules-home.out" 2>"$WORK/rules-home.err" || rc=$?
  echo "HOME=<a home whose .kube/config's context has namespace NS> gpuadmit why pod/sixteen-gpus: exit $rc"
  ((rc == 0)) && grep -q node-fit "$WORK/rules-home.out" || { cat "$WORK/rules-home.err"; return 1; }
  # insecure-skip-tls-verify (no CA): honoured, with a warning on standard error.
  python3 - "$KUBECONFIG" "$WORK/insecure.kubeconfig" <<'PY' || return 1
import sys, yaml
config = yaml.safe_load(open(sys.argv[1]))
for c in config["clusters"]:
    c["cluster"].pop("certificate-authority-data", None)
    c["cluster"].pop("certificate-authority", None)
    c["cluster"]["insecure-skip-tls-verify"] = True
yaml.safe_dump(config, open(sys.argv[2], "w"))
PY
  rc=0
  timeout -k 5 120 "$BIN" audit --kubeconfig "$WORK/insecure.kubeconfig" -n "$NS" -o json >"$WORK/insecure.out" \
    2>"$WORK/insecure.err" || rc=$?
  echo "insecure-skip-tls-verify: exit $rc, $(grep -c WARNING "$WORK/insecure.err") warning"
  ((rc == 1)) && grep -q sixteen-gpus "$WORK/insecure.out" && grep -q 'NOT verified' "$WORK/insecure.err"
}

# A kubeconfig whose user is a credential plugin (exec), as GKE's, EKS's and AKS's are: the plugin, a script,
# prints the cluster's static token (cluster.sh's tokens.csv); its first run prints a wrong one, which the
# API server refuses with 401, and gpuadmit runs it once more. Another plugin hands out a client certificate
# (the admin's) instead of a token. A missing plugin's error gives its installHint,
# and interactiveMode Always is refused without a terminal (CI).
exec_plugin() {
  local dir=$WORK/exec token rc=0 runs
  mkdir -p "$dir"
  token=$(cut -d, -f1 "$GPUADMIT_E2E_TOKEN_FILE")
  cat >"$dir/login.sh" <<SH
#!/bin/sh
n=\$((\$(cat "$dir/runs" 2>/dev/null || echo 0) + 1)); echo \$n >"$dir/runs"
if [ \$n = 1 ]; then t=revoked; else t=$token; fi
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"2099-01-01T00:00:00Z"}}' "\$t"
SH
  # Its credential has expired already (a clock ahead, a short-lived token): fetched again for every request.
  cat >"$dir/expiring.sh" <<SH
#!/bin/sh
n=\$((\$(cat "$dir/expiring-runs" 2>/dev/null || echo 0) + 1)); echo \$n >"$dir/expiring-runs"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"2000-01-01T00:00:00Z"}}' "$token"
SH
  chmod +x "$dir/login.sh" "$dir/expiring.sh"
  python3 - "$KUBECONFIG" "$dir" <<'PY' || return 1
import base64, json, os, sys, yaml
config = yaml.safe_load(open(sys.argv[1]))
exec_user = lambda command, mode: {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": command,
                                            "interactiveMode": mode, "installHint": "Install it with: make login-plugin"}}
# A plugin that hands out a client certificate: the admin kubeconfig's own, which the API server trusts.
admin = config["users"][0]["user"]
credential = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
              "status": {"clientCertificateData": base64.b64decode(admin["client-certificate-data"]).decode(),
                         "clientKeyData": base64.b64decode(admin["client-key-data"]).decode()}}
with open(sys.argv[2] + "/certificate.json", "w") as f:
    json.dump(credential, f)
with open(sys.argv[2] + "/certificate-login.sh", "w") as f:
    f.write('#!/bin/sh\ncat "$(dirname "$0")/certificate.json"\n')
os.chmod(sys.argv[2] + "/certificate-login.sh", 0o755)
config["users"] = [{"name": "plugin", "user": exec_user("./login.sh", "Never")},
                   {"name": "certificate", "user": exec_user("./certificate-login.sh", "Never")},
                   {"name": "expiring", "user": exec_user("./expiring.sh", "Never")},
                   {"name": "missing", "user": exec_user("no-such-login-plugin", "Never")},
                   {"name": "prompting", "user": exec_user("./login.sh", "Always")}]
for c in config["contexts"]:
    c["context"]["user"] = "plugin"
yaml.safe_dump(config, open(sys.argv[2] + "/kubeconfig", "w"))
PY
  timeout -k 5 120 "$BIN" audit --kubeconfig "$dir/kubeconfig" -n "$NS" -o json >"$dir/audit.out" 2>"$dir/audit.err" || rc=$?
  runs=$(cat "$dir/runs")
  echo "audit through the exec plugin: exit $rc, the plugin ran $runs times (a 401 on its first token)"
  ((rc == 1 && runs == 2)) && grep -q sixteen-gpus "$dir/audit.out" || { cat "$dir/audit.err"; return 1; }
  rc=0
  timeout -k 5 120 "$BIN" why pod/sixteen-gpus -n "$NS" --kubeconfig "$dir/kubeconfig" -o json >"$dir/why.out" \
    2>"$dir/why.err" || rc=$?
  echo "why through the exec plugin: exit $rc, the plugin ran $(cat "$dir/runs") times in all"
  ((rc == 0)) && grep -q '"rule": "node-fit' "$dir/why.out" || { cat "$dir/why.err"; return 1; }
  rc=0
  timeout -k 5 120 "$BIN" why pod/sixteen-gpus -n "$NS" --kubeconfig "$dir/kubeconfig" --user expiring -o json \
    >"$dir/expiring.out" 2>"$dir/expiring.err" || rc=$?
  runs=$(cat "$dir/expiring-runs")
  echo "why with a credential that has expired: exit $rc, the plugin ran $runs times (once a request)"
  ((rc == 0 && runs >= 2)) && grep -q '"rule": "node-fit' "$dir/expiring.out" || { cat "$dir/expiring.err"; return 1; }
  rc=0
  timeout -k 5 120 "$BIN" audit --kubeconfig "$dir/kubeconfig" --user certificate -n "$NS" -o json \
    >"$dir/certificate.out" 2>"$dir/certificate.err" || rc=$?
  echo "audit through a plugin that hands out a client certificate: exit $rc"
  ((rc == 1)) && grep -q sixteen-gpus "$dir/certificate.out" || { cat "$dir/certificate.err"; return 1; }
  rc=0
  timeout -k 5 60 "$BIN" audit --kubeconfig "$dir/kubeconfig" --user missing -n "$NS" </dev/null >/dev/null 2>"$dir/missing.err" || rc=$?
  echo "a missing plugin: exit $rc: $(tail -n 1 "$dir/missing.err")"
  ((rc == 2)) && grep -q 'no-such-login-plugin.*Install it with: make login-plugin' "$dir/missing.err" || return 1
  rc=0
  timeout -k 5 60 "$BIN" audit --kubeconfig "$dir/kubeconfig" --user prompting -n "$NS" </dev/null >/dev/null 2>"$dir/prompting.err" || rc=$?
  echo "interactiveMode Always without a terminal: exit $rc: $(tail -n 1 "$dir/prompting.err")"
  ((rc == 2)) && grep -q 'interactiveMode is Always, but standard input is not a terminal' "$dir/prompting.err"
}

# A kubeconfig whose cluster has a proxy-url: a proxy (Python, on loopback) that speaks HTTP CONNECT and
# SOCKS5 on one port, wants credentials and logs each tunnel it opens. The audit goes through it; with the wrong password the proxy's 407 is the
# error. (HTTPS_PROXY alone would not be used for 127.0.0.1: Go never proxies loopback, nor does gpuadmit.)
proxy_url() {
  local dir=$WORK/proxy rc=0 port name url
  mkdir -p "$dir"
  cat >"$dir/proxy.py" <<'PY'
import base64, select, socket, socketserver, sys, threading
WANTED = "Basic " + base64.b64encode(b"ml:s3cret").decode()
def relay(a, b):
    while True:
        r, _, _ = select.select([a, b], [], [], 30)
        if not r: return
        for s in r:
            data = s.recv(65536)
            if not data: return
            (b if s is a else a).sendall(data)
class Tunnel(socketserver.StreamRequestHandler):
    def socks5(self):  # RFC 1928 CONNECT, user and password by RFC 1929
        read = lambda n: self.rfile.read(n)
        _, n = read(2); methods = read(n)
        if 2 not in methods: self.wfile.write(b"\x05\xff"); return
        self.wfile.write(b"\x05\x02"); self.wfile.flush()
        _, n = read(2); user = read(n).decode(); n = read(1)[0]; password = read(n).decode()
        ok = (user, password) == ("ml", "s3cret")
        self.wfile.write(b"\x01" + (b"\x00" if ok else b"\x01")); self.wfile.flush()
        if not ok: print("SOCKS5 refused", flush=True); return
        _, _, _, atyp = read(4)
        host = read(read(1)[0]).decode() if atyp == 3 else socket.inet_ntoa(read(4)) if atyp == 1 else socket.inet_ntop(socket.AF_INET6, read(16))
        port = int.from_bytes(read(2), "big")
        print("SOCKS5 %s:%d True" % (host, port), flush=True)
        up = socket.create_connection((host, port))
        self.wfile.write(b"\x05\x00\x00\x01\x7f\x00\x00\x01\x00\x00"); self.wfile.flush()
        relay(self.connection, up)
    def handle(self):
        if self.rfile.peek(1)[:1] == b"\x05": return self.socks5()
        line = self.rfile.readline().decode().split()
        headers = {}
        while True:
            h = self.rfile.readline().decode()
            if h in ("\r\n", "\n", ""): break
            k, _, v = h.partition(":"); headers[k.strip().lower()] = v.strip()
        print(" ".join(line[:2]), headers.get("proxy-authorization") == WANTED, flush=True)
        if line[0] != "CONNECT" or headers.get("proxy-authorization") != WANTED:
            self.wfile.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"); return
        host, _, port = line[1].rpartition(":")
        up = socket.create_connection((host.strip("[]"), int(port)))
        self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n"); self.wfile.flush()
        relay(self.connection, up)
socketserver.ThreadingTCPServer.daemon_threads = True
server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Tunnel)
open(sys.argv[1], "w").write(str(server.server_address[1]))
server.serve_forever()
PY
  python3 "$dir/proxy.py" "$dir/port" >"$dir/proxy.log" 2>&1 &
  local proxy_pid=$!
  for _ in $(seq 50); do [[ -s $dir/port ]] && break; sleep 0.1; done
  port=$(cat "$dir/port")
  for name in s3cret wrong socks; do
    url="http://ml:$name@127.0.0.1:$port"
    [[ $name == socks ]] && url="socks5://ml:s3cret@127.0.0.1:$port"
    python3 - "$KUBECONFIG" "$dir/$name.kubeconfig" "$url" <<'PY'
import sys, yaml
config = yaml.safe_load(open(sys.argv[1]))
for c in config["clusters"]:
    c["cluster"]["proxy-url"] = sys.argv[3]
yaml.safe_dump(config, open(sys.argv[2], "w"))
PY
  done
  timeout -k 5 120 "$BIN" audit --kubeconfig "$dir/s3cret.kubeconfig" -n "$NS" -o json >"$dir/audit.out" \
    2>"$dir/audit.err" || rc=$?
  echo "audit through the proxy: exit $rc; the proxy saw: $(sort -u "$dir/proxy.log" | tr '\n' ' ')"
  ((rc == 1)) && grep -q sixteen-gpus "$dir/audit.out" && grep -q "^CONNECT 127.0.0.1:[0-9]* True$" "$dir/proxy.log" ||
    { cat "$dir/audit.err"; kill "$proxy_pid"; return 1; }
  rc=0
  timeout -k 5 120 "$BIN" audit --kubeconfig "$dir/socks.kubeconfig" -n "$NS" -o json >"$dir/socks.out" \
    2>"$dir/socks.err" || rc=$?
  echo "audit through the same proxy as SOCKS5 (ssh -D's protocol): exit $rc"
  ((rc == 1)) && grep -q sixteen-gpus "$dir/socks.out" && grep -q "^SOCKS5 127.0.0.1:[0-9]* True$" "$dir/proxy.log" ||
    { cat "$dir/socks.err"; kill "$proxy_pid"; return 1; }
  rc=0
  timeout -k 5 60 "$BIN" audit --kubeconfig "$dir/wrong.kubeconfig" -n "$NS" >/dev/null 2>"$dir/wrong.err" || rc=$?
  kill "$proxy_pid" 2>/dev/null || true
  echo "with the wrong password: exit $rc: $(tail -n 1 "$dir/wrong.err")"
  ((rc == 2)) && grep -q "refused CONNECT 127.0.0.1:[0-9]*: 407 Proxy Authentication Required" "$dir/wrong.err"
}

audit_clean() {
  run_audit clean 0 -n "$CLEAN_NS" -o json || return 1
  python3 - "$WORK/clean.out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
s = doc["summary"]
bad = []
if doc["rows"]:
    bad.append(f"want no rows, got {[(r['rule'], r['verdict'], r['objects']) for r in doc['rows']]}")
if s.get("audited") != 1 or s.get("denied") != 0 or s.get("withFindings") != 0:
    bad.append(f"want audited 1, denied 0, withFindings 0: {s}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

# The same audit offline: `cluster dump --with-objects -n NS` saved, then `audit --cluster` of the file; the
# rows and summary must be the live audit's (json.out).
dump_then_audit() {
  local rc=0
  timeout -k 5 120 "$BIN" cluster dump --kubeconfig "$KUBECONFIG" --with-objects -n "$NS" \
    --output-file "$WORK/dump.json" || return 1
  timeout -k 5 120 "$BIN" audit --cluster "$WORK/dump.json" -n "$NS" -o json >"$WORK/offline.out" || rc=$?
  ((rc == 1)) || { echo "audit --cluster: exit $rc, want 1"; cat "$WORK/offline.out"; return 1; }
  python3 - "$WORK/json.out" "$WORK/offline.out" <<'PY'
import json, sys
live, offline = (json.load(open(p)) for p in sys.argv[1:3])
print("offline summary:", json.dumps(offline["summary"], sort_keys=True))
if live != offline:
    print("PROBLEM: the offline audit differs from the live one")
    print("live:   ", json.dumps(live, sort_keys=True)[:2000])
    print("offline:", json.dumps(offline, sort_keys=True)[:2000])
    sys.exit(1)
PY
}

webhooks_back() {   # as they were (run.sh's cluster: on)
  "$HERE/cluster.sh" webhooks "$WEBHOOKS_WERE"
}

unchanged() {
  snapshot >"$WORK/after.txt" || return 1
  cat "$WORK/after.txt"
  diff -u "$WORK/before.txt" "$WORK/after.txt" || { echo "the objects changed (before -> after the audit)"; return 1; }
  stored_as_written
}

# --- the background audit: two `gpuadmit serve --audit-interval` replicas and one Lease ----------------------
# The Lease is in NS (deleted with it); each replica serves /metrics on a port of its own.
LEASE=gpuadmit-audit
policyreport_crd() {
  kc apply -f "$HERE/crds/policyreports.yaml" &&
    kc wait --for condition=established --timeout=30s crd/policyreports.wgpolicyk8s.io
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

start_replica() {   # NAME
  local name=$1 port
  port=$(free_port) || return 1
  REPLICA_PORT[$name]=$port
  POD_NAME=$name "$BIN" serve --dev-self-signed --listen "127.0.0.1:$port" --kubeconfig "$KUBECONFIG" \
    --audit-interval 10s --audit-lease "$NS/$LEASE" >"$WORK/$name.log" 2>&1 &
  REPLICA_PID[$name]=$!
  echo "$name: pid ${REPLICA_PID[$name]}, https://127.0.0.1:$port"
}

metrics_of() { curl -sk --max-time 5 "https://127.0.0.1:${REPLICA_PORT[$1]}/metrics"; }
holder() { kc -n "$NS" get lease "$LEASE" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }

replicas_ready() {
  start_replica replica-a && start_replica replica-b || return 1
  local name start=$SECONDS
  for name in replica-a replica-b; do
    until curl -skf --max-time 2 "https://127.0.0.1:${REPLICA_PORT[$name]}/readyz" >/dev/null; do
      ((SECONDS - start < 60)) || { echo "$name not ready in 60s"; tail -20 "$WORK/$name.log"; return 1; }
      kill -0 "${REPLICA_PID[$name]}" 2>/dev/null || { echo "$name exited"; tail -20 "$WORK/$name.log"; return 1; }
      sleep 0.5
    done
  done
  echo "both ready after ~$((SECONDS - start))s"
}

# report_written NS WHAT: waits (60s) for the PolicyReport gpuadmit in NS, then checks it (python, WHAT).
report_written() {
  local ns=$1 what=$2 start=$SECONDS
  REPORTS_MADE=1
  until kc -n "$ns" get policyreport gpuadmit -o json >"$WORK/report-$ns.json" 2>/dev/null; do
    ((SECONDS - start < 60)) || { echo "no PolicyReport gpuadmit in $ns after 60s"; tail -5 "$WORK"/replica-*.log; return 1; }
    sleep 1
  done
  echo "PolicyReport $ns/gpuadmit after ~$((SECONDS - start))s"
  python3 - "$WORK/report-$ns.json" "$what" "$CONTROLLERS" <<'PY'
import json, sys
report, what, controllers = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3] == "1"
problems = []
print("summary:", json.dumps(report.get("summary"), sort_keys=True))
results = report.get("results") or []
for r in results:
    print(f"result: {r['rule']} {r['result']} {r['properties']['action']} " +
          " ".join(f"{x['kind']}/{x['name']}" for x in r.get("resources", [])))
if report["metadata"].get("labels", {}).get("app.kubernetes.io/managed-by") != "gpuadmit":
    problems.append("want the label app.kubernetes.io/managed-by=gpuadmit")
def want(rule, result, kind, name):
    if not any(r["rule"] == rule and r["result"] == result and
               any(x["kind"] == kind and x["name"] == name for x in r.get("resources", [])) for r in results):
        problems.append(f"no {result} result of {rule} naming {kind}/{name}")
if what == "violations":
    want("node-fit", "fail", "Pod", "sixteen-gpus")
    want("gpu-tolerations", "fail", "Pod", "burstable-gpu")
    want("guaranteed-qos", "fail", "Pod", "burstable-gpu")
    if controllers:
        want("gpu-tolerations", "fail", "Deployment", "gpu-trainer")
    for r in results:
        for x in r.get("resources", []):
            if x["name"] == "cpu-only":
                problems.append(f"the CPU pod is in a {r['rule']} result")
    if report["summary"].get("pass") != 1:
        problems.append(f"summary.pass = {report['summary'].get('pass')}, want 1 (the CPU pod)")
elif what == "clean":
    if results or report["summary"] != {"pass": 1, "fail": 0, "warn": 0, "error": 0, "skip": 0}:
        problems.append("want no results and summary pass 1")
for p in problems:
    print("PROBLEM:", p)
sys.exit(1 if problems else 0)
PY
}

LEADER="" FOLLOWER=""
metric_exported() {
  LEADER=$(holder)
  case $LEADER in replica-a) FOLLOWER=replica-b ;; replica-b) FOLLOWER=replica-a ;;
    *) echo "Lease $NS/$LEASE holder is '$LEADER', want replica-a or replica-b"; return 1 ;; esac
  echo "Lease holder: $LEADER"
  local line="gpuadmit_audit_violations{rule=\"node-fit\",resource_namespace=\"$NS\",action=\"deny\"} 1" start=$SECONDS
  # The reports are written just before the series are swapped in: a moment's wait at most.
  until metrics_of "$LEADER" >"$WORK/leader.metrics" && grep -qxF "$line" "$WORK/leader.metrics"; do
    ((SECONDS - start < 10)) || break
    sleep 0.5
  done
  metrics_of "$FOLLOWER" >"$WORK/follower.metrics" || { echo "no /metrics from $FOLLOWER"; return 1; }
  grep -E "^gpuadmit_audit_(violations\{.*namespace=\"$NS\"|leader|runs_total|objects)" "$WORK/leader.metrics"
  grep -qxF "$line" "$WORK/leader.metrics" || { echo "the leader does not export: $line"; return 1; }
  grep -qx 'gpuadmit_audit_leader 1' "$WORK/leader.metrics" || { echo "want gpuadmit_audit_leader 1 on $LEADER"; return 1; }
  grep -qx 'gpuadmit_audit_leader 0' "$WORK/follower.metrics" || { echo "want gpuadmit_audit_leader 0 on $FOLLOWER"; return 1; }
  grep -qx 'gpuadmit_audit_runs_total{result="success"} 0' "$WORK/follower.metrics" ||
    { echo "the follower audited too:"; grep gpuadmit_audit_runs_total "$WORK/follower.metrics"; return 1; }
}

# A leader killed without a word (SIGKILL: no release) is replaced once its Lease has stayed unrenewed for
# leaseDurationSeconds (15) by the follower's clock, within one renewal period (2s) more.
takeover() {
  local start=$SECONDS now_holder
  kill -KILL "${REPLICA_PID[$LEADER]}" && wait "${REPLICA_PID[$LEADER]}" 2>/dev/null
  unset "REPLICA_PID[$LEADER]"
  until now_holder=$(holder) && [[ $now_holder == "$FOLLOWER" ]] &&
    metrics_of "$FOLLOWER" | grep -qx 'gpuadmit_audit_runs_total{result="success"} [1-9][0-9]*'; do
    ((SECONDS - start < 40)) || { echo "after 40s the holder is '$now_holder', want $FOLLOWER (audited)"; tail -5 "$WORK/$FOLLOWER.log"; return 1; }
    sleep 0.5
  done
  echo "$FOLLOWER holds the Lease and has audited ~$((SECONDS - start))s after $LEADER was killed"
  grep -o '"msg":"audit lease acquired[^"]*".*"why":"[^"]*"' "$WORK/$FOLLOWER.log" | tail -1
}

# SIGTERM: the replica drains and gives the Lease up (holder "").
released() {
  local start=$SECONDS
  kill -TERM "${REPLICA_PID[$FOLLOWER]}"
  wait "${REPLICA_PID[$FOLLOWER]}" 2>/dev/null
  echo "$FOLLOWER exited ($?) after ~$((SECONDS - start))s"
  unset "REPLICA_PID[$FOLLOWER]"
  local h
  h=$(holder)
  [[ -z $h ]] || { echo "Lease holder after SIGTERM: '$h', want none"; return 1; }
  kc -n "$NS" get lease "$LEASE" -o jsonpath='{.spec}'; echo
}

# --- the checks ------------------------------------------------------------------------------------------
t_start=$SECONDS
check "the cluster's webhooks turned off (cluster.sh webhooks off)" webhooks_off || { summary; exit 1; }
check "namespaces $NS and $CLEAN_NS created" make_namespaces || { summary; exit 1; }
check "pods created with no webhook: Burstable 1-GPU, 16-GPU, CPU-only (+ a CPU pod alone)" create_objects ||
  { summary; exit 1; }
check "... stored as written: burstable-gpu Burstable, no GPU toleration, no /dev/shm volume" stored_as_written
if ((CONTROLLERS)); then
  check "d) Deployment gpu-trainer (1 GPU) created; its ReplicaSet and Pod made by the controllers" deployment_pods
else
  log "no kube-controller-manager in this cluster (GPUADMIT_E2E_CONTROLLERS=0): the Deployment checks are skipped"
fi
snapshot >"$WORK/before.txt" 2>&1

check "audit -n NS -o json: exit 1 (something would be denied)" run_audit json 1 -n "$NS" -o json ||
  { cat "$WORK/check.log" >&2; summary; exit 1; }
check "... node-fit deny row with pod/sixteen-gpus (more GPUs than any node has)" audit_json deny
check "... gpu-tolerations, guaranteed-qos, shm-size fix rows naming pod/burstable-gpu" audit_json fix
check "... the CPU-only pod in no row" audit_json cpu
check "... summary: audited $( ((CONTROLLERS)) && echo 4 || echo 3), denied 1, 1 namespace, as created" audit_json summary
if ((CONTROLLERS)); then
  check "d) ... deployment/gpu-trainer fixed; its ReplicaSet and Pod left to it (leftToControllers 2)" audit_json controllers
fi
check "audit -n NS (text): the NAMESPACE header, the node-fit line, 'objects audited in'" audit_text
check "audit -n <the namespace with a CPU pod only> -o json: exit 0, no rows" audit_clean
check "kubectl's kubeconfig rules: \$KUBECONFIG listing a missing file then the cluster's; ~/.kube/config alone, its context's namespace for why; insecure-skip-tls-verify with a warning" kubeconfig_rules
check "a credential plugin (exec): its token used by audit and why, run again after a 401 and for each request once expired; a client certificate from another; a missing one's installHint; Always refused without a terminal" exec_plugin
check "a cluster's proxy-url: the audit through an HTTP CONNECT proxy and a SOCKS5 one with their credentials; the proxy's 407 with the wrong ones" proxy_url
check "cluster dump --with-objects -n NS, then audit --cluster of it: the live audit's rows and summary" dump_then_audit
check "serve --audit-interval: the PolicyReport CRD (wgpolicyk8s.io/v1alpha2) installed" policyreport_crd &&
  check "... two replicas on one Lease ($NS/$LEASE) ready" replicas_ready &&
  check "... PolicyReport $NS/gpuadmit: node-fit, gpu-tolerations, guaranteed-qos fail results; the CPU pod passes" \
    report_written "$NS" violations &&
  check "... PolicyReport $CLEAN_NS/gpuadmit: no results, pass 1" report_written "$CLEAN_NS" clean &&
  check "... the Lease holder alone audits and exports gpuadmit_audit_violations{rule=node-fit,...} 1" metric_exported &&
  check "... the leader killed (SIGKILL): the other replica takes the Lease over and audits" takeover &&
  check "... SIGTERM: the replica gives the Lease up" released
stop_replicas
check "the cluster's webhooks back on (cluster.sh webhooks on)" webhooks_back
check "the audit patched nothing: the objects as before it (burstable-gpu still Burstable)" unchanged

log "done in $((SECONDS - t_start))s"
summary
