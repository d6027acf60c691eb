#!/usr/bin/env bash
# Minimal Kubernetes control plane on loopback for gpuadmit's e2e tests: etcd + kube-apiserver +
# kube-scheduler as host processes (no Docker, no kubelet), and optionally kube-controller-manager
# (GPUADMIT_E2E_CONTROLLERS=1).
#
#   tests/e2e/cluster.sh up       start everything; prints `export ...` lines (KUBECONFIG etc.) on stdout:
#                                   eval "$(tests/e2e/cluster.sh up)"      (by hand)
#                                   envs=$(tests/e2e/cluster.sh up) && eval "$envs"   (scripts: a bare
#                                   eval "$(...)" succeeds even when `up` fails)
#   tests/e2e/cluster.sh down     stop every process it started (TERM, then KILL) and remove the state dir
#   tests/e2e/cluster.sh status   show the recorded processes and whether they are alive
#   tests/e2e/cluster.sh env      print the export lines of a running cluster again
#
# `up` registers the CRDs of manifests/crds.yaml (PyTorchJob) and manifests/crds/ (the published RayCluster,
# LeaderWorkerSet, Volcano Job, KServe InferenceService, Argo Workflow/WorkflowTemplate/ClusterWorkflowTemplate/
# CronWorkflow, Tekton TaskRun/PipelineRun/Task/Pipeline, Kubeflow Trainer TrainJob/TrainingRuntime/
# ClusterTrainingRuntime and NVIDIA NIMService/NIMCache CRDs; server-side apply) and waits until they are
# Established. No operator runs.
# With GPUADMIT_BIN set, `up` also starts `gpuadmit serve` on loopback and registers the webhooks
# mutate.gpuadmit.io and validate.gpuadmit.io (failurePolicy Fail). On a running cluster:
#   cluster.sh gpuadmit stop|start|restart [POLICY_FILE]   stop/(re)start the webhook server
#   cluster.sh webhooks off|on                             delete/re-create both configurations
#   cluster.sh failure-policy Fail|Ignore                  switch failurePolicy of both
#   cluster.sh settle                                      wait until the API server behaves so
#   cluster.sh restart-apiserver [DOWN_SECONDS]            stop kube-apiserver and start it again with the
#                                                          same flags, DOWN_SECONDS (default 0) after it
#                                                          exited (watch-recovery tests, tests/e2e/watch)
#   cluster.sh restart-etcd [DOWN_SECONDS]                 the same for etcd (tests/e2e/faults.sh)
# Each of these returns once a server-side dry run shows the new behaviour (bounded wait).
#
# Everything listens on 127.0.0.1 only, on free ports picked at start. Binaries come from
# build-tools.sh (cached under ~/.cache/gpuadmit). Progress and errors go to stderr.
#
# Env:
#   GPUADMIT_E2E_STATE    state dir (default /tmp/gpuadmit-e2e): pki/, etcd-data/, logs/, pids/,
#                         admin.kubeconfig, admission-config.yaml, webhook-client.kubeconfig, cluster.env
#   GPUADMIT_E2E_TIMEOUT  seconds to wait for kube-apiserver readiness (default 180; 2 cores are slow)
#   GPUADMIT_E2E_K8S_BIN, GPUADMIT_E2E_ETCD_BIN
#                         use these binary dirs instead of running build-tools.sh
#   GPUADMIT_BIN          the gpuadmit binary; unset: control plane only, no webhook
#   GPUADMIT_E2E_POLICY   policy file for `gpuadmit serve` (default: its embedded policy)
#   GPUADMIT_E2E_FAILURE_POLICY  Fail (default) or Ignore, for both webhooks at `up`
#   GPUADMIT_E2E_WEBHOOKS_TEMPLATE  another template for the two configurations, with the same @URL@,
#                         @CA_BUNDLE@ and @FAILURE_POLICY@ placeholders and object names as
#                         manifests/webhooks.yaml.in (tests/chart renders the chart's own into one);
#                         recorded at `up`, used by every later `webhooks`/`failure-policy` call
#   GPUADMIT_E2E_SETTLE_TIMEOUT  seconds to wait for a webhook change to take effect (default 30)
#   GPUADMIT_E2E_ENABLE_ADMISSION_PLUGINS  extra kube-apiserver admission plugins, comma-separated
#                         (e.g. ExtendedResourceToleration, which GKE enables: a pod asking for
#                         nvidia.com/gpu gets a toleration for a taint of that key); default none
#   GPUADMIT_E2E_ADMISSION_CONFIG  an AdmissionConfiguration file whose plugins are added to the one
#                         kube-apiserver always gets (--admission-control-config-file: the admission
#                         kubeconfig below); tests/chart gives GKE's ResourceQuota limitedResources for the
#                         critical priority classes. It must not configure the two webhook plugins (needs
#                         python3 with PyYAML); default none
#   GPUADMIT_E2E_CONTROLLERS  1: also start kube-controller-manager with the controllers of
#                         KCM_CONTROLLERS below (workloads create Pods, garbage collection, quota,
#                         namespace deletion, ServiceAccounts, DRA claims from templates); 0 (default): no controllers
#   GPUADMIT_E2E_EXTRA_CONTROLLERS  more kube-controller-manager controllers, comma-separated (the truth
#                         harness adds persistentvolume-binder-controller,ephemeral-volume-controller
#                         beside its own volume provisioner); default none
#   GPUADMIT_E2E_FEATURE_GATES  --feature-gates for kube-apiserver, kube-scheduler and kube-controller-manager
#                         (default empty: none, the version's defaults. DRAExtendedResource, KEP-5004, which lets a
#                         plain nvidia.com/gpu request be served by the devices of a DeviceClass with
#                         extendedResourceName and which tests/e2e/dra.sh checks, is GA and locked on in 1.37: `=true`
#                         only logs "setting GA feature gate", `=false` makes each component exit. On 1.35, where it
#                         is alpha and off, set DRAExtendedResource=true)
#
# Without kube-controller-manager: no ServiceAccount tokens/default SA (ServiceAccount admission is
# disabled either way), namespaces never finish deleting, workloads never create Pods. Pods bound to
# fake nodes must always be deleted with --force --grace-period=0 (no kubelet confirms a graceful
# delete, with or without controllers). See tests/e2e/README.md.
#
# kube-apiserver always presents a client certificate to admission webhooks (pki/webhook-client.crt, from a CA
# of its own, pki/webhook-client-ca.crt; user '*' of its admission kubeconfig webhook-client.kubeconfig, as
# https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#authenticate-apiservers
# describes), so that a webhook may require one (gpuadmit serve --client-ca-file, tests/e2e/client-auth.sh) on
# a running control plane; a webhook that asks for none sees no difference. cluster.env exports the paths.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${GPUADMIT_E2E_STATE:-/tmp/gpuadmit-e2e}
# How to call `down` for this state dir (shown in messages).
if [[ $STATE != /tmp/gpuadmit-e2e ]]; then DOWN_CMD="GPUADMIT_E2E_STATE=$STATE $0 down"; else DOWN_CMD="$0 down"; fi
MARKER=.gpuadmit-e2e-state   # only a dir holding this file is ever rm -rf'ed by this script
API_TIMEOUT=${GPUADMIT_E2E_TIMEOUT:-180}
case ${GPUADMIT_E2E_CONTROLLERS:-0} in
  1) CONTROLLERS=1 ;; 0 | "") CONTROLLERS=0 ;;
  *) printf 'cluster: ERROR: GPUADMIT_E2E_CONTROLLERS must be 0 or 1, not %s\n' "$GPUADMIT_E2E_CONTROLLERS" >&2; exit 2 ;;
esac
STOP_TIMEOUT=15              # seconds between TERM and KILL
# DRA (tests/e2e/dra.sh): the same gates for the three components (a gate the API server lacks drops the fields).
# None by default: 1.37 has DRAExtendedResource GA and locked to true.
FEATURE_GATES=${GPUADMIT_E2E_FEATURE_GATES-}

log() { printf '%s cluster: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# --- process bookkeeping -----------------------------------------------------------------------
# pids/<name>.pid holds the PID, pids/<name>.exe the binary path (checked against /proc/<pid>/exe
# before any signal, so a recycled PID is never killed); pids/order lists names in start order.

# start_bg NAME BINARY ARGS...: run in the background in its own session (a Ctrl-C in the
# terminal reaches this script, whose trap stops the processes in order, not the children
# directly), stdin from /dev/null, stdout+stderr to logs/NAME.log. stdout must not be inherited:
# `eval "$(cluster.sh up)"` would otherwise wait for the children to exit.
start_bg() {
  local name=$1; shift
  log "starting $name"
  setsid "$@" </dev/null >>"$STATE/logs/$name.log" 2>&1 &
  local pid=$! exe i
  exe=$(readlink -f "$1")
  echo "$pid" >"$STATE/pids/$name.pid"
  echo "$exe" >"$STATE/pids/$name.exe"
  # A restarted process (gpuadmit) keeps its first place in the stop order.
  grep -qxF "$name" "$STATE/pids/order" 2>/dev/null || echo "$name" >>"$STATE/pids/order"
  # Until the forked shell has exec'd setsid and setsid the binary, /proc/PID/exe is bash or setsid,
  # and pid_of (which checks the binary against PID reuse) would report the process as gone: wait_for
  # then said "exited during start-up" with an empty log (seen under load). Wait for the exec (bounded).
  for ((i = 0; i < 200; i++)); do
    [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$exe" ]] && return 0
    alive "$pid" || return 0   # exited at once: wait_for reports it with the log
    sleep 0.05
  done
  log "WARNING: $name (pid $pid) has not exec'd $exe after 10s"
}

# alive PID: the process exists and is not a zombie (kill -0 succeeds on an unreaped zombie, and
# during `up` the processes are still this shell's children).
alive() {
  local st
  st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  st=${st##*) }
  [[ ${st:0:1} != Z ]]
}

# pid_of NAME: print the recorded PID if that process is alive and still runs the recorded binary.
pid_of() {
  local name=$1 pid exe
  [[ -f $STATE/pids/$name.pid ]] || return 1
  pid=$(<"$STATE/pids/$name.pid")
  exe=$(<"$STATE/pids/$name.exe")
  [[ $pid =~ ^[0-9]+$ ]] && alive "$pid" || return 1
  # PID reuse guard. " (deleted)": the binary was replaced on disk (rebuilt) while running.
  local cur
  cur=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  [[ $cur == "$exe" || $cur == "$exe (deleted)" ]] || return 1
  echo "$pid"
}

stop_one() {
  local name=$1 pid i
  pid=$(pid_of "$name") || { rm -f "$STATE/pids/$name.pid"; return 0; }
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
    alive "$pid" || break
    sleep 0.1
  done
  if alive "$pid"; then
    log "$name did not exit within ${STOP_TIMEOUT}s; sending KILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do alive "$pid" || break; sleep 0.1; done
  fi
  alive "$pid" && { log "WARNING: $name (pid $pid) still alive"; return 1; }
  # Give its parent (init, once `up` has exited) a moment to reap the zombie, so that a
  # `pgrep` right after `down` comes back empty. Harmless if it takes longer.
  for ((i = 0; i < 30; i++)); do [[ -e /proc/$pid ]] || break; sleep 0.1; done
  rm -f "$STATE/pids/$name.pid"
}

# Stop in reverse start order (scheduler and webhook before the apiserver, etcd last).
stop_all() {
  [[ -f $STATE/pids/order ]] || return 0
  local name rc=0
  while read -r name; do stop_one "$name" || rc=1; done < <(tac "$STATE/pids/order")
  return "$rc"
}

show_log_tail() {
  local name=$1
  [[ -f $STATE/logs/$name.log ]] || return 0
  log "last lines of $STATE/logs/$name.log:"
  tail -n 40 "$STATE/logs/$name.log" | sed 's/^/    /' >&2
}

# wait_for NAME TIMEOUT CMD...: poll CMD every 0.5 s; fail early if NAME's process has died.
wait_for() {
  local name=$1 timeout=$2 i; shift 2
  for ((i = 0; i < timeout * 2; i++)); do
    "$@" >/dev/null 2>&1 && { log "$name ready after ~$((i / 2))s"; return 0; }
    pid_of "$name" >/dev/null || { log "$name exited during start-up"; show_log_tail "$name"; return 1; }
    sleep 0.5
  done
  log "$name not ready after ${timeout}s"
  show_log_tail "$name"
  return 1
}

# --- ports -------------------------------------------------------------------------------------
# Pick a random port in 20000-31999 (below Linux's ephemeral range 32768+, so outgoing connections
# do not collide) that nothing answers on. Racy by nature: if a process loses the race it fails
# to bind and wait_for reports it with the log.
PICKED_PORTS=" "
# free_port VAR: set VAR (not a $(...) subshell: PICKED_PORTS must persist across calls).
free_port() {
  local p i
  for ((i = 0; i < 100; i++)); do
    p=$((20000 + RANDOM % 12000))
    [[ $PICKED_PORTS == *" $p "* ]] && continue
    # bash's /dev/tcp connect succeeds iff something listens on 127.0.0.1:p.
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      PICKED_PORTS+="$p "
      printf -v "$1" '%s' "$p"
      return 0
    fi
  done
  die "no free loopback port found"
}

# --- PKI (openssl CLI) ---------------------------------------------------------------------------
gen_pki() {
  local d=$STATE/pki
  ( cd "$d"
    # ca NAME CN: self-signed CA.
    ca() {
      openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj "/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -keyout "$1.key" -out "$1.crt"
    }
    # leaf NAME CA SUBJECT EXTENSIONS: key + CSR, signed by CA. Go ignores CN for host names, so
    # serving certs need the SAN.
    leaf() {
      openssl req -new -newkey rsa:2048 -nodes -subj "$3" -keyout "$1.key" -out "$1.csr"
      printf '%b\n' "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n$4" >"$1.ext"
      openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -CAcreateserial -days 7 -extfile "$1.ext" -out "$1.crt"
      rm -f "$1.csr" "$1.ext"
    }
    ca ca gpuadmit-e2e-ca
    leaf apiserver ca "/CN=kube-apiserver" "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost"
    # system:masters bypasses RBAC: the admin the tests (and a human) use.
    leaf admin ca "/O=system:masters/CN=gpuadmit-e2e-admin" "extendedKeyUsage=clientAuth"
    # The scheduler uses its real identity so the bootstrap RBAC (system:kube-scheduler,
    # extension-apiserver-authentication-reader) is exercised as in a real cluster.
    leaf scheduler ca "/CN=system:kube-scheduler" "extendedKeyUsage=clientAuth"
    # kube-controller-manager likewise (bootstrap role system:kube-controller-manager; each controller
    # then runs as its own kube-system ServiceAccount: --use-service-account-credentials).
    leaf controller-manager ca "/CN=system:kube-controller-manager" "extendedKeyUsage=clientAuth"
    # Front-proxy (request-header) CA, as kubeadm sets up. Without --requestheader-client-ca-file
    # the kube-system/extension-apiserver-authentication ConfigMap lacks it and kube-scheduler's
    # delegated authentication logs "missing content for CA bundle" errors in a loop.
    ca front-proxy-ca gpuadmit-e2e-front-proxy-ca
    leaf front-proxy-client front-proxy-ca "/CN=front-proxy-client" "extendedKeyUsage=clientAuth"
    # The client certificate kube-apiserver presents to admission webhooks (write_admission_config), from a CA
    # of its own: a webhook that trusts this CA for callers (gpuadmit serve --client-ca-file) then lets in
    # the API server alone, not every holder of a cluster-CA certificate (the admin, the scheduler, ...).
    ca webhook-client-ca gpuadmit-e2e-webhook-client-ca
    leaf webhook-client webhook-client-ca "/CN=kube-apiserver-webhook-client" "extendedKeyUsage=clientAuth"
    # Service-account token signing key pair: kube-apiserver signs (TokenRequest) and verifies with it;
    # kube-controller-manager's serviceaccount-token controller signs legacy token Secrets with it.
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key
    openssl pkey -in sa.key -pubout -out sa.pub
    # A static bearer token (--token-auth-file) for the tests of kubeconfig credential plugins (exec), whose
    # plugin script prints it as a managed cluster's login would: a cluster admin, like the admin kubeconfig.
    printf '%s,e2e-exec-user,e2e-exec-user,"system:masters"\n' "$(openssl rand -hex 24)" >tokens.csv
    chmod 600 ./*.key tokens.csv
  ) >"$STATE/logs/openssl.log" 2>&1 || { show_log_tail openssl; die "certificate generation failed"; }
}

# write_kubeconfig FILE USER: certs embedded, so the file stands alone.
write_kubeconfig() {
  local f=$1 user=$2 d=$STATE/pki
  cat >"$f" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: gpuadmit-e2e
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $(base64 -w0 "$d/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 "$d/$user.crt")
    client-key-data: $(base64 -w0 "$d/$user.key")
contexts:
- name: gpuadmit-e2e
  context: {cluster: gpuadmit-e2e, user: $user}
current-context: gpuadmit-e2e
EOF
  chmod 600 "$f"
}

# --- kube-apiserver's admission configuration ---------------------------------------------------------
# write_admission_config: $STATE/admission-config.yaml for --admission-control-config-file. The two webhook
# plugins read the credentials they present to webhooks from webhook-client.kubeconfig, whose users are
# matched against the webhook's host:port (clientConfig.url) or service name, '*' matching any: here every
# webhook is shown the webhook-client certificate. kube-apiserver reads both files at start only, hence always
# (a webhook that asks for no certificate is shown none); `restart-apiserver` keeps the flag.
# The plugins of GPUADMIT_E2E_ADMISSION_CONFIG, if set, are added.
write_admission_config() {
  local d=$STATE/pki kubeconfig=$STATE/webhook-client.kubeconfig out=$STATE/admission-config.yaml
  cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
users:
- name: '*'
  user:
    client-certificate-data: $(base64 -w0 "$d/webhook-client.crt")
    client-key-data: $(base64 -w0 "$d/webhook-client.key")
EOF
  chmod 600 "$kubeconfig"
  local webhook_plugins="- name: ValidatingAdmissionWebhook
  configuration: {apiVersion: apiserver.config.k8s.io/v1, kind: WebhookAdmissionConfiguration, kubeConfigFile: \"$kubeconfig\"}
- name: MutatingAdmissionWebhook
  configuration: {apiVersion: apiserver.config.k8s.io/v1, kind: WebhookAdmissionConfiguration, kubeConfigFile: \"$kubeconfig\"}"
  if [[ -z ${GPUADMIT_E2E_ADMISSION_CONFIG:-} ]]; then
    printf 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n%s\n' "$webhook_plugins" >"$out"
    return 0
  fi
  [[ -f $GPUADMIT_E2E_ADMISSION_CONFIG ]] || die "GPUADMIT_E2E_ADMISSION_CONFIG=$GPUADMIT_E2E_ADMISSION_CONFIG not found"
  # Merged as data and written as JSON (which kube-apiserver reads too); the caller's file is left as it is.
  python3 - "$GPUADMIT_E2E_ADMISSION_CONFIG" "$webhook_plugins" "$out" <<'PY' || die "merging GPUADMIT_E2E_ADMISSION_CONFIG failed"
import json, sys, yaml
given = yaml.safe_load(open(sys.argv[1]))
if not isinstance(given, dict) or given.get("kind") != "AdmissionConfiguration":
    sys.exit(f"{sys.argv[1]}: not an AdmissionConfiguration")
ours = yaml.safe_load(sys.argv[2])
clash = sorted({p["name"] for p in ours} & {p.get("name") for p in given.get("plugins") or []})
if clash:
    sys.exit(f"{sys.argv[1]} configures {clash}, which cluster.sh configures itself (the webhook client certificate)")
given["plugins"] = (given.get("plugins") or []) + ours
json.dump(given, open(sys.argv[3], "w"), indent=2)
PY
}

# --- gpuadmit and its webhook configurations ----------------------------------------------------
# `up` with GPUADMIT_BIN set runs `gpuadmit serve` on a free loopback port with a certificate from
# `gpuadmit certs generate` (SAN IP:127.0.0.1, DNS:localhost) and registers mutate.gpuadmit.io and
# validate.gpuadmit.io (manifests/webhooks.yaml.in) with clientConfig.url + caBundle: a `service`
# reference cannot work here (no kube-proxy, no cluster DNS). The subcommands `gpuadmit`, `webhooks`
# and `failure-policy` change that set-up for the failure scenarios; each ends with `settle`.
#
# State in $STATE/gpuadmit/ (one value per file): bin, port, policy (file given to serve; empty =
# the embedded default), failure-policy (Fail|Ignore), webhooks (on|off), webhooks.yaml (rendered).
GA_DIR=$STATE/gpuadmit
WEBHOOK_CERTS=$STATE/webhook-certs
SETTLE_TIMEOUT=${GPUADMIT_E2E_SETTLE_TIMEOUT:-30}
WEBHOOK_OBJECTS=(mutatingwebhookconfiguration/mutate.gpuadmit.io validatingwebhookconfiguration/validate.gpuadmit.io)

kc() { "$KUBECTL" --kubeconfig="$STATE/admin.kubeconfig" "$@"; }
ga_get() { cat "$GA_DIR/$1"; }
ga_set() { printf '%s\n' "$2" >"$GA_DIR/$1"; }

# gpuadmit_start [POLICY_FILE]: start `gpuadmit serve` on the recorded port and wait for /readyz.
# --drain-seconds=0: a stop in the failure scenarios should take effect at once.
gpuadmit_start() {
  local policy=${1-} port args
  port=$(ga_get port)
  ! pid_of gpuadmit >/dev/null || die "gpuadmit is already running (use 'gpuadmit restart')"
  args=(serve --listen "127.0.0.1:$port" --tls-cert-file "$WEBHOOK_CERTS/tls.crt"
    --tls-private-key-file "$WEBHOOK_CERTS/tls.key" --drain-seconds 0 --log-level info
    --kubeconfig "$STATE/admin.kubeconfig")   # the cluster view (admin creds here; RBAC: docs/cluster.md)
  if [[ -n $policy ]]; then
    [[ -f $policy ]] || die "policy file $policy not found"
    policy=$(readlink -f "$policy")
    args+=(--policy "$policy")
  fi
  ga_set policy "$policy"
  start_bg gpuadmit "$(ga_get bin)" "${args[@]}"
  wait_for gpuadmit 30 curl -fsS --max-time 2 --cacert "$WEBHOOK_CERTS/ca.crt" "https://127.0.0.1:$port/readyz"
}

render_webhooks() {
  local ca tpl=$HERE/manifests/webhooks.yaml.in
  [[ -s $GA_DIR/webhooks-template ]] && tpl=$(ga_get webhooks-template)
  ca=$(base64 -w0 "$WEBHOOK_CERTS/ca.crt")
  sed -e "s|@URL@|https://127.0.0.1:$(ga_get port)|g" -e "s|@CA_BUNDLE@|$ca|g" \
    -e "s|@FAILURE_POLICY@|$(ga_get failure-policy)|g" "$tpl" >"$GA_DIR/webhooks.yaml"
}
webhooks_apply() { render_webhooks && kc apply -f "$GA_DIR/webhooks.yaml" >/dev/null; }
webhooks_delete() { kc delete "${WEBHOOK_OBJECTS[@]}" --ignore-not-found >/dev/null; }

# What creating a pod must show, given the recorded state:
#   active   both webhooks are called (the GPU probe gets gpuadmit's toleration, the CUDA-image probe
#            its gpu-intent warning, which only /validate gives)
#   failing  gpuadmit is down and failurePolicy is Fail: "failed calling webhook"
#   plain    no webhook takes part (configurations deleted, or gpuadmit down with Ignore)
expected_behaviour() {
  if [[ $(ga_get webhooks) == off ]]; then echo plain
  elif pid_of gpuadmit >/dev/null; then echo active
  elif [[ $(ga_get failure-policy) == Fail ]]; then echo failing
  else echo plain
  fi
}

# observed_behaviour: one server-side dry run of manifests/probe-pods.yaml (namespace default, so
# a scenario policy must keep gpu-tolerations enforcing and gpu-intent warning there).
observed_behaviour() {
  local out err rc=0 tol=no warn=no
  out=$(kc create --dry-run=server -n default -f "$HERE/manifests/probe-pods.yaml" \
    -o jsonpath='{.metadata.name}={.spec.tolerations[*].key}{"\n"}' 2>"$GA_DIR/probe.err") || rc=$?
  err=$(<"$GA_DIR/probe.err")
  if ((rc != 0)); then
    if [[ $err == *"failed calling webhook"* ]]; then echo failing; else echo "error: ${err//$'\n'/ }"; fi
    return 0
  fi
  grep -q '^gpuadmit-e2e-probe-gpu=.*nvidia\.com/gpu' <<<"$out" && tol=yes
  [[ $err == *"Warning: gpu-intent"* ]] && warn=yes
  case $tol$warn in
    yesyes) echo active ;;
    nono) echo plain ;;
    *) echo "partial (mutated=$tol warned=$warn)" ;;
  esac
}

# settle: poll until the API server behaves as the state says. Webhook configuration changes reach
# the API server through an informer ("a few seconds" per the docs; well under one here).
settle() {
  local want got="" start=$SECONDS
  want=$(expected_behaviour)
  while ((SECONDS - start < SETTLE_TIMEOUT)); do
    got=$(observed_behaviour)
    if [[ $got == "$want" ]]; then
      log "webhooks $want (webhooks $(ga_get webhooks), failurePolicy $(ga_get failure-policy), gpuadmit $(pid_of gpuadmit >/dev/null && echo running || echo stopped)) after ~$((SECONDS - start))s"
      return 0
    fi
    sleep 0.2
  done
  log "ERROR: the API server did not become '$want' within ${SETTLE_TIMEOUT}s; last probe: $got"
  show_log_tail gpuadmit
  return 1
}

# Called at the end of `up`, after the scheduler is ready. Without GPUADMIT_BIN: control plane only.
start_gpuadmit_and_register_webhooks() {
  if [[ -z ${GPUADMIT_BIN:-} ]]; then
    log "GPUADMIT_BIN not set: no webhook registered (control plane only)"
    return 0
  fi
  local bin fp=${GPUADMIT_E2E_FAILURE_POLICY:-Fail}
  bin=$(readlink -f "$GPUADMIT_BIN")
  [[ -f $bin && -x $bin ]] || die "GPUADMIT_BIN=$GPUADMIT_BIN is not an executable file"
  [[ $fp == Fail || $fp == Ignore ]] || die "GPUADMIT_E2E_FAILURE_POLICY must be Fail or Ignore, not '$fp'"
  # gpuadmit watches this cluster (--kubeconfig): with no nodes at all node-fit would deny the GPU
  # probe below, so the fake nodes come first (fake-cluster.sh is idempotent; run.sh calls it again).
  KUBECONFIG=$STATE/admin.kubeconfig GPUADMIT_E2E_KUBECTL=$KUBECTL GPUADMIT_E2E_STATE=$STATE \
    "$HERE/fake-cluster.sh" nodes || die "creating the fake nodes failed"
  mkdir -p "$GA_DIR"
  "$bin" certs generate --ip 127.0.0.1 --dns localhost --out "$WEBHOOK_CERTS" >"$STATE/logs/gpuadmit-certs.log" 2>&1 ||
    { show_log_tail gpuadmit-certs; die "gpuadmit certs generate failed"; }
  free_port WEBHOOK_PORT
  ga_set bin "$bin"
  ga_set port "$WEBHOOK_PORT"
  ga_set failure-policy "$fp"
  ga_set webhooks on
  if [[ -n ${GPUADMIT_E2E_WEBHOOKS_TEMPLATE:-} ]]; then
    [[ -f $GPUADMIT_E2E_WEBHOOKS_TEMPLATE ]] || die "GPUADMIT_E2E_WEBHOOKS_TEMPLATE=$GPUADMIT_E2E_WEBHOOKS_TEMPLATE not found"
    ga_set webhooks-template "$(readlink -f "$GPUADMIT_E2E_WEBHOOKS_TEMPLATE")"
    log "webhook configurations from $GPUADMIT_E2E_WEBHOOKS_TEMPLATE"
  fi
  log "gpuadmit: https://127.0.0.1:$WEBHOOK_PORT ($bin)"
  gpuadmit_start "${GPUADMIT_E2E_POLICY:-}" || exit 1
  webhooks_apply || die "registering the webhook configurations failed"
  settle || exit 1
  {
    printf 'export GPUADMIT_E2E_WEBHOOK_URL=%q\n' "https://127.0.0.1:$WEBHOOK_PORT"
    printf 'export GPUADMIT_E2E_WEBHOOK_CA=%q\n' "$WEBHOOK_CERTS/ca.crt"
  } >>"$STATE/cluster.env"
}

# For the subcommands run against a cluster that is up.
load_running_gpuadmit() {
  [[ -f $STATE/cluster.env ]] || die "no running cluster in $STATE"
  # shellcheck source=/dev/null
  source "$STATE/cluster.env"
  KUBECTL=$GPUADMIT_E2E_KUBECTL
  [[ -f $GA_DIR/port ]] || die "this cluster has no gpuadmit (up ran without GPUADMIT_BIN)"
}

cmd_gpuadmit() {
  load_running_gpuadmit
  case ${1:-} in
    start) gpuadmit_start "${2-${GPUADMIT_E2E_POLICY:-}}" ;;
    stop) stop_one gpuadmit ;;
    restart) stop_one gpuadmit; gpuadmit_start "${2-${GPUADMIT_E2E_POLICY:-}}" ;;
    *) die "usage: $0 gpuadmit start|restart [POLICY_FILE] | stop" ;;
  esac
  settle
}

cmd_webhooks() {
  load_running_gpuadmit
  case ${1:-} in
    on) ga_set webhooks on; webhooks_apply ;;
    off) ga_set webhooks off; webhooks_delete ;;
    *) die "usage: $0 webhooks on|off" ;;
  esac
  settle
}

cmd_failure_policy() {
  load_running_gpuadmit
  [[ ${1:-} == Fail || ${1:-} == Ignore ]] || die "usage: $0 failure-policy Fail|Ignore"
  ga_set failure-policy "$1"
  if [[ $(ga_get webhooks) == on ]]; then webhooks_apply; fi
  settle
}

# --- commands ------------------------------------------------------------------------------------
print_env() {
  cat "$STATE/cluster.env"
}

cmd_up() {
  command -v openssl >/dev/null || die "openssl not found"
  command -v curl >/dev/null || die "curl not found"

  if [[ -e $STATE && ! -f $STATE/$MARKER ]]; then
    # An empty dir (e.g. from mktemp -d) is fine; anything else may be someone's data.
    [[ -d $STATE && -z $(ls -A "$STATE") ]] || die "$STATE exists and is not a gpuadmit e2e state dir; refusing to touch it"
  elif [[ -e $STATE ]]; then
    local n
    if [[ -f $STATE/pids/order ]]; then
      while read -r n; do
        pid_of "$n" >/dev/null && die "a cluster is already running from $STATE ($n alive); run '$DOWN_CMD' first"
      done <"$STATE/pids/order"
    fi
    log "removing stale state dir $STATE"
    rm -rf "$STATE"
  fi

  # Binaries (warm: a few seconds).
  if [[ -z ${GPUADMIT_E2E_K8S_BIN:-} || -z ${GPUADMIT_E2E_ETCD_BIN:-} ]]; then
    local envlines
    envlines=$("$HERE/build-tools.sh") || die "build-tools.sh failed"
    eval "$envlines"
  fi
  local kbin=$GPUADMIT_E2E_K8S_BIN ebin=$GPUADMIT_E2E_ETCD_BIN b
  local -a need=("$kbin/kube-apiserver" "$kbin/kube-scheduler" "$kbin/kubectl" "$ebin/etcd")
  ((CONTROLLERS)) && need+=("$kbin/kube-controller-manager")
  for b in "${need[@]}"; do
    [[ -x $b ]] || die "missing binary $b"
  done

  mkdir -p "$STATE"/{pki,etcd-data,logs,pids}
  touch "$STATE/$MARKER"
  chmod 700 "$STATE/pki" "$STATE/etcd-data"

  # From here on, any failure (or Ctrl-C) stops what was started; logs are kept for inspection.
  UP_DONE=0
  trap 'up_exit' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  free_port ETCD_PORT; free_port ETCD_PEER_PORT; free_port API_PORT; free_port SCHED_PORT; free_port KCM_PORT
  log "ports: etcd $ETCD_PORT (peer $ETCD_PEER_PORT), kube-apiserver $API_PORT, kube-scheduler $SCHED_PORT$( ((CONTROLLERS)) && echo ", kube-controller-manager $KCM_PORT")"

  gen_pki
  write_admission_config
  write_kubeconfig "$STATE/admin.kubeconfig" admin
  write_kubeconfig "$STATE/scheduler.kubeconfig" scheduler
  write_kubeconfig "$STATE/controller-manager.kubeconfig" controller-manager

  # etcd: single member, every URL on 127.0.0.1 (metrics are served on the client listener).
  # --unsafe-no-fsync: throwaway data, and fsync dominates apiserver latency on a shared disk.
  start_bg etcd "$ebin/etcd" \
    --name=gpuadmit-e2e \
    --data-dir="$STATE/etcd-data" \
    --listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="gpuadmit-e2e=http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster-state=new \
    --unsafe-no-fsync=true \
    --log-level=warn
  wait_for etcd 60 etcd_healthy || exit 1

  # kube-apiserver. Non-obvious flags:
  #  --bind/--advertise-address=127.0.0.1: never look for a default-route interface.
  #  --disable-admission-plugins=ServiceAccount: no kube-controller-manager creates the `default`
  #    ServiceAccount, and with the plugin on every Pod create would be rejected.
  #  ...,TaintNodesByCondition: that plugin adds node.kubernetes.io/not-ready:NoSchedule to every new
  #    Node and only the node-lifecycle controller (KCM) removes it: fake nodes would never schedule.
  #  --endpoint-reconciler-type=none: don't publish the loopback IP in the `kubernetes` Endpoints.
  #  --service-cluster-ip-range: only strings in Service objects; nothing routes or dials them.
  #  --requestheader-*/--proxy-client-*: front-proxy auth as kubeadm configures it (see gen_pki).
  #  --cert-dir: it would otherwise default to /var/run/kubernetes (unused since certs are given).
  #  --admission-control-config-file: the client certificate it shows webhooks (write_admission_config).
  start_bg kube-apiserver "$kbin/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 \
    --secure-port="$API_PORT" \
    --cert-dir="$STATE/pki" \
    --tls-cert-file="$STATE/pki/apiserver.crt" \
    --tls-private-key-file="$STATE/pki/apiserver.key" \
    --client-ca-file="$STATE/pki/ca.crt" \
    --token-auth-file="$STATE/pki/tokens.csv" \
    --requestheader-client-ca-file="$STATE/pki/front-proxy-ca.crt" \
    --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User \
    --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="$STATE/pki/front-proxy-client.crt" \
    --proxy-client-key-file="$STATE/pki/front-proxy-client.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$STATE/pki/sa.pub" \
    --service-account-signing-key-file="$STATE/pki/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 \
    --authorization-mode=Node,RBAC \
    --allow-privileged=true \
    --disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
    ${GPUADMIT_E2E_ENABLE_ADMISSION_PLUGINS:+--enable-admission-plugins="$GPUADMIT_E2E_ENABLE_ADMISSION_PLUGINS"} \
    --admission-control-config-file="$STATE/admission-config.yaml" \
    ${FEATURE_GATES:+--feature-gates="$FEATURE_GATES"} \
    --endpoint-reconciler-type=none \
    --profiling=false \
    --v=1
  wait_for kube-apiserver "$API_TIMEOUT" curl -fsS --max-time 5 --cacert "$STATE/pki/ca.crt" \
    --cert "$STATE/pki/admin.crt" --key "$STATE/pki/admin.key" "https://127.0.0.1:$API_PORT/readyz" || exit 1

  # kube-scheduler. --kubeconfig is deprecated but honoured when no --config is given.
  # The authn/authz kubeconfigs let its secure port delegate to the apiserver (else it only warns).
  # Its serving cert is self-signed in memory. --leader-elect=false: one instance, no Lease.
  start_bg kube-scheduler "$kbin/kube-scheduler" \
    --kubeconfig="$STATE/scheduler.kubeconfig" \
    --authentication-kubeconfig="$STATE/scheduler.kubeconfig" \
    --authorization-kubeconfig="$STATE/scheduler.kubeconfig" \
    --leader-elect=false \
    --bind-address=127.0.0.1 \
    --secure-port="$SCHED_PORT" \
    ${FEATURE_GATES:+--feature-gates="$FEATURE_GATES"} \
    --profiling=false \
    --v=2
  # /readyz includes sched-handler-sync: informers are synced and events are handled.
  wait_for kube-scheduler 90 curl -fsSk --max-time 5 "https://127.0.0.1:$SCHED_PORT/readyz" || exit 1

  KUBECTL=$kbin/kubectl
  if ((CONTROLLERS)); then start_controller_manager "$kbin" || exit 1; fi

  {
    printf 'export KUBECONFIG=%q\n' "$STATE/admin.kubeconfig"
    printf 'export GPUADMIT_E2E_STATE=%q\n' "$STATE"
    printf 'export GPUADMIT_E2E_KUBECTL=%q\n' "$kbin/kubectl"
    printf 'export GPUADMIT_E2E_K8S_BIN=%q\n' "$kbin"
    printf 'export GPUADMIT_E2E_ETCD_BIN=%q\n' "$ebin"
    printf 'export GPUADMIT_E2E_API_URL=%q\n' "https://127.0.0.1:$API_PORT"
    printf 'export GPUADMIT_E2E_CA=%q\n' "$STATE/pki/ca.crt"
    # The static token kube-apiserver accepts (tokens.csv), for a credential plugin of the tests to print.
    printf 'export GPUADMIT_E2E_TOKEN_FILE=%q\n' "$STATE/pki/tokens.csv"
    # What kube-apiserver presents to webhooks, and the CA a webhook should trust for it (--client-ca-file).
    printf 'export GPUADMIT_E2E_WEBHOOK_CLIENT_CA=%q\n' "$STATE/pki/webhook-client-ca.crt"
    printf 'export GPUADMIT_E2E_WEBHOOK_CLIENT_CERT=%q GPUADMIT_E2E_WEBHOOK_CLIENT_KEY=%q\n' \
      "$STATE/pki/webhook-client.crt" "$STATE/pki/webhook-client.key"
    printf 'export GPUADMIT_E2E_ETCD_PORT=%q GPUADMIT_E2E_API_PORT=%q GPUADMIT_E2E_SCHED_PORT=%q\n' \
      "$ETCD_PORT" "$API_PORT" "$SCHED_PORT"
    printf 'export GPUADMIT_E2E_CONTROLLERS=%q\n' "$CONTROLLERS"
    printf 'export GPUADMIT_E2E_FEATURE_GATES=%q\n' "$FEATURE_GATES"
    if ((CONTROLLERS)); then printf 'export GPUADMIT_E2E_KCM_PORT=%q\n' "$KCM_PORT"; fi
  } >"$STATE/cluster.env"

  register_crds || exit 1
  start_gpuadmit_and_register_webhooks

  UP_DONE=1
  log "control plane up: kube-apiserver https://127.0.0.1:$API_PORT (state: $STATE; stop with '$DOWN_CMD')"
  print_env
}

# --- kube-controller-manager (GPUADMIT_E2E_CONTROLLERS=1) ---------------------------------------
# Only these controllers run (names as in cmd/kube-controller-manager/names). Deliberately NOT the
# node-lifecycle controller: the fake nodes have no kubelet heartbeat or Lease, it would mark them
# NotReady and taint them unreachable within a minute (nor taint-eviction, node-ipam, ttl, podgc,
# the persistent-volume controllers, endpoints, disruption, HPA, certificates).
#   deployment, replicaset, statefulset, daemonset, job, cronjob: workloads create Pods (through the
#     webhooks, as in a real cluster); garbage-collector: deleting a workload deletes its Pods;
#   resourcequota: quota usage is tracked (quota admission rejects what exceeds it);
#   namespace: deleted namespaces are emptied and go away;
#   serviceaccount, serviceaccount-token: `default` ServiceAccounts (and legacy token Secrets);
#   resourceclaim: a pod's resourceClaimTemplateName becomes a ResourceClaim (and a FailedResourceClaimCreation event
#     when the template is missing; tests/e2e/dra.sh); it acts on pods with spec.resourceClaims only. Its RBAC is the
#     bootstrap role system:controller:resource-claim-controller (DRA is GA and locked on since 1.35).
KCM_CONTROLLERS=deployment-controller,replicaset-controller,statefulset-controller,daemonset-controller,job-controller,cronjob-controller,garbage-collector-controller,resourcequota-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,resourceclaim-controller

# start_controller_manager KBIN: start it and wait until its controllers act: /healthz answers and
# the serviceaccount controller has created the `default` ServiceAccount of `default` (which needs
# the controllers' own ServiceAccount tokens, i.e. TokenRequest and the SA key pair, to work).
start_controller_manager() {
  local kbin=$1
  # --use-service-account-credentials: each controller uses its kube-system ServiceAccount (bootstrap
  #   RBAC system:controller:*), as kubeadm sets it up; KCM's own identity only gets those tokens.
  # --service-account-private-key-file: the apiserver's signing key (serviceaccount-token controller).
  # --root-ca-file: put into token Secrets. --cluster-signing-*: not needed (no CSR signing controller).
  # Serving cert: self-signed in memory (no --cert-dir files), secure port on 127.0.0.1 only.
  start_bg kube-controller-manager "$kbin/kube-controller-manager" \
    --kubeconfig="$STATE/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$STATE/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$STATE/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 \
    --secure-port="$KCM_PORT" \
    --leader-elect=false \
    --controllers="$KCM_CONTROLLERS${GPUADMIT_E2E_EXTRA_CONTROLLERS:+,$GPUADMIT_E2E_EXTRA_CONTROLLERS}" \
    --use-service-account-credentials=true \
    --service-account-private-key-file="$STATE/pki/sa.key" \
    --root-ca-file="$STATE/pki/ca.crt" \
    --cluster-name=gpuadmit-e2e \
    ${FEATURE_GATES:+--feature-gates="$FEATURE_GATES"} \
    --profiling=false \
    --v=1
  wait_for kube-controller-manager 90 curl -fsSk --max-time 5 "https://127.0.0.1:$KCM_PORT/healthz" || return 1
  wait_for kube-controller-manager 60 kc get serviceaccount default -n default -o name || return 1
}

# register_crds: the CRDs the scenarios use, Established before `up` returns, so a scenario's first
# `kubectl create` finds the kind: manifests/crds.yaml (PyTorchJob, schema-less) and the projects' own published
# CRDs in manifests/crds/ (RayCluster, LeaderWorkerSet, Volcano Job, InferenceService; Argo Workflows' Workflow,
# WorkflowTemplate, ClusterWorkflowTemplate and CronWorkflow (the full CRDs); Tekton's TaskRun, PipelineRun, Task and
# Pipeline (conversion webhook replaced by strategy None); Kubeflow Trainer's TrainJob, TrainingRuntime and
# ClusterTrainingRuntime; NVIDIA NIM's NIMService and NIMCache; Karpenter's NodePool, which gpuadmit's view watches
# and the truth profiles hold; source, tag and any change in each file's header).
# Server-side apply: a client-side apply keeps the whole object as JSON in the kubectl.kubernetes.io/
# last-applied-configuration annotation, at most 262144 bytes; RayCluster's is 290743, LeaderWorkerSet's 634666,
# InferenceService's 373819 and each Argo CRD's about 1.2 MB ("metadata.annotations: Too long"). Server-side apply
# records field ownership instead.
register_crds() {
  log "registering the CRDs in manifests/crds.yaml and manifests/crds/"
  local -a files=(-f "$HERE/manifests/crds.yaml" -f "$HERE/manifests/crds/")
  kc apply --server-side --field-manager=gpuadmit-e2e "${files[@]}" >/dev/null ||
    { log "ERROR: applying manifests/crds.yaml and manifests/crds/ failed"; return 1; }
  # `kubectl wait --for=condition=...` (and --for=jsonpath=...) fails at once, instead of waiting, while a CRD's
  # status.conditions is still null: the API server's naming controller takes a moment with the large published
  # CRDs ("error: .status.conditions accessor error: <nil> is of the type <nil>"). So ask again, 60 s in all.
  local start=$SECONDS left
  while :; do
    left=$((60 - (SECONDS - start))); ((left > 0)) || left=1
    kc wait --for=condition=Established --timeout="${left}s" "${files[@]}" >/dev/null 2>"$STATE/logs/crd-wait.log" && break
    if ((SECONDS - start >= 60)); then
      log "ERROR: the CRDs in manifests/crds.yaml and manifests/crds/ did not become Established within 60s: $(<"$STATE/logs/crd-wait.log")"
      return 1
    fi
    sleep 0.5
  done
}

etcd_healthy() {
  local out
  out=$(curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_PORT/health") && [[ $out == *'"health":"true"'* ]]
}

up_exit() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ ${UP_DONE:-0} != 1 ]]; then
    log "up failed (exit $rc): stopping what was started; logs kept in $STATE/logs ('$DOWN_CMD' removes them)"
    stop_all || true
    [[ $rc == 0 ]] && rc=1
  fi
  exit "$rc"
}

cmd_down() {
  if [[ ! -e $STATE ]]; then
    log "nothing to stop ($STATE does not exist)"
    return 0
  fi
  [[ -f $STATE/$MARKER ]] || die "$STATE is not a gpuadmit e2e state dir; refusing to touch it"
  stop_all || die "some processes could not be stopped; state kept in $STATE"
  rm -rf "$STATE"
  log "down: all processes stopped, $STATE removed"
}

cmd_status() {
  [[ -f $STATE/pids/order ]] || { echo "no cluster state in $STATE"; return 1; }
  local name pid rc=0
  while read -r name; do
    if pid=$(pid_of "$name"); then echo "$name: running (pid $pid)"
    elif [[ $name == gpuadmit ]]; then echo "$name: stopped"   # may be on purpose (gpuadmit stop)
    else echo "$name: NOT running"; rc=1; fi
  done <"$STATE/pids/order"
  if [[ -f $GA_DIR/port ]]; then
    echo "webhooks: $(ga_get webhooks), failurePolicy $(ga_get failure-policy), https://127.0.0.1:$(ga_get port), policy $(p=$(ga_get policy); echo "${p:-<embedded default>}")"
  fi
  return "$rc"
}

cmd_env() {
  [[ -f $STATE/cluster.env ]] || die "no running cluster in $STATE"
  print_env
}

# restart-apiserver: TERM kube-apiserver, start it again with the command line it ran with (read back from
# /proc, so the flags in cmd_up stay the single source), and wait for /readyz. etcd, the scheduler and
# gpuadmit keep running; clients see their connections drop and must reconnect by themselves.
# DOWN_SECONDS keeps it stopped that long after it exited: on TERM it stops listening at once but may keep
# its open watch streams for the whole STOP_TIMEOUT, so without a pause the outage a client sees can be as
# short as the start (about a second).
cmd_restart_apiserver() {
  local down=${1:-0}
  [[ $down =~ ^[0-9]+$ ]] || die "restart-apiserver: DOWN_SECONDS must be a whole number, not '$down'"
  [[ -f $STATE/cluster.env ]] || die "no running cluster in $STATE"
  # shellcheck source=/dev/null
  source "$STATE/cluster.env"
  local pid args
  pid=$(pid_of kube-apiserver) || die "kube-apiserver is not running"
  mapfile -d '' -t args <"/proc/$pid/cmdline"
  stop_one kube-apiserver || die "kube-apiserver did not stop"
  sleep "$down"
  start_bg kube-apiserver "${args[@]}"
  wait_for kube-apiserver "$API_TIMEOUT" curl -fsS --max-time 5 --cacert "$STATE/pki/ca.crt" \
    --cert "$STATE/pki/admin.crt" --key "$STATE/pki/admin.key" "https://127.0.0.1:$GPUADMIT_E2E_API_PORT/readyz"
}

# restart-etcd: the same for etcd (its data dir is kept): kube-apiserver keeps running and reconnects, and
# its watch cache relists; /readyz waits until it answers again.
cmd_restart_etcd() {
  local down=${1:-0}
  [[ $down =~ ^[0-9]+$ ]] || die "restart-etcd: DOWN_SECONDS must be a whole number, not '$down'"
  [[ -f $STATE/cluster.env ]] || die "no running cluster in $STATE"
  # shellcheck source=/dev/null
  source "$STATE/cluster.env"
  local pid args
  pid=$(pid_of etcd) || die "etcd is not running"
  mapfile -d '' -t args <"/proc/$pid/cmdline"
  stop_one etcd || die "etcd did not stop"
  sleep "$down"
  start_bg etcd "${args[@]}"
  wait_for kube-apiserver "$API_TIMEOUT" curl -fsS --max-time 5 --cacert "$STATE/pki/ca.crt" \
    --cert "$STATE/pki/admin.crt" --key "$STATE/pki/admin.key" "https://127.0.0.1:$GPUADMIT_E2E_API_PORT/readyz"
}

case ${1:-} in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  gpuadmit) shift; cmd_gpuadmit "$@" ;;
  webhooks) shift; cmd_webhooks "$@" ;;
  failure-policy) shift; cmd_failure_policy "$@" ;;
  settle) load_running_gpuadmit; settle ;;
  restart-apiserver) shift; cmd_restart_apiserver "$@" ;;
  restart-etcd) shift; cmd_restart_etcd "$@" ;;
  *) echo "usage: $0 up|down|status|env | gpuadmit start|stop|restart [POLICY] | webhooks on|off | failure-policy Fail|Ignore | settle | restart-apiserver [DOWN_SECONDS] | restart-etcd [DOWN_SECONDS]" >&2; exit 2 ;;
esac
