# gpuadmit container image. Two stages:
#   build    Debian bookworm, the same steps as CI and `make build`: scripts/deps.sh installs the
#            -dev packages, `make build` configures the release preset and builds the gpuadmit target.
#            Then the stage-libs step copies, by `ldd` of the built binary, every shared library the
#            runtime base lacks into /staging (with its copyright file and dpkg status entry).
#   runtime  gcr.io/distroless/cc-debian12:nonroot (glibc, libgcc_s, libstdc++, libssl3/libcrypto,
#            ca-certificates, tzdata, no shell, no package manager; UID/GID 65532) + /staging + the
#            binary as ENTRYPOINT. tests/chart/check-dockerfile.sh checks this file against `ldd` of the
#            built binary and runs the stage-libs step on the host.
# Build: docker build -t gpuadmit:dev .      Run: docker run --rm gpuadmit:dev serve --help
# Multi-arch: docker buildx build --platform linux/amd64,linux/arm64 \
#               --build-arg VERSION=0.1.0 --build-arg REVISION="$(git rev-parse HEAD)" -t REPO:TAG --push .
#   Each platform builds natively or under QEMU: the build stage compiles for the platform it runs on, and
#   the stage-libs step finds the libraries where that platform's `ldd` says they are
#   (/usr/lib/x86_64-linux-gnu, /usr/lib/aarch64-linux-gnu, ...), so nothing here names an architecture.
#   Both pinned digests below are multi-arch image indexes (manifest lists), so one pin serves every
#   platform: debian:bookworm has linux/amd64, arm64/v8, arm/v7, 386 and ppc64le (no s390x since bookworm
#   went LTS); distroless cc-debian12 has amd64, arm64, arm, s390x and ppc64le.
#
# Base images are pinned by digest. They cannot be resolved from the machine this was written on (no
# registry access), so each digest was taken from a public record, named next to it. Keep them current
# with Renovate's dockerfile manager or Dependabot's docker ecosystem (neither is configured in this
# repository yet): both rewrite the @sha256 of a `FROM image:tag@sha256:...` line. When the runtime
# digest changes, change the base.digest label with it (check-dockerfile.sh fails until they agree).
#
# Support window: distroless's SUPPORT_POLICY.md gives cc-debian12 an end of life of September 2026, and
# Debian 12 left regular security support for LTS on 2026-06-10. The pinned cc-debian12 digest is the
# newest found in public sources (pinned there as late as 2026-10-08); few or no rebuilds are to be
# expected after the end of life. Moving on means debian:trixie +
# gcr.io/distroless/cc-debian13 together (and scripts/deps.sh's bookworm package names, and the stage-libs
# DISTROLESS_PROVIDES list: libssl3 is libssl3t64 there).

# debian:bookworm = debian:bookworm-20260918, an OCI image index. Source: docker-library/repo-info,
# repos/debian/remote/bookworm-20260918.md ("$ docker pull debian@sha256:f37a335e..."), the Docker
# official-images team's record of what each tag points to; the same digest is pinned as
# debian:bookworm@ / debian:12@ in several public Dockerfiles dated 2026-09-25.
FROM debian:bookworm@sha256:f37a335e82bca302e955fa39f9dfe28f1be618f016f8a2b56318e5a5111afc26 AS build
# make, sudo-free apt (root here) and the compiler come from deps.sh itself; only make is needed to start.
RUN apt-get update && apt-get install -y --no-install-recommends make ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN scripts/deps.sh && make build JOBS="$(nproc)" \
 && strip --strip-debug -o /gpuadmit build/release/src/cli/gpuadmit \
 && /gpuadmit --help >/dev/null

# stage-libs: for each library `ldd /gpuadmit` resolves (the loader included), find its Debian package.
# A package the runtime base already installs (DISTROLESS_PROVIDES, from distroless's base/config.bzl and
# cc/config.bzl for debian12) is skipped; any other library is copied to the directory its real file
# lives in (/usr/lib/<multiarch triplet>/, on the loader's default search path, so no ld.so.cache is
# needed), with its soname link, its /usr/share/doc/<pkg>/copyright and a
# /var/lib/dpkg/status.d/<pkg> entry (where distroless keeps its own packages, so scanners such as Trivy
# see their versions). A library no package owns, or one ldd cannot find, fails the build.
# STAGE_BIN and STAGE_DIR are unset here; check-dockerfile.sh sets them to run this step on the host.
ARG DISTROLESS_PROVIDES="libc6 libgcc-s1 libstdc++6 libssl3"
RUN set -eu; \
    bin="${STAGE_BIN:-/gpuadmit}"; stage="${STAGE_DIR:-/staging}"; \
    if ldd "$bin" | grep -q 'not found'; then ldd "$bin" >&2; exit 1; fi; \
    mkdir -p "$stage/var/lib/dpkg/status.d"; \
    for lib in $(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do \
      real="$(readlink -f "$lib")"; \
      owner="$(dpkg-query --search "$real" 2>/dev/null || dpkg-query --search "${real#/usr}" 2>/dev/null || true)"; \
      pkg="$(echo "$owner" | head -n 1 | cut -d: -f1)"; \
      if [ -z "$pkg" ]; then echo "stage-libs: no Debian package owns $lib" >&2; exit 1; fi; \
      case " $DISTROLESS_PROVIDES " in *" $pkg "*) echo "stage-libs: base provides $lib ($pkg)"; continue ;; esac; \
      dir="$stage$(dirname "$real")"; mkdir -p "$dir" "$stage/usr/share/doc/$pkg"; \
      cp -p "$real" "$dir/"; \
      if [ "$(basename "$lib")" != "$(basename "$real")" ]; then ln -sf "$(basename "$real")" "$dir/$(basename "$lib")"; fi; \
      cp -p "/usr/share/doc/$pkg/copyright" "$stage/usr/share/doc/$pkg/copyright"; \
      dpkg-query --status "$pkg" >"$stage/var/lib/dpkg/status.d/$pkg"; \
      echo "stage-libs: copies $lib ($pkg)"; \
    done

# gcr.io/distroless/cc-debian12:nonroot, an OCI image index (amd64, arm64/v8, arm/v7, s390x, ...).
# Source: TheFutonEng/bitcoin, Dockerfile (ARG RUNTIME_BASE) and CLAUDE.md ("This digest IS the
# `:nonroot` variant of cc-debian12 as of 2026-09-12 ... an OCI image index"); the same digest is pinned
# as cc-debian12:nonroot@ in jedarden/pdftract's and StephanMeijer/meneerhenk's Dockerfiles and about ten
# other public Dockerfiles, one noting "Debian 12 nonroot, multi-platform index reviewed 2026-10-08".
FROM gcr.io/distroless/cc-debian12:nonroot@sha256:9dac0a79194e45a7da0158a9c6da57b217585af0786db3845d1f0ec1a0dd182f AS runtime
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="gpuadmit" \
      org.opencontainers.image.description="Kubernetes admission webhook for GPU workloads" \
      org.opencontainers.image.source="https://github.com/gpuadmit/gpuadmit" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="gcr.io/distroless/cc-debian12:nonroot" \
      org.opencontainers.image.base.digest="sha256:9dac0a79194e45a7da0158a9c6da57b217585af0786db3845d1f0ec1a0dd182f"
COPY --from=build /staging/ /
COPY --from=build /gpuadmit /usr/local/bin/gpuadmit
COPY LICENSE /usr/share/doc/gpuadmit/LICENSE
# distroless's nonroot user; the chart runs it with runAsUser 65532 and a read-only root filesystem:
# nothing is written at run time.
USER 65532:65532
# No shell here, so exec form: the binary must start in this image with only the base's and the staged
# libraries, as that user, or the build fails.
RUN ["/usr/local/bin/gpuadmit", "--help"]
EXPOSE 8443
ENTRYPOINT ["/usr/local/bin/gpuadmit"]
CMD ["serve", "--help"]
