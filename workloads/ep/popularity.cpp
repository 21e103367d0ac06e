// Expert popularity and weighted draws (popularity.hpp).
#include "workloads/ep/popularity.hpp"

#include <algorithm>
#include <functional>
#include <numbers>
#include <numeric>
#include <span>

#include "sim/assert.hpp"
#include "workloads/ep/modulo_draws.hpp"
#include "workloads/ep/training_routing.hpp"

namespace hopsim::work {
namespace {

// A standard normal from two uniforms (Box-Muller), the same on every platform.
double normal(RoutingRng& rng) {
  const double u1 = 1.0 - unit(rng);  // (0, 1]
  const double u2 = unit(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// The log of a Gamma(alpha, 1) draw: Marsaglia and Tsang's method, with alpha < 1 boosted by
// U^(1/alpha) (in logs: for alpha near 1e-3 that factor is below the smallest double).
double log_gamma_draw(RoutingRng& rng, double alpha) {
  if (alpha < 1) {
    const double u = 1.0 - unit(rng);
    return log_gamma_draw(rng, alpha + 1) + std::log(u) / alpha;
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0;
    double v = 0;
    do {
      x = normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - unit(rng);
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) {
      return std::log(d * v);
    }
  }
}

// Popularity's guide table: kBucketsPerExpert buckets per expert, of equal weight. None where
// the total weight is not a finite number (no bucket edges then).
void guide(Popularity& p) {
  constexpr std::size_t kBucketsPerExpert = 2;
  const double total = p.cdf.back();
  if (!std::isfinite(total)) {
    return;
  }
  const std::size_t buckets = kBucketsPerExpert * p.cdf.size();
  for (std::size_t b = 0; b < buckets; ++b) {
    p.edge.push_back(total * static_cast<double>(b) / static_cast<double>(buckets));
    p.first.push_back(static_cast<std::size_t>(
        std::upper_bound(p.cdf.begin(), p.cdf.end(), p.edge.back()) - p.cdf.begin()));
  }
  p.edge.push_back(std::numeric_limits<double>::infinity());
  p.first.push_back(p.cdf.size());
  p.buckets_per_weight = static_cast<double>(buckets) / total;
}

// A symmetric Dirichlet draw of concentration `alpha` per expert, drawn as logs and scaled by
// the largest, so that the heaviest weighs 1 (a sum of underflowed draws cannot be 0) and the
// lightest keep their order in the logs.
void dirichlet(RoutingRng& rng, double alpha, std::vector<double>& log_raw,
               std::vector<double>& weight) {
  for (double& l : log_raw) {
    l = log_gamma_draw(rng, alpha);
  }
  const double top = *std::max_element(log_raw.begin(), log_raw.end());
  for (std::size_t e = 0; e < log_raw.size(); ++e) {
    log_raw[e] -= top;
    weight[e] = std::exp(log_raw[e]);
  }
}

// Training routing's batches draw from the tokens' seed (each batch its own popularity), apart
// from the tokens' own stream.
constexpr std::uint64_t kTrainingSeedSalt = 0x5851F42D4C957F2DULL;

// Each expert's chance to be among a token's k picks, near enough: min(1, c x weight), with c
// such that they sum to k (sampling without replacement caps a heavy expert at every token).
// O(E log E).
std::vector<double> inclusion(const std::vector<double>& weight, double k) {
  std::vector<double> sorted = weight;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  double rest = std::accumulate(sorted.begin(), sorted.end(), 0.0);
  std::size_t capped = 0;
  double c = 0;
  for (;;) {
    c = (k - static_cast<double>(capped)) / rest;
    if (capped + 1 >= sorted.size() || c * sorted[capped] <= 1) {
      break;
    }
    rest -= sorted[capped++];
  }
  std::vector<double> out;
  out.reserve(weight.size());
  for (double w : weight) {
    out.push_back(std::min(1.0, c * w));
  }
  return out;
}

// max / mean of the experts' inclusion chances summed over `ranks` blocks of consecutive
// experts (the even placement's ranks), or over single experts when they do not split evenly.
double busiest_block(const std::vector<double>& weight, std::size_t ranks, double top_k) {
  const std::vector<double> chance = inclusion(weight, top_k);
  const std::size_t blocks = chance.size() % ranks == 0 ? ranks : chance.size();
  const std::size_t per = chance.size() / blocks;
  double top = 0;
  double total = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    const double sum = std::accumulate(chance.begin() + static_cast<std::ptrdiff_t>(b * per),
                                       chance.begin() + static_cast<std::ptrdiff_t>((b + 1) * per),
                                       0.0);
    top = std::max(top, sum);
    total += sum;
  }
  return top * static_cast<double>(blocks) / total;
}

// One of training routing's candidates (training_routing.hpp): the Dirichlet draw, then for a
// residual scale s < 1 every share moved to p + s (m - p), p = 1 / E (weights and their logs;
// s = 1 keeps the draw as drawn).
void training_candidate(RoutingRng& rng, double alpha, double scale, std::vector<double>& log_raw,
                        std::vector<double>& weight) {
  dirichlet(rng, alpha, log_raw, weight);
  if (scale >= 1) {
    return;
  }
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  const double even = 1.0 / static_cast<double>(weight.size());
  for (std::size_t e = 0; e < weight.size(); ++e) {
    weight[e] = even + scale * (weight[e] / total - even);
    log_raw[e] = std::log(weight[e]);
  }
}

// Training routing's batch (training_routing.hpp): kTrainingDraws popularities drawn from the
// tokens' seed, each Dirichlet(n / E) with n its independent choices, and of them the one whose
// busiest rank takes the share of the top-k picks nearest the draws' mean, so that the few
// batches a run simulates stand for the step's many. O(draws x E log E).
void training_batch(const MoeRouting& r, std::size_t ranks, std::vector<double>& log_raw,
                    std::vector<double>& weight) {
  RoutingRng rng(r.seed ^ kTrainingSeedSalt);
  const double alpha = independent_tokens(r, ranks) / static_cast<double>(weight.size());
  std::vector<std::vector<double>> logs(kTrainingDraws, log_raw);
  std::vector<std::vector<double>> weights(kTrainingDraws, weight);
  std::vector<double> busiest(kTrainingDraws);
  for (std::size_t k = 0; k < kTrainingDraws; ++k) {
    training_candidate(rng, alpha, residual_scale(r), logs[k], weights[k]);
    busiest[k] = busiest_block(weights[k], ranks, static_cast<double>(r.top_k));
  }
  const double mean = std::accumulate(busiest.begin(), busiest.end(), 0.0) /
                      static_cast<double>(kTrainingDraws);
  std::size_t pick = 0;
  for (std::size_t k = 1; k < kTrainingDraws; ++k) {
    if (std::fabs(busiest[k] - mean) < std::fabs(busiest[pick] - mean)) {
      pick = k;
    }
  }
  log_raw = std::move(logs[pick]);
  weight = std::move(weights[pick]);
}

}  // namespace

std::vector<double> training_draw(RoutingRng& rng, const MoeRouting& r, std::size_t ranks) {
  const auto experts = static_cast<std::size_t>(r.experts);
  std::vector<double> weight(experts, 1.0);
  std::vector<double> log_raw(experts, 0.0);
  training_candidate(rng, independent_tokens(r, ranks) / static_cast<double>(experts),
                     residual_scale(r), log_raw, weight);
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  for (double& w : weight) {
    w /= total;
  }
  return weight;
}

std::string_view distribution_name(RoutingDistribution d) {
  switch (d) {
    case RoutingDistribution::Uniform:
      return "uniform";
    case RoutingDistribution::Zipf:
      return "zipf";
    case RoutingDistribution::Dirichlet:
      return "dirichlet";
    case RoutingDistribution::Counts:
      return "counts";
    case RoutingDistribution::Training:
      return "training";
  }
  return "?";
}

Popularity weights(const MoeRouting& r, std::size_t ranks) {
  const auto experts = static_cast<std::size_t>(r.experts);
  Popularity p;
  std::vector<double> weight(experts, 1.0);
  std::vector<double> log_raw(experts, 0.0);
  RoutingRng rng(r.popularity_seed);
  switch (r.distribution) {
    case RoutingDistribution::Uniform:
      break;
    case RoutingDistribution::Zipf: {
      std::vector<int> ranking(experts);
      std::iota(ranking.begin(), ranking.end(), 0);
      pick(ModuloDraws(experts), rng, std::span<int>(ranking), experts);
      for (std::size_t k = 0; k < experts; ++k) {
        const auto e = static_cast<std::size_t>(ranking[k]);
        weight[e] = std::pow(static_cast<double>(k + 1), -r.zipf_s);
        log_raw[e] = -r.zipf_s * std::log(static_cast<double>(k + 1));
      }
      break;
    }
    case RoutingDistribution::Dirichlet:
      dirichlet(rng, r.dirichlet_alpha, log_raw, weight);
      break;
    case RoutingDistribution::Training:
      training_batch(r, ranks, log_raw, weight);
      break;
    case RoutingDistribution::Counts:
      HOPSIM_ASSERT(r.counts.size() == experts, "{} counts for {} experts", r.counts.size(),
                    experts);
      weight = r.counts;
      for (std::size_t e = 0; e < experts; ++e) {
        log_raw[e] = std::log(weight[e]);  // -inf for a count of 0
      }
      break;
  }
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  HOPSIM_ASSERT(total > 0, "expert weights sum to {}", total);
  const double even = r.uniform_share / static_cast<double>(experts);
  p.log_weight.resize(experts);
  for (std::size_t e = 0; e < experts; ++e) {
    weight[e] = (1 - r.uniform_share) * weight[e] / total + even;
    p.log_weight[e] = r.uniform_share > 0 ? std::log(weight[e])
                                          : log_raw[e] - std::log(total);
  }
  for (std::size_t e = 0; e < r.bias.size() && e < experts; ++e) {
    weight[e] *= std::exp(r.bias[e]);
    p.log_weight[e] += r.bias[e];
  }
  p.cdf.resize(experts);
  std::partial_sum(weight.begin(), weight.end(), p.cdf.begin());
  guide(p);
  return p;
}

int expert_at(const Popularity& p, double u) {
  auto from = p.cdf.begin();
  auto to = p.cdf.end();
  if (!p.first.empty()) {  // u's bucket by its weight, then by the edges (rounding may be off)
    const std::size_t last = p.first.size() - 2;
    auto b = std::min(static_cast<std::size_t>(u * p.buckets_per_weight), last);
    while (b > 0 && u < p.edge[b]) {
      --b;
    }
    while (u >= p.edge[b + 1]) {
      ++b;
    }
    from = p.cdf.begin() + static_cast<std::ptrdiff_t>(p.first[b]);
    to = p.cdf.begin() + static_cast<std::ptrdiff_t>(p.first[b + 1]);
  }
  const auto it = std::upper_bound(from, to, u);
  return static_cast<int>(std::min<std::ptrdiff_t>(it - p.cdf.begin(),
                                                   static_cast<std::ptrdiff_t>(p.cdf.size()) - 1));
}

std::vector<double> expert_weights(const MoeRouting& r, std::size_t ranks) {
  const Popularity p = weights(r, ranks);
  std::vector<double> out;
  out.reserve(p.log_weight.size());
  for (double l : p.log_weight) {
    out.push_back(std::exp(l));
  }
  return out;
}

}  // namespace hopsim::work
