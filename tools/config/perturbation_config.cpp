// Perturbations: a GPU list, and what changes on those GPUs.
#include "tools/config/perturbation_config.hpp"

#include <cstdint>

#include "tools/config/schema.hpp"

namespace hopsim::config {
namespace {

constexpr std::size_t kMaxPerturbations = 4096;
constexpr std::size_t kMaxGpus = std::size_t{1} << 20;
constexpr std::int64_t kMaxRank = std::int64_t{1} << 24;

// {"stragglers": share, "compute_speed": [min, max]}: what to draw (work::draw_stragglers).
topo::Perturbation parse_draw(const Node& n) {
  for (const char* key : {"gpus", "links", "bandwidth", "extra_latency_us"}) {
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
  const Node range = n.at("compute_speed");
  range.expect_array();
  if (range.size() != 2) {
    range.fail(fmt::format("has {} values; a straggler draw takes [min, max]", range.size()));
  }
  d.speed_min = range.at(0).number_in(0.1, 10);
  d.speed_max = range.at(1).number_in(0.1, 10);
  if (d.speed_max < d.speed_min) {
    range.fail(fmt::format("[{}, {}]: min above max", d.speed_min, d.speed_max));
  }
  topo::Perturbation p;
  p.drawn = d;
  return p;
}

topo::Perturbation parse_one(const Node& n) {
  n.expect_object();
  n.allow_only(Section::Perturbation);
  if (n.has("stragglers")) {
    return parse_draw(n);
  }
  topo::Perturbation p;
  const Node gpus = n.at("gpus");
  gpus.expect_array();
  if (gpus.size() == 0 || gpus.size() > kMaxGpus) {
    gpus.fail(fmt::format("names {} GPUs; a perturbation takes 1 to {}", gpus.size(), kMaxGpus));
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    p.gpus.push_back(static_cast<int>(gpus.at(i).integer_in(0, kMaxRank)));
  }
  if (n.has("links")) {
    p.part = n.at("links").one_of({"nvlink", "nic"}) == "nvlink" ? topo::PerturbedPart::NvLink
                                                                 : topo::PerturbedPart::Nic;
    if (n.has("compute_speed")) {
      n.at("compute_speed")
          .fail(
              "a link perturbation changes bandwidth and latency; "
              "a GPU's compute_speed goes in a perturbation without links");
    }
    if (!n.has("bandwidth") && !n.has("extra_latency_us")) {
      n.fail("a link perturbation needs bandwidth or extra_latency_us");
    }
    p.bandwidth = n.has("bandwidth") ? n.at("bandwidth").number_in(0.01, 10) : 1.0;
    p.extra_latency = n.has("extra_latency_us")
                          ? Time::from_seconds(n.at("extra_latency_us").number_in(0, 1e6) * 1e-6)
                          : Time{};
    return p;
  }
  for (const char* key : {"bandwidth", "extra_latency_us"}) {
    if (n.has(key)) {
      n.at(key).fail("changes links: name them with \"links\": \"nvlink\" or \"nic\"");
    }
  }
  if (!n.has("compute_speed")) {
    n.fail("a perturbation needs compute_speed, or links with bandwidth or extra_latency_us");
  }
  p.compute_speed = n.at("compute_speed").number_in(0.1, 10);
  return p;
}

}  // namespace

std::vector<topo::Perturbation> parse_perturbations(const Node& list) {
  list.expect_array();
  if (list.size() > kMaxPerturbations) {
    list.fail(fmt::format("{} perturbations; at most {}", list.size(), kMaxPerturbations));
  }
  std::vector<topo::Perturbation> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    out.push_back(parse_one(list.at(i)));
    out.back().entry = i;
  }
  return out;
}

}  // namespace hopsim::config
