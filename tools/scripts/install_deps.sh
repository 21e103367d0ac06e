#!/usr/bin/env bash
# make deps: installs what hopsim builds with, only when CMake cannot find it. On Debian and
# Ubuntu it installs the packages with apt-get (sudo when not root); elsewhere it says what is
# missing and how to build by hand. `make build` then works wherever the packages are present.
set -euo pipefail
cd "$(dirname "$0")/../.."
# The Debian packages (README.md lists the same, and a test keeps the two lists equal).
# python3-matplotlib is for tools/plot_sweep.py only; the build does not need it.
packages=(g++ cmake ninja-build make python3 python3-matplotlib libboost-graph-dev libfmt-dev nlohmann-json3-dev libcli11-dev doctest-dev zlib1g-dev protobuf-compiler libprotobuf-dev pkg-config libre2-dev)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Debian's matplotlib serves /usr/bin/python3; a machine without that interpreter (not Debian)
# is not asked for it.
plotting() {
  [ ! -x /usr/bin/python3 ] || /usr/bin/python3 -c "import matplotlib" 2>/dev/null
}

configured() {
  command -v cmake >/dev/null && command -v ninja >/dev/null && command -v python3 >/dev/null &&
    plotting && cmake --preset release >"$log" 2>&1
}

if configured; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  reason=$(grep -m1 -E "Could not find|not found|CMake Error|No such" "$log" || true)
  echo "hopsim: build dependencies missing${reason:+ (${reason})}. Install CMake >= 3.25, Ninja," \
       "a C++20 compiler, Python 3, Boost.Graph, fmt, nlohmann-json, CLI11, doctest, zlib" \
       "protobuf (compiler and library) and RE2 (with pkg-config)" \
       "with your package manager, then: cmake --preset release && cmake --build --preset release" >&2
  exit 1
fi
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "hopsim: build dependencies missing; as root run: apt-get install ${packages[*]}" >&2
    exit 1
  fi
  sudo_cmd=(sudo)
fi
echo "installing: ${packages[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${packages[@]}"
if ! configured; then
  cat "$log" >&2
  echo "hopsim: CMake still fails after installing the packages (above)" >&2
  exit 1
fi
