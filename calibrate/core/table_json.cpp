// Writes calibration files and reads them back with JSON-pointer error messages.
#include "calibrate/core/table_json.hpp"

#include <cmath>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "calibrate/memory/memory_kernel.hpp"

namespace hopsim::calib {
namespace {

using nlohmann::json;

nlohmann::json number_json(double v) {
  // Integral values are written as integers so axes read "m": [128, 1024], not 128.0.
  if (std::abs(v) < 9.0e15 && v == std::floor(v)) {
    return static_cast<std::int64_t>(v);
  }
  return v;
}

json cells_json(const std::vector<std::optional<double>>& cells) {
  json a = json::array();
  for (const auto& c : cells) {
    a.push_back(c ? number_json(*c) : json(nullptr));
  }
  return a;
}

json table_json(const Table& t) {
  json key = json::object();
  for (const auto& [name, value] : t.key) {
    std::visit([&, n = name](const auto& v) { key[n] = v; }, value);
  }
  json axes = json::array();
  for (const Axis& a : t.axes) {
    json values = json::array();
    for (double v : a.values) {
      values.push_back(number_json(v));
    }
    axes.push_back({{"name", a.name}, {"values", values}});
  }
  json j = {{"op", to_string(t.op)},
            {"pass", to_string(t.pass)},
            {"impl", t.impl},
            {"key", key},
            {"axes", axes},
            {"flops", t.flops},
            {"time_us", cells_json(t.time_us)}};
  if (!t.p10_us.empty()) {
    j["p10_us"] = cells_json(t.p10_us);
  }
  if (!t.p90_us.empty()) {
    j["p90_us"] = cells_json(t.p90_us);
  }
  return j;
}

/// Carries the origin and JSON pointer of the value being read.
class Reader {
 public:
  Reader(const json& j, std::string origin, std::string pointer)
      : j_(j), origin_(std::move(origin)), pointer_(std::move(pointer)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw CalibError(fmt::format("{}: {}: {}", origin_, pointer_.empty() ? "/" : pointer_, what));
  }

  const json& value() const { return j_; }

  Reader at(const std::string& name) const {
    if (!j_.is_object() || !j_.contains(name)) {
      fail(fmt::format("missing key \"{}\"", name));
    }
    return Reader(j_.at(name), origin_, pointer_ + "/" + name);
  }

  Reader at(std::size_t i) const {
    return Reader(j_.at(i), origin_, fmt::format("{}/{}", pointer_, i));
  }

  std::string string() const {
    if (!j_.is_string()) {
      fail(fmt::format("must be a string, got {}", j_.dump()));
    }
    return j_.get<std::string>();
  }

  const json& object(const std::set<std::string>& allowed) const {
    if (!j_.is_object()) {
      fail(fmt::format("must be an object, got {}", j_.dump()));
    }
    for (const auto& [name, unused] : j_.items()) {
      if (!allowed.empty() && allowed.count(name) == 0) {
        fail(fmt::format("unknown key \"{}\"", name));
      }
    }
    return j_;
  }

  const json& array() const {
    if (!j_.is_array()) {
      fail(fmt::format("must be an array, got {}", j_.dump()));
    }
    return j_;
  }

 private:
  const json& j_;
  std::string origin_;
  std::string pointer_;
};

KeyMap read_key(const Reader& r) {
  KeyMap key;
  for (const auto& [name, v] : r.object({}).items()) {
    if (v.is_string()) {
      key[name] = v.get<std::string>();
    } else if (v.is_number_integer()) {
      key[name] = v.get<std::int64_t>();
    } else {
      r.at(name).fail(fmt::format("key values must be strings or integers, got {}", v.dump()));
    }
  }
  return key;
}

std::vector<Axis> read_axes(const Reader& r, Op op) {
  const std::vector<std::string> names = expected_axes(op);
  const json& a = r.array();
  if (a.size() != names.size()) {
    r.fail(fmt::format("{} table needs {} axes, got {}", to_string(op), names.size(), a.size()));
  }
  std::vector<Axis> axes;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Reader ax = r.at(i);
    ax.object({"name", "values"});
    Axis axis{ax.at("name").string(), {}};
    if (axis.name != names[i]) {
      ax.at("name").fail(fmt::format("expected axis \"{}\", got \"{}\"", names[i], axis.name));
    }
    const Reader vals = ax.at("values");
    if (vals.array().empty()) {
      vals.fail("must not be empty");
    }
    for (std::size_t k = 0; k < vals.value().size(); ++k) {
      const json& v = vals.value()[k];
      if (!v.is_number() || !(v.get<double>() > 0.0)) {
        vals.at(k).fail(fmt::format("axis values must be positive numbers, got {}", v.dump()));
      }
      if (!axis.values.empty() && !(v.get<double>() > axis.values.back())) {
        vals.at(k).fail(fmt::format("must be sorted ascending without repeats, got {} after {}",
                                    v.dump(), number_json(axis.values.back()).dump()));
      }
      axis.values.push_back(v.get<double>());
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

std::vector<std::optional<double>> read_cells(const Reader& r, std::size_t expected) {
  const json& a = r.array();
  if (a.size() != expected) {
    r.fail(fmt::format("has {} cells, the axes make {}", a.size(), expected));
  }
  std::vector<std::optional<double>> cells;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].is_null()) {
      cells.emplace_back();
    } else if (a[i].is_number() && a[i].get<double>() >= 0.0 && std::isfinite(a[i].get<double>())) {
      cells.emplace_back(a[i].get<double>());
    } else {
      r.at(i).fail(fmt::format("must be a non-negative number or null, got {}", a[i].dump()));
    }
  }
  return cells;
}

void check_key(const Reader& r, const Table& t) {
  const auto need = [&](const char* name, bool integer) {
    const auto it = t.key.find(name);
    if (it == t.key.end()) {
      r.fail(fmt::format("{} table needs key \"{}\"", to_string(t.op), name));
    }
    if (integer != std::holds_alternative<std::int64_t>(it->second)) {
      r.at(name).fail(integer ? "must be an integer" : "must be a string");
    }
  };
  need("dtype", false);
  if (t.op == Op::GroupedGemm) {
    need("n", true);
    need("k", true);
  }
  if (t.op == Op::Memory) {
    need("kernel", false);
    try {
      memory_kernel(key_string(t.key, "kernel"));
    } catch (const CalibError& e) {
      r.at("kernel").fail(e.what());
    }
  }
  if (t.op == Op::Attn) {
    need("d_qk", true);
    need("d_v", true);
    need("gqa", true);
    need("mask", false);
    try {
      parse_mask(key_string(t.key, "mask"));
    } catch (const CalibError& e) {
      r.at("mask").fail(e.what());
    }
  }
}

Table read_table(const Reader& r) {
  r.object({"op", "pass", "impl", "key", "axes", "flops", "time_us", "p10_us", "p90_us"});
  Table t;
  try {
    t.op = parse_op(r.at("op").string());
  } catch (const CalibError& e) {
    r.at("op").fail(e.what());
  }
  try {
    t.pass = parse_pass(r.at("pass").string());
  } catch (const CalibError& e) {
    r.at("pass").fail(e.what());
  }
  t.impl = r.at("impl").string();
  if (t.impl.empty()) {
    r.at("impl").fail("must not be empty");
  }
  t.key = read_key(r.at("key"));
  check_key(r.at("key"), t);
  t.axes = read_axes(r.at("axes"), t.op);
  t.flops = r.at("flops").string();
  if (t.flops != flops_formula(t.op, t.pass)) {
    r.at("flops").fail(fmt::format("{} {} tables use \"{}\", got \"{}\"", to_string(t.op),
                                   to_string(t.pass), flops_formula(t.op, t.pass), t.flops));
  }
  const std::size_t cells = cell_count(t.axes);
  t.time_us = read_cells(r.at("time_us"), cells);
  if (r.value().contains("p10_us")) {
    t.p10_us = read_cells(r.at("p10_us"), cells);
  }
  if (r.value().contains("p90_us")) {
    t.p90_us = read_cells(r.at("p90_us"), cells);
  }
  return t;
}

}  // namespace

json to_json(const CalibrationFile& file) {
  json tables = json::array();
  for (const Table& t : file.tables) {
    tables.push_back(table_json(t));
  }
  return {{"schema", file.schema}, {"created_utc", file.created_utc}, {"source", file.source},
          {"device", file.device}, {"method", file.method},           {"tables", tables}};
}

CalibrationFile from_json(const json& j, const std::string& origin) {
  const Reader r(j, origin, "");
  r.object({"schema", "created_utc", "source", "device", "method", "tables"});
  CalibrationFile f;
  f.schema = r.at("schema").string();
  if (f.schema != kSchema) {
    r.at("schema").fail(fmt::format("expected \"{}\", got \"{}\"", kSchema, f.schema));
  }
  f.created_utc = r.at("created_utc").string();
  f.source = r.at("source").string();
  if (f.source != "measured" && f.source != "published") {
    r.at("source").fail(fmt::format("must be \"measured\" or \"published\", got \"{}\"", f.source));
  }
  f.device = r.at("device").object({});
  r.at("device").at("name").string();
  f.method = r.at("method").object({});
  const Reader tables = r.at("tables");
  for (std::size_t i = 0; i < tables.array().size(); ++i) {
    Table t = read_table(tables.at(i));
    for (const Table& other : f.tables) {
      if (same_family(t, other)) {
        tables.at(i).fail(fmt::format("duplicate table {}", describe(t)));
      }
    }
    f.tables.push_back(std::move(t));
  }
  return f;
}

void validate(const CalibrationFile& file) {
  // A std::string, not the literal: nlohmann 3.11.3 would take a char array for its own from_json.
  from_json(to_json(file), std::string("(in memory)"));
}

CalibrationFile read_calibration_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw CalibError(fmt::format("{}: cannot open", path.string()));
  }
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw CalibError(fmt::format("{}: not JSON: {}", path.string(), e.what()));
  }
  return from_json(j, path.string());
}

void write_calibration_file(const std::filesystem::path& path, const CalibrationFile& file) {
  validate(file);
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) {
      throw CalibError(fmt::format("{}: cannot write", tmp.string()));
    }
    out << to_json(file).dump(1) << '\n';
    if (!out) {
      throw CalibError(fmt::format("{}: write failed", tmp.string()));
    }
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace hopsim::calib
