// NVML through dlopen (no nvml.h needed: the few entry points are declared here, as the NVML
// API documents them), the clock log and its summaries.
#include "calibrate/core/clocks.hpp"

#include <dlfcn.h>

#include <algorithm>

#include <fmt/format.h>

namespace hopsim::calib {
namespace {

// NVML's C API (nvml.h): return 0 (NVML_SUCCESS) on success.
using NvmlDevice = void*;
using NvmlInit = int (*)();
using NvmlHandleByIndex = int (*)(unsigned, NvmlDevice*);
using NvmlClockInfo = int (*)(NvmlDevice, int, unsigned*);
using NvmlTemperature = int (*)(NvmlDevice, int, unsigned*);
using NvmlPower = int (*)(NvmlDevice, unsigned*);
constexpr int kNvmlClockSm = 1;   // NVML_CLOCK_SM
constexpr int kNvmlClockMem = 2;  // NVML_CLOCK_MEM
constexpr int kNvmlTempGpu = 0;   // NVML_TEMPERATURE_GPU

class NvmlSampler : public ClockSampler {
 public:
  NvmlSampler(void* lib, NvmlDevice device) : lib_(lib), device_(device) {
    clock_ = reinterpret_cast<NvmlClockInfo>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    temp_ = reinterpret_cast<NvmlTemperature>(dlsym(lib, "nvmlDeviceGetTemperature"));
    power_ = reinterpret_cast<NvmlPower>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
  }
  ~NvmlSampler() override { dlclose(lib_); }
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

  bool usable() const { return clock_ != nullptr; }

  std::optional<ClockSample> sample() override {
    unsigned sm = 0;
    unsigned mem = 0;
    if (clock_(device_, kNvmlClockSm, &sm) != 0 || clock_(device_, kNvmlClockMem, &mem) != 0) {
      return std::nullopt;
    }
    ClockSample s{static_cast<double>(sm), static_cast<double>(mem), 0, 0};
    unsigned v = 0;
    if (temp_ != nullptr && temp_(device_, kNvmlTempGpu, &v) == 0) {
      s.temp_c = v;
    }
    if (power_ != nullptr && power_(device_, &v) == 0) {
      s.power_w = v / 1000.0;  // milliwatts
    }
    return s;
  }

 private:
  void* lib_;
  NvmlDevice device_;
  NvmlClockInfo clock_ = nullptr;
  NvmlTemperature temp_ = nullptr;
  NvmlPower power_ = nullptr;
};

template <typename Field>
std::vector<double> field(const std::vector<std::pair<std::string, PointClocks>>& points,
                          Field f) {
  std::vector<double> v;
  for (const auto& [label, p] : points) {
    if (p.sample) {
      v.push_back(f(*p.sample));
    }
  }
  return v;
}

}  // namespace

std::unique_ptr<ClockSampler> make_nvml_sampler(std::string& why_not) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    why_not = err != nullptr ? err : "libnvidia-ml.so.1 not found";
    return nullptr;
  }
  auto init = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlInit_v2"));
  auto by_index = reinterpret_cast<NvmlHandleByIndex>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  NvmlDevice device = nullptr;
  int rc = -1;
  if (init == nullptr || by_index == nullptr || (rc = init()) != 0 ||
      (rc = by_index(0, &device)) != 0) {
    why_not = fmt::format("NVML unusable (nvmlInit/nvmlDeviceGetHandleByIndex returned {})", rc);
    dlclose(lib);
    return nullptr;
  }
  auto sampler = std::make_unique<NvmlSampler>(lib, device);
  if (!sampler->usable()) {
    why_not = "NVML has no nvmlDeviceGetClockInfo";
    return nullptr;
  }
  return sampler;
}

ClockLog::ClockLog(ClockSampler* sampler) : sampler_(sampler) {}

std::optional<ClockSample> ClockLog::sample() {
  return sampler_ != nullptr ? sampler_->sample() : std::nullopt;
}

void ClockLog::start() {
  start_ = sample();
}

bool ClockLog::dropped(const ClockSample& s) const {
  return start_ && s.sm_mhz < (1.0 - kClockDropLimit) * start_->sm_mhz;
}

void ClockLog::record(const std::string& label, const PointClocks& p) {
  points_.emplace_back(label, p);
}

double median_of(std::vector<double> v) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2;
}

nlohmann::json ClockLog::clocks_mhz() const {
  const std::vector<double> sm = field(points_, [](const ClockSample& s) { return s.sm_mhz; });
  const std::vector<double> mem = field(points_, [](const ClockSample& s) { return s.mem_mhz; });
  if (!start_ || sm.empty()) {
    return nullptr;
  }
  return {{"sm_start", start_->sm_mhz},
          {"sm_min", *std::min_element(sm.begin(), sm.end())},
          {"sm_median", median_of(sm)},
          {"mem_min", *std::min_element(mem.begin(), mem.end())},
          {"mem_median", median_of(mem)}};
}

nlohmann::json ClockLog::method_fields() const {
  nlohmann::json j = {{"clock_source", sampler_ != nullptr ? "nvml_per_point" : "none"}};
  const std::vector<double> temp = field(points_, [](const ClockSample& s) { return s.temp_c; });
  const std::vector<double> power = field(points_, [](const ClockSample& s) { return s.power_w; });
  if (!temp.empty()) {
    j["temp_c_max"] = *std::max_element(temp.begin(), temp.end());
    j["power_w_median"] = median_of(power);
  }
  const auto count = [&](bool PointClocks::*flag) {
    return std::count_if(points_.begin(), points_.end(),
                         [&](const auto& entry) { return entry.second.*flag; });
  };
  j["points_remeasured"] = count(&PointClocks::remeasured);
  j["points_throttled"] = count(&PointClocks::throttled);
  return j;
}

std::string ClockLog::csv() const {
  std::string out = "point,sm_mhz,mem_mhz,temp_c,power_w,remeasured,throttled\n";
  for (const auto& [label, p] : points_) {
    const ClockSample s = p.sample.value_or(ClockSample{});
    out += fmt::format("\"{}\",{},{},{},{:.1f},{},{}\n", label, s.sm_mhz, s.mem_mhz, s.temp_c,
                       s.power_w, p.remeasured ? 1 : 0, p.throttled ? 1 : 0);
  }
  return out;
}

}  // namespace hopsim::calib
