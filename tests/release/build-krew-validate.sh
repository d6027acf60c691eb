#!/usr/bin/env bash
# Build (or reuse) krew's validate-krew-manifest and krew itself for the krew manifest check
# (tests/release/run.sh), from the Go tools module tools/krew (sigs.k8s.io/krew at the version pinned there),
# with tests/lib/go_tool.sh: ${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}/krew-validate-<version>/bin/.
# validate-krew-manifest is the check krew-index runs on a submitted manifest; krew is used for
# `krew install --manifest=... --archive=...` of the rendered manifest with a local archive (no download).
# krew's `version` reports the pinned version (set at link time, as its release builds do).
#
# stdout: `export GPUADMIT_KREW_VALIDATE=...` and `export GPUADMIT_KREW=...` (eval them). stderr: progress.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/lib/go_tool.sh
source "$HERE/../lib/go_tool.sh"
# shellcheck disable=SC2016  # $VERSION is expanded by build_go_tool
build_go_tool krew-validate "$HERE/tools/krew" sigs.k8s.io/krew '-X sigs.k8s.io/krew/internal/version.gitTag=$VERSION' \
  sigs.k8s.io/krew/cmd/validate-krew-manifest sigs.k8s.io/krew/cmd/krew
printf 'export GPUADMIT_KREW_VALIDATE=%q\n' "$GO_TOOL_BIN/validate-krew-manifest"
printf 'export GPUADMIT_KREW=%q\n' "$GO_TOOL_BIN/krew"
