// `hopsim schema`: every config key the parser accepts (the reference in docs/reference.md).
#pragma once

#include <string>

#include "tools/commands/command.hpp"

namespace hopsim::tools {

/// The reference as Markdown: a table per section of each file kind.
std::string schema_markdown();

/// Prints the reference (plain text, or Markdown). Returns the exit code.
int schema_command(bool markdown);

/// `hopsim schema [--markdown]`: its options, and schema_command.
Command declare_schema_command(CLI::App& program);

}  // namespace hopsim::tools
