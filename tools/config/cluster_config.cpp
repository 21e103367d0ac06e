// Parses a cluster config into topo::Spec and GpuSpec, checking every value it reads.
#include "tools/config/cluster_config.hpp"

#include <cmath>
#include <array>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/units.hpp"
#include "topology/spec_check.hpp"

namespace hopsim::config {
namespace {

// Ranges of single keys; what their products may be is topo::check_spec's.
constexpr std::int64_t kMaxNodes = 1'000'000;
constexpr std::int64_t kMaxGpusPerNode = 1'024;
constexpr std::int64_t kMaxSpines = 65'536;
constexpr std::int64_t kMaxSms = 100'000;

enum class Figure { Achievable, Peak };

// A latency; at most 1 s (no hop, link or collective start takes that long), so that a step's
// sums of hundreds of thousands of them stay within simulated time (at 2^31 us a hop, a training
// step overflowed it).
constexpr double kMaxLatencyUs = 1e6;

Time microseconds(const Node& n) {
  const double us = n.non_negative(kMaxLatencyUs);
  return Time::from_seconds(us * 1e-6);
}

topo::GpuSpec parse_gpu(const Node& n) {
  n.allow_only(Section::Gpu);
  topo::GpuSpec gpu;
  gpu.name = n.at("name").string();
  gpu.peak_bf16_tflops = n.at("peak_bf16_tflops").positive();
  gpu.peak_fp8_tflops = n.at("peak_fp8_tflops").positive();
  gpu.hbm_GB = n.at("hbm_GB").positive();
  // Below 1 GB/s no kernel of a real layer finishes within simulated time.
  gpu.hbm_GBps = n.at("hbm_GBps").number_in(1, Node::kMaxNumber);
  gpu.sms = static_cast<int>(n.at("sms").integer_in(1, kMaxSms));
  if (n.has("gemm_efficiency")) {
    gpu.gemm_efficiency = n.at("gemm_efficiency").number_in(0.01, 1.0);
  }
  if (n.has("attention_efficiency")) {
    gpu.attention_efficiency = n.at("attention_efficiency").number_in(0.01, 1.0);
  }
  if (n.has("fp8_wgrad_ratio")) {
    gpu.fp8_wgrad_ratio = n.at("fp8_wgrad_ratio").number_in(0.01, 1.0);
  }
  if (n.has("memory_efficiency")) {
    gpu.memory_efficiency = n.at("memory_efficiency").number_in(0.01, 1.0);
  }
  if (n.has("context_GB")) {
    gpu.context_GB = n.at("context_GB").number_in(0, gpu.hbm_GB);
  }
  if (n.has("host_GBps")) {
    gpu.host_GBps = n.at("host_GBps").number_in(0.1, 1e4);
  }
  if (n.has("communicator_GB")) {
    gpu.communicator_GB = n.at("communicator_GB").number_in(0, gpu.hbm_GB);
  }
  return gpu;
}

// {"peak_GBps", "achievable_GBps" (optional, <= peak), "latency_us"}.
topo::LinkParams parse_link(const Node& n, Figure figure) {
  n.allow_only(Section::Link);
  const Node peak_node = n.at("peak_GBps");
  const double peak = peak_node.positive();
  double achievable = peak;
  if (n.has("achievable_GBps")) {
    const Node a = n.at("achievable_GBps");
    achievable = a.positive();
    if (achievable > peak) {
      a.fail(fmt::format("must be <= peak_GBps ({}), got {}", peak_node.json().dump(),
                         a.json().dump()));
    }
  }
  const double gbps = figure == Figure::Peak ? peak : achievable;
  return {Bandwidth::gigabytes_per_s(gbps), microseconds(n.at("latency_us")),
          Bandwidth::gigabytes_per_s(peak)};
}

void parse_fabric(const Node& n, topo::Spec& spec) {
  n.allow_only(Section::Fabric);
  spec.fabric = n.at("kind").one_of({"rail_optimized", "fat_tree"}) == "fat_tree"
                    ? topo::FabricKind::FatTree
                    : topo::FabricKind::RailOptimized;
  if (n.has("nodes_per_leaf")) {
    spec.nodes_per_leaf = static_cast<int>(n.at("nodes_per_leaf").integer_in(0, kMaxNodes));
  }
  if (n.has("spines")) {
    spec.spines = static_cast<int>(n.at("spines").integer_in(1, kMaxSpines));
  }
  if (n.has("oversubscription")) {
    const Node o = n.at("oversubscription");
    const double v = o.number();
    if (!(v >= 1) || !std::isfinite(v)) {
      o.fail(fmt::format("must be >= 1 (downlink over uplink capacity), got {}", o.json().dump()));
    }
    spec.oversubscription = o.positive();
  }
  if (n.has("spine_latency_us")) {
    spec.spine_latency = microseconds(n.at("spine_latency_us"));
  }
  if (n.has("cross_rail")) {
    spec.cross_rail = n.at("cross_rail").one_of({"nvlink", "spine"}) == "spine"
                          ? topo::CrossRail::Spine
                          : topo::CrossRail::NvLink;
  }
}

// {"base_latency_us", "nvlink_hop_latency_us", "net_hop_latency_us"}.
work::HopLatency parse_hop_latency(const Node& n) {
  n.allow_only(Section::NcclLatency);
  return {microseconds(n.at("base_latency_us")), microseconds(n.at("nvlink_hop_latency_us")),
          microseconds(n.at("net_hop_latency_us"))};
}

// {"simple": {...}, "ll": {...}, "ll128": {...}}: one algorithm's latencies by protocol.
std::array<work::HopLatency, 3> parse_protocols(const Node& n) {
  n.allow_only(Section::NcclAlgorithm);
  std::array<work::HopLatency, 3> out{};
  for (work::Protocol p : work::kProtocols) {
    out[static_cast<std::size_t>(p)] = parse_hop_latency(n.at(work::protocol_name(p)));
  }
  return out;
}

// NCCL's cost-model constants: the default protocol, ring and tree latencies by protocol, and
// NVLS where the NVSwitch reduces. Absent keys keep NCCL's own values (work::NcclModel).
work::NcclModel parse_nccl(const Node& n) {
  n.allow_only(Section::Nccl);
  work::NcclModel model;
  if (n.has("protocol")) {
    const std::array<std::string_view, 3> names{"simple", "ll", "ll128"};
    model.protocol = work::kProtocols[n.at("protocol").index_of(names)];
  }
  if (n.has("ring")) {
    model.ring = parse_protocols(n.at("ring"));
  }
  if (n.has("tree")) {
    model.tree = parse_protocols(n.at("tree"));
  }
  if (n.has("p2p_net_efficiency")) {
    model.p2p_net_efficiency = n.at("p2p_net_efficiency").number_in(0.01, 1);
  }
  if (n.has("nvls")) {
    const Node v = n.at("nvls");
    v.allow_only(Section::Nvls);
    model.nvls_supported = true;
    model.nvls = {Time{}, microseconds(v.at("nvlink_latency_us")),
                  microseconds(v.at("net_latency_us"))};
    model.nvls_efficiency = v.at("efficiency").number_in(0.01, 1);
  }
  return model;
}

void parse_size(const Node& root, topo::Spec& spec) {
  spec.nodes = static_cast<int>(root.at("nodes").integer_in(1, kMaxNodes));
  if (root.has("gpus_per_node")) {
    spec.gpus_per_node = static_cast<int>(root.at("gpus_per_node").integer_in(1, kMaxGpusPerNode));
  }
}

}  // namespace

ClusterConfig parse_cluster(const Node& root) {
  root.allow_only(Section::Cluster);
  ClusterConfig config;
  topo::Spec& spec = config.topology;
  spec.name = root.at("name").string();
  if (root.has("description")) {
    root.at("description").string();
  }
  parse_size(root, spec);
  spec.gpu = parse_gpu(root.at("gpu"));

  Figure figure = Figure::Achievable;
  if (root.has("bandwidth") && root.at("bandwidth").one_of({"achievable", "peak"}) == "peak") {
    figure = Figure::Peak;
  }
  spec.nvlink = parse_link(root.at("nvlink"), figure);
  spec.nic = parse_link(root.at("nic"), figure);
  parse_fabric(root.at("fabric"), spec);
  if (root.has("software_overhead_us")) {
    spec.software_overhead = microseconds(root.at("software_overhead_us"));
  }
  if (root.has("nccl")) {
    config.nccl = parse_nccl(root.at("nccl"));
  }
  if (root.has("deepep")) {
    const Node d = root.at("deepep");
    d.allow_only(Section::DeepEp);
    config.deepep.nvlink_efficiency = d.at("nvlink_efficiency").number_in(0.01, 1);
    if (d.has("sms")) {
      config.deepep.sms = static_cast<int>(d.at("sms").integer_in(1, kMaxSms));
    }
    if (d.has("sm_exponent")) {
      config.deepep.sm_exponent = d.at("sm_exponent").number_in(0, 2);
    }
    if (d.has("ll_dispatch_us")) {
      config.deepep.ll_dispatch_call = microseconds(d.at("ll_dispatch_us"));
    }
    if (d.has("ll_combine_us")) {
      config.deepep.ll_combine_call = microseconds(d.at("ll_combine_us"));
    }
  }
  if (root.has("sources")) {
    check_sources(root);
  }
  if (const Problems problems = topo::check_spec(spec); !problems.empty()) {
    fail_at(*root.origin(), Node::Pointer(root.path().to_string() + problems.front().path),
            problems.front().message);
  }
  return config;
}

}  // namespace hopsim::config
