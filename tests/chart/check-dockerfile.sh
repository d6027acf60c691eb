#!/usr/bin/env bash
# There is no Docker engine here, so the Dockerfile is checked against what the tested path builds:
#  1. the build stage runs the same steps as CI (scripts/deps.sh, `make build`) on Debian bookworm and
#     takes the binary from the release preset's output path;
#  2. the runtime stage's package list is exactly the Debian packages that provide the shared
#     libraries `ldd` reports for the built binary (each mapped with `dpkg -S`): nothing missing,
#     nothing extra; every listed package exists for bookworm;
#  3. non-root USER, the binary as ENTRYPOINT.
# usage: check-dockerfile.sh GPUADMIT_BIN [DOCKERFILE]
set -euo pipefail
BIN=${1:?usage: check-dockerfile.sh GPUADMIT_BIN [DOCKERFILE]}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DF=${2:-$ROOT/Dockerfile}
fail=0
bad() { echo "Dockerfile: $*"; fail=1; }

build_stage=$(awk '/^FROM .* AS build/{s=1; next} /^FROM /{s=0} s' "$DF")
runtime_stage=$(awk '/^FROM debian:bookworm-slim AS runtime/{s=1; next} /^FROM /{s=0} s' "$DF")
grep -q '^FROM debian:bookworm AS build' "$DF" || bad "build stage must be FROM debian:bookworm AS build"
grep -q '^FROM debian:bookworm-slim AS runtime' "$DF" || bad "runtime stage must be FROM debian:bookworm-slim AS runtime"
grep -q 'scripts/deps.sh' <<<"$build_stage" || bad "build stage does not run scripts/deps.sh"
grep -q 'make build' <<<"$build_stage" || bad "build stage does not run make build"
grep -q '^build:' "$ROOT/Makefile" || bad "Makefile has no build target"
grep -q 'build/release/src/cli/gpuadmit' <<<"$build_stage" || bad "build stage does not take build/release/src/cli/gpuadmit"
grep -q '^RELEASE_BIN := build/release/src/cli/gpuadmit' "$ROOT/Makefile" || bad "Makefile's RELEASE_BIN moved; update the Dockerfile"
grep -q '^USER 65532' <<<"$runtime_stage" || bad "runtime stage must switch to USER 65532 (the chart's runAsUser)"
grep -q '^ENTRYPOINT \["/usr/local/bin/gpuadmit"\]' <<<"$runtime_stage" || bad "ENTRYPOINT must be the binary"
for label in title description source version revision; do
  grep -q "org.opencontainers.image.$label=" <<<"$runtime_stage" || bad "runtime stage lacks the OCI label org.opencontainers.image.$label"
done

# The packages after `apt-get install ... \` up to the line starting with `&&`.
listed=$(awk '/apt-get install/{s=1; next} s && /^ *&&/{s=0} s {gsub(/\\/,""); for (i=1;i<=NF;i++) print $i}' <<<"$runtime_stage" | sort -u)
[[ -n $listed ]] || bad "no runtime package list found"

# What the binary needs: every resolved library of ldd, mapped to its package.
needed=""
while read -r lib; do
  pkg=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null) || { bad "no Debian package owns $lib"; continue; }
  needed+="${pkg%%:*}"$'\n'
done < <(ldd "$BIN" | awk '/=> \//{print $3} /^\t\/lib/{print $1}')
grep -q 'not found' < <(ldd "$BIN") && bad "ldd reports missing libraries: $(ldd "$BIN" | grep 'not found')"
needed=$(sort -u <<<"${needed%$'\n'}")

missing=$(comm -23 <(echo "$needed") <(echo "$listed"))
extra=$(comm -13 <(echo "$needed") <(echo "$listed"))
[[ -z $missing ]] || bad "runtime stage lacks packages the binary needs: $(echo $missing)"
[[ -z $extra ]] || bad "runtime stage installs packages the binary does not need: $(echo $extra)"
for p in $listed; do
  apt-cache show "$p" >/dev/null 2>&1 || dpkg-query -W "$p" >/dev/null 2>&1 || bad "package $p does not exist here (bookworm)"
done
if ((fail == 0)); then
  echo "Dockerfile: runtime packages = ldd of $(basename "$BIN"): $(echo $needed)"
fi
exit "$fail"
