#!/usr/bin/env bash
# Runs one golden CLI case: CASE.cmd holds the arguments (one line, after `gpuadmit`), CASE.out the
# expected stdout+stderr, CASE.exit the expected exit code. GPUADMIT_UPDATE_GOLDEN=1 rewrites them.
set -euo pipefail
bin=$1
case_path=$2
read -r -a args < "$case_path.cmd"
set +e
actual=$("$bin" "${args[@]}" 2>&1)
code=$?
set -e
if [ "${GPUADMIT_UPDATE_GOLDEN:-0}" = 1 ]; then
  printf '%s\n' "$actual" > "$case_path.out"
  echo "$code" > "$case_path.exit"
  exit 0
fi
expected_code=$(cat "$case_path.exit")
if [ "$code" != "$expected_code" ]; then
  echo "exit code $code, expected $expected_code"; printf '%s\n' "$actual"; exit 1
fi
diff -u "$case_path.out" <(printf '%s\n' "$actual")
