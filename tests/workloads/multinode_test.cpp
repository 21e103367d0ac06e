// Collectives across nodes: channels over every NIC, NCCL's latency model, tree, NVLS, and the
// pipelined two-tier all-to-all.
#include <algorithm>
#include <map>
#include <numeric>

#include "doctest_time.hpp"
#include "tests/approx.hpp"
#include "tests/gpu_ids.hpp"
#include "workloads/collectives/nccl_tuner.hpp"
#include "workloads/experiment/run.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using namespace hopsim::work;
namespace topo = hopsim::topo;

namespace {

// DGX H100 nodes as configs/clusters/h100-dgx.json has them.
topo::Spec h100(int nodes) {
  topo::Spec spec;
  spec.nodes = nodes;
  spec.nvlink = {Bandwidth::gigabytes_per_s(370), Time::ns(715), Bandwidth::gigabytes_per_s(450)};
  spec.nic = {Bandwidth::gigabytes_per_s(47), Time::ns(450), Bandwidth::gigabytes_per_s(50)};
  spec.gpu.name = "H100 SXM";
  return spec;
}

Experiment collective(int nodes, CollectiveOp op, CollectiveAlgorithm algorithm,
                      std::vector<Bytes> sizes) {
  Experiment e;
  e.cluster = h100(nodes);
  e.nccl.nvls_supported = true;
  e.nccl.nvls_efficiency = 0.74;
  CollectiveJob job;
  job.op = op;
  job.algorithm = algorithm;
  job.sizes = std::move(sizes);
  e.job = job;
  return e;
}

double busbw_GBps(const RunResult& r, std::size_t c, Bytes size, int n, double factor) {
  (void)n;
  return static_cast<double>(size.n) / r.cases[c].outcome.makespan.seconds() / 1e9 * factor;
}

// Bytes each NIC up-link of node 0 carried.
std::vector<double> nic_bytes(const RunResult& r) {
  std::map<std::string, double> by_link;
  const CaseResult& c = r.cases.front();
  for (std::size_t i = 0; i < c.plan.tasks().size(); ++i) {
    for (topo::LinkId l : c.outcome.route(static_cast<PlanTaskId>(i))) {
      const std::string& name = r.cluster->link(l).name;
      if (name.starts_with("n0.") && name.ends_with(".nic.up")) {
        by_link[name] += static_cast<double>(c.plan.tasks()[i].bytes.n);
      }
    }
  }
  std::vector<double> out;
  for (const auto& [name, bytes] : by_link) {
    out.push_back(bytes);
  }
  return out;
}

}  // namespace

TEST_CASE("across nodes a ring all-reduce runs a channel per NIC and reaches the node's NICs") {
  for (int nodes : {2, 4, 16}) {
    CAPTURE(nodes);
    const Bytes size{std::int64_t{8} << 30};
    const RunResult r =
        run(collective(nodes, CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, {size}));
    REQUIRE(r.ok());
    const std::vector<double> nics = nic_bytes(r);
    REQUIRE(nics.size() == 8);  // every NIC of the node carries data
    const auto [lo, hi] = std::minmax_element(nics.begin(), nics.end());
    CHECK(*hi / *lo <= 1.01);
    const int n = 8 * nodes;
    const double busbw = busbw_GBps(r, 0, size, n, 2.0 * (n - 1) / n);
    CHECK(busbw == hopsim::test::approx(std::min(8 * 47.0, 370.0)).epsilon(0.10));
  }
}

TEST_CASE("small collectives take NCCL's ring and tree latency, by protocol") {
  for (int nodes : {1, 2, 4, 16}) {
    for (Protocol p : kProtocols) {
      CAPTURE(nodes);
      CAPTURE(protocol_name(p));
      for (CollectiveAlgorithm a : {CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree}) {
        Experiment e = collective(nodes, CollectiveOp::AllReduce, a, {Bytes{8}, Bytes{1 << 20}});
        std::get<CollectiveJob>(e.job).protocol = p;
        const RunResult r = run(e);
        REQUIRE(r.ok());
        TunerInput in{NcclColl::AllReduce, 8 * nodes, nodes, Bytes{8}, e.cluster.nvlink.bandwidth,
                      Bandwidth{8 * e.cluster.nic.bandwidth.bytes_per_s}};
        for (const Prediction& model : nccl_predictions(e.nccl, in)) {
          const NcclAlgo same = a == CollectiveAlgorithm::Tree ? NcclAlgo::Tree : NcclAlgo::Ring;
          if (model.algorithm != same || model.protocol != p) {
            continue;
          }
          // 8 B: the latency alone. A ring's longest chain crosses a node boundary up to two
          // more times than NCCL's 2(nodes-1) steps count, so allow 15%.
          CHECK(r.cases[0].outcome.makespan.seconds() ==
                hopsim::test::approx(model.latency_s).epsilon(0.15));
          CHECK(r.cases[1].outcome.makespan.seconds() >= model.latency_s);
        }
      }
    }
  }
}

TEST_CASE("NVLS all-reduce in a node beats the ring, as NCCL's model says") {
  const Bytes size{std::int64_t{1} << 30};
  const RunResult nvls =
      run(collective(1, CollectiveOp::AllReduce, CollectiveAlgorithm::Nvls, {size}));
  const RunResult ring =
      run(collective(1, CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, {size}));
  REQUIRE(nvls.ok());
  REQUIRE(ring.ok());
  CHECK(nvls.cases[0].outcome.makespan < ring.cases[0].outcome.makespan);
  // Each GPU sends and receives S once, at 0.74 of 370 GB/s: busbw = 1.75 x 273.8 GB/s.
  CHECK(busbw_GBps(nvls, 0, size, 8, 1.75) ==
        hopsim::test::approx(1.75 * 370 * 0.74).epsilon(0.01));
  Experiment across = collective(2, CollectiveOp::AllReduce, CollectiveAlgorithm::Nvls, {size});
  CHECK(!run(across).ok());  // NVLS stays in one node
}

TEST_CASE("auto names NCCL's pick per size: trees and LL when small, rings when large") {
  Experiment e = collective(8, CollectiveOp::AllReduce, CollectiveAlgorithm::Auto,
                            {Bytes{8}, Bytes{std::int64_t{8} << 30}});
  std::get<CollectiveJob>(e.job).auto_protocol = true;
  const RunResult r = run(e);
  REQUIRE(r.ok());
  CHECK(r.cases[0].choice == "tree/ll");
  CHECK(r.cases[1].choice == "ring/simple");
}

TEST_CASE("two-tier: pieces never slow it down, EP8 has no InfiniBand, bytes are conserved") {
  for (int nodes : {1, 4}) {
    CAPTURE(nodes);
    Experiment e =
        collective(nodes, CollectiveOp::AllToAll, exchange_algorithm(EpAlgorithm::TwoTier), {});
    auto& job = std::get<CollectiveJob>(e.job);
    job.moe = MoeRouting{1024, 64, 8, 2, 1};
    job.token_bytes = Bytes{7168};
    job.sizes = {Bytes{1024 * 7168}};
    job.chunk_tokens = 0;  // store and forward
    const RunResult whole = run(e);
    job.chunk_tokens = 32;
    const RunResult pieces = run(e);
    REQUIRE(whole.ok());
    REQUIRE(pieces.ok());
    CHECK(pieces.cases[0].outcome.makespan <= whole.cases[0].outcome.makespan);
    CHECK(pieces.cases[0].summary.ib_bytes == whole.cases[0].summary.ib_bytes);
    CHECK(pieces.cases[0].summary.nvlink_bytes == whole.cases[0].summary.nvlink_bytes);
    if (nodes == 1) {
      CHECK(pieces.cases[0].summary.ib_bytes.n == 0);
      CHECK(pieces.cases[0].outcome.makespan == whole.cases[0].outcome.makespan);
    }
  }
}

TEST_CASE("two-tier: streamed pieces are the first piece, the rest, and the last piece") {
  const auto ranges = [](const std::vector<Collectives::Segment>& s) {
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (const Collectives::Segment& x : s) {
      out.emplace_back(x.from, x.size);
    }
    return out;
  };
  using Ranges = std::vector<std::pair<std::int64_t, std::int64_t>>;
  TwoTierOptions o;
  o.chunk_bytes = 3;
  const Collectives::Stages each = Collectives::stages(10, o);  // pieces 3, 3, 3, 1
  CHECK(ranges(each.first) == Ranges{{0, 3}, {3, 3}, {6, 3}, {9, 1}});
  CHECK(ranges(each.second) == ranges(each.first));
  o.pieces = Pieces::Streamed;
  const Collectives::Stages streamed = Collectives::stages(10, o);
  CHECK(ranges(streamed.first) == Ranges{{0, 3}, {3, 7}});
  CHECK(ranges(streamed.second) == Ranges{{0, 9}, {9, 1}});
  // Two pieces or one: streamed is each.
  CHECK(ranges(Collectives::stages(5, o).first) == Ranges{{0, 3}, {3, 2}});
  CHECK(ranges(Collectives::stages(5, o).second) == Ranges{{0, 3}, {3, 2}});
  CHECK(ranges(Collectives::stages(2, o).second) == Ranges{{0, 2}});
}

TEST_CASE("two-tier: streamed pieces move the same bytes as each piece, in about the same time") {
  for (bool combine : {false, true}) {
    CAPTURE(combine);
    Experiment e =
        collective(4, CollectiveOp::AllToAll, exchange_algorithm(EpAlgorithm::TwoTier), {});
    auto& job = std::get<CollectiveJob>(e.job);
    job.moe = MoeRouting{1024, 64, 8, 2, 1};
    job.token_bytes = Bytes{7168};
    job.sizes = {Bytes{1024 * 7168}};
    job.combine = combine;
    job.chunk_tokens = 32;
    const RunResult each = run(e);
    job.pieces = Pieces::Streamed;
    const RunResult streamed = run(e);
    REQUIRE(each.ok());
    REQUIRE(streamed.ok());
    const CaseResult& s = streamed.cases[0];
    const CaseResult& p = each.cases[0];
    CHECK(s.summary.ib_bytes == p.summary.ib_bytes);
    CHECK(s.summary.nvlink_bytes == p.summary.nvlink_bytes);
    CHECK(s.outcome.makespan.seconds() ==
          hopsim::test::approx(p.outcome.makespan.seconds()).epsilon(0.01));
    CHECK(s.outcome.flows * 3 < p.outcome.flows);
  }
}

TEST_CASE("MoE routing respects the node limit and the two-tier matrix conserves bytes") {
  const topo::Cluster cluster(h100(8));
  const std::vector<topo::GpuId> ranks = hopsim::test::first_gpus(64);
  for (std::int64_t limit : {1, 2, 4}) {
    CAPTURE(limit);
    const TwoTierMatrix m = route_tokens(ranks, cluster, MoeRouting{256, 256, 8, limit, 3},
                                         Bytes{100});
    for (std::size_t i = 0; i < m.gpu.n; ++i) {
      std::int64_t node_copies = 0;
      std::int64_t selections = 0;
      for (std::size_t k = 0; k < m.nodes; ++k) {
        node_copies += m.to_node[i * m.nodes + k];
      }
      for (std::size_t j = 0; j < m.gpu.n; ++j) {
        selections += m.selections.at(i, j);
        CHECK(m.selections.at(i, j) >= m.gpu.at(i, j));  // dedup per GPU never adds
      }
      CHECK(selections == 256 * 8 * 100);     // every (token, expert) selection counted once
      CHECK(node_copies <= 256 * limit * 100);  // at most `limit` nodes per token
    }
  }
}
