// How popular each expert is: weights by expert id from the routing's distribution, balancer
// mix and bias, and the weighted draws routing makes from them.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "workloads/ep/routing_rng.hpp"
#include "workloads/ep/routing_spec.hpp"

namespace hopsim::work {

/// The experts' popularity: the cumulative weights by expert id (for draws over all experts),
/// and each weight's natural log (-inf: never chosen; exact where a weight underflows as a
/// double). A guide table speeds up the search of the cdf (Chen and Asau's indexed search): a
/// draw u with edge[b] <= u < edge[b + 1] is in bucket b, whose experts are
/// [first[b], first[b + 1]] (first[b]: the first expert whose cdf exceeds edge[b]), so the
/// search narrows to them and finds the expert a search of the whole cdf finds.
struct Popularity {
  std::vector<double> cdf;
  std::vector<double> log_weight;
  std::vector<double> edge;        ///< buckets + 1, the last +inf; empty: no guide
  std::vector<std::size_t> first;  ///< per edge
  double buckets_per_weight = 0;   ///< buckets / cdf.back(): a draw's bucket, near enough
};

/// Weights by expert id: the distribution's (Zipf over a ranking drawn from `popularity_seed`,
/// a Dirichlet draw from it, the counts, all 1, or training's batch drawn from `seed` for an
/// EP group of `ranks` GPUs), mixed toward even by `uniform_share`, times e^bias, and their
/// logs.
Popularity weights(const MoeRouting& r, std::size_t ranks = 1);

/// One of training routing's candidate popularities for an EP group of `ranks` GPUs, as shares
/// of 1: a Dirichlet(n / E) draw (n = independent_tokens) moved toward even by the balancer's
/// residual scale (training_routing.hpp). weights() keeps, of kTrainingDraws of them, the one
/// that stands for the step's many.
std::vector<double> training_draw(RoutingRng& rng, const MoeRouting& r, std::size_t ranks);

/// The weight by which route_tokens draws each expert when the routing is weighted (Zipf,
/// Dirichlet, counts, training or a bias): the popularity as a share of 1, mixed toward even by
/// `uniform_share`, times e^bias.
std::vector<double> expert_weights(const MoeRouting& routing, std::size_t ranks = 1);

/// The expert whose share of the cdf holds `u` in [0, cdf.back()]: the first whose cumulative
/// weight exceeds u (the last expert for u = cdf.back()), through the guide table.
int expert_at(const Popularity& p, double u);

/// An expert drawn by weight over all experts.
inline int draw_expert(RoutingRng& rng, const Popularity& p) {
  return expert_at(p, unit(rng) * p.cdf.back());
}

/// An expert drawn by weight among those `allowed` takes: exact, over the weights' logs (those
/// too light for the cdf too), or -1 when no allowed expert can ever be chosen.
template <class Allowed>
int draw_allowed(RoutingRng& rng, const Popularity& p, Allowed allowed) {
  std::vector<int> open;  // allowed experts with a weight
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t e = 0; e < p.log_weight.size(); ++e) {
    if (std::isfinite(p.log_weight[e]) && allowed(static_cast<int>(e))) {
      open.push_back(static_cast<int>(e));
      top = std::max(top, p.log_weight[e]);
    }
  }
  if (open.empty()) {
    return -1;
  }
  const auto weight = [&](int e) {
    return std::exp(p.log_weight[static_cast<std::size_t>(e)] - top);
  };
  double total = 0;
  for (int e : open) {
    total += weight(e);
  }
  double u = unit(rng) * total;
  for (int e : open) {
    u -= weight(e);
    if (u < 0) {
      return e;
    }
  }
  return open.back();  // u was within rounding of the total
}

}  // namespace hopsim::work
