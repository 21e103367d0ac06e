// Straightforward FP64 loops; used only on tiny shapes.
#include "calibrate/core/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace hopsim::calib {
namespace {

using Idx = std::size_t;

/// Row-major index into a [*, d1, d2, d3] tensor.
struct Shape4 {
  std::int64_t d1, d2, d3;

  Idx operator()(std::int64_t i0, std::int64_t i1, std::int64_t i2, std::int64_t i3) const {
    return static_cast<Idx>(((i0 * d1 + i1) * d2 + i2) * d3 + i3);
  }
};

/// Index maps of Q, K, V and O (dO shares O's).
struct Layouts {
  Shape4 q, k, v, o;

  explicit Layouts(const AttnShape& s)
      : q{s.h_q, s.s_q, s.d_qk},
        k{s.h_k, s.s_kv, s.d_qk},
        v{s.h_k, s.s_kv, s.d_v},
        o{s.h_q, s.s_q, s.d_v} {}
};

/// Softmax probabilities P[i][j] of one (batch, query head), 0 where masked.
std::vector<double> probabilities(const AttnShape& s, const std::vector<double>& q,
                                  const std::vector<double>& k, std::int64_t b, std::int64_t h,
                                  std::vector<double>* stats_out) {
  const Layouts at(s);
  const std::int64_t hk = h / (s.h_q / s.h_k);
  std::vector<double> p(static_cast<Idx>(s.s_q * s.s_kv), 0.0);
  for (std::int64_t i = 0; i < s.s_q; ++i) {
    double row_max = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < s.s_kv; ++j) {
      if (!attends(s.mask, s.s_q, s.s_kv, i, j)) {
        continue;
      }
      double dot = 0.0;
      for (std::int64_t d = 0; d < s.d_qk; ++d) {
        dot += q[at.q(b, h, i, d)] * k[at.k(b, hk, j, d)];
      }
      p[static_cast<Idx>(i * s.s_kv + j)] = s.scale * dot;
      row_max = std::max(row_max, s.scale * dot);
    }
    double sum = 0.0;
    for (std::int64_t j = 0; j < s.s_kv; ++j) {
      double& x = p[static_cast<Idx>(i * s.s_kv + j)];
      x = attends(s.mask, s.s_q, s.s_kv, i, j) ? std::exp(x - row_max) : 0.0;
      sum += x;
    }
    for (std::int64_t j = 0; j < s.s_kv && sum > 0.0; ++j) {
      p[static_cast<Idx>(i * s.s_kv + j)] /= sum;
    }
    if (stats_out != nullptr) {
      stats_out->push_back(sum > 0.0 ? row_max + std::log(sum)
                                     : -std::numeric_limits<double>::infinity());
    }
  }
  return p;
}

}  // namespace

bool attends(Mask mask, std::int64_t s_q, std::int64_t s_kv, std::int64_t i, std::int64_t j) {
  switch (mask) {
    case Mask::None:
      return true;
    case Mask::CausalTopLeft:
      return j <= i;
    case Mask::CausalBottomRight:
      return j <= i + (s_kv - s_q);
  }
  return false;
}

AttnForward attn_forward_reference(const AttnShape& s, const std::vector<double>& q,
                                   const std::vector<double>& k, const std::vector<double>& v) {
  const Layouts at(s);
  AttnForward out;
  out.o.assign(static_cast<Idx>(s.b * s.h_q * s.s_q * s.d_v), 0.0);
  for (std::int64_t b = 0; b < s.b; ++b) {
    for (std::int64_t h = 0; h < s.h_q; ++h) {
      const std::int64_t hk = h / (s.h_q / s.h_k);
      const std::vector<double> p = probabilities(s, q, k, b, h, &out.stats);
      for (std::int64_t i = 0; i < s.s_q; ++i) {
        for (std::int64_t j = 0; j < s.s_kv; ++j) {
          const double pij = p[static_cast<Idx>(i * s.s_kv + j)];
          for (std::int64_t d = 0; pij != 0.0 && d < s.d_v; ++d) {
            out.o[at.o(b, h, i, d)] += pij * v[at.v(b, hk, j, d)];
          }
        }
      }
    }
  }
  return out;
}

AttnGrads attn_backward_reference(const AttnShape& s, const std::vector<double>& q,
                                  const std::vector<double>& k, const std::vector<double>& v,
                                  const std::vector<double>& d_o) {
  const Layouts at(s);
  const AttnForward fwd = attn_forward_reference(s, q, k, v);
  AttnGrads g;
  g.dq.assign(q.size(), 0.0);
  g.dk.assign(k.size(), 0.0);
  g.dv.assign(v.size(), 0.0);
  for (std::int64_t b = 0; b < s.b; ++b) {
    for (std::int64_t h = 0; h < s.h_q; ++h) {
      const std::int64_t hk = h / (s.h_q / s.h_k);
      const std::vector<double> p = probabilities(s, q, k, b, h, nullptr);
      for (std::int64_t i = 0; i < s.s_q; ++i) {
        double delta = 0.0;  // rowsum(dO ∘ O)
        for (std::int64_t d = 0; d < s.d_v; ++d) {
          delta += d_o[at.o(b, h, i, d)] * fwd.o[at.o(b, h, i, d)];
        }
        for (std::int64_t j = 0; j < s.s_kv; ++j) {
          const double pij = p[static_cast<Idx>(i * s.s_kv + j)];
          if (pij == 0.0) {
            continue;
          }
          double dp = 0.0;
          for (std::int64_t d = 0; d < s.d_v; ++d) {
            const double go = d_o[at.o(b, h, i, d)];
            dp += go * v[at.v(b, hk, j, d)];
            g.dv[at.v(b, hk, j, d)] += pij * go;
          }
          const double ds = pij * (dp - delta) * s.scale;
          for (std::int64_t d = 0; d < s.d_qk; ++d) {
            g.dq[at.q(b, h, i, d)] += ds * k[at.k(b, hk, j, d)];
            g.dk[at.k(b, hk, j, d)] += ds * q[at.q(b, h, i, d)];
          }
        }
      }
    }
  }
  return g;
}

std::vector<double> gemm_tn_reference(std::int64_t m, std::int64_t n, std::int64_t k,
                                      const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> c(static_cast<Idx>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (std::int64_t x = 0; x < k; ++x) {
        acc += a[static_cast<Idx>(i * k + x)] * b[static_cast<Idx>(j * k + x)];
      }
      c[static_cast<Idx>(i * n + j)] = acc;
    }
  }
  return c;
}

ErrorStats compare(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) {
    throw CalibError(fmt::format("compare: {} values vs {} expected", got.size(), want.size()));
  }
  ErrorStats e;
  for (std::size_t i = 0; i < got.size(); ++i) {
    e.max_want = std::max(e.max_want, std::abs(want[i]));
    if (!std::isfinite(got[i])) {
      e.finite = false;
      continue;
    }
    e.max_abs = std::max(e.max_abs, std::abs(got[i] - want[i]));
  }
  e.rel = e.max_abs / std::max(e.max_want, 1e-30);
  return e;
}

std::vector<double> softmax_row(const std::vector<double>& x, std::size_t r, std::size_t w) {
  const auto row = x.begin() + static_cast<std::ptrdiff_t>(r * w);
  const double m = *std::max_element(row, row + static_cast<std::ptrdiff_t>(w));
  double sum = 0;
  for (std::size_t i = 0; i < w; ++i) {
    sum += std::exp(x[r * w + i] - m);
  }
  std::vector<double> p;
  for (std::size_t i = 0; i < w; ++i) {
    p.push_back(std::exp(x[r * w + i] - m) / sum);
  }
  return p;
}

bool judge(const std::string& what, const std::vector<double>& got, const std::vector<double>& want,
           double tolerance, std::string& detail) {
  const ErrorStats e = compare(got, want);
  const bool ok = e.finite && e.rel <= tolerance;
  detail +=
      fmt::format("{}{}: rel {:.2e} (max err {:.3g}, max {:.3g}){}", detail.empty() ? "" : "; ",
                  what, e.rel, e.max_abs, e.max_want, e.finite ? "" : " NON-FINITE");
  return ok;
}

}  // namespace hopsim::calib
