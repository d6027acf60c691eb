# shellcheck shell=bash
# build_go_tool: build (or reuse) the commands of one pinned Go module, from a tools module of this
# repository, into ${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit}/NAME-<version>/bin. Sourced by the build
# scripts of the release and gitops checks (tests/release/build-actionlint.sh, build-krew-validate.sh,
# tests/gitops/run.sh).
#
#   build_go_tool NAME TOOLS_MODULE_DIR MODULE LDFLAGS PACKAGE...
#
# The version is MODULE's in TOOLS_MODULE_DIR/go.mod. Each PACKAGE's binary (named by its last path element)
# is rebuilt unless the stamp says that version and the binary's own build info (`go version -m`) records
# MODULE at it. One build at a time per NAME (flock); a heartbeat on stderr every 30 s of a cold build.
# LDFLAGS may name $VERSION (expanded here), e.g. "-X github.com/rhysd/actionlint.version=\$VERSION".
# Sets GO_TOOL_BIN (the bin directory) and GO_TOOL_VERSION. Env: GPUADMIT_CACHE_DIR, GPUADMIT_BUILD_NICE.
# Progress and errors go to stderr; a failure exits the calling script.

go_tool_log() { printf '%s build %s: %s\n' "$(date -u +%H:%M:%S)" "$GO_TOOL_NAME" "$*" >&2; }
go_tool_die() { go_tool_log "ERROR: $*"; exit 1; }

# The version of MODULE that binary $1 was built from.
go_tool_built_from() { go version -m "$1" 2>/dev/null | awk -v m="$2" '$1 == "mod" && $2 == m { print $3 }'; }

build_go_tool() {
  GO_TOOL_NAME=$1
  local moddir=$2 module=$3 ldflags=$4 cache=${GPUADMIT_CACHE_DIR:-$HOME/.cache/gpuadmit} p t0 hb
  shift 4
  local packages=("$@") bins=()
  for p in "${packages[@]}"; do bins+=("${p##*/}"); done
  command -v go >/dev/null || go_tool_die "go not found in PATH"
  GO_TOOL_VERSION=$(awk -v m="$module" '$1 == m && $2 ~ /^v/ { print $2; exit }' "$moddir/go.mod")
  [[ $GO_TOOL_VERSION =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
    go_tool_die "cannot parse $module's version from $moddir/go.mod: '$GO_TOOL_VERSION'"
  GO_TOOL_BIN=$cache/$GO_TOOL_NAME-$GO_TOOL_VERSION/bin
  mkdir -p "$GO_TOOL_BIN"
  exec 9>"$cache/.build-$GO_TOOL_NAME.lock"
  flock 9
  if go_tool_current "$module" "${bins[@]}"; then
    go_tool_log "$module $GO_TOOL_VERSION: cached"
  else
    t0=$(date +%s)
    go_tool_log "building ${bins[*]} of $module $GO_TOOL_VERSION ..."
    # Neither the heartbeat nor its sleep holds stdout or the lock: an orphaned sleep would keep the
    # caller's $(...) open, and the next run waiting on flock, for up to 30 s.
    (
      trap 'kill "$s" 2>/dev/null; exit 0' TERM
      while :; do
        sleep 30 & s=$!
        wait "$s"
        go_tool_log "  ... still building ($(($(date +%s) - t0))s)"
      done
    ) >&2 9>&- &
    hb=$!
    rm -rf "$GO_TOOL_BIN/.build"
    mkdir -p "$GO_TOOL_BIN/.build"
    VERSION=$GO_TOOL_VERSION
    if ! (cd "$moddir" && CGO_ENABLED=0 GOTOOLCHAIN=local nice -n "${GPUADMIT_BUILD_NICE:-10}" \
      go build -trimpath -ldflags "-s -w ${ldflags//\$VERSION/$VERSION}" -o "$GO_TOOL_BIN/.build/" "${packages[@]}"); then
      kill "$hb" 2>/dev/null
      go_tool_die "go build of ${packages[*]} failed"
    fi
    kill "$hb" 2>/dev/null
    for p in "${bins[@]}"; do mv -f "$GO_TOOL_BIN/.build/$p" "$GO_TOOL_BIN/$p"; done
    rm -rf "$GO_TOOL_BIN/.build"
    echo "$GO_TOOL_VERSION" >"$GO_TOOL_BIN/.version"
    go_tool_log "built in $(($(date +%s) - t0))s"
  fi
  go_tool_current "$module" "${bins[@]}" || go_tool_die "${bins[*]} in $GO_TOOL_BIN are not $module $GO_TOOL_VERSION"
  exec 9>&-
}

# Whether the stamp and each binary's build info say GO_TOOL_VERSION of MODULE.
go_tool_current() {
  local module=$1 b
  shift
  [[ $(cat "$GO_TOOL_BIN/.version" 2>/dev/null) == "$GO_TOOL_VERSION" ]] || return 1
  for b in "$@"; do
    [[ -x $GO_TOOL_BIN/$b && $(go_tool_built_from "$GO_TOOL_BIN/$b" "$module") == "$GO_TOOL_VERSION" ]] || return 1
  done
}
