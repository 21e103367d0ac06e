// `hopsim regress`: each suite entry loaded and run as `hopsim run --no-wall-time` would, its
// step and phase times compared with NAME.json's.
#include "tools/commands/regress_command.hpp"

#include <cmath>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/commands/output_file.hpp"
#include "tools/commands/report.hpp"
#include "tools/config/experiment_file.hpp"
#include "tools/config/json_file.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {
namespace {

using Json = nlohmann::ordered_json;
using config::ConfigError;
namespace fs = std::filesystem;

// `j`'s member `key`, of the type `is` checks, or one error naming the file and the pointer.
template <class Is>
const Json& member(const Json& j, const char* key, Is is, const std::string& file,
                   const std::string& at, const char* expected) {
  if (!j.is_object() || !j.contains(key)) {
    throw ConfigError(fmt::format("{}: {}/{}: missing; expected {} (is it a report of hopsim "
                                  "run?)",
                                  file, at, key, expected));
  }
  const Json& v = j[key];
  if (!is(v)) {
    throw ConfigError(fmt::format("{}: {}/{}: expected {}, got {}", file, at, key, expected,
                                  v.type_name()));
  }
  return v;
}

bool is_array(const Json& v) { return v.is_array(); }
bool is_number(const Json& v) { return v.is_number(); }
bool is_string(const Json& v) { return v.is_string(); }

// The times a report predicts, by name: each case's step time, and each phase's compute,
// communication and exposed time (of the busiest rank). A file that is not a report, or one
// with a key of the wrong type, is one error naming `file` and the key.
std::map<std::string, double> times(const Json& report, const std::string& file) {
  std::map<std::string, double> out;
  const Json& results = member(report, "results", is_array, file, "", "an array of cases");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Json& c = results[i];
    const std::string at = fmt::format("/results/{}", i);
    const std::string name =
        c.is_object() && c.contains("case") && c["case"].is_string() ? c["case"].get<std::string>()
                                                                     : std::string("case");
    out[name + " step"] =
        member(c, "step_time_s", is_number, file, at, "a number").get<double>();
    const Json& phases = member(c, "phases", is_array, file, at, "an array of phases");
    for (std::size_t k = 0; k < phases.size(); ++k) {
      const Json& ph = phases[k];
      const std::string pat = fmt::format("{}/phases/{}", at, k);
      const std::string key =
          fmt::format("{} {}/{}", name,
                      member(ph, "name", is_string, file, pat, "a string").get<std::string>(),
                      member(ph, "pass", is_string, file, pat, "a string").get<std::string>());
      for (const char* t : {"compute_s", "comm_s", "exposed_comm_s"}) {
        out[key + " " + t] = member(ph, t, is_number, file, pat, "a number").get<double>();
      }
    }
  }
  return out;
}

// Relative change, counting a change from or to zero below 1 ns as none.
double change(double before, double after) {
  if (std::fabs(after - before) < 1e-9) {
    return 0;
  }
  return before != 0 ? (after - before) / before : INFINITY;
}

// The report of one suite entry as `hopsim run` writes it, less "sim" (how the simulator got
// there, not what it predicts). `at` names the entry in suite.json for errors.
Json entry_report(const fs::path& dir, const Json& entry, const std::string& at) {
  if (!entry.is_object() || !entry.contains("experiment") || !entry["experiment"].is_string()) {
    throw ConfigError(at + ": expected {\"experiment\": PATH, \"set\": [KEY=VALUE, ...]}");
  }
  std::vector<std::string> sets;
  for (const Json& kv : entry.value("set", Json::array())) {
    if (!kv.is_string()) {
      throw ConfigError(at + "/set: expected strings KEY=VALUE");
    }
    sets.push_back(kv.get<std::string>());
  }
  const config::ExperimentFile file =
      config::load_experiment((dir / entry["experiment"].get<std::string>()).string(), sets);
  const work::RunResult result = work::run(file.experiment);
  if (!result.ok()) {
    file.fail(result.problems.front());
  }
  Json report = make_report({file, result, false});
  report.erase("sim");
  return report;
}

// The times that differ between the expected report's and the new one's: by more than
// `tolerance`, or present in only one of them.
std::vector<std::string> differences(const std::map<std::string, double>& before,
                                     const std::map<std::string, double>& after, double tolerance) {
  std::vector<std::string> bad;
  for (const auto& [key, value] : after) {
    const auto it = before.find(key);
    if (it == before.end()) {
      bad.push_back(key + ": new");
    } else if (std::fabs(change(it->second, value)) > tolerance) {
      bad.push_back(fmt::format("{}: {:.6g} -> {:.6g} s ({:+.2f}%)", key, it->second, value,
                                100 * change(it->second, value)));
    }
  }
  for (const auto& [key, value] : before) {
    if (after.count(key) == 0) {
      bad.push_back(key + ": gone");
    }
  }
  return bad;
}

// The headline of a comparison, expected and new: the last case's step time (a collective's
// largest size).
std::pair<double, double> headline(const std::map<std::string, double>& before,
                                   const std::map<std::string, double>& after) {
  double old_step = 0;
  double new_step = 0;
  for (const auto& [key, value] : before) {
    if (key.ends_with(" step")) {
      old_step = value;
      new_step = after.count(key) != 0 ? after.at(key) : 0.0;
    }
  }
  return {old_step, new_step};
}

// An entry's new report against its expected report at `expected_path`: a row of the table,
// then its first differences. Returns whether it changed.
bool compare_entry(const std::string& name, const Json& report, const fs::path& expected_path,
                   double tolerance) {
  const std::map<std::string, double> before =
      times(config::read_ordered_json_file(expected_path.string()), expected_path.string());
  const std::map<std::string, double> after = times(report, name);
  const std::vector<std::string> bad = differences(before, after, tolerance);
  const auto [old_step, new_step] = headline(before, after);
  fmt::print("{:<32} {:>14.6g} {:>14.6g} {:>+8.2f}%  {}\n", name, old_step, new_step,
             100 * change(old_step, new_step), bad.empty() ? "ok" : "CHANGED");
  for (std::size_t i = 0; i < bad.size() && i < 8; ++i) {
    fmt::print("    {}\n", bad[i]);
  }
  return !bad.empty();
}

}  // namespace

int regress_command(const RegressOptions& o) {
  if (!(o.tolerance >= 0) || o.tolerance > 1) {
    throw ConfigError(fmt::format("--tolerance {}: expected a fraction in [0, 1]", o.tolerance));
  }
  const fs::path dir(o.dir);
  const std::string suite_path = (dir / "suite.json").string();
  const Json suite = config::read_ordered_json_file(suite_path);
  if (!suite.is_object() || suite.empty()) {
    throw ConfigError(fmt::format("{}: expected an object of experiments", suite_path));
  }
  fmt::print("{:<32} {:>14} {:>14} {:>9}  {}\n", "experiment", "expected_s", "new_s", "change",
             "status");
  int failed = 0;
  for (const auto& [name, entry] : suite.items()) {
    const Json report = entry_report(dir, entry, fmt::format("{}: /{}", suite_path, name));
    const fs::path expected_path = dir / (name + ".json");
    if (o.update) {
      write_file_atomically(expected_path.string(), report.dump(1) + "\n");
      fmt::print("{:<32} {:>14} {:>14.6g} {:>9}  updated\n", name, "",
                 times(report, name).begin()->second, "");
      continue;
    }
    failed += compare_entry(name, report, expected_path, o.tolerance) ? 1 : 0;
  }
  if (!o.update) {
    fmt::print("{} of {} experiment(s) changed by more than {:g}%\n", failed, suite.size(),
               100 * o.tolerance);
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace hopsim::tools
