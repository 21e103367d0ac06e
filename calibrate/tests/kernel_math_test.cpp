// The memory-bound kernels' per-thread arithmetic (memory/kernel_math.hpp) on the CPU, against
// plain references: the online softmax state the cross-entropy keeps, the router's warp top-k
// with the 32 lanes' shuffles emulated, the rotary frequency of a column, and the FP8 cast's tile
// layout.
#include "calibrate/memory/kernel_math.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "tests/approx.hpp"

namespace hopsim::calib {
namespace {

std::vector<float> normal_values(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> d(0.0f, 3.0f);
  std::vector<float> v(n);
  for (float& x : v) {
    x = d(gen);
  }
  return v;
}

// router_fwd's top-k over one token of `p` (softmax values; -1 beyond the width): lane l holds
// experts 8l .. 8l+7; each round every lane offers lane_best, a butterfly of `better` over the
// 32 lanes (as the kernel's __shfl_xor_sync rounds) picks the winner, whose lane marks it taken.
std::vector<TopCandidate> warp_top_k(const std::vector<float>& p, int k) {
  std::array<float[kRouterPerLane], 32> lanes{};
  std::array<unsigned, 32> taken{};
  for (int l = 0; l < 32; ++l) {
    for (int j = 0; j < kRouterPerLane; ++j) {
      const auto e = static_cast<std::size_t>(kRouterPerLane * l + j);
      lanes[static_cast<std::size_t>(l)][j] = e < p.size() ? p[e] : -1.0f;
    }
  }
  std::vector<TopCandidate> out;
  for (int round = 0; round < k; ++round) {
    std::array<TopCandidate, 32> c{};
    for (std::size_t l = 0; l < 32; ++l) {
      c[l] = lane_best(lanes[l], kRouterPerLane * static_cast<int>(l), taken[l]);
    }
    for (std::size_t o = 16; o > 0; o >>= 1) {
      const std::array<TopCandidate, 32> before = c;
      for (std::size_t l = 0; l < 32; ++l) {
        c[l] = better(before[l], before[l ^ o]);
      }
    }
    for (std::size_t l = 0; l < 32; ++l) {
      REQUIRE(c[l].id == c[0].id);  // every lane agrees, as the kernel's lanes must
    }
    const auto lane = static_cast<std::size_t>(c[0].id / kRouterPerLane);
    taken[lane] |= 1U << (c[0].id % kRouterPerLane);
    out.push_back(c[0]);
  }
  return out;
}

// The reference: a stable sort by value, descending (ties to the lower id).
std::vector<TopCandidate> sorted_top_k(const std::vector<float>& p, int k) {
  std::vector<TopCandidate> all;
  for (std::size_t i = 0; i < p.size(); ++i) {
    all.push_back({p[i], static_cast<int>(i)});
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const TopCandidate& a, const TopCandidate& b) { return a.value > b.value; });
  all.resize(static_cast<std::size_t>(k));
  return all;
}

}  // namespace

TEST_CASE("kernel math: the online max and sum equal the two-pass ones, merged in any split") {
  const std::vector<float> v = normal_values(1000, 3);
  const float max = *std::max_element(v.begin(), v.end());
  double sum = 0;
  for (const float x : v) {
    sum += std::exp(static_cast<double>(x) - max);
  }
  OnlineMax whole;
  for (const float x : v) {
    whole.push(x);
  }
  CHECK(whole.max == max);
  CHECK(whole.sum == test::approx(sum).epsilon(1e-5));
  for (const std::size_t threads : {2U, 7U, 256U}) {  // thread t takes elements t, t + threads ..
    std::vector<OnlineMax> part(threads);
    for (std::size_t i = 0; i < v.size(); ++i) {
      part[i % threads].push(v[i]);
    }
    OnlineMax merged;  // an empty part (more threads than elements) leaves it unchanged
    for (const OnlineMax& p : part) {
      merged.merge(p);
    }
    CHECK(merged.max == max);
    CHECK(merged.sum == test::approx(sum).epsilon(1e-5));
    CHECK(part.back().sum_at(max) <= part.back().sum);
  }
  CHECK(OnlineMax{}.sum_at(0.0f) == 0.0f);
}

TEST_CASE("kernel math: the router's warp top-8 is the sorted top-8, ties to the lower id") {
  for (const std::size_t width : {256U, 64U, 8U}) {
    std::vector<float> p = normal_values(width, static_cast<unsigned>(width));
    for (float& x : p) {
      x = std::abs(x) / 10.0f;
    }
    if (width >= 64) {  // ties across lanes and within one
      p[200 % width] = p[3] = p[60] = 2.0f;
      p[4] = p[5] = 1.5f;
    }
    CAPTURE(width);
    const std::vector<TopCandidate> got = warp_top_k(p, 8);
    const std::vector<TopCandidate> want = sorted_top_k(p, 8);
    for (std::size_t k = 0; k < 8; ++k) {
      CHECK(got[k].id == want[k].id);
      CHECK(got[k].value == want[k].value);
    }
  }
  CHECK(better({1.0f, 5}, {1.0f, 4}).id == 4);
  CHECK(better({1.0f, 4}, {1.0f, 5}).id == 4);
  CHECK(better({0.5f, 0}, {1.0f, 9}).id == 9);
  const float all_taken[kRouterPerLane] = {1, 1, 1, 1, 1, 1, 1, 1};
  CHECK(lane_best(all_taken, 0, 0xffU).value == -1.0f);
}

TEST_CASE("kernel math: a rotary group of 8 columns is 4 pairs of consecutive frequencies") {
  // The reference's pair p = col / 2 has frequency p mod 32 (rotary.cu's check); the kernel
  // takes frequencies rotary_freq(8g) + 0..3 for the group at column 8g.
  for (int col = 0; col < 8192; col += 2) {
    const int g = col / 8;
    CHECK(rotary_freq(8 * g) + (col % 8) / 2 == (col / 2) % (kRotaryDims / 2));
  }
}

TEST_CASE("kernel math: the FP8 cast's read and transposed write each cover the tile once") {
  std::set<std::pair<int, int>> read;
  for (int c = 0; c < kCastReadChunks; ++c) {
    const TileCell t = cast_read_chunk(c);
    for (int e = 0; e < 8; ++e) {
      CHECK(read.insert({t.row, t.col + e}).second);
    }
    // A half-warp (16 consecutive chunks, aligned) holds one row's 128 columns: its amax.
    CHECK(t.row == cast_read_chunk(c - c % 16).row);
  }
  std::set<std::pair<int, int>> written;
  for (int c = 0; c < kCastWriteChunks; ++c) {
    const TileCell t = cast_write_chunk(c);
    for (int e = 0; e < 16; ++e) {
      CHECK(written.insert({t.row + e, t.col}).second);
    }
    CHECK(t.row % 16 == 0);  // 16 consecutive rows of q^T: one 128-bit store
  }
  CHECK(read.size() == static_cast<std::size_t>(kCastTileRows * kCastGroup));
  CHECK(written == read);
  CHECK(kCastReadChunks % kCastThreads == 0);  // every thread loops alike (the shuffles)
}

}  // namespace hopsim::calib
