// Plans run on real topologies: closed forms through NVSwitch and NICs, and the run summary.
#include "workloads/plan/runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "doctest_time.hpp"
#include "tests/approx.hpp"
#include "tests/two_nodes.hpp"
#include "workloads/jobs/flows_job.hpp"
#include "workloads/plan/summary.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using namespace hopsim::work;
namespace topo = hopsim::topo;

TEST_CASE("an NVSwitch up-link shared by two flows from one GPU halves each") {
  // Both flows leave GPU 0 (one up-link at B) for GPUs 1 and 2 (separate down-links):
  // each moves at B/2 and finishes at alpha + 2S/B, alpha = 2 x 0.7 us + 2 us.
  const topo::Cluster cluster(hopsim::test::two_nodes());
  const Bytes s{1'000'000'000};
  const Plan plan = build_flows_plan({{"a", 0, 1, s, Time{}, {}}, {"b", 0, 2, s, Time{}, {}}});
  const Outcome out = simulate(cluster, plan);
  const Time expected = Time::ns(3'400) + transfer_time(Bytes{2 * s.n}, Bandwidth{400e9});
  CHECK(out.times[0].end == expected);
  CHECK(out.times[1].end == expected);
  CHECK(out.latency[0] == Time::ns(3'400));
}

TEST_CASE("a same-rail flow to another node is limited by the NIC") {
  const topo::Cluster cluster(hopsim::test::two_nodes());
  const Bytes s{100'000'000};
  const Plan plan = build_flows_plan({{"x", 3, 11, s, Time::us(5), {}}});
  const Outcome out = simulate(cluster, plan);
  CHECK(out.times[0].start == Time::us(5));
  CHECK(out.times[0].end ==
        Time::us(5) + Time::ns(3'000) + transfer_time(s, Bandwidth::gigabytes_per_s(50)));
}

TEST_CASE("after chains add up and a flow to itself is free") {
  const topo::Cluster cluster(hopsim::test::two_nodes());
  const Bytes s{400'000'000};
  const Plan plan = build_flows_plan(
      {{"a", 0, 1, s, Time{}, {}}, {"b", 1, 2, s, Time{}, {0}}, {"self", 2, 2, s, Time{}, {1}}});
  const Outcome out = simulate(cluster, plan);
  const Time hop = Time::ns(3'400) + transfer_time(s, Bandwidth{400e9});
  CHECK(out.times[1].end == 2 * hop);
  CHECK(out.times[2].end == 2 * hop);
  CHECK(out.makespan == 2 * hop);
}

TEST_CASE("the summary unions intervals per rank and counts bytes per link kind") {
  const topo::Cluster cluster(hopsim::test::two_nodes());
  Plan plan;
  const auto c = plan.add_compute(topo::GpuId{0}, Time::us(10));
  const auto f = plan.add_flow(topo::GpuId{0}, topo::GpuId{8},
                               Bytes{50'000'000});  // 1 ms + 3 us over IB, overlaps c
  const auto g = plan.add_flow(topo::GpuId{0}, topo::GpuId{1},
                               Bytes{4'000'000});  // after f: 10 us + 3.4 us on NVLink
  plan.add_dependency(f, g);
  const Outcome out = simulate(cluster, plan);
  const Summary s = summarize(cluster, plan, out);
  CHECK(out.times[c].end == Time::us(10));
  const Time f_end = Time::ns(3'000) + Time::us(1'000);
  CHECK(out.times[f].end == f_end);
  CHECK(s.critical_rank == topo::GpuId{0});
  CHECK(s.ranks[0].compute == Time::us(10));
  CHECK(s.ranks[0].comm == out.times[g].end);  // f then g, back to back
  CHECK(s.ranks[0].exposed == s.ranks[0].busy - Time::us(10));
  CHECK(s.ib_bytes.n == 50'000'000);
  CHECK(s.nvlink_bytes.n == 4'000'000);
  CHECK(s.step == out.times[g].end);
}

TEST_CASE("perturbations: a slow GPU's kernels and a degraded NIC's flows, in closed form") {
  topo::Spec spec = hopsim::test::two_nodes();
  const auto slower = [](int gpu, double speed) {
    topo::Perturbation p;
    p.gpus = {gpu};
    p.compute_speed = speed;
    return p;
  };
  topo::Perturbation nic;
  nic.gpus = {0};
  nic.part = topo::PerturbedPart::Nic;
  nic.bandwidth = 0.5;
  nic.extra_latency = Time::us(1);
  spec.perturbations = {slower(1, 0.4), nic, slower(1, 0.5)};
  const topo::Cluster cluster(spec);
  const ComputeSpeeds speeds(spec, {});  // GPU 1 at 0.4 x 0.5 (compute_speeds_test.cpp)
  Plan plan;
  const auto slow = plan.add_compute(topo::GpuId{1}, Time::us(10));
  const auto fast = plan.add_compute(topo::GpuId{2}, Time::us(10));
  const auto hold = plan.add_hold(topo::GpuId{1}, Time::us(10), 0, kCommStream);
  // GPU 0's NIC up at 25 GB/s and 1 us slower; GPU 8's NIC down as it was.
  const auto ib = plan.add_flow(topo::GpuId{0}, topo::GpuId{8}, Bytes{50'000'000});
  const auto back = plan.add_flow(topo::GpuId{8}, topo::GpuId{0}, Bytes{50'000'000});
  const auto other = plan.add_flow(topo::GpuId{1}, topo::GpuId{9}, Bytes{50'000'000});
  const Outcome out = simulate(cluster, plan, {.speeds = &speeds});
  CHECK(out.times[slow].end == Time::us(50));  // 10 us at 0.2 of the rate
  CHECK(out.times[fast].end == Time::us(10));
  CHECK(out.times[hold].end == Time::us(10));  // held communication is not compute
  // 2 us software + 0.5 us per NIC hop + 1 us more on GPU 0's, and 50 MB at 25 GB/s.
  CHECK(out.times[ib].end == Time::ns(4'000) + Time::us(2'000));
  CHECK(out.times[back].end == Time::ns(4'000) + Time::us(2'000));
  CHECK(out.times[other].end == Time::ns(3'000) + Time::us(1'000));
  // Without the speeds every GPU computes at the compute model's rate (a plan that carries them).
  CHECK(simulate(cluster, plan).times[slow].end == Time::us(10));
}

TEST_CASE("a speed drawn per kernel: in its range, repeatable, and its harmonic mean on average") {
  const auto run = [](std::uint64_t seed) {
    topo::Spec spec = hopsim::test::two_nodes();
    topo::Perturbation p;
    p.gpus = {1};
    p.compute_speed = 0.5;
    p.kernel_draw = topo::KernelDraw{.speed_min = 0.8, .speed_max = 1.0, .seed = seed};
    spec.perturbations = {p};
    const topo::Cluster cluster(spec);
    const ComputeSpeeds speeds(spec, {});
    Plan plan;
    std::vector<PlanTaskId> chain;
    for (int i = 0; i < 4000; ++i) {
      chain.push_back(plan.add_compute(topo::GpuId{1}, Time::us(10)));
      if (i > 0) {
        plan.add_dependency(chain[chain.size() - 2], chain.back());
      }
    }
    const auto other = plan.add_compute(topo::GpuId{2}, Time::us(10));
    const Outcome out = simulate(cluster, plan, {.speeds = &speeds});
    CHECK(out.times[other].end == Time::us(10));  // a GPU without a draw keeps its rate
    Time shortest = Time::max();
    Time longest;
    for (const PlanTaskId t : chain) {
      const Time took = out.times[t].end - out.times[t].start;
      shortest = std::min(shortest, took);
      longest = std::max(longest, took);
    }
    CHECK(shortest >= Time::us(20));  // 10 us at 0.5 x 1.0 at the fastest
    CHECK(longest <= Time::us(25));   // ... at 0.5 x 0.8 at the slowest
    CHECK(longest > shortest);
    return out.makespan;
  };
  const Time one = run(1);
  CHECK(run(1) == one);  // the same seed draws the same speeds
  CHECK(run(2) != one);
  // 4,000 kernels of 10 us at 0.5 of the rate take 80 ms / 0.8963 on average (1/speed uniform
  // in [0.8, 1] has mean ln(1.25) / 0.2); their spread is 1.7% / sqrt(4000), under 0.1%.
  CHECK(one.seconds() == hopsim::test::approx(0.08 * std::log(1.25) / 0.2).epsilon(0.003));
}

TEST_CASE("a failed NIC: its flows share the carrier's NIC, and the summary counts the detours") {
  topo::Spec spec = hopsim::test::two_nodes();
  topo::Perturbation failed;
  failed.gpus = {0};
  failed.part = topo::PerturbedPart::Nic;
  failed.failed = true;
  spec.perturbations = {failed};
  const topo::Cluster cluster(spec);
  REQUIRE(cluster.failures().nic_carrier[0] == 1);
  Plan plan;
  // GPU 0 -> 8 now leaves through GPU 1's NIC, beside GPU 1's own flow to 9: 25 GB/s each.
  const auto detour = plan.add_flow(topo::GpuId{0}, topo::GpuId{8}, Bytes{50'000'000});
  const auto beside = plan.add_flow(topo::GpuId{1}, topo::GpuId{9}, Bytes{50'000'000});
  const auto apart = plan.add_flow(topo::GpuId{2}, topo::GpuId{10}, Bytes{50'000'000});
  const Outcome out = simulate(cluster, plan);
  // NVLink there (0.7 us each way), NIC up, spine up and down (rail 1 to rail 0), NIC down.
  const Time head = Time::ns(2'000 + 2 * 700 + 2 * 500 + 2 * 450) - Time::ns(3'000);
  CHECK(out.latency[detour] == Time::ns(3'000) + head);
  // GPU 1's NIC is busy from 3 us until both flows' 100 MB have crossed it at 50 GB/s; GPU 1's
  // own flow, which started `head` earlier, ends that much sooner.
  const Time both =
      Time::ns(3'000) + transfer_time(Bytes{100'000'000}, Bandwidth::gigabytes_per_s(50));
  CHECK(out.times[detour].end == both);
  CHECK(out.times[beside].end == both - head);
  CHECK(out.times[apart].end ==
        Time::ns(3'000) + transfer_time(Bytes{50'000'000}, Bandwidth::gigabytes_per_s(50)));
  const Summary s = summarize(cluster, plan, out);
  CHECK(s.failed_links);
  CHECK(s.rerouted_flows == 1);
  CHECK(s.rerouted_bytes.n == 50'000'000);
  CHECK(s.nvlink_bytes.n == 50'000'000);  // the detour's NVLink hop
  CHECK_FALSE(summarize(topo::Cluster(hopsim::test::two_nodes()), plan, out).failed_links);
}

TEST_CASE("a mixed cluster: another GPU model's kernels at its roofline ratio, per kernel class") {
  topo::Spec spec = hopsim::test::two_nodes();
  spec.gpu.name = "slow HBM";
  spec.gpu.peak_bf16_tflops = 1000;
  spec.gpu.hbm_GBps = 2000;
  topo::Perturbation other;
  other.part = topo::PerturbedPart::GpuType;
  other.nodes = {1};
  for (int g = 8; g < 16; ++g) {
    other.gpus.push_back(g);
  }
  other.gpu = spec.gpu;
  other.gpu->name = "fast HBM";
  other.gpu->hbm_GBps = 3000;  // 1.5x the bandwidth, the same FLOP/s
  spec.perturbations = {other};
  const topo::Cluster cluster(spec);
  REQUIRE(cluster.mixed());
  CHECK(cluster.gpu_type(topo::GpuId{3}).name == "slow HBM");
  CHECK(cluster.gpu_type(topo::GpuId{9}).name == "fast HBM");
  Plan plan;
  const auto kernel = [&plan](int gpu, KernelClass kind) {
    return plan.add_compute(ComputeTask{topo::GpuId{gpu}, Time::us(30), hopsim::Flops{},
                                        Source::Roofline, 0, kComputeStream, "k", kind});
  };
  const auto norm_h = kernel(0, KernelClass::Norm);
  const auto gemm_h = kernel(0, KernelClass::GemmFprop);
  const auto norm_f = kernel(8, KernelClass::Norm);
  const auto gemm_f = kernel(8, KernelClass::GemmFprop);
  const auto adam_f = kernel(9, KernelClass::Other);
  const ComputeSpeeds speeds(spec, {});  // no priced types: the roofline ratios
  const Outcome out = simulate(cluster, plan, {.speeds = &speeds});
  const auto took = [&out](PlanTaskId t) { return out.times[t].end - out.times[t].start; };
  CHECK(took(norm_h) == Time::us(30));
  CHECK(took(gemm_h) == Time::us(30));
  CHECK(took(norm_f) == Time::us(20));  // 30 us at 1.5x the bandwidth
  CHECK(took(gemm_f) == Time::us(30));
  CHECK(took(adam_f) == Time::us(20));  // a step's optimizer: memory-bound
  const Summary s = summarize(cluster, plan, out);
  CHECK(s.critical_rank == topo::GpuId{0});
  CHECK(s.critical_gpu == "slow HBM");
}
