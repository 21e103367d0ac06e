// Perturbations: a GPU list, and what changes on those GPUs.
#include "tools/config/perturbation_config.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "tools/config/cluster_config.hpp"
#include "tools/config/keys/perturbation_keys.hpp"
#include "tools/config/referenced_file.hpp"
#include "topology/leaves.hpp"
#include "topology/spec_check.hpp"

namespace hopsim::config {
namespace {

namespace pk = keys::perturbation;

constexpr std::size_t kMaxPerturbations = 4096;
constexpr std::size_t kMaxGpus = std::size_t{1} << 20;
constexpr std::int64_t kMaxRank = std::int64_t{1} << 24;

// [min, max], each a speed as `key` bounds it, min not above max.
std::pair<double, double> speed_range(const Node& range, const NumberKey& key, const char* who) {
  range.expect_array();
  if (range.size() != 2) {
    range.fail(fmt::format("has {} values; {} takes [min, max]", range.size(), who));
  }
  const double lo = range.at(0).read_item(key);
  const double hi = range.at(1).read_item(key);
  if (hi < lo) {
    range.fail(fmt::format("[{}, {}]: min above max", lo, hi));
  }
  return {lo, hi};
}

// "kernel_speed": [min, max], each kernel's own speed drawn from it (its seed is the
// experiment's, set once the experiment is read).
std::optional<topo::KernelDraw> kernel_draw(const Node& n) {
  if (!n.has(pk::kKernelSpeed)) {
    return std::nullopt;
  }
  topo::KernelDraw d;
  std::tie(d.speed_min, d.speed_max) =
      speed_range(n.at(pk::kKernelSpeed), pk::kKernelSpeed, "kernel_speed");
  return d;
}

// {"stragglers": share, "compute_speed": [min, max]}: what to draw (work::draw_stragglers).
topo::Perturbation parse_draw(const Node& n) {
  for (const std::string_view key :
       {pk::kGpus.name, pk::kNodes.name, pk::kRails.name, pk::kLeaves.name, pk::kSpines.name,
        pk::kLinks.name, pk::kBandwidth.name, pk::kExtraLatencyUs.name, pk::kFailed.name,
        pk::kGpu.name}) {
    if (n.has(key)) {
      n.at(key).fail(
          "a straggler draw picks its GPUs and slows their compute; it takes "
          "stragglers and compute_speed only");
    }
  }
  topo::StragglerDraw d;
  d.share = n.read(pk::kStragglers);
  if (!n.has(pk::kComputeSpeed)) {
    n.fail("a straggler draw needs compute_speed: [min, max], the range its speeds are drawn from");
  }
  std::tie(d.speed_min, d.speed_max) =
      speed_range(n.at(pk::kComputeSpeed), pk::kComputeSpeed, "a straggler draw");
  topo::Perturbation p;
  p.drawn = d;
  p.kernel_draw = kernel_draw(n);
  return p;
}

// A list of 1 to kMaxGpus integers in [0, hi], none twice ("node 3 is listed twice").
std::vector<int> index_list(const Node& list, std::int64_t hi, const char* what) {
  list.expect_array();
  if (list.size() == 0 || list.size() > kMaxGpus) {
    list.fail(fmt::format("names {} {}s; a perturbation takes 1 to {}", list.size(), what,
                          kMaxGpus));
  }
  std::vector<int> out;
  out.reserve(list.size());
  std::unordered_set<int> seen;  // a value listed twice fails at its second place, in O(n)
  seen.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto v = static_cast<int>(list.at(i).integer_in(0, hi));
    if (!seen.insert(v).second) {
      list.at(i).fail(fmt::format("{} {} is listed twice", what, v));
    }
    out.push_back(v);
  }
  return out;
}

// The GPUs: `gpus` (whether they exist is work::check's), whole `nodes`, or `rails` (one local
// index on every node), spelled out into p.gpus once the cluster is sound.
void parse_gpus(const Node& n, const topo::Spec& cluster, bool sound, topo::Perturbation& p) {
  const int named = int{n.has(pk::kGpus)} + int{n.has(pk::kNodes)} + int{n.has(pk::kRails)};
  if (named != 1) {
    n.fail(named == 0 ? "a perturbation needs gpus, nodes or rails (or, with \"links\": "
                        "\"spine\", leaves or spines)"
                      : "names its GPUs one way: gpus, nodes or rails");
  }
  if (n.has(pk::kGpus)) {
    p.gpus = index_list(n.at(pk::kGpus), kMaxRank, "GPU");
    return;
  }
  const int per_node = cluster.gpus_per_node;
  if (n.has(pk::kNodes)) {
    p.nodes = index_list(n.at(pk::kNodes), sound ? cluster.nodes - 1 : kMaxRank, "node");
    for (const int node : sound ? p.nodes : std::vector<int>{}) {
      for (int local = 0; local < per_node; ++local) {
        p.gpus.push_back(node * per_node + local);
      }
    }
    return;
  }
  p.rails = index_list(n.at(pk::kRails), sound ? per_node - 1 : kMaxRank, "rail");
  for (int node = 0; sound && node < cluster.nodes; ++node) {
    for (const int rail : p.rails) {
      p.gpus.push_back(node * per_node + rail);
    }
  }
}

// {"links": "spine", "leaves": [...], "spines": [...]}: the links between those leaves and
// those spines (either left out: all of them).
void parse_spine_links(const Node& n, const topo::Spec& cluster, bool sound,
                       topo::Perturbation& p) {
  for (const std::string_view key : {pk::kGpus.name, pk::kNodes.name, pk::kRails.name}) {
    if (n.has(key)) {
      n.at(key).fail("spine links are named by leaves and spines, not by GPUs");
    }
  }
  if (!n.has(pk::kLeaves) && !n.has(pk::kSpines)) {
    n.fail(
        "spine links need leaves, spines or both (every spine link of the fabric at once is "
        "/cluster/fabric/oversubscription)");
  }
  const std::int64_t leaves = sound ? topo::leaf_count(cluster) : kMaxRank;
  const std::int64_t spines = sound ? topo::spine_count(cluster) : kMaxRank;
  if (spines == 0) {
    n.at(pk::kLinks).fail("the cluster's fabric has a single leaf and no spine links");
  }
  if (n.has(pk::kLeaves)) {
    p.leaves = index_list(n.at(pk::kLeaves), leaves - 1, "leaf");
  }
  if (n.has(pk::kSpines)) {
    p.spines = index_list(n.at(pk::kSpines), spines - 1, "spine");
  }
}

// With links: a bandwidth share and extra latency, or failed.
void parse_link_change(const Node& n, topo::Perturbation& p) {
  for (const std::string_view key : {pk::kComputeSpeed.name, pk::kKernelSpeed.name}) {
    if (n.has(key)) {
      n.at(key).fail(
          fmt::format("a link perturbation changes bandwidth and latency; a GPU's {} "
                      "goes in a perturbation without links",
                      key));
    }
  }
  p.failed = n.read(pk::kFailed);
  if (p.failed) {
    for (const std::string_view key : {pk::kBandwidth.name, pk::kExtraLatencyUs.name}) {
      if (n.has(key)) {
        n.at(key).fail("a failed link carries nothing; leave out bandwidth and extra_latency_us");
      }
    }
    return;
  }
  if (!n.has(pk::kBandwidth) && !n.has(pk::kExtraLatencyUs)) {
    n.fail("a link perturbation needs bandwidth, extra_latency_us or \"failed\": true");
  }
  p.bandwidth = n.read(pk::kBandwidth);
  p.extra_latency = Time::from_seconds(n.read(pk::kExtraLatencyUs) * 1e-6);
}

// {"nodes": [...], "gpu": "h200-hgx"}: the nodes' GPUs are the model of that cluster preset or
// file (relative to the experiment), whose whole description must read.
void parse_gpu_type(const Node& n, const topo::Spec& cluster, bool sound, topo::Perturbation& p) {
  for (const std::string_view key :
       {pk::kGpus.name, pk::kRails.name, pk::kLinks.name, pk::kComputeSpeed.name,
        pk::kKernelSpeed.name, pk::kBandwidth.name, pk::kExtraLatencyUs.name, pk::kFailed.name,
        pk::kLeaves.name, pk::kSpines.name}) {
    if (n.has(key)) {
      n.at(key).fail("a GPU type applies to whole nodes (\"nodes\") and takes nothing else");
    }
  }
  if (!n.has(pk::kNodes)) {
    n.fail("a GPU type needs nodes: the nodes whose GPUs are that model");
  }
  parse_gpus(n, cluster, sound, p);
  const Node at = n.at(pk::kGpu);
  p.gpu_source = referenced_file(at, "cluster");
  const nlohmann::json doc = read_referenced(at, p.gpu_source, "cluster");
  p.gpu = parse_cluster(Node(doc, p.gpu_source)).topology.gpu;
  if (p.gpu->peak_bf16_tflops <= 0 || p.gpu->hbm_GBps <= 0) {
    at.fail(fmt::format("{} (\"{}\") gives no peak_bf16_tflops or hbm_GBps: a mixed cluster "
                        "prices its kernels by them",
                        p.gpu->name, p.gpu_source));
  }
  p.part = topo::PerturbedPart::GpuType;
}

topo::Perturbation parse_one(const Node& n, const topo::Spec& cluster) {
  n.expect_object();
  n.allow_only(pk::kSection);
  if (n.has(pk::kCalibration) && !n.has(pk::kGpu)) {
    n.at(pk::kCalibration)
        .fail(
            "is the calibration of another GPU model's nodes; it goes with "
            "\"gpu\"");
  }
  if (n.has(pk::kStragglers)) {
    return parse_draw(n);
  }
  const bool sound = topo::check_spec(cluster).empty();  // else work::check names the cluster's
  topo::Perturbation p;
  if (n.has(pk::kGpu)) {
    parse_gpu_type(n, cluster, sound, p);
    return p;
  }
  const std::string links =
      n.has(pk::kLinks) ? std::string(pk::kLinkNames[n.read(pk::kLinks)]) : std::string();
  if (links == "spine") {
    p.part = topo::PerturbedPart::Spine;
    parse_spine_links(n, cluster, sound, p);
    parse_link_change(n, p);
    return p;
  }
  for (const std::string_view key : {pk::kLeaves.name, pk::kSpines.name}) {
    if (n.has(key)) {
      n.at(key).fail("names spine links; it goes with \"links\": \"spine\"");
    }
  }
  parse_gpus(n, cluster, sound, p);
  if (!links.empty()) {
    p.part = links == "nvlink" ? topo::PerturbedPart::NvLink : topo::PerturbedPart::Nic;
    parse_link_change(n, p);
    return p;
  }
  for (const std::string_view key :
       {pk::kBandwidth.name, pk::kExtraLatencyUs.name, pk::kFailed.name}) {
    if (n.has(key)) {
      n.at(key).fail(
          "changes links: name them with \"links\": \"nvlink\", \"nic\" or "
          "\"spine\"");
    }
  }
  if (!n.has(pk::kComputeSpeed) && !n.has(pk::kKernelSpeed)) {
    n.fail(
        "a perturbation needs compute_speed or kernel_speed, or links with bandwidth, "
        "extra_latency_us or failed");
  }
  p.compute_speed = n.read(pk::kComputeSpeed);
  p.kernel_draw = kernel_draw(n);
  return p;
}

}  // namespace

std::vector<topo::Perturbation> parse_perturbations(const Node& list, const topo::Spec& cluster) {
  list.expect_array();
  if (list.size() > kMaxPerturbations) {
    list.fail(fmt::format("{} perturbations; at most {}", list.size(), kMaxPerturbations));
  }
  std::vector<topo::Perturbation> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    out.push_back(parse_one(list.at(i), cluster));
    out.back().entry = i;
  }
  return out;
}

}  // namespace hopsim::config
