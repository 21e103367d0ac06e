// The device under test: availability, properties, library versions, nvidia-smi readings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace hopsim::calib {

/// Empty when CUDA device 0 is usable; otherwise one line, e.g.
/// "no CUDA device: cudaErrorInsufficientDriver (CUDA driver version is insufficient ...)".
std::optional<std::string> device_unavailable_reason();

struct DeviceInfo {
  std::string name;
  std::string cc;  ///< "9.0"
  int sm_count = 0;
  std::int64_t hbm_bytes = 0;
  std::int64_t l2_bytes = 0;
  std::string driver;  ///< nvidia-smi driver_version, else "cuda <driver API version>"
  int cuda_runtime = 0;
  std::int64_t cublas = 0;
  std::int64_t cudnn = 0;
};

/// Properties of device 0 and the versions of the libraries in use. Needs a device.
DeviceInfo query_device();

/// Library versions only (no device needed): {"cuda_runtime", "cublas", "cudnn"}.
nlohmann::json library_versions();

/// The table's "device" object (only the schema's fields: l2_bytes is logged, not stored);
/// `clocks` and `ceilings` are added when not null.
nlohmann::json device_json(const DeviceInfo& info, const nlohmann::json& clocks,
                           const nlohmann::json& ceilings);

/// `nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits` for GPU 0, if nvidia-smi runs.
std::optional<std::string> nvidia_smi_query(const std::string& fields);

/// Current SM clock in MHz via nvidia-smi, if available.
std::optional<double> sm_clock_mhz();

}  // namespace hopsim::calib
