// A subcommand of the hopsim program: its options, declared in its own file beside the code that
// runs it, and its action. tools/hopsim_main.cpp lists the subcommands, one row each.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11's namespace
class App;
}  // namespace CLI

namespace hopsim::tools {

/// A declared subcommand: its CLI11 app, whose options fill state that `run` owns, and `run`,
/// called once the command line has parsed and named this subcommand. `command_line` is the
/// whole command line as a shell would read it back (a sweep records it).
struct Command {
  CLI::App* app = nullptr;
  std::function<int(const std::string& command_line)> run;
};

/// Adds a subcommand to the program's app: its name, help, options and their help.
using DeclareCommand = Command (*)(CLI::App& program);

/// `--unset KEY` arguments as overrides that remove KEY (config::unset_override: as `--set
/// KEY=null`, named `--unset KEY` in messages), after the --set ones.
void append_unsets(std::vector<std::string>& overrides, const std::vector<std::string>& unset);

/// What the options of a command that reads an experiment fill: its options, and the keys of
/// --unset.
template <class Options>
struct WithUnsets {
  Options options;
  std::vector<std::string> unset;

  /// The options, the --unset keys appended to their overrides: what the command runs with.
  const Options& resolved() {
    append_unsets(options.overrides, unset);
    unset.clear();
    return options;
  }
};

}  // namespace hopsim::tools
