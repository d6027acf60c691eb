#!/usr/bin/env bash
# Installs the Debian packages the build, the tests and the benchmarks need, and nothing when all are there.
# A fresh Debian 12 machine with only the image's packages must pass `make test` after this script.
# Usage: scripts/deps.sh [EXTRA_PACKAGE...]   (make format and make tidy add clang-format, clang-tidy)
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkg-config
  libboost1.81-dev libssl-dev openssl nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libfmt-dev catch2
  curl ca-certificates python3 wrk
  python3-yaml python3-jsonschema
  shellcheck
  zsh fish
  libgoogle-perftools-dev
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
