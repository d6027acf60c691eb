# The do-nothing webhook (tools/nullwebhook), for overhead.sh and burst.sh, which source this file. They
# define HERE (tests/e2e), STATE (the cluster.sh state dir, its cluster.env sourced), WORK (a scratch dir),
# NS (a namespace), $WORK/pod.json (a pod the webhooks patch), kc (kubectl) and die; these functions set
# NULL_PID and NULL_URL.

# The do-nothing webhook, on the webhook certificate of cluster.sh (SAN 127.0.0.1), asking gpuadmit
# once per path for the answer it then repeats.
start_null_webhook() {
  local i
  (cd "$HERE/tools/nullwebhook" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -o "$WORK/nullwebhook" .) ||
    die "building tools/nullwebhook failed"
  "$WORK/nullwebhook" -listen 127.0.0.1:0 -cert "$STATE/webhook-certs/tls.crt" -key "$STATE/webhook-certs/tls.key" \
    -upstream "$GPUADMIT_E2E_WEBHOOK_URL" -ca "$GPUADMIT_E2E_WEBHOOK_CA" >"$WORK/null.log" 2>"$WORK/null.err" &
  NULL_PID=$!
  for ((i = 0; i < 100; i++)); do
    NULL_URL=$(sed -n '1s/^listening /https:\/\//p' "$WORK/null.log")
    [[ -z $NULL_URL ]] || break
    kill -0 "$NULL_PID" 2>/dev/null || die "nullwebhook exited: $(cat "$WORK/null.err")"
    sleep 0.1
  done
  [[ -n $NULL_URL ]] || die "nullwebhook did not start"
  sed "s|$GPUADMIT_E2E_WEBHOOK_URL/|$NULL_URL/|g" "$STATE/gpuadmit/webhooks.yaml" >"$WORK/null-webhooks.yaml"
  if ! grep -q "$NULL_URL/mutate" "$WORK/null-webhooks.yaml" || ! grep -q "$NULL_URL/validate" "$WORK/null-webhooks.yaml"; then
    die "cannot point $STATE/gpuadmit/webhooks.yaml at the do-nothing webhook"
  fi
}

# switch_to_null: both configurations at the do-nothing webhook, then wait until one dry-run create
# reaches it on both paths (an informer carries the change to the API server).
switch_to_null() {
  local mutate validate start=$SECONDS
  kc apply -f "$WORK/null-webhooks.yaml" >/dev/null || die "registering the do-nothing webhook failed"
  while ((SECONDS - start < 30)); do
    mutate=$(grep -c '^/mutate ' "$WORK/null.log" || true)
    validate=$(grep -c '^/validate ' "$WORK/null.log" || true)
    kc create --dry-run=server -n "$NS" -f "$WORK/pod.json" >/dev/null 2>"$WORK/probe.err" ||
      die "dry-run create through the do-nothing webhook failed: $(cat "$WORK/probe.err")"
    (($(grep -c '^/mutate ' "$WORK/null.log") == mutate + 1 &&
      $(grep -c '^/validate ' "$WORK/null.log") == validate + 1)) && return 0
    sleep 0.2
  done
  die "the API server did not call the do-nothing webhook within 30s"
}

