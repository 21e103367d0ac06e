// `hopsim compare`: figures of two reports paired by case, phase and link, with the change.
#include "tools/commands/compare_command.hpp"

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/commands/command.hpp"
#include "tools/config/json_file.hpp"
#include "tools/config/node.hpp"

namespace hopsim::tools {
namespace {

using Json = nlohmann::ordered_json;
using config::ConfigError;

// A report's cases by name: its results, each with step_time_s and phases.
std::vector<std::pair<std::string, const Json*>> cases_of(const Json& report,
                                                          const std::string& file) {
  if (!report.is_object() || !report.contains("results") || !report["results"].is_array() ||
      !report.contains("experiment") || !report["experiment"].is_string()) {
    throw ConfigError(fmt::format("{}: not a hopsim report (no \"experiment\" and \"results\"; "
                                  "write one with hopsim run --json or --out)",
                                  file));
  }
  std::vector<std::pair<std::string, const Json*>> out;
  for (const Json& c : report["results"]) {
    if (!c.is_object() || !c.contains("step_time_s") || !c["step_time_s"].is_number() ||
        !c.contains("phases") || !c["phases"].is_array() ||
        (c.contains("case") && !c["case"].is_string())) {
      throw ConfigError(fmt::format("{}: /results: a case without step_time_s and phases", file));
    }
    // Entries compare() reads by name: objects whose names are strings.
    for (const auto& [list, key] : {std::pair{"phases", "name"}, std::pair{"phases", "pass"},
                                    std::pair{"busiest_links", "link"}}) {
      if (!c.contains(list)) {
        continue;
      }
      if (!c[list].is_array()) {
        throw ConfigError(fmt::format("{}: /results: {} is not an array", file, list));
      }
      for (const Json& e : c[list]) {
        if (!e.is_object() || (e.contains(key) && !e[key].is_string())) {
          throw ConfigError(fmt::format(
              "{}: /results: an entry of {} that is not an object with a string \"{}\"", file,
              list, key));
        }
      }
    }
    out.emplace_back(c.value("case", std::string("case")), &c);
  }
  return out;
}

const Json* find(const std::vector<std::pair<std::string, const Json*>>& cases,
                 const std::string& name) {
  for (const auto& [n, c] : cases) {
    if (n == name) {
      return c;
    }
  }
  return nullptr;
}

Json value_at(const Json* j, const Json::json_pointer& p) {
  return j != nullptr && j->contains(p) && (*j)[p].is_number() ? (*j)[p] : Json(nullptr);
}

Json pair(const Json& a, const Json& b) {
  Json change = nullptr;
  if (a.is_number() && b.is_number() && a.get<double>() != 0) {
    change = (b.get<double>() - a.get<double>()) / a.get<double>();
  }
  return {{"a", a}, {"b", b}, {"change", change}};
}

// The entries of `list` (an array key) in either case, paired by `name_of`, each of `fields`
// as {a, b, change}; in A's order, then B's new ones.
template <class NameOf>
Json paired(const Json* a, const Json* b, const char* list, NameOf name_of,
            std::initializer_list<const char*> fields) {
  const auto entries = [&](const Json* side) {
    std::vector<std::pair<std::string, const Json*>> out;
    if (side != nullptr && side->contains(list) && (*side)[list].is_array()) {
      for (const Json& e : (*side)[list]) {
        out.emplace_back(name_of(e), &e);
      }
    }
    return out;
  };
  const auto ea = entries(a);
  const auto eb = entries(b);
  Json out = Json::object();
  for (const auto* side : {&ea, &eb}) {
    for (const auto& [name, e] : *side) {
      if (out.contains(name)) {
        continue;
      }
      const Json* x = find(ea, name);
      const Json* y = find(eb, name);
      Json row = Json::object();
      for (const char* f : fields) {
        const Json::json_pointer p("/" + std::string(f));
        row[f] = pair(value_at(x, p), value_at(y, p));
      }
      out[name] = std::move(row);
    }
  }
  return out;
}

// Phase rows "name/pass" of a case: compute, comm and exposed time.
Json phases(const Json* a, const Json* b) {
  return paired(a, b, "phases",
                [](const Json& ph) {
                  return ph.value("name", std::string("?")) + "/" +
                         ph.value("pass", std::string("?"));
                },
                {"compute_s", "comm_s", "exposed_comm_s"});
}

// The busiest links of either report, by name: bytes, mean and peak utilization.
Json links(const Json* a, const Json* b) {
  return paired(a, b, "busiest_links",
                [](const Json& l) { return l.value("link", std::string("?")); },
                {"bytes", "utilization", "peak_utilization"});
}

std::string number(const Json& v, double scale, int digits) {
  return v.is_number() ? fmt::format("{:.{}f}", v.get<double>() * scale, digits) : "-";
}

// The change in percent; "new" or "gone" for a figure only one side has.
std::string change(const Json& p) {
  if (p["change"].is_number()) {
    return fmt::format("{:+.1f}%", 100 * p["change"].get<double>());
  }
  if (p["a"].is_null() != p["b"].is_null()) {
    return p["a"].is_null() ? "new" : "gone";
  }
  return "";
}

std::string row(std::string_view label, const Json& p, double scale, int digits) {
  return fmt::format("{:<34} {:>14} {:>14} {:>9}\n", label, number(p["a"], scale, digits),
                     number(p["b"], scale, digits), change(p));
}

std::string text(const Json& c) {
  std::string out = fmt::format("{:<34} {:>14} {:>14} {:>9}\n", "", "A", "B", "change");
  out += row("step time (ms)", c["step_time_s"], 1e3, 3);
  out += row("busiest GPU compute (ms)", c["compute_s"], 1e3, 3);
  out += row("busiest GPU communication (ms)", c["comm_s"], 1e3, 3);
  out += row("busiest GPU exposed comm (ms)", c["exposed_comm_s"], 1e3, 3);
  out += row("bytes over NVLink (GB)", c["bytes_nvlink"], 1e-9, 3);
  out += row("bytes over InfiniBand (GB)", c["bytes_ib"], 1e-9, 3);
  for (const auto& [key, ph] : c["phases"].items()) {
    for (const auto& [f, label] : {std::pair{"compute_s", "compute"},
                                   std::pair{"exposed_comm_s", "exposed"}}) {
      const Json& p = ph[f];
      const bool zero = (p["a"].is_null() || p["a"].get<double>() == 0) &&
                        (p["b"].is_null() || p["b"].get<double>() == 0);
      if (!zero) {
        out += row(fmt::format("  {} {} (ms)", key, label), p, 1e3, 3);
      }
    }
  }
  for (const auto& [name, l] : c["links"].items()) {
    out += row(fmt::format("  {} util (%)", name), l["utilization"], 100, 1);
    out += row(fmt::format("  {} peak (%)", name), l["peak_utilization"], 100, 1);
  }
  return out;
}

}  // namespace

Json compare_reports(const Json& a, const Json& b) {
  const auto ca = cases_of(a, "A");
  const auto cb = cases_of(b, "B");
  Json out;
  out["a"] = {{"experiment", a["experiment"]}, {"workload", a.value("workload", Json(nullptr))}};
  out["b"] = {{"experiment", b["experiment"]}, {"workload", b.value("workload", Json(nullptr))}};
  std::vector<std::string> names;
  for (const auto* side : {&ca, &cb}) {
    for (const auto& [name, c] : *side) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(name);
      }
    }
  }
  Json cases = Json::array();
  for (const std::string& name : names) {
    const Json* x = find(ca, name);
    const Json* y = find(cb, name);
    Json c = {{"case", name}};
    for (const char* f : {"step_time_s", "compute_s", "comm_s", "exposed_comm_s"}) {
      const Json::json_pointer p("/" + std::string(f));
      c[f] = pair(value_at(x, p), value_at(y, p));
    }
    c["bytes_nvlink"] = pair(value_at(x, Json::json_pointer("/bytes/nvlink")),
                             value_at(y, Json::json_pointer("/bytes/nvlink")));
    c["bytes_ib"] = pair(value_at(x, Json::json_pointer("/bytes/ib")),
                         value_at(y, Json::json_pointer("/bytes/ib")));
    c["phases"] = phases(x, y);
    c["links"] = links(x, y);
    cases.push_back(std::move(c));
  }
  out["cases"] = std::move(cases);
  return out;
}

int compare_command(const CompareOptions& o) {
  const auto read = [](const std::string& path) { return Json(config::read_json_file(path)); };
  const Json a = read(o.a);
  const Json b = read(o.b);
  Json out;
  try {
    out = compare_reports(a, b);
  } catch (const ConfigError& e) {
    // Name the file rather than the side.
    const std::string what = e.what();
    const bool first = what.rfind("A:", 0) == 0;
    throw ConfigError((first ? o.a : o.b) + what.substr(1));
  }
  if (o.json) {
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("A: {} ({})\nB: {} ({})\n", o.a, out["a"]["experiment"].get<std::string>(), o.b,
             out["b"]["experiment"].get<std::string>());
  for (const Json& c : out["cases"]) {
    if (out["cases"].size() > 1) {
      fmt::print("case {}\n", c["case"].get<std::string>());
    }
    fmt::print("{}", text(c));
  }
  return 0;
}

Command declare_compare_command(CLI::App& program) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* app = program.add_subcommand(
      "compare", "two reports side by side (run --json or --out), with the change in each figure");
  app->add_option("a", o->a, "the first report (A)")->required();
  app->add_option("b", o->b, "the second report (B)")->required();
  app->add_flag("--json", o->json, "print the comparison as JSON");
  return {app, [o](const std::string& /*command_line*/) { return compare_command(*o); }};
}

}  // namespace hopsim::tools
