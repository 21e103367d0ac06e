// Rank mesh coordinates and groups, and the checks of its degrees against a cluster.
#include "workloads/mesh/mesh.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "sim/assert.hpp"

namespace hopsim::work {
namespace {

constexpr std::array<Dim, 4> kMeshDims{Dim::Tp, Dim::Cp, Dim::Pp, Dim::Dp};
// The largest degree the product's check takes (each is at most this, so the product of four
// is below 2^96, within a double's range).
constexpr std::int64_t kMaxDegree = std::int64_t{1} << 24;

std::size_t index(Dim d) { return static_cast<std::size_t>(d); }

// The first TP group that leaves its node, if any.
void check_tp_in_node(const ParallelSpec& p, int gpus_per_node, Problems& out) {
  const Mesh mesh(p);
  for (int r = 0; r < mesh.size(); ++r) {
    if (mesh.coordinate(r, Dim::Tp) != 0) {
      continue;
    }
    const std::vector<topo::GpuId> g = mesh.group(Dim::Tp, r);
    const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
    if (lo->value() / gpus_per_node != hi->value() / gpus_per_node) {
      out.push_back({"/parallel/tp",
                     fmt::format("the TP group of GPU {} spans GPUs {} to {}, across nodes of {} "
                                 "GPUs; tensor parallelism must stay inside a node (set "
                                 "parallel.tp_across_nodes to allow it)",
                                 r, *lo, *hi, gpus_per_node)});
      return;
    }
  }
}

// What makes a job of `job` GPUs (not dividing the cluster's) fit: more nodes, or nodes of
// fewer GPUs (a job on that many GPUs of each node; a TP group must still fit one), named by
// the cluster keys the user sets.
std::string fit_advice(std::int64_t job, std::int64_t gpus, int gpus_per_node,
                       const ParallelSpec& p) {
  const std::int64_t per_node = gpus_per_node;
  std::string advice = fmt::format("set cluster.nodes to a multiple of {}",
                                   job / std::gcd(job, per_node));
  for (std::int64_t d = per_node - 1; d > std::gcd(job, per_node); --d) {
    if (job % d == 0 && (p.tp_across_nodes || d % p.tp == 0)) {
      const std::int64_t nodes = job / d;
      advice += fmt::format(", or cluster.gpus_per_node to {}", d);
      if ((gpus / per_node) % nodes != 0) {
        advice += fmt::format(" with cluster.nodes a multiple of {}", nodes);
      }
      break;
    }
  }
  return advice;
}

}  // namespace

std::string_view dim_name(Dim d) {
  switch (d) {
    case Dim::Tp:
      return "tp";
    case Dim::Cp:
      return "cp";
    case Dim::Pp:
      return "pp";
    case Dim::Dp:
      return "dp";
    case Dim::Ep:
      return "ep";
  }
  return "?";
}

std::int64_t ParallelSpec::degree(Dim d) const {
  switch (d) {
    case Dim::Tp:
      return tp;
    case Dim::Cp:
      return cp;
    case Dim::Pp:
      return pp;
    case Dim::Dp:
      return dp;
    case Dim::Ep:
      return ep;
  }
  return 1;
}

Problems Mesh::check(const ParallelSpec& p, std::int64_t gpus, int gpus_per_node) {
  Problems out;
  for (Dim d : {Dim::Tp, Dim::Cp, Dim::Pp, Dim::Dp, Dim::Ep}) {
    // A degree above the cluster's GPUs up to kMaxDegree is left to the product's check below,
    // which says what would make the job fit.
    if (p.degree(d) < 1 || p.degree(d) > std::max(gpus, kMaxDegree)) {
      out.push_back({fmt::format("/parallel/{}", dim_name(d)),
                     fmt::format("must be in [1, {}] (the cluster's GPUs), got {}", gpus,
                                 p.degree(d))});
    }
  }
  std::array<Dim, 4> sorted = p.order;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != kMeshDims) {
    out.push_back({"/parallel/order", "must list tp, cp, pp and dp once each"});
  }
  if (!out.empty()) {
    return out;
  }
  // Each degree is at most kMaxDegree: the product below is a finite double.
  const double product = static_cast<double>(p.tp) * static_cast<double>(p.cp) *
                         static_cast<double>(p.pp) * static_cast<double>(p.dp);
  // Exact in a double up to 2^53; a larger job cannot fit any cluster (0 says so).
  const std::int64_t job = product <= 0x1p53 ? static_cast<std::int64_t>(product) : 0;
  if (job == 0 || job > gpus || gpus % job != 0) {
    out.push_back({"/parallel",
                   fmt::format("tp x cp x pp x dp = {} x {} x {} x {} = {:.0f} does not divide "
                               "the cluster's {} GPUs ({} nodes of {}); {}",
                               p.tp, p.cp, p.pp, p.dp, product, gpus, gpus / gpus_per_node,
                               gpus_per_node,
                               job == 0 ? std::string("lower the degrees")
                                        : fit_advice(job, gpus, gpus_per_node, p))});
    return out;
  }
  const std::int64_t expert_pool = p.tp * p.cp * p.dp;
  if (expert_pool % p.ep != 0) {
    out.push_back({"/parallel/ep",
                   fmt::format("{} does not divide tp x cp x dp = {}: expert parallelism takes "
                               "its ranks from the tensor-, context- and data-parallel ones",
                               p.ep, expert_pool)});
  }
  if (!p.tp_across_nodes) {
    check_tp_in_node(p, gpus_per_node, out);
  }
  return out;
}

Mesh::Mesh(const ParallelSpec& p) : spec_(p) {
  std::int64_t stride = 1;
  for (Dim d : spec_.order) {
    stride_[index(d)] = stride;
    stride *= spec_.degree(d);
  }
  HOPSIM_ASSERT(stride >= 1 && stride <= (std::int64_t{1} << 30), "mesh of {} ranks", stride);
  size_ = static_cast<int>(stride);
}

std::int64_t Mesh::index_without_pp(int rank) const {
  std::int64_t q = 0;
  std::int64_t stride = 1;
  for (Dim d : spec_.order) {
    if (d != Dim::Pp) {
      q += coordinate(rank, d) * stride;
      stride *= spec_.degree(d);
    }
  }
  return q;
}

std::int64_t Mesh::coordinate(int rank, Dim dim) const {
  if (dim == Dim::Ep) {
    return index_without_pp(rank) % spec_.ep;
  }
  return (rank / stride_[index(dim)]) % spec_.degree(dim);
}

int Mesh::rank_of(std::int64_t tp, std::int64_t cp, std::int64_t pp, std::int64_t dp) const {
  HOPSIM_ASSERT(tp < spec_.tp && cp < spec_.cp && pp < spec_.pp && dp < spec_.dp,
                "coordinates ({}, {}, {}, {}) outside the mesh", tp, cp, pp, dp);
  return static_cast<int>(tp * stride_[index(Dim::Tp)] + cp * stride_[index(Dim::Cp)] +
                          pp * stride_[index(Dim::Pp)] + dp * stride_[index(Dim::Dp)]);
}

std::vector<topo::GpuId> Mesh::group(Dim dim, int rank) const {
  HOPSIM_ASSERT(rank >= 0 && rank < size_, "rank {} outside a mesh of {}", rank, size_);
  std::vector<topo::GpuId> members;
  if (dim == Dim::Ep) {
    // Decode each index of the block back into coordinates; rank order is EP order, as the
    // index without pp grows with the rank inside a stage.
    const std::int64_t first = index_without_pp(rank) / spec_.ep * spec_.ep;
    const std::int64_t stage_base = coordinate(rank, Dim::Pp) * stride_[index(Dim::Pp)];
    for (std::int64_t q = first; q < first + spec_.ep; ++q) {
      std::int64_t left = q;
      std::int64_t r = stage_base;
      for (Dim d : spec_.order) {
        if (d != Dim::Pp) {
          r += (left % spec_.degree(d)) * stride_[index(d)];
          left /= spec_.degree(d);
        }
      }
      members.emplace_back(static_cast<int>(r));
    }
    return members;
  }
  const std::int64_t stride = stride_[index(dim)];
  const std::int64_t base = rank - coordinate(rank, dim) * stride;
  for (std::int64_t k = 0; k < spec_.degree(dim); ++k) {
    members.emplace_back(static_cast<int>(base + k * stride));
  }
  return members;
}

std::vector<std::vector<topo::GpuId>> Mesh::groups(Dim dim) const {
  std::vector<std::vector<topo::GpuId>> out;
  for (int r = 0; r < size_; ++r) {
    std::vector<topo::GpuId> g = group(dim, r);
    if (g.front() == topo::GpuId{r}) {
      out.push_back(std::move(g));
    }
  }
  return out;
}

}  // namespace hopsim::work
