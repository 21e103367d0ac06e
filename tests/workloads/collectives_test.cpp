// Collectives: closed forms on uniform topologies, conservation, nccl-tests conversions.
#include <algorithm>
#include <map>
#include <numeric>
#include <string>

#include "doctest_time.hpp"
#include "tests/approx.hpp"
#include "tests/gpu_ids.hpp"
#include "workloads/jobs/collective_job.hpp"
#include "workloads/plan/summary.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using namespace hopsim::work;
namespace topo = hopsim::topo;

namespace {

const Bandwidth kB = Bandwidth::gigabytes_per_s(100);
const HopLatency kLat{Time::ns(5'000), Time::ns(700), Time::ns(3'000)};

// NCCL's model with kLat as the Simple ring latencies.
NcclModel model_of(HopLatency latency) {
  NcclModel m;
  m.ring[static_cast<std::size_t>(Protocol::Simple)] = latency;
  return m;
}

const NcclModel kModel = model_of(kLat);

// One node of n GPUs behind a non-blocking switch: a uniform topology.
topo::Cluster switch_of(int n) {
  topo::Spec spec;
  spec.nodes = 1;
  spec.gpus_per_node = n;
  spec.nvlink = {kB, Time::ns(100)};
  return topo::Cluster(spec);
}

// Two nodes of 8 GPUs, H100's achievable NVLink and one 47 GB/s NIC per GPU.
topo::Cluster two_nodes() {
  topo::Spec spec;
  spec.nodes = 2;
  spec.nvlink = {Bandwidth::gigabytes_per_s(370), Time::ns(700)};
  spec.nic = {Bandwidth::gigabytes_per_s(47), Time::ns(450)};
  return topo::Cluster(spec);
}

std::vector<int> iota(int n) {
  std::vector<int> r(static_cast<std::size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

CollectiveJob make_job(CollectiveOp op, CollectiveAlgorithm algorithm, std::vector<int> ranks) {
  CollectiveJob job;
  job.op = op;
  job.algorithm = algorithm;
  job.ranks = std::move(ranks);
  return job;
}

// The job environment of a collective alone on `cluster`: no model, a 1-rank mesh.
struct Env {
  explicit Env(const topo::Cluster& cluster)
      : mesh(ParallelSpec{}), job{cluster.spec(), kModel, mesh}, build{job, cluster} {}
  Mesh mesh;
  JobEnv job;
  BuildEnv build;
};

Plan build_collective_plan(const topo::Cluster& cluster, const CollectiveJob& job, Bytes size) {
  const Env env(cluster);
  return hopsim::work::build_collective_plan(env.build, job, size);
}

std::int64_t flat_ib_bytes(const topo::Cluster& cluster, const CollectiveJob& job, Bytes size) {
  const Env env(cluster);
  return hopsim::work::flat_ib_bytes(env.build, job, size);
}

Time run(const topo::Cluster& cluster, const CollectiveJob& job, Bytes size) {
  const Plan plan = build_collective_plan(cluster, job, size);
  const Outcome out = simulate(cluster, plan);
  CHECK(out.stuck.empty());
  return out.makespan;
}

std::vector<std::int64_t> received(const Plan& plan, int n) {
  std::vector<std::int64_t> r(static_cast<std::size_t>(n), 0);
  for (const PlanTask& t : plan.tasks()) {
    if (t.kind == PlanTaskKind::Flow) {
      r[t.dst.index()] += t.bytes.n;
    }
  }
  return r;
}

}  // namespace

TEST_CASE("ring collectives on a switch take steps x (a + ceil(S/n)/B) plus the base latency") {
  for (int n : {2, 3, 8, 64}) {
    const topo::Cluster cluster = switch_of(n);
    for (std::int64_t s : {1LL, 1LL << 20, 3LL << 30}) {
      CAPTURE(n);
      CAPTURE(s);
      const Time step = kLat.nvlink_hop + transfer_time(Bytes{(s + n - 1) / n}, kB);
      CollectiveJob job = make_job(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, iota(n));
      CHECK(run(cluster, job, Bytes{s}) == kLat.base + (n - 1) * step);
      job.op = CollectiveOp::ReduceScatter;
      CHECK(run(cluster, job, Bytes{s}) == kLat.base + (n - 1) * step);
      job.op = CollectiveOp::AllReduce;
      CHECK(run(cluster, job, Bytes{s}) == kLat.base + 2 * (n - 1) * step);
    }
  }
}

TEST_CASE("a streamed ring: n flows, the stepped ring's time on a switch (to the picosecond)") {
  for (int n : {2, 3, 8, 64}) {
    const topo::Cluster cluster = switch_of(n);
    for (std::int64_t s : {1LL, 1LL << 20, 3LL << 30}) {
      CAPTURE(n);
      CAPTURE(s);
      const std::int64_t piece = (s + n - 1) / n;
      for (const CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllReduce}) {
        const int steps = op == CollectiveOp::AllReduce ? 2 * (n - 1) : n - 1;
        CollectiveJob job = make_job(op, CollectiveAlgorithm::Ring, iota(n));
        const Time stepped = run(cluster, job, Bytes{s});
        job.streamed_rings = true;
        const Plan plan = build_collective_plan(cluster, job, Bytes{s});
        std::int64_t flows = 0;
        for (const PlanTask& t : plan.tasks()) {
          flows += t.kind == PlanTaskKind::Flow ? 1 : 0;
        }
        CHECK(flows == n);
        const Time streamed = run(cluster, job, Bytes{s});
        CHECK(streamed ==
              kLat.base + transfer_time(Bytes{piece * steps}, kB) + steps * kLat.nvlink_hop);
        // Rounding: one transfer rounded up to the picosecond instead of `steps` of them.
        CHECK(streamed <= stepped);
        CHECK(stepped - streamed <= Time::ps(steps));
      }
    }
  }
}

// A ring of `steps` steps in k pieces of t each, latency a per hop (collectives.hpp): the
// first piece's chain pays every hop latency, and the link is busy from then on or waits.
Time chunked_ring(int steps, int k, Time a, Time t) {
  const Time chain = (steps - 1) * (a + t) + k * t;
  const Time busy = steps * k * t;
  return kLat.base + a + std::max(chain, busy);
}

TEST_CASE("a chunked ring pipelines: a + max((steps-1)(a+t) + k t, steps k t)") {
  for (int n : {2, 3, 8}) {
    for (int k : {1, 2, 5, 64}) {
      for (std::int64_t s : {3LL << 20, 3LL << 28}) {
        const topo::Cluster cluster = switch_of(n);
        CAPTURE(n);
        CAPTURE(k);
        CAPTURE(s);
        const std::int64_t piece = ((s + n - 1) / n + k - 1) / k;
        const Time t = transfer_time(Bytes{piece}, kB);
        CollectiveJob job = make_job(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, iota(n));
        job.chunks = k;
        CHECK(run(cluster, job, Bytes{s}) == chunked_ring(n - 1, k, kLat.nvlink_hop, t));
        job.op = CollectiveOp::AllReduce;
        CHECK(run(cluster, job, Bytes{s}) == chunked_ring(2 * (n - 1), k, kLat.nvlink_hop, t));
      }
    }
  }
}

TEST_CASE("more chunks never cost more than one piece's time plus the latencies") {
  // Latency-bound (1 MiB on 8 GPUs): chunks overlap their hop latencies instead of adding them.
  const topo::Cluster cluster = switch_of(8);
  CollectiveJob job = make_job(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, iota(8));
  const Time one = run(cluster, job, Bytes{1 << 20});
  for (int k : {2, 4, 16}) {
    job.chunks = k;
    CHECK(run(cluster, job, Bytes{1 << 20}) <= one + transfer_time(Bytes{(1 << 20) / 8}, kB));
  }
}

TEST_CASE("all-to-all and direct all-gather through one switch take a + (n-1)(S/n)/B") {
  for (int n : {2, 3, 8, 64}) {
    const topo::Cluster cluster = switch_of(n);
    for (std::int64_t s : {64LL << 10, 1LL << 30}) {
      CAPTURE(n);
      CAPTURE(s);
      const Time expected =
          kLat.base + kLat.nvlink_hop + transfer_time(Bytes{(n - 1) * (s / n)}, kB);
      CollectiveJob job =
          make_job(CollectiveOp::AllToAll, exchange_algorithm(EpAlgorithm::Flat), iota(n));
      const Time t = run(cluster, job, Bytes{s});
      CHECK(std::llabs((t - expected).count_ps()) <= 1);
      if (s % n == 0) {
        job.op = CollectiveOp::AllGather;
        job.algorithm = CollectiveAlgorithm::Direct;
        CHECK(std::llabs((run(cluster, job, Bytes{s}) - expected).count_ps()) <= 1);
      }
    }
  }
}

TEST_CASE("a two-node all-to-all is limited by each GPU's NIC") {
  // 2 nodes x 8 GPUs, S per rank: a NIC carries the 8 flows of S/16 to its rail peer
  // (PXN routes cross-rail data over NVLink first), so flat takes t = a + (S/2) / B_nic.
  // Two-tier in one piece (no moe, chunks 1) stores and forwards: the relay then sends the
  // 7 S/16 that are for the other GPUs of its node over its NVLink, 7 S/16 / B_nvl more.
  const topo::Cluster cluster = two_nodes();
  const Bytes s{1LL << 30};
  for (auto algorithm :
       {exchange_algorithm(EpAlgorithm::Flat), exchange_algorithm(EpAlgorithm::TwoTier)}) {
    CollectiveJob job = make_job(CollectiveOp::AllToAll, algorithm, iota(16));
    const Time t = run(cluster, job, s);
    const double forward = algorithm == exchange_algorithm(EpAlgorithm::TwoTier)
                               ? static_cast<double>(s.n / 16 * 7) / 370e9
                               : 0;
    const double expected =
        (kLat.base + kLat.net_hop).seconds() + static_cast<double>(s.n / 2) / 47e9 + forward;
    CHECK(t.seconds() == hopsim::test::approx(expected).epsilon(0.001));
  }
}

TEST_CASE("DeepEP's low-latency exchange: the kernel's own time per call, then its messages") {
  // GPU 0 of node 0 and GPU 0 of node 1 exchange S/2 each way through their NICs: the call's
  // time, then the message over the NIC and the NIC route's latency; combine pays its own.
  const topo::Cluster cluster = two_nodes();
  const Bytes s{64LL << 20};
  const Time route = cluster.latency(cluster.nic_route(topo::GpuId{0}, topo::GpuId{8}).span());
  const Time message = transfer_time(Bytes{s.n / 2}, Bandwidth::gigabytes_per_s(47)) + route;
  LibraryConstants libraries;
  DeepEpModel& deepep = libraries.deepep;
  deepep.ll_dispatch_call = Time::ns(11'460);
  deepep.ll_combine_call = Time::ns(27'580);
  Env env(cluster);
  CollectiveJob job =
      make_job(CollectiveOp::AllToAll, exchange_algorithm(EpAlgorithm::LowLatency), {0, 8});
  const auto time = [&](bool combine) {
    job.combine = combine;
    const Plan plan = hopsim::work::build_collective_plan(env.build, job, s);
    return simulate(cluster, plan).makespan;
  };
  CHECK(std::llabs((time(false) - message).count_ps()) <= 1);  // no DeepEP figures: none
  env.job.libraries = &libraries;
  CHECK(std::llabs((time(false) - (deepep.ll_dispatch_call + message)).count_ps()) <= 1);
  CHECK(std::llabs((time(true) - (deepep.ll_combine_call + message)).count_ps()) <= 1);
}

TEST_CASE("DeepEP normal's fixed costs per call: own tasks before a fresh dispatch, added whole") {
  // GPU 0 sends S to GPU 8 and back (two nodes) or to GPU 1 (one node). A fresh dispatch pays
  // the layout kernel and, across nodes, the notify first, each once per rank as its own
  // labelled task: its time grows by exactly layout (+ notify); a combine, or a dispatch that
  // reuses its layout (backward), pays none.
  const topo::Cluster cluster = two_nodes();
  LibraryConstants libraries;
  libraries.deepep.layout_call = Time::ns(45'000);
  libraries.deepep.notify_call = Time::ns(136'540);
  const auto run = [&](int peer, ExchangeOp op, bool fresh, std::map<std::string, int>* count) {
    const std::vector<topo::GpuId> ranks = {topo::GpuId{0}, topo::GpuId{peer}};
    const TwoTierMatrix m =
        Collectives::without_dedup(ranks, cluster, ByteMatrix{2, {0, 8 << 20, 8 << 20, 0}});
    Plan plan;
    Collectives c(plan, cluster, kModel);
    add_exchange(c, EpAlgorithm::TwoTier,
                 Exchange{ranks, m, op, 0, Pieces::Each, 0, libraries, {}, fresh});
    for (const PlanTask& t : plan.tasks()) {
      if (count != nullptr) {
        ++(*count)[plan.labels()[t.label]];
      }
    }
    return simulate(cluster, plan).makespan;
  };
  std::map<std::string, int> across;
  const Time fresh = run(8, ExchangeOp::Dispatch, true, &across);
  const Time reused = run(8, ExchangeOp::Dispatch, false, nullptr);
  CHECK(across["deepep_layout"] == 2);
  CHECK(across["deepep_notify"] == 2);
  CHECK(std::llabs((fresh - reused - Time::ns(45'000 + 136'540)).count_ps()) <= 1);
  std::map<std::string, int> within;
  const Time local = run(1, ExchangeOp::Dispatch, true, &within);
  CHECK(within["deepep_layout"] == 2);
  CHECK(within.count("deepep_notify") == 0);  // no notify is priced within one node
  CHECK(std::llabs((local - run(1, ExchangeOp::Dispatch, false, nullptr) - Time::ns(45'000))
                       .count_ps()) <= 1);
  CHECK(run(8, ExchangeOp::Combine, true, nullptr) == run(8, ExchangeOp::Combine, false, nullptr));
}

namespace {

// Every row priced by a data file (pplx-kernels, NCCL's all-to-all) with the costs `r`.
void give_files(LibraryConstants& k, const LibraryRates& r) {
  for (const EpAlgorithmRow& row : kEpAlgorithms) {
    if (!row.data_file.empty()) {
      k.files.files.push_back({std::string(row.data_file), r, {}});
    }
  }
}

}  // namespace

TEST_CASE("a library a data file prices: floor + bytes / rate, on each path and link kind") {
  // Two GPUs exchange S/2 each way: within a node over NVLink (370 GB/s), across nodes through
  // their NICs (47 GB/s). One exchange takes the path's floor for its op, then S/2 at the
  // library's rate for that link kind, then the route's latency:
  //   t = floor + (S/2) / rate + route latency
  // Through the NICs the rate is min(nic, remote ranks x nic_pair); a rate above the link's own
  // moves at the link's (never faster than the links).
  const topo::Cluster cluster = two_nodes();
  const Bytes s{64LL << 20};
  LibraryRates rates;
  rates.intranode[0] = {Time::ns(41'600), Bandwidth::gigabytes_per_s(150), {}, {}};
  rates.intranode[1] = {Time::ns(41'700), Bandwidth::gigabytes_per_s(200), {}, {}};
  // Dispatch: one remote rank at 20 GB/s per pair, under the NIC rate of 30: 20.
  rates.internode[0] = {Time::ns(121'000), Bandwidth::gigabytes_per_s(150),
                        Bandwidth::gigabytes_per_s(30), Bandwidth::gigabytes_per_s(20)};
  // Combine: no per-pair rate, 100 GB/s, above the NIC's 47: the NIC's.
  rates.internode[1] = {Time::ns(58'600), Bandwidth::gigabytes_per_s(150),
                        Bandwidth::gigabytes_per_s(100), {}};
  LibraryConstants libraries;
  give_files(libraries, rates);
  Env env(cluster);
  env.job.libraries = &libraries;
  const auto route = [&](int dst) {
    return cluster.latency(cluster.route(topo::GpuId{0}, topo::GpuId{dst}).span());
  };
  for (const EpAlgorithm a : {EpAlgorithm::PplxKernels, EpAlgorithm::NcclAllToAll}) {
    CAPTURE(ep_algorithm_name(a));
    CHECK(missing_constants(a, libraries).empty());
    const auto time = [&](int dst, bool combine) {
      CollectiveJob job = make_job(CollectiveOp::AllToAll, exchange_algorithm(a), {0, dst});
      job.combine = combine;
      return simulate(cluster, hopsim::work::build_collective_plan(env.build, job, s)).makespan;
    };
    const Bytes half{s.n / 2};
    // Within 1 ns: the flow moves bytes / (rate / link) at the link's rate, in doubles.
    const auto near = [](Time x, Time y) { return std::llabs((x - y).count_ps()) <= 1'000; };
    CHECK(near(time(1, false), rates.intranode[0].floor +
                                   transfer_time(half, rates.intranode[0].nvlink) + route(1)));
    CHECK(near(time(1, true), rates.intranode[1].floor +
                                  transfer_time(half, rates.intranode[1].nvlink) + route(1)));
    CHECK(near(time(8, false), rates.internode[0].floor +
                                   transfer_time(half, Bandwidth::gigabytes_per_s(20)) +
                                   route(8)));
    CHECK(near(time(8, true), rates.internode[1].floor +
                                  transfer_time(half, Bandwidth::gigabytes_per_s(47)) + route(8)));
  }
  // The floor holds each rank's communication stream (a Hold, counted as its communication,
  // exposed where nothing computes), and every flow starts once its two ranks' floors passed.
  {
    CollectiveJob job = make_job(CollectiveOp::AllToAll, exchange_algorithm(EpAlgorithm::PplxKernels),
                                 {0, 8});
    const Plan plan = hopsim::work::build_collective_plan(env.build, job, s);
    const Outcome out = simulate(cluster, plan);
    int floors = 0;
    for (std::size_t i = 0; i < plan.tasks().size(); ++i) {
      const PlanTask& t = plan.tasks()[i];
      if (t.kind == PlanTaskKind::Hold) {
        ++floors;
        CHECK(t.duration == rates.internode[0].floor);
        CHECK(t.stream == kCommStream);
        CHECK(out.times[i].start == Time{});
      } else if (t.kind == PlanTaskKind::Flow) {
        CHECK(out.times[i].start == rates.internode[0].floor);
      }
    }
    CHECK(floors == 2);
    const Summary summary = summarize(cluster, plan, out);
    for (const std::size_t g : {std::size_t{0}, std::size_t{8}}) {
      CHECK(summary.ranks.at(g).comm >= rates.internode[0].floor);
      CHECK(summary.ranks.at(g).exposed == summary.ranks.at(g).comm);
    }
  }
  // Without its data file's costs for the GPU, a row says why; the other rows need none.
  LibraryConstants none;
  none.files.files.push_back({"pplx_kernels", std::nullopt, "no costs for \"H200 SXM\""});
  CHECK(missing_constants(EpAlgorithm::PplxKernels, none).find("H200 SXM") != std::string::npos);
  CHECK(missing_constants(EpAlgorithm::NcclAllToAll, none).find("did not read") !=
        std::string::npos);
  CHECK(missing_constants(EpAlgorithm::TwoTier, none).empty());
}

TEST_CASE("a relaying library a data file prices: once per node through the NICs, then NVLink") {
  // Ranks {0, 1} on node 0 and {8, 9} on node 1, S/4 per pair. HybridEP and UCCL-EP send GPU
  // 0's bytes for node 1 (S/2) once, to its same-rail GPU 8, which forwards GPU 9's share over
  // NVLink: through each NIC S/2 at min(nic, other nodes x nic_pair) = min(30, 1 x 20) = 20,
  // where pplx-kernels sends S/4 to each of two remote ranks at min(30, 2 x 20) = 30. NVLink
  // (S/4 own plus S/4 forwarded, at 150) does not bind:
  //   relayed:  t = floor + (S/2) / 20 + route latency
  const topo::Cluster cluster = two_nodes();
  const Bytes s{64LL << 20};
  LibraryRates rates;
  rates.intranode[0] = {Time::ns(40'000), Bandwidth::gigabytes_per_s(150), {}, {}};
  rates.intranode[1] = rates.intranode[0];
  rates.internode[0] = {Time::ns(100'000), Bandwidth::gigabytes_per_s(150),
                        Bandwidth::gigabytes_per_s(30), Bandwidth::gigabytes_per_s(20)};
  rates.internode[1] = rates.internode[0];
  LibraryConstants libraries;
  give_files(libraries, rates);
  Env env(cluster);
  env.job.libraries = &libraries;
  const Time route = cluster.latency(cluster.route(topo::GpuId{0}, topo::GpuId{8}).span());
  const auto time = [&](EpAlgorithm a, bool combine) {
    CollectiveJob job = make_job(CollectiveOp::AllToAll, exchange_algorithm(a), {0, 1, 8, 9});
    job.combine = combine;
    return simulate(cluster, hopsim::work::build_collective_plan(env.build, job, s)).makespan;
  };
  const auto near = [](Time x, Time y) { return std::llabs((x - y).count_ps()) <= 1'000; };
  const Bytes half{s.n / 2};
  for (const EpAlgorithm a : {EpAlgorithm::HybridEp, EpAlgorithm::UcclEp}) {
    CAPTURE(ep_algorithm_name(a));
    CHECK(missing_constants(a, libraries).empty());
    for (const bool combine : {false, true}) {
      CHECK(near(time(a, combine), rates.internode[0].floor +
                                       transfer_time(half, Bandwidth::gigabytes_per_s(20)) +
                                       route));
    }
  }
  // pplx-kernels' flow to GPU 9 leaves its rail: its route's latency (through the spine) ends it.
  const Time cross = cluster.latency(cluster.route(topo::GpuId{0}, topo::GpuId{9}).span());
  CHECK(near(time(EpAlgorithm::PplxKernels, false),
             rates.internode[0].floor + transfer_time(half, Bandwidth::gigabytes_per_s(30)) +
                 std::max(route, cross)));
  LibraryConstants none;
  none.files.files.push_back({"uccl_ep", std::nullopt, "no costs for \"H100 SXM\""});
  CHECK(missing_constants(EpAlgorithm::UcclEp, none).find("H100 SXM") != std::string::npos);
  CHECK(missing_constants(EpAlgorithm::HybridEp, none).find("did not read") != std::string::npos);
}

TEST_CASE("a library's SMs bound its exchange: (pairs x sm_pair + bytes / sm_rate) / SMs") {
  // The relaying exchange above (ranks {0, 1} on node 0, {8, 9} on node 1, S/4 per pair), now
  // with what the library's SMs move stated. Each rank's SMs handle the bytes it sends to every
  // node, its own included (X: S/4 to its node's other rank, S/2 to the other node), X / token
  // (token, node) pairs; on k SMs its
  // exchange lasts at least  (X / token x pair + X / rate) / k  from its start. Past the links'
  // time (floor + (S/2) / 20 + route latency) more SMs change nothing: the curve saturates.
  const topo::Cluster cluster = two_nodes();
  const Bytes s{64LL << 20};
  LibraryRates rates;
  rates.internode[0] = {Time::ns(100'000), Bandwidth::gigabytes_per_s(150),
                        Bandwidth::gigabytes_per_s(30), Bandwidth::gigabytes_per_s(20)};
  rates.internode[0].sm_pair = Time::ns(500);
  rates.internode[0].sm_rate = Bandwidth::gigabytes_per_s(10);
  rates.internode[1] = rates.internode[0];
  rates.sms = 8;
  LibraryConstants libraries;
  give_files(libraries, rates);
  const std::vector<topo::GpuId> ranks{topo::GpuId{0}, topo::GpuId{1}, topo::GpuId{8},
                                       topo::GpuId{9}};
  const TwoTierMatrix m = Collectives::without_dedup(ranks, cluster, Collectives::uniform(4, s));
  const std::int64_t token = 7168 * 2;
  const auto time = [&](std::int64_t sms, std::int64_t token_size) {
    Plan plan;
    Collectives c(plan, cluster, kModel);
    Exchange x{ranks, m, ExchangeOp::Dispatch, 0, Pieces::Each, sms, libraries, {}};
    x.token_size = token_size;
    add_exchange(c, EpAlgorithm::HybridEp, x);
    return simulate(cluster, plan).makespan;
  };
  double sent = 0;  // rank 0's bytes to each node, its own included
  for (std::size_t k = 0; k < m.nodes; ++k) {
    sent += static_cast<double>(m.to_node[k]);
  }
  CHECK(sent == hopsim::test::approx(0.75 * static_cast<double>(s.n)));
  const auto bound = [&](double sms, double pair_s) {
    return Time::from_seconds((sent / static_cast<double>(token) * pair_s + sent / 10e9) / sms);
  };
  const auto near = [](Time x, Time y) { return std::llabs((x - y).count_ps()) <= 1'000; };
  CHECK(near(time(1, token), bound(1, 500e-9)));
  CHECK(near(time(2, token), bound(2, 500e-9)));
  CHECK(near(time(2, 0), bound(2, 0)));  // no token size: the bytes alone
  const Time route = cluster.latency(cluster.route(topo::GpuId{0}, topo::GpuId{8}).span());
  const Time links = rates.internode[0].floor +
                     transfer_time(Bytes{s.n / 2}, Bandwidth::gigabytes_per_s(20)) + route;
  CHECK(bound(8, 500e-9) < links);
  CHECK(near(time(8, token), links));
  CHECK(time(0, token) == time(8, token));  // comm_sms 0: the library's own 8
  CHECK(time(64, token) == time(8, token));
}

TEST_CASE("DeepEP's intranode kernels: SMs x per-SM rate, saturating at the links' share") {
  // One node of 8 on a switch at B: a uniform two-tier exchange sends (n-1) S/n per GPU up-link,
  // every byte as 1/e of itself, e = min(share, SMs x per_sm / B): t(e) = L + X / e, so
  // (t(e1) - t(1)) / (t(e2) - t(1)) = (1/e1 - 1) / (1/e2 - 1); past saturation t stays put.
  // Internode forwarding (nvlink_efficiency) does not apply within one node.
  const topo::Cluster cluster = switch_of(8);
  const Bytes s{64LL << 20};
  LibraryConstants libraries;
  DeepEpModel& deepep = libraries.deepep;
  deepep.nvlink_efficiency = 0.3;
  deepep.intranode_GBps_per_sm = 5;
  deepep.intranode_link_share = 0.9;
  deepep.nvlink_GBps = kB.bytes_per_s / 1e9;
  CHECK(deepep.intranode_efficiency(8) == hopsim::test::approx(0.4));
  CHECK(deepep.intranode_efficiency(16) == hopsim::test::approx(0.8));
  CHECK(deepep.intranode_efficiency(32) == hopsim::test::approx(0.9));
  CHECK(deepep.intranode_efficiency(0) == hopsim::test::approx(0.9));  // DeepEP's own 24
  Env env(cluster);
  CollectiveJob job =
      make_job(CollectiveOp::AllToAll, exchange_algorithm(EpAlgorithm::TwoTier), iota(8));
  // No DeepEP figures: the links' rate.
  const Time links = simulate(cluster, hopsim::work::build_collective_plan(env.build, job, s)).makespan;
  env.job.libraries = &libraries;
  const auto extra = [&](std::int64_t sms) {
    job.comm_sms = sms;
    const Plan plan = hopsim::work::build_collective_plan(env.build, job, s);
    return (simulate(cluster, plan).makespan - links).seconds();
  };
  CHECK(extra(8) / extra(16) == hopsim::test::approx((1 / 0.4 - 1) / (1 / 0.8 - 1)));
  CHECK(extra(24) == hopsim::test::approx(extra(32)));
  CHECK(extra(32) == hopsim::test::approx(extra(0)));
}

TEST_CASE("collectives deliver what their definitions say") {
  const int n = 8;
  const topo::Cluster cluster = switch_of(n);
  const Bytes s{8 << 20};
  CollectiveJob job = make_job(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, iota(n));
  for (std::int64_t r : received(build_collective_plan(cluster, job, s), n)) {
    CHECK(r == (n - 1) * (s.n / n));  // every other rank's piece
  }
  job.op = CollectiveOp::AllReduce;
  for (std::int64_t r : received(build_collective_plan(cluster, job, s), n)) {
    CHECK(r == 2 * (n - 1) * (s.n / n));
  }
  job.op = CollectiveOp::AllToAll;
  job.algorithm = exchange_algorithm(EpAlgorithm::Flat);
  for (std::int64_t r : received(build_collective_plan(cluster, job, s), n)) {
    CHECK(r == (n - 1) * (s.n / n));
  }
}

TEST_CASE("two-tier moves the same data as flat and never more InfiniBand bytes") {
  topo::Spec spec;
  spec.nodes = 4;
  const topo::Cluster cluster(spec);
  CollectiveJob job =
      make_job(CollectiveOp::AllToAll, exchange_algorithm(EpAlgorithm::TwoTier), iota(32));
  job.moe = MoeRouting{512, 64, 8, 3, 1};
  job.token_bytes = Bytes{7168};
  const Plan two = build_collective_plan(cluster, job, Bytes{});
  job.algorithm = exchange_algorithm(EpAlgorithm::Flat);
  const Plan flat = build_collective_plan(cluster, job, Bytes{});
  const Summary s2 = summarize(cluster, two, simulate(cluster, two));
  const Summary s1 = summarize(cluster, flat, simulate(cluster, flat));
  CHECK(s1.ib_bytes.n == flat_ib_bytes(cluster, job, Bytes{}));
  CHECK(s2.ib_bytes.n < s1.ib_bytes.n);  // tokens for several GPUs of a node cross once
  // What each GPU finally holds is the same: count flows that end at their destination.
  const TwoTierMatrix m =
      route_tokens(hopsim::test::first_gpus(32), cluster, *job.moe, job.token_bytes);
  std::int64_t wanted = 0;
  for (std::size_t i = 0; i < m.gpu.n; ++i) {
    for (std::size_t j = 0; j < m.gpu.n; ++j) {
      wanted += i == j ? 0 : m.gpu.at(i, j);
    }
  }
  const auto flat_total = received(flat, 32);
  CHECK(std::accumulate(flat_total.begin(), flat_total.end(), std::int64_t{0}) == wanted);
  // Uniform data without duplicates: two-tier crosses IB with exactly the flat bytes.
  job.moe.reset();
  job.algorithm = exchange_algorithm(EpAlgorithm::TwoTier);
  const Plan uniform = build_collective_plan(cluster, job, Bytes{1 << 20});
  CHECK(summarize(cluster, uniform, simulate(cluster, uniform)).ib_bytes.n ==
        flat_ib_bytes(cluster, job, Bytes{1 << 20}));
}

TEST_CASE("busbw factors follow nccl-tests") {
  CHECK(busbw_factor(CollectiveOp::AllReduce, 8) == hopsim::test::approx(1.75));
  CHECK(busbw_factor(CollectiveOp::AllGather, 8) == hopsim::test::approx(0.875));
  CHECK(busbw_factor(CollectiveOp::ReduceScatter, 4) == hopsim::test::approx(0.75));
  CHECK(busbw_factor(CollectiveOp::AllToAll, 16) == hopsim::test::approx(15.0 / 16));
  CHECK(busbw_factor(CollectiveOp::SendRecv, 2) == hopsim::test::approx(1.0));
}

namespace {

// The pair bytes of a 16-rank exchange: all alike, or skewed so that no two GPUs send or
// receive alike (a dropped or misdirected flow shows in some GPU's balance).
ByteMatrix exchange_bytes(bool skewed) {
  const std::size_t n = 16;
  ByteMatrix m{n, std::vector<std::int64_t>(n * n, 0)};
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const auto k = static_cast<std::int64_t>(3 * i + j) % 5;
      m.bytes[i * n + j] = i == j   ? 0
                           : skewed ? 4096 * (1 + k) + 64 * static_cast<std::int64_t>(i)
                                    : 8192;
    }
  }
  return m;
}

// Most InfiniBand pieces of one (source, node) pair of `chunk` bytes each.
double pieces_per_pair(const TwoTierMatrix& m, std::int64_t chunk) {
  std::int64_t most = 0;
  for (const std::int64_t bytes : m.to_node) {
    most = std::max(most, (bytes + chunk - 1) / chunk);
  }
  return static_cast<double>(most);
}

}  // namespace

TEST_CASE("every EP exchange row: within its flow bound, every GPU gets what it is sent") {
  // On two nodes of 8, each row's builder runs one dispatch and one combine (chunked rows in
  // pieces of 8 KiB, each and streamed), with DeepEP's constants given. Per GPU, the flows in
  // minus the flows out (a relay forwards what it receives for others) equal what the matrix
  // brings it minus what it sends, and it receives at least its share.
  const topo::Cluster cluster = two_nodes();
  const std::vector<topo::GpuId> ranks = hopsim::test::first_gpus(16);
  LibraryConstants libraries;
  libraries.deepep.nvlink_efficiency = 0.8;
  libraries.deepep.ll_dispatch_call = Time::ns(5'000);
  libraries.deepep.ll_combine_call = Time::ns(7'000);
  LibraryRates paced;
  paced.intranode = {PathCost{Time::ns(3'000), Bandwidth::gigabytes_per_s(150), {}, {}},
                     PathCost{Time::ns(3'000), Bandwidth::gigabytes_per_s(200), {}, {}}};
  paced.internode = {PathCost{Time::ns(9'000), Bandwidth::gigabytes_per_s(150),
                              Bandwidth::gigabytes_per_s(30), Bandwidth::gigabytes_per_s(5)},
                     PathCost{Time::ns(6'000), Bandwidth::gigabytes_per_s(200),
                              Bandwidth::gigabytes_per_s(40), {}}};
  give_files(libraries, paced);
  for (const EpAlgorithmRow& row : kEpAlgorithms) {
    for (const ExchangeOp op : {ExchangeOp::Dispatch, ExchangeOp::Combine}) {
      for (const bool skewed : {false, true}) {
        for (const Pieces pieces : {Pieces::Each, Pieces::Streamed}) {
          if (!implements(row, op) || (!row.chunked && pieces == Pieces::Streamed)) {
            continue;
          }
          CAPTURE(row.name);
          CAPTURE(static_cast<int>(op));
          CAPTURE(skewed);
          CAPTURE(pieces_name(pieces));
          const TwoTierMatrix m =
              Collectives::without_dedup(ranks, cluster, exchange_bytes(skewed));
          const std::int64_t chunk = row.chunked ? 8192 : 0;
          Plan plan;
          Collectives c(plan, cluster, kModel);
          add_exchange(c, row.algorithm,
                       Exchange{ranks, m, op, chunk, pieces, 0, libraries, {}});
          std::vector<std::int64_t> in(16, 0);
          std::vector<std::int64_t> out(16, 0);
          double flows = 0;
          for (const PlanTask& t : plan.tasks()) {
            if (t.kind == PlanTaskKind::Flow) {
              in[t.dst.index()] += t.bytes.n;
              out[t.src.index()] += t.bytes.n;
              ++flows;
            }
          }
          const double pairs = row.chunked ? pieces_per_pair(m, chunk) : 1;
          CHECK(flows <= row.flows(ExchangeShape{16, 8, pairs, pieces == Pieces::Streamed}));
          CHECK(simulate(cluster, plan).stuck.empty());
          if (row.gathers_all) {
            continue;  // every rank's tokens to every rank (its own test case below)
          }
          for (std::size_t g = 0; g < 16; ++g) {
            std::int64_t sends = 0;
            std::int64_t gets = 0;
            for (std::size_t k = 0; k < 16; ++k) {
              sends += op == ExchangeOp::Dispatch ? m.gpu.at(g, k) : m.gpu.at(k, g);
              gets += op == ExchangeOp::Dispatch ? m.gpu.at(k, g) : m.gpu.at(g, k);
            }
            CHECK(in[g] - out[g] == gets - sends);
            CHECK(in[g] >= gets);
          }
          CHECK(simulate(cluster, plan).stuck.empty());
        }
      }
    }
  }
}

namespace {

// What each of `ranks` sends in `plan`'s flows.
std::vector<std::int64_t> sent_per_gpu(const Plan& plan, std::size_t n) {
  std::vector<std::int64_t> out(n, 0);
  for (const PlanTask& t : plan.tasks()) {
    if (t.kind == PlanTaskKind::Flow) {
      out[t.src.index()] += t.bytes.n;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("Megatron's allgather dispatcher: each GPU sends (n - 1)/n of the group's tokens") {
  // 16 ranks on two nodes, 512 tokens of 7168 BF16 elements each (14,336 bytes) per rank: the
  // tokens' gather sends (n - 1) x tokens x token bytes from every GPU, whatever the routing;
  // with 256 experts, the routing map and probabilities (1 + 2 bytes per expert and token)
  // first; combine's reduce-scatter the tokens' bytes again.
  const topo::Cluster cluster = two_nodes();
  const std::vector<topo::GpuId> ranks = hopsim::test::first_gpus(16);
  const std::int64_t tokens = 512;
  const std::int64_t token_bytes = 7168 * 2;
  const TwoTierMatrix m = Collectives::without_dedup(ranks, cluster, exchange_bytes(true));
  for (const ExchangeOp op : {ExchangeOp::Dispatch, ExchangeOp::Combine}) {
    for (const std::int64_t experts : {std::int64_t{0}, std::int64_t{256}}) {
      Plan plan;
      Collectives c(plan, cluster, kModel);
      Exchange x{.ranks = ranks, .bytes = m, .op = op, .constants = {}, .after = {}};
      x.token_bytes = token_bytes;
      x.experts = experts;
      x.own_bytes = tokens * token_bytes;
      add_exchange(c, EpAlgorithm::MegatronAllGather, x);
      const std::int64_t metadata =
          op == ExchangeOp::Dispatch ? 15 * tokens * experts * 3 : 0;
      for (const std::int64_t sent : sent_per_gpu(plan, 16)) {
        CHECK(sent == 15 * tokens * token_bytes + metadata);
      }
      CHECK(simulate(cluster, plan).stuck.empty());
    }
  }
}

TEST_CASE("Megatron's alltoall dispatcher: token counts, tokens, then their probabilities") {
  // Dispatch: the token counts' gather (8 bytes per expert from every rank), the tokens as the
  // routing matrix says, and 2 bytes per (token, expert) copy of probabilities; combine the
  // tokens back alone. Each GPU sends its row, 2/token_bytes of it again, and (n - 1) x
  // experts x 8.
  const topo::Cluster cluster = two_nodes();
  const std::vector<topo::GpuId> ranks = hopsim::test::first_gpus(16);
  LibraryConstants libraries;
  LibraryRates paced;
  paced.intranode = {PathCost{Time::ns(3'000), Bandwidth::gigabytes_per_s(150), {}, {}},
                     PathCost{Time::ns(3'000), Bandwidth::gigabytes_per_s(150), {}, {}}};
  paced.internode = {PathCost{Time::ns(9'000), Bandwidth::gigabytes_per_s(150),
                              Bandwidth::gigabytes_per_s(30), {}},
                     PathCost{Time::ns(9'000), Bandwidth::gigabytes_per_s(150),
                              Bandwidth::gigabytes_per_s(30), {}}};
  give_files(libraries, paced);
  const std::int64_t token_bytes = 4096;  // exchange_bytes' pairs are whole tokens of it
  const TwoTierMatrix m = Collectives::without_dedup(ranks, cluster, exchange_bytes(false));
  for (const ExchangeOp op : {ExchangeOp::Dispatch, ExchangeOp::Combine}) {
    Plan plan;
    Collectives c(plan, cluster, kModel);
    Exchange x{.ranks = ranks, .bytes = m, .op = op, .constants = {}, .after = {}};
    x.constants = libraries;
    x.token_bytes = token_bytes;
    x.experts = 128;
    add_exchange(c, EpAlgorithm::MegatronAllToAll, x);
    const std::vector<std::int64_t> sent = sent_per_gpu(plan, 16);
    for (std::size_t g = 0; g < 16; ++g) {
      std::int64_t row = 0;
      for (std::size_t k = 0; k < 16; ++k) {
        row += m.gpu.at(g, k);
      }
      const std::int64_t extra =
          op == ExchangeOp::Dispatch ? row / token_bytes * 2 + 15 * 128 * 8 : 0;
      CHECK(sent[g] == row + extra);
    }
    CHECK(simulate(cluster, plan).stuck.empty());
  }
}

TEST_CASE("the collective kind's all-to-all algorithms are the EP exchange rows") {
  // One row each, in table order after NCCL's, with the row's name and chunking; combine where
  // the row implements it.
  std::size_t all_to_all = 0;
  for (const CollectiveAlgorithm a : all_algorithms()) {
    all_to_all += implements(CollectiveOp::AllToAll, a) ? 1U : 0U;
    CHECK(exchange_of(a).has_value() == implements(CollectiveOp::AllToAll, a));
  }
  CHECK(all_to_all == kEpAlgorithms.size());
  for (const EpAlgorithmRow& row : kEpAlgorithms) {
    const CollectiveAlgorithm a = exchange_algorithm(row.algorithm);
    CHECK(exchange_of(a) == row.algorithm);
    CHECK(algorithm_name(a) == row.name);
    CHECK(algorithm_row(a).chunks == row.chunked);
    CHECK(algorithm_row(a).combine == implements(row, ExchangeOp::Combine));
  }
}
