// Output files written atomically: a killed run leaves the old file or the new one, never half.
#pragma once

#include <stdexcept>
#include <string>

namespace hopsim::tools {

/// An output could not be written (the run itself succeeded): exit code 1.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Writes `text` to a temporary file beside `path`, flushes it to disk, closes it (checking
/// every step), then renames it over `path`. Refuses a `path` that exists and is not a regular
/// file. Throws OutputError naming the path and the reason.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace hopsim::tools
