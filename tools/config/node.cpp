// Typed reads of JSON values with errors that name the file and JSON pointer.
#include "tools/config/node.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace hopsim::config {
namespace {

// What was found, for "expected X, got Y": a number as written, else its type and value
// (shortened, so that a misplaced object does not flood the message).
std::string type_name(const nlohmann::json& j) {
  constexpr std::size_t kMaxShown = 40;
  std::string shown = j.dump();
  if (shown.size() > kMaxShown) {
    shown = shown.substr(0, kMaxShown - 3) + "...";
  }
  if (j.is_number() || j.is_null() || j.is_boolean()) {
    return shown;  // the value says its type: 3, null, true
  }
  return fmt::format("{} {}", j.type_name(), shown);
}

// Levenshtein distance, for "did you mean" hints on unknown keys.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0U : 1U)});
      diag = up;
    }
  }
  return row[b.size()];
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

// An override explains a value at `path` when it wrote that value, a value above it, or a
// part of it (a problem with an object some of whose keys came from --set).
std::string Origin::describe(const Pointer& path) const {
  const std::string p = path.to_string();
  const auto under = [](const std::string& inner, const std::string& outer) {
    return inner == outer || outer.empty() ||
           (inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
            inner[outer.size()] == '/');
  };
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    const std::string o = it->first.to_string();
    if (under(p, o) || under(o, p)) {
      return it->second;
    }
  }
  if (overrides.empty()) {
    return file;
  }
  // A value no --set wrote, but checked against ones that did (a cluster's spines against
  // its nodes): the file, and the --set arguments that changed it.
  constexpr std::size_t kNamed = 3;
  std::string sets;
  for (std::size_t i = 0; i < overrides.size() && i < kNamed; ++i) {
    sets += (i == 0 ? "" : ", ") + overrides[i].second;
  }
  if (overrides.size() > kNamed) {
    sets += fmt::format(" and {} more", overrides.size() - kNamed);
  }
  return fmt::format("{} (with {})", file, sets);
}

std::string echo(std::string_view text, std::size_t max) {
  std::string out;
  std::size_t shown = 0;
  for (; shown < text.size() && out.size() < max; ++shown) {
    const auto c = static_cast<unsigned char>(text[shown]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (shown < text.size()) {
    out += fmt::format("... ({} more characters)", text.size() - shown);
  }
  return out;
}

void fail_at(const Origin& origin, const Node::Pointer& path, std::string_view what) {
  const std::string where = path.empty() ? "/" : path.to_string();
  throw ConfigError(fmt::format("{}: {}: {}", origin.describe(path), where, what));
}

void Node::fail(std::string_view what) const { fail_at(*origin_, path_, what); }

void Node::expect_object() const {
  if (!json_->is_object()) {
    fail(fmt::format("expected an object, got {}", type_name(*json_)));
  }
}

void Node::expect_array() const {
  if (!json_->is_array()) {
    fail(fmt::format("expected an array, got {}", type_name(*json_)));
  }
}

bool Node::has(std::string_view key) const {
  return json_->is_object() && json_->contains(std::string(key));
}

Node Node::at(std::string_view key) const {
  expect_object();
  const std::string k(key);
  if (!json_->contains(k)) {
    fail(fmt::format("missing key \"{}\"", k));
  }
  return Node(json_->at(k), origin_, path_ / k);
}

Node Node::at(std::size_t index) const {
  expect_array();
  return Node(json_->at(index), origin_, path_ / index);
}

double Node::number() const {
  if (!json_->is_number()) {
    fail(fmt::format("expected a number, got {}", type_name(*json_)));
  }
  return json_->get<double>();
}

double Node::positive(double max) const {
  const double v = number();
  if (!(v > 0) || !std::isfinite(v)) {
    fail(fmt::format("must be > 0, got {}", json_->dump()));
  }
  if (v > max) {
    fail(fmt::format("must be at most {:g}, got {}", max, json_->dump()));
  }
  return v;
}

double Node::number_in(double lo, double hi) const {
  const double v = number();
  if (!(v >= lo && v <= hi)) {
    fail(fmt::format("must be in [{:g}, {:g}], got {}", lo, hi, json_->dump()));
  }
  return v;
}

double Node::non_negative(double max) const {
  const double v = number();
  if (!(v >= 0) || !std::isfinite(v)) {
    fail(fmt::format("must be >= 0, got {}", json_->dump()));
  }
  if (v > max) {
    fail(fmt::format("must be at most {:g}, got {}", max, json_->dump()));
  }
  return v;
}

std::int64_t Node::integer() const {
  if (json_->is_number_float()) {
    const double v = json_->get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) {
      return static_cast<std::int64_t>(v);
    }
    if (std::isfinite(v) && v == std::floor(v)) {
      fail(fmt::format("expected an integer, got {}; written with an exponent or a fraction, "
                       "an integer must be below 9e15 (write larger ones in full)",
                       json_->dump()));
    }
  }
  if (!json_->is_number_integer()) {
    fail(fmt::format("expected an integer, got {}", type_name(*json_)));
  }
  if (json_->is_number_unsigned() && json_->get<std::uint64_t>() > INT64_MAX) {
    fail(fmt::format("integer {} is too large", json_->dump()));
  }
  return json_->get<std::int64_t>();
}

std::int64_t Node::integer_in(std::int64_t lo, std::int64_t hi) const {
  const std::int64_t v = integer();
  if (v < lo || v > hi) {
    if (hi == INT64_MAX) {
      fail(fmt::format("must be >= {}, got {}", lo, v));
    }
    fail(fmt::format("must be in [{}, {}], got {}", lo, hi, v));
  }
  return v;
}

bool Node::boolean() const {
  if (!json_->is_boolean()) {
    fail(fmt::format("expected true or false, got {}", type_name(*json_)));
  }
  return json_->get<bool>();
}

std::string Node::string() const {
  if (!json_->is_string()) {
    fail(fmt::format("expected a string, got {}", type_name(*json_)));
  }
  return json_->get<std::string>();
}

std::string Node::one_of(std::initializer_list<std::string_view> choices) const {
  return std::string(*(choices.begin() + index_of({choices.begin(), choices.size()})));
}

std::size_t Node::index_of(std::span<const std::string_view> choices) const {
  const std::string v = string();
  const auto it = std::find(choices.begin(), choices.end(), v);
  if (it == choices.end() && choices.size() == 1) {
    fail(fmt::format("expected \"{}\", got \"{:.60}\"", choices.front(), v));
  }
  if (it == choices.end()) {
    fail(fmt::format("expected one of \"{}\", got \"{:.60}\"", fmt::join(choices, "\", \""), v));
  }
  return static_cast<std::size_t>(it - choices.begin());
}

void Node::allow_only(const Section& section) const {
  expect_object();
  std::vector<std::string_view> keys;
  for (const KeyRef& k : section.keys) {
    keys.push_back(key_name(k));
  }
  for (const auto& [key, value] : json_->items()) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
      continue;
    }
    if (ends_with(key, "_Gbps")) {
      const std::string stem = key.substr(0, key.size() - 5);
      fail(fmt::format("unknown key \"{}\"; use \"{}_GBps\" (bytes/s): 400 Gb/s = 50 GBps", key,
                       stem));
    }
    std::string_view best;
    std::size_t best_distance = 3;  // suggest only close matches
    for (std::string_view k : keys) {
      const std::size_t d = edit_distance(key, k);
      if (d < best_distance) {
        best = k;
        best_distance = d;
      }
    }
    if (!best.empty()) {
      fail(fmt::format("unknown key \"{}\"; did you mean \"{}\"?", key, best));
    }
    fail(fmt::format("unknown key \"{}\"; expected one of \"{}\"", key,
                     fmt::join(keys, "\", \"")));
  }
}

// Each key is a JSON pointer to the value it cites; a pointer to nothing is a stale citation.
void check_sources(const Node& root) {
  const Node sources = root.at("sources");
  sources.expect_object();
  for (const auto& item : sources.json().items()) {
    const std::string& key = item.key();
    const Node entry = sources.at(key);
    entry.string();
    bool found = false;
    try {
      found = root.json().contains(nlohmann::json::json_pointer(key));
    } catch (const nlohmann::json::exception&) {
      entry.fail(fmt::format(
          "key \"{}\" is not a JSON pointer; expected one like \"/nic/peak_GBps\"", key));
    }
    if (!found) {
      entry.fail(fmt::format("\"{}\" points to nothing in this file", key));
    }
  }
}

}  // namespace hopsim::config
