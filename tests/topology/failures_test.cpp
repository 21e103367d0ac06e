// Failed links: the detours routes take (a failed NIC through its carrier over NVLink, a failed
// NVLink through the NICs, ECMP over the spines left), and the partitions that are errors.
#include "topology/failures.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "topology/cluster.hpp"

namespace hopsim::topo {
namespace {

using Names = std::vector<std::string>;

GpuId g(int rank) { return GpuId{rank}; }

Spec two_nodes() {
  Spec spec;
  spec.nodes = 2;
  spec.gpus_per_node = 8;
  return spec;
}

Perturbation fail(PerturbedPart part, std::vector<int> gpus, std::size_t entry = 0) {
  Perturbation p;
  p.part = part;
  p.gpus = std::move(gpus);
  p.failed = true;
  p.entry = entry;
  return p;
}

Perturbation spine_links(std::vector<int> leaves, std::vector<int> spines, std::size_t entry) {
  Perturbation p;
  p.part = PerturbedPart::Spine;
  p.leaves = std::move(leaves);
  p.spines = std::move(spines);
  p.failed = true;
  p.entry = entry;
  return p;
}

Names names(const Cluster& c, const Route& r) {
  Names out;
  for (const LinkId id : r.span()) {
    out.push_back(c.link(id).name);
  }
  return out;
}

// Every route and NIC route of `c` is a simple path that crosses no link named in `failed`.
void every_route_avoids(const Cluster& c, const Names& failed) {
  for (int s = 0; s < c.gpu_count(); ++s) {
    for (int d = 0; d < c.gpu_count(); ++d) {
      if (s == d) {
        continue;
      }
      for (const Route& r : {c.route(g(s), g(d)), c.nic_route(g(s), g(d))}) {
        REQUIRE(c.is_path(r.span(), g(s), g(d)));
        for (const std::string& name : names(c, r)) {
          CHECK_MESSAGE(std::find(failed.begin(), failed.end(), name) == failed.end(),
                        s, " -> ", d, " crosses ", name);
        }
      }
    }
  }
}

std::string first_problem(const Spec& spec) {
  const Problems p = check_failures(spec);
  return p.empty() ? "" : p.front().path + ": " + p.front().message;
}

}  // namespace

TEST_CASE("a failed NIC's traffic crosses NVLink to the next GPU's NIC, both ways") {
  Spec spec = two_nodes();
  spec.perturbations = {fail(PerturbedPart::Nic, {3})};
  const Cluster c(spec);
  const Cluster healthy(two_nodes());
  CHECK(c.failures().nic_carrier[3] == 4);
  CHECK(c.failures().nic_carrier[5] == 5);
  // Out: same rail, so no PXN hop, but GPU 3's NIC is gone: GPU 4's, then across the spine.
  CHECK(names(c, c.route(g(3), g(11))) ==
        Names{"n0.g3.nvl.up", "n0.g4.nvl.down", "n0.g4.nic.up", "leaf4.spine0.up",
              "leaf3.spine0.down", "n1.g3.nic.down"});
  // In: node 1's GPU on rail 4 (PXN) sends to GPU 4's NIC, which forwards over NVLink.
  CHECK(names(c, c.route(g(11), g(3))) ==
        Names{"n1.g3.nvl.up", "n1.g4.nvl.down", "n1.g4.nic.up", "n0.g4.nic.down",
              "n0.g4.nvl.up", "n0.g3.nvl.down"});
  // DeepEP's low-latency RDMA: through the carrier's NIC too.
  CHECK(names(c, c.nic_route(g(11), g(3))) ==
        Names{"n1.g3.nic.up", "leaf3.spine0.up", "leaf4.spine0.down", "n0.g4.nic.down",
              "n0.g4.nvl.up", "n0.g3.nvl.down"});
  every_route_avoids(c, {"n0.g3.nic.up", "n0.g3.nic.down"});
  // Pairs that never touched GPU 3's NIC route as on the healthy cluster.
  CHECK(names(c, c.route(g(0), g(9))) == names(healthy, healthy.route(g(0), g(9))));
  CHECK(names(c, c.route(g(3), g(5))) == Names{"n0.g3.nvl.up", "n0.g5.nvl.down"});
  CHECK(c.detoured(c.route(g(3), g(11)).span(), g(3), g(11), false));
  CHECK(c.detoured(c.nic_route(g(11), g(3)).span(), g(11), g(3), true));
  CHECK_FALSE(c.detoured(c.route(g(0), g(9)).span(), g(0), g(9), false));
  CHECK_FALSE(healthy.detoured(healthy.route(g(3), g(11)).span(), g(3), g(11), false));
}

TEST_CASE("the carrier is the next GPU whose NIC and NVLink work, wrapping around the node") {
  Spec spec = two_nodes();
  spec.perturbations = {fail(PerturbedPart::Nic, {7, 0}), fail(PerturbedPart::NvLink, {1}, 1)};
  const Failures f = failures_of(spec);
  CHECK(f.nic_carrier[7] == 2);  // 0's NIC and 1's NVLink failed
  CHECK(f.nic_carrier[0] == 2);
  CHECK(f.nic_carrier[1] == 1);  // its own NIC works
  every_route_avoids(Cluster(spec), {"n0.g7.nic.up", "n0.g7.nic.down", "n0.g0.nic.up",
                                     "n0.g0.nic.down", "n0.g1.nvl.up", "n0.g1.nvl.down"});
}

TEST_CASE("a GPU whose NVLink failed reaches its node through the NICs, and sends without PXN") {
  Spec spec = two_nodes();
  spec.perturbations = {fail(PerturbedPart::NvLink, {2})};
  const Cluster c(spec);
  CHECK(names(c, c.route(g(2), g(5))) ==
        Names{"n0.g2.nic.up", "leaf2.spine0.up", "leaf5.spine0.down", "n0.g5.nic.down"});
  CHECK(names(c, c.route(g(2), g(13))) ==
        Names{"n0.g2.nic.up", "leaf2.spine0.up", "leaf5.spine0.down", "n1.g5.nic.down"});
  // Into it from another node: PXN on the sender's side, then its own NIC.
  CHECK(names(c, c.route(g(9), g(2))) ==
        Names{"n1.g1.nvl.up", "n1.g2.nvl.down", "n1.g2.nic.up", "n0.g2.nic.down"});
  CHECK(names(c, c.route(g(4), g(5))) == Names{"n0.g4.nvl.up", "n0.g5.nvl.down"});
  CHECK(c.detoured(c.route(g(2), g(5)).span(), g(2), g(5), false));
  CHECK_FALSE(c.detoured(c.nic_route(g(2), g(5)).span(), g(2), g(5), true));
  every_route_avoids(c, {"n0.g2.nvl.up", "n0.g2.nvl.down"});
}

TEST_CASE("ECMP hashes over the spines both leaves still reach, and the rest route as before") {
  Spec spec;
  spec.nodes = 4;
  spec.gpus_per_node = 2;
  spec.nodes_per_leaf = 2;  // 2 groups x 2 rails = 4 leaves
  spec.spines = 4;
  spec.cross_rail = CrossRail::Spine;
  Spec healthy_spec = spec;
  spec.perturbations = {spine_links({0}, {1, 2}, 0)};
  const Cluster c(spec);
  const Cluster healthy(healthy_spec);
  every_route_avoids(c, {"leaf0.spine1.up", "leaf0.spine1.down", "leaf0.spine2.up",
                         "leaf0.spine2.down"});
  int moved = 0;
  for (int s = 0; s < c.gpu_count(); ++s) {
    for (int d = 0; d < c.gpu_count(); ++d) {
      if (s == d) {
        continue;
      }
      const bool touches_leaf0 = leaf_of_nic(spec, s) == 0 || leaf_of_nic(spec, d) == 0;
      const bool same = names(c, c.route(g(s), g(d))) == names(healthy, healthy.route(g(s), g(d)));
      CHECK((same || touches_leaf0));
      moved += same ? 0 : 1;
      CHECK(c.detoured(c.route(g(s), g(d)).span(), g(s), g(d), false) == !same);
    }
  }
  CHECK(moved > 0);
}

TEST_CASE("spine links of some leaves and spines change alike, both directions") {
  Spec spec;
  spec.nodes = 4;
  spec.gpus_per_node = 2;
  spec.nodes_per_leaf = 2;
  spec.spines = 2;
  Perturbation slow = spine_links({1, 3}, {0}, 0);
  slow.failed = false;
  slow.bandwidth = 0.25;
  slow.extra_latency = Time::us(1);
  spec.perturbations = {slow};
  const Cluster c(spec);
  for (const Link& link : c.links()) {
    if (link.kind != LinkKind::Spine) {
      continue;
    }
    const bool changed = link.name.starts_with("leaf1.spine0.") ||
                         link.name.starts_with("leaf3.spine0.");
    // A leaf's up-links carry its 2 NICs' 50 GB/s over 2 spines: 50 GB/s each.
    CHECK_MESSAGE(link.bandwidth.bytes_per_s == (changed ? 12.5e9 : 50e9), link.name);
    CHECK_MESSAGE(link.latency == (changed ? Time::ns(1450) : Time::ns(450)), link.name);
  }
}

TEST_CASE("links_of names the links a perturbation changes, unfailed_route ignores failures") {
  Spec spec;
  spec.nodes = 4;
  spec.gpus_per_node = 2;
  spec.nodes_per_leaf = 2;
  spec.spines = 2;
  const Perturbation nic = fail(PerturbedPart::Nic, {3}, 0);
  const Perturbation nvlink = fail(PerturbedPart::NvLink, {0, 5}, 1);
  Perturbation spine = spine_links({1}, {}, 2);
  spine.failed = false;
  spine.bandwidth = 0.5;
  Perturbation compute;
  compute.gpus = {2};
  compute.compute_speed = 0.9;
  const Cluster healthy(spec);
  spec.perturbations = {nic, compute};  // GPU 3's NIC failed: its flows go round it
  const Cluster c(spec);
  const auto link_names = [&](const Perturbation& p) {
    Names out;
    for (const LinkId id : c.links_of(p)) {
      out.push_back(c.link(id).name);
    }
    return out;
  };
  CHECK(link_names(nic) == Names{"n1.g1.nic.up", "n1.g1.nic.down"});
  CHECK(link_names(nvlink) ==
        Names{"n0.g0.nvl.up", "n0.g0.nvl.down", "n2.g1.nvl.up", "n2.g1.nvl.down"});
  // Leaf 1's links to each of the 2 spines, up and down.
  CHECK(link_names(spine).size() == 4);
  CHECK(link_names(compute).empty());
  for (int s = 0; s < c.gpu_count(); ++s) {
    for (int d = 0; d < c.gpu_count(); ++d) {
      for (const bool nics_only : {false, true}) {
        if (s != d) {
          const Route healthy_route = nics_only ? healthy.nic_route(g(s), g(d))
                                                : healthy.route(g(s), g(d));
          CHECK(names(c, c.unfailed_route(g(s), g(d), nics_only)) ==
                names(healthy, healthy_route));
        }
      }
    }
  }
}

TEST_CASE("a partition is an error naming the perturbation that made it") {
  Spec spec = two_nodes();
  spec.perturbations = {fail(PerturbedPart::NvLink, {3}), fail(PerturbedPart::Nic, {3}, 1)};
  CHECK(first_problem(spec) ==
        "/perturbations/1: GPU 3 has neither its NVLink nor its NIC left: nothing reaches it");
  std::vector<int> node1;
  for (int r = 8; r < 16; ++r) {
    node1.push_back(r);
  }
  spec.perturbations = {fail(PerturbedPart::Nic, node1, 0)};
  CHECK(first_problem(spec) ==
        "/perturbations/0: GPU 8's NIC failed and no other GPU of node 1 has a NIC and an NVLink "
        "that work to carry its traffic");
  spec.perturbations = {spine_links({2}, {}, 4)};  // the one spine trunk, from leaf 2
  CHECK(first_problem(spec) ==
        "/perturbations/4: leaf 2 has no spine link left: its NICs reach no other leaf");
  Spec ecmp = two_nodes();
  ecmp.spines = 2;
  ecmp.perturbations = {spine_links({0}, {1}, 0), spine_links({5}, {0}, 1)};
  CHECK(first_problem(ecmp) ==
        "/perturbations/1: leaves 0 and 5 have no working spine in common: their NICs cannot "
        "reach each other");
  ecmp.perturbations = {spine_links({0}, {1}, 0), spine_links({5}, {1}, 1)};
  CHECK(first_problem(ecmp).empty());
  spec.perturbations = {fail(PerturbedPart::Nic, {1, 2, 3})};
  CHECK(first_problem(spec).empty());
  spec.perturbations.front().failed = false;
  CHECK_FALSE(failures_of(spec).any);
  CHECK(failures_of(spec).nic.empty());  // a healthy cluster keeps no tables
}

}  // namespace hopsim::topo
