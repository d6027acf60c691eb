#!/usr/bin/env bash
# There is no container engine here, so the Dockerfile is checked against what the tested path builds:
#  1. every FROM is pinned by digest (`FROM image:tag@sha256:<64 hex>`): the build stage is
#     debian:bookworm, the runtime is gcr.io/distroless/cc-debian12:nonroot;
#  2. the build stage runs the same steps as CI (scripts/deps.sh, `make build`) and takes the binary from
#     the release preset's output path;
#  3. every shared library `ldd` resolves for the built binary is either installed by the distroless base
#     (its packages as distroless's base/config.bzl, cc/config.bzl and static/config.bzl list them for
#     debian12, below) or copied by the build stage's stage-libs step, which is run here, on this host,
#     into a temporary directory: exactly the libraries the base lacks come out, each with its soname,
#     copyright file and dpkg status entry; the runtime stage copies that directory;
#  4. the runtime stage: non-root USER equal to the chart's runAsUser, the binary as ENTRYPOINT, no shell-form
#     RUN (distroless has no shell), the OCI labels, base.name/base.digest equal to its FROM.
# usage: check-dockerfile.sh GPUADMIT_BIN [DOCKERFILE]
set -euo pipefail
BIN=${1:?usage: check-dockerfile.sh GPUADMIT_BIN [DOCKERFILE]}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DF=${2:-$ROOT/Dockerfile}
fail=0
bad() { echo "Dockerfile: $*"; fail=1; }

# What gcr.io/distroless/cc-debian12 installs (GoogleContainerTools/distroless at cd080764, 2026-08-21):
# static/config.bzl, base/config.bzl (+ libc6 libssl3) and cc/config.bzl (+ the gcc runtime).
DISTROLESS_CC_DEBIAN12="base-files netbase tzdata media-types libc6 libssl3 libgomp1 libstdc++6 libgcc-s1 gcc-12-base"
RUNTIME_IMAGE=gcr.io/distroless/cc-debian12:nonroot
DIGEST='@sha256:[0-9a-f]{64}'

# 1. Pinned bases.
froms=$(grep -E '^FROM ' "$DF" || true)
[[ $(wc -l <<<"$froms") -eq 2 ]] || bad "expected exactly two stages (build, runtime), found: $(tr '\n' ' ' <<<"$froms")"
while read -r line; do
  [[ -z $line ]] && continue
  grep -Eq "^FROM [a-z0-9./-]+:[A-Za-z0-9._-]+$DIGEST AS [a-z]+\$" <<<"$line" \
    || bad "not pinned by digest (want FROM image:tag@sha256:<64 hex> AS name): $line"
done <<<"$froms"
grep -Eq "^FROM debian:bookworm$DIGEST AS build\$" "$DF" || bad "build stage must be FROM debian:bookworm@sha256:... AS build"
runtime_from=$(grep -E "^FROM ${RUNTIME_IMAGE//./\\.}$DIGEST AS runtime\$" "$DF" || true)
[[ -n $runtime_from ]] || bad "runtime stage must be FROM $RUNTIME_IMAGE@sha256:... AS runtime"
runtime_digest=$(grep -Eo 'sha256:[0-9a-f]{64}' <<<"$runtime_from" || true)

build_stage=$(awk '/^FROM .* AS build$/{s=1; next} /^FROM /{s=0} s' "$DF")
runtime_stage=$(awk '/^FROM .* AS runtime$/{s=1; next} /^FROM /{s=0} s' "$DF")

# 2. The build stage is CI's build.
grep -q 'scripts/deps.sh' <<<"$build_stage" || bad "build stage does not run scripts/deps.sh"
grep -q 'make build' <<<"$build_stage" || bad "build stage does not run make build"
grep -q '^build:' "$ROOT/Makefile" || bad "Makefile has no build target"
grep -q 'build/release/src/cli/gpuadmit' <<<"$build_stage" || bad "build stage does not take build/release/src/cli/gpuadmit"
grep -q '^RELEASE_BIN := build/release/src/cli/gpuadmit' "$ROOT/Makefile" || bad "Makefile's RELEASE_BIN moved; update the Dockerfile"

# 3. Libraries: provided by the base, or staged.
provides=$(sed -n 's/^ARG DISTROLESS_PROVIDES="\(.*\)"$/\1/p' <<<"$build_stage")
[[ -n $provides ]] || bad 'build stage lacks ARG DISTROLESS_PROVIDES="..." (the packages the runtime base installs)'
for p in $provides; do
  [[ " $DISTROLESS_CC_DEBIAN12 " == *" $p "* ]] || bad "DISTROLESS_PROVIDES names $p, which $RUNTIME_IMAGE does not install"
done
# The stage-libs step: the first RUN after the `# stage-libs:` comment, up to its last continued line.
stage_libs=$(awk '/^# stage-libs:/{c=1} c && /^RUN /{r=1} r {print} r && !/\\$/ {exit}' <<<"$build_stage")
[[ -n $stage_libs ]] || bad "build stage has no stage-libs RUN step"
grep -q 'COPY --from=build /staging/ /' <<<"$runtime_stage" || bad "runtime stage does not COPY --from=build /staging/ /"
# shellcheck disable=SC2016 # the literal text of the Dockerfile
grep -q '"${STAGE_DIR:-/staging}"' <<<"$stage_libs" || bad "stage-libs must stage into \${STAGE_DIR:-/staging}"

ldd_out=$(ldd "$BIN")
grep -q 'not found' <<<"$ldd_out" && bad "ldd reports missing libraries: $(grep 'not found' <<<"$ldd_out")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -n $stage_libs && -n $provides ]]; then
  # Run it as Docker would (/bin/sh -c), with the binary and a temporary directory in place of /gpuadmit
  # and /staging.
  if ! STAGE_BIN=$BIN STAGE_DIR=$tmp/stage DISTROLESS_PROVIDES=$provides \
       /bin/sh -c "${stage_libs#RUN }" >"$tmp/log" 2>&1; then
    bad "the stage-libs step failed on this host: $(tr '\n' ' ' <"$tmp/log")"
  fi
fi

# Each library ldd resolves (loader included): its package, and whether the base has it.
provided_libs="" want_staged=""
while read -r lib; do
  [[ -z $lib ]] && continue
  real=$(readlink -f "$lib")
  pkg=$(dpkg-query --search "$real" 2>/dev/null || dpkg-query --search "${real#/usr}" 2>/dev/null || true)
  pkg=$(head -n 1 <<<"$pkg" | cut -d: -f1)
  if [[ -z $pkg ]]; then bad "no Debian package owns $lib"; continue; fi
  if [[ " $provides " == *" $pkg "* ]]; then
    provided_libs+="$(basename "$lib")($pkg) "
  elif [[ " $DISTROLESS_CC_DEBIAN12 " == *" $pkg "* ]]; then
    bad "stage-libs would copy $(basename "$lib") over the base's own $pkg; add $pkg to DISTROLESS_PROVIDES"
  else
    want_staged+="$(dirname "$real")/$(basename "$lib") $(basename "$real") $pkg"$'\n'
  fi
done < <(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$ldd_out")

staged_libs=""
if [[ -d $tmp/stage ]]; then
  while read -r soname_path real_name pkg; do
    [[ -z $soname_path ]] && continue
    d=$tmp/stage$(dirname "$soname_path")
    [[ -f $d/$real_name ]] || bad "stage-libs did not copy $real_name ($pkg)"
    [[ -e $d/$(basename "$soname_path") ]] || bad "stage-libs did not provide the soname $(basename "$soname_path")"
    [[ -s $tmp/stage/usr/share/doc/$pkg/copyright ]] || bad "stage-libs did not copy $pkg's copyright file"
    grep -q "^Package: $pkg\$" "$tmp/stage/var/lib/dpkg/status.d/$pkg" 2>/dev/null || bad "stage-libs wrote no dpkg status for $pkg"
    staged_libs+="$(basename "$soname_path")($pkg) "
  done <<<"$want_staged"
  # Nothing else: no library the base has, no library the binary does not link.
  extra=$(cd "$tmp/stage" && find . \( -type f -o -type l \) -name '*.so*' | sed 's|^\.||' | while read -r f; do
    grep -Fq "$(dirname "$f")/" <<<"$want_staged" && grep -Eq "(/$(basename "$f") | $(basename "$f") )" <<<"$want_staged" || echo "$f"
  done)
  [[ -z $extra ]] || bad "stage-libs copies libraries the binary does not need or the base has: $(tr '\n' ' ' <<<"$extra")"
  # Each staged library's own dependencies are in the base or staged too.
  while read -r f; do
    while read -r need; do
      grep -Fq "$need" <<<"$ldd_out" || bad "staged $(basename "$f") needs $need, which ldd of the binary does not resolve"
    done < <(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  done < <(find "$tmp/stage" -type f -name '*.so*')
fi

# 4. The runtime stage.
chart_uid=$(sed -n 's/^runAsUser: *\([0-9][0-9]*\) *$/\1/p' "$ROOT/charts/gpuadmit/values.yaml")
[[ $chart_uid == 65532 ]] || bad "the chart's runAsUser is '${chart_uid:-unset}', not distroless's nonroot 65532"
grep -q '^USER 65532:65532$' <<<"$runtime_stage" || bad "runtime stage must switch to USER 65532:65532 (distroless nonroot, the chart's runAsUser)"
grep -Eq '^USER (0|root)' <<<"$runtime_stage" && bad "runtime stage switches to root"
grep -q '^ENTRYPOINT \["/usr/local/bin/gpuadmit"\]' <<<"$runtime_stage" || bad "ENTRYPOINT must be the binary"
grep -q '^COPY --from=build /gpuadmit /usr/local/bin/gpuadmit$' <<<"$runtime_stage" || bad "runtime stage does not copy the binary to /usr/local/bin/gpuadmit"
grep -E '^RUN ' <<<"$runtime_stage" | grep -qv '^RUN \[' && bad "runtime stage has a shell-form RUN; distroless has no shell"
for label in title description source licenses version revision base.name base.digest; do
  grep -q "org.opencontainers.image.$label=" <<<"$runtime_stage" || bad "runtime stage lacks the OCI label org.opencontainers.image.$label"
done
grep -q "org.opencontainers.image.base.name=\"$RUNTIME_IMAGE\"" <<<"$runtime_stage" || bad "label base.name is not \"$RUNTIME_IMAGE\""
# The licence the repository's LICENSE file grants, in the label and the file itself in the image.
if ! grep -q 'Apache License' "$ROOT/LICENSE" || ! grep -q 'Version 2.0, January 2004' "$ROOT/LICENSE"; then
  bad "LICENSE is not the Apache License 2.0"
fi
grep -q 'org.opencontainers.image.licenses="Apache-2.0"' <<<"$runtime_stage" || bad "label licenses is not \"Apache-2.0\" (LICENSE)"
grep -q '^COPY LICENSE ' <<<"$runtime_stage" || bad "the runtime stage does not copy LICENSE into the image"
[[ -n $runtime_digest ]] && { grep -q "org.opencontainers.image.base.digest=\"$runtime_digest\"" <<<"$runtime_stage" \
  || bad "label base.digest is not the runtime FROM's digest $runtime_digest"; }

if ((fail == 0)); then
  echo "Dockerfile: pinned: $(sed 's/^FROM //; s/ AS .*//; s/\(@sha256:.\{12\}\).*/\1…/' <<<"$froms" | tr '\n' ' ')"
  echo "Dockerfile: ldd of $(basename "$BIN"): from $RUNTIME_IMAGE ${provided_libs}; staged ${staged_libs:-nothing}"
fi
exit "$fail"
