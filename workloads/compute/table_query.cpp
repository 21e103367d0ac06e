// A calibration table's cell asked of a compute model (table_query.hpp).
#include "workloads/compute/table_query.hpp"

#include <fmt/format.h>

namespace hopsim::work {

namespace {

/// The enumerator among `all` whose name (by `name_of`) is `name`.
template <class Enum, std::size_t N, class NameOf>
std::optional<Enum> named(const std::array<Enum, N>& all, const std::string& name, NameOf name_of) {
  for (Enum e : all) {
    if (name_of(e) == name) {
      return e;
    }
  }
  return std::nullopt;
}

std::string key_of(const CalibrationTable& t, const std::string& name) {
  const auto it = t.key.find(name);
  return it == t.key.end() ? std::string() : it->second;
}

std::int64_t int_key(const CalibrationTable& t, const std::string& name) {
  return std::stoll(t.key.at(name));
}

bool weight_gradient(const CalibrationTable& t) {
  const auto it = t.variant.find("role");
  return it != t.variant.end() && it->second == role_name(GemmRole::Wgrad);
}

ComputeCost gemm_answer(const ComputeModel& model, const CalibrationTable& t, Dtype dtype,
                        Pass pass, std::span<const std::int64_t> p) {
  if (pass == Pass::Fwd) {
    return model.gemm(dtype, p[0], p[1], p[2], GemmRole::Fprop);
  }
  if (weight_gradient(t)) {  // the table's (m, n, k) is the layer's (k, n, m)
    return model.gemm(dtype, p[2], p[1], p[0], GemmRole::Wgrad);
  }
  return model.gemm(dtype, p[0], p[1], p[2], Pass::Bwd);
}

ComputeCost grouped_answer(const ComputeModel& model, const CalibrationTable& t, Dtype dtype,
                           Pass pass, std::span<const std::int64_t> p) {
  const std::int64_t n = int_key(t, "n");
  const std::int64_t k = int_key(t, "k");
  if (pass == Pass::Fwd) {
    return model.grouped_gemm(dtype, p[0], p[1], n, k, GemmRole::Fprop);
  }
  if (weight_gradient(t)) {
    return model.grouped_gemm(dtype, p[0], p[1], n, k, GemmRole::Wgrad);
  }
  return model.grouped_gemm(dtype, p[0], p[1], n, k, Pass::Bwd);
}

}  // namespace

std::optional<ComputeCost> model_answer(const ComputeModel& model, const CalibrationTable& table,
                                        std::span<const std::int64_t> point, std::string& why) {
  const auto dtype = named(std::array{Dtype::Bf16, Dtype::Fp8}, key_of(table, "dtype"), dtype_name);
  const auto pass = named(std::array{Pass::Fwd, Pass::Bwd}, table.pass, pass_name);
  if (!dtype || !pass) {
    why =
        fmt::format("dtype \"{}\" or pass \"{}\" has no query", key_of(table, "dtype"), table.pass);
    return std::nullopt;
  }
  if (table.op == "gemm") {
    return gemm_answer(model, table, *dtype, *pass, point);
  }
  if (table.op == "grouped_gemm") {
    return grouped_answer(model, table, *dtype, *pass, point);
  }
  if (table.op == "attn") {
    const auto mask = named(std::array{Mask::None, Mask::CausalTopLeft, Mask::CausalBottomRight},
                            key_of(table, "mask"), mask_name);
    if (!mask) {
      why = fmt::format("mask \"{}\" has no query", key_of(table, "mask"));
      return std::nullopt;
    }
    const AttentionShape shape{int_key(table, "d_qk"),
                               int_key(table, "d_v"),
                               *mask,
                               int_key(table, "gqa"),
                               point[0],
                               point[1],
                               point[2]};
    return model.attention(*dtype, shape, *pass);
  }
  if (table.op == "memory") {
    for (std::size_t i = 0; i < kKernelClasses; ++i) {
      const auto kind = static_cast<KernelClass>(i);
      if (memory_bound(kind) && kernel_class_name(kind) == key_of(table, "kernel")) {
        return model.memory(kind, Bytes{point[0]}, *pass);
      }
    }
    why = fmt::format("memory kernel \"{}\" is no memory-bound kernel class",
                      key_of(table, "kernel"));
    return std::nullopt;
  }
  why = fmt::format("op \"{}\" has no query", table.op);
  return std::nullopt;
}

std::vector<double> answer_errors(const ComputeModel& model, const CalibrationTable& table) {
  std::vector<double> out;
  for (std::size_t c = 0; c < table.time_us.size(); ++c) {
    if (!table.time_us[c]) {
      continue;
    }
    std::string why;
    const std::vector<std::int64_t> point = table.cell_point(c);
    if (const auto answer = model_answer(model, table, point, why)) {
      out.push_back(answer->time.seconds() * 1e6 / *table.time_us[c] - 1);
    }
  }
  return out;
}

}  // namespace hopsim::work
