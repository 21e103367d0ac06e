#!/usr/bin/env bash
# The one script to run on a GPU machine: build the CUDA harness, run the correctness checks,
# time the smoke grid, and leave the table plus logs in $OUT. Finishes in under 8 minutes.
#
#   OUT=/some/dir calibrate/run_gpu.sh        (the repository root is the working directory)
#
# Output: $OUT/h200-measured.json (partial if time ran out: unmeasured cells stay null),
# $OUT/summary.txt, $OUT/logs/*.log (nvidia-smi -q before/after, build, checks, measurement).
# Builds with the cuda preset; if the simulator's dependencies are missing it configures
# calibrate/ on its own (header-only deps from build/calib-deps/include, see pack_deps.sh), and
# without CMake it compiles directly with g++ and nvcc; if every build fails it runs a harness built
# elsewhere from $HOPSIM_PREBUILT_DIR. cuDNN and cuBLAS come from the toolkit or the system, else
# from NVIDIA's pip wheels (nvidia/cudnn, nvidia/cu13). Never changes clocks, power limits or other
# GPU settings.
set -euo pipefail

T0=$(date +%s)
OUT="${OUT:-$PWD/out/gpu-run}"
LOGS="$OUT/logs"
TABLE="$OUT/h200-measured.json"
TOTAL_S="${HOPSIM_RUN_TOTAL_S:-465}"  # whole-script limit, below 8 minutes
JOBS="$(nproc 2>/dev/null || echo 8)"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -x "$CUDA_HOME/bin/nvcc" ] && command -v nvcc >/dev/null; then
  CUDA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")"
fi
export PATH="$CUDA_HOME/bin:$PATH"
DEPS_INCLUDE="$PWD/build/calib-deps/include"
mkdir -p "$LOGS"
: >"$OUT/summary.txt"

elapsed() { echo $(($(date +%s) - T0)); }
left() { echo $((TOTAL_S - $(elapsed))); }
log() { echo "[$(date -u +%H:%M:%S) +$(elapsed)s] $*" | tee -a "$OUT/summary.txt" >&2; }

# step NAME LIMIT_S CMD...: runs CMD (a program or an exported function) with a time limit,
# output to logs/NAME.log; returns its status.
step() {
  local name=$1 limit=$2
  shift 2
  log "$name: $*"
  local rc=0
  timeout --kill-after=10 "$limit" bash -c '"$@"' step "$@" >"$LOGS/$name.log" 2>&1 || rc=$?
  log "$name: exit $rc ($(wc -l <"$LOGS/$name.log") log lines)"
  return "$rc"
}

# --- 1. the machine -------------------------------------------------------------------------
if command -v nvidia-smi >/dev/null; then
  nvidia-smi -q >"$LOGS/nvidia-smi-before.log" 2>&1 || log "nvidia-smi -q failed"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu \
    --format=csv >>"$OUT/summary.txt" 2>&1 || true
else
  log "nvidia-smi not found"
fi
{
  command -v nvcc && nvcc --version
  command -v cmake && cmake --version
  command -v ninja && ninja --version
  g++ --version | head -1
  python3 --version
} >"$LOGS/tools.log" 2>&1 || true

# --- 2. cuDNN (and cuBLAS) ------------------------------------------------------------------
# lib_root HEADER LIB DIR...: the first DIR with include/HEADER and a LIB* library in lib/,
# lib64/ or lib/x86_64-linux-gnu/.
lib_root() {
  local header=$1 lib=$2 d
  shift 2
  for d in "$@"; do
    if [ -n "$d" ] && [ -f "$d/include/$header" ] &&
      { compgen -G "$d/lib*/$lib*" || compgen -G "$d/lib/x86_64-linux-gnu/$lib*"; } >/dev/null; then
      echo "$d"
      return
    fi
  done
}
# Python's site-packages, where NVIDIA's wheels unpack: cuDNN under nvidia/cudnn, the CUDA 13
# libraries (cuBLAS too) under nvidia/cu13, CUDA 12's under nvidia/cublas.
SITES="$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)"
wheel_roots() { for s in $SITES; do echo "$s/nvidia/$1"; done; }
# shellcheck disable=SC2046  # one candidate per word
CUDNN_ROOT="${CUDNN_ROOT:-$(lib_root cudnn.h libcudnn.so "$CUDA_HOME" /usr $(wheel_roots cudnn))}"
# shellcheck disable=SC2046
CUBLAS_ROOT="${CUBLAS_ROOT:-$(lib_root cublasLt.h libcublasLt.so "$CUDA_HOME" $(wheel_roots cu13) $(wheel_roots cublas))}"
if [ -z "$CUDNN_ROOT" ]; then
  log "no cuDNN found (system, toolkit or nvidia-cudnn wheel); attention cannot build"
fi
CUBLAS_ROOT="${CUBLAS_ROOT:-$CUDA_HOME}"
export CUDNN_ROOT CUBLAS_ROOT CUDA_HOME JOBS DEPS_INCLUDE
export LD_LIBRARY_PATH="$CUDNN_ROOT/lib:$CUBLAS_ROOT/lib:$CUDA_HOME/lib64:${LD_LIBRARY_PATH:-}"
log "cuDNN root: $CUDNN_ROOT; cuBLAS root: $CUBLAS_ROOT; CUDA: $CUDA_HOME"

# --- 3. build -------------------------------------------------------------------------------
BIN=""
GENERATOR="Unix Makefiles"
if command -v ninja >/dev/null; then GENERATOR=Ninja; fi
export GENERATOR

build_preset() {
  # Warnings stay warnings here: a different compiler on the GPU image must not fail the run.
  cmake --preset cuda -DCUDNN_ROOT="$CUDNN_ROOT" -DHOPSIM_TESTS=ON -DHOPSIM_WERROR=OFF &&
    cmake --build build/cuda --target hopsim-calibrate hopsim_calibrate_cuda_tests -j "$JOBS"
}
build_standalone() {
  cmake -S calibrate -B build/cuda-standalone -G "$GENERATOR" -DCMAKE_BUILD_TYPE=Release -DHOPSIM_CUDA=ON \
    -DCUDNN_ROOT="$CUDNN_ROOT" -DHOPSIM_DEPS_INCLUDE="$DEPS_INCLUDE" &&
    cmake --build build/cuda-standalone --target hopsim-calibrate hopsim_calibrate_cuda_tests -j "$JOBS"
}
build_direct() {
  local dir=build/cuda-direct cu
  mkdir -p "$dir/obj" "$dir/bin"
  local inc=(-I"$PWD" -I"$CUDA_HOME/include" -I"$CUBLAS_ROOT/include" -I"$CUDNN_ROOT/include")
  if [ -d "$DEPS_INCLUDE" ]; then inc+=(-I"$DEPS_INCLUDE"); fi
  for cu in calibrate/backend/*.cu calibrate/memory/*.cu; do
    nvcc -std=c++20 -O2 -gencode=arch=compute_90,code=sm_90 "${inc[@]}" -c "$cu" \
      -o "$dir/obj/$(basename "$cu" .cu).o"
  done
  # shellcheck disable=SC2016  # $(basename ...) must run in the inner shell
  printf '%s\n' calibrate/core/*.cpp calibrate/memory/*.cpp calibrate/backend/*.cpp \
    calibrate/cli/main.cpp |
    xargs -P "$JOBS" -I{} sh -c 'g++ -std=c++20 -O2 -DFMT_HEADER_ONLY "$@" -c {} -o '"$dir"'/obj/$(basename {} .cpp).o' \
      sh "${inc[@]}"
  # Wheels ship only versioned libraries (libcublasLt.so.13): link each by its file name.
  local roots=("$CUDNN_ROOT" "$CUBLAS_ROOT" "$CUDA_HOME") libs=() r l
  for l in libcudnn.so libcublasLt.so libcublas.so libcudart.so; do libs+=("$(lib_flag "$l" "${roots[@]}")"); done
  for r in "${roots[@]}"; do libs+=("-L$r/lib" "-L$r/lib64" "-Wl,-rpath,$r/lib" "-Wl,-rpath,$r/lib64"); done
  g++ -o "$dir/bin/hopsim-calibrate" "$dir"/obj/*.o "${libs[@]}"
}
# lib_flag LIB ROOT...: -l:FILE for the shortest-named LIB* in the first ROOT's lib/ or lib64/
# that has one (libcudnn.so.9 before libcudnn_graph.so.9).
lib_flag() {
  local lib=$1 r f
  shift
  for r in "$@"; do
    f="$(find "$r/lib" "$r/lib64" -maxdepth 1 -name "$lib*" 2>/dev/null |
      awk '{ print length, $0 }' | sort -n | head -1 | cut -d' ' -f2-)"
    if [ -n "$f" ]; then
      echo "-l:$(basename "$f")"
      return
    fi
  done
  echo "-l:$lib"
}
export -f build_preset build_standalone build_direct lib_flag

if step build-preset 300 build_preset; then
  BIN=build/cuda/bin/hopsim-calibrate
elif step build-standalone 240 build_standalone; then
  BIN=build/cuda-standalone/bin/hopsim-calibrate
elif step build-direct 200 build_direct; then
  BIN=build/cuda-direct/bin/hopsim-calibrate
elif [ -x "${HOPSIM_PREBUILT_DIR:-/nonexistent}/hopsim-calibrate" ]; then
  # A harness built on another machine with the same CUDA major (carried along), as a last resort.
  BIN="$HOPSIM_PREBUILT_DIR/hopsim-calibrate"
  log "every build failed; using the prebuilt $BIN"
else
  log "all builds failed; see $LOGS/build-*.log"
  exit 1
fi
cat "$LOGS"/build-*.log >"$LOGS/build.log" 2>/dev/null || true
log "harness: $BIN"

# --- 4. plan, checks, smoke grid ------------------------------------------------------------
step dry-run 30 "$BIN" --dry-run --grid smoke || true
cat "$LOGS/dry-run.log" >>"$OUT/summary.txt"

check_rc=0
step check 150 "$BIN" --check-only || check_rc=$?
grep -E "^check |no CUDA device" "$LOGS/check.log" >>"$OUT/summary.txt" || true
# An FP8 check that failed: which cuBLASLt FP8 configurations this GPU accepts (fp8_probe.cpp).
fp8_probe() {
  nvcc -std=c++17 -I"$CUBLAS_ROOT/include" -o build/fp8_probe calibrate/diagnostics/fp8_probe.cpp \
    "-L$CUBLAS_ROOT/lib" "-L$CUBLAS_ROOT/lib64" "$(lib_flag libcublasLt.so "$CUBLAS_ROOT")" \
    "-Xlinker=-rpath,$CUBLAS_ROOT/lib" && CUBLASLT_LOG_LEVEL=5 build/fp8_probe
}
export -f fp8_probe
if grep -qE "^check FAIL .*fp8" "$LOGS/check.log"; then
  step fp8-probe 60 fp8_probe || true
  grep -vE "^\[" "$LOGS/fp8-probe.log" >>"$OUT/summary.txt" || true
fi

measure_limit=$(($(left) - 25))
if [ "$measure_limit" -lt 60 ]; then
  log "only ${measure_limit}s left: skipping the measurement"
  measure_rc=124
else
  # The harness stops starting points at --budget-s and writes the table; the timeout is a
  # backstop (it rewrites the table every 20 s, so a kill still leaves partial results).
  measure_rc=0
  step measure "$measure_limit" "$BIN" --grid smoke --budget-s $((measure_limit - 30)) --out "$TABLE" ||
    measure_rc=$?
  grep -E "^(ceilings|wrote|budget|device|hopsim-calibrate)|FAILED" "$LOGS/measure.log" >>"$OUT/summary.txt" || true
fi

# --- 5. validate the table, optional GPU tests, the machine after ---------------------------
if [ -f "$TABLE" ]; then
  step validate 30 "$BIN" --merge "$OUT/validated-copy.json" "$TABLE" || log "the table failed validation"
  rm -f "$OUT/validated-copy.json"
else
  log "no table was written"
fi
tests_bin="$(dirname "$BIN")/hopsim_calibrate_cuda_tests"
if [ -x "$tests_bin" ] && [ "$(left)" -gt 90 ]; then
  step cuda-tests $(($(left) - 30)) "$tests_bin" || true
fi
if command -v nvidia-smi >/dev/null; then nvidia-smi -q >"$LOGS/nvidia-smi-after.log" 2>&1 || true; fi
log "done: checks exit $check_rc, measurement exit $measure_rc, table $TABLE"
if [ "$check_rc" -ne 0 ] || [ "$measure_rc" -ne 0 ]; then
  exit 1
fi
