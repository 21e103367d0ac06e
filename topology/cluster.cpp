// Builds the cluster's link graph (GPUs, NVSwitches, leaves, spines) and routes GPU pairs in O(1).
#include "topology/cluster.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include <boost/graph/adjacency_list.hpp>
#include <boost/range/iterator_range.hpp>
#include <fmt/format.h>

#include "sim/assert.hpp"
#include "sim/mix64.hpp"
#include "topology/leaves.hpp"
#include "topology/spec_check.hpp"

namespace hopsim::topo {

// Vertices are numbered GPUs [0, G), then one NVSwitch per node, then leaves, then spines.
// Each directed edge carries the id of its link. Routing reads the direct tables, never the
// graph; the graph is the model's ground truth, which is_path() checks routes against.
struct Cluster::Graph {
  struct EdgeData {
    LinkId link;
  };

  using Impl = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                                     EdgeData>;

  explicit Graph(std::size_t vertices) : g(vertices) {}

  Impl g;
  std::vector<Impl::edge_descriptor> edge_of;  // [LinkId], filled once the graph is complete
};

namespace {

std::size_t as_index(int i) {
  return static_cast<std::size_t>(i);
}

// A spec with problems is the caller's bug: configs and jobs run check_spec first.
void validate(const Spec& spec) {
  const Problems problems = check_spec(spec);
  HOPSIM_ASSERT(problems.empty(), "cluster \"{}\": {}: {}", spec.name,
                problems.empty() ? "" : problems.front().path,
                problems.empty() ? "" : problems.front().message);
  const Problems partitions = check_failures(spec);
  HOPSIM_ASSERT(partitions.empty(), "cluster \"{}\": {}: {}", spec.name,
                partitions.empty() ? "" : partitions.front().path,
                partitions.empty() ? "" : partitions.front().message);
}

}  // namespace

Cluster::Cluster(const Spec& spec) : spec_(spec) {
  validate(spec_);
  failures_ = failures_of(spec_);
  plan_leaves();
  const std::size_t vertices = as_index(gpu_count()) + as_index(spec_.nodes) +
                               as_index(leaf_count_) + as_index(spine_count_);
  graph_ = std::make_unique<Graph>(vertices);
  const std::size_t gpu_links = 4 * as_index(gpu_count());
  const std::size_t spine_links = 2 * as_index(leaf_count_) * as_index(spine_count_);
  links_.reserve(gpu_links + spine_links);
  build_node_links();
  build_fabric();
  apply_perturbations();

  // Descriptors are taken only now: adding edges may move the storage they point into.
  graph_->edge_of.resize(links_.size());
  for (const auto e : boost::make_iterator_range(boost::edges(graph_->g))) {
    graph_->edge_of[graph_->g[e].link.index()] = e;
  }
}

Cluster::~Cluster() = default;
Cluster::Cluster(Cluster&&) noexcept = default;
Cluster& Cluster::operator=(Cluster&&) noexcept = default;

// leaves.hpp says where each NIC sits.
void Cluster::plan_leaves() {
  leaf_count_ = static_cast<int>(leaf_count(spec_));
  spine_count_ = spine_count(spec_);
  leaf_of_nic_.resize(as_index(gpu_count()));
  for (int rank = 0; rank < gpu_count(); ++rank) {
    leaf_of_nic_[as_index(rank)] = leaf_of_nic(spec_, rank);
  }
}

LinkId Cluster::add_link(std::string name, LinkKind kind, LinkParams params, std::size_t from,
                         std::size_t to) {
  HOPSIM_ASSERT(links_.size() < std::numeric_limits<LinkId::rep_type>::max(),
                "link {} overflows the LinkId range", name);
  const LinkId id{static_cast<LinkId::rep_type>(links_.size())};
  links_.push_back(Link{std::move(name), kind, params.bandwidth, params.latency});
  boost::add_edge(from, to, Graph::EdgeData{id}, graph_->g);
  return id;
}

void Cluster::build_node_links() {
  const std::size_t gpus = as_index(gpu_count());
  const std::size_t first_switch = gpus;
  const std::size_t first_leaf = first_switch + as_index(spec_.nodes);
  nvl_up_.resize(gpus);
  nvl_down_.resize(gpus);
  nic_up_.resize(gpus);
  nic_down_.resize(gpus);
  for (int rank = 0; rank < gpu_count(); ++rank) {
    const GpuId gpu{rank};
    const std::size_t r = gpu.index();
    const int node = node_of(gpu).value();  // names are formatted as plain numbers: faster
    const int local = local_of(gpu);
    const std::size_t nvswitch = first_switch + as_index(node);
    const std::size_t leaf = first_leaf + as_index(leaf_of_nic_[r]);
    nvl_up_[r] = add_link(fmt::format("n{}.g{}.nvl.up", node, local), LinkKind::NvLink,
                          spec_.nvlink, r, nvswitch);
    nvl_down_[r] = add_link(fmt::format("n{}.g{}.nvl.down", node, local), LinkKind::NvLink,
                            spec_.nvlink, nvswitch, r);
    nic_up_[r] =
        add_link(fmt::format("n{}.g{}.nic.up", node, local), LinkKind::Nic, spec_.nic, r, leaf);
    nic_down_[r] =
        add_link(fmt::format("n{}.g{}.nic.down", node, local), LinkKind::Nic, spec_.nic, leaf, r);
  }
}

// A leaf's up-links together carry its NICs' bandwidth divided by the oversubscription; each
// of the `spines` up-links (and down-links) gets an equal share.
void Cluster::build_fabric() {
  if (spine_count_ == 0) {
    return;
  }
  std::vector<int> nics_on_leaf(as_index(leaf_count_), 0);
  for (const int leaf : leaf_of_nic_) {
    ++nics_on_leaf[as_index(leaf)];
  }
  const std::size_t first_leaf = as_index(gpu_count()) + as_index(spec_.nodes);
  const std::size_t first_spine = first_leaf + as_index(leaf_count_);
  const std::size_t members = as_index(leaf_count_) * as_index(spine_count_);
  leaf_up_.resize(members);
  leaf_down_.resize(members);
  for (int leaf = 0; leaf < leaf_count_; ++leaf) {
    const double bytes_per_s = static_cast<double>(nics_on_leaf[as_index(leaf)]) *
                               spec_.nic.bandwidth.bytes_per_s /
                               (spec_.oversubscription * spec_.spines);
    const LinkParams params{Bandwidth{bytes_per_s}, spec_.spine_latency};
    for (int spine = 0; spine < spine_count_; ++spine) {
      const std::size_t slot = as_index(leaf) * as_index(spine_count_) + as_index(spine);
      const std::size_t leaf_vertex = first_leaf + as_index(leaf);
      const std::size_t spine_vertex = first_spine + as_index(spine);
      leaf_up_[slot] = add_link(fmt::format("leaf{}.spine{}.up", leaf, spine), LinkKind::Spine,
                                params, leaf_vertex, spine_vertex);
      leaf_down_[slot] = add_link(fmt::format("leaf{}.spine{}.down", leaf, spine), LinkKind::Spine,
                                  params, spine_vertex, leaf_vertex);
    }
  }
}

// After the fabric: a leaf's up-links keep the bandwidth its healthy NICs would fill. A failed
// link keeps its figures: no route crosses it (failures_). Compute perturbations change no link;
// the workloads read them (work::ComputeSpeeds).
void Cluster::apply_perturbations() {
  const auto scale = [this](LinkId id, const Perturbation& p) {
    Link& link = links_[id.index()];
    link.bandwidth = Bandwidth{link.bandwidth.bytes_per_s * p.bandwidth};
    link.latency += p.extra_latency;
  };
  for (std::size_t entry = 0; entry < spec_.perturbations.size(); ++entry) {
    const Perturbation& p = spec_.perturbations[entry];
    HOPSIM_ASSERT(p.bandwidth > 0 && p.extra_latency >= Time{}, "a perturbation of bandwidth {}",
                  p.bandwidth);
    if (p.part == PerturbedPart::GpuType) {
      HOPSIM_ASSERT(p.gpu.has_value(), "a GPU type perturbation without its GPU");
      type_of_.resize(as_index(gpu_count()), 0);
      for (const int rank : p.gpus) {
        HOPSIM_ASSERT(contains(GpuId{rank}), "a perturbation of GPU {} of {}", rank, gpu_count());
        type_of_[as_index(rank)] = entry + 1;
      }
      continue;
    }
    for (const LinkId link : links_of(p)) {
      scale(link, p);
    }
  }
}

std::vector<LinkId> Cluster::links_of(const Perturbation& p) const {
  std::vector<LinkId> out;
  if (p.part == PerturbedPart::Spine) {
    for (const auto& [leaf, spine] : spine_links_of(spec_, p)) {
      HOPSIM_ASSERT(leaf < leaf_count_ && spine < spine_count_, "leaf {} spine {}", leaf, spine);
      const std::size_t slot = as_index(leaf) * as_index(spine_count_) + as_index(spine);
      out.push_back(leaf_up_[slot]);
      out.push_back(leaf_down_[slot]);
    }
  } else if (p.part == PerturbedPart::NvLink || p.part == PerturbedPart::Nic) {
    for (const int rank : p.gpus) {
      const GpuId gpu{rank};
      HOPSIM_ASSERT(contains(gpu), "a perturbation of GPU {} of {}", rank, gpu_count());
      const bool nvlink = p.part == PerturbedPart::NvLink;
      out.push_back(nvlink ? nvl_up_[gpu.index()] : nic_up_[gpu.index()]);
      out.push_back(nvlink ? nvl_down_[gpu.index()] : nic_down_[gpu.index()]);
    }
  }
  return out;
}

int Cluster::spine_for(GpuId src, GpuId dst) const {
  if (spec_.spines == 1) {
    return 0;
  }
  const std::uint64_t key = (std::uint64_t{static_cast<std::uint32_t>(src.value())} << 32U) |
                            static_cast<std::uint32_t>(dst.value());
  return static_cast<int>(sim::mix64(key) % static_cast<std::uint64_t>(spec_.spines));
}

Route Cluster::healthy_route(GpuId src, GpuId dst) const {
  HOPSIM_ASSERT(contains(src) && contains(dst) && src != dst,
                "route({}, {}) needs two distinct GPUs in [0, {})", src, dst, gpu_count());
  Route r;
  const auto push = [&r](LinkId id) { r.links[r.size++] = id; };
  const std::size_t d = dst.index();
  if (node_of(src) == node_of(dst)) {
    push(nvl_up_[src.index()]);
    push(nvl_down_[d]);
    return r;
  }
  // The GPU whose NIC enters the fabric: the source itself, or with PXN the source node's GPU
  // on the destination's rail, reached over NVLink first.
  GpuId entry = src;
  if (spec_.fabric == FabricKind::RailOptimized && spec_.cross_rail == CrossRail::NvLink &&
      local_of(src) != local_of(dst)) {
    entry = gpu_at(node_of(src), local_of(dst));
    push(nvl_up_[src.index()]);
    push(nvl_down_[entry.index()]);
  }
  push(nic_up_[entry.index()]);
  const int from_leaf = leaf_of_nic_[entry.index()];
  const int to_leaf = leaf_of_nic_[d];
  if (from_leaf != to_leaf) {
    const std::size_t spine = as_index(spine_for(src, dst));
    push(leaf_up_[as_index(from_leaf) * as_index(spine_count_) + spine]);
    push(leaf_down_[as_index(to_leaf) * as_index(spine_count_) + spine]);
  }
  push(nic_down_[d]);
  return r;
}

Route Cluster::healthy_nic_route(GpuId src, GpuId dst) const {
  HOPSIM_ASSERT(contains(src) && contains(dst) && src != dst,
                "nic_route({}, {}) needs two distinct GPUs in [0, {})", src, dst, gpu_count());
  Route r;
  const auto push = [&r](LinkId id) { r.links[r.size++] = id; };
  push(nic_up_[src.index()]);
  const int from_leaf = leaf_of_nic_[src.index()];
  const int to_leaf = leaf_of_nic_[dst.index()];
  if (from_leaf != to_leaf) {
    const std::size_t spine = as_index(spine_for(src, dst));
    push(leaf_up_[as_index(from_leaf) * as_index(spine_count_) + spine]);
    push(leaf_down_[as_index(to_leaf) * as_index(spine_count_) + spine]);
  }
  push(nic_down_[dst.index()]);
  return r;
}

// ECMP over the spines that both leaves still reach (check_failures leaves at least one): the
// same hash as spine_for, so that a fabric with no failed spine link routes as the healthy one.
int Cluster::working_spine_for(GpuId src, GpuId dst, int from_leaf, int to_leaf) const {
  const auto works = [&](int spine) {
    return !failures_.spine_failed(from_leaf, spine) && !failures_.spine_failed(to_leaf, spine);
  };
  int count = 0;
  for (int spine = 0; spine < spine_count_; ++spine) {
    count += works(spine) ? 1 : 0;
  }
  HOPSIM_ASSERT(count > 0, "leaves {} and {} share no working spine", from_leaf, to_leaf);
  const std::uint64_t key = (std::uint64_t{static_cast<std::uint32_t>(src.value())} << 32U) |
                            static_cast<std::uint32_t>(dst.value());
  int pick = count == 1 ? 0 : static_cast<int>(sim::mix64(key) % static_cast<std::uint64_t>(count));
  for (int spine = 0; spine < spine_count_; ++spine) {
    if (works(spine) && pick-- == 0) {
      return spine;
    }
  }
  return 0;  // not reached: count spines work
}

// Out through the NIC of `exit` (src's carrier, or with PXN the GPU of src's node on the rail
// of the NIC that receives), in through the NIC of `arrive` (dst's carrier), with NVLink hops
// where those are not src and dst. Inside a node, NVLink unless one end's NVLink failed.
Route Cluster::detour(GpuId src, GpuId dst, bool nics_only) const {
  HOPSIM_ASSERT(contains(src) && contains(dst) && src != dst,
                "route({}, {}) needs two distinct GPUs in [0, {})", src, dst, gpu_count());
  const auto failed = [](const std::vector<char>& table, GpuId g) { return table[g.index()] != 0; };
  const bool same_node = node_of(src) == node_of(dst);
  const bool nvlinks_work = !failed(failures_.nvlink, src) && !failed(failures_.nvlink, dst);
  const GpuId arrive{failures_.nic_carrier[dst.index()]};
  GpuId exit{failures_.nic_carrier[src.index()]};
  if (!same_node && !nics_only && spec_.fabric == FabricKind::RailOptimized &&
      spec_.cross_rail == CrossRail::NvLink && !failed(failures_.nvlink, src) &&
      local_of(src) != local_of(arrive)) {
    const GpuId pxn = gpu_at(node_of(src), local_of(arrive));
    if (!failed(failures_.nic, pxn) && !failed(failures_.nvlink, pxn)) {
      exit = pxn;
    }
  }
  Route r;
  const auto push = [&r](LinkId id) { r.links[r.size++] = id; };
  // Inside a node the NICs are a detour only around a failed NVLink: a NIC path that would
  // leave through one of the node's GPUs and come back through another is never taken.
  if (same_node && nvlinks_work && (!nics_only || exit != src || arrive != dst)) {
    push(nvl_up_[src.index()]);
    push(nvl_down_[dst.index()]);
    return r;
  }
  if (exit != src) {
    push(nvl_up_[src.index()]);
    push(nvl_down_[exit.index()]);
  }
  push(nic_up_[exit.index()]);
  const int from_leaf = leaf_of_nic_[exit.index()];
  const int to_leaf = leaf_of_nic_[arrive.index()];
  if (from_leaf != to_leaf) {
    const std::size_t spine = as_index(working_spine_for(src, dst, from_leaf, to_leaf));
    push(leaf_up_[as_index(from_leaf) * as_index(spine_count_) + spine]);
    push(leaf_down_[as_index(to_leaf) * as_index(spine_count_) + spine]);
  }
  push(nic_down_[arrive.index()]);
  if (arrive != dst) {
    push(nvl_up_[arrive.index()]);
    push(nvl_down_[dst.index()]);
  }
  return r;
}

bool Cluster::detoured(std::span<const LinkId> route, GpuId src, GpuId dst,
                       bool nics_only) const {
  if (!failures_.any || src == dst) {
    return false;
  }
  const Route healthy = nics_only ? healthy_nic_route(src, dst) : healthy_route(src, dst);
  return !std::ranges::equal(route, healthy.span());
}

Time Cluster::latency(std::span<const LinkId> route) const {
  Time total = spec_.software_overhead;
  for (const LinkId id : route) {
    total += links_[id.index()].latency;
  }
  return total;
}

std::size_t Cluster::vertex_count() const {
  return boost::num_vertices(graph_->g);
}

bool Cluster::is_path(std::span<const LinkId> route, GpuId src, GpuId dst) const {
  if (route.empty() || route.size() > kMaxRouteLinks || !contains(src) || !contains(dst)) {
    return false;
  }
  const Graph::Impl& g = graph_->g;
  std::size_t at = src.index();
  std::array<std::size_t, kMaxRouteLinks + 1> visited{at};
  std::size_t visited_count = 1;
  for (const LinkId id : route) {
    if (id.index() >= links_.size()) {
      return false;
    }
    const auto e = graph_->edge_of[id.index()];
    if (boost::source(e, g) != at) {
      return false;
    }
    at = boost::target(e, g);
    for (std::size_t i = 0; i < visited_count; ++i) {
      if (visited[i] == at) {
        return false;  // a loop: not a simple path
      }
    }
    visited[visited_count++] = at;
  }
  return at == dst.index();
}

}  // namespace hopsim::topo
