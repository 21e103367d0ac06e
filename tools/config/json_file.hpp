// Reading JSON safely: regular files only, a size cap, a nesting limit checked before any
// recursive code runs, duplicate keys rejected, every parse failure a ConfigError with a place.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hopsim::config {

/// Input files are read whole; larger ones are refused before reading.
inline constexpr std::size_t kMaxFileBytes = std::size_t{256} << 20;
/// Deeper nesting is refused before parsing (nlohmann's dump and destructor recurse).
inline constexpr std::size_t kMaxDepth = 128;
/// Longer arrays are refused before parsing, so that a huge list costs its text, not 30 times
/// that as parsed values (the longest any key takes: documents, 2^24).
inline constexpr std::size_t kMaxArrayElements = std::size_t{1} << 24;

/// Why `path` cannot be read as a JSON file ("no such file", "is a directory, ...", "is not a
/// regular file", "is larger than ..."), or "" when it can.
std::string file_problem(const std::string& path);

/// Reads and parses a JSON file; any problem is a ConfigError naming the file (and the line and
/// column where there is one).
nlohmann::json read_json_file(const std::string& path);

/// The same, keeping the order of every object's keys (a regression suite runs in its order).
nlohmann::ordered_json read_ordered_json_file(const std::string& path);

/// While it lives, every input file this thread reads (read_json_file, read_ordered_json_file,
/// and what note_input is told, such as a Chakra trace's files) is appended to `files`: what a
/// loaded experiment read, so that no output of the run may replace one of them. Logs nest: an
/// inner one records for itself and for the outer ones.
class InputLog {
 public:
  explicit InputLog(std::vector<std::string>& files);
  ~InputLog();
  InputLog(const InputLog&) = delete;
  InputLog& operator=(const InputLog&) = delete;

 private:
  friend void note_input(const std::string& path);
  std::vector<std::string>& files_;
  InputLog* outer_;
};

/// Records `path` as read, in every InputLog of this thread (none: nothing happens).
void note_input(const std::string& path);

/// Nesting deeper than kMaxDepth, arrays longer than kMaxArrayElements and keys repeated in one
/// object are ConfigErrors "WHERE: ...";
/// malformed text is left to the parser. Linear time, no recursion.
void check_json_structure(const std::string& text, const std::string& where);

/// Parses JSON `text` that `where` names in errors (a file, a --set argument): nesting over
/// kMaxDepth, a key repeated in one object (both places named), syntax errors and numbers out
/// of range are ConfigErrors "WHERE: ...".
nlohmann::json parse_json_text(const std::string& text, const std::string& where);

}  // namespace hopsim::config
