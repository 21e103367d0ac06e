// Running an experiment for one of its cases.
#include "tools/commands/case_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tools/commands/run_command.hpp"
#include "tools/config/node.hpp"

namespace hopsim::tools {

CaseRun run_for_case(const std::string& experiment, const std::vector<std::string>& overrides,
                     const std::string& case_name) {
  CaseRun out{config::load_experiment(experiment, overrides), {}, 0};
  work::RunOptions options;
  options.watch_links = 0;
  set_memory_limit(options, "", false);
  out.result = work::run(out.file.experiment, options);
  if (!out.result.ok()) {
    out.file.fail(out.result.problems.front());
  }
  const std::vector<work::CaseResult>& cases = out.result.cases;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].name == case_name || (case_name.empty() && cases.size() == 1)) {
      out.index = i;
      return out;
    }
    names.push_back(fmt::format("\"{}\"", cases[i].name));
  }
  throw config::ConfigError(fmt::format(
      "{}: {}; its cases are {}", experiment,
      case_name.empty() ? fmt::format("{} cases: name one with --case", cases.size())
                        : fmt::format("no case \"{}\"", config::echo(case_name, 60)),
      config::echo(fmt::format("{}", fmt::join(names, ", ")), 200)));
}

}  // namespace hopsim::tools
