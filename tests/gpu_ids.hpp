// GPU ids for tests: a list of ranks written as numbers, or the first n GPUs.
#pragma once

#include <initializer_list>
#include <vector>

#include "topology/ids.hpp"

namespace hopsim::test {

inline std::vector<topo::GpuId> gpu_ids(std::initializer_list<int> ranks) {
  std::vector<topo::GpuId> out;
  for (const int r : ranks) {
    out.emplace_back(r);
  }
  return out;
}

/// GPUs 0 .. n-1.
inline std::vector<topo::GpuId> first_gpus(int n) {
  std::vector<topo::GpuId> out;
  for (int r = 0; r < n; ++r) {
    out.emplace_back(r);
  }
  return out;
}

}  // namespace hopsim::test
