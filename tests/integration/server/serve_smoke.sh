#!/usr/bin/env bash
# gpuadmit serve as a process: dev certificates, the sample review through curl, SIGHUP, and SIGTERM draining
# to exit 0. Usage: serve_smoke.sh BIN SOURCE_DIR. Waits poll with a deadline; nothing sleeps a guessed time.
set -euo pipefail
bin=$1
source_dir=$2
work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  echo "--- stdout" >&2; cat "$work/out" >&2 || true
  echo "--- stderr" >&2; cat "$work/err" >&2 || true
  exit 1
}
# wait_for SECONDS COMMAND...: polls COMMAND every 50 ms until it succeeds or the deadline passes.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.05
  done
}

cd "$source_dir"
"$bin" serve --listen 127.0.0.1:0 --dev-self-signed --drain-seconds 1 >"$work/out" 2>"$work/err" &
pid=$!
wait_for 10 grep -q '"msg":"serving"' "$work/out" || fail "no serving line"
port=$(grep -o '"listen":"127.0.0.1:[0-9]*"' "$work/out" | grep -o '[0-9]*"$' | tr -d '"')
dir=$(grep -o '"msg":"dev certificates generated","dir":"[^"]*"' "$work/out" | sed 's/.*"dir":"//; s/"$//')
[ -n "$port" ] && [ "$port" != 0 ] || fail "no bound port in the serving line"
wait_for 5 grep -q "curl --cacert $dir/ca.crt .*https://127.0.0.1:$port/mutate" "$work/err" || fail "no curl line"
grep -q '^LS0tLS1CRUdJTi' "$work/err" || fail "no caBundle"

reply=$(curl -sS --cacert "$dir/ca.crt" -H 'Content-Type: application/json' \
  --data-binary @deploy/examples/admission-review-gpu-pod.json "https://127.0.0.1:$port/mutate?timeout=10s")
echo "$reply" | grep -q '"uid":"0f4e9f6a-8c2d-4b1e-9a7f-3d5c6b8e2a10"' || fail "uid not echoed: $reply"
echo "$reply" | grep -q '"patchType":"JSONPatch"' || fail "no patch: $reply"
grep -q '"msg":"review".*"uid":"0f4e9f6a-8c2d-4b1e-9a7f-3d5c6b8e2a10"' "$work/out" || fail "no review log line"
[ "$(curl -sS --cacert "$dir/ca.crt" "https://127.0.0.1:$port/readyz")" = ok ] || fail "not ready"

kill -HUP "$pid"
wait_for 5 grep -q '"msg":"SIGHUP' "$work/out" || fail "SIGHUP not handled"

kill -TERM "$pid"
wait_for 5 grep -q '"msg":"termination signal: draining"' "$work/out" || fail "SIGTERM not handled"
status=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$dir/ca.crt" "https://127.0.0.1:$port/readyz" || true)
[ "$status" = 503 ] || fail "readyz is $status while draining, not 503"
wait_for 10 bash -c "! kill -0 $pid 2>/dev/null" || fail "still running 10 s after SIGTERM"
code=0
wait "$pid" || code=$?
pid=
[ "$code" = 0 ] || fail "exit code $code after SIGTERM"
grep -q '"msg":"stopped","clean":true' "$work/out" || fail "no clean stop line"
[ ! -e "$dir" ] || fail "dev certificate directory $dir left behind"
echo "serve smoke test passed (port $port)"
