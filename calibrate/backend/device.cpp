// Device discovery through the CUDA runtime, library version queries and nvidia-smi readings.
#include "calibrate/backend/device.hpp"

#include <array>
#include <cstdio>
#include <memory>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "calibrate/backend/cuda_check.hpp"
#include <cublasLt.h>
#include <cudnn_graph.h>

namespace hopsim::calib {

std::optional<std::string> device_unavailable_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear it, so later calls do not report it again
    return fmt::format("no CUDA device: {} ({})", cudaGetErrorName(err), cudaGetErrorString(err));
  }
  if (count == 0) {
    return std::string("no CUDA device: cudaGetDeviceCount found none");
  }
  return std::nullopt;
}

nlohmann::json library_versions() {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  return {{"cuda_runtime", runtime},
          {"cublas", static_cast<std::int64_t>(cublasLtGetVersion())},
          {"cudnn", static_cast<std::int64_t>(cudnnGetVersion())}};
}

DeviceInfo query_device() {
  cudaDeviceProp prop{};
  HOPSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  DeviceInfo info;
  info.name = prop.name;
  info.cc = fmt::format("{}.{}", prop.major, prop.minor);
  info.sm_count = prop.multiProcessorCount;
  info.hbm_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  info.l2_bytes = prop.l2CacheSize;
  int driver_api = 0;
  HOPSIM_CUDA_CHECK(cudaDriverGetVersion(&driver_api));
  info.driver = nvidia_smi_query("driver_version").value_or(fmt::format("cuda {}", driver_api));
  HOPSIM_CUDA_CHECK(cudaRuntimeGetVersion(&info.cuda_runtime));
  info.cublas = static_cast<std::int64_t>(cublasLtGetVersion());
  info.cudnn = static_cast<std::int64_t>(cudnnGetVersion());
  return info;
}

nlohmann::json device_json(const DeviceInfo& info, const nlohmann::json& clocks,
                           const nlohmann::json& ceilings) {
  nlohmann::json j = {{"name", info.name},         {"cc", info.cc},
                      {"sm_count", info.sm_count}, {"hbm_bytes", info.hbm_bytes},
                      {"driver", info.driver},     {"cuda_runtime", info.cuda_runtime},
                      {"cublas", info.cublas},     {"cudnn", info.cudnn}};
  if (!clocks.is_null()) {
    j["clocks_mhz"] = clocks;
  }
  if (!ceilings.is_null()) {
    j["ceilings"] = ceilings;
  }
  return j;
}

std::optional<std::string> nvidia_smi_query(const std::string& fields) {
  const std::string cmd = fmt::format(
      "nvidia-smi --id=0 --query-gpu={} --format=csv,noheader,nounits 2>/dev/null", fields);
  const std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) {
    return std::nullopt;
  }
  std::string out;
  std::array<char, 256> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe.get()) != nullptr) {
    out += buf.data();
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) {
    out.pop_back();
  }
  if (out.empty()) {
    return std::nullopt;
  }
  return out;
}

std::optional<double> sm_clock_mhz() {
  const auto text = nvidia_smi_query("clocks.sm");
  if (!text) {
    return std::nullopt;
  }
  try {
    return std::stod(*text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace hopsim::calib
