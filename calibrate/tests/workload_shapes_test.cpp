// Context-parallel decompositions conserve causal work; expert token splits are exact.
#include "calibrate/core/workload_shapes.hpp"

#include <algorithm>
#include <numeric>

#include <doctest/doctest.h>

#include "calibrate/core/flops.hpp"

namespace hopsim::calib {
namespace {

std::int64_t work(const std::vector<AttnBlock>& blocks) {
  std::int64_t n = 0;
  for (const AttnBlock& b : blocks) {
    n += attn_pairs(b.s_q, b.s_kv, b.mask);
  }
  return n;
}

}  // namespace

TEST_CASE("zigzag CP blocks: rank 1 of 4 at S = 64") {
  // c = 8: one causal 16x16, one full (16, 8) from rank 0, two full (8, 16) from ranks 2, 3.
  const std::vector<AttnBlock> want{
      {16, 16, Mask::CausalTopLeft}, {16, 8, Mask::None}, {8, 16, Mask::None}, {8, 16, Mask::None}};
  CHECK(zigzag_cp_blocks(64, 4, 1) == want);
}

TEST_CASE("zigzag CP blocks sum to the full causal work and balance the ranks") {
  for (std::int64_t cp : {1, 2, 3, 4, 8, 16}) {
    for (std::int64_t c : {1, 2, 7, 64, 1024}) {
      const std::int64_t seq = 2 * cp * c;
      std::int64_t total = 0;
      const std::int64_t rank0 = work(zigzag_cp_blocks(seq, cp, 0));
      for (std::int64_t r = 0; r < cp; ++r) {
        const std::int64_t w = work(zigzag_cp_blocks(seq, cp, r));
        CHECK(w == rank0);
        total += w;
      }
      CAPTURE(cp);
      CAPTURE(c);
      CHECK(total == attn_pairs(seq, seq, Mask::CausalTopLeft));
    }
  }
}

TEST_CASE("contiguous CP blocks sum to the full causal work, the last rank does the most") {
  for (std::int64_t cp : {1, 2, 4, 8}) {
    const std::int64_t seq = cp * 512;
    std::int64_t total = 0;
    for (std::int64_t r = 0; r < cp; ++r) {
      total += work(contiguous_cp_blocks(seq, cp, r));
    }
    CHECK(total == attn_pairs(seq, seq, Mask::CausalTopLeft));
    CHECK(work(contiguous_cp_blocks(seq, cp, cp - 1)) >= work(contiguous_cp_blocks(seq, cp, 0)));
  }
}

TEST_CASE("CP decompositions reject impossible splits") {
  CHECK_THROWS_AS(zigzag_cp_blocks(100, 8, 0), CalibError);
  CHECK_THROWS_AS(zigzag_cp_blocks(64, 4, 4), CalibError);
  CHECK_THROWS_AS(contiguous_cp_blocks(10, 4, 0), CalibError);
}

TEST_CASE("tokens per expert: uniform and ramps") {
  CHECK(tokens_per_expert(4, 100, "uniform") == std::vector<std::int64_t>{100, 100, 100, 100});
  for (const char* imbalance : {"ramp1.5", "ramp2.0", "ramp1.25"}) {
    for (std::int64_t e : {2, 3, 8, 32, 64}) {
      for (std::int64_t mean : {1, 8, 128, 333, 2048}) {
        const auto counts = tokens_per_expert(e, mean, imbalance);
        CHECK(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}) == e * mean);
        CHECK(std::is_sorted(counts.begin(), counts.end()));
        CHECK(*std::min_element(counts.begin(), counts.end()) >= 0);
      }
    }
  }
  const auto ramp2 = tokens_per_expert(8, 128, "ramp2.0");
  CHECK(ramp2.front() == 0);   // "some experts empty"
  CHECK(ramp2.back() == 256);  // max / mean = 2
  const auto ramp15 = tokens_per_expert(8, 128, "ramp1.5");
  CHECK(ramp15.front() == 64);
  CHECK(ramp15.back() == 192);
  CHECK(tokens_per_expert(1, 50, "ramp2.0") == std::vector<std::int64_t>{50});
}

TEST_CASE("tokens per expert: bad imbalance spellings") {
  CHECK_THROWS_AS(tokens_per_expert(4, 8, "zipf1.2"), CalibError);
  CHECK_THROWS_AS(tokens_per_expert(4, 8, "ramp3"), CalibError);
  CHECK_THROWS_AS(tokens_per_expert(4, 8, "ramp1.5x"), CalibError);
  CHECK_THROWS_AS(tokens_per_expert(1, 8, "ramp"), CalibError);
}

}  // namespace hopsim::calib
