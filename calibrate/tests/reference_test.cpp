// The FP64 references: softmax rows, GQA head mapping, and the backward pass against
// finite differences of L = Σ dO ∘ O.
#include "calibrate/core/reference.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include <doctest/doctest.h>

#include "tests/approx.hpp"

namespace hopsim::calib {
namespace {

std::vector<double> random_vector(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) {
    x = dist(rng);
  }
  return v;
}

double loss(const AttnShape& s, const std::vector<double>& q, const std::vector<double>& k,
            const std::vector<double>& v, const std::vector<double>& d_o) {
  const AttnForward f = attn_forward_reference(s, q, k, v);
  double l = 0.0;
  for (std::size_t i = 0; i < d_o.size(); ++i) {
    l += d_o[i] * f.o[i];
  }
  return l;
}

/// Inputs of one attention problem; `numeric_grad` perturbs one of q, k, v in place.
struct Problem {
  AttnShape s;
  std::vector<double> q, k, v, d_o;
};

/// Central difference of the loss against element i of `x` (one of p.q, p.k, p.v).
double numeric_grad(Problem& p, std::vector<double>& x, std::size_t i) {
  const double h = 1e-5;
  const double keep = x[i];
  x[i] = keep + h;
  const double up = loss(p.s, p.q, p.k, p.v, p.d_o);
  x[i] = keep - h;
  const double down = loss(p.s, p.q, p.k, p.v, p.d_o);
  x[i] = keep;
  return (up - down) / (2 * h);
}

}  // namespace

TEST_CASE("attention backward matches finite differences, every mask, with GQA") {
  std::mt19937 rng(7);
  for (Mask mask : {Mask::None, Mask::CausalTopLeft, Mask::CausalBottomRight}) {
    const AttnShape s{1, 4, 2, 3, 5, 4, 3, mask, 0.5};
    Problem p{s, random_vector(static_cast<std::size_t>(s.h_q * s.s_q * s.d_qk), rng),
              random_vector(static_cast<std::size_t>(s.h_k * s.s_kv * s.d_qk), rng),
              random_vector(static_cast<std::size_t>(s.h_k * s.s_kv * s.d_v), rng),
              random_vector(static_cast<std::size_t>(s.h_q * s.s_q * s.d_v), rng)};
    const AttnGrads g = attn_backward_reference(s, p.q, p.k, p.v, p.d_o);
    // A central difference errs in absolute terms (about h^2 and rounding / h), so gradients
    // below 1 (masked ones are 0) are compared to 1e-6 absolute, larger ones to 1e-6 relative.
    const auto matches = [](double analytic, double numeric) {
      return std::abs(analytic - numeric) <= 1e-6 * std::max(1.0, std::abs(numeric));
    };
    for (std::size_t i = 0; i < p.q.size(); ++i) {
      CHECK(matches(g.dq[i], numeric_grad(p, p.q, i)));
    }
    for (std::size_t i = 0; i < p.k.size(); ++i) {
      CHECK(matches(g.dk[i], numeric_grad(p, p.k, i)));
    }
    for (std::size_t i = 0; i < p.v.size(); ++i) {
      CHECK(matches(g.dv[i], numeric_grad(p, p.v, i)));
    }
  }
}

TEST_CASE("attention forward: one visible key copies V, stats are log-sum-exp") {
  // Causal top-left, first query row sees only key 0: O row 0 = V row 0, stats = scaled score.
  const AttnShape s{1, 1, 1, 2, 2, 1, 2, Mask::CausalTopLeft, 1.0};
  const std::vector<double> q{2.0, 1.0};
  const std::vector<double> k{3.0, -1.0};
  const std::vector<double> v{1.0, 2.0, 3.0, 4.0};
  const AttnForward f = attn_forward_reference(s, q, k, v);
  CHECK(f.o[0] == 1.0);
  CHECK(f.o[1] == 2.0);
  CHECK(f.stats[0] == hopsim::test::approx(6.0));
  CHECK(f.stats[1] == hopsim::test::approx(std::log(std::exp(3.0) + std::exp(-1.0))));
}

TEST_CASE("TN GEMM reference and error statistics") {
  // A [2, 3], B [2, 3] (N = 2 rows of K = 3): C = A · Bᵀ.
  const auto c = gemm_tn_reference(2, 2, 3, {1, 2, 3, 4, 5, 6}, {1, 0, 0, 0, 1, 1});
  CHECK(c == std::vector<double>{1, 5, 4, 11});
  const ErrorStats e = compare({1.0, 2.1, NAN}, {1.0, 2.0, 3.0});
  CHECK(e.max_abs == hopsim::test::approx(0.1));
  CHECK(e.max_want == 3.0);
  CHECK_FALSE(e.finite);
  CHECK_THROWS_AS(compare({1.0}, {1.0, 2.0}), CalibError);
}

}  // namespace hopsim::calib
