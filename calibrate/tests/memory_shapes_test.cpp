// Memory-bound kernels: names as the simulator spells its classes, bytes per row as its closed
// forms count them, and the rows the harness times for a table's bytes.
#include "calibrate/core/memory_shapes.hpp"

#include <doctest/doctest.h>

namespace hopsim::calib {

TEST_CASE("memory kernels: names round-trip, others are refused") {
  for (MemoryKernel k : {MemoryKernel::Norm, MemoryKernel::Residual, MemoryKernel::Rotary,
                         MemoryKernel::SwiGlu, MemoryKernel::Fp8Cast, MemoryKernel::Router,
                         MemoryKernel::Permute, MemoryKernel::AttnBwdPrep,
                         MemoryKernel::CrossEntropy}) {
    CHECK(parse_memory_kernel(to_string(k)) == k);
  }
  CHECK(to_string(MemoryKernel::AttnBwdPrep) == "attention_bwd_prep");
  CHECK(to_string(MemoryKernel::CrossEntropy) == "cross_entropy");
  CHECK_THROWS_AS(parse_memory_kernel("softmax"), CalibError);
}

TEST_CASE("memory kernels: bytes per row as the simulator counts them") {
  // workloads/costs/layer_kernels.hpp, one token of DeepSeek-V3's hidden 7168.
  CHECK(memory_row_bytes(MemoryKernel::Norm, Pass::Fwd, 7168) == 4 * 7168 + 4);
  CHECK(memory_row_bytes(MemoryKernel::Norm, Pass::Bwd, 7168) == 6 * 7168 + 4);
  CHECK(memory_row_bytes(MemoryKernel::Residual, Pass::Bwd, 7168) == 6 * 7168);
  CHECK(memory_row_bytes(MemoryKernel::SwiGlu, Pass::Fwd, 2048) == 6 * 2048);
  CHECK(memory_row_bytes(MemoryKernel::SwiGlu, Pass::Bwd, 2048) == 10 * 2048);
  CHECK(memory_row_bytes(MemoryKernel::Fp8Cast, Pass::Fwd, 7168) == 4 * 7168);
  CHECK(memory_row_bytes(MemoryKernel::Router, Pass::Fwd, 256) == 8 * 256 + 8 * 8);
  CHECK(memory_row_bytes(MemoryKernel::Router, Pass::Bwd, 256) == 12 * 256);
  CHECK(memory_row_bytes(MemoryKernel::Permute, Pass::Fwd, 7168) == 2 * 7168);
  CHECK(memory_row_bytes(MemoryKernel::Permute, Pass::Bwd, 7168) == 4 * 7168);
  CHECK(memory_row_bytes(MemoryKernel::AttnBwdPrep, Pass::Bwd, 128) ==
        128 * (4 * 128 + 4 + 6 * 128));
  CHECK(memory_row_bytes(MemoryKernel::AttnBwdPrep, Pass::Fwd, 128) == 0);
  // workloads/costs/layer_kernels.hpp's online cross-entropy, one token of 16,032 logits.
  CHECK(memory_width(MemoryKernel::CrossEntropy) == 16032);
  CHECK(memory_row_bytes(MemoryKernel::CrossEntropy, Pass::Fwd, 16032) == 6 * 16032 + 8);
  CHECK(memory_row_bytes(MemoryKernel::CrossEntropy, Pass::Bwd, 16032) == 4 * 16032 + 4);
}

TEST_CASE("memory kernels: the rows timed for a table's bytes") {
  // 256 MiB of RMSNorm forward at 7168 wide: 268435456 / 28676 = 9360.9 rows.
  CHECK(memory_rows(MemoryKernel::Norm, Pass::Fwd, 268435456.0) == 9361);
  CHECK(memory_rows(MemoryKernel::Residual, Pass::Fwd, 1.0) == 1);  // at least one row
  CHECK_THROWS_AS(memory_rows(MemoryKernel::AttnBwdPrep, Pass::Fwd, 1e6), CalibError);
}

}  // namespace hopsim::calib
