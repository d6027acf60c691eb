#!/usr/bin/env bash
# Who may call gpuadmit (#22 item 10) on the real control plane: `gpuadmit serve --client-ca-file` gives a
# review only to callers that present a certificate from that CA, and the API server presents one (cluster.sh
# starts kube-apiserver with an admission kubeconfig, as the Kubernetes docs describe under "Authenticate
# apiservers"); `--metrics-listen` serves /metrics on a port of its own, which never asks for one.
#
#   tests/e2e/client-auth.sh GPUADMIT_BIN
#
# The control plane: with GPUADMIT_E2E_STATE naming a running cluster.sh cluster that has gpuadmit (run.sh
# calls this script after its scenarios, on its cluster; or yours after `eval "$(cluster.sh up)"`), that one
# is reused. Otherwise it starts its own (cluster.sh up with GPUADMIT_BIN, state /tmp/gpuadmit-client-auth, no
# controllers) and stops it on exit.
#
# Either way it runs a gpuadmit of its own on two more loopback ports, `serve --kubeconfig ... --client-ca-file
# <a copy of the cluster's webhook client CA> --metrics-listen 127.0.0.1:<port 2>`, and points the cluster's two
# webhook configurations ($STATE/gpuadmit/webhooks.yaml, rendered from whatever template the cluster was
# started with: tests/chart's e2e phase gives the Helm chart's) at it. On exit it puts them back (cluster.sh
# webhooks on, which returns once the API server calls the cluster's own gpuadmit again).
#
# Checks (stdout, one PASS/FAIL line each, then `client-auth: N passed, M failed`; exit 0 iff M is 0):
#   a) the API server's reviews succeed: its calls reach this gpuadmit (logged on /mutate and /validate), a GPU
#      pod is mutated, a CUDA pod warned, a fractional-GPU pod denied, as without client authentication;
#   b) POST /validate and /mutate without a client certificate: 401, the body naming the client certificate;
#   c) a client certificate from another CA: the TLS handshake fails (no HTTP status);
#   d) the API server's client certificate, used by curl: POST /validate 200 with the review's uid;
#   e) /healthz and /readyz without a client certificate: 200 (kubelet probes have none);
#   f) /metrics on the metrics port without a client certificate: 200 with gpuadmit_ series (also with another
#      CA's certificate: that port never checks callers), no review there, and GET /metrics on the main port 404;
#   g) the CA file is re-read: with another CA in it the API server's certificate is refused within seconds,
#      and let in again once the file is put back.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: tests/e2e/client-auth.sh GPUADMIT_BIN}
[[ -x $BIN ]] || { echo "FAIL  setup: $BIN is not an executable"; echo "client-auth: 0 passed, 1 failed"; exit 1; }
BIN=$(readlink -f "$BIN")
RELOAD_WAIT=10   # seconds a change of the CA file may take (the server re-reads it every 2 s)

log() { printf '%s client-auth: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

WORK=$(mktemp -d /tmp/gpuadmit-client-auth.XXXXXX)
OWN_CLUSTER=0
SERVE_PID=
TOOK_OVER=0
# shellcheck disable=SC2034 # counted by lib/standalone.sh
PASSED=0 FAILED=0

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if ((TOOK_OVER && !OWN_CLUSTER)); then
    # The cluster's own configurations back (on: re-applied, and cluster.sh waits until the API server calls
    # its gpuadmit again; off: they were not there, so none is left pointing here).
    if [[ $(cat "$STATE/gpuadmit/webhooks" 2>/dev/null) == on ]]; then
      if "$HERE/cluster.sh" webhooks on 2>"$WORK/restore.log"; then log "the cluster's webhook configurations are back"
      else log "WARNING: putting the cluster's webhooks back failed:"; cat "$WORK/restore.log" >&2; rc=1; fi
    else
      kc delete -f "$WORK/webhooks.yaml" --ignore-not-found >/dev/null 2>&1
    fi
  fi
  if [[ -n $SERVE_PID ]]; then kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; fi
  standalone_finish "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck disable=SC2034 # read by lib/standalone.sh
SUITE=client-auth
# shellcheck source=lib/standalone.sh
source "$HERE/lib/standalone.sh"

# --- the control plane -----------------------------------------------------------------------------------
attach_control_plane /tmp/gpuadmit-client-auth
[[ -f ${GPUADMIT_E2E_WEBHOOK_CLIENT_CA:-} && -f ${GPUADMIT_E2E_WEBHOOK_CLIENT_CERT:-} ]] ||
  { echo "FAIL  setup: the cluster in $STATE was started without a webhook client certificate (an older cluster.sh)"; FAILED=1; summary; exit 1; }

# --- certificates and ports --------------------------------------------------------------------------------
# A CA the server does not trust, with a client certificate of its own: what a caller other than the API
# server might present. The server's CA file is a copy of the cluster's webhook client CA, so that g) can swap
# it without touching the cluster's PKI.
( cd "$WORK" &&
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=client-auth-other-ca \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign -keyout other-ca.key -out other-ca.crt &&
  openssl req -new -newkey rsa:2048 -nodes -subj /CN=not-the-apiserver -keyout other.key -out other.csr &&
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >other.ext &&
  openssl x509 -req -in other.csr -CA other-ca.crt -CAkey other-ca.key -CAcreateserial -days 1 -extfile other.ext -out other.crt
) >"$WORK/openssl.log" 2>&1 || { cat "$WORK/openssl.log"; echo "FAIL  setup: openssl"; FAILED=1; summary; exit 1; }
cp "$GPUADMIT_E2E_WEBHOOK_CLIENT_CA" "$WORK/client-ca.crt"

pick_port() {
  local p i
  for ((i = 0; i < 100; i++)); do
    p=$((20000 + RANDOM % 12000))
    [[ $p != "${PORT:-}" ]] || continue
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
  done
  return 1
}
PORT=$(pick_port) && MPORT=$(pick_port) || { echo "FAIL  setup: no free loopback port"; FAILED=1; summary; exit 1; }
URL=https://127.0.0.1:$PORT
MURL=https://127.0.0.1:$MPORT
SERVER_CA=$STATE/webhook-certs/ca.crt

# --- gpuadmit serve --client-ca-file --metrics-listen ------------------------------------------------------
# serve_start: start it and wait for /readyz on both ports, without a client certificate (e: the kubelet's
# probes have none), at most 30 s.
serve_start() {
  local i
  "$BIN" serve --listen "127.0.0.1:$PORT" --tls-cert-file "$STATE/webhook-certs/tls.crt" \
    --tls-private-key-file "$STATE/webhook-certs/tls.key" --drain-seconds 0 --kubeconfig "$KUBECONFIG" \
    --client-ca-file "$WORK/client-ca.crt" --metrics-listen "127.0.0.1:$MPORT" </dev/null >>"$WORK/gpuadmit.log" 2>&1 &
  SERVE_PID=$!
  for ((i = 0; i < 150; i++)); do
    curl -fsS --max-time 2 --cacert "$SERVER_CA" "$URL/readyz" >/dev/null 2>&1 &&
      curl -fsS --max-time 2 --cacert "$SERVER_CA" "$MURL/readyz" >/dev/null 2>&1 && { echo "ready after ~$((i / 5))s"; return 0; }
    kill -0 "$SERVE_PID" 2>/dev/null || { echo "gpuadmit serve exited:"; tail -n 15 "$WORK/gpuadmit.log"; SERVE_PID=; return 1; }
    sleep 0.2
  done
  echo "not ready after 30 s; /readyz says: $(curl -sS --max-time 2 --cacert "$SERVER_CA" "$URL/readyz" 2>&1)," \
    "on the metrics port: $(curl -sS --max-time 2 --cacert "$SERVER_CA" "$MURL/readyz" 2>&1)"
  tail -n 15 "$WORK/gpuadmit.log"
  return 1
}

# reviews ENDPOINT: how many reviews this gpuadmit has logged on /ENDPOINT.
reviews() { grep -c "\"msg\":\"review\".*\"endpoint\":\"$1\"" "$WORK/gpuadmit.log"; }

# take_over: the cluster's configurations with this gpuadmit's URL, applied; then dry-run the probe pods until
# this gpuadmit logs a review on both paths (the cluster's gpuadmit would answer the same: only the log tells).
# A review the API server could not get (no certificate shown: 401; a refused one: TLS) fails the dry run
# under Fail, or goes unlogged under Ignore: either way the loop runs out.
take_over() {
  local i m v out=
  sed "s|$GPUADMIT_E2E_WEBHOOK_URL/|$URL/|g" "$STATE/gpuadmit/webhooks.yaml" >"$WORK/webhooks.yaml"
  grep -q "$URL/mutate" "$WORK/webhooks.yaml" && grep -q "$URL/validate" "$WORK/webhooks.yaml" ||
    { echo "the cluster's configurations do not call $GPUADMIT_E2E_WEBHOOK_URL/mutate and /validate"; return 1; }
  kc apply -f "$WORK/webhooks.yaml" >/dev/null || return 1
  TOOK_OVER=1
  for ((i = 0; i < 150; i++)); do
    m=$(reviews mutate) v=$(reviews validate)
    out=$(kc create --dry-run=server -n default -f "$HERE/manifests/probe-pods.yaml" 2>&1)
    (($(reviews mutate) > m && $(reviews validate) > v)) && { echo "the API server calls $URL after ~$((i / 5))s"; return 0; }
    sleep 0.2
  done
  echo "the API server did not get a review from $URL within 30 s; the last dry run said:"
  echo "$out"
  return 1
}

# --- the checks' steps -------------------------------------------------------------------------------------
cat >"$WORK/half-gpu.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: half-gpu
  labels: {app.kubernetes.io/part-of: gpuadmit-e2e}
spec:
  containers:
  - name: train
    image: registry.invalid/train:1
    resources:
      limits: {nvidia.com/gpu: 0.5, cpu: "4", memory: 16Gi}
EOF
# An AdmissionReview as the API server sends it: a GPU pod without the GPU toleration.
cat >"$WORK/review.json" <<'EOF'
{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
 "request": {"uid": "client-auth-e2e-0001",
  "kind": {"group": "", "version": "v1", "kind": "Pod"}, "resource": {"group": "", "version": "v1", "resource": "pods"},
  "requestKind": {"group": "", "version": "v1", "kind": "Pod"}, "requestResource": {"group": "", "version": "v1", "resource": "pods"},
  "name": "curl-probe", "namespace": "default", "operation": "CREATE",
  "userInfo": {"username": "client-auth-e2e", "groups": ["system:authenticated"]},
  "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "curl-probe", "namespace": "default"},
   "spec": {"containers": [{"name": "c", "image": "registry.invalid/probe:0",
    "resources": {"limits": {"nvidia.com/gpu": "1", "cpu": "1", "memory": "16Gi"}}}]}},
  "oldObject": null, "dryRun": true,
  "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}}
EOF

# call NAME METHOD URL [CURL-ARGS...]: curl once; sets CODE (HTTP status, 000 for none), RC (curl's exit
# status), BODY and ERR, and prints a line saying so. The server's certificate is always verified.
call() {
  local name=$1 method=$2 url=$3; shift 3
  local -a data=()
  [[ $method == POST ]] && data=(-H 'Content-Type: application/json' --data-binary "@$WORK/review.json")
  RC=0
  CODE=$(curl -sS --max-time 5 --cacert "$SERVER_CA" -X "$method" "${data[@]}" -o "$WORK/body" -w '%{http_code}' \
    "$@" "$url" 2>"$WORK/curl.err") || RC=$?
  BODY=$(cat "$WORK/body" 2>/dev/null) ERR=$(<"$WORK/curl.err")
  rm -f "$WORK/body"
  echo "$name: $method $url -> HTTP $CODE, curl exit $RC${ERR:+ ($ERR)}${BODY:+; body: ${BODY:0:300}}"
}
NO_CERT=()
API_CERT=(--cert "$GPUADMIT_E2E_WEBHOOK_CLIENT_CERT" --key "$GPUADMIT_E2E_WEBHOOK_CLIENT_KEY")
OTHER_CERT=(--cert "$WORK/other.crt" --key "$WORK/other.key")

# want_tls_refusal: the last call failed in the TLS layer: no HTTP status, and curl's error is a TLS one
# (35: handshake; 56: under TLS 1.3 the client finishes first and reads the server's alert on its first
# read), not a refused connection (7) or a timeout (28).
want_tls_refusal() {
  [[ $CODE == 000 && ($RC == 35 || $RC == 56) ]] && grep -Eqi 'alert|ssl|tls|handshake|certificate' <<<"$ERR" ||
    { echo "want a TLS handshake failure (curl exit 35 or 56, no HTTP status)"; return 1; }
}

api_server_verdicts() {
  local out err rc=0
  out=$(kc create --dry-run=server -n default -f "$HERE/manifests/probe-pods.yaml" \
    -o jsonpath='{.metadata.name}={.spec.tolerations[*].key}{"\n"}' 2>"$WORK/probe.err") || rc=$?
  err=$(<"$WORK/probe.err")
  echo "$out"; echo "$err"
  ((rc == 0)) || { echo "the probe pods' dry run failed"; return 1; }
  grep -q '^gpuadmit-e2e-probe-gpu=.*nvidia\.com/gpu' <<<"$out" || { echo "the GPU probe pod lacks gpuadmit's toleration"; return 1; }
  [[ $err == *"Warning: gpu-intent"* ]] || { echo "the CUDA probe pod got no gpu-intent warning (/validate)"; return 1; }
}

api_server_denial() {
  local out
  out=$(kc create --dry-run=server -n default -f "$WORK/half-gpu.yaml" 2>&1) && { echo "created: $out"; return 1; }
  echo "$out"
  grep -Eq 'admission webhook "(mutate|validate)\.[^"]*gpuadmit\.io" denied the request' <<<"$out" &&
    grep -q '\[gpu-whole-units\]' <<<"$out"
}

no_cert_401() {   # ENDPOINT
  call "no client certificate" POST "$URL/$1" "${NO_CERT[@]}"
  [[ $CODE == 401 ]] || { echo "want HTTP 401"; return 1; }
  grep -qi 'client certificate' <<<"$BODY" || { echo "want a body naming the client certificate"; return 1; }
}

other_ca_refused() {
  local rc=0
  call "another CA's certificate" POST "$URL/validate" "${OTHER_CERT[@]}"
  want_tls_refusal || rc=1
  # Not only for reviews: a certificate that does not verify fails the handshake whatever the path.
  call "another CA's certificate" GET "$URL/healthz" "${OTHER_CERT[@]}"
  want_tls_refusal || rc=1
  return "$rc"
}

api_cert_200() {
  call "the API server's certificate" POST "$URL/validate" "${API_CERT[@]}"
  [[ $CODE == 200 ]] || { echo "want HTTP 200"; return 1; }
  grep -q '"uid": *"client-auth-e2e-0001"' <<<"$BODY" && grep -q '"allowed"' <<<"$BODY" ||
    { echo "want an AdmissionReview response with uid client-auth-e2e-0001"; return 1; }
}

probes_open() {
  local rc=0 path base
  for base in "$URL" "$MURL"; do
    for path in healthz readyz; do
      call "no client certificate" GET "$base/$path" "${NO_CERT[@]}"
      [[ $CODE == 200 ]] || { echo "want HTTP 200"; rc=1; }
    done
  done
  return "$rc"
}

metrics_port() {
  local rc=0 series
  call "no client certificate" GET "$MURL/metrics" "${NO_CERT[@]}"
  series=$(grep -c '^gpuadmit_' <<<"$BODY")
  echo "($series gpuadmit_ samples)"
  [[ $CODE == 200 ]] && ((series > 0)) || { echo "want HTTP 200 with gpuadmit_ series"; rc=1; }
  # Prometheus may present a certificate of some other CA (a mesh's): that port checks no caller.
  call "another CA's certificate" GET "$MURL/metrics" "${OTHER_CERT[@]}"
  [[ $CODE == 200 ]] || { echo "want HTTP 200: the metrics port must not check client certificates"; rc=1; }
  return "$rc"
}

metrics_port_no_review() {
  local rc=0 ep
  # It answers anyone, so it must never give a review: otherwise it would be the way around --client-ca-file.
  for ep in validate mutate; do
    call "no client certificate, metrics port" POST "$MURL/$ep" "${NO_CERT[@]}"
    [[ $CODE != 200 && $BODY != *'"uid"'* ]] || { echo "want no review on the metrics port"; rc=1; }
  done
  return "$rc"
}

main_port_no_metrics() {
  local rc=0
  call "no client certificate" GET "$URL/metrics" "${NO_CERT[@]}"
  [[ $CODE == 404 ]] || { echo "want HTTP 404"; rc=1; }
  call "the API server's certificate" GET "$URL/metrics" "${API_CERT[@]}"
  [[ $CODE == 404 ]] || { echo "want HTTP 404"; rc=1; }
  return "$rc"
}

# wait_api_cert WANT: poll until a POST /validate with the API server's certificate gives WANT (200 | refused).
wait_api_cert() {
  local want=$1 start=$SECONDS got
  while :; do
    call "the API server's certificate" POST "$URL/validate" "${API_CERT[@]}" >"$WORK/last-call"
    if [[ $CODE == 200 ]]; then got=200; elif [[ $CODE == 000 ]] && want_tls_refusal >/dev/null; then got=refused; else got=other; fi
    [[ $got == "$want" ]] && { cat "$WORK/last-call"; echo "($want after ~$((SECONDS - start))s)"; return 0; }
    ((SECONDS - start < RELOAD_WAIT)) || break
    sleep 0.5
  done
  cat "$WORK/last-call"
  echo "want $want within ${RELOAD_WAIT}s"
  return 1
}
ca_file_swapped() { cp "$WORK/other-ca.crt" "$WORK/client-ca.crt.new" && mv "$WORK/client-ca.crt.new" "$WORK/client-ca.crt" && wait_api_cert refused; }
ca_file_restored() { cp "$GPUADMIT_E2E_WEBHOOK_CLIENT_CA" "$WORK/client-ca.crt.new" && mv "$WORK/client-ca.crt.new" "$WORK/client-ca.crt" && wait_api_cert 200; }

# --- the checks ------------------------------------------------------------------------------------------
t_start=$SECONDS
check "serve --client-ca-file --metrics-listen ready (/readyz on both ports, no client certificate)" serve_start ||
  { summary; exit 1; }
check "a) webhook configurations pointed at it; the API server's reviews reach it (/mutate, /validate)" take_over ||
  { summary; exit 1; }
check "a) API server: the GPU pod mutated (toleration), the CUDA pod warned, as without client auth" api_server_verdicts
check "a) API server: a fractional-GPU pod denied by gpuadmit" api_server_denial
check "b) POST /validate without a client certificate: 401 naming the client certificate" no_cert_401 validate
check "b) POST /mutate without a client certificate: 401 naming the client certificate" no_cert_401 mutate
check "c) a client certificate from another CA: TLS handshake refused (/validate, /healthz)" other_ca_refused
check "d) the API server's client certificate (curl): POST /validate 200 with the review" api_cert_200
check "e) /healthz and /readyz without a client certificate: 200 (both ports)" probes_open
check "f) /metrics on the metrics port: 200 with gpuadmit_ series, no client certificate checked" metrics_port
check "f) the metrics port gives no review (POST /validate, /mutate)" metrics_port_no_review
check "f) GET /metrics on the main port: 404" main_port_no_metrics
check "g) CA file re-read: another CA in it refuses the API server's certificate" ca_file_swapped
check "g) ... the CA file put back: the API server's certificate accepted again" ca_file_restored
check "g) ... and the API server's own reviews go through again" api_server_verdicts

log "done in $((SECONDS - t_start))s"
summary
