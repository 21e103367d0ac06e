// `hopsim sweep-merge`: the rows of several CSVs of one sweep (its shards) into one, by point.
#include <algorithm>
#include <fstream>
#include <map>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/commands/csv.hpp"
#include "tools/commands/output_file.hpp"
#include "tools/commands/sweep_command.hpp"
#include "tools/commands/sweep_csv.hpp"
#include "tools/config/json_file.hpp"
#include "tools/config/node.hpp"

namespace hopsim::tools {
namespace {

// The sweep the rows merged so far are of (their sweep_id, sweep_csv.hpp), and the file that
// showed it first: rows of another sweep are refused, naming both files.
class SweepOfRows {
 public:
  void check(const std::string& path, const std::vector<std::string>& row,
             const std::vector<std::string>& header) {
    const auto column = std::find(header.begin(), header.end(), sweep::kSweepIdColumn);
    if (column == header.end()) {
      return;  // a CSV of a hopsim before sweep_id: the header alone says which sweep
    }
    const std::string& id = row[static_cast<std::size_t>(column - header.begin())];
    if (file_.empty()) {
      file_ = path;
      id_ = id;
    } else if (id != id_) {
      throw config::ConfigError(fmt::format(
          "{} and {} are of two different sweeps (sweep_id {} and {}: another experiment, "
          "other --set or --unset, or other points); merge the shards of one sweep only",
          file_, path, id_, config::echo(id, 20)));
    }
  }

 private:
  std::string file_;
  std::string id_;
};

// The rows of the files read so far, by point, and what was left out.
struct Merged {
  std::string head;
  std::map<std::size_t, std::string> rows;
  std::size_t duplicates = 0;
  std::size_t cut = 0;
  SweepOfRows sweep;
};

// The rows of the CSV at `path` added to `m`: its header must be the first file's (`first`),
// each row a point's of the same sweep.
void read_shard(const std::string& path, const std::string& first, Merged& m) {
  using config::ConfigError;
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
  if (m.head.empty()) {
    m.head = line;
  } else if (line != m.head) {
    throw ConfigError(
        fmt::format("{}: its header differs from {}'s: not the same sweep", path, first));
  }
  const std::vector<std::string> header = split_csv(m.head);
  std::size_t number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (in.eof()) {  // no newline: a killed sweep's cut row
      ++m.cut;
      break;
    }
    const std::vector<std::string> f = split_csv(line);
    if (f.size() != header.size() || f[0].empty() ||
        f[0].find_first_not_of("0123456789") != std::string::npos || f[0].size() > 9) {
      throw ConfigError(fmt::format("{}: line {}: not a row of this sweep ({} fields, "
                                    "expected {} starting with the point number)",
                                    path, number, f.size(), header.size()));
    }
    m.sweep.check(path, f, header);
    if (!m.rows.emplace(std::stoul(f[0]), line).second) {
      ++m.duplicates;
    }
  }
}

}  // namespace

int sweep_merge_command(const std::string& out, const std::vector<std::string>& inputs) {
  if (inputs.empty()) {
    throw config::ConfigError("hopsim sweep-merge OUT.csv IN.csv...: no input files");
  }
  refuse_input("sweep-merge", out, inputs, "this merge");
  Merged m;
  for (const std::string& path : inputs) {
    read_shard(path, inputs.front(), m);
  }
  std::string text = m.head + "\n";
  for (const auto& [point, line] : m.rows) {
    text += line + "\n";
  }
  write_file_atomically(out, text);
  const std::size_t missing = m.rows.empty() ? 0 : m.rows.rbegin()->first + 1 - m.rows.size();
  fmt::print(stderr, "sweep-merge: {} row(s) from {} file(s) into {}{}{}{}\n", m.rows.size(),
             inputs.size(), out,
             m.duplicates > 0 ? fmt::format("; {} repeated point(s) kept once", m.duplicates)
                              : "",
             m.cut > 0 ? fmt::format("; {} cut last row(s) left out (rerun with --resume)", m.cut)
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
