#!/usr/bin/env bash
# make run: the webhook on the embedded default policy with a self-signed certificate generated at start.
# Usage: scripts/run-dev.sh BIN LISTEN   (e.g. build/release/src/cli/gpuadmit 127.0.0.1:8443)
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 BIN HOST:PORT" >&2
  exit 2
fi
bin=$1
listen=$2
if [ ! -x "$bin" ]; then
  echo "run-dev: $bin is not built (run make build)" >&2
  exit 2
fi
# Run from the repository root so the printed curl line finds deploy/examples/.
cd "$(dirname "$0")/.."
# exec: Ctrl-C and SIGTERM reach the server itself, which drains and exits 0.
exec "$bin" serve --listen "$listen" --dev-self-signed
