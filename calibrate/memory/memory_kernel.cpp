// Lookups and byte counts over the memory-bound kernels' rows (memory_kernel.hpp).
#include "calibrate/memory/memory_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

namespace hopsim::calib {

const MemoryKernelRow& memory_kernel(std::string_view name) {
  const auto rows = memory_kernel_rows();
  std::string expected;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i]->name == name) {
      return *rows[i];
    }
    expected += i == 0 ? "" : (i + 1 == rows.size() ? " or " : ", ");
    expected += rows[i]->name;
  }
  throw CalibError(fmt::format("unknown memory kernel \"{}\" (expected {})", name, expected));
}

const MemoryPass& runnable_pass(const MemoryKernelRow& kernel, Pass pass, std::int64_t width) {
  const MemoryPass& p = kernel.pass(pass);
  if (!p.exists()) {
    throw CalibError(fmt::format("memory kernel {} has no {} pass", kernel.name, to_string(pass)));
  }
  if (width < 1 || width % p.width_multiple != 0 || (p.max_width > 0 && width > p.max_width)) {
    throw CalibError(fmt::format("memory kernel {} cannot run {} wide", kernel.name, width));
  }
  return p;
}

double rule_bytes(const MemoryPass& pass, std::int64_t rows, std::int64_t width) {
  return static_cast<double>(rows) * pass.bytes.at(width);
}

double buffer_bytes(const MemoryPass& pass, std::int64_t rows, std::int64_t width, bool counted) {
  double sum = 0;
  for (const auto buffers : {pass.in, pass.out}) {
    for (const MemoryBuffer& b : buffers) {
      if (b.counted == counted) {
        sum += static_cast<double>(b.moves) * static_cast<double>(elem_bytes(b.elem)) *
               static_cast<double>(b.count(rows, width));
      }
    }
  }
  return sum;
}

std::int64_t memory_rows(const MemoryKernelRow& kernel, Pass pass, double bytes) {
  const MemoryPass& p = runnable_pass(kernel, pass, kernel.width);
  const double per_row = p.bytes.at(kernel.width) * static_cast<double>(p.rows_multiple);
  return p.rows_multiple * std::max<std::int64_t>(1, std::llround(bytes / per_row));
}

std::vector<std::int32_t> memory_ids(Fill fill, std::int64_t rows, std::int64_t width) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(rows));
  if (fill == Fill::RowShuffle) {
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), std::mt19937(7));
  } else if (fill == Fill::Targets) {
    std::uniform_int_distribution<std::int32_t> target(0, static_cast<std::int32_t>(width - 1));
    std::mt19937 gen(11);
    for (std::int32_t& id : ids) {
      id = target(gen);
    }
  } else {
    throw CalibError("memory_ids: a random input has no ids");
  }
  return ids;
}

}  // namespace hopsim::calib
