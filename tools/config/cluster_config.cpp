// Parses a cluster config into topo::Spec and GpuSpec, checking every value it reads.
#include "tools/config/cluster_config.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/units.hpp"
#include "tools/config/keys/cluster_keys.hpp"
#include "tools/config/keys/nccl_keys.hpp"
#include "topology/spec_check.hpp"
#include "workloads/compute/gemm_shape.hpp"

namespace hopsim::config {
namespace {

namespace gk = keys::gpu;
namespace lk = keys::link;
namespace fk = keys::fabric;

enum class Figure { Achievable, Peak };

Time microseconds(double us) {
  return Time::from_seconds(us * 1e-6);
}

// The compute model's fallback shares of peak default to values fitted on H100 SXM: a GPU with
// other SMs (another die) must state each of them, so that no run takes Hopper's silently.
void require_stated_efficiencies(const Node& n, std::int64_t sms) {
  if (sms == work::kFittedSms) {
    return;
  }
  for (const NumberKey* key : {&gk::kGemmEfficiency, &gk::kAttentionEfficiency,
                               &gk::kFp8WgradRatio, &gk::kMemoryEfficiency}) {
    if (!n.has(*key)) {
      fail_at(*n.origin(), n.path() / std::string(key->name),
              fmt::format("missing: required for a GPU of {} SMs, since its default ({:g}) is "
                          "fitted on H100 SXM ({} SMs); state this GPU's and its source "
                          "(docs/network-model.md#gpus-other-than-hopper)",
                          sms, *key->value, work::kFittedSms));
    }
  }
}

topo::GpuSpec parse_gpu(const Node& n) {
  n.allow_only(gk::kSection);
  require_stated_efficiencies(n, static_cast<std::int64_t>(n.read(gk::kSms)));
  topo::GpuSpec gpu;
  gpu.name = n.read(gk::kName);
  gpu.peak_bf16_tflops = n.read(gk::kPeakBf16Tflops);
  gpu.peak_fp8_tflops = n.read(gk::kPeakFp8Tflops);
  if (const std::optional<double> fp4 = n.read_if(gk::kPeakFp4Tflops)) {
    gpu.peak_fp4_tflops = *fp4;
    if (!n.has(gk::kNvfp4GemmRatio)) {
      fail_at(*n.origin(), n.path() / std::string(gk::kNvfp4GemmRatio.name),
              "missing: required with peak_fp4_tflops (the share of the FP4 peak an NVFP4 GEMM "
              "reaches over the FP8 GEMM's share of the FP8 peak); state this GPU's and its "
              "source (docs/compute-model.md#nvfp4)");
    }
    gpu.nvfp4_gemm_ratio = n.read(gk::kNvfp4GemmRatio);
  } else if (n.has(gk::kNvfp4GemmRatio)) {
    (void)n.read(gk::kNvfp4GemmRatio);  // out of its range says so first
    n.at(gk::kNvfp4GemmRatio)
        .fail("only with peak_fp4_tflops: a GPU without FP4 tensor cores runs no NVFP4 GEMM");
  }
  gpu.hbm_GB = n.read(gk::kHbmGB);
  gpu.hbm_GBps = n.read(gk::kHbmGBps);
  gpu.sms = static_cast<int>(n.read(gk::kSms));
  gpu.gemm_efficiency = n.read(gk::kGemmEfficiency);
  gpu.attention_efficiency = n.read(gk::kAttentionEfficiency);
  gpu.fp8_wgrad_ratio = n.read(gk::kFp8WgradRatio);
  gpu.memory_efficiency = n.read(gk::kMemoryEfficiency);
  gpu.context_GB = n.read(gk::kContextGB, {.hi = gpu.hbm_GB});
  gpu.host_GBps = n.read(gk::kHostGBps);
  gpu.communicator_GB = n.read(gk::kCommunicatorGB, {.hi = gpu.hbm_GB});
  return gpu;
}

// {"peak_GBps", "achievable_GBps" (optional, <= peak), "latency_us"}.
topo::LinkParams parse_link(const Node& n, Figure figure) {
  n.allow_only(lk::kSection);
  const double peak = n.read(lk::kPeakGBps);
  double achievable = peak;
  if (n.has(lk::kAchievableGBps)) {
    achievable = n.read(lk::kAchievableGBps);
    if (achievable > peak) {
      n.at(lk::kAchievableGBps)
          .fail(fmt::format("must be <= peak_GBps ({}), got {}", n.at(lk::kPeakGBps).json().dump(),
                            n.at(lk::kAchievableGBps).json().dump()));
    }
  }
  const double gbps = figure == Figure::Peak ? peak : achievable;
  return {Bandwidth::gigabytes_per_s(gbps), microseconds(n.read(lk::kLatencyUs)),
          Bandwidth::gigabytes_per_s(peak)};
}

void parse_fabric(const Node& n, topo::Spec& spec) {
  n.allow_only(fk::kSection);
  spec.fabric = n.read_as<topo::FabricKind>(fk::kKind);
  spec.nodes_per_leaf = static_cast<int>(n.read(fk::kNodesPerLeaf));
  spec.spines = static_cast<int>(n.read(fk::kSpines));
  if (n.has(fk::kOversubscription)) {
    const Node o = n.at(fk::kOversubscription);
    const double v = o.number();
    if (!(v >= 1) || !std::isfinite(v)) {
      o.fail(fmt::format("must be >= 1 (downlink over uplink capacity), got {}", o.json().dump()));
    }
  }
  spec.oversubscription = n.read(fk::kOversubscription);
  spec.spine_latency = microseconds(n.read(fk::kSpineLatencyUs));
  spec.cross_rail = fk::kCrossRailNames[n.read(fk::kCrossRail)] == "spine"
                        ? topo::CrossRail::Spine
                        : topo::CrossRail::NvLink;
}

// {"base_latency_us", "nvlink_hop_latency_us", "net_hop_latency_us"}.
work::HopLatency parse_hop_latency(const Node& n) {
  namespace hk = keys::nccl_latency;
  n.allow_only(hk::kSection);
  return {microseconds(n.read(hk::kBaseLatencyUs)), microseconds(n.read(hk::kNvlinkHopLatencyUs)),
          microseconds(n.read(hk::kNetHopLatencyUs))};
}

// {"simple": {...}, "ll": {...}, "ll128": {...}}: one algorithm's latencies by protocol.
std::array<work::HopLatency, 3> parse_protocols(const Node& n) {
  namespace ak = keys::nccl_algorithm;
  n.allow_only(ak::kSection);
  std::array<work::HopLatency, 3> out{};
  for (std::size_t p = 0; p < out.size(); ++p) {
    out[p] = parse_hop_latency(n.at(*ak::kByProtocol[p]));
  }
  return out;
}

// NCCL's cost-model constants: the default protocol, ring and tree latencies by protocol, and
// NVLS where the NVSwitch reduces. Absent keys keep NCCL's own values (work::NcclModel).
work::NcclModel parse_nccl(const Node& n) {
  namespace nk = keys::nccl;
  n.allow_only(nk::kSection);
  work::NcclModel model;
  model.protocol = work::kProtocols[n.read(nk::kProtocol)];
  if (n.has(nk::kRing)) {
    model.ring = parse_protocols(n.at(nk::kRing));
  }
  if (n.has(nk::kTree)) {
    model.tree = parse_protocols(n.at(nk::kTree));
  }
  model.p2p_net_efficiency = n.read(nk::kP2pNetEfficiency);
  if (n.has(nk::kNvls)) {
    namespace vk = keys::nvls;
    const Node v = n.at(nk::kNvls);
    v.allow_only(vk::kSection);
    model.nvls_supported = true;
    model.nvls = {Time{}, microseconds(v.read(vk::kNvlinkLatencyUs)),
                  microseconds(v.read(vk::kNetLatencyUs))};
    model.nvls_efficiency = v.read(vk::kEfficiency);
  }
  return model;
}

work::DeepEpModel parse_deepep(const Node& d, Bandwidth nvlink) {
  namespace dk = keys::deepep;
  d.allow_only(dk::kSection);
  work::DeepEpModel deepep;
  deepep.nvlink_efficiency = d.read(dk::kNvlinkEfficiency);
  deepep.sms = static_cast<int>(d.read(dk::kSms));
  deepep.sm_exponent = d.read(dk::kSmExponent);
  deepep.ll_dispatch_call = microseconds(d.read(dk::kLlDispatchUs));
  deepep.ll_combine_call = microseconds(d.read(dk::kLlCombineUs));
  deepep.intranode_GBps_per_sm = d.read(dk::kIntranodeGBpsPerSm);
  deepep.intranode_link_share = d.read(dk::kIntranodeLinkShare);
  deepep.layout_call = microseconds(d.read(dk::kLayoutUs));
  deepep.notify_call = microseconds(d.read(dk::kNotifyUs));
  deepep.nvlink_GBps = nvlink.bytes_per_s / 1e9;
  return deepep;
}

}  // namespace

ClusterConfig parse_cluster(const Node& root) {
  namespace ck = keys::cluster;
  root.allow_only(ck::kSection);
  ClusterConfig config;
  topo::Spec& spec = config.topology;
  spec.name = root.read(ck::kName);
  (void)root.read_if(ck::kDescription);
  spec.nodes = static_cast<int>(root.read(ck::kNodes));
  spec.gpus_per_node = static_cast<int>(root.read(ck::kGpusPerNode));
  spec.gpu = parse_gpu(root.at(ck::kGpu));
  const Figure figure =
      ck::kBandwidthNames[root.read(ck::kBandwidth)] == "peak" ? Figure::Peak : Figure::Achievable;
  spec.nvlink = parse_link(root.at(ck::kNvlink), figure);
  spec.nic = parse_link(root.at(ck::kNic), figure);
  parse_fabric(root.at(ck::kFabric), spec);
  spec.software_overhead = microseconds(root.read(ck::kSoftwareOverheadUs));
  if (root.has(ck::kNccl)) {
    config.nccl = parse_nccl(root.at(ck::kNccl));
  }
  if (root.has(ck::kDeepep)) {
    config.ep_libraries.deepep = parse_deepep(root.at(ck::kDeepep), spec.nvlink.bandwidth);
  } else {
    // No DeepEP constants: its rows refuse to run (missing_constants) rather than take
    // DeepEpModel's defaults, through an entry "deepep" without rates among the libraries.
    config.ep_libraries.files.files.push_back(
        {"deepep", std::nullopt,
         fmt::format("{}: {}/deepep: missing (DeepEP's constants on this cluster)",
                     root.origin()->file, root.path().to_string())});
  }
  if (root.has(ck::kSources)) {
    check_sources(root);
  }
  if (const Problems problems = topo::check_spec(spec); !problems.empty()) {
    fail_at(*root.origin(), Node::Pointer(root.path().to_string() + problems.front().path),
            problems.front().message);
  }
  return config;
}

}  // namespace hopsim::config
