// JSON input: file checks, a structural pre-scan (depth, duplicate keys), then nlohmann.
#include "tools/config/json_file.hpp"

#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "tools/config/node.hpp"

namespace hopsim::config {
namespace {

struct Place {
  std::size_t line = 1;
  std::size_t column = 1;
};

// Line and column (from 1) of the byte at `offset` (from 0).
Place place_of(const std::string& text, std::size_t offset) {
  Place p;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      line_start = i + 1;
    }
  }
  p.column = offset - line_start + 1;
  return p;
}

// One object being scanned: the keys seen so far and where, and whether a key comes next.
struct ObjectScan {
  std::map<std::string, std::size_t> keys;
  bool expect_key = true;
};

// The end of the string literal that starts at `i` (the opening quote), past its closing quote.
std::size_t skip_string(const std::string& text, std::size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return text.size();  // unterminated: the parser will say so
}

// Parses text whose structure check_json_structure has passed; syntax errors and numbers out of
// range are ConfigErrors "WHERE: ..." with the line and column.
template <class Json>
Json parse_checked(const std::string& text, const std::string& where) {
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at ...: <what went wrong>".
    const std::string what = e.what();
    const std::size_t colon = what.find(": ");
    const Place p = place_of(text, e.byte > 0 ? e.byte - 1 : 0);
    throw ConfigError(fmt::format("{}: invalid JSON at line {}, column {}: {}", where, p.line,
                                  p.column,
                                  colon == std::string::npos ? what : what.substr(colon + 2)));
  } catch (const nlohmann::json::exception& e) {
    // Numbers out of range ("number overflow parsing '1e400'") carry no position: find the
    // number in the text.
    const std::string what = e.what();
    const std::size_t bracket = what.find("] ");
    const std::string message = bracket == std::string::npos ? what : what.substr(bracket + 2);
    const std::size_t open = message.find('\'');
    const std::size_t close = message.rfind('\'');
    const std::size_t at = open < close ? text.find(message.substr(open + 1, close - open - 1))
                                        : std::string::npos;
    if (at == std::string::npos) {
      throw ConfigError(fmt::format("{}: invalid JSON: {}", where, message));
    }
    const Place p = place_of(text, at);
    throw ConfigError(fmt::format("{}: invalid JSON at line {}, column {}: {}", where, p.line,
                                  p.column, message));
  }
}

}  // namespace

void check_json_structure(const std::string& text, const std::string& where) {
  std::vector<ObjectScan> objects;
  std::vector<bool> is_object;  // the open containers, innermost last
  std::vector<std::size_t> commas;  // per open container: the commas seen at its level
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t end = skip_string(text, i);
      if (!is_object.empty() && is_object.back() && objects.back().expect_key) {
        const std::string key = text.substr(i, end - i);
        const auto [it, fresh] = objects.back().keys.emplace(key, i);
        if (!fresh) {
          const Place first = place_of(text, it->second);
          const Place again = place_of(text, i);
          throw ConfigError(fmt::format(
              "{}: key {:.60} appears twice in one object, at line {}, column {} and line {}, "
              "column {}; JSON readers would silently keep one",
              where, key, first.line, first.column, again.line, again.column));
        }
        objects.back().expect_key = false;
      }
      i = end;
      continue;
    }
    if (c == '{' || c == '[') {
      if (is_object.size() == kMaxDepth) {
        const Place p = place_of(text, i);
        throw ConfigError(fmt::format("{}: nesting deeper than {} levels at line {}, column {}",
                                      where, kMaxDepth, p.line, p.column));
      }
      is_object.push_back(c == '{');
      commas.push_back(0);
      if (c == '{') {
        objects.emplace_back();
      }
    } else if ((c == '}' || c == ']') && !is_object.empty()) {
      if (is_object.back()) {
        objects.pop_back();
      }
      is_object.pop_back();
      commas.pop_back();
    } else if (c == ',' && !is_object.empty()) {
      if (is_object.back()) {
        objects.back().expect_key = true;
      } else if (++commas.back() >= kMaxArrayElements) {
        const Place p = place_of(text, i);
        throw ConfigError(fmt::format("{}: an array of more than {} elements (at line {}, column "
                                      "{}); no input needs one",
                                      where, kMaxArrayElements, p.line, p.column));
      }
    }
    ++i;
  }
}

std::string file_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return "no such file";
  }
  if (S_ISDIR(st.st_mode)) {
    return "is a directory, expected a JSON file";
  }
  if (!S_ISREG(st.st_mode)) {
    return "is not a regular file (a device, pipe or socket), expected a JSON file";
  }
  if (static_cast<std::size_t>(st.st_size) > kMaxFileBytes) {
    return fmt::format("is {} bytes; input files may have at most {} ({} MiB)", st.st_size,
                       kMaxFileBytes, kMaxFileBytes >> 20);
  }
  return "";
}

namespace {

// The text of a JSON file, its structure checked (check_json_structure), not yet parsed.
std::string read_json_text(const std::string& path) {
  if (const std::string problem = file_problem(path); !problem.empty()) {
    throw ConfigError(fmt::format("{}: {}", path, problem));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text;
  text.reserve(kMaxFileBytes / 64);
  std::istreambuf_iterator<char> it(in);
  for (const std::istreambuf_iterator<char> end; it != end && text.size() <= kMaxFileBytes; ++it) {
    text.push_back(*it);
  }
  if (text.size() > kMaxFileBytes) {
    throw ConfigError(fmt::format("{}: is larger than {} MiB", path, kMaxFileBytes >> 20));
  }
  if (!in && !in.eof()) {
    throw ConfigError(fmt::format("{}: cannot read file", path));
  }
  check_json_structure(text, path);
  return text;
}

// The innermost InputLog of this thread, or null.
thread_local InputLog* t_input_log = nullptr;

}  // namespace

InputLog::InputLog(std::vector<std::string>& files) : files_(files), outer_(t_input_log) {
  t_input_log = this;
}

InputLog::~InputLog() { t_input_log = outer_; }

void note_input(const std::string& path) {
  for (InputLog* log = t_input_log; log != nullptr; log = log->outer_) {
    log->files_.push_back(path);
  }
}

nlohmann::json read_json_file(const std::string& path) {
  note_input(path);
  return parse_checked<nlohmann::json>(read_json_text(path), path);
}

nlohmann::ordered_json read_ordered_json_file(const std::string& path) {
  note_input(path);
  return parse_checked<nlohmann::ordered_json>(read_json_text(path), path);
}

nlohmann::json parse_json_text(const std::string& text, const std::string& where) {
  check_json_structure(text, where);
  return parse_checked<nlohmann::json>(text, where);
}


}  // namespace hopsim::config
