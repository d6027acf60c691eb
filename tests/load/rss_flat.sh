#!/usr/bin/env bash
# RSS stays flat under load with the default worker threads (fuzz-and-load finding of 2026-12: it grew
# 15.5 -> 49.4 MB over 5.9M requests with two threads, and stayed flat with one). `gpuadmit serve` on
# 127.0.0.1 with two threads (the default on this 2-core host, given explicitly so the check means the
# same on any machine) takes wrk's keep-alive TLS load on /mutate for SECONDS; RSS is sampled every 5 s,
# and the growth from the sample after the warm-up (WARMUP s) to the last may be at most LIMIT_KB.
#
#   tests/load/rss_flat.sh GPUADMIT_BIN [SECONDS] [LIMIT_KB]      (make test: 60 s, 512 kB)
# Prints the samples and the request rate; exit 1 when RSS grew past the bound, 2 when it could not run.
set -euo pipefail
bin=${1:?usage: rss_flat.sh GPUADMIT_BIN [SECONDS] [LIMIT_KB]}
seconds=${2:-60}
limit_kb=${3:-512}
warmup=15
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { printf '%s rss: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
command -v wrk >/dev/null || { log "ERROR: wrk not found (scripts/deps.sh installs it)"; exit 2; }
((seconds > warmup + 10)) || { log "ERROR: SECONDS must be more than $((warmup + 10))"; exit 2; }
work=$(mktemp -d /tmp/gpuadmit-rss.XXXXXX)
pid=
wrk_pid=
cleanup() {
  [[ -z $wrk_pid ]] || kill "$wrk_pid" 2>/dev/null || true
  [[ -z $pid ]] || { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT

"$bin" certs generate --ip 127.0.0.1 --out "$work/certs" >/dev/null 2>&1 || { log "ERROR: certs generate failed"; exit 2; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" serve --listen "127.0.0.1:$port" --threads 2 --tls-cert-file "$work/certs/tls.crt" \
  --tls-private-key-file "$work/certs/tls.key" --log-level warn --drain-seconds 0 >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  curl -fsS --max-time 1 --cacert "$work/certs/ca.crt" "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { log "ERROR: gpuadmit serve exited: $(tail -3 "$work/serve.log")"; exit 2; }
  sleep 0.1
done
# A GPU pod without toleration: /mutate answers with a patch (tolerations, shm), the common case.
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$HERE/mutate-review.json", "rb"); wrk.body = f:read("*a"); f:close()
LUA
wrk -t2 -c8 -d"${seconds}s" -s "$work/post.lua" "https://127.0.0.1:$port/mutate" >"$work/wrk.out" 2>&1 &
wrk_pid=$!
samples=()
for ((t = 5; t <= seconds; t += 5)); do
  sleep 5
  samples+=("$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")")
done
wait "$wrk_pid" || { log "ERROR: wrk failed: $(cat "$work/wrk.out")"; exit 2; }
wrk_pid=
rate=$(awk '/Requests\/sec/ { print $2 }' "$work/wrk.out")
non2xx=$(awk '/Non-2xx/ { print $NF }' "$work/wrk.out")
[[ -z $non2xx ]] || { log "ERROR: $non2xx answers were not 2xx"; exit 2; }
first=${samples[$((warmup / 5 - 1))]}
last=${samples[-1]}
growth=$((last - first))
log "RSS kB every 5 s: ${samples[*]}"
log "$rate requests/s over ${seconds}s; RSS grew ${growth} kB after the ${warmup}s warm-up (bound ${limit_kb} kB)"
((growth <= limit_kb)) || { log "FAIL: RSS grew ${growth} kB under load"; exit 1; }
log "passed"
