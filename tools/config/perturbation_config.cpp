// Perturbations: a GPU list, and what changes on those GPUs.
#include "tools/config/perturbation_config.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "tools/config/cluster_config.hpp"
#include "tools/config/referenced_file.hpp"
#include "tools/config/schema.hpp"
#include "topology/leaves.hpp"
#include "topology/spec_check.hpp"

namespace hopsim::config {
namespace {

constexpr std::size_t kMaxPerturbations = 4096;
constexpr std::size_t kMaxGpus = std::size_t{1} << 20;
constexpr std::int64_t kMaxRank = std::int64_t{1} << 24;

// [min, max], each a speed in [0.1, 10], min not above max.
std::pair<double, double> speed_range(const Node& range, const char* who) {
  range.expect_array();
  if (range.size() != 2) {
    range.fail(fmt::format("has {} values; {} takes [min, max]", range.size(), who));
  }
  const double lo = range.at(0).number_in(0.1, 10);
  const double hi = range.at(1).number_in(0.1, 10);
  if (hi < lo) {
    range.fail(fmt::format("[{}, {}]: min above max", lo, hi));
  }
  return {lo, hi};
}

// "kernel_speed": [min, max], each kernel's own speed drawn from it (its seed is the
// experiment's, set once the experiment is read).
std::optional<topo::KernelDraw> kernel_draw(const Node& n) {
  if (!n.has("kernel_speed")) {
    return std::nullopt;
  }
  topo::KernelDraw d;
  std::tie(d.speed_min, d.speed_max) = speed_range(n.at("kernel_speed"), "kernel_speed");
  return d;
}

// {"stragglers": share, "compute_speed": [min, max]}: what to draw (work::draw_stragglers).
topo::Perturbation parse_draw(const Node& n) {
  for (const char* key : {"gpus", "nodes", "rails", "leaves", "spines", "links", "bandwidth",
                          "extra_latency_us", "failed", "gpu"}) {
    if (n.has(key)) {
      n.at(key).fail("a straggler draw picks its GPUs and slows their compute; it takes "
                     "stragglers and compute_speed only");
    }
  }
  topo::StragglerDraw d;
  d.share = n.at("stragglers").number_in(1e-6, 1);
  if (!n.has("compute_speed")) {
    n.fail("a straggler draw needs compute_speed: [min, max], the range its speeds are drawn from");
  }
  std::tie(d.speed_min, d.speed_max) = speed_range(n.at("compute_speed"), "a straggler draw");
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
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto v = static_cast<int>(list.at(i).integer_in(0, hi));
    if (std::ranges::find(out, v) != out.end()) {
      list.at(i).fail(fmt::format("{} {} is listed twice", what, v));
    }
    out.push_back(v);
  }
  return out;
}

// The GPUs: `gpus` (whether they exist is work::check's), whole `nodes`, or `rails` (one local
// index on every node), spelled out into p.gpus once the cluster is sound.
void parse_gpus(const Node& n, const topo::Spec& cluster, bool sound, topo::Perturbation& p) {
  const int named = int{n.has("gpus")} + int{n.has("nodes")} + int{n.has("rails")};
  if (named != 1) {
    n.fail(named == 0 ? "a perturbation needs gpus, nodes or rails (or, with \"links\": "
                        "\"spine\", leaves or spines)"
                      : "names its GPUs one way: gpus, nodes or rails");
  }
  if (n.has("gpus")) {
    p.gpus = index_list(n.at("gpus"), kMaxRank, "GPU");
    return;
  }
  const int per_node = cluster.gpus_per_node;
  if (n.has("nodes")) {
    p.nodes = index_list(n.at("nodes"), sound ? cluster.nodes - 1 : kMaxRank, "node");
    for (const int node : sound ? p.nodes : std::vector<int>{}) {
      for (int local = 0; local < per_node; ++local) {
        p.gpus.push_back(node * per_node + local);
      }
    }
    return;
  }
  p.rails = index_list(n.at("rails"), sound ? per_node - 1 : kMaxRank, "rail");
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
  for (const char* key : {"gpus", "nodes", "rails"}) {
    if (n.has(key)) {
      n.at(key).fail("spine links are named by leaves and spines, not by GPUs");
    }
  }
  if (!n.has("leaves") && !n.has("spines")) {
    n.fail("spine links need leaves, spines or both (every spine link of the fabric at once is "
           "/cluster/fabric/oversubscription)");
  }
  const std::int64_t leaves = sound ? topo::leaf_count(cluster) : kMaxRank;
  const std::int64_t spines = sound ? topo::spine_count(cluster) : kMaxRank;
  if (spines == 0) {
    n.at("links").fail("the cluster's fabric has a single leaf and no spine links");
  }
  if (n.has("leaves")) {
    p.leaves = index_list(n.at("leaves"), leaves - 1, "leaf");
  }
  if (n.has("spines")) {
    p.spines = index_list(n.at("spines"), spines - 1, "spine");
  }
}

// With links: a bandwidth share and extra latency, or failed.
void parse_link_change(const Node& n, topo::Perturbation& p) {
  for (const char* key : {"compute_speed", "kernel_speed"}) {
    if (n.has(key)) {
      n.at(key).fail(fmt::format("a link perturbation changes bandwidth and latency; a GPU's {} "
                                 "goes in a perturbation without links",
                                 key));
    }
  }
  p.failed = n.has("failed") && n.at("failed").boolean();
  if (p.failed) {
    for (const char* key : {"bandwidth", "extra_latency_us"}) {
      if (n.has(key)) {
        n.at(key).fail("a failed link carries nothing; leave out bandwidth and extra_latency_us");
      }
    }
    return;
  }
  if (!n.has("bandwidth") && !n.has("extra_latency_us")) {
    n.fail("a link perturbation needs bandwidth, extra_latency_us or \"failed\": true");
  }
  p.bandwidth = n.has("bandwidth") ? n.at("bandwidth").number_in(0.01, 10) : 1.0;
  p.extra_latency = n.has("extra_latency_us")
                        ? Time::from_seconds(n.at("extra_latency_us").number_in(0, 1e6) * 1e-6)
                        : Time{};
}

// {"nodes": [...], "gpu": "h200-hgx"}: the nodes' GPUs are the model of that cluster preset or
// file (relative to the experiment), whose whole description must read.
void parse_gpu_type(const Node& n, const topo::Spec& cluster, bool sound, topo::Perturbation& p) {
  for (const char* key : {"gpus", "rails", "links", "compute_speed", "kernel_speed", "bandwidth",
                          "extra_latency_us", "failed", "leaves", "spines"}) {
    if (n.has(key)) {
      n.at(key).fail("a GPU type applies to whole nodes (\"nodes\") and takes nothing else");
    }
  }
  if (!n.has("nodes")) {
    n.fail("a GPU type needs nodes: the nodes whose GPUs are that model");
  }
  parse_gpus(n, cluster, sound, p);
  const Node at = n.at("gpu");
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
  n.allow_only(Section::Perturbation);
  if (n.has("calibration") && !n.has("gpu")) {
    n.at("calibration").fail("is the calibration of another GPU model's nodes; it goes with "
                             "\"gpu\"");
  }
  if (n.has("stragglers")) {
    return parse_draw(n);
  }
  const bool sound = topo::check_spec(cluster).empty();  // else work::check names the cluster's
  topo::Perturbation p;
  if (n.has("gpu")) {
    parse_gpu_type(n, cluster, sound, p);
    return p;
  }
  const std::string links =
      n.has("links") ? n.at("links").one_of({"nvlink", "nic", "spine"}) : std::string();
  if (links == "spine") {
    p.part = topo::PerturbedPart::Spine;
    parse_spine_links(n, cluster, sound, p);
    parse_link_change(n, p);
    return p;
  }
  for (const char* key : {"leaves", "spines"}) {
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
  for (const char* key : {"bandwidth", "extra_latency_us", "failed"}) {
    if (n.has(key)) {
      n.at(key).fail("changes links: name them with \"links\": \"nvlink\", \"nic\" or "
                     "\"spine\"");
    }
  }
  if (!n.has("compute_speed") && !n.has("kernel_speed")) {
    n.fail("a perturbation needs compute_speed or kernel_speed, or links with bandwidth, "
           "extra_latency_us or failed");
  }
  p.compute_speed = n.has("compute_speed") ? n.at("compute_speed").number_in(0.1, 10) : 1.0;
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
