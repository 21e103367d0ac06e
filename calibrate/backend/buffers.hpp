// Device memory: an owning buffer, random fills (never zeros), and host read-back for checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "calibrate/core/types.hpp"

namespace hopsim::calib {

/// cudaMalloc'd memory, freed on destruction. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);

  DeviceBuffer(Elem elem, std::size_t count) : DeviceBuffer(elem_bytes(elem) * count) {}

  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }

  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Fills `count` elements with N(0, scale²) values from a counter-based hash of (seed, index);
/// not int32 ids (CalibError).
/// Defined in fill.cu.
void fill_random(void* data, Elem elem, std::size_t count, std::uint64_t seed, float scale,
                 cudaStream_t stream);

/// Sets every byte to 0xFF (NaN in BF16, FP8 E4M3 and FP32), so unwritten outputs show up.
void poison(const DeviceBuffer& buffer, cudaStream_t stream);

/// Copies `count` elements to the host and widens them to double (waits for the device).
std::vector<double> download(const void* data, Elem elem, std::size_t count);

/// Host decoding of the stored formats.
double bf16_to_double(std::uint16_t bits);
double fp8_e4m3_to_double(std::uint8_t bits);

}  // namespace hopsim::calib
