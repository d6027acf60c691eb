#!/usr/bin/env bash
# Build (or reuse) actionlint for the release workflow check (tests/release/run.sh), from the Go tools
# module tools/actionlint (github.com/rhysd/actionlint at the version pinned there), with
# tests/lib/go_tool.sh: ${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}/actionlint-<version>/bin/actionlint.
# The version is set at link time, as its release builds do (`actionlint -version` reports it).
#
# stdout: `export GPUADMIT_ACTIONLINT=...` (eval it). stderr: progress. Env: as go_tool.sh's.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/lib/go_tool.sh
source "$HERE/../lib/go_tool.sh"
# shellcheck disable=SC2016  # $VERSION is expanded by build_go_tool
build_go_tool actionlint "$HERE/tools/actionlint" github.com/rhysd/actionlint \
  '-X github.com/rhysd/actionlint.version=$VERSION' github.com/rhysd/actionlint/cmd/actionlint
printf 'export GPUADMIT_ACTIONLINT=%q\n' "$GO_TOOL_BIN/actionlint"
