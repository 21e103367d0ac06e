// Training routing (workloads/ep/training_routing.hpp): independent choices from the runs of
// alike tokens, a fresh popularity per batch, imbalance that grows with the run length.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include "tests/approx.hpp"
#include "tests/gpu_ids.hpp"
#include "workloads/ep/ep_details.hpp"
#include "workloads/ep/moe_routing.hpp"
#include "workloads/ep/popularity.hpp"
#include "workloads/ep/routing_rng.hpp"
#include "workloads/ep/training_routing.hpp"

using namespace hopsim::work;
using hopsim::Bytes;

namespace {

// Qwen3-235B's MoE on an EP8 group at 16K tokens (TP 4): 4,096 tokens per GPU.
MoeRouting qwen_group(double run_tokens, std::int64_t sequence_tokens, std::uint64_t seed) {
  MoeRouting r{4096, 128, 8, 0, seed};
  r.distribution = RoutingDistribution::Training;
  r.run_tokens = run_tokens;
  r.sequence_tokens = sequence_tokens;
  return r;
}

// The busiest GPU's rows over the mean, for an EP group of 8 GPUs on one node.
double busiest(const MoeRouting& r) {
  RoutingLoad load;
  route_tokens(hopsim::test::first_gpus(8), 8, r, Bytes{1}, &load);
  std::vector<std::int64_t> rows;
  for (const auto& slots : load.slot_tokens) {
    rows.push_back(std::accumulate(slots.begin(), slots.end(), std::int64_t{0}));
  }
  return max_over_mean(rows);
}

}  // namespace

TEST_CASE("training routing: T / min(run, sequence) independent choices, at least 1") {
  // 8 x 4,096 tokens in runs of 1,800: 18.2 choices; sequences of 1,024 cut the runs: 32.
  CHECK(independent_tokens(qwen_group(1800, 16384, 1), 8) == hopsim::test::approx(32768.0 / 1800));
  CHECK(independent_tokens(qwen_group(1800, 1024, 1), 8) == hopsim::test::approx(32.0));
  // Without a sequence length, each GPU's tokens are one sequence.
  CHECK(independent_tokens(qwen_group(8192, 0, 1), 8) == hopsim::test::approx(8.0));
  // A group inside one run routes as one choice.
  CHECK(independent_tokens(qwen_group(1e6, 1 << 20, 1), 8) == hopsim::test::approx(1.0));
}

TEST_CASE("training routing: each batch its own popularity, the same seed the same one") {
  const std::vector<double> a = expert_weights(qwen_group(1800, 16384, 1), 8);
  const std::vector<double> b = expert_weights(qwen_group(1800, 16384, 1), 8);
  const std::vector<double> c = expert_weights(qwen_group(1800, 16384, 2), 8);
  CHECK(a == b);
  CHECK(a != c);
  // Around even: no expert is favoured for good, so the mean of many batches flattens.
  std::vector<double> mean(128, 0.0);
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const std::vector<double> w = expert_weights(qwen_group(1800, 16384, seed), 8);
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    for (std::size_t e = 0; e < w.size(); ++e) {
      mean[e] += w[e] / total / 200;
    }
  }
  const double top = *std::max_element(mean.begin(), mean.end());
  CHECK(top * 128 < 2.0);
  CHECK(expert_weights(qwen_group(1800, 16384, 1), 8)[0] > 0);
}

TEST_CASE("training routing: the busiest GPU's load grows with the run, shorter sequences cut it") {
  MoeRouting uniform{4096, 128, 8, 0, 1};
  const double even = busiest(uniform);
  const double short_runs = busiest(qwen_group(4, 16384, 1));
  const double fitted = busiest(qwen_group(1800, 16384, 1));
  const double long_runs = busiest(qwen_group(16384, 16384, 1));
  CHECK(even < 1.05);
  CHECK(short_runs < 1.1);
  CHECK(fitted > 1.3);
  CHECK(long_runs > fitted);
  // Sequences of 8 tokens cut runs of 1,800 to 8: nearly even again.
  CHECK(busiest(qwen_group(1800, 8, 1)) < 1.15);
}

namespace {

// The pooled variance of every expert's share over `draws` candidate popularities.
double sampled_share_variance(const MoeRouting& r, std::size_t ranks, int draws) {
  RoutingRng rng(7);
  const double p = 1.0 / static_cast<double>(r.experts);
  double sum = 0;
  std::size_t count = 0;
  for (int d = 0; d < draws; ++d) {
    const std::vector<double> m = training_draw(rng, r, ranks);
    CHECK(std::accumulate(m.begin(), m.end(), 0.0) == hopsim::test::approx(1.0));
    for (double share : m) {
      sum += (share - p) * (share - p);
      ++count;
    }
  }
  return sum / static_cast<double>(count);
}

MoeRouting with_bias(MoeRouting r) {
  r.residual_balancer = ResidualBalancer::Bias;
  return r;
}

}  // namespace

TEST_CASE("training routing: a draw's share varies as s^2 p (1 - p) / (n + 1)") {
  // Qwen3's fitted layout (n = 18.2 over 128 experts) and a longer-sequence one (n = 128).
  for (const MoeRouting& aux : {qwen_group(1800, 16384, 1), qwen_group(256, 16384, 1)}) {
    const MoeRouting bias = with_bias(aux);
    CHECK(residual_scale(aux) == 1.0);
    CHECK(residual_scale(bias) == hopsim::test::approx(0.04 / 0.52));
    const double closed_aux = share_variance(aux, 8);
    CHECK(closed_aux ==
          hopsim::test::approx((1.0 / 128) * (127.0 / 128) / (independent_tokens(aux, 8) + 1)));
    CHECK(share_variance(bias, 8) ==
          hopsim::test::approx(closed_aux * kBiasResidualScale * kBiasResidualScale));
    const double sampled_aux = sampled_share_variance(aux, 8, 3000);
    const double sampled_bias = sampled_share_variance(bias, 8, 3000);
    CHECK(std::fabs(sampled_aux / closed_aux - 1) < 0.1);
    CHECK(std::fabs(sampled_bias / share_variance(bias, 8) - 1) < 0.1);
  }
}

TEST_CASE("training routing: the bias balancer's residual shrinks the busiest GPU's excess") {
  // The same draws (same seeds), each share moved toward even by s = 0.04 / 0.52: the excess
  // of the busiest GPU over the mean shrinks by about s (the top-k cap is not linear).
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const double aux = busiest(qwen_group(1800, 16384, seed));
    const double bias = busiest(with_bias(qwen_group(1800, 16384, seed)));
    CHECK(aux > 1.3);
    CHECK(bias < 1.0 + (aux - 1) / 4);
    CHECK(bias > 1.0);
  }
  CHECK(parameter_source(qwen_group(1800, 16384, 1)).find("Qwen3-235B 16K") !=
        std::string_view::npos);
  CHECK(parameter_source(with_bias(qwen_group(1800, 16384, 1))).find("2408.15664") !=
        std::string_view::npos);
  CHECK(parameter_source(qwen_group(900, 16384, 1)).find("given") != std::string_view::npos);
}
