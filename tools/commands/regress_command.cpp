// `hopsim regress`: each suite entry loaded and run as `hopsim run --no-wall-time` would, its
// step and phase times compared with NAME.json's.
#include "tools/commands/regress_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/commands/command.hpp"
#include "tools/commands/output_file.hpp"
#include "tools/commands/report.hpp"
#include "tools/config/experiment_file.hpp"
#include "tools/config/json_file.hpp"
#include "tools/config/node.hpp"
#include "tools/config/suite_config.hpp"
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
  if (results.empty()) {
    throw ConfigError(fmt::format("{}: /results: empty; an expected report has a case at least "
                                  "(is it a report of hopsim run?)",
                                  file));
  }
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

// One entry of a suite: its name, and its experiment as loaded with its --sets.
struct Entry {
  std::string name;
  config::ExperimentFile file;
};

// The report of an entry as `hopsim run` writes it, less "sim" (how the simulator got there,
// not what it predicts).
Json entry_report(const config::ExperimentFile& file) {
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

// A report's headline: its last case's step time (a collective's largest size).
double headline(const Json& report) {
  const Json& results = report.contains("results") ? report["results"] : Json();
  if (!results.is_array() || results.empty() || !results.back().is_object() ||
      !results.back().contains("step_time_s") || !results.back()["step_time_s"].is_number()) {
    return 0;
  }
  return results.back()["step_time_s"].get<double>();
}

// One entry's outcome: its row's figures and, when it failed, why (for the table and JUnit).
struct EntryResult {
  std::string name;
  double expected_s = 0;
  double new_s = 0;
  std::string status;  // "ok", "CHANGED", "MISSING", "updated"
  bool step_changed = false;
  std::vector<std::string> differences;
  double wall_s = 0;
};

// An entry's new report against its expected report at `expected_path`.
EntryResult compare_entry(const std::string& name, const Json& report,
                          const fs::path& expected_path, double tolerance) {
  EntryResult r;
  r.name = name;
  r.new_s = headline(report);
  if (!fs::exists(expected_path)) {
    r.status = "MISSING";
    r.differences.push_back(fmt::format("no expected report {} yet: `hopsim regress {} "
                                        "--update` writes it from this build",
                                        expected_path.string(),
                                        expected_path.parent_path().string()));
    return r;
  }
  const Json expected = config::read_ordered_json_file(expected_path.string());
  const std::map<std::string, double> before = times(expected, expected_path.string());
  const std::map<std::string, double> after = times(report, name);
  r.differences = differences(before, after, tolerance);
  r.expected_s = headline(expected);
  r.status = r.differences.empty() ? "ok" : "CHANGED";
  r.step_changed = std::any_of(r.differences.begin(), r.differences.end(), [](const auto& d) {
    return d.find(" step:") != std::string::npos;
  });
  return r;
}

void print_row(const EntryResult& r) {
  if (r.status == "updated") {
    fmt::print("{:<32} {:>14} {:>14.6g} {:>9}  updated\n", r.name, "", r.new_s, "");
    return;
  }
  const std::string expected =
      r.status == "MISSING" ? std::string("-") : fmt::format("{:.6g}", r.expected_s);
  const std::string delta =
      r.status == "MISSING" ? std::string("") : fmt::format("{:+.2f}%", 100 * change(r.expected_s,
                                                                                      r.new_s));
  fmt::print("{:<32} {:>14} {:>14.6g} {:>9}  {}\n", r.name, expected, r.new_s, delta, r.status);
  for (std::size_t i = 0; i < r.differences.size() && i < 8; ++i) {
    fmt::print("    {}\n", r.differences[i]);
  }
}

// `text` with XML's five special characters escaped.
std::string xml(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

// The results as JUnit XML (one testsuite, a testcase per entry, a failure per changed one),
// as CI systems read it.
std::string junit(const std::vector<EntryResult>& results, double tolerance, double wall_s) {
  std::size_t failures = 0;
  std::string cases;
  for (const EntryResult& r : results) {
    cases += fmt::format("    <testcase classname=\"hopsim.regress\" name=\"{}\" time=\"{:.3f}\"",
                         xml(r.name), r.wall_s);
    if (r.status != "CHANGED" && r.status != "MISSING") {
      cases += "/>\n";
      continue;
    }
    ++failures;
    std::string body;
    for (const std::string& d : r.differences) {
      body += d + "\n";
    }
    const std::string message =
        r.status == "MISSING" ? std::string("no expected report")
                              : fmt::format("step time {:.6g} s -> {:.6g} s ({:+.2f}%); more "
                                            "than {:g}% moved",
                                            r.expected_s, r.new_s,
                                            100 * change(r.expected_s, r.new_s), 100 * tolerance);
    cases += fmt::format(">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n"
                         "    </testcase>\n",
                         xml(message), r.status, xml(body));
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<testsuites>\n  <testsuite name=\"hopsim regress\" tests=\"{}\" "
                     "failures=\"{}\" errors=\"0\" time=\"{:.3f}\">\n{}  </testsuite>\n"
                     "</testsuites>\n",
                     results.size(), failures, wall_s, cases);
}

// The footer: step-time changes apart from changes in phases only, and what to do next.
void print_footer(const std::vector<EntryResult>& results, double tolerance,
                  const std::string& dir) {
  std::size_t step = 0;
  std::size_t phases = 0;
  std::size_t missing = 0;
  for (const EntryResult& r : results) {
    step += r.status == "CHANGED" && r.step_changed ? 1U : 0U;
    phases += r.status == "CHANGED" && !r.step_changed ? 1U : 0U;
    missing += r.status == "MISSING" ? 1U : 0U;
  }
  fmt::print("{} of {} experiment(s): step time moved by more than {:g}%; {} more: only phases "
             "moved{}\n",
             step, results.size(), 100 * tolerance, phases,
             missing > 0 ? fmt::format("; {} without an expected report", missing) : "");
  if (step + phases + missing > 0) {
    fmt::print("to accept what this build predicts: hopsim regress {} --update\n", dir);
  }
}

// The suite at `dir`: its entries by name. Throws ConfigError saying what a suite is when
// suite.json is missing or not an object of entries.
Json read_suite(const fs::path& dir) {
  const std::string suite_path = (dir / "suite.json").string();
  if (!fs::exists(suite_path)) {
    throw ConfigError(fmt::format(
        "{}: no suite here; a suite is a folder with suite.json, an object of {{\"NAME\": "
        "{{\"experiment\": PATH, \"set\": [\"KEY=VALUE\", ...]}}}} (paths relative to the "
        "folder); create it, then `hopsim regress {} --update` writes the expected reports",
        suite_path, dir.string()));
  }
  Json suite = config::read_ordered_json_file(suite_path);
  if (!suite.is_object() || suite.empty()) {
    throw ConfigError(fmt::format("{}: expected an object of experiments", suite_path));
  }
  return suite;
}

// Every entry of the suite in `dir`, checked and loaded before any runs; `inputs` gets
// suite.json and every file the entries read.
std::vector<Entry> load_suite(const fs::path& dir, std::vector<std::string>& inputs) {
  const std::string suite_path = (dir / "suite.json").string();
  const Json suite = read_suite(dir);
  inputs.push_back(suite_path);
  const nlohmann::json plain = nlohmann::json::parse(suite.dump());  // Node reads this type
  const config::Node root(plain, suite_path);
  std::vector<Entry> entries;
  for (const auto& item : suite.items()) {
    const config::SuiteEntry e = config::parse_suite_entry(root, item.key(), dir.string());
    entries.push_back({e.name, config::load_experiment(e.experiment, e.sets)});
    inputs.insert(inputs.end(), entries.back().file.inputs.begin(),
                  entries.back().file.inputs.end());
  }
  return entries;
}

// What regress writes must replace none of its inputs: --update's expected reports, and
// --junit's file (which in a comparison must not be an expected report either).
void refuse_inputs(const RegressOptions& o, const std::vector<Entry>& entries,
                   std::vector<std::string> inputs) {
  const std::string what = fmt::format("the suite {}", (fs::path(o.dir) / "suite.json").string());
  for (const Entry& e : entries) {
    const std::string expected = (fs::path(o.dir) / (e.name + ".json")).string();
    if (o.update) {
      refuse_input("--update", expected, inputs, what);
    } else {
      inputs.push_back(expected);
    }
  }
  if (!o.junit.empty()) {
    refuse_input("--junit " + o.junit, o.junit, inputs, what);
  }
}

}  // namespace

int regress_command(const RegressOptions& o) {
  if (!(o.tolerance >= 0) || o.tolerance > 1) {
    throw ConfigError(fmt::format("--tolerance {}: expected a fraction in [0, 1]", o.tolerance));
  }
  const auto started = std::chrono::steady_clock::now();
  const fs::path dir(o.dir);
  std::vector<std::string> inputs;
  const std::vector<Entry> entries = load_suite(dir, inputs);
  refuse_inputs(o, entries, inputs);
  fmt::print("{:<32} {:>14} {:>14} {:>9}  {}\n", "experiment", "expected_s", "new_s", "change",
             "status");
  std::vector<EntryResult> results;
  for (const Entry& entry : entries) {
    const auto entry_started = std::chrono::steady_clock::now();
    const Json report = entry_report(entry.file);
    const fs::path expected_path = dir / (entry.name + ".json");
    EntryResult r;
    if (o.update) {
      write_file_atomically(expected_path.string(), report.dump(1) + "\n");
      r.name = entry.name;
      r.new_s = headline(report);
      r.status = "updated";
    } else {
      r = compare_entry(entry.name, report, expected_path, o.tolerance);
    }
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - entry_started)
                   .count();
    print_row(r);
    results.push_back(std::move(r));
  }
  if (!o.update) {
    print_footer(results, o.tolerance, o.dir);
  }
  if (!o.junit.empty()) {
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    write_file_atomically(o.junit, junit(results, o.tolerance, wall));
  }
  return std::any_of(results.begin(), results.end(),
                     [](const EntryResult& r) {
                       return r.status == "CHANGED" || r.status == "MISSING";
                     })
             ? 1
             : 0;
}

Command declare_regress_command(CLI::App& program) {
  auto o = std::make_shared<RegressOptions>();
  CLI::App* app = program.add_subcommand(
      "regress", "rerun a suite of experiments and compare their times with expected reports");
  app->add_option("dir", o->dir,
                  "folder with suite.json and the expected reports (default tests/golden)");
  app->add_option("--tolerance", o->tolerance, "relative change that fails (default 0.01)");
  app->add_flag("--update", o->update, "rewrite the expected reports");
  app->add_option("--junit", o->junit, "also write the results as JUnit XML to FILE (for CI)");
  return {app, [o](const std::string& /*command_line*/) { return regress_command(*o); }};
}

}  // namespace hopsim::tools
