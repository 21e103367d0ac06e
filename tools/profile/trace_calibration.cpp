// Kernel times of a profiler trace gathered into calibration tables by class and shape.
#include "tools/profile/trace_calibration.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <numeric>
#include <set>
#include <tuple>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "tools/config/node.hpp"
#include "workloads/compute/kernel_class.hpp"

namespace hopsim::profile {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Shape = std::vector<std::int64_t>;

// One table being filled: what selects it, and per cell (its axis values) the kernels' times.
struct Group {
  std::string op;      ///< "gemm" or "memory"
  std::string pass;    ///< "fwd" or "bwd"
  std::string role;    ///< gemm bwd: "dgrad" or "wgrad"; memory: the kernel class
  std::string dtype;
  std::map<Shape, std::vector<double>> cells;
};
using GroupKey = std::tuple<std::string, std::string, std::string, std::string>;

std::optional<std::string> dtype_of(const CpuOp& op, std::size_t input) {
  if (input >= op.types.size()) {
    return std::nullopt;
  }
  const std::string& t = op.types[input];
  if (t == "c10::BFloat16") {
    return "bf16";
  }
  if (t.find("Float8_e4m3") != std::string::npos || t.find("Float8_e5m2") != std::string::npos) {
    return "fp8";
  }
  return std::nullopt;
}

std::int64_t leading(const Shape& s) {
  return std::accumulate(s.begin(), s.end() - 1, std::int64_t{1}, std::multiplies<>());
}

// A GEMM's m, n, k and the input whose type is its dtype, from the operator that ran it.
std::optional<std::pair<Shape, std::size_t>> gemm_shape(const CpuOp& op) {
  using Found = std::optional<std::pair<Shape, std::size_t>>;
  auto matrices = [&](std::size_t a, std::size_t b) -> Found {
    if (op.dims.size() <= b || op.dims[a].size() != 2 || op.dims[b].size() != 2 ||
        op.dims[a][1] != op.dims[b][0]) {
      return std::nullopt;
    }
    return std::pair{Shape{op.dims[a][0], op.dims[b][1], op.dims[a][1]}, a};
  };
  if (op.name == "aten::mm" || op.name == "aten::matmul") {
    return matrices(0, 1);
  }
  if (op.name == "aten::addmm") {
    return matrices(1, 2);
  }
  if (op.name == "aten::linear" && op.dims.size() >= 2 && op.dims[0].size() >= 2 &&
      op.dims[1].size() == 2 && op.dims[0].back() == op.dims[1][1]) {
    return std::pair{Shape{leading(op.dims[0]), op.dims[1][0], op.dims[1][1]}, std::size_t{0}};
  }
  return std::nullopt;
}

// Where a kernel of class `cls` launched by `op` goes, or why it does not.
std::variant<std::pair<GroupKey, Shape>, std::string> place(const std::string& cls,
                                                            const CpuOp& op) {
  if (cls == "gemm_fprop" || cls == "gemm_dgrad" || cls == "gemm_wgrad") {
    const auto shape = gemm_shape(op);
    if (!shape) {
      return std::string("no shapes");
    }
    const std::optional<std::string> dtype = dtype_of(op, shape->second);
    if (!dtype) {
      return std::string("dtype");
    }
    const bool fwd = cls == "gemm_fprop";
    return std::pair{GroupKey{"gemm", fwd ? "fwd" : "bwd", fwd ? "" : cls.substr(5), *dtype},
                     shape->first};
  }
  if (cls == "norm") {
    if (op.dims.empty() || op.dims[0].size() < 2) {
      return std::string("no shapes");
    }
    if (dtype_of(op, 0) != "bf16") {
      return std::string("dtype");
    }
    const std::int64_t t = leading(op.dims[0]);
    const std::int64_t h = op.dims[0].back();
    const bool bwd = op.name.find("backward") != std::string::npos ||
                     op.name.find("Backward") != std::string::npos;
    // The closed forms' bytes (docs/compute-model.md): 4th + 4t forward, 6th + 4t backward.
    const std::int64_t bytes = (bwd ? 6 : 4) * t * h + 4 * t;
    return std::pair{GroupKey{"memory", bwd ? "bwd" : "fwd", "norm", "bf16"}, Shape{bytes}};
  }
  return std::string("class not written");
}

// The table of one group: its axes (each axis's values ascending) and a time per cell, the
// mean of its kernels, null where the trace has none.
OrderedJson table_json(const Group& g, const std::string& trace) {
  const std::vector<std::string> names =
      g.op == "gemm" ? std::vector<std::string>{"m", "n", "k"} : std::vector<std::string>{"bytes"};
  std::vector<std::set<std::int64_t>> values(names.size());
  std::size_t kernels = 0;
  for (const auto& [shape, times] : g.cells) {
    for (std::size_t a = 0; a < shape.size(); ++a) {
      values[a].insert(shape[a]);
    }
    kernels += times.size();
  }
  OrderedJson axes = OrderedJson::array();
  for (std::size_t a = 0; a < names.size(); ++a) {
    axes.push_back({{"name", names[a]}, {"values", values[a]}});
  }
  OrderedJson times = OrderedJson::array();
  std::function<void(std::size_t, Shape&)> fill = [&](std::size_t a, Shape& at) {
    if (a == names.size()) {
      const auto it = g.cells.find(at);
      times.push_back(it == g.cells.end()
                          ? OrderedJson(nullptr)
                          : OrderedJson(std::accumulate(it->second.begin(), it->second.end(), 0.0) /
                                 static_cast<double>(it->second.size())));
      return;
    }
    for (const std::int64_t v : values[a]) {
      at.push_back(v);
      fill(a + 1, at);
      at.pop_back();
    }
  };
  Shape at;
  fill(0, at);
  OrderedJson key = {{"dtype", g.dtype}};
  if (g.op == "memory") {
    key["kernel"] = g.role;
  } else if (!g.role.empty()) {
    key["role"] = g.role;
  }
  return {{"op", g.op},
          {"pass", g.pass},
          {"impl", "profiled"},
          {"key", key},
          {"axes", axes},
          {"flops", g.op == "gemm" ? "gemm_v1" : "bytes_v1"},
          {"time_us", times},
          {"source", fmt::format("{}: the mean of {} kernels per cell", trace, kernels)}};
}

bool compute_class(const std::vector<std::string>& classes) {
  return std::none_of(classes.begin(), classes.end(), [](const std::string& c) {
    return communication_class(c) || c == kUnmodelled;
  });
}

OrderedJson device_json(const KinetoTrace& trace, const std::string& where) {
  if (!trace.gpu) {
    throw config::ConfigError(fmt::format("{}: the trace names no GPU "
                                          "(deviceProperties[0].name); a calibration table "
                                          "says which GPU it times",
                                          where));
  }
  OrderedJson device = {{"name", *trace.gpu}};
  if (trace.sm_count && *trace.sm_count > 0) {
    device["sm_count"] = *trace.sm_count;
  }
  if (trace.hbm_bytes && *trace.hbm_bytes > 0) {
    device["hbm_bytes"] = *trace.hbm_bytes;
  }
  return device;
}

}  // namespace

TraceCalibration calibration_from_trace(const KinetoTrace& trace, const KernelRules& rules,
                                        const TraceCalibrationOptions& o) {
  TraceCalibration out;
  std::map<GroupKey, Group> groups;
  for (const KernelEvent& k : trace.kernels) {
    const std::size_t rule = rules.match(k.name);
    if ((o.device && k.device != *o.device) || rule == rules.size() ||
        !compute_class(rules.rule(rule).classes)) {
      continue;
    }
    const std::vector<std::string>& classes = rules.rule(rule).classes;
    const auto op = k.external_id ? trace.ops.find(*k.external_id) : trace.ops.end();
    using Placed = std::variant<std::pair<GroupKey, Shape>, std::string>;
    const Placed placed = classes.size() > 1       ? Placed(std::string("ambiguous class"))
                          : op == trace.ops.end() ? Placed(std::string("no shapes"))
                                                  : place(classes.front(), op->second);
    if (const auto* why = std::get_if<std::string>(&placed)) {
      ++out.left_out[*why];
      continue;
    }
    const auto& [key, shape] = std::get<std::pair<GroupKey, Shape>>(placed);
    Group& g = groups[key];
    std::tie(g.op, g.pass, g.role, g.dtype) = key;
    g.cells[shape].push_back(k.duration_us);
    ++out.kernels;
  }
  if (groups.empty()) {
    std::vector<std::string> why;
    for (const auto& [reason, count] : out.left_out) {
      why.push_back(fmt::format("{} {}", count, reason));
    }
    throw config::ConfigError(fmt::format(
        "{}: no kernel could be written to a calibration table (left out: {}); it needs GEMM "
        "or norm kernels whose class one rule names alone, linked by \"External id\" to the "
        "operator that launched them, recorded with record_shapes=True",
        o.trace,
        why.empty() ? std::string("no compute kernel") : fmt::format("{}", fmt::join(why, ", "))));
  }
  OrderedJson& f = out.file;
  f["schema"] = "hopsim.calibration/1";
  f["created_utc"] = o.created_utc;
  f["source"] = "measured";
  f["device"] = device_json(trace, o.trace);
  f["method"] = {{"timer", "PyTorch profiler (CUPTI kernel activity)"},
                 {"statistic", "mean of the trace's kernels per cell"},
                 {"kernels", out.kernels}};
  f["description"] = fmt::format("Kernel times of {} by hopsim profile-check "
                                 "--write-calibration.", o.trace);
  if (!o.base.empty()) {
    f["base"] = o.base;
  }
  f["tables"] = OrderedJson::array();
  for (const auto& [key, g] : groups) {
    f["tables"].push_back(table_json(g, o.trace));
    out.cells += g.cells.size();
  }
  return out;
}

}  // namespace hopsim::profile
