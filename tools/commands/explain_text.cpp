// The terminal form of `hopsim explain`: nested keys, numbers in units their keys name.
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "tools/commands/explain_command.hpp"

namespace hopsim::tools {
namespace {

using Json = nlohmann::ordered_json;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// v scaled by the largest of 1e12, 1e9, 1e6, 1e3 it exceeds, with that prefix and `unit`.
std::string decimal(double v, std::string_view unit) {
  constexpr std::array<std::pair<double, const char*>, 4> kPrefixes{
      {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  for (const auto& [scale, prefix] : kPrefixes) {
    if (std::fabs(v) >= scale) {
      return fmt::format("{:.4g} {}{}", v / scale, prefix, unit);
    }
  }
  return fmt::format("{:.4g} {}", v, unit);
}

std::string seconds(double s) {
  if (s == 0) {
    return "0 s";
  }
  if (std::fabs(s) < 1e-3) {
    return fmt::format("{:.4g} us", s * 1e6);
  }
  return std::fabs(s) < 1 ? fmt::format("{:.4g} ms", s * 1e3) : fmt::format("{:.4g} s", s);
}

// A number in the unit its key names, or its section's ("compute_sources" holds shares,
// "per_layer_flops_per_gpu" FLOPs by operation).
std::string number(std::string_view key, double v, std::string_view section) {
  if (section == "compute_sources") {
    return fmt::format("{:.1f}%", 100 * v);
  }
  if (ends_with(key, "_ratio") || key.starts_with("zigzag")) {
    return v == std::floor(v) ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v);
  }
  if (key.find("bytes") != std::string_view::npos) {
    return decimal(v, "B");
  }
  if (ends_with(key, "tflops_per_s")) {
    return fmt::format("{:.1f} TFLOP/s", v);
  }
  if (key.find("flops") != std::string_view::npos ||
      section.find("flops") != std::string_view::npos) {
    return decimal(v, "FLOP");
  }
  if (ends_with(key, "_s") || key.find("_s_") != std::string_view::npos) {
    return seconds(v);
  }
  if (ends_with(key, "_GB")) {
    return fmt::format("{:.4g} GB", v);
  }
  if (key.find("params") != std::string_view::npos) {
    return fmt::format("{:.4g} billion", v / 1e9);
  }
  if (key.find("tokens") != std::string_view::npos || key.starts_with("min_seq")) {
    return fmt::format("{:.0f} tokens", v);
  }
  return v == std::floor(v) && std::fabs(v) < 1e15 ? fmt::format("{:.0f}", v)
                                                     : fmt::format("{:.4g}", v);
}

void print(const Json& j, int depth, std::string_view section, std::string& out) {
  for (const auto& [key, value] : j.items()) {
    const std::string indent(static_cast<std::size_t>(2 * depth), ' ');
    if (value.is_object()) {
      out += fmt::format("{}{}:\n", indent, key);
      // fwd and bwd inherit their section's unit.
      print(value, depth + 1, key == "fwd" || key == "bwd" ? section : std::string_view(key), out);
      continue;
    }
    std::string text;
    if (value.is_number()) {
      text = number(key, value.get<double>(), section);
    } else if (value.is_string()) {
      text = value.get<std::string>();
    } else {
      text = value.dump();
    }
    const int width = 36 - 2 * depth;
    out += fmt::format("{}{:<{}} {}\n", indent, key, width > 0 ? width : 1, text);
  }
}

}  // namespace

std::string format_explanation(const Json& explanation) {
  std::string out;
  print(explanation, 0, "", out);
  return out;
}

}  // namespace hopsim::tools
