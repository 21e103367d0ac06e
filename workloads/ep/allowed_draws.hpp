// draw_allowed's draws (popularity.hpp), the same expert for the same generator, in O(log
// experts) for a set of allowed experts seen before instead of O(experts) exps and adds.
//
// draw_allowed sums the allowed experts' weights exp(log_weight - top) in expert order (total),
// draws u = unit x total and walks the same order subtracting weights until u < 0. At a high
// skew (Zipf s = 8) nearly every selection after a token's first ends there (64 draws over all
// experts land on chosen ones), so a 16-GPU layer of 32K tokens per GPU made ~3.7 million such
// walks over 256 experts: 8 s, half of it in exp.
//
// Here the caller names the allowed set by a key (the token's chosen experts, and its reached
// nodes once it may reach no more); per key the open experts, their weights and the running sums
// S_j = S_{j-1} + w_j are kept, computed by the same additions in the same order (so total is
// bit-identical). The walk's remainder r_j = u - w_0 - ... - w_j differs from u - S_j by at
// most the rounding of 2 (j + 1) additions of terms <= total: |r_j - (u - S_j)| <= delta =
// 8 (n + 1) eps total (eps = DBL_EPSILON; a factor 2 over the bound, Higham 2002, s. 4.2).
// The first j with S_j > u + delta has r_j < 0 and every earlier r_i >= 0 when also
// S_{j-1} < u - delta, so it is the walk's answer; otherwise (u within delta of a sum, about
// once in 10^12 draws) the walk itself runs. Without a key, or past the cache's size, every
// draw walks as draw_allowed does (its weights read from a per-top table: no exp per draw).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "workloads/ep/popularity.hpp"
#include "workloads/ep/routing_rng.hpp"

namespace hopsim::work {

class AllowedDraws {
 public:
  /// Open experts cached over all keys, at most (~20 bytes each: 5 MB).
  static constexpr std::size_t kMaxCachedExperts = std::size_t{1} << 18;

  explicit AllowedDraws(const Popularity& p) : p_(p), rows_(p.log_weight.size()) {}

  /// draw_allowed(rng, p, allowed): `allowed` must give the same answers whenever `key` is the
  /// same (empty key: nothing cached).
  template <class Allowed>
  int draw(RoutingRng& rng, const std::vector<int>& key, Allowed allowed) {
    if (!key.empty()) {
      if (auto it = cache_.find(key); it != cache_.end()) {
        return pick(rng, it->second);
      }
    }
    Open open = list(allowed);
    if (open.experts.empty()) {
      return -1;
    }
    if (key.empty() || cached_ + open.experts.size() > kMaxCachedExperts) {
      return pick(rng, open);
    }
    cached_ += open.experts.size();
    return pick(rng, cache_.emplace(key, std::move(open)).first->second);
  }

  /// Draws that walked (the cache could not decide), for tests.
  std::uint64_t walks() const { return walks_; }

 private:
  struct Open {
    std::vector<int> experts;
    std::vector<double> weight;
    std::vector<double> sum;  ///< running sums, the last the total
  };

  template <class Allowed>
  Open list(Allowed allowed) {
    Open open;
    std::size_t top = 0;
    for (std::size_t e = 0; e < p_.log_weight.size(); ++e) {
      if (std::isfinite(p_.log_weight[e]) && allowed(static_cast<int>(e))) {
        if (open.experts.empty() || p_.log_weight[e] > p_.log_weight[top]) {
          top = e;
        }
        open.experts.push_back(static_cast<int>(e));
      }
    }
    const std::vector<double>& row = weights_under(top);
    double total = 0;
    for (int e : open.experts) {
      open.weight.push_back(row[static_cast<std::size_t>(e)]);
      total += open.weight.back();
      open.sum.push_back(total);
    }
    return open;
  }

  const std::vector<double>& weights_under(std::size_t top);
  int pick(RoutingRng& rng, const Open& open);

  const Popularity& p_;
  std::vector<std::vector<double>> rows_;  ///< per top expert: exp(log_weight - its), lazily
  std::map<std::vector<int>, Open> cache_;
  std::size_t cached_ = 0;
  std::uint64_t walks_ = 0;
};

}  // namespace hopsim::work
