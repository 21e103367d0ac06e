// Tests of the cluster builder: link names and counts, routing rules, ECMP and latencies.
#include "topology/cluster.hpp"

#include <cstddef>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "tests/approx.hpp"

namespace hopsim::topo {
namespace {

Spec make_spec(int nodes, int gpus_per_node) {
  Spec spec;
  spec.nodes = nodes;
  spec.gpus_per_node = gpus_per_node;
  return spec;
}

GpuId g(int rank) {
  return GpuId{rank};
}

std::vector<std::string> names(const Cluster& c, const Route& r) {
  std::vector<std::string> out;
  for (const LinkId id : r.span()) {
    out.push_back(c.link(id).name);
  }
  return out;
}

using Names = std::vector<std::string>;

// The spine index of a leaf<->spine link, from its name "leaf{L}.spine{S}.{up,down}".
int spine_of(const Link& link) {
  const std::size_t at = link.name.find(".spine");
  REQUIRE(at != std::string::npos);
  return std::stoi(link.name.substr(at + 6));
}

}  // namespace

TEST_CASE("a 2-node rail-optimized cluster has 4 links per GPU plus leaf-spine links") {
  // 16 GPUs x (nvl up/down + nic up/down) = 64; 8 rail leaves x 1 spine x 2 directions = 16.
  const Cluster c(make_spec(2, 8));
  CHECK(c.gpu_count() == 16);
  CHECK(c.link_count() == 64 + 16);
  CHECK(c.vertex_count() == 16 + 2 + 8 + 1);  // GPUs, NVSwitches, leaves, spines

  std::unordered_map<std::string, LinkId> by_name;
  for (std::size_t l = 0; l < c.link_count(); ++l) {
    const LinkId id{static_cast<LinkId::rep_type>(l)};
    by_name.emplace(c.link(id).name, id);
  }
  CHECK(by_name.size() == c.link_count());  // names are unique
  for (const char* name : {"n0.g0.nvl.up", "n1.g7.nvl.down", "n0.g3.nic.up", "n1.g7.nic.down",
                           "leaf0.spine0.up", "leaf7.spine0.down"}) {
    CAPTURE(name);
    CHECK(by_name.count(name) == 1);
  }
  const Link& nvl = c.link(by_name.at("n1.g2.nvl.up"));
  CHECK(nvl.kind == LinkKind::NvLink);
  CHECK(nvl.bandwidth == c.spec().nvlink.bandwidth);
  CHECK(nvl.latency == c.spec().nvlink.latency);
  const Link& nic = c.link(by_name.at("n0.g5.nic.down"));
  CHECK(nic.kind == LinkKind::Nic);
  CHECK(nic.bandwidth == c.spec().nic.bandwidth);
  const Link& spine = c.link(by_name.at("leaf3.spine0.up"));
  CHECK(spine.kind == LinkKind::Spine);
  CHECK(spine.latency == c.spec().spine_latency);
  // Two NICs (one per node) on each rail leaf, non-blocking, one spine: 2 x 50 GB/s.
  CHECK(spine.bandwidth.bytes_per_s == hopsim::test::approx(100e9));
}

TEST_CASE("a single leaf has no spine switches and no spine links") {
  Spec spec = make_spec(4, 4);
  spec.fabric = FabricKind::FatTree;
  const Cluster c(spec);
  CHECK(c.link_count() == 16 * 4);
  CHECK(c.vertex_count() == 16 + 4 + 1);
}

TEST_CASE("same-node routes are NVLink up then NVLink down") {
  const Cluster c(make_spec(2, 8));
  CHECK(names(c, c.route(g(1), g(5))) == Names{"n0.g1.nvl.up", "n0.g5.nvl.down"});
  CHECK(names(c, c.route(g(15), g(8))) == Names{"n1.g7.nvl.up", "n1.g0.nvl.down"});
}

TEST_CASE("same-rail inter-node routes stay on the rail, crossing a spine only between groups") {
  const Cluster one_group(make_spec(2, 8));
  CHECK(names(one_group, one_group.route(g(3), g(11))) == Names{"n0.g3.nic.up", "n1.g3.nic.down"});

  Spec spec = make_spec(2, 8);
  spec.nodes_per_leaf = 1;  // leaf = node * 8 + rail
  const Cluster two_groups(spec);
  CHECK(names(two_groups, two_groups.route(g(3), g(11))) ==
        Names{"n0.g3.nic.up", "leaf3.spine0.up", "leaf11.spine0.down", "n1.g3.nic.down"});
}

TEST_CASE("cross-rail routes with PXN go over NVLink to the destination's rail first") {
  const Cluster c(make_spec(2, 8));
  // GPU 13 is node 1, local 5: the relay is node 0's GPU 5.
  CHECK(names(c, c.route(g(2), g(13))) ==
        Names{"n0.g2.nvl.up", "n0.g5.nvl.down", "n0.g5.nic.up", "n1.g5.nic.down"});

  Spec spec = make_spec(2, 8);
  spec.nodes_per_leaf = 1;
  const Cluster groups(spec);
  CHECK(names(groups, groups.route(g(2), g(13))) == Names{"n0.g2.nvl.up", "n0.g5.nvl.down",
                                                          "n0.g5.nic.up", "leaf5.spine0.up",
                                                          "leaf13.spine0.down", "n1.g5.nic.down"});
}

TEST_CASE("cross-rail routes without PXN cross the spine between rail leaves") {
  Spec spec = make_spec(2, 8);
  spec.cross_rail = CrossRail::Spine;
  const Cluster c(spec);
  CHECK(names(c, c.route(g(2), g(13))) ==
        Names{"n0.g2.nic.up", "leaf2.spine0.up", "leaf5.spine0.down", "n1.g5.nic.down"});
  // Same rail still stays on its leaf.
  CHECK(names(c, c.route(g(2), g(10))) == Names{"n0.g2.nic.up", "n1.g2.nic.down"});
}

TEST_CASE("fat-tree routes cross a spine only when the two nodes sit on different leaves") {
  Spec spec = make_spec(4, 4);
  spec.fabric = FabricKind::FatTree;
  spec.nodes_per_leaf = 2;  // nodes 0,1 on leaf 0; nodes 2,3 on leaf 1
  const Cluster c(spec);
  CHECK(c.vertex_count() == 16 + 4 + 2 + 1);
  CHECK(names(c, c.route(g(0), g(5))) == Names{"n0.g0.nic.up", "n1.g1.nic.down"});
  CHECK(names(c, c.route(g(0), g(9))) ==
        Names{"n0.g0.nic.up", "leaf0.spine0.up", "leaf1.spine0.down", "n2.g1.nic.down"});
  CHECK(names(c, c.route(g(1), g(2))) == Names{"n0.g1.nvl.up", "n0.g2.nvl.down"});
}

TEST_CASE("ECMP picks a spine deterministically, in range, spread over all spines") {
  Spec spec = make_spec(8, 4);
  spec.fabric = FabricKind::FatTree;
  spec.nodes_per_leaf = 1;
  spec.spines = 4;
  const Cluster a(spec);
  const Cluster b(spec);
  std::vector<int> uses(4, 0);
  int pairs = 0;
  for (int src = 0; src < a.gpu_count(); ++src) {
    for (int dst = 0; dst < a.gpu_count(); ++dst) {
      if (a.node_of(g(src)) == a.node_of(g(dst))) {
        continue;
      }
      const Route r = a.route(g(src), g(dst));
      REQUIRE(r.size == 4);
      const int up = spine_of(a.link(r.links[1]));
      const int down = spine_of(a.link(r.links[2]));
      REQUIRE(up == down);
      REQUIRE(up >= 0);
      REQUIRE(up < 4);
      REQUIRE(names(a, r) == names(b, b.route(g(src), g(dst))));  // same answer in another instance
      REQUIRE(names(a, r) == names(a, a.route(g(src), g(dst))));  // and on a second call
      ++uses[static_cast<std::size_t>(up)];
      ++pairs;
    }
  }
  // 32 x 28 = 896 pairs over 4 spines: 224 each on average; a fair hash stays near it.
  CHECK(pairs == 896);
  for (const int n : uses) {
    CHECK(n > 224 / 2);
    CHECK(n < 224 * 3 / 2);
  }
}

TEST_CASE("leaf-spine bandwidth is the leaf's NIC bandwidth over oversubscription x spines") {
  Spec fat = make_spec(4, 4);
  fat.fabric = FabricKind::FatTree;
  fat.nodes_per_leaf = 2;
  fat.spines = 2;
  fat.oversubscription = 2;
  const Cluster c(fat);  // 8 NICs per leaf: 8 x 50 GB/s / (2 x 2) = 100 GB/s per member
  std::size_t spine_links = 0;
  for (const Link& link : c.links()) {
    if (link.kind == LinkKind::Spine) {
      CHECK(link.bandwidth.bytes_per_s == hopsim::test::approx(100e9));
      ++spine_links;
    }
  }
  CHECK(spine_links == 2 * 2 * 2);  // leaves x spines x directions

  Spec rails = make_spec(4, 4);
  rails.nodes_per_leaf = 2;
  rails.oversubscription = 4;
  const Cluster r(rails);                   // 2 NICs per rail leaf: 2 x 50 GB/s / 4 = 25 GB/s
  const Route route = r.route(g(0), g(8));  // node 0 -> node 2, same rail, other group
  REQUIRE(route.size == 4);
  CHECK(r.link(route.links[1]).bandwidth.bytes_per_s == hopsim::test::approx(25e9));
  CHECK(r.link(route.links[2]).bandwidth.bytes_per_s == hopsim::test::approx(25e9));
}

TEST_CASE("every route of every small cluster is a simple path of at most kMaxRouteLinks") {
  for (const FabricKind fabric : {FabricKind::RailOptimized, FabricKind::FatTree}) {
    for (const CrossRail cross : {CrossRail::NvLink, CrossRail::Spine}) {
      for (const int spines : {1, 3}) {
        for (const int per_leaf : {0, 1, 2}) {
          Spec spec = make_spec(4, 4);
          spec.fabric = fabric;
          spec.cross_rail = cross;
          spec.spines = spines;
          spec.nodes_per_leaf = per_leaf;
          const Cluster c(spec);
          int bad = 0;
          for (int src = 0; src < c.gpu_count(); ++src) {
            for (int dst = 0; dst < c.gpu_count(); ++dst) {
              if (src == dst) {
                continue;
              }
              const Route r = c.route(g(src), g(dst));
              const bool same_node = c.node_of(g(src)) == c.node_of(g(dst));
              if (!c.is_path(r.span(), g(src), g(dst)) || r.size > kMaxRouteLinks ||
                  (same_node && r.size != 2) || c.is_path(r.span(), g(dst), g(src))) {
                ++bad;
              }
            }
          }
          CAPTURE(static_cast<int>(fabric));
          CAPTURE(static_cast<int>(cross));
          CAPTURE(spines);
          CAPTURE(per_leaf);
          CHECK(bad == 0);
        }
      }
    }
  }
}

TEST_CASE("is_path rejects broken chains") {
  const Cluster c(make_spec(2, 8));
  const Route r = c.route(g(2), g(13));
  CHECK(c.is_path(r.span(), g(2), g(13)));
  CHECK_FALSE(c.is_path(r.span(), g(2), g(12)));
  CHECK_FALSE(c.is_path(r.span(), g(3), g(13)));
  CHECK_FALSE(c.is_path(r.span().subspan(1), g(2), g(13)));
  CHECK_FALSE(c.is_path({}, g(2), g(13)));
  const LinkId bogus[] = {LinkId{static_cast<LinkId::rep_type>(c.link_count())}};
  CHECK_FALSE(c.is_path(bogus, g(2), g(13)));
}

TEST_CASE("latency is the links' latencies plus the software overhead, exactly") {
  // Default spec: NVLink 715 ns, IB hop 450 ns, software 1.9 us, which reproduce the 64 B
  // latencies of DeepSeek ISCA'25 Table 5: NVLink 3.33 us, IB 2.8 us same leaf, 3.7 us across.
  Spec spec = make_spec(2, 8);
  spec.nodes_per_leaf = 1;
  const Cluster c(spec);
  const Time nvlink = c.spec().nvlink.latency;
  const Route same_node = c.route(g(0), g(1));
  CHECK(c.latency(same_node.span()) == 2 * nvlink + c.spec().software_overhead);
  CHECK(c.latency(same_node.span()) == Time::ps(3'330'000));

  Spec one_leaf = make_spec(2, 8);
  const Cluster flat(one_leaf);
  CHECK(flat.latency(flat.route(g(0), g(8)).span()) == Time::ps(2'800'000));
  CHECK(c.latency(c.route(g(0), g(8)).span()) == Time::ps(3'700'000));
}

TEST_CASE("a 2048-node, 16,384-GPU cluster builds with the expected link count") {
  Spec spec = make_spec(2048, 8);
  spec.nodes_per_leaf = 32;  // 64 groups x 8 rails = 512 leaves
  spec.spines = 2;
  const Cluster c(spec);
  CHECK(c.gpu_count() == 16'384);
  CHECK(c.link_count() == 16'384 * 4 + 512 * 2 * 2);
  CHECK(c.vertex_count() == 16'384 + 2048 + 512 + 2);
  const Route r = c.route(g(0), g(16'383));
  CHECK(c.is_path(r.span(), g(0), g(16'383)));
  CHECK(r.size == 6);  // PXN and two spine hops
}

TEST_CASE("a moved-to cluster keeps its links and routes") {
  Cluster a(make_spec(2, 8));
  const Names before = names(a, a.route(g(2), g(13)));
  const Cluster b(std::move(a));
  CHECK(names(b, b.route(g(2), g(13))) == before);
  CHECK(b.is_path(b.route(g(2), g(13)).span(), g(2), g(13)));
}

// The ids do not mix: a rank is not a node, a node is not a link, and none is a bare int.
static_assert(!std::is_convertible_v<int, GpuId> && !std::is_convertible_v<GpuId, int>);
static_assert(!std::is_convertible_v<NodeId, GpuId> && !std::is_constructible_v<GpuId, NodeId>);
static_assert(!std::is_constructible_v<LinkId, GpuId> && !std::is_constructible_v<NodeId, LinkId>);

TEST_CASE("a GPU's node and local index give the GPU back") {
  const Cluster c(make_spec(3, 8));
  for (int r = 0; r < c.gpu_count(); ++r) {
    const GpuId gpu{r};
    CHECK(c.contains(gpu));
    CHECK(c.node_of(gpu) == NodeId{r / 8});
    CHECK(c.gpu_at(c.node_of(gpu), c.local_of(gpu)) == gpu);
  }
  CHECK_FALSE(c.contains(GpuId{24}));
  CHECK_FALSE(c.contains(GpuId{-1}));
  CHECK(c.links().size() == c.link_count());
}

}  // namespace hopsim::topo
