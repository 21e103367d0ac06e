// The `flows` workload parser, with cycle detection over `after`.
#include "tools/config/flows_config.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

namespace hopsim::config {
namespace {

work::ExplicitFlow parse_flow(const Node& n, std::size_t index, int gpus) {
  n.allow_only({"id", "src", "dst", "bytes", "start_us", "after"});
  work::ExplicitFlow f;
  f.id = n.has("id") ? n.at("id").string() : std::to_string(index);
  f.src = static_cast<int>(n.at("src").integer_in(0, gpus - 1));
  f.dst = static_cast<int>(n.at("dst").integer_in(0, gpus - 1));
  f.bytes = Bytes{n.at("bytes").integer_in(0, INT64_MAX)};
  if (n.has("start_us")) {
    const double us = n.at("start_us").non_negative();
    if (us > 1e12) {
      n.at("start_us").fail(fmt::format("must be at most 1e12 us, got {}", us));
    }
    f.start = Time::from_seconds(us * 1e-6);
  }
  return f;
}

// Depth-first search for a cycle; reports the first one found as "a -> b -> a".
void check_acyclic(const Node& flows, const std::vector<work::ExplicitFlow>& list) {
  enum class Mark : std::uint8_t { New, Open, Done };
  std::vector<Mark> mark(list.size(), Mark::New);
  std::vector<std::size_t> stack;
  for (std::size_t root = 0; root < list.size(); ++root) {
    if (mark[root] != Mark::New) {
      continue;
    }
    // Iterative DFS: (node, next child index).
    std::vector<std::pair<std::size_t, std::size_t>> work{{root, 0}};
    mark[root] = Mark::Open;
    stack.assign(1, root);
    while (!work.empty()) {
      auto& [node, child] = work.back();
      if (child == list[node].after.size()) {
        mark[node] = Mark::Done;
        work.pop_back();
        stack.pop_back();
        continue;
      }
      const std::size_t next = list[node].after[child++];
      if (mark[next] == Mark::Open) {
        std::string path = "\"" + list[next].id + "\"";
        auto it = std::find(stack.begin(), stack.end(), next);
        for (++it; it != stack.end(); ++it) {
          path += " -> \"" + list[*it].id + "\"";
        }
        flows.at(stack.back()).at("after").fail(fmt::format(
            "dependency cycle: {} -> \"{}\" (each waits for the next)", path, list[next].id));
      }
      if (mark[next] == Mark::New) {
        mark[next] = Mark::Open;
        stack.push_back(next);
        work.emplace_back(next, 0);
      }
    }
  }
}

}  // namespace

std::vector<work::ExplicitFlow> parse_flows(const Node& workload, int gpus) {
  workload.allow_only({"kind", "flows"});
  const Node flows = workload.at("flows");
  flows.expect_array();
  std::vector<work::ExplicitFlow> list;
  std::unordered_map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    list.push_back(parse_flow(flows.at(i), i, gpus));
    if (!index_of.emplace(list.back().id, i).second) {
      flows.at(i).at("id").fail(fmt::format("duplicate flow id \"{}\"", list.back().id));
    }
  }
  for (std::size_t i = 0; i < flows.size(); ++i) {
    if (!flows.at(i).has("after")) {
      continue;
    }
    const Node after = flows.at(i).at("after");
    after.expect_array();
    for (std::size_t k = 0; k < after.size(); ++k) {
      const std::string id = after.at(k).string();
      const auto it = index_of.find(id);
      if (it == index_of.end()) {
        after.at(k).fail(fmt::format("no flow has id \"{}\"", id));
      }
      list[i].after.push_back(it->second);
    }
  }
  check_acyclic(flows, list);
  return list;
}

}  // namespace hopsim::config
