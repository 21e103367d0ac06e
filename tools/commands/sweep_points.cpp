// The point grammar of `hopsim sweep`: --vary's values (a list or a range), a --grid file's
// points, their cartesian product, and the --shard that takes one run's share of it.
#include "tools/commands/sweep_points.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tools/commands/sweep_command.hpp"
#include "tools/config/json_file.hpp"
#include "tools/config/node.hpp"

namespace hopsim::tools {
namespace {

using config::ConfigError;
using sweep::parse_number;

constexpr std::size_t kMaxValues = 1000;
constexpr std::size_t kMaxPoints = 1000000;

// One axis of the sweep: a --vary key and its values, or the points of a --grid file (several
// keys, a value each per point).
struct Dimension {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;  ///< per value: one per key
};

// A --vary KEY=... parsed.
struct Vary {
  std::string key;
  std::vector<std::string> values;
};

// START:STOP:FACTOR as the values START, START x FACTOR, ... up to STOP; integers when START and
// FACTOR are.
bool parse_range(const std::string& arg, const std::string& text, std::vector<std::string>& out) {
  const std::size_t a = text.find(':');
  const std::size_t b = a == std::string::npos ? a : text.find(':', a + 1);
  if (b == std::string::npos || text.find(':', b + 1) != std::string::npos) {
    return false;
  }
  double start = 0;
  double stop = 0;
  double factor = 0;
  if (!parse_number(text.substr(0, a), start) ||
      !parse_number(text.substr(a + 1, b - a - 1), stop) ||
      !parse_number(text.substr(b + 1), factor)) {
    return false;
  }
  if (!(start > 0) || !(factor > 1) || stop < start) {
    throw ConfigError(fmt::format("--vary {}: a range START:STOP:FACTOR needs START > 0, "
                                  "FACTOR > 1 and STOP >= START",
                                  config::echo(arg)));
  }
  const bool integers = start == std::floor(start) && factor == std::floor(factor) &&
                        stop < 9e15;
  for (double v = start; v <= stop * (1 + 1e-12); v *= factor) {
    if (out.size() == kMaxValues) {
      throw ConfigError(
          fmt::format("--vary {}: more than {} values", config::echo(arg), kMaxValues));
    }
    out.push_back(integers ? fmt::format("{}", static_cast<std::int64_t>(std::llround(v)))
                           : fmt::format("{:g}", v));
  }
  return true;
}

Vary parse_vary(const std::string& arg) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(fmt::format("--vary {}: expected KEY=V1,V2,... or KEY=START:STOP:FACTOR",
                                  config::echo(arg)));
  }
  Vary v{arg.substr(0, eq), {}};
  const std::string text = arg.substr(eq + 1);
  if (parse_range(arg, text, v.values)) {
    return v;
  }
  std::size_t from = 0;
  while (true) {
    const std::size_t comma = text.find(',', from);
    v.values.push_back(text.substr(from, comma == std::string::npos ? comma : comma - from));
    if (v.values.back().empty()) {
      throw ConfigError(fmt::format("--vary {}: an empty value", config::echo(arg)));
    }
    if (v.values.size() > kMaxValues) {
      throw ConfigError(
          fmt::format("--vary {}: more than {} values", config::echo(arg), kMaxValues));
    }
    if (comma == std::string::npos) {
      break;
    }
    from = comma + 1;
  }
  return v;
}

Dimension dimension_of(const Vary& v) {
  Dimension d{{v.key}, {}};
  for (const std::string& value : v.values) {
    d.values.push_back({value});
  }
  return d;
}

// A --grid file: a JSON array of points, each an object of the same dotted keys and their
// values (as --set takes them; strings bare in the CSV).
Dimension read_grid(const std::string& path) {
  const nlohmann::json grid = config::read_json_file(path);
  if (!grid.is_array() || grid.empty()) {
    throw ConfigError(fmt::format("{}: a grid is a JSON array of points, each an object of "
                                  "KEY: VALUE (dotted keys, as --set takes them)",
                                  path));
  }
  if (grid.size() > kMaxPoints) {
    throw ConfigError(fmt::format("{}: more than {} points", path, kMaxPoints));
  }
  Dimension d;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const nlohmann::json& point = grid[i];
    if (!point.is_object() || point.empty()) {
      throw ConfigError(fmt::format("{}: /{}: expected an object of KEY: VALUE", path, i));
    }
    std::vector<std::string> keys;
    std::vector<std::string> values;
    for (const auto& [key, value] : point.items()) {
      if (key.empty()) {
        throw ConfigError(fmt::format("{}: /{}: an empty key", path, i));
      }
      keys.push_back(key);
      values.push_back(value.is_string() ? value.get<std::string>() : value.dump());
    }
    if (i == 0) {
      d.keys = keys;
    } else if (keys != d.keys) {
      throw ConfigError(fmt::format("{}: /{}: the keys differ from point 0's ({}); every point "
                                    "of a grid sets the same keys",
                                    path, i, fmt::join(d.keys, ", ")));
    }
    d.values.push_back(std::move(values));
  }
  return d;
}

// The cartesian product of the dimensions' values, the last dimension varying fastest; each
// point as KEY=VALUE overrides.
std::vector<std::vector<std::string>> points_of(const std::vector<Dimension>& dims) {
  std::size_t total = 1;
  std::set<std::string> keys;
  for (const Dimension& d : dims) {
    total *= d.values.size();
    if (total > kMaxPoints) {
      throw ConfigError(fmt::format("--vary: more than {} points", kMaxPoints));
    }
    for (const std::string& k : d.keys) {
      if (!keys.insert(k).second) {
        throw ConfigError(fmt::format("{} is varied twice (by --vary or --grid)", k));
      }
    }
  }
  std::vector<std::vector<std::string>> points;
  for (std::size_t p = 0; p < total; ++p) {
    std::vector<std::vector<std::string>> parts(dims.size());
    std::size_t rest = p;
    for (std::size_t k = dims.size(); k-- > 0;) {
      const std::size_t n = dims[k].values.size();
      const std::vector<std::string>& value = dims[k].values[rest % n];
      for (std::size_t j = 0; j < dims[k].keys.size(); ++j) {
        parts[k].push_back(dims[k].keys[j] + "=" + value[j]);
      }
      rest /= n;
    }
    std::vector<std::string> point;
    for (const auto& part : parts) {
      point.insert(point.end(), part.begin(), part.end());
    }
    points.push_back(std::move(point));
  }
  return points;
}

}  // namespace

namespace sweep {

bool parse_number(const std::string& s, double& out) {
  if (s.empty()) {
    return false;
  }
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && errno == 0 && std::isfinite(out);
}

Shard parse_shard(const std::string& shard) {
  if (shard.empty()) {
    return {};
  }
  double i = 0;
  double n = 0;
  const std::size_t slash = shard.find('/');
  if (slash == std::string::npos || !parse_number(shard.substr(0, slash), i) ||
      !parse_number(shard.substr(slash + 1), n) || n < 1 || i < 1 || i > n || i != std::floor(i) ||
      n != std::floor(n) || n > 1e6) {
    throw ConfigError(fmt::format("--shard {}: expected I/N with 1 <= I <= N", shard));
  }
  return {static_cast<std::size_t>(i) - 1, static_cast<std::size_t>(n)};
}

}  // namespace sweep

std::vector<std::vector<std::string>> sweep_points(const std::vector<std::string>& args,
                                                   const std::string& grid) {
  std::vector<Dimension> dims;
  if (!grid.empty()) {
    dims.push_back(read_grid(grid));
  }
  for (const std::string& a : args) {
    dims.push_back(dimension_of(parse_vary(a)));
  }
  return points_of(dims);
}

}  // namespace hopsim::tools
