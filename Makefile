# The two commands: `make run` and `make test`. Everything else is a step they call.
SHELL := /bin/bash
JOBS ?= $(shell nproc)
LISTEN ?= 127.0.0.1:8443
RELEASE_BIN := build/release/src/cli/gpuadmit

.PHONY: all deps build build-asan run test unit tsan differential fuzz fuzz-ci rss soak faults burst e2e chart truth truth-ci bench format tidy clean

all: build

deps:
	@scripts/deps.sh

# The release binary only: what make run starts and the e2e suite installs. Tests build under ASan.
build: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS) --target gpuadmit

build-asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)

# Starts the webhook on the embedded default policy with a self-signed certificate generated at start.
run: build
	@scripts/run-dev.sh $(RELEASE_BIN) $(LISTEN)

# Every suite (scripts/test.sh): the Go test tools build in the background while the C++ builds and suites
# run; then the Helm chart with the e2e scenarios through its webhooks, the watch e2e and truth-ci. Each
# step's time is printed at the end.
test:
	@JOBS=$(JOBS) scripts/test.sh

unit: build-asan
	@ctest --preset asan -j $(JOBS) -L unit

# The threaded tests under ThreadSanitizer: the server's integration tests (sessions, drain, reloads, the log
# writer), the cluster watcher's unit tests, the transport and serve's wiring, and serve as a process.
TSAN_TARGETS := gpuadmit_integration_tests gpuadmit_cluster_tests gpuadmit_cluster_transport_tests \
	gpuadmit_cluster_serve_tests gpuadmit
tsan: deps
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan -j $(JOBS) --target $(TSAN_TARGETS)
	@ctest --preset tsan -j $(JOBS)

# Quantity against k8s.io/apimachinery itself, on its test literals and a million generated strings
# (tests/differential/quantity/run.sh), and DRA device selectors against k8s.io/dynamic-resource-allocation/cel
# on its hand-written cases and 20,000 random ones (tests/differential/dracel/run.sh); the probes under
# ASan+UBSan.
differential: build-asan
	@tests/differential/quantity/run.sh build/asan/tests/gpuadmit_quantity_probe
	@tests/differential/dracel/run.sh build/asan/tests/gpuadmit_dracel_probe

# The libFuzzer targets (tests/fuzz/run.sh; clang 14, ASan+UBSan), FUZZ_SECONDS each (default 60), seeded
# from tests/fuzz/corpus and the fixtures. Findings go to build/fuzz/findings/; keep each in
# tests/fuzz/corpus/<target>/ (the replay test in ctest runs them all).
FUZZ_SECONDS ?= 60
fuzz: deps
	@tests/fuzz/run.sh $(FUZZ_SECONDS)

# What make test runs of it: every target for 10 s, two at a time (about 3 minutes with the build).
fuzz-ci: deps
	@FUZZ_JOBS=2 tests/fuzz/run.sh 10

# RSS flat under a minute of keep-alive TLS load on /mutate with two worker threads (tests/load/rss_flat.sh).
rss: build
	@tests/load/rss_flat.sh $(RELEASE_BIN) 60 512

e2e: build
	@if [ -x tests/e2e/run.sh ]; then tests/e2e/run.sh $(RELEASE_BIN); else echo "e2e: suite not present yet"; fi
	@cmake --build --preset release -j $(JOBS) --target gpuadmit_cluster_e2e_tests
	@GPUADMIT_BIN=$(RELEASE_BIN) tests/e2e/watch/run.sh build/release/tests/gpuadmit_cluster_e2e_tests

# The soak (tests/load/soak.py; not in make test): SOAK_SECONDS (default 1800) of paced reviews with the
# cluster view churning and a policy change every minute; RSS, fds and threads sampled, slopes printed.
SOAK_SECONDS ?= 1800
soak: build
	@tests/load/soak.py --bin $(RELEASE_BIN) --seconds $(SOAK_SECONDS)

# Faults on the real control plane while pods are created, with two gpuadmit replicas behind a loopback
# balancer (tests/e2e/faults.sh; its own control plane; about 11 minutes): the table of docs/reliability.md.
faults: build
	@tests/e2e/faults.sh $(RELEASE_BIN)

# A burst of creates (a Job at parallelism 200 and 50 kubectl clients) with a 5,000-node view, against the
# same burst through a do-nothing webhook (tests/e2e/burst.sh; its own control plane; about 4 minutes).
burst: build
	@tests/e2e/burst.sh $(RELEASE_BIN)

# The install artifacts on the release build: Helm chart (lint, schema, dry-run and install into the e2e
# API server, RBAC, the e2e scenarios through the chart's webhooks), deploy/, Dockerfile.
chart: build
	@tests/chart/run.sh $(RELEASE_BIN)

# The truth harness (tests/truth/run.sh): every cluster profile x public manifest, with and without gpuadmit,
# judged by the real kube-scheduler on one shared control plane, under the embedded policy and every policy
# in deploy/policies/; the matrix goes to docs/truth-matrix.md. Fails on any harmful or unexplained case.
TRUTH_POLICIES := default default@noview $(sort $(wildcard deploy/policies/*.yaml))
truth: build
	@rc=0; GPUADMIT_TRUTH_TIMEOUT=$${GPUADMIT_TRUTH_TIMEOUT:-14400} tests/truth/run.sh --gpuadmit $(RELEASE_BIN) --out build/truth --policy $(TRUTH_POLICIES) $(TRUTH_ARGS) || rc=$$?; \
	  if [ -f build/truth/matrix.md ]; then cp build/truth/matrix.md docs/truth-matrix.md; fi; exit $$rc

# What `make test` runs of it, to stay inside CI's budget: every manifest in 1 of the 12 columns (spread evenly,
# the same pairs on every run: tests/truth/README.md), under the embedded policy and strict.yaml (the one that
# enforces every rule). `make truth` runs every pair and adds the other policies.
TRUTH_CI_SAMPLE ?= 1
truth-ci: build
	@tests/truth/run.sh --gpuadmit $(RELEASE_BIN) --out build/truth-ci --sample $(TRUTH_CI_SAMPLE) \
	  --policy default deploy/policies/strict.yaml

bench: build
	@cmake --build --preset release -j $(JOBS) --target gpuadmit_policy_bench gpuadmit_load_bench gpuadmit_cluster_bench
	@scripts/bench.sh build/release

format:
	@scripts/deps.sh clang-format
	@git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

tidy:
	@scripts/deps.sh clang-tidy
	@cmake --preset dev >/dev/null
	@git ls-files 'src/*.cpp' | xargs clang-tidy -p build/dev --quiet

clean:
	@rm -rf build
