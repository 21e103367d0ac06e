// The algorithm table's derived text (algorithms.hpp).
#include "workloads/collectives/algorithms.hpp"

#include <vector>

#include <fmt/format.h>

namespace hopsim::work {

namespace {

// "a, b or c".
std::string listing(const std::vector<std::string>& names, std::string_view last) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += i == 0 ? "" : i + 1 == names.size() ? last : ", ";
    out += names[i];
  }
  return out;
}

// The algorithms that implement `op`, each as `format` makes it.
template <class Format>
std::string algorithms_for(CollectiveOp op, Format format) {
  std::vector<std::string> names;
  for (const AlgorithmRow& row : kCollectiveAlgorithms) {
    if (implements(op, row.algorithm)) {
      names.push_back(format(row));
    }
  }
  return listing(names, " or ");
}

}  // namespace

std::string algorithms_of(CollectiveOp op) {
  return algorithms_for(op,
                        [](const AlgorithmRow& row) { return fmt::format("\"{}\"", row.name); });
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
