#!/usr/bin/env bash
# gpuadmit test --update on a copy of tests/fixtures/suites/update: the results are rewritten from what
# gpuadmit does, the rest of the suite file is kept, the named patched resource is written, the suite then
# passes, and a second update changes nothing. Usage: test_update.sh GPUADMIT FIXTURES_DIR
set -euo pipefail
bin=$1
fixtures=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$fixtures/suites/pods.yaml" "$work/"
cp -r "$fixtures/suites/update" "$work/update"
suite=$work/update/gpuadmit-test.yaml
fail() { echo "FAIL: $*"; cat "$suite"; exit 1; }

"$bin" test "$work/update" >/dev/null && fail "the stale suite passed before the update"
"$bin" test --update "$work/update" | grep -q "gpuadmit-test.yaml: 2 results" || fail "update did not report 2 results"
head -1 "$suite" | grep -q "^# A suite for the --update test" || fail "the header comment was lost"
grep -q "^namespace: default$" "$suite" || fail "the key after the results was lost"
grep -q "# stale" "$suite" && fail "a comment inside the results was kept (the usage says it is not)"
grep -A3 "name: half-a-gpu" "$suite" | grep -q "verdict: denied" || fail "half-a-gpu's verdict was not rewritten"
grep -q "patchedResource: patched/burstable.yaml" "$suite" || fail "the patchedResource entry was lost"
grep -q "gpuadmit.io/mutated-by" "$work/update/patched/burstable.yaml" || fail "the patched resource was not written"
"$bin" test "$work/update" >/dev/null || fail "the suite does not pass after its update"
cp "$suite" "$work/first.yaml"
"$bin" test --update "$work/update" >/dev/null
diff -u "$work/first.yaml" "$suite" || fail "a second update changed the suite"
echo "update rewrote the results, kept the rest, and the suite passes"
