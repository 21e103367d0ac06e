#!/usr/bin/env bash
# ctest calib.run_gpu_dry_run: `calibrate/run_gpu.sh --dry-run` on a machine without a GPU prints
# the grid, an estimate under 8 minutes and the FP8 descriptors it will use, all documented-valid.
#   run_gpu_dry_run_test.sh HOPSIM_CALIBRATE   (from the repository root)
set -euo pipefail
out="$(calibrate/run_gpu.sh --dry-run --gpu h100 --bin "$1" --out /nonexistent/out)"
echo "$out"
fail=0
for want in "run_gpu.sh --dry-run: GPU h100, nvcc -arch sm_90a" \
            "grid smoke shard 0/1:" "per suite:" "gemm fp8" "memory" \
            "estimated device time:" "estimate OK: under 8 minutes" \
            "FP8 descriptor, recipe tensor" "FP8 descriptor, recipe blk128" \
            "TRANSA CUBLAS_OP_T, TRANSB CUBLAS_OP_N" "CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F" \
            "CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F" "writes /nonexistent/out/h100-measured.json"; do
  if ! grep -qF -- "$want" <<<"$out"; then
    echo "run_gpu_dry_run_test: missing \"$want\"" >&2
    fail=1
  fi
done
if grep -qF "BROKEN" <<<"$out"; then
  echo "run_gpu_dry_run_test: a descriptor breaks a documented FP8 requirement" >&2
  fail=1
fi
exit "$fail"
