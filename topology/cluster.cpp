// Builds the cluster's link graph (GPUs, NVSwitches, leaves, spines) and routes GPU pairs in O(1).
#include "topology/cluster.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include <boost/graph/adjacency_list.hpp>
#include <boost/range/iterator_range.hpp>
#include <fmt/format.h>

#include "sim/assert.hpp"
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
}

// splitmix64's finaliser: a fixed, portable mix, so that ECMP choices never vary by platform.
std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31U);
}

}  // namespace

Cluster::Cluster(const Spec& spec) : spec_(spec) {
  validate(spec_);
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

// Rail-optimized: nodes form groups of nodes_per_leaf; NIC k of every node of group q sits on
// leaf q * gpus_per_node + k. Fat tree: all NICs of node n sit on leaf n / nodes_per_leaf.
void Cluster::plan_leaves() {
  const int per_leaf = (spec_.nodes_per_leaf == 0 || spec_.nodes_per_leaf > spec_.nodes)
                           ? spec_.nodes
                           : spec_.nodes_per_leaf;
  const int groups = (spec_.nodes + per_leaf - 1) / per_leaf;
  const bool rails = spec_.fabric == FabricKind::RailOptimized;
  leaf_count_ = rails ? groups * spec_.gpus_per_node : groups;
  spine_count_ = leaf_count_ > 1 ? spec_.spines : 0;
  leaf_of_nic_.resize(as_index(gpu_count()));
  for (int rank = 0; rank < gpu_count(); ++rank) {
    const GpuId gpu{rank};
    const int group = node_of(gpu).value() / per_leaf;
    leaf_of_nic_[gpu.index()] = rails ? group * spec_.gpus_per_node + local_of(gpu) : group;
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

// After the fabric: a leaf's up-links keep the bandwidth its healthy NICs would fill.
void Cluster::apply_perturbations() {
  for (const Perturbation& p : spec_.perturbations) {
    HOPSIM_ASSERT(p.compute_speed > 0 && p.bandwidth > 0 && p.extra_latency >= Time{},
                  "a perturbation of speed {}, bandwidth {}", p.compute_speed, p.bandwidth);
    for (const int rank : p.gpus) {
      const GpuId gpu{rank};
      HOPSIM_ASSERT(contains(gpu), "a perturbation of GPU {} of {}", rank, gpu_count());
      if (p.part == PerturbedPart::Compute) {
        compute_speed_.resize(as_index(gpu_count()), 1.0);
        compute_speed_[gpu.index()] *= p.compute_speed;
        continue;
      }
      const bool nvlink = p.part == PerturbedPart::NvLink;
      for (const LinkId id : {nvlink ? nvl_up_[gpu.index()] : nic_up_[gpu.index()],
                              nvlink ? nvl_down_[gpu.index()] : nic_down_[gpu.index()]}) {
        Link& link = links_[id.index()];
        link.bandwidth = Bandwidth{link.bandwidth.bytes_per_s * p.bandwidth};
        link.latency += p.extra_latency;
      }
    }
  }
}

int Cluster::spine_for(GpuId src, GpuId dst) const {
  if (spec_.spines == 1) {
    return 0;
  }
  const std::uint64_t key = (std::uint64_t{static_cast<std::uint32_t>(src.value())} << 32U) |
                            static_cast<std::uint32_t>(dst.value());
  return static_cast<int>(mix64(key) % static_cast<std::uint64_t>(spec_.spines));
}

Route Cluster::route(GpuId src, GpuId dst) const {
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

Route Cluster::nic_route(GpuId src, GpuId dst) const {
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
