// The CP algorithm table's names, for messages and the reference (cp_algorithms.hpp).
#include "workloads/cp/cp_algorithms.hpp"

#include <fmt/format.h>

#include "workloads/compute/enum_names.hpp"

namespace hopsim::work {

std::string cp_algorithm_list(bool (*keep)(const CpAlgorithmRow&), bool quoted,
                              std::string_view last) {
  return row_names(kCpAlgorithms, keep, quoted, last);
}

std::string cp_algorithms_described() {
  std::string out;
  for (const CpAlgorithmRow& row : kCpAlgorithms) {
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", row.name, row.note);
  }
  return out;
}

}  // namespace hopsim::work
