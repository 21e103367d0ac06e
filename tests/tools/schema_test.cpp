// Tests of `hopsim schema`: every declared key reaches the reference with the type text, default
// and doc line its declaration makes.
#include "tools/commands/schema_command.hpp"

#include <string>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "tools/config/schema.hpp"

namespace hopsim::tools {
namespace {

// As a Markdown cell shows text.
std::string cell(std::string text) {
  std::string out;
  for (const char c : text) {
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  }
  return out;
}

TEST_CASE("every declared key is a row of the reference, its texts from its declaration") {
  const std::string markdown = schema_markdown();
  std::size_t rows = 0;
  for (const config::Section* s : config::schema()) {
    const std::string heading = fmt::format("### `{}`: {}\n", s->path, s->doc);
    const std::size_t at = markdown.find(heading);
    REQUIRE(at != std::string::npos);
    for (const config::KeyRef& k : s->keys) {
      const std::string row = fmt::format(
          "| `{}` | {} | {} | {} |\n", config::key_name(k), cell(config::type_text(k)),
          cell(config::default_text(k)), cell(config::doc_text(k)));
      CAPTURE(row);
      // In its own section: after the section's heading, before the next one.
      const std::size_t found = markdown.find(row, at);
      CHECK(found != std::string::npos);
      CHECK(found < markdown.find("\n### ", at + heading.size()));
      ++rows;
    }
  }
  CHECK(rows > 300);
}

}  // namespace
}  // namespace hopsim::tools
