// `hopsim sweep-merge`: the rows of several CSVs of one sweep (its shards) into one, by point.
#include <fstream>
#include <map>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/commands/csv.hpp"
#include "tools/commands/output_file.hpp"
#include "tools/commands/sweep_command.hpp"
#include "tools/config/json_file.hpp"
#include "tools/config/node.hpp"

namespace hopsim::tools {

int sweep_merge_command(const std::string& out, const std::vector<std::string>& inputs) {
  using config::ConfigError;
  if (inputs.empty()) {
    throw ConfigError("hopsim sweep-merge OUT.csv IN.csv...: no input files");
  }
  std::string head;
  std::map<std::size_t, std::string> rows;  // by point
  std::size_t duplicates = 0;
  std::size_t cut = 0;
  for (const std::string& path : inputs) {
    if (const std::string problem = config::file_problem(path); !problem.empty()) {
      throw ConfigError(fmt::format("{}: {}", path, problem));
    }
    std::ifstream in(path, std::ios::binary);
    std::string line;
    if (!std::getline(in, line) || line.rfind("point,", 0) != 0) {
      throw ConfigError(fmt::format("{}: not a sweep CSV (its first line is not a header "
                                    "starting with \"point,\")",
                                    path));
    }
    if (head.empty()) {
      head = line;
    } else if (line != head) {
      throw ConfigError(fmt::format("{}: its header differs from {}'s: not the same sweep", path,
                                    inputs.front()));
    }
    const std::size_t columns = split_csv(head).size();
    std::size_t number = 1;
    while (std::getline(in, line)) {
      ++number;
      if (in.eof()) {  // no newline: a killed sweep's cut row
        ++cut;
        break;
      }
      const std::vector<std::string> f = split_csv(line);
      if (f.size() != columns || f[0].empty() ||
          f[0].find_first_not_of("0123456789") != std::string::npos || f[0].size() > 9) {
        throw ConfigError(fmt::format("{}: line {}: not a row of this sweep ({} fields, "
                                      "expected {} starting with the point number)",
                                      path, number, f.size(), columns));
      }
      if (!rows.emplace(std::stoul(f[0]), line).second) {
        ++duplicates;
      }
    }
  }
  std::string text = head + "\n";
  for (const auto& [point, line] : rows) {
    text += line + "\n";
  }
  write_file_atomically(out, text);
  std::size_t missing = rows.empty() ? 0 : rows.rbegin()->first + 1 - rows.size();
  fmt::print(stderr,
             "sweep-merge: {} row(s) from {} file(s) into {}{}{}{}\n", rows.size(), inputs.size(),
             out, duplicates > 0 ? fmt::format("; {} repeated point(s) kept once", duplicates) : "",
             cut > 0 ? fmt::format("; {} cut last row(s) left out (rerun with --resume)", cut)
                     : "",
             missing > 0 ? fmt::format("; {} point(s) below the last are missing", missing) : "");
  return 0;
}

Command declare_sweep_merge_command(CLI::App& program) {
  struct Options {
    std::string out;
    std::vector<std::string> inputs;
  };
  auto o = std::make_shared<Options>();
  CLI::App* app = program.add_subcommand(
      "sweep-merge", "merge the CSVs of one sweep's shards into one, ordered by point");
  app->add_option("out", o->out, "the merged CSV (written atomically)")->required();
  app->add_option("inputs", o->inputs, "the shards' CSVs")->required();
  return {app, [o](const std::string& /*command_line*/) {
            return sweep_merge_command(o->out, o->inputs);
          }};
}

}  // namespace hopsim::tools
