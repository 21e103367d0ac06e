// Context-parallel block decompositions and deterministic uneven expert token counts.
#include "calibrate/core/workload_shapes.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <string>

#include <fmt/format.h>

namespace hopsim::calib {
namespace {

void check_rank(std::int64_t cp, std::int64_t rank) {
  if (cp < 1 || rank < 0 || rank >= cp) {
    throw CalibError(fmt::format("context parallel rank {} outside 0..{}", rank, cp - 1));
  }
}

double parse_ramp(std::string_view imbalance) {
  constexpr std::string_view kPrefix = "ramp";
  if (imbalance.substr(0, kPrefix.size()) != kPrefix) {
    throw CalibError(
        fmt::format("unknown imbalance \"{}\" (expected uniform or rampR)", imbalance));
  }
  const std::string digits(imbalance.substr(kPrefix.size()));
  double ratio = 0.0;
  std::size_t used = 0;
  try {
    ratio = std::stod(digits, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != digits.size() || ratio < 1.0 || ratio > 2.0) {
    throw CalibError(fmt::format("imbalance \"{}\": ramp ratio must be in [1, 2]", imbalance));
  }
  return ratio;
}

}  // namespace

std::vector<AttnBlock> zigzag_cp_blocks(std::int64_t seq_len, std::int64_t cp, std::int64_t rank) {
  check_rank(cp, rank);
  if (seq_len <= 0 || seq_len % (2 * cp) != 0) {
    throw CalibError(
        fmt::format("zigzag CP: 2·cp = {} does not divide seq_len {}", 2 * cp, seq_len));
  }
  const std::int64_t c = seq_len / (2 * cp);
  std::vector<AttnBlock> blocks;
  blocks.push_back({2 * c, 2 * c, Mask::CausalTopLeft});
  for (std::int64_t i = 0; i < rank; ++i) {
    blocks.push_back({2 * c, c, Mask::None});
  }
  for (std::int64_t i = rank + 1; i < cp; ++i) {
    blocks.push_back({c, 2 * c, Mask::None});
  }
  return blocks;
}

std::vector<AttnBlock> contiguous_cp_blocks(std::int64_t seq_len, std::int64_t cp,
                                            std::int64_t rank) {
  check_rank(cp, rank);
  if (seq_len <= 0 || seq_len % cp != 0) {
    throw CalibError(fmt::format("contiguous CP: cp = {} does not divide seq_len {}", cp, seq_len));
  }
  const std::int64_t c = seq_len / cp;
  std::vector<AttnBlock> blocks{{c, c, Mask::CausalTopLeft}};
  for (std::int64_t i = 0; i < rank; ++i) {
    blocks.push_back({c, c, Mask::None});
  }
  return blocks;
}

std::vector<std::int64_t> tokens_per_expert(std::int64_t experts, std::int64_t mean_tokens,
                                            std::string_view imbalance) {
  if (experts < 1 || mean_tokens < 0) {
    throw CalibError(fmt::format("tokens_per_expert: experts {} mean {}", experts, mean_tokens));
  }
  const auto n = static_cast<std::size_t>(experts);
  if (imbalance == "uniform" || experts == 1) {
    if (imbalance != "uniform") {
      parse_ramp(imbalance);  // validate the spelling even when it cannot matter
    }
    return std::vector<std::int64_t>(n, mean_tokens);
  }
  const double ratio = parse_ramp(imbalance);
  const std::int64_t total = experts * mean_tokens;
  std::vector<std::int64_t> counts(n);
  std::vector<double> remainder(n);
  std::int64_t assigned = 0;
  for (std::size_t e = 0; e < n; ++e) {
    const double t = static_cast<double>(e) / static_cast<double>(experts - 1);
    const double ideal =
        static_cast<double>(mean_tokens) * ((2.0 - ratio) + 2.0 * (ratio - 1.0) * t);
    counts[e] = static_cast<std::int64_t>(std::floor(ideal));
    remainder[e] = ideal - static_cast<double>(counts[e]);
    assigned += counts[e];
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Largest remainder first; ties go to the later (larger) expert so the ramp stays monotone.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return remainder[a] > remainder[b] || (remainder[a] == remainder[b] && a > b);
  });
  for (std::size_t i = 0; assigned < total; ++i) {
    ++counts[order[i % n]];
    ++assigned;
  }
  return counts;
}

}  // namespace hopsim::calib
