// The algorithm table's derived text (algorithms.hpp).
#include "workloads/collectives/algorithms.hpp"

#include <vector>

#include <fmt/format.h>

#include "workloads/compute/enum_names.hpp"

namespace hopsim::work {

namespace {

// The algorithms that implement `op`, each as `format` makes it.
template <class Format>
std::string algorithms_for(CollectiveOp op, Format format) {
  std::vector<std::string> names;
  for (const AlgorithmRow& row : kCollectiveAlgorithms) {
    if (implements(op, row.algorithm)) {
      names.push_back(format(row));
    }
  }
  return name_list(names, " or ");
}

}  // namespace

std::string algorithms_of(CollectiveOp op) {
  return algorithms_for(op,
                        [](const AlgorithmRow& row) { return fmt::format("\"{}\"", row.name); });
}

std::string quoted_op_names() {
  return row_names(kCollectiveOps, nullptr, true, ", ");
}

std::string quoted_algorithm_names() {
  return row_names(kCollectiveAlgorithms, nullptr, true, ", ");
}

std::string algorithms_by_op() {
  std::vector<std::string> parts;
  for (const OpRow& op : kCollectiveOps) {
    const auto with_note = [](const AlgorithmRow& r) {
      return r.note.empty() ? std::string(r.name) : fmt::format("{} ({})", r.name, r.note);
    };
    parts.push_back(fmt::format("{}: {}", op.name, algorithms_for(op.op, with_note)));
  }
  std::string out;
  for (const std::string& part : parts) {
    out += out.empty() ? part : "; " + part;
  }
  return out;
}

}  // namespace hopsim::work
