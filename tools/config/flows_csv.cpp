// Parses a flows CSV (flows_csv.hpp) in one pass over the text; ids are views into it until
// the flows are built.
#include "tools/config/flows_csv.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include <fmt/format.h>

#include "tools/config/json_file.hpp"
#include "tools/config/key.hpp"
#include "tools/config/keys/flows_keys.hpp"
#include "tools/config/node.hpp"

namespace hopsim::config {
namespace {

enum Column : std::uint8_t { kId, kSrc, kDst, kBytes, kStartUs, kAfter, kColumns };

constexpr std::array<std::string_view, kColumns> kNames{"id",    "src",      "dst",
                                                        "bytes", "start_us", "after"};

// Where a value sits: the file and its line (1-based), for the one-line errors.
struct Where {
  const std::string& name;
  std::size_t line = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(fmt::format("{}:{}: {}", name, line, what));
  }
};

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The fields of `line`, split at commas into `out` (cleared first).
void split(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t from = 0;
  while (true) {
    const std::size_t comma = line.find(',', from);
    out.push_back(trimmed(line.substr(from, comma - from)));
    if (comma == std::string_view::npos) {
      return;
    }
    from = comma + 1;
  }
}

// The header: each field a known column, none twice, src, dst and bytes present.
std::vector<Column> header(const std::vector<std::string_view>& fields, const Where& w) {
  std::vector<Column> order;
  std::array<bool, kColumns> seen{};
  for (const std::string_view f : fields) {
    const auto* it = std::find(kNames.begin(), kNames.end(), f);
    if (it == kNames.end()) {
      w.fail(fmt::format("unknown column \"{:.40}\" in the header (columns: {})", f,
                         kFlowsCsvColumns));
    }
    const auto c = static_cast<Column>(it - kNames.begin());
    if (seen[c]) {
      w.fail(fmt::format("column \"{}\" named twice in the header", f));
    }
    seen[c] = true;
    order.push_back(c);
  }
  for (const Column c : {kSrc, kDst, kBytes}) {
    if (!seen[c]) {
      w.fail(
          fmt::format("the header has no \"{}\" column (the first line names the columns: "
                      "src, dst and bytes, and optionally id, start_us and after)",
                      kNames[c]));
    }
  }
  return order;
}

std::int64_t whole(std::string_view field, Column c, std::int64_t hi, const Where& w) {
  std::int64_t v = 0;
  const char* end = field.data() + field.size();
  const auto [p, ec] = std::from_chars(field.data(), end, v);
  if (field.empty() || ec != std::errc{} || p != end || v < 0 || v > hi) {
    w.fail(
        fmt::format("{} \"{:.40}\": expected a whole number from 0 to {}", kNames[c], field, hi));
  }
  return v;
}

double start_us(std::string_view field, const Where& w) {
  double v = 0;
  const char* end = field.data() + field.size();
  const auto [p, ec] = std::from_chars(field.data(), end, v);
  if (field.empty() || ec != std::errc{} || p != end || !std::isfinite(v) || v < 0 ||
      v > kMaxNumber) {
    w.fail(fmt::format("start_us \"{:.40}\": expected a number from 0 to {:g}", field, kMaxNumber));
  }
  return v;
}

// One row into `f`; its "after" field (ids, resolved once every id is known) into `after`.
void row(const std::vector<std::string_view>& fields, const std::vector<Column>& order,
         std::size_t index, work::ExplicitFlow& f, std::string_view& after, const Where& w) {
  namespace fk = keys::flow;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::string_view v = fields[k];
    switch (order[k]) {
      case kId:
        if (v.empty()) {
          w.fail("empty id (leave the id column out to name flows by their index)");
        }
        f.id = v;
        break;
      case kSrc:
        f.src = static_cast<int>(whole(v, kSrc, fk::kMaxRank, w));
        break;
      case kDst:
        f.dst = static_cast<int>(whole(v, kDst, fk::kMaxRank, w));
        break;
      case kBytes:
        f.bytes = Bytes{whole(v, kBytes, INT64_MAX, w)};
        break;
      case kStartUs:
        f.start = Time::from_seconds(start_us(v, w) * 1e-6);
        break;
      case kAfter:
        after = v;
        break;
      default:
        break;
    }
  }
  if (f.id.empty()) {
    f.id = std::to_string(index);
  }
}

// Each flow's "after" ids, as flow indices; an id that names no flow is an error at its row.
void resolve_after(std::vector<work::ExplicitFlow>& flows,
                   const std::vector<std::string_view>& after, const std::string& name) {
  std::unordered_map<std::string_view, std::size_t> index_of;
  index_of.reserve(flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const auto [it, inserted] = index_of.emplace(flows[i].id, i);
    if (!inserted) {
      Where{name, i + 2}.fail(fmt::format("duplicate flow id \"{:.40}\" (line {} has it too)",
                                          flows[i].id, it->second + 2));
    }
  }
  for (std::size_t i = 0; i < after.size(); ++i) {
    std::size_t from = 0;
    const std::string_view list = after[i];
    while (from < list.size()) {
      const std::size_t space = std::min(list.find(' ', from), list.size());
      const std::string_view id = list.substr(from, space - from);
      from = space + 1;
      if (id.empty()) {
        continue;
      }
      const auto it = index_of.find(id);
      if (it == index_of.end()) {
        Where{name, i + 2}.fail(fmt::format("after: no flow has id \"{:.40}\"", id));
      }
      flows[i].after.push_back(it->second);
    }
  }
}

}  // namespace

std::vector<work::ExplicitFlow> parse_flows_csv(std::string_view text, const std::string& name) {
  std::vector<std::string_view> fields;
  std::vector<Column> order;
  std::vector<work::ExplicitFlow> flows;
  std::vector<std::string_view> after;
  flows.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')));
  std::size_t pos = 0;
  for (std::size_t line = 1; pos < text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view content = text.substr(pos, end - pos);
    pos = end + 1;
    const Where w{name, line};
    if (content.find('"') != std::string_view::npos) {
      w.fail("quoted fields are not read (ids may not hold commas, quotes or spaces)");
    }
    split(content, fields);
    if (line == 1) {
      order = header(fields, w);
      continue;
    }
    if (fields.size() != order.size()) {
      w.fail(
          fmt::format("{} fields, expected {} as the header names", fields.size(), order.size()));
    }
    const std::size_t index = flows.size();
    after.emplace_back();
    row(fields, order, index, flows.emplace_back(), after.back(), w);
  }
  if (flows.empty()) {
    Where{name, 1}.fail("no flows: a header line, then one flow a line");
  }
  resolve_after(flows, after, name);
  return flows;
}

std::vector<work::ExplicitFlow> read_flows_csv(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    throw ConfigError(fmt::format("{}: no such file", path));
  }
  if (!fs::is_regular_file(st)) {
    throw ConfigError(fmt::format("{}: is not a regular file, expected a flows CSV file", path));
  }
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec || size > kMaxFlowsFileBytes) {
    throw ConfigError(fmt::format("{}: {}; a flows file may have at most {} bytes", path,
                                  ec ? ec.message() : fmt::format("is {} bytes", size),
                                  kMaxFlowsFileBytes));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size))) {
    throw ConfigError(fmt::format("{}: cannot read the flows file", path));
  }
  note_input(path);
  return parse_flows_csv(text, path);
}

}  // namespace hopsim::config
