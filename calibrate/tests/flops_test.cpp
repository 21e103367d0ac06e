// FLOP formulas: closed-form attended-pair counts against brute force, and hand-computed cases.
#include "calibrate/core/flops.hpp"

#include <doctest/doctest.h>

#include "calibrate/core/reference.hpp"
#include "tests/approx.hpp"

namespace hopsim::calib {
namespace {

std::int64_t brute_pairs(std::int64_t s_q, std::int64_t s_kv, Mask mask) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < s_q; ++i) {
    for (std::int64_t j = 0; j < s_kv; ++j) {
      n += attends(mask, s_q, s_kv, i, j) ? 1 : 0;
    }
  }
  return n;
}

}  // namespace

TEST_CASE("attended pairs: hand-computed cases") {
  CHECK(attn_pairs(4, 4, Mask::None) == 16);
  CHECK(attn_pairs(4, 4, Mask::CausalTopLeft) == 10);      // 1+2+3+4
  CHECK(attn_pairs(4, 4, Mask::CausalBottomRight) == 10);  // square: both alignments agree
  CHECK(attn_pairs(2, 4, Mask::CausalBottomRight) == 7);   // rows see 3 and 4 keys
  CHECK(attn_pairs(2, 4, Mask::CausalTopLeft) == 3);       // rows see 1 and 2 keys
  CHECK(attn_pairs(4, 2, Mask::CausalTopLeft) == 7);       // 1+2+2+2
  CHECK(attn_pairs(4, 2, Mask::CausalBottomRight) == 3);   // 0+0+1+2
  CHECK(attn_pairs(8192, 8192, Mask::CausalTopLeft) == 8192LL * 8193 / 2);
}

TEST_CASE("attended pairs: closed forms match brute force") {
  for (std::int64_t s_q = 1; s_q <= 24; s_q += 1) {
    for (std::int64_t s_kv = 1; s_kv <= 24; s_kv += 1) {
      for (Mask m : {Mask::None, Mask::CausalTopLeft, Mask::CausalBottomRight}) {
        CAPTURE(s_q);
        CAPTURE(s_kv);
        CHECK(attn_pairs(s_q, s_kv, m) == brute_pairs(s_q, s_kv, m));
      }
    }
  }
}

TEST_CASE("gemm, grouped and attention FLOPs") {
  CHECK(gemm_flops(8192, 8192, 8192) == hopsim::test::approx(1.099511627776e12));
  CHECK(grouped_gemm_flops(8, 512, 4096, 7168) ==
        hopsim::test::approx(2.0 * 8 * 512 * 4096 * 7168));
  // Llama-3.1 shape of the cuDNN frontend H200 benchmark (docs/validation.md): causal fwd, b=1, h_q=64, s=8192, d=128.
  const double fwd = attn_fwd_flops(64, 128, 128, 8192, 8192, Mask::CausalTopLeft);
  CHECK(fwd == hopsim::test::approx(2.0 * 64 * 256 * (8192.0 * 8193 / 2)));
  CHECK(attn_bwd_flops(64, 128, 128, 8192, 8192, Mask::CausalTopLeft) ==
        hopsim::test::approx(2.5 * fwd));
  // d_qk ≠ d_v: the formula weights both head dims.
  CHECK(attn_fwd_flops(1, 192, 128, 2, 2, Mask::None) == hopsim::test::approx(2.0 * 320 * 4));
}

TEST_CASE("minimum bytes") {
  CHECK(gemm_min_bytes(2, 3, 4, Dtype::Bf16) == hopsim::test::approx((8 + 12) * 2 + 6 * 2));
  CHECK(gemm_min_bytes(2, 3, 4, Dtype::Fp8) == hopsim::test::approx((8 + 12) * 1 + 6 * 2));
  // GQA shrinks K/V traffic by the group size.
  CHECK(attn_fwd_min_bytes(8, 8, 128, 128, 1024, 1024) <
        attn_fwd_min_bytes(8, 1, 128, 128, 1024, 1024));
  CHECK(attn_bwd_min_bytes(8, 1, 128, 128, 1024, 1024) >
        attn_fwd_min_bytes(8, 1, 128, 128, 1024, 1024));
  // Forward, MHA, s = d = 1, bh = 1: Q, K, V, O one BF16 element each, plus 4 bytes of stats.
  CHECK(attn_fwd_min_bytes(1, 1, 1, 1, 1, 1) == hopsim::test::approx(12.0));
}

}  // namespace hopsim::calib
