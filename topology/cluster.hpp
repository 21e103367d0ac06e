// A cluster of GPU nodes as a graph of directed links, with rule-based routing between GPUs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/resource.hpp"
#include "sim/units.hpp"
#include "topology/failures.hpp"
#include "topology/ids.hpp"
#include "topology/spec.hpp"

namespace hopsim::topo {

enum class LinkKind {
  NvLink,  ///< GPU <-> NVSwitch
  Nic,     ///< NIC <-> leaf switch (InfiniBand)
  Spine,   ///< leaf <-> spine switch (InfiniBand)
};

struct Link {
  std::string name;  ///< stable and readable: n3.g5.nvl.up, n3.g5.nic.down, leaf2.spine0.up
  LinkKind kind = LinkKind::NvLink;
  Bandwidth bandwidth;
  Time latency;
};

/// Routes hold at most this many links (PXN across the spine: nvl.up, nvl.down, nic.up,
/// leaf.spine.up, spine.leaf.down, nic.down).
inline constexpr std::size_t kMaxRouteLinks = 8;

struct Route {
  std::uint32_t size = 0;
  LinkId links[kMaxRouteLinks] = {};
  std::span<const LinkId> span() const { return {links, size}; }
};

class Cluster {
 public:
  explicit Cluster(const Spec& spec);
  ~Cluster();
  Cluster(Cluster&&) noexcept;
  Cluster& operator=(Cluster&&) noexcept;

  const Spec& spec() const { return spec_; }
  int gpu_count() const { return spec_.gpu_count(); }

  /// The perturbation that made `gpu`'s node another model; null on the cluster's own.
  const Perturbation* gpu_type_source(GpuId gpu) const {
    return type_of_.empty() || type_of_[gpu.index()] == 0
               ? nullptr
               : &spec_.perturbations[type_of_[gpu.index()] - 1];
  }
  /// The model of `gpu`: the cluster's, unless a perturbation made its node another.
  const GpuSpec& gpu_type(GpuId gpu) const {
    const Perturbation* source = gpu_type_source(gpu);
    return source == nullptr ? spec_.gpu : *source->gpu;
  }
  /// True when some node's GPUs are another model than the cluster's.
  bool mixed() const { return !type_of_.empty(); }

  /// True when `gpu` is one of this cluster's GPUs.
  bool contains(GpuId gpu) const { return gpu.value() >= 0 && gpu.value() < gpu_count(); }

  NodeId node_of(GpuId gpu) const { return NodeId{gpu.value() / spec_.gpus_per_node}; }

  /// Its index inside its node (its rail on a rail-optimized fabric).
  int local_of(GpuId gpu) const { return gpu.value() % spec_.gpus_per_node; }

  /// The GPU of that index inside that node.
  GpuId gpu_at(NodeId node, int local) const {
    return GpuId{node.value() * spec_.gpus_per_node + local};
  }

  std::size_t link_count() const { return links_.size(); }

  const Link& link(LinkId id) const { return links_[id.index()]; }

  /// Every link, link l at index l.value().
  std::span<const Link> links() const { return links_; }

  /// The links a flow from GPU `src` to GPU `dst` crosses, in order. src != dst. Around failed
  /// links (failures.hpp): a failed NIC's traffic crosses NVLink to its carrier's NIC; a GPU
  /// whose NVLink failed reaches its node's GPUs through the NICs; ECMP hashes onto the spines
  /// both leaves still reach.
  Route route(GpuId src, GpuId dst) const {
    return failures_.any ? detour(src, dst, false) : healthy_route(src, dst);
  }
  /// The route through the NICs alone, as RDMA without NVLink forwarding takes it (DeepEP's
  /// low-latency kernels), even inside a node: src's NIC up, through the spine when the leaves
  /// differ, dst's NIC down. src != dst. Around a failed NIC, as route() goes.
  Route nic_route(GpuId src, GpuId dst) const {
    return failures_.any ? detour(src, dst, true) : healthy_nic_route(src, dst);
  }
  /// The route from src to dst (nic_route's when `nics_only`) as if no link had failed: the
  /// links a flow would cross on the healthy fabric. src != dst.
  Route unfailed_route(GpuId src, GpuId dst, bool nics_only) const {
    return nics_only ? healthy_nic_route(src, dst) : healthy_route(src, dst);
  }
  /// The links a perturbation of NVLink, NIC or spine links changes or fails (both directions);
  /// none for a perturbation of compute or of the GPU model.
  std::vector<LinkId> links_of(const Perturbation& p) const;
  /// What the spec's perturbations fail, and the carriers of failed NICs.
  const Failures& failures() const { return failures_; }
  /// True when `route` from src to dst differs from the healthy cluster's route() (its
  /// nic_route() when `nics_only`): a detour around a failed link.
  bool detoured(std::span<const LinkId> route, GpuId src, GpuId dst, bool nics_only) const;
  /// Latency a flow on `route` pays: its links' latencies plus the software overhead.
  Time latency(std::span<const LinkId> route) const;

  /// Number of vertices (GPUs, NVSwitches, leaves, spines) in the underlying graph.
  std::size_t vertex_count() const;
  /// True when consecutive links of `route` form a path from GPU `src` to GPU `dst`.
  bool is_path(std::span<const LinkId> route, GpuId src, GpuId dst) const;

 private:
  struct Graph;  // Boost.Graph stays out of this header
  Spec spec_;
  std::vector<Link> links_;
  std::unique_ptr<Graph> graph_;
  // Direct tables so that routing never searches the graph.
  std::vector<LinkId> nvl_up_, nvl_down_, nic_up_, nic_down_;
  std::vector<LinkId> leaf_up_, leaf_down_;  // [leaf * spines + spine]
  std::vector<int> leaf_of_nic_;             // [rank]
  // [rank] 0: the cluster's model; else 1 + the index in spec_.perturbations of the GpuType
  // perturbation that gave its node another; empty: every GPU the cluster's
  std::vector<std::size_t> type_of_;
  Failures failures_;
  int leaf_count_ = 0;
  int spine_count_ = 0;  // 0 when there is a single leaf

  void plan_leaves();
  void build_node_links();
  void build_fabric();
  void apply_perturbations();
  LinkId add_link(std::string name, LinkKind kind, LinkParams params, std::size_t from,
                  std::size_t to);
  int spine_for(GpuId src, GpuId dst) const;
  int working_spine_for(GpuId src, GpuId dst, int from_leaf, int to_leaf) const;
  Route healthy_route(GpuId src, GpuId dst) const;
  Route healthy_nic_route(GpuId src, GpuId dst) const;
  Route detour(GpuId src, GpuId dst, bool nics_only) const;
};

}  // namespace hopsim::topo
