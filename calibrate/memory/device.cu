// The memory-bound kernels' launch helper that asks the device (nvcc only; a plain build
// compiles nothing here).
#ifdef __CUDACC__
#include <map>
#include <utility>

#include "calibrate/memory/device.cuh"

namespace hopsim::calib {

int resident_blocks(const void* kernel, int threads) {
  static std::map<std::pair<const void*, int>, int> cache;
  const auto key = std::make_pair(kernel, threads);
  if (const auto it = cache.find(key); it != cache.end()) {
    return it->second;
  }
  int device = 0;
  int sms = 0;
  int per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0);
  const int resident = (sms > 0 ? sms : 132) * (per_sm > 0 ? per_sm : 1);
  cache.emplace(key, resident);
  return resident;
}

}  // namespace hopsim::calib
#endif
