// `hopsim profile-check` (profile_check_command.hpp).
#include "tools/commands/profile_check_command.hpp"

#include <chrono>
#include <filesystem>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tools/commands/case_run.hpp"
#include "tools/commands/command.hpp"
#include "tools/commands/output_file.hpp"
#include "tools/config/experiment_file.hpp"
#include "tools/config/node.hpp"
#include "tools/config/presets.hpp"
#include "tools/profile/trace_calibration.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {
namespace {

using Json = nlohmann::ordered_json;
using profile::ClassRow;
using profile::ProfileCheck;

std::string row_name(const ClassRow& r) {
  return fmt::format("{}", fmt::join(r.classes, " + "));
}

Json ratio(std::optional<double> hopsim, double trace) {
  return hopsim && trace > 0 ? Json(*hopsim / trace) : Json(nullptr);
}

std::string ms(double s) {
  return fmt::format("{:.3f}", s * 1e3);
}

std::string ratio_text(std::optional<double> hopsim, double trace) {
  return hopsim && trace > 0 ? fmt::format("{:.2f}", *hopsim / trace) : std::string("-");
}

std::string row_line(const std::string& name, double kernels, double trace_s,
                     std::optional<double> hopsim_s) {
  return fmt::format("{:<44} {:>8.0f} {:>11} {:>11} {:>12}\n", name, kernels, ms(trace_s),
                     hopsim_s ? ms(*hopsim_s) : std::string("-"), ratio_text(hopsim_s, trace_s));
}

// A total: no kernel count.
std::string total_line(const std::string& name, double trace_s, double hopsim_s) {
  return fmt::format("{:<44} {:>8} {:>11} {:>11} {:>12}\n", name, "", ms(trace_s), ms(hopsim_s),
                     ratio_text(hopsim_s, trace_s));
}

std::string format_check(const ProfileCheck& c, const profile::KinetoTrace& t,
                         const std::string& rules, const work::CaseResult& r,
                         const ProfileCheckOptions& o) {
  std::string out = fmt::format(
      "trace:      {}{}{}: {} kernels on {} GPU{}, {} streams, {} profiler step{}\n", o.trace,
      t.gpu ? ", " + config::echo(*t.gpu, 60) : std::string(),
      t.rank ? fmt::format(", rank {} of {}", *t.rank, t.world_size.value_or(0)) : std::string(),
      t.kernels.size(), c.devices, c.devices == 1 ? "" : "s", c.streams, c.steps,
      c.steps == 1 ? "" : "s");
  out += fmt::format("experiment: {}, case {}\nrules:      {}\n", o.experiment, r.name, rules);
  out += "per GPU and step; hopsim: its busiest GPU's compute time split by kernel class\n\n";
  out += fmt::format("{:<44} {:>8} {:>11} {:>11} {:>12}\n", "class", "kernels", "trace ms",
                     "hopsim ms", "hopsim/trace");
  for (const ClassRow& row : c.rows) {
    out += row_line(row_name(row), row.kernels, row.trace_s, row.hopsim_s);
  }
  out += row_line("unclassified", c.unclassified.kernels, c.unclassified.trace_s, std::nullopt);
  out += "\n";
  out +=
      total_line("compute kernels hopsim prices, summed", c.trace_compute_s(), c.hopsim_compute_s);
  out += total_line("communication kernels (nccl, deepep)", c.trace_comm_s(), c.hopsim_comm_s);
  out += total_line("first kernel to last (hopsim: the step)", c.trace_span_s, c.hopsim_step_s);
  if (!c.unmatched.empty() && o.unmatched > 0) {
    out += "\nunclassified kernels, the longest first (add rules with --rules FILE):\n";
    for (std::size_t i = 0; i < c.unmatched.size() && i < static_cast<std::size_t>(o.unmatched);
         ++i) {
      out += fmt::format("  {:>10} ms {:>6.0f}x  {}\n", ms(c.unmatched[i].trace_s),
                         c.unmatched[i].kernels, config::echo(c.unmatched[i].name, 100));
    }
  }
  return out;
}

}  // namespace

Json profile_check_json(const ProfileCheck& c, const ProfileCheckOptions& o) {
  Json rows = Json::array();
  for (const ClassRow& row : c.rows) {
    rows.push_back({{"classes", row.classes},
                    {"kernels", row.kernels},
                    {"trace_s", row.trace_s},
                    {"hopsim_s", row.hopsim_s ? Json(*row.hopsim_s) : Json(nullptr)},
                    {"ratio", ratio(row.hopsim_s, row.trace_s)}});
  }
  Json unmatched = Json::array();
  for (std::size_t i = 0; i < c.unmatched.size() && i < static_cast<std::size_t>(o.unmatched);
       ++i) {
    unmatched.push_back({{"name", c.unmatched[i].name},
                         {"kernels", c.unmatched[i].kernels},
                         {"trace_s", c.unmatched[i].trace_s}});
  }
  return {{"trace", o.trace},
          {"experiment", o.experiment},
          {"devices", c.devices},
          {"streams", c.streams},
          {"steps", c.steps},
          {"rows", std::move(rows)},
          {"unclassified",
           {{"kernels", c.unclassified.kernels},
            {"trace_s", c.unclassified.trace_s},
            {"longest", std::move(unmatched)}}},
          {"compute",
           {{"trace_s", c.trace_compute_s()},
            {"hopsim_s", c.hopsim_compute_s},
            {"ratio", ratio(c.hopsim_compute_s, c.trace_compute_s())}}},
          {"communication", {{"trace_s", c.trace_comm_s()}, {"hopsim_s", c.hopsim_comm_s}}},
          {"span",
           {{"trace_s", c.trace_span_s},
            {"hopsim_step_s", c.hopsim_step_s},
            {"ratio", ratio(c.hopsim_step_s, c.trace_span_s)}}}};
}

// The shipped table a written one falls back on: the experiment's (its base when it has one,
// as a base may not have a base); none when that is not a shipped preset.
std::string base_for(const config::ExperimentFile& file) {
  const auto& table = file.experiment.calibration;
  if (!table) {
    return {};
  }
  const std::string name = !table->base.empty()
                               ? table->base
                               : std::filesystem::path(file.calibration_file).stem().string();
  try {
    (void)config::find_preset("calibration", name, "base");
  } catch (const config::ConfigError&) {
    return {};
  }
  return name;
}

// --write-calibration: the table, written atomically; what it holds, one line.
std::string write_calibration(const profile::KinetoTrace& trace, const profile::KernelRules& rules,
                              const config::ExperimentFile& file, const ProfileCheckOptions& o) {
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  const profile::TraceCalibration t =
      profile::calibration_from_trace(trace, rules,
                                      {.trace = o.trace,
                                       .base = base_for(file),
                                       .device = o.device,
                                       .created_utc = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now)});
  write_file_atomically(o.write_calibration, t.file.dump(2) + "\n");
  std::vector<std::string> left;
  for (const auto& [why, count] : t.left_out) {
    left.push_back(fmt::format("{} {}", count, why));
  }
  return fmt::format(
      "wrote {}: {} tables, {} cells from {} kernels{}{}", o.write_calibration,
      t.file["tables"].size(), t.cells, t.kernels,
      t.file.contains("base") ? fmt::format(", base {}", t.file["base"].get<std::string>())
                              : std::string(),
      left.empty() ? std::string() : fmt::format("; left out: {}", fmt::join(left, ", ")));
}

// Throws when no kernel of the trace matched a rule: a comparison of nothing.
void check_classified(const ProfileCheck& c, const std::string& rules_file) {
  double classified = 0;
  for (const ClassRow& row : c.rows) {
    classified += row.kernels;
  }
  if (classified > 0) {
    return;
  }
  throw config::ConfigError(fmt::format(
      "profile-check: no kernel of the trace matched a rule of {}{}; give rules for its kernel "
      "names with --rules FILE",
      rules_file,
      c.unmatched.empty()
          ? std::string()
          : fmt::format(" (the longest: \"{}\")", config::echo(c.unmatched.front().name, 80))));
}

int profile_check_command(const ProfileCheckOptions& o) {
  if (o.steps < 0 || o.unmatched < 0) {
    throw config::ConfigError(o.steps < 0 ? "--steps: a number of steps, at least 1"
                                          : "--unmatched: a count, at least 0");
  }
  const std::string rules_file = o.rules.empty() ? profile::KernelRules::default_path() : o.rules;
  const profile::KernelRules rules = profile::KernelRules::read(rules_file);
  const profile::KinetoTrace trace = profile::read_kineto_trace(o.trace);
  const CaseRun run = run_for_case(o.experiment, o.overrides, o.case_name);
  const config::ExperimentFile& file = run.file;
  if (!o.write_calibration.empty()) {
    std::vector<std::string> inputs = file.inputs;
    inputs.push_back(o.trace);
    inputs.push_back(rules_file);
    refuse_input("--write-calibration", o.write_calibration, inputs, "this check");
  }
  const work::CaseResult& c = run.picked();
  const ProfileCheck check =
      profile::check_profile(trace, rules, c, {.steps = o.steps, .device = o.device});
  check_classified(check, rules_file);
  const std::string wrote =
      o.write_calibration.empty() ? std::string() : write_calibration(trace, rules, file, o);
  if (o.json) {
    Json j = profile_check_json(check, o);
    j["rules"] = rules_file;
    j["case"] = c.name;
    if (!wrote.empty()) {
      j["calibration_written"] = wrote;
    }
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{}{}", format_check(check, trace, rules_file, c, o),
               wrote.empty() ? std::string() : wrote + "\n");
  }
  return 0;
}

Command declare_profile_check_command(CLI::App& program) {
  struct State : WithUnsets<ProfileCheckOptions> {
    std::int64_t device = -1;  ///< -1: every GPU
  };

  auto s = std::make_shared<State>();
  ProfileCheckOptions& p = s->options;
  CLI::App* app = program.add_subcommand(
      "profile-check", "a PyTorch profiler trace beside hopsim's prediction, by kernel class");
  app->add_option("trace", p.trace, "the trace (Chrome/Kineto JSON, plain or gzip)")->required();
  app->add_option("experiment", p.experiment, "the experiment meant to describe it")->required();
  app->add_option("--set", p.overrides, "override an experiment key: KEY=VALUE");
  app->add_option("--unset", s->unset, "remove an optional key: --set KEY=null");
  app->add_option("--rules", p.rules,
                  "kernel classification rules (default: the shipped "
                  "configs/profile/kernel-classes.json)");
  app->add_option("--case", p.case_name,
                  "the experiment's case to compare with (default: its only one)");
  app->add_option("--steps", p.steps,
                  "profiler steps the trace covers (default: its ProfilerStep#N annotations, "
                  "else 1)");
  app->add_option("--device", s->device,
                  "count only this GPU's kernels (default: every GPU, averaged)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--unmatched", p.unmatched,
                  "unclassified kernel names to list, the longest first (default 5)");
  app->add_flag("--json", p.json, "print the check as JSON");
  app->add_option("--write-calibration", p.write_calibration,
                  "also write the trace's GEMM and norm kernels (with their shapes) as a "
                  "calibration table");
  return {app, [s, app](const std::string& /*command_line*/) {
            if (app->count("--steps") > 0 && s->options.steps < 1) {
              throw config::ConfigError(fmt::format(
                  "--steps: a number of profiler steps, at least 1; got {}", s->options.steps));
            }
            if (s->device >= 0) {
              s->options.device = s->device;
            }
            return profile_check_command(s->resolved());
          }};
}

}  // namespace hopsim::tools
