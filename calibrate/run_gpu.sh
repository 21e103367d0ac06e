#!/usr/bin/env bash
# The one script to run on a GPU machine (an H100 or an H200): build the CUDA harness in Release
# for sm_90a, run the correctness checks and the FP8 probe, time the smoke grid (BF16 and FP8
# GEMMs per tensor and blockwise, expert GEMMs, attention, every memory-bound kernel, with clocks
# sampled at each point), and leave the table plus logs in $OUT. Finishes in under 8 minutes.
#
#   calibrate/run_gpu.sh [--gpu h100|h200] [--out DIR]   (from the repository root)
#   calibrate/run_gpu.sh --dry-run [--gpu ...] [--bin HARNESS]   (any machine, no GPU needed)
#
# --gpu: which table to write (default: nvidia-smi's name, H100 or H200). --dry-run prints what a
# run does step by step, the grid with each suite's estimated device time, the whole run's
# estimate (it fails above 8 minutes) and the FP8 descriptors, from a harness already built
# (--bin, $HOPSIM_CALIBRATE_BIN, else build/*/bin/hopsim-calibrate).
# Output: $OUT/<gpu>-measured.json (partial if time ran out: unmeasured cells stay null), its
# per-point clocks ($OUT/<gpu>-measured.json.clocks.csv), $OUT/summary.txt, $OUT/logs/*.log
# (nvidia-smi -q before/after, build, checks, FP8 probe, measurement). Exit status: 0 when every
# check and point passed; else 1, and the last line names the failing checks.
# Builds with the cuda preset; if the simulator's dependencies are missing it configures
# calibrate/ on its own (header-only deps from build/calib-deps/include, see pack_deps.sh), and
# without CMake it compiles directly with g++ and nvcc; if every build fails it runs a harness built
# elsewhere from $HOPSIM_PREBUILT_DIR. cuDNN and cuBLAS come from the toolkit or the system, else
# from NVIDIA's pip wheels (nvidia/cudnn, nvidia/cu13). Never changes clocks, power limits or other
# GPU settings.
set -euo pipefail

T0=$(date +%s)
GPU=""
DRY_RUN=0
BIN_ARG="${HOPSIM_CALIBRATE_BIN:-}"
OUT="${OUT:-$PWD/out}"
while [ $# -gt 0 ]; do
  case "$1" in
    --gpu) GPU="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --bin) BIN_ARG="$2"; shift 2 ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "run_gpu.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
TOTAL_S="${HOPSIM_RUN_TOTAL_S:-465}"  # whole-script limit, below 8 minutes
ARCH=90a                              # wgmma-capable Hopper code (H100 and H200 alike)

# The GPU model: --gpu, else nvidia-smi's name.
detect_gpu() {
  local name
  name="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)"
  case "$name" in
    *H100*) echo h100 ;;
    *H200*) echo h200 ;;
    *) echo "" ;;
  esac
}
if [ -z "$GPU" ]; then GPU="$(detect_gpu)"; fi
case "$GPU" in
  h100|H100) GPU=h100 ;;
  h200|H200) GPU=h200 ;;
  "") if [ "$DRY_RUN" = 1 ]; then GPU=h200; else
        echo "run_gpu.sh: no H100 or H200 found by nvidia-smi; name it with --gpu" >&2; exit 2
      fi ;;
  *) echo "run_gpu.sh: --gpu must be h100 or h200, not $GPU" >&2; exit 2 ;;
esac

# The steps and their time limits (seconds): the dry run prints them, the run enforces them.
STEPS=("build 300" "dry-run 30" "check 150" "fp8-probe 60" "measure rest" "validate 30")

dry_run() {
  local bin="$BIN_ARG" b
  if [ -z "$bin" ]; then
    for b in build/cuda/bin/hopsim-calibrate build/bin/hopsim-calibrate \
             build/*/bin/hopsim-calibrate; do
      if [ -x "$b" ]; then bin="$b"; break; fi
    done
  fi
  if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    echo "run_gpu.sh --dry-run: no hopsim-calibrate built (pass --bin)" >&2
    return 2
  fi
  echo "run_gpu.sh --dry-run: GPU $GPU, nvcc -arch sm_$ARCH (CMAKE_CUDA_ARCHITECTURES=$ARCH), OUT=$OUT"
  echo "a run's steps (time limits, whole run under ${TOTAL_S} s):"
  printf '  %s\n' "${STEPS[@]}" | sed 's/ rest$/ what is left, less 25 s/; s/ \([0-9]*\)$/ \1 s/'
  echo "writes $OUT/$GPU-measured.json, its .clocks.csv, summary.txt, logs/"
  local plan
  plan="$("$bin" --dry-run --grid smoke)"
  echo "$plan"
  local grid_s
  grid_s="$(echo "$plan" | sed -n 's/^estimated device time: \([0-9.]*\) s.*/\1/p')"
  # Checks and ceilings are in the grid's estimate; the probe takes seconds; the build is what it
  # is on the GPU machine (at most its limit), measuring gets the rest of the 465 s.
  awk -v g="$grid_s" -v t="$TOTAL_S" 'BEGIN {
    printf "estimate: grid, checks and ceilings %.0f s (%.1f min) + FP8 probe 5 s; with the build the run stops at %d s\n", g, g / 60, t;
    if (g == "" || g + 5 >= 480) { print "estimate FAILED: over 8 minutes"; exit 1 }
    printf "the whole grid fits if the build, checks and probe take under %.0f s (the rest stays null)\n", t - 55 - g;
    print "estimate OK: under 8 minutes" }'
}
if [ "$DRY_RUN" = 1 ]; then
  dry_run
  exit $?
fi

LOGS="$OUT/logs"
TABLE="$OUT/$GPU-measured.json"
JOBS="$(nproc 2>/dev/null || echo 8)"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -x "$CUDA_HOME/bin/nvcc" ] && command -v nvcc >/dev/null; then
  CUDA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")"
fi
export PATH="$CUDA_HOME/bin:$PATH"
DEPS_INCLUDE="$PWD/build/calib-deps/include"
mkdir -p "$LOGS"
: >"$OUT/summary.txt"
FAILED_CHECKS=()

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
export CUDNN_ROOT CUBLAS_ROOT CUDA_HOME JOBS DEPS_INCLUDE ARCH
export LD_LIBRARY_PATH="$CUDNN_ROOT/lib:$CUBLAS_ROOT/lib:$CUDA_HOME/lib64:${LD_LIBRARY_PATH:-}"
log "cuDNN root: $CUDNN_ROOT; cuBLAS root: $CUBLAS_ROOT; CUDA: $CUDA_HOME"

# --- 3. build -------------------------------------------------------------------------------
BIN=""
GENERATOR="Unix Makefiles"
if command -v ninja >/dev/null; then GENERATOR=Ninja; fi
export GENERATOR

build_preset() {
  # Warnings stay warnings here: a different compiler on the GPU image must not fail the run.
  cmake --preset cuda -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCH" \
    -DCUDNN_ROOT="$CUDNN_ROOT" -DHOPSIM_TESTS=ON -DHOPSIM_WERROR=OFF &&
    cmake --build build/cuda --target hopsim-calibrate hopsim_calibrate_cuda_tests -j "$JOBS"
}
build_standalone() {
  cmake -S calibrate -B build/cuda-standalone -G "$GENERATOR" -DCMAKE_BUILD_TYPE=Release -DHOPSIM_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="$ARCH" \
    -DCUDNN_ROOT="$CUDNN_ROOT" -DHOPSIM_DEPS_INCLUDE="$DEPS_INCLUDE" &&
    cmake --build build/cuda-standalone --target hopsim-calibrate hopsim_calibrate_cuda_tests -j "$JOBS"
}
build_direct() {
  local dir=build/cuda-direct cu
  mkdir -p "$dir/obj" "$dir/bin"
  local inc=(-I"$PWD" -I"$CUDA_HOME/include" -I"$CUBLAS_ROOT/include" -I"$CUDNN_ROOT/include")
  if [ -d "$DEPS_INCLUDE" ]; then inc+=(-I"$DEPS_INCLUDE"); fi
  for cu in calibrate/backend/*.cu calibrate/memory/*.cu; do
    nvcc -std=c++20 -O2 "-gencode=arch=compute_$ARCH,code=sm_$ARCH" "${inc[@]}" -c "$cu" \
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
  g++ -o "$dir/bin/hopsim-calibrate" "$dir"/obj/*.o "${libs[@]}" -ldl
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
while read -r line; do FAILED_CHECKS+=("$line"); done < <(grep -E "^check FAIL" "$LOGS/check.log" | cut -d: -f1 || true)
# Which cuBLASLt FP8 configurations this GPU accepts, and which attribute it refuses
# (diagnostics/fp8_probe.cpp, a few seconds): every run, so that no second run is needed.
fp8_probe() {
  nvcc -std=c++20 -I"$PWD" -I"$CUBLAS_ROOT/include" -o build/fp8_probe \
    calibrate/diagnostics/fp8_probe.cpp calibrate/core/lt_spec.cpp \
    "-L$CUBLAS_ROOT/lib" "-L$CUBLAS_ROOT/lib64" "$(lib_flag libcublasLt.so "$CUBLAS_ROOT")" \
    "-Xlinker=-rpath,$CUBLAS_ROOT/lib" && build/fp8_probe
}
export -f fp8_probe
step fp8-probe 60 fp8_probe || FAILED_CHECKS+=("fp8-probe (the harness's FP8 descriptor is refused)")
grep -E "=>|requirement broken|refused at|fp8_probe:" "$LOGS/fp8-probe.log" >>"$OUT/summary.txt" || true

measure_limit=$(($(left) - 25))
if [ "$measure_limit" -lt 60 ]; then
  log "only ${measure_limit}s left: skipping the measurement"
  measure_rc=124
  FAILED_CHECKS+=("measure (no time left after the build and checks)")
else
  # The harness stops starting points at --budget-s and writes the table; the timeout is a
  # backstop (it rewrites the table every 20 s, so a kill still leaves partial results).
  measure_rc=0
  step measure "$measure_limit" "$BIN" --grid smoke --budget-s $((measure_limit - 30)) --out "$TABLE" ||
    measure_rc=$?
  grep -E "^(ceilings|clocks|wrote|budget|device|hopsim-calibrate)|FAILED|re-measured" "$LOGS/measure.log" >>"$OUT/summary.txt" || true
  if [ "$measure_rc" -ne 0 ]; then FAILED_CHECKS+=("measure (exit $measure_rc: see logs/measure.log)"); fi
fi

# --- 5. validate the table, optional GPU tests, the machine after ---------------------------
if [ -f "$TABLE" ]; then
  step validate 30 "$BIN" --merge "$OUT/validated-copy.json" "$TABLE" ||
    FAILED_CHECKS+=("validate (the table does not read back)")
  rm -f "$OUT/validated-copy.json"
else
  FAILED_CHECKS+=("table (none was written)")
fi
tests_bin="$(dirname "$BIN")/hopsim_calibrate_cuda_tests"
if [ -x "$tests_bin" ] && [ "$(left)" -gt 90 ]; then
  step cuda-tests $(($(left) - 30)) "$tests_bin" || true
fi
if command -v nvidia-smi >/dev/null; then nvidia-smi -q >"$LOGS/nvidia-smi-after.log" 2>&1 || true; fi
log "done: checks exit $check_rc, measurement exit $measure_rc, table $TABLE"
tar czf "$OUT/logs.tgz" -C "$OUT" logs 2>/dev/null || true
if [ "${#FAILED_CHECKS[@]}" -gt 0 ]; then
  log "FAILED: $(printf '%s; ' "${FAILED_CHECKS[@]}")"
  exit 1
fi
log "all checks passed"
