// The rank mesh: parallelism degrees and their order map every GPU to coordinates and every
// parallel group (TP, CP, PP, DP, EP) to its members.
//
// Layout: the mesh spans ranks [0, tp*cp*pp*dp). `order` lists tp, cp, pp and dp innermost
// first (Llama 3's [TP, CP, PP, DP] by default): the innermost dimension varies fastest, so with
// tp innermost and tp <= GPUs per node, a TP group is tp consecutive GPUs of one node.
//   rank = sum_d coordinate_d * stride_d,  stride of order[0] = 1,
//   stride of order[i] = stride of order[i-1] * degree of order[i-1].
// A group along d is the ranks that share every coordinate but d, ordered by their d.
//
// Expert parallelism takes its ranks from the others, as Megatron-Core does with expert TP 1:
// inside one pipeline stage, ranks ordered by their index in the mesh without pp are cut into
// consecutive blocks of ep; each block is an EP group. So ep must divide tp * cp * dp.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"
#include "topology/ids.hpp"

namespace hopsim::work {

enum class Dim : std::uint8_t { Tp, Cp, Pp, Dp, Ep };

/// "tp", "cp", "pp", "dp", "ep".
std::string_view dim_name(Dim d);

struct ParallelSpec {
  std::int64_t tp = 1;
  std::int64_t cp = 1;
  std::int64_t pp = 1;
  std::int64_t dp = 1;
  std::int64_t ep = 1;
  /// tp, cp, pp and dp, innermost first: a permutation of the four.
  std::array<Dim, 4> order{Dim::Tp, Dim::Cp, Dim::Pp, Dim::Dp};
  /// Allow TP groups that span nodes (by default each must fit in one node).
  bool tp_across_nodes = false;

  std::int64_t degree(Dim d) const;
};

class Mesh {
 public:
  /// Problems of `p` on a cluster of `gpus` GPUs with `gpus_per_node` each, as pointers under
  /// /parallel: degrees >= 1 whose product divides the cluster, ep dividing tp * cp * dp, TP
  /// groups inside a node unless tp_across_nodes.
  static Problems check(const ParallelSpec& p, std::int64_t gpus, int gpus_per_node);

  /// `p` must have passed check().
  explicit Mesh(const ParallelSpec& p);

  /// GPUs the mesh spans: tp * cp * pp * dp, ranks [0, size()).
  int size() const { return size_; }
  const ParallelSpec& spec() const { return spec_; }
  /// The coordinate of `rank` along `dim` (for Ep: its position in its EP group).
  std::int64_t coordinate(int rank, Dim dim) const;
  /// The GPUs of `rank`'s group along `dim`, ordered by their coordinate on it. The mesh
  /// places rank r on the cluster's GPU r.
  std::vector<topo::GpuId> group(Dim dim, int rank) const;
  /// The rank with these coordinates (each below its degree).
  int rank_of(std::int64_t tp, std::int64_t cp, std::int64_t pp, std::int64_t dp) const;
  /// Every group along `dim`, ordered by their first member.
  std::vector<std::vector<topo::GpuId>> groups(Dim dim) const;

 private:
  ParallelSpec spec_;
  int size_ = 1;
  std::array<std::int64_t, 4> stride_{};  // by Dim (Tp, Cp, Pp, Dp)
  // Index of `rank` in the mesh without pp (the order that EP blocks are cut from).
  std::int64_t index_without_pp(int rank) const;
};

}  // namespace hopsim::work
