# gpuadmit container image. Two stages:
#   build    Debian bookworm, the same steps as CI and `make build`: scripts/deps.sh installs the
#            -dev packages, `make build` configures the release preset and builds the gpuadmit target.
#   runtime  debian:bookworm-slim with only the shared libraries the binary links (checked against
#            `ldd` of the built binary by tests/chart/check-dockerfile.sh), a non-root user, the
#            binary as ENTRYPOINT.
# Build: docker build -t gpuadmit:dev .      Run: docker run --rm gpuadmit:dev serve --help
# Multi-arch: docker buildx build --platform linux/amd64,linux/arm64 \
#               --build-arg VERSION=0.1.0 --build-arg REVISION="$(git rev-parse HEAD)" -t REPO:TAG --push .
#   (each platform builds natively or under QEMU; the build stage compiles for the platform it runs on).

FROM debian:bookworm AS build
# make, sudo-free apt (root here) and the compiler come from deps.sh itself; only make is needed to start.
RUN apt-get update && apt-get install -y --no-install-recommends make ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN scripts/deps.sh && make build JOBS="$(nproc)" \
 && strip --strip-debug -o /gpuadmit build/release/src/cli/gpuadmit \
 && /gpuadmit --help >/dev/null

FROM debian:bookworm-slim AS runtime
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="gpuadmit" \
      org.opencontainers.image.description="Kubernetes admission webhook for GPU workloads" \
      org.opencontainers.image.source="https://github.com/gpuadmit/gpuadmit" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="docker.io/library/debian:bookworm-slim"
# runtime-packages: one package per line; each provides a library the binary needs, nothing else.
RUN apt-get update && apt-get install -y --no-install-recommends \
      libc6 \
      libgcc-s1 \
      libstdc++6 \
      libssl3 \
      libyaml-cpp0.7 \
      libspdlog1.10 \
      libfmt9 \
      libtcmalloc-minimal4 \
 && rm -rf /var/lib/apt/lists/*
# The chart runs it with runAsUser 65532 and a read-only root filesystem: nothing is written at run time.
RUN groupadd --system --gid 65532 gpuadmit && useradd --system --uid 65532 --gid 65532 --no-create-home --shell /usr/sbin/nologin gpuadmit
COPY --from=build /gpuadmit /usr/local/bin/gpuadmit
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["/usr/local/bin/gpuadmit"]
CMD ["serve", "--help"]
