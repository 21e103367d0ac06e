// Owning device buffers and host-side decoding of BF16 / FP8 E4M3 values.
#include "calibrate/backend/buffers.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "calibrate/backend/cuda_check.hpp"

namespace hopsim::calib {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) {
    HOPSIM_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) {
    cudaFree(ptr_);  // errors here cannot be reported from a destructor
  }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) {
      cudaFree(ptr_);
    }
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void poison(const DeviceBuffer& buffer, cudaStream_t stream) {
  if (buffer.bytes() > 0) {
    HOPSIM_CUDA_CHECK(cudaMemsetAsync(buffer.get(), 0xFF, buffer.bytes(), stream));
  }
}

double bf16_to_double(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16U;
  float f = 0.0F;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

double fp8_e4m3_to_double(std::uint8_t bits) {
  const double sign = (bits & 0x80U) != 0 ? -1.0 : 1.0;
  const unsigned exponent = (bits >> 3U) & 0xFU;
  const unsigned mantissa = bits & 0x7U;
  if (exponent == 0xFU && mantissa == 0x7U) {
    return std::numeric_limits<double>::quiet_NaN();  // E4M3 has no infinities
  }
  if (exponent == 0) {
    return sign * std::ldexp(static_cast<double>(mantissa) / 8.0, -6);
  }
  return sign *
         std::ldexp(1.0 + static_cast<double>(mantissa) / 8.0, static_cast<int>(exponent) - 7);
}

std::vector<double> download(const void* data, Elem elem, std::size_t count) {
  std::vector<unsigned char> raw(count * elem_bytes(elem));
  HOPSIM_CUDA_CHECK(cudaDeviceSynchronize());
  HOPSIM_CUDA_CHECK(cudaMemcpy(raw.data(), data, raw.size(), cudaMemcpyDeviceToHost));
  std::vector<double> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    switch (elem) {
      case Elem::Bf16: {
        std::uint16_t bits = 0;
        std::memcpy(&bits, raw.data() + 2 * i, 2);
        out[i] = bf16_to_double(bits);
        break;
      }
      case Elem::Fp8E4m3:
        out[i] = fp8_e4m3_to_double(raw[i]);
        break;
      case Elem::F32: {
        float f = 0.0F;
        std::memcpy(&f, raw.data() + 4 * i, 4);
        out[i] = f;
        break;
      }
      case Elem::I32: {
        std::int32_t v = 0;
        std::memcpy(&v, raw.data() + 4 * i, 4);
        out[i] = v;
        break;
      }
    }
  }
  return out;
}

}  // namespace hopsim::calib
