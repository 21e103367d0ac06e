// The ceilings of shipping hardware (late 2026) that a cluster's figures are checked against.
#include "tools/config/plausibility.hpp"

#include <fmt/format.h>

namespace hopsim::config {
namespace {

// One figure's ceiling: the key under its section, the largest shipping value, its unit, and
// what a value above it most likely is.
struct Ceiling {
  const char* section;  // "" for the root
  const char* key;
  double max;
  const char* unit;
  const char* hint;
};

constexpr Ceiling kCeilings[] = {
    {"nic", "peak_GBps", 100, "GB/s per NIC",
     "800 Gb/s NICs (ConnectX-8) carry 100 GB/s; a figure in Gb/s is 8 times too large"},
    {"nic", "achievable_GBps", 100, "GB/s per NIC", "see peak_GBps"},
    {"nvlink", "peak_GBps", 900, "GB/s per GPU and direction",
     "NVLink 5 carries 900 GB/s; NVLink 4, 450"},
    {"nvlink", "achievable_GBps", 900, "GB/s per GPU and direction", "see peak_GBps"},
    {"nic", "latency_us", 50, "us",
     "InfiniBand's is 1-5 us; a figure in ns is 1000 times too large"},
    {"nvlink", "latency_us", 20, "us",
     "NVLink's is about 1 us; a figure in ns is 1000 times too large"},
    {"gpu", "hbm_GBps", 8000, "GB/s", "the fastest shipping HBM3e reaches 8 TB/s"},
    {"gpu", "hbm_GB", 300, "GB",
     "the largest shipping GPU, the GB300, lets a process allocate about 297 GB (its nvidia-smi "
     "shows 284,208 MiB)"},
    {"gpu", "peak_bf16_tflops", 2500, "dense TFLOP/s",
     "the fastest shipping GPU (GB200, GB300) reaches 2,500 dense; sparse figures are twice the "
     "dense"},
    {"gpu", "peak_fp8_tflops", 5000, "dense TFLOP/s",
     "the fastest shipping GPU (GB200, GB300) reaches 5,000 dense; sparse figures are twice the "
     "dense"},
    {"gpu", "peak_fp4_tflops", 15000, "dense TFLOP/s",
     "the fastest shipping GPU (GB300) reaches 15,000 dense NVFP4; sparse figures are larger"},
    {"", "software_overhead_us", 100, "us", "a collective's launch costs a few us"},
};

}  // namespace

std::vector<std::string> cluster_plausibility(const Node& root) {
  std::vector<std::string> out;
  for (const Ceiling& c : kCeilings) {
    const bool nested = c.section[0] != '\0';
    if (!root.is_object() ||
        (nested && (!root.has(c.section) || !root.at(c.section).is_object()))) {
      continue;
    }
    const Node section = nested ? root.at(c.section) : root;
    if (!section.has(c.key) || !section.at(c.key).json().is_number()) {
      continue;
    }
    const Node value = section.at(c.key);
    const double v = value.json().get<double>();
    if (v > c.max) {
      out.push_back(fmt::format("{}: {}: {:g} {} is above any shipping hardware (at most {:g}): "
                                "{}",
                                value.origin()->describe(value.path()), value.path().to_string(),
                                v, c.unit, c.max, c.hint));
    }
  }
  return out;
}

}  // namespace hopsim::config
