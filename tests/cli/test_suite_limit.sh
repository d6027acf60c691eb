#!/usr/bin/env bash
# A suite file over gpuadmit test's stated limit (1 MiB) is refused with exit 2 and the limit named; one
# just under it is read. Usage: test_suite_limit.sh GPUADMIT FIXTURES_DIR
set -euo pipefail
bin=$1
fixtures=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/big"
cp "$fixtures/suites/pods.yaml" "$work/"
# The passing suite, padded with a comment to exactly SIZE bytes.
pad_to() {
  cp "$fixtures/suites/passing/gpuadmit-test.yaml" "$work/big/gpuadmit-test.yaml"
  local have
  have=$(stat -c %s "$work/big/gpuadmit-test.yaml")
  { printf '#'; head -c $(($1 - have - 2)) /dev/zero | tr '\0' 'x'; printf '\n'; } >> "$work/big/gpuadmit-test.yaml"
  [ "$(stat -c %s "$work/big/gpuadmit-test.yaml")" = "$1" ]
}
pad_to 1048576
"$bin" test "$work/big" > "$work/out" 2>&1 || { cat "$work/out"; echo "FAIL: a suite of exactly 1 MiB was refused"; exit 1; }
pad_to 1048577
set +e
"$bin" test "$work/big" > "$work/out" 2>&1
code=$?
set -e
[ "$code" = 2 ] || { cat "$work/out"; echo "FAIL: exit $code for a suite over 1 MiB, expected 2"; exit 1; }
grep -q "a suite is at most 1048576 bytes" "$work/out" || { cat "$work/out"; echo "FAIL: the limit is not named"; exit 1; }
echo "a suite of 1 MiB is read; one byte more is refused with the limit named"
