#!/usr/bin/env bash
# The committed policy schema is what this binary generates. Usage: policy_schema_current.sh GPUADMIT FILE
set -euo pipefail
if ! diff -u "$2" <("$1" policy schema); then
  echo "FAIL: $2 is not current; regenerate it with: gpuadmit policy schema > ${2#"$PWD"/}" >&2
  exit 1
fi
echo "$2 is current"
