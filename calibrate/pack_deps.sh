#!/usr/bin/env bash
# Copies the header-only dependencies of calibrate/ (fmt, nlohmann_json, CLI11, doctest) from this
# machine into build/calib-deps/include, so a GPU machine without them can build the harness
# standalone (run_gpu.sh picks the directory up; carry it along with the working tree).
set -euo pipefail
src="${1:-/usr/include}"
dst="build/calib-deps/include"
mkdir -p "$dst"
for d in fmt nlohmann CLI doctest; do
  if [ ! -d "$src/$d" ]; then
    echo "pack_deps: $src/$d missing" >&2
    exit 1
  fi
  rm -rf "${dst:?}/$d"
  cp -r "$src/$d" "$dst/$d"
done
du -sh "$dst"
