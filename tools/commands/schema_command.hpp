// `hopsim schema`: every config key the parser accepts (the reference in docs/reference.md).
#pragma once

#include <string>

namespace hopsim::tools {

/// The reference as Markdown: a table per section of each file kind.
std::string schema_markdown();

/// Prints the reference (plain text, or Markdown). Returns the exit code.
int schema_command(bool markdown);

}  // namespace hopsim::tools
