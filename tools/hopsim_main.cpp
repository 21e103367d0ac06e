// hopsim: the command-line program; its subcommands (run, sweep, explain, ...) are declared in
// tools/commands and listed in kCommands.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/commands/check_calibration_command.hpp"
#include "tools/commands/compare_command.hpp"
#include "tools/commands/explain_command.hpp"
#include "tools/commands/list_command.hpp"
#include "tools/commands/output_file.hpp"
#include "tools/commands/export_chakra_command.hpp"
#include "tools/commands/profile_check_command.hpp"
#include "tools/commands/regress_command.hpp"
#include "tools/commands/run_command.hpp"
#include "tools/commands/schema_command.hpp"
#include "tools/commands/sweep_command.hpp"
#include "tools/config/node.hpp"
#include "tools/version.hpp"

namespace {

// A message shows at most this many characters of itself (the rest is counted).
constexpr std::size_t kMaxMessage = 1000;

// Every subcommand, in the order --help lists them: each declares its own options in its own
// file (tools/commands), and one row here adds it.
constexpr std::array<hopsim::tools::DeclareCommand, 11> kCommands{
    hopsim::tools::declare_run_command,
    hopsim::tools::declare_sweep_command,
    hopsim::tools::declare_regress_command,
    hopsim::tools::declare_sweep_merge_command,
    hopsim::tools::declare_compare_command,
    hopsim::tools::declare_explain_command,
    hopsim::tools::declare_check_calibration_command,
    hopsim::tools::declare_list_command,
    hopsim::tools::declare_schema_command,
    hopsim::tools::declare_profile_check_command,
    hopsim::tools::declare_export_chakra_command,
};

// The command line as a shell would read it back: words with anything but plain characters
// in single quotes.
std::string shell_words(int argc, char** argv) {
  constexpr std::string_view kPlain =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:+@%";
  std::string out;
  for (int i = 0; i < argc; ++i) {
    const std::string w(argv[i]);
    std::string word = w;
    if (w.empty() || w.find_first_not_of(kPlain) != std::string::npos) {
      word = "'";
      for (const char ch : w) {
        word += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      }
      word += "'";
    }
    out += (i == 0 ? "" : " ") + word;
  }
  return out;
}

// "run, sweep, ... and list": the subcommands' names, for an unknown command's message.
std::string command_names(const std::vector<hopsim::tools::Command>& commands) {
  std::string out;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    out += i == 0 ? "" : i + 1 == commands.size() ? " and " : ", ";
    out += commands[i].app->get_name();
  }
  return out;
}

int run_cli(int argc, char** argv) {
  CLI::App app{"hopsim: a discrete-event simulator of GPU training clusters"};
  app.set_version_flag("--version", fmt::format("hopsim {}", hopsim::tools::version()));
  app.require_subcommand(1);
  std::vector<hopsim::tools::Command> commands;
  commands.reserve(kCommands.size());
  for (const hopsim::tools::DeclareCommand declare : kCommands) {
    commands.push_back(declare(app));
  }
  if (argc >= 2 && argv[1][0] != '-') {
    const std::string name = argv[1];
    const auto subcommands = app.get_subcommands([&](CLI::App* s) { return s->get_name() == name; });
    if (subcommands.empty()) {
      fmt::print(stderr, "hopsim: unknown command \"{:.40}\"; the commands are {} (hopsim --help)\n",
                 name, command_names(commands));
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    const auto chosen = std::ranges::find_if(
        commands, [](const hopsim::tools::Command& command) { return command.app->parsed(); });
    const int code = chosen->run(shell_words(argc, argv));
    // Output is buffered: a full disk or a closed pipe shows only when it is flushed.
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
      fmt::print(stderr, "hopsim: cannot write to standard output: {}\n", std::strerror(errno));
      return 1;
    }
    return code;
  } catch (const hopsim::config::ConfigError& e) {
    // One line, bounded, whatever user text the message quotes.
    fmt::print(stderr, "{}\n", hopsim::config::echo(e.what(), kMaxMessage));
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  } catch (const hopsim::tools::OutputError& e) {  // a file that could not be written
    fmt::print(stderr, "{}\n", hopsim::config::echo(e.what(), kMaxMessage));
    return 1;
  } catch (const std::system_error& e) {  // fmt::print to a full disk or a closed pipe
    fmt::print(stderr, "hopsim: cannot write to standard output: {}\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {  // the memory ran out where no estimate foresaw it
    fmt::print(stderr,
               "hopsim: out of memory (std::bad_alloc): the run needed more than this process "
               "may use ({:.3g} GB available now); simulate fewer GPUs or sizes\n",
               hopsim::tools::available_memory_bytes() / 1e9);
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    // Bad input is a ConfigError, caught above; anything else is a bug: say so, and fail.
    fmt::print(stderr, "hopsim: internal error: {}\n", e.what());
    return 1;
  }
}
