// The rank mesh: coordinates, groups along each dimension, EP blocks, and its checks.
#include "workloads/mesh/mesh.hpp"

#include <algorithm>

#include "doctest_time.hpp"
#include "tests/gpu_ids.hpp"

using hopsim::Problems;
using namespace hopsim::work;

TEST_CASE("Llama 3's order [TP, CP, PP, DP]: TP consecutive, CP strides over TP") {
  ParallelSpec p;
  p.tp = 8;
  p.cp = 2;
  p.pp = 2;
  p.dp = 2;
  const Mesh mesh(p);
  CHECK(mesh.size() == 64);
  // rank = tp + 8 cp + 16 pp + 32 dp
  CHECK(mesh.coordinate(45, Dim::Tp) == 5);
  CHECK(mesh.coordinate(45, Dim::Cp) == 1);
  CHECK(mesh.coordinate(45, Dim::Pp) == 0);
  CHECK(mesh.coordinate(45, Dim::Dp) == 1);
  CHECK(mesh.group(Dim::Tp, 45) == hopsim::test::gpu_ids({40, 41, 42, 43, 44, 45, 46, 47}));
  CHECK(mesh.group(Dim::Cp, 45) == hopsim::test::gpu_ids({37, 45}));  // shares all but cp
  CHECK(mesh.group(Dim::Pp, 45) == hopsim::test::gpu_ids({45, 61}));
  CHECK(mesh.group(Dim::Dp, 45) == hopsim::test::gpu_ids({13, 45}));
  // Every dimension's groups partition the mesh.
  for (Dim d : {Dim::Tp, Dim::Cp, Dim::Pp, Dim::Dp}) {
    CAPTURE(dim_name(d));
    std::vector<hopsim::topo::GpuId> all;
    for (const auto& g : mesh.groups(d)) {
      CHECK(static_cast<std::int64_t>(g.size()) == p.degree(d));
      all.insert(all.end(), g.begin(), g.end());
    }
    std::sort(all.begin(), all.end());
    CHECK(all.size() == 64);
    CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
  }
}

TEST_CASE("another order puts another dimension innermost") {
  ParallelSpec p;
  p.tp = 2;
  p.cp = 4;
  p.order = {Dim::Cp, Dim::Tp, Dim::Pp, Dim::Dp};
  const Mesh mesh(p);
  CHECK(mesh.group(Dim::Cp, 5) == hopsim::test::gpu_ids({4, 5, 6, 7}));
  CHECK(mesh.group(Dim::Tp, 5) == hopsim::test::gpu_ids({1, 5}));
}

TEST_CASE("EP groups are consecutive blocks of a pipeline stage's ranks") {
  ParallelSpec p;
  p.tp = 2;
  p.pp = 2;
  p.dp = 4;
  p.ep = 4;  // divides tp x cp x dp = 8
  const Mesh mesh(p);
  // A stage (pp = 0) is ranks {0,1} + 4 dp: 0,1,4,5,8,9,12,13; EP cuts it into blocks of 4.
  CHECK(mesh.group(Dim::Ep, 0) == hopsim::test::gpu_ids({0, 1, 4, 5}));
  CHECK(mesh.group(Dim::Ep, 12) == hopsim::test::gpu_ids({8, 9, 12, 13}));
  CHECK(mesh.group(Dim::Ep, 2) == hopsim::test::gpu_ids({2, 3, 6, 7}));  // stage 1
  CHECK(mesh.coordinate(5, Dim::Ep) == 3);
  CHECK(mesh.groups(Dim::Ep).size() == 4);
}

TEST_CASE("mesh checks: a job that does not tile a cluster of 72-GPU nodes says what would") {
  ParallelSpec p;
  p.tp = 8;
  p.cp = 16;  // 128 GPUs on 8 nodes of 72: 16 nodes, or the first 64 GPUs of each node
  Problems out = Mesh::check(p, 576, 72);
  REQUIRE(out.size() == 1);
  CHECK(out[0].path == "/parallel");
  CHECK(out[0].message ==
        "tp x cp x pp x dp = 8 x 16 x 1 x 1 = 128 does not divide the cluster's 576 GPUs (8 nodes "
        "of 72); set cluster.nodes to a multiple of 16, or cluster.gpus_per_node to 64");
  p.cp = 1;
  p.pp = 8;
  p.dp = 128;  // 8192 GPUs, a degree above the cluster's: the same check, the nodes it needs
  out = Mesh::check(p, 576, 72);
  REQUIRE(out.size() == 1);
  CHECK(out[0].path == "/parallel");
  CHECK(out[0].message.ends_with(
      "set cluster.nodes to a multiple of 1024, or cluster.gpus_per_node to 64 with "
      "cluster.nodes a multiple of 128"));
  p.tp = 4;  // 12 GPUs on nodes of 8: nodes of 6 would split a TP group of 4, so more nodes
  p.pp = 1;
  p.dp = 3;
  out = Mesh::check(p, 128, 8);
  REQUIRE(out.size() == 1);
  CHECK(out[0].message.ends_with("set cluster.nodes to a multiple of 3"));
  p.tp = 2;
  p.dp = 6;  // 12 GPUs: nodes of 6 hold the TP groups of 2 (16 nodes: a multiple of 2)
  out = Mesh::check(p, 128, 8);
  REQUIRE(out.size() == 1);
  CHECK(out[0].message.ends_with(
      "set cluster.nodes to a multiple of 3, or cluster.gpus_per_node to 6"));
  out = Mesh::check(p, 136, 8);  // 17 nodes: nodes of 6 want an even count
  REQUIRE(out.size() == 1);
  CHECK(out[0].message.ends_with(
      "set cluster.nodes to a multiple of 3, or cluster.gpus_per_node to 6 with cluster.nodes a "
      "multiple of 2"));
  p.dp = std::int64_t{1} << 40;  // beyond any cluster: the degree's own range
  out = Mesh::check(p, 128, 8);
  REQUIRE(out.size() == 1);
  CHECK(out[0].path == "/parallel/dp");
}

TEST_CASE("mesh checks: product divides the cluster, EP from tp x cp x dp, TP inside a node") {
  ParallelSpec p;
  p.tp = 8;
  p.cp = 3;
  Problems out = Mesh::check(p, 128, 8);
  REQUIRE(out.size() == 1);
  CHECK(out[0].path == "/parallel");
  CHECK(out[0].message ==
        "tp x cp x pp x dp = 8 x 3 x 1 x 1 = 24 does not divide the cluster's 128 GPUs (16 "
        "nodes of 8); set cluster.nodes to a multiple of 3");
  p.cp = 2;
  p.ep = 3;
  out = Mesh::check(p, 128, 8);
  REQUIRE(out.size() == 1);
  CHECK(out[0].path == "/parallel/ep");
  p.ep = 16;
  CHECK(Mesh::check(p, 128, 8).empty());
  p.tp = 16;
  p.ep = 1;
  out = Mesh::check(p, 128, 8);
  REQUIRE(out.size() == 1);
  CHECK(out[0].path == "/parallel/tp");
  p.tp_across_nodes = true;
  CHECK(Mesh::check(p, 128, 8).empty());
  p = ParallelSpec{};
  p.tp = 0;
  CHECK(Mesh::check(p, 8, 8).front().path == "/parallel/tp");
  p = ParallelSpec{};
  p.order = {Dim::Tp, Dim::Tp, Dim::Pp, Dim::Dp};
  CHECK(Mesh::check(p, 8, 8).front().path == "/parallel/order");
}
